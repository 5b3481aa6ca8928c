"""The `*_copy` forms of the complex views and the sparse accessors: view_as_real_copy view_as_complex_copy
values_copy crow_indices_copy col_indices_copy indices_copy.

Each is its view / accessor followed by a copy into fresh memory, its node the accessor's under torch's name
for the copy (`ViewAsRealBackward0_copy`, `ValuesBackward0_copy`). torch's CPU build has no sparse COO kernel
for these copies (indices_copy / values_copy of a sparse COO tensor raise NotImplementedError), and
view_as_complex_copy refuses to record a graph for its complex output: both are reproduced. glassgrad has no
CSC layout, so ccol_indices_copy / row_indices_copy are not here.
"""
import numpy as np

from ._core import make
from . import complex as _cx, sparse_csr as _csr
from .sparse import is_sparse
from .view_copies import _copied
from .._sparse_tensor import register, not_on_sparse, CSR_FUNCTIONS

__all__ = ["view_as_real_copy", "view_as_complex_copy", "values_copy", "crow_indices_copy", "col_indices_copy",
           "indices_copy"]


class ViewAsRealBackward0_copy(_cx.ViewAsRealBackward0):    # y = view_as_real(z).clone(); dz = view_as_complex(gy)
    __slots__ = ()


class ValuesBackward0_copy(_csr.ValuesBackward0):           # v = csr.values().clone(); the gradient on the pattern
    __slots__ = ()


def view_as_real_copy(input):
    return _copied(_cx.view_as_real(input), ViewAsRealBackward0_copy)


def view_as_complex_copy(input):
    from ..autograd.grad_mode import is_grad_enabled
    y = _cx.view_as_complex(input)            # torch's argument checks first
    if input.requires_grad and is_grad_enabled():
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return make(np.array(y._data, order="C", copy=True, like=y._data))


_NAMES = {"strided": "Strided", "sparse_csr": "SparseCsr", "sparse_coo": "Sparse"}


def _check(input, op, want, wanted):
    """torch's error for the wrong layout (a sparse COO argument is refused by the torch.* wrapper first:
    torch's CPU build has no SparseCPU kernel for these copies)."""
    layout = str(input.layout).rpartition(".")[2]
    if is_sparse(input):
        raise not_on_sparse(f"{op}_copy")
    if layout != want:
        raise RuntimeError(f"{op} expected {wanted} tensor layout but got {_NAMES.get(layout, layout)}")


def _fresh(t):
    return make(np.array(t._data, order="C", copy=True, like=t._data))


def values_copy(input):
    _check(input, "values", "sparse_csr", "sparse")
    v = _csr.values(input)
    return _fresh(v) if v._grad_fn is None else _copied(v, ValuesBackward0_copy)


def crow_indices_copy(input):
    _check(input, "crow_indices", "sparse_csr", "sparse row compressed")
    return _fresh(_csr.crow_indices(input))


def col_indices_copy(input):
    _check(input, "col_indices", "sparse_csr", "sparse row compressed")
    return _fresh(_csr.col_indices(input))


def indices_copy(input):
    _check(input, "indices", "sparse_coo", "sparse coordinate")


register(CSR_FUNCTIONS, values_copy=values_copy, crow_indices_copy=crow_indices_copy,
         col_indices_copy=col_indices_copy, indices_copy=indices_copy)
