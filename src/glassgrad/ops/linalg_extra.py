"""torch's deprecated linear-algebra entry points, each a composite of the torch.linalg families (grad_fn of the
last op, as in torch): chain_matmul (multi_dot, one matrix: a clone), frobenius_norm (norm: NormBackward1),
nuclear_norm (linalg.matrix_norm 'nuc'); torch.addmv_ (Tensor.addmv_); lu_unpack (LuUnpackBackward0).

ops: chain_matmul frobenius_norm nuclear_norm addmv_ lu_unpack
"""
import warnings

import numpy as np

from .. import _dtype
from ._core import make, edge, grad, NO_EDGE
from .linalg_solve import _LaNode, named, perm_from_pivots
from .shape import cat
from .addmm import addmv_ as _addmv_
from .conversion import clone
from .linalg_norm import multi_dot, matrix_norm
from .statistics import norm as _norm, NormBackward1, LinalgVectorNormBackward0

__all__ = ["chain_matmul", "frobenius_norm", "nuclear_norm", "addmv_", "lu_unpack"]

_WARNED = set()
_MISSING = object()


def _warn_once(name, text):
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(text, UserWarning, stacklevel=3)


def chain_matmul(*matrices, out=None):
    _warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
               "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
               "multiple parameters.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m._data.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m._data.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return clone(matrices[0])
    return multi_dot(list(matrices))


def frobenius_norm(input, dim=_MISSING, keepdim=False, *, out=None):
    if dim is _MISSING:
        raise TypeError('frobenius_norm() missing 1 required positional arguments: "dim"')
    _warn_once("frobenius_norm", "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It "
               "will be removed in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` "
               "instead")
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. Got "
                           f"{_dtype.c_name(input._data.dtype)} instead.")
    r = _norm(input, 2, dims if dims else None, keepdim)
    fn = r._grad_fn
    if fn is not None and type(fn) is LinalgVectorNormBackward0:
        fn.__class__ = NormBackward1
    return r


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    _warn_once("nuclear_norm", "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will "
               "be removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` "
               "instead")
    if isinstance(dim, bool) or dim is None:
        keepdim, dim = (dim if isinstance(dim, bool) else keepdim), (-2, -1)
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    return matrix_norm(input, "nuc", dim, keepdim)


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    return _addmv_(input, mat, vec, beta=beta, alpha=alpha)





# -- lu_unpack -------------------------------------------------------------------------------------------------------
class LuUnpackBackward0(_LaNode):
    """torch's lu_unpack_backward: gLU = tril(gL, -1) + triu(gU), each on its block of the packed LU."""
    __slots__ = ()
    n_outputs = 3

    def formula(self, grads, *_):
        _, gL, gU = grads
        m, n, dt = self.info
        k = min(m, n)
        for g, what in ((gU, "triu"), (gL, "tril")):       # the empty L, U of unpack_data=False (as torch: U first)
            if g is not None and g.dim() < 2:
                raise RuntimeError(f"{what}: input tensor must have at least 2 dimensions")
        if gL is None and gU is None:
            return (None, None)
        lo = None if gL is None else gL.tril(-1)
        up = None if gU is None else gU.triu()
        if m == n:
            return ((up if lo is None else lo if up is None else lo + up), None)
        if m < n:       # wide: L is m x m, U is m x n
            if up is None:
                return (cat([lo, lo.new_zeros(lo.shape[:-1] + (n - k,))], -1), None)
            return (up if lo is None else cat([up[..., :k] + lo, up[..., k:]], -1), None)
        if lo is None:  # tall: L is m x k, U is k x n
            return (cat([up, up.new_zeros(up.shape[:-2] + (m - k, n))], -2), None)
        return (lo if up is None else cat([lo[..., :k, :] + up, lo[..., k:, :]], -2), None)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    LU, piv = LU_data._data, LU_pivots._data
    m, n = LU_data.size(-2), LU_data.size(-1)
    if piv.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor")
    if piv.size and (piv.min() < 1 or piv.max() > m):
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly "
                           "pass the result of lu_factor?")
    k = min(m, n)
    empty = np.zeros(0, LU.dtype)
    P = perm_from_pivots(piv, m).astype(LU.dtype) if unpack_pivots else empty
    if unpack_data:
        L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype)
        U = np.triu(LU[..., :k, :])
    else:
        L = U = empty
    if not (grad.enabled and LU_data._rg):
        return named("lu_unpack", ("P", "L", "U"), (make(P), make(L), make(U.copy())))
    node = LuUnpackBackward0((edge(LU_data), NO_EDGE))
    node.info = (m, n, LU.dtype)
    return named("lu_unpack", ("P", "L", "U"), (make(P), make(L, True, node, 1), make(U.copy(), True, node, 2)))
