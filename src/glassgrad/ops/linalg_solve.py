"""torch.linalg, part 1: inverses, solvers, Cholesky and LU (real dtypes, batched).

ops: inv inv_ex solve solve_ex solve_triangular cholesky cholesky_ex lu_factor lu_factor_ex lu lu_solve
     (det slogdet eigh svd qr pinv matrix_exp cross: ops/linalg_decomp.py; norms and composites: ops/linalg_norm.py)

The forward runs NumPy's LAPACK (numpy.linalg, batched over the leading dimensions).  Each node is named as
PyTorch's (`LinalgInvExBackward0`, ...) and its backward is PyTorch's formula (FunctionsManual.cpp) written
once on glassgrad Tensors (`_LaNode`): run under no_grad on plain arrays for a first backward, recorded for
create_graph.  `LinAlgError` (a RuntimeError, as torch's) is raised with torch's messages for singular and
non positive-definite inputs; the `_ex` forms return (result, info) instead.
"""
import numpy as np

from .. import _dtype
from ._core import make, edge, save_in, save_out, grad, broadcast_shape, as_array
from ..autograd.graph import Node
from ..autograd.grad_mode import no_grad
from .sorting import _structseq
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["LinAlgError"]


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a linear algebra function failed on its input (singular, not positive
    definite, ...)."""


LinAlgError.__module__ = "torch._C"
LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"


# -- the nodes: PyTorch's formula on Tensors, for both backward namespaces --------------------------------------
class _LaNode(Node):
    """A node whose backward `formula(node, grads, *saved Tensors)` is written with glassgrad's ops."""
    __slots__ = ("info",)
    formula = None

    def backward(self, ns, g):
        saved = ns.unpack(self)
        if ns.is_tensor_mode:
            return self.formula(g, *saved)
        with no_grad():
            res = self.formula(_tens(g), *[make(s) for s in saved])
        return tuple(None if r is None else r._data for r in res)

    def need(self, i):
        return self.next_functions[i][0] is not None


def _tens(g):
    if isinstance(g, (list, tuple)):
        return [None if x is None else make(x) for x in g]
    return make(g)


def wrap(outs, cls, inputs, saved_in=(), saved_out=(), info=None):
    """Tensors of arrays `outs` (one node `cls` over `inputs` when a gradient is wanted); the node saves the
    inputs at positions `saved_in`, then the outputs at positions `saved_out`."""
    if not (grad.enabled and any(t._rg for t in inputs)):
        return tuple(make(y) for y in outs)
    n = cls(tuple(edge(t) for t in inputs))
    n.info = info
    res = tuple(make(y, True, n, i) for i, y in enumerate(outs))
    n._saved = tuple(save_in(inputs[i]) for i in saved_in) + tuple(save_out(res[i]) for i in saved_out)
    return res


def named(name, fields, values):
    return _structseq(name, fields)(values)


# -- argument checks -----------------------------------------------------------------------------------------------
_LAPACK_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


def lapack_dtype(d):
    """Whether LAPACK (and torch's CPU linear algebra) takes this NumPy dtype: float32/64, complex64/128 (not
    float16 / bfloat16, which torch's linalg refuses, nor integers)."""
    return d in _LAPACK_DTYPES


def check_float(fname, A, kernel=None, low_fname=None, allow_low=False, kernel_on_empty=False):
    """torch's checkFloatingOrComplex: a float or complex A; float16 / bfloat16 refused, as torch does, with
    "<fname>: Low precision dtypes not supported" (low_fname: under another function's name), or as the
    LAPACK kernel `kernel` not implemented for it (not run on an empty A, unless `kernel_on_empty`), unless
    `allow_low`."""
    d = A._data.dtype
    if d.kind not in "fcV":
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. Got {_dtype.c_name(d)}")
    if not allow_low and not lapack_dtype(d):
        if kernel:
            low_kernel(kernel, A._data, kernel_on_empty)
        else:
            raise RuntimeError(f"{low_fname or fname}: Low precision dtypes not supported. Got {_dtype.c_name(d)}")


def low_kernel(kernel, a, on_empty=False):
    """torch's error for a LAPACK kernel given float16 / bfloat16 (or an integer) array `a`; an empty `a` never
    reaches the kernel, so it passes unless `on_empty`."""
    if not lapack_dtype(a.dtype) and (a.size or on_empty):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.c_name(a.dtype)}'")


def check_matrix(fname, A, name="A"):
    if A._data.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor {name} must have at least 2 dimensions.")


def check_square(fname, A, name="A"):
    check_matrix(fname, A, name)
    m, n = A._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"{fname}: {name} must be batches of square matrices, but they are {m} by {n} matrices")


def square_float(fname, A, **low):
    check_square(fname, A)
    check_float(fname, A, **low)
    return A._data


def batch_prefix(info):
    """'(Batch element k): ' for the first failing element of a batched `info`, '' for one matrix."""
    if info.ndim == 0:
        return ""
    return f"(Batch element {int(np.flatnonzero(info.reshape(-1))[0])}): "


def first_failure(info):
    flat = info.reshape(-1)
    return int(flat[np.flatnonzero(flat)[0]])


# -- LU with partial pivoting (LAPACK getrf's choices), batched ---------------------------------------------------
def lu_arrays(a):
    """(LU, pivots (1-based int32), info) of `a` (..., m, n), as LAPACK's getrf computes them."""
    a = as_array(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    bs = a.shape[:-2]
    if a.size == 0:
        return np.array(a, copy=True, like=a), \
            np.ones(bs + (k,), np.int32, like=a) * np.arange(1, k + 1, dtype=np.int32, like=a), \
            np.zeros(bs, np.int32, like=a)
    b = np.array(a.reshape((-1, m, n)), dtype=a.dtype, copy=True, like=a)
    piv = np.zeros((b.shape[0], k), np.int32, like=a)
    info = np.zeros(b.shape[0], np.int32, like=a)
    rows = np.arange(b.shape[0], like=a)
    with np.errstate(all="ignore"):
        for j in range(k):
            p = j + np.argmax(np.abs(b[:, j:, j]), axis=1)
            piv[:, j] = p + 1
            top = b[rows, j].copy()
            b[rows, j] = b[rows, p]
            b[rows, p] = top
            d = b[:, j, j]
            zero = d == 0
            info = np.where(zero & (info == 0), j + 1, info).astype(np.int32)
            f = np.where(zero[:, None], b[:, j + 1:, j], b[:, j + 1:, j] / np.where(zero, 1, d)[:, None])
            b[:, j + 1:, j] = f
            b[:, j + 1:, j + 1:] -= f[:, :, None] * b[:, j, None, j + 1:]
    return b.reshape(a.shape), piv.reshape(bs + (k,)), info.reshape(bs)


def lu_info(a):
    return lu_arrays(a)[2]


def perm_from_pivots(piv, m):
    """The permutation matrices P (A = P L U) of LAPACK pivots (..., k)."""
    bs = piv.shape[:-1]
    if piv.size == 0:
        return np.broadcast_to(np.eye(m, like=piv), bs + (m, m)).copy()
    pv = piv.reshape(-1, piv.shape[-1]) - 1
    perm = np.tile(np.arange(m, like=piv), (pv.shape[0], 1))
    rows = np.arange(pv.shape[0], like=piv)
    for j in range(pv.shape[1]):
        p = pv[:, j]
        t = perm[rows, j].copy()
        perm[rows, j] = perm[rows, p]
        perm[rows, p] = t
    P = np.zeros((pv.shape[0], m, m), like=piv)
    P[rows[:, None], perm, np.arange(m, like=piv)[None, :]] = 1
    return P.reshape(bs + (m, m))


# -- inv --------------------------------------------------------------------------------------------------------
class LinalgInvExBackward0(_LaNode):     # X = A^-1; gA = -X^H gX X^H (X^T for real X)
    __slots__ = ()
    _saved_names = ("inverse",)

    @staticmethod
    def formula(g, X):
        Xt = X.mH
        return (-(Xt @ (g @ Xt)),)


def _inv_arrays(a):
    info = np.zeros(a.shape[:-2], np.int32, like=a)
    try:
        with np.errstate(all="ignore"):
            y = np.linalg.inv(a) if a.size else np.array(a, copy=True, like=a)
    except np.linalg.LinAlgError:
        info = lu_info(a)
        with np.errstate(all="ignore"):
            y = np.stack([np.linalg.inv(x) if i == 0 else np.full(x.shape, np.inf, a.dtype, like=a)
                          for x, i in zip(a.reshape((-1,) + a.shape[-2:]), info.reshape(-1))]).reshape(a.shape)
    else:
        if _device_failed(a, y):        # CuPy does not raise: a singular matrix shows as non-finite values
            info = lu_info(a)
            y = np.where((info == 0)[..., None, None], y, np.inf)
    return y.astype(a.dtype, copy=False), info


def _device_failed(a, r):
    """Whether a device (CuPy) solve / inverse may have met a singular matrix: cuSOLVER reports it only in an info
    array CuPy does not raise on, and an exactly zero pivot leaves infinities / NaNs in the result."""
    return a.__class__ is not np.ndarray and r.size and not bool(np.isfinite(r).all())


def inv_ex(A, *, check_errors=False, out=None):
    if _acs.on:
        return _ac.fp32(inv_ex, A, check_errors=check_errors, out=out)
    a = square_float("linalg.inv", A)
    y, info = _inv_arrays(a)
    if check_errors and info.any():
        _inv_error(info)
    X, = wrap((y,), LinalgInvExBackward0, (A,), saved_out=(0,))
    return named("linalg_inv_ex", ("inverse", "info"), (X, make(info)))


def _inv_error(info):
    raise LinAlgError(f"linalg.inv: {batch_prefix(info)}The diagonal element {first_failure(info)} is zero, the "
                      "inversion could not be completed because the input matrix is singular.")


def inv(A, *, out=None):
    if _acs.on:
        return _ac.fp32(inv, A, out=out)
    X, info = inv_ex(A)
    if info._data.any():
        _inv_error(info._data)
    return X


# -- solve ------------------------------------------------------------------------------------------------------
class LinalgSolveExBackward0(_LaNode):     # X = A^-1 B; gB = A^-T gX; gA = -gB X^T  (left=False: transposed)
    __slots__ = ()
    _saved_names = ("A", "result")

    def formula(self, g, A, X):
        return solve_backward(self, g, A, X)


def solve_backward(node, g, A, X):
    left, vector, a_shape, b_shape = node.info
    if vector:
        g, X = g.unsqueeze(-1), X.unsqueeze(-1)
    if not left:
        A, g, X = A.mT, g.mT, X.mT
    gB = solve(A.mH, g)                 # A^H, X^H: the conjugate transposes (complex tensors)
    gA = -(gB @ X.mH) if node.need(0) else None
    if not left:
        gB = gB.mT
        gA = None if gA is None else gA.mT
    if vector:
        gB = gB.squeeze(-1)
    return (_sum_to(gA, a_shape), _sum_to(gB, b_shape) if node.need(1) else None)


def _sum_to(g, shape):
    return g if g is None or tuple(g.shape) == tuple(shape) else g.sum_to_size(shape)


def _solve_checks(A, B, left):
    check_square("linalg.solve", A)
    check_float("linalg.solve", A, kernel="lu_cpu")
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_dtype.c_name(A._data.dtype)} and B of type {_dtype.c_name(B._data.dtype)} instead")
    a, b = A._data, B._data
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    n = a.shape[-1]
    if vector:
        bk = b.shape[-1]
        ok = bk == n
        desc = f"{n}x{n} and {bk}x1"
    else:
        if b.ndim < 2:
            raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
        r, c = b.shape[-2:]
        ok = (r if left else c) == n
        desc = f"{n}x{n} and {r}x{c}"
    if not ok:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} ({desc})")
    return a, b, vector


def _solve_arrays(a, b, vector, left):
    b2 = b[..., None] if vector else b
    if not left:
        a, b2 = np.swapaxes(a, -1, -2), np.swapaxes(b2, -1, -2)
    batch = broadcast_shape(a.shape[:-2], b2.shape[:-2])
    a_b = np.broadcast_to(a, batch + a.shape[-2:])
    b_b = np.broadcast_to(b2, batch + b2.shape[-2:])
    info = np.zeros(batch, np.int32, like=a)
    try:
        with np.errstate(all="ignore"):
            x = np.linalg.solve(a_b, b_b) if a_b.size and b_b.size else np.zeros(b_b.shape, a.dtype, like=a)
    except np.linalg.LinAlgError:
        info = lu_info(a_b)
        x = np.full(b_b.shape, np.nan, a.dtype, like=a)
        ok = info == 0
        if ok.any():
            x[ok] = np.linalg.solve(a_b[ok], b_b[ok])
    else:
        if _device_failed(a, x):
            info = lu_info(a_b)
            x = np.where((info == 0)[..., None, None], x, np.nan)
    if not left:
        x = np.swapaxes(x, -1, -2)
    if vector:
        x = x[..., 0]
    return x.astype(a.dtype, copy=False), info


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    a, b, vector = _solve_checks(A, B, left)
    x, info = _solve_arrays(a, b, vector, left)
    if check_errors and info.any():
        _solve_error(info)
    X, = wrap((x,), LinalgSolveExBackward0, (A, B), saved_in=(0,), saved_out=(0,),
              info=(left, vector, a.shape, b.shape))
    return named("linalg_solve_ex", ("result", "info"), (X, make(info)))


def _solve_error(info):
    raise LinAlgError(f"torch.linalg.solve: {batch_prefix(info)}The solver failed because the input matrix is "
                      "singular.")


def solve(A, B, *, left=True, out=None):
    if _acs.on:
        return _ac.fp32(solve, A, B, left=left, out=out)
    X, info = solve_ex(A, B, left=left)
    if info._data.any():
        _solve_error(info._data)
    return X


# -- solve_triangular -------------------------------------------------------------------------------------------
class LinalgSolveTriangularBackward0(_LaNode):   # gB = A^-T gX (triangular); gA = -gB X^T on A's triangle
    __slots__ = ()
    _saved_names = ("self", "result")

    def formula(self, g, A, X):
        return _tri_backward(self, g, A, X)


def _tri_backward(node, g, A, X):
    upper, left, unit, a_shape, b_shape = node.info
    gB = solve_triangular(A.mH, g, upper=not upper, left=left, unitriangular=unit)
    gA = None
    if node.need(0):
        gA = -(gB @ X.mH) if left else -(X.mH @ gB)
        gA = gA.triu(int(unit)) if upper else gA.tril(-int(unit))
    return (_sum_to(gA, a_shape), _sum_to(gB, b_shape) if node.need(1) else None)


def _triangle(a, upper, unit):
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        n = a.shape[-1]
        t = t.copy()
        d = np.arange(n, like=a)
        t[..., d, d] = 1
    return t


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    check_square("linalg.solve_triangular", A)
    check_matrix("linalg.solve_triangular", B, "B")
    a, b = A._data, B._data
    if not lapack_dtype(a.dtype):
        raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for '{_dtype.c_name(a.dtype)}'")
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type "
                           f"{_dtype.c_name(a.dtype)} and B of type {_dtype.c_name(b.dtype)} instead")
    t = _triangle(a, upper, unitriangular)
    tt, bb = (t, b) if left else (np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2))
    n = a.shape[-1]
    if bb.shape[-2] != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    batch = broadcast_shape(a.shape[:-2], b.shape[:-2])
    tt = np.broadcast_to(tt, batch + tt.shape[-2:])
    bb = np.broadcast_to(bb, batch + bb.shape[-2:])
    with np.errstate(all="ignore"):
        x = _tri_solve(tt, bb, upper == left)
    if not left:
        x = np.swapaxes(x, -1, -2)
    X, = wrap((x.astype(a.dtype, copy=False),), LinalgSolveTriangularBackward0, (A, B), saved_in=(0,),
              saved_out=(0,), info=(upper, left, unitriangular, a.shape, b.shape))
    return X


def _tri_solve(t, b, upper):
    """Substitution on triangular `t` (upper or lower) for every column of `b`, batched."""
    n = t.shape[-1]
    x = np.zeros(np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:], np.result_type(t, b), like=t)
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        s = b[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, :], x)
        x[..., i, :] = s / t[..., i, i, None]
    return x


# -- cholesky ---------------------------------------------------------------------------------------------------
class LinalgCholeskyExBackward0(_LaNode):   # gA = L^-T Phi(L^T gL) L^-1 (Murray 2016), symmetrised
    __slots__ = ()
    _saved_names = ("L",)

    def formula(self, g, L):
        return (_chol_backward(g, L, self.info),)


def _chol_backward(gL, L, upper):
    if upper:                   # mH: conjugate transposes (mT for real tensors), as PyTorch's cholesky_backward
        L, gL = L.mH, gL.mH
    gA = (L.mH @ gL).tril()
    gA = 0.5 * (gA + gA.tril(-1).mH)
    gA = solve_triangular(L.mH, gA, upper=True, left=True)
    return solve_triangular(L, gA, upper=False, left=False)


def _chol_arrays(a):
    info = np.zeros(a.shape[:-2], np.int32, like=a)
    try:
        L = np.linalg.cholesky(a) if a.size else np.zeros(a.shape, a.dtype, like=a)
    except np.linalg.LinAlgError:
        L = None
    # CuPy does not raise: a factorisation that stopped shows as a non-positive or non-finite diagonal
    if L is None or (a.__class__ is not np.ndarray and a.size and not bool(
            (np.diagonal(L, axis1=-2, axis2=-1).real > 0).all() and np.isfinite(L).all())):
        flat = a.reshape((-1,) + a.shape[-2:])
        res = [_chol_partial(x) for x in flat]
        L = np.stack([r[0] for r in res]).reshape(a.shape)
        info = np.array([r[1] for r in res], np.int32, like=a).reshape(a.shape[:-2])
    return L.astype(a.dtype, copy=False), info


def _chol_partial(x):
    """Unblocked Cholesky of one matrix; stops at the first non-positive pivot (LAPACK potrf2's info)."""
    n = x.shape[-1]
    L = np.tril(x).astype(np.float64)
    for j in range(n):
        ajj = L[j, j] - L[j, :j] @ L[j, :j]
        if not ajj > 0:
            L[j, j] = ajj
            return L.astype(x.dtype), j + 1
        L[j, j] = np.sqrt(ajj)
        L[j + 1:, j] = (L[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    return L.astype(x.dtype), 0


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    if _acs.on:
        return _ac.fp32(cholesky_ex, A, upper=upper, check_errors=check_errors, out=out)
    a = square_float("linalg.cholesky", A, kernel="cholesky_cpu")
    L, info = _chol_arrays(a)
    if check_errors and info.any():
        _chol_error(info)
    if upper:                       # U = L^H
        L = np.conj(np.swapaxes(L, -1, -2)).copy()
    Lt, = wrap((L,), LinalgCholeskyExBackward0, (A,), saved_out=(0,), info=upper)
    return named("linalg_cholesky_ex", ("L", "info"), (Lt, make(info)))


def _chol_error(info):
    raise LinAlgError(f"linalg.cholesky: {batch_prefix(info)}The factorization could not be completed because the "
                      f"input is not positive-definite (the leading minor of order {first_failure(info)} is not "
                      "positive-definite).")


def cholesky(A, *, upper=False, out=None):
    if _acs.on:
        return _ac.fp32(cholesky, A, upper=upper, out=out)
    L, info = cholesky_ex(A, upper=upper)
    if info._data.any():
        _chol_error(info._data)
    return L

