"""torch.linalg, part 3: norms and the functions PyTorch composes from other ops (their grad_fn is the last op's).

ops: vector_norm matrix_norm norm cond matrix_rank matrix_power multi_dot tensorinv tensorsolve vander vecdot
     diagonal (composites of ops/linalg_solve.py, ops/linalg_decomp.py and the elementwise / reduction / shape
     families)
"""
import math

import numpy as np

from .. import _dtype
from ._core import make
from .shape import cat
from .ternary import where
from .linalg import matmul, mm
from . import linalg as _linalg
from .linalg_solve import check_float, lapack_dtype, check_matrix, check_square, inv, inv_ex, solve
from .linalg_decomp import svdvals, _cutoff
from .statistics import norm as _vnorm
from .reduction import amax, amin
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = []

_INF = float("inf")


# -- norms ------------------------------------------------------------------------------------------------------
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    if x._data.dtype.kind not in "fcV":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.c_name(x._data.dtype)}")
    return _vnorm(x, float(ord), dim, keepdim, dtype=dtype)


def _matrix_dims(A, dim):
    nd = A._data.ndim
    d0, d1 = (d + nd if d < 0 else d for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _backshift(A, d0, d1):
    nd = A._data.ndim
    perm = [i for i in range(nd) if i not in (d0, d1)] + [d0, d1]
    return A.permute(perm)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    check_matrix("linalg.matrix_norm", A)
    check_float("linalg.matrix_norm", A, allow_low=ord not in (2, -2, "nuc"))      # the SVD's need LAPACK
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = _matrix_dims(A, dim)
    if isinstance(ord, str):
        if ord == "fro":
            return vector_norm(A, 2, (d0, d1), keepdim)
        if ord != "nuc":
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        r = svdvals(_backshift(A, d0, d1)).sum(-1, keepdim)
        return _unshift(r, A, d0, d1) if keepdim else r
    if abs(ord) not in (1, 2, _INF):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord:g} not supported.")
    pick = amax if ord > 0 else amin
    if abs(ord) == 2:
        r = pick(svdvals(_backshift(A, d0, d1)), -1, keepdim)
        return _unshift(r, A, d0, d1) if keepdim else r
    if abs(ord) == _INF:
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    return pick(vector_norm(A, 1.0, d0, keepdim), d1, keepdim)


def _unshift(r, A, d0, d1):
    """The keepdim result of a reduction over the back-shifted dims d0, d1, put back in place (PyTorch's
    unsqueeze + inverse permutation)."""
    nd = A._data.ndim
    perm = [i for i in range(nd) if i not in (d0, d1)] + [d0, d1]
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p] = i
    return r.unsqueeze(-1).permute(inv)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    if dim is not None and not isinstance(dim, int):
        dim = tuple(dim)
    if dim is not None and not isinstance(dim, int) and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is not None and dim is None:
        nd = A._data.ndim
        if nd == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        if nd != 1:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                               f"{nd}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.norm: If dim is specified, it mut be of length 1 or 2. Got {dim}")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cond(A, p=None, *, out=None):
    if _acs.on:
        return _ac.fp32(cond, A, p, out=out)
    check_matrix("linalg.cond", A)
    svd = p is None or (not isinstance(p, str) and abs(p) == 2)
    check_float("linalg.svd" if svd else "linalg.cond", A, kernel="linalg_svd_cpu" if svd else None,
                low_fname="linalg.inv")
    if A._data.size == 0:
        return make(np.zeros(A._data.shape[:-2], A._data.dtype, like=A._data))
    if p is None or (not isinstance(p, str) and abs(p) == 2):
        s = svdvals(A)
        smax, smin = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        r = smin / smax if p == -2 else smax / smin
        return r.squeeze(-1)
    check_square("linalg.cond", A)
    Ainv, info = inv_ex(A)
    r = matrix_norm(A, p) * matrix_norm(Ainv, p)
    bad = info._data != 0
    if bad.any():
        r = where(make(bad), make(np.asarray(_INF, A._data.dtype, like=A._data)), r)
    return r


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    check_matrix("linalg.matrix_rank", A)
    if not lapack_dtype(A._data.dtype):
        raise RuntimeError("This function doesn't handle types other than float and double")
    a = A._data
    m, n = a.shape[-2:]
    if hermitian:
        S = np.sort(np.abs(np.linalg.eigvalsh(a)), -1)[..., ::-1] if a.size else np.zeros(a.shape[:-1], a.dtype, like=a)
    else:
        S = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(a.shape[:-2] + (min(m, n),), a.dtype, like=a)
    if tol is not None:
        atol, rtol = tol, 0.0
    cut = _cutoff(S, atol, rtol, m, n, a.dtype)
    return make(np.sum(S > cut, -1).astype(np.int64))


# -- products ---------------------------------------------------------------------------------------------------
def matrix_power(A, n, *, out=None):
    check_square("linalg.matrix_power", A)
    if n == 0:
        eye = np.broadcast_to(np.eye(A._data.shape[-1], dtype=A._data.dtype, like=A._data), A._data.shape)
        return A.clone().copy_(make(eye))
    if n < 0:
        A = inv(A)
        if n == -1:
            return A
        n = -n
    if n == 1:
        return A.clone()
    if n == 2:
        return matmul(A, A)
    if n == 3:
        return matmul(matmul(A, A), A)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def multi_dot(tensors, *, out=None):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first._data.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first._data.ndim}D")
    if last._data.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last._data.ndim}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t._data.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t._data.ndim}D")
    out_shape = (first.shape[0],) if first._data.ndim == 2 else ()
    out_shape += (last.shape[1],) if last._data.ndim == 2 else ()
    mats = list(tensors)
    if first._data.ndim == 1:
        mats[0] = first.unsqueeze(0)
    if last._data.ndim == 1:
        mats[-1] = last.unsqueeze(-1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            a, b = mats[i].shape, mats[i + 1].shape
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes [{a[0]}, {a[1]}] and "
                               f"[{b[0]}, {b[1]}] cannot be multiplied")
    if n == 2:
        return mm(mats[0], mats[1]).view(out_shape)
    order = _chain_order([m.shape[0] for m in mats] + [mats[-1].shape[1]])
    return _chain(mats, order, 0, n - 1).view(out_shape)


def _chain_order(p):
    """The split table of the optimal matrix chain order (dynamic programming, as PyTorch's multi_dot)."""
    n = len(p) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(mats, order, i, j):
    if i == j:
        return mats[i]
    k = order[i][j]
    return mm(_chain(mats, order, i, k), _chain(mats, order, k + 1, j))


def tensorinv(A, ind=2, *, out=None):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    sh = tuple(A.shape)
    rows = int(np.prod(sh[:ind]))
    cols = int(np.prod(sh[ind:]))
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(sh[ind:] + sh[:ind])


def tensorsolve(A, B, dims=None, *, out=None):
    if dims is not None:
        nd = A._data.ndim
        dims = [d + nd if d < 0 else d for d in dims]
        A = A.permute([d for d in range(nd) if d not in dims] + list(dims))
    bn = B._data.ndim
    res_shape = tuple(A.shape[bn:])
    rows = int(np.prod(A.shape[:bn]))
    cols = int(np.prod(res_shape))
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(res_shape)


def vander(x, *, N=None):
    if x._data.ndim == 0:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if x._data.dtype.kind in "fV" and x._data.dtype.itemsize == 2:
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{_dtype.c_name(x._data.dtype)}")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    dt = x._data.dtype if x._data.dtype != np.bool_ else np.int64
    ones = make(np.ones(tuple(x.shape) + (1,), dt, like=x._data))
    xs = x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,))
    return cat([ones, xs.cumprod(-1)], -1)


def vecdot(x, y, *, dim=-1, out=None):
    if _acs.on:
        return _ac.lower(vecdot, x, y, dim=dim, out=out)
    if x.ndim == 1 and y.ndim == 1:     # PyTorch: vdot (conjugating x) for two vectors
        return _linalg.vdot(x, y)
    return (x.conj() * y).sum(dim)      # conj: no-op for real tensors


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)
