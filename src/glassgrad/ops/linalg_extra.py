"""torch's deprecated linear-algebra entry points, each a composite of the torch.linalg families (grad_fn of the
last op, as in torch): chain_matmul (multi_dot, one matrix: a clone), frobenius_norm (norm: NormBackward1),
nuclear_norm (linalg.matrix_norm 'nuc'); and torch.addmv_ (Tensor.addmv_).

ops: chain_matmul frobenius_norm nuclear_norm addmv_
"""
import warnings

from .. import _dtype
from .addmm import addmv_ as _addmv_
from .conversion import clone
from .linalg_norm import multi_dot, matrix_norm
from .statistics import norm as _norm, NormBackward1, LinalgVectorNormBackward0

__all__ = ["chain_matmul", "frobenius_norm", "nuclear_norm", "addmv_"]

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



