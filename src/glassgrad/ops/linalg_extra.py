"""torch's deprecated linear-algebra entry points, each a composite of the torch.linalg families (grad_fn of the
last op, as in torch): chain_matmul (multi_dot, one matrix: a clone), frobenius_norm (norm: NormBackward1),
nuclear_norm (linalg.matrix_norm 'nuc'); torch.addmv_ (Tensor.addmv_); lu_unpack (LuUnpackBackward0); geqrf (NumPy's raw QR: LAPACK's geqrf), ormqr (OrmqrBackward0).

ops: chain_matmul frobenius_norm nuclear_norm addmv_ lu_unpack geqrf ormqr
"""
import numpy as np

from .. import _args, _dtype
from ._core import make, edge, grad, as_array
from .linalg_solve import _LaNode, named, perm_from_pivots, wrap, lapack_dtype, low_kernel
from .linalg_deprecated import deprecated
from .linalg_lu import householder_product, householder_backward
from ..autograd.graph import Node
from ..autograd.grad_mode import no_grad
from .shape import cat
from .addmm import addmv_ as _addmv_
from .conversion import clone
from .linalg_norm import multi_dot, matrix_norm
from .statistics import norm as _norm, NormBackward1, LinalgVectorNormBackward0
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["chain_matmul", "frobenius_norm", "nuclear_norm", "addmv_", "lu_unpack", "geqrf", "ormqr"]

_MISSING = object()


def chain_matmul(*matrices, out=None):
    deprecated("chain_matmul")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if not hasattr(m, "_data"):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {_args.type_name(m)}")
    for m in matrices:
        if m._data.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m._data.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return clone(matrices[0])
    return multi_dot(list(matrices))


def frobenius_norm(input, dim=_MISSING, keepdim=False, *, out=None):
    if dim is _MISSING:
        raise TypeError('frobenius_norm() missing 1 required positional arguments: "dim"')
    deprecated("frobenius_norm")
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
    deprecated("nuclear_norm")
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
            return (None,)
        lo = None if gL is None else gL.tril(-1)
        up = None if gU is None else gU.triu()
        if m == n:
            return ((up if lo is None else lo if up is None else lo + up),)
        if m < n:       # wide: L is m x m, U is m x n
            if up is None:
                return (cat([lo, lo.new_zeros(lo.shape[:-1] + (n - k,))], -1),)
            return (up if lo is None else cat([up[..., :k] + lo, up[..., k:]], -1),)
        if lo is None:  # tall: L is m x k, U is k x n
            return (cat([up, up.new_zeros(up.shape[:-2] + (m - k, n))], -2),)
        return (lo if up is None else cat([lo[..., :k, :] + up, lo[..., k:, :]], -2),)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    _args.tensor_arg(LU_pivots, "lu_unpack", "LU_pivots", 2)
    _args.bool_arg(unpack_data, "lu_unpack", "unpack_data", 3)
    _args.bool_arg(unpack_pivots, "lu_unpack", "unpack_pivots", 4)
    LU, piv = LU_data._data, LU_pivots._data
    m, n = LU_data.size(-2), LU_data.size(-1)
    if piv.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor")
    if piv.size and (piv.min() < 1 or piv.max() > m):
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly "
                           "pass the result of lu_factor?")
    k = min(m, n)
    empty = np.zeros(0, LU.dtype, like=LU)
    P = perm_from_pivots(piv, m).astype(LU.dtype) if unpack_pivots else empty
    if unpack_data:
        L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype, like=LU)
        U = np.triu(LU[..., :k, :])
    else:
        L = U = empty
    if not (grad.enabled and LU_data._rg):
        return named("lu_unpack", ("P", "L", "U"), (make(P), make(L), make(U.copy())))
    node = LuUnpackBackward0((edge(LU_data),))     # the pivots: no edge, as torch's
    node.info = (m, n, LU.dtype)
    return named("lu_unpack", ("P", "L", "U"), (make(P), make(L, True, node, 1), make(U.copy(), True, node, 2)))


# -- geqrf / ormqr -----------------------------------------------------------------------------------------------------
class GeqrfBackward0(Node):
    """torch has no derivative for geqrf."""
    __slots__ = ()
    n_outputs = 2

    def backward(self, ns, grads):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def geqrf(input, *, out=None):
    if _acs.on:
        return _ac.fp32(geqrf, input, out=out)
    a = input._data
    if a.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not lapack_dtype(a.dtype):
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{_dtype.c_name(a.dtype)}'")
    m, n = a.shape[-2:]
    if a.size == 0:
        h, tau = a.copy(), np.zeros(a.shape[:-2] + (min(m, n),), a.dtype, like=a)
    else:
        h, tau = np.linalg.qr(a, mode="raw")
        h = np.swapaxes(h, -1, -2).astype(a.dtype)
        tau = as_array(tau, a.dtype)
    if not (grad.enabled and input._rg):
        return named("geqrf", ("a", "tau"), (make(np.ascontiguousarray(h, like=a)), make(tau)))
    node = GeqrfBackward0((edge(input),))
    return named("geqrf", ("a", "tau"), (make(np.ascontiguousarray(h, like=a), True, node, 0), make(tau, True, node, 1)))


def _square(A):
    """input (..., m, n) as the (..., m, m) matrix whose reflectors make the full Q."""
    m, n = A.shape[-2:]
    if n > m:
        return A.narrow(-1, 0, m)
    if n < m:
        return cat([A, A.new_zeros(tuple(A.shape[:-1]) + (m - n,))], -1)
    return A


def _unsquare(gAp, A):
    m, n = A.shape[-2:]
    if n > m:
        return cat([gAp, gAp.new_zeros(tuple(gAp.shape[:-1]) + (n - m,))], -1)
    return gAp.narrow(-1, 0, n) if n < m else gAp


def _ormqr_apply(Q, C, left, transpose):
    Qt = Q.mT if transpose else Q
    return Qt @ C if left else C @ Qt


class OrmqrBackward0(_LaNode):
    """y = op(Q) C or C op(Q), Q = H_1 ... H_k (m x m): gC from Q, gQ back through the reflectors
    (householder_product's exact gradient)."""
    __slots__ = ()
    _saved_names = ("self", "input2", "input3")

    def formula(self, g, A, tau, C):
        left, transpose = self.info
        Ap = _square(A)
        Q = householder_product(Ap, tau)
        gC = _ormqr_apply(Q, g, left, not transpose) if left else g @ (Q if transpose else Q.mT)
        if left:
            gQ = g @ C.mT if not transpose else C @ g.mT
        else:
            gQ = C.mT @ g if not transpose else g.mT @ C
        gAp, gtau = householder_backward(gQ, Ap, tau)
        return (_unsquare(gAp, A) if self.need(0) else None), (gtau if self.need(1) else None), \
            (gC if self.need(2) else None)


def _ormqr_checks(A, tau, C, left):
    a, t, c = A._data, tau._data, C._data
    if a.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    low_kernel("ormqr_cpu", a, on_empty=True)
    if c.ndim < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    ax = -2 if left else -1
    if t.ndim < 1 or t.shape[-1] != min(c.shape[ax], a.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{ax}], input.shape[-1])")
    if c.shape[ax] != a.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{ax}] must be equal to input.shape[-2]")
    if a.ndim - t.ndim != 1:
        raise RuntimeError("torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal "
                           f"to {t.ndim} and input.ndim is equal to {a.ndim}")
    if a.ndim != c.ndim:
        raise RuntimeError("torch.ormqr: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {c.ndim} and input.ndim is equal to {a.ndim}")
    if a.shape[:-2] != t.shape[:-1]:
        raise RuntimeError("torch.ormqr: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(t.shape[:-1])}")
    if a.shape[:-2] != c.shape[:-2]:
        raise RuntimeError("torch.ormqr: Expected batch dimensions of other to be equal to input.shape[:-2], but got "
                           f"{list(c.shape[:-2])}")
    for name, x in (("tau", t), ("other", c)):
        if x.dtype != a.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {name} to have the same dtype, but input has dtype"
                               f"{_dtype.c_name(a.dtype)} and {name} has dtype {_dtype.c_name(x.dtype)}")


def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    if _acs.on:
        return _ac.fp32(ormqr, input, input2, input3, left, transpose, out=out)
    _args.bool_arg(left, "ormqr", "left", 4)
    _args.bool_arg(transpose, "ormqr", "transpose", 5)
    _ormqr_checks(input, input2, input3, left)
    with no_grad():
        Q = householder_product(_square(make(input._data)), make(input2._data))._data
    y = np.matmul(np.swapaxes(Q, -1, -2) if transpose else Q, input3._data) if left else \
        np.matmul(input3._data, np.swapaxes(Q, -1, -2) if transpose else Q)
    return wrap((as_array(y, input._data.dtype),), OrmqrBackward0, (input, input2, input3), (0, 1, 2), (),
                (left, transpose))[0]
