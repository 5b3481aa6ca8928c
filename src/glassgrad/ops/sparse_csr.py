"""Sparse CSR tensors (2-D, no batch or dense dims): sparse_csr_tensor, Tensor.to_sparse_csr, crow_indices /
col_indices / values, to_dense, to_sparse (to COO), clone, to(dtype), and CSR @ dense (``MmBackward0`` of
sparse_ops.py: a dense gradient for the CSR operand, as torch's).

The storage is ``_sparse_coo.CSR``, which also reads as the coalesced COO it stands for, so the products and
to_dense run the COO kernels.  Unlike torch, sparse_csr_tensor always checks its invariants (torch builds
an inconsistent tensor without check_invariants=True; glassgrad raises the same messages instead).
"""
import numpy as np

from .. import _dtype, _layout
from .._sparse_coo import COO, CSR, to_csr, to_dense as _dense, gather
from .._sparse_tensor import SparseCsrTensor, make_sparse, register, CSR_FUNCTIONS
import warnings

from ._core import Node, Tensor, make, edge, grad, warn_once
from ._data import _array_from_data
from .sparse import grad_in, grads_out, out, _RG_MSG, _INVARIANTS, _WARN_IMPLICIT
from .sparse_ops import _check_mm, _spmm, _node, MmBackward0, SparseAddmmBackward0

__all__ = ["sparse_csr_tensor"]


class SparseCompressedTensorBackward0(Node):
    """The values' gradient: the output gradient at the tensor's entries."""
    __slots__ = ("csr",)

    def backward(self, ns, g):
        c = self.csr
        return grads_out(ns, gather(grad_in(ns, g), c.indices, c.shape))


def _check(crow, col, nnz, shape):
    if len(shape) != 2:
        raise RuntimeError(f"glassgrad: only 2-D sparse CSR tensors are supported, not size {tuple(shape)}")
    if crow.ndim != 1 or col.ndim != 1 or len(crow) != shape[0] + 1:
        raise RuntimeError(f"crow_indices.size(-1) == nrows + 1 is not satisfied: crow_indices.size(-1) = "
                           f"{crow.shape[-1] if crow.ndim else 0}, nrows = {shape[0]}")
    if len(col) != nnz:
        raise RuntimeError(f"col_indices and values must have the same number of elements, but got "
                           f"{len(col)} and {nnz}")
    if crow[0] != 0:
        raise RuntimeError("`crow_indices[..., 0] == 0` is not satisfied.")
    if crow[-1] != nnz:
        raise RuntimeError("`crow_indices[..., -1] == nnz` is not satisfied.")
    if (np.diff(crow) < 0).any():
        raise RuntimeError("`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is not satisfied.")
    if nnz and (col.min() < 0 or col.max() >= shape[1]):
        raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")
    rows = np.repeat(np.arange(shape[0], like=crow), np.diff(crow))
    if nnz > 1 and ((np.diff(col) <= 0) & (np.diff(rows) == 0)).any():
        raise RuntimeError("`col_indices[..., crow_indices[..., i - 1]:crow_indices[..., i]] for all i = 1, ..., "
                           "nrows are sorted and distinct along the last dimension values` is not satisfied.")


_BETA = ("Sparse CSR tensor support is in beta state. If you miss a functionality in the sparse tensor support, "
         "please submit a feature request to https://github.com/pytorch/pytorch/issues. (Triggered internally at "
         "/__w/pytorch/pytorch/aten/src/ATen/SparseCsrTensorImpl.cpp:49.)")


def _warn_once(check_invariants):
    """torch's two warnings, once per process: the implicit invariant checks (shared with sparse_coo_tensor),
    and CSR's beta state."""
    if check_invariants is None and not _INVARIANTS["explicit"] and not _INVARIANTS["warned"]:
        _INVARIANTS["warned"] = True
        warnings.warn(_WARN_IMPLICIT, UserWarning, stacklevel=3)
    warn_once(_BETA, stacklevel=4)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    _warn_once(check_invariants)
    dt = None if dtype is None else _dtype.to_dtype(dtype)
    crow, col = _array_from_data(crow_indices, None), _array_from_data(col_indices, None)
    if crow.dtype != col.dtype or crow.dtype not in (np.int32, np.int64):
        crow, col = crow.astype(np.int64), col.astype(np.int64)
    vt = values if isinstance(values, Tensor) else None
    if vt is not None and dt is not None and vt.dtype is not dt:
        vt = vt.to(dt)
    vals = _array_from_data(values, dt) if vt is None else vt._data
    if size is None:
        shape = (max(len(crow) - 1, 0), int(col.max()) + 1 if len(col) else 0)
    else:
        shape = tuple(int(s) for s in size)
    _check(crow, col, len(vals) if vals.ndim else 1, shape)
    csr = CSR(crow, col, vals, shape)
    if vt is not None and vt._rg and grad.enabled:
        n = SparseCompressedTensorBackward0((edge(vt),))
        n.csr = csr
        return make_sparse(csr, True, n)
    return make_sparse(csr)._set_requires_grad(requires_grad, _RG_MSG)


def rebuild_csr(crow, col, values, size, requires_grad=False):
    _check(crow, col, len(values), tuple(size))
    return make_sparse(CSR(crow, col, values, tuple(size)), requires_grad)


class ToSparseCsrBackward0(Node):
    __slots__ = ()

    def backward(self, ns, g):
        g = grad_in(ns, g)
        return grads_out(ns, g if g.__class__ is np.ndarray else _dense(g))


def to_sparse_csr(input, dense_dim=None):
    if input.__class__ is SparseCsrTensor:
        if dense_dim is not None:
            raise RuntimeError("to_sparse_csr: conversion from SparseCsr to SparseCsr with dense_dim argument given is "
                               "not supported")
        return input
    if dense_dim is not None:
        raise RuntimeError("glassgrad: to_sparse_csr(dense_dim) is not supported")
    if input.is_sparse:
        c = input._data
        if c.ndim != 2 or c.dense_dim:
            raise RuntimeError("glassgrad: only 2-D sparse CSR tensors are supported")
    else:
        a = input._data
        if a.ndim != 2:
            raise RuntimeError(f"glassgrad: only 2-D sparse CSR tensors are supported, not {a.ndim}-D")
        idx = np.array(np.nonzero(a), dtype=np.int64, like=a).reshape(2, -1)
        c = COO(idx, a[tuple(idx)].copy(), a.shape, True)
    return out(to_csr(c), ToSparseCsrBackward0, (input,))[0]


def crow_indices(input):
    return make(input._data.crow)


def col_indices(input):
    return make(input._data.col)


class ValuesBackward0(Node):
    """values() of a CSR tensor: the gradient as a CSR tensor with these values."""
    __slots__ = ("csr",)

    def backward(self, ns, g):
        c = self.csr
        return grads_out(ns, CSR(c.crow, c.col, grad_in(ns, g), c.shape))


def values(input):
    c = input._data
    if input._rg and grad.enabled:
        n = ValuesBackward0((edge(input),))
        n.csr = c
        return make(c.values, True, n)
    return make(c.values)


class ToDenseBackward0(Node):
    """The gradient on the CSR pattern (a CSR gradient, as torch's)."""
    __slots__ = ("csr",)

    def backward(self, ns, g):
        c = self.csr
        return grads_out(ns, CSR(c.crow, c.col, gather(grad_in(ns, g), c.indices, c.shape), c.shape))


def to_dense(input, dtype=None):
    if dtype is not None:
        raise RuntimeError("dtype argument is not supported by sparse_csr_to_dense")
    c = input._data
    y = _dense(c)
    if input._rg and grad.enabled:
        n = ToDenseBackward0((edge(input),))
        n.csr = c
        return make(y, True, n)
    return make(y)


class ToSparseBackward1(Node):
    __slots__ = ()

    def backward(self, ns, g):
        g = grad_in(ns, g)
        c = g if g.__class__ is COO else None
        return grads_out(ns, to_csr(c) if c is not None else g)


_NO_DIM = object()


def to_sparse(input, sparse_dim=_NO_DIM, *, layout=None, blocksize=None, dense_dim=None):
    if layout is _layout.sparse_csr:
        return input
    if layout is not None and layout is not _layout.sparse_coo:
        raise RuntimeError(f"glassgrad: to_sparse(layout={layout}) is not supported")
    if sparse_dim is not _NO_DIM and sparse_dim != 2:
        raise RuntimeError("sparse_compressed_to_sparse: conversion from SparseCsr to Sparse with sparse_dim argument "
                           "!=2 is not supported")
    c = input._data
    return out(COO(c.indices, c.values, c.shape, True), ToSparseBackward1, (input,))[0]


class CloneBackward0(Node):
    __slots__ = ()

    def backward(self, ns, g):
        return (g,)


def clone(input):
    c = input._data
    return out(CSR(c.crow.copy(), c.col.copy(), c.values.copy(), c.shape), CloneBackward0, (input,))[0]


class ToCopyBackward0(Node):
    __slots__ = ("np_dtype",)

    def backward(self, ns, g):
        return grads_out(ns, grad_in(ns, g).astype(self.np_dtype))


def to(input, *args, **kwargs):
    dt = kwargs.get("dtype")
    for a in args:
        if isinstance(a, _dtype.dtype):
            dt = a
    c = input._data
    if dt is None or c.values.dtype == dt.np:
        return input
    res, n = out(CSR(c.crow, c.col, c.values.astype(dt.np), c.shape), ToCopyBackward0,
                 (input,) if dt.np.kind in "fV" else ())
    if n is not None:
        n.np_dtype = c.values.dtype
    return res


def mm(input, mat2, *, _cls=MmBackward0):
    """CSR @ dense: dense, MmBackward0 (torch.sparse.mm: SparseAddmmBackward0)."""
    if isinstance(mat2, Tensor) and mat2.__class__ is SparseCsrTensor:
        raise RuntimeError("glassgrad: the product of two sparse tensors is not supported")
    if isinstance(mat2, Tensor) and mat2._data.ndim == 2 and mat2._data.shape[0] != input._data.shape[1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input._data.shape[0]}x{input._data.shape[1]} "
                           f"and {mat2._data.shape[0]}x{mat2._data.shape[1]})")
    _check_mm(input, mat2)
    y = _spmm(input._data, mat2._data)
    if grad.enabled and (input._rg or mat2._rg):
        inputs = (input, mat2) if _cls is MmBackward0 else (None, input, mat2)
        return make(y, True, _node(_cls, inputs, input, mat2, True))
    return make(y)


def _sparse_mm(input, mat2, reduce="sum"):
    return mm(input, mat2, _cls=SparseAddmmBackward0)


class MulBackward0(Node):
    __slots__ = ("other",)

    def backward(self, ns, g):
        return grads_out(ns, grad_in(ns, g) * self.other)


def mul(input, other):
    """CSR * number (a 0-d tensor too)."""
    if isinstance(other, Tensor):
        if other._data.ndim or other.layout is not _layout.strided:
            raise RuntimeError("glassgrad: a CSR tensor times a tensor is supported only for a 0-d dense tensor")
        other = other._data
    c = input._data
    res, n = out(CSR(c.crow, c.col, c.values * other, c.shape), MulBackward0, (input,))
    if n is not None:
        n.other = other
    return res


class AddBackward0(Node):
    __slots__ = ("alpha",)

    def backward(self, ns, g):
        g = grad_in(ns, g)
        return grads_out(ns, g, g if self.alpha == 1 else g * self.alpha)


def add(input, other, *, alpha=1):
    """CSR + CSR (a CSR result: the union of the two patterns, sums where they meet)."""
    if not (isinstance(other, Tensor) and other.__class__ is SparseCsrTensor):
        raise RuntimeError("glassgrad: a CSR tensor plus a tensor is supported only for another CSR tensor")
    a, b = input._data, other._data
    if a.shape != b.shape:
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but {list(a.shape)} != "
                           f"{list(b.shape)}")
    bv = b.values if alpha == 1 else b.values * alpha
    both = COO(np.concatenate([a.indices, b.indices], axis=1), np.concatenate([a.values, bv]), a.shape)
    res, n = out(to_csr(both, a.crow.dtype), AddBackward0, (input, other))
    if n is not None:
        n.alpha = alpha
    return res


register(CSR_FUNCTIONS, mm=mm, matmul=mm, spmm=mm, dsmm=mm, mul=mul, multiply=mul, add=add)
