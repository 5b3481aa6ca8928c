"""Sparse COO tensors: construction, conversions, accessors, elementwise ops, resizing.

sparse_coo_tensor, Tensor.to_sparse / to_sparse_coo / to_dense / coalesce / indices / values / _indices /
_values / _nnz / sparse_resize_ / sparse_resize_and_clear_, t, clone, to(dtype), sparse * number, sparse /
number, -sparse, sparse + sparse, dense + sparse, select; torch.sparse.check_sparse_tensor_invariants.
The products, sums and softmaxes are in sparse_ops.py.  A sparse tensor is a ``SparseTensor``
(``_sparse_tensor.py``) holding ``_sparse_coo.COO`` storage; its gradients are COO storage too (sparse
gradients, as torch's).  The nodes compute on arrays; with create_graph=True they take the gradient's data
and give constant gradients, and refuse a gradient that itself requires grad (no double backward; the
products of sparse_ops.py record the dense operand's gradient instead).
"""
import warnings

import numpy as np

from .. import _dtype, _layout, backend
from .._sparse_coo import COO, coalesce as _coalesce, to_dense as _dense, gather, add as _coo_add, empty as empty_coo
from .._sparse_tensor import SparseTensor, make_sparse, register, not_on_sparse
from ..autograd.graph import check_saved, freed_error
from ._core import Node, Tensor, make, edge, NO_EDGE, save_in, grad, sum_to, as_array
from ._data import _array_from_data

__all__ = ["sparse_coo_tensor"]

_INVARIANTS = {"enabled": False, "explicit": False, "warned": False}
_WARN_IMPLICIT = (
    "Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur when operating on a "
    "sparse tensor which violates the invariants, but checks incur performance overhead. To silence this warning, "
    "explicitly opt in or out. See `torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.  (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/Context.cpp:816.)")


# -- what the nodes share -------------------------------------------------------------------------------
def grad_in(ns, g):
    """The gradient as an array or COO (with create_graph=True: its data; refused if it requires grad)."""
    if not ns.is_tensor_mode:
        return g
    if g._rg:
        raise RuntimeError("glassgrad: double backward through sparse operations is not supported")
    return g._data


def grads_out(ns, *gs):
    if not ns.is_tensor_mode:
        return gs
    return tuple(None if x is None else make_sparse(x) if isinstance(x, COO) else make(x) for x in gs)


def saved(node):
    if node._saved is None:
        raise freed_error()
    return [check_saved(node, s) for s in node._saved]


def out(coo, node_cls, inputs, saves=()):
    """The sparse result, with `node_cls` recorded when an input requires grad."""
    if grad.enabled and any(t is not None and t._rg for t in inputs):
        n = node_cls(tuple(edge(t) if t is not None and t._rg else NO_EDGE for t in inputs))
        n._saved = tuple(save_in(t) for t in saves)
        return make_sparse(coo, True, n), n
    return make_sparse(coo), None


def is_sparse(t):
    return t.__class__ is SparseTensor


def _layout_error(fn, what="sparse coordinate tensor"):
    return RuntimeError(f"{fn} expected {what} layout but got Strided")


# -- construction -----------------------------------------------------------------------------------------
class SparseCooTensorWithDimsAndTensorsBackward0(Node):
    __slots__ = ("indices", "sparse_shape")

    def backward(self, ns, g):
        return grads_out(ns, gather(grad_in(ns, g), self.indices, self.sparse_shape))


def _check_indices(idx, shape):
    for d in range(idx.shape[0]):
        if idx.shape[1]:
            lo, hi = int(idx[d].min()), int(idx[d].max())
            if lo < 0:
                raise RuntimeError(f"found negative index {lo} for dim {d}")
            if hi >= shape[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {shape[d]} but "
                                   f"found index {hi}")


_NO_VALUES = object()
SPARSE_MUL = [None]     # sparse * sparse: sparse_matmul.py puts its function here
_RG_MSG = "Only Tensors of floating point and complex dtype can require gradients"


def sparse_coo_tensor(indices, values=_NO_VALUES, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    dt = None if dtype is None else _dtype.to_dtype(dtype)
    if values is _NO_VALUES:        # sparse_coo_tensor(size): an empty tensor
        shape = tuple(int(s) for s in indices)
        coo = COO(np.zeros((len(shape), 0), np.int64), np.zeros((0,), (dt or _dtype._default[0]).np), shape, True)
        return make_sparse(coo)._set_requires_grad(requires_grad, _RG_MSG)
    if check_invariants is None and not _INVARIANTS["explicit"] and not _INVARIANTS["warned"]:
        _INVARIANTS["warned"] = True
        warnings.warn(_WARN_IMPLICIT, UserWarning, stacklevel=2)
    idx = indices._data if isinstance(indices, Tensor) else _array_from_data(indices, None)   # on its device
    if idx.dtype != np.int64:
        idx = idx.astype(np.int64)
    vt = values if isinstance(values, Tensor) else None
    if vt is not None and dt is not None and vt.dtype is not dt:
        vt = vt.to(dt)          # differentiable, as torch's conversion of the values
    vals = _array_from_data(values, dt) if vt is None else vt._data
    vals = vals if vals.ndim else vals.reshape(1)
    if idx.__class__ is not vals.__class__:     # torch makes the indices on the values' device
        idx = backend.to_device(idx, backend.device_of(vals))
    sd = idx.shape[0] if idx.ndim else 0
    dense = vals.shape[1:]
    if size is not None:
        shape = tuple(int(s) for s in size)
        if len(shape) != sd + len(dense):
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(shape)}, "
                               f"sparse_dim = {sd}, dense_dim = {len(dense)}")
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if idx.shape[1] != vals.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}, nnz "
                           f"from values: {vals.shape[0]}")
    if size is None:
        if idx.shape[1] and idx.min() < 0:
            raise RuntimeError(f"found negative index {int(idx.min())} for dim {int(np.argmin(idx.min(1)))}")
        shape = tuple(int(m) + 1 for m in idx.max(1)) if idx.shape[1] else (0,) * sd
        shape += dense
    else:
        if any(s < 0 for s in shape):
            raise RuntimeError("numel: integer multiplication overflow")
        if tuple(shape[sd:]) != tuple(dense):
            raise RuntimeError(f"values has incorrect size, expected {[vals.shape[0]] + list(shape[sd:])}, got "
                               f"{list(vals.shape)}")
        if check_invariants or (check_invariants is None and _INVARIANTS["enabled"]):
            _check_indices(idx, shape)
    coal = bool(is_coalesced) if is_coalesced is not None else idx.shape[1] <= 1
    coo = COO(idx, vals, shape, coal)
    if vt is not None and vt._rg and grad.enabled and vals is vt._data:
        n = SparseCooTensorWithDimsAndTensorsBackward0((edge(vt),))
        n.indices, n.sparse_shape = idx, shape[:sd]
        return make_sparse(coo, True, n)
    return make_sparse(coo)._set_requires_grad(requires_grad, _RG_MSG)


def zeros_sparse(size, dtype, requires_grad=False):
    """An empty sparse tensor of `size` (all dims sparse): Tensor.new_zeros of a sparse tensor."""
    shape = tuple(int(s) for s in (size[0] if len(size) == 1 and not isinstance(size[0], int) else size))
    dt = _dtype.to_dtype(dtype)
    coo = COO(np.zeros((len(shape), 0), np.int64), np.zeros((0,), dt.np), shape, True)
    return make_sparse(coo)._set_requires_grad(requires_grad, _RG_MSG)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    c = input._data
    dt = c.values.dtype if dtype is None else _dtype.to_dtype(dtype).np
    coo = empty_coo(c.sparse_dim, c.shape, dt, c.values)
    return make_sparse(coo)._set_requires_grad(requires_grad, _RG_MSG)


def rebuild_sparse(indices, values, size, coalesced, requires_grad=False):
    return make_sparse(COO(indices, values, tuple(size), coalesced), requires_grad)


# -- conversions ----------------------------------------------------------------------------------------
class ToSparseBackward0(Node):
    __slots__ = ()

    def backward(self, ns, g):
        g = grad_in(ns, g)
        return grads_out(ns, _dense(g) if g.__class__ is COO else g)


class ToSparseBackward1(ToSparseBackward0):
    __slots__ = ()


_NO_DIM = object()


def to_sparse(input, sparse_dim=_NO_DIM, *, layout=None, blocksize=None, dense_dim=None):
    if layout is not None and layout is not _layout.sparse_coo:
        raise RuntimeError(f"glassgrad: to_sparse(layout={layout}) is not supported (only torch.sparse_coo)")
    if is_sparse(input):
        if sparse_dim is not _NO_DIM and sparse_dim != input._data.sparse_dim:
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=self.sparse_dim() "
                               "is not supported")
        return input
    a = input._data
    sd = a.ndim if sparse_dim is _NO_DIM else int(sparse_dim)
    if sd == 0 and a.ndim:
        raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0")
    if not 0 <= sd <= a.ndim:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{a.ndim}] range, but {sd} is given")
    nz = a != 0 if sd == a.ndim else (a != 0).reshape(a.shape[:sd] + (-1,)).any(-1)
    idx = np.array(np.nonzero(nz), dtype=np.int64, like=a).reshape(sd, -1)
    vals = a[tuple(idx)].copy() if sd else a.reshape((1,) + a.shape).copy()
    if not sd:
        idx = np.zeros((0, 1), np.int64, like=a)
    cls = ToSparseBackward1 if sparse_dim is _NO_DIM else ToSparseBackward0
    return out(COO(idx, vals, a.shape, True), cls, (input,))[0]


class ToDenseBackward0(Node):
    __slots__ = ("coo",)

    def backward(self, ns, g):
        c = _coalesce(self.coo)
        return grads_out(ns, COO(c.indices, gather(grad_in(ns, g), c.indices, c.shape[:c.sparse_dim]), c.shape, True))


def to_dense(input, dtype=None):
    if not is_sparse(input):
        return input if dtype is None else input.to(dtype)
    if dtype is not None:
        raise RuntimeError("dtype argument is not supported by sparse_to_dense")
    c = input._data
    y = _dense(c)
    if input._rg and grad.enabled:
        n = ToDenseBackward0((edge(input),))
        n.coo = c
        return make(y, True, n)
    return make(y)


class CoalesceBackward0(Node):
    __slots__ = ()

    def backward(self, ns, g):
        return (g,)


def coalesce(input):
    if not is_sparse(input):
        raise _layout_error("coalesce")
    c = input._data
    if c.coalesced:
        return input
    return out(_coalesce(c), CoalesceBackward0, (input,))[0]


def dense_is_coalesced(input):
    raise _layout_error("is_coalesced")


class ValuesBackward0(Node):
    __slots__ = ("coo",)

    def backward(self, ns, g):
        c = self.coo
        return grads_out(ns, COO(c.indices, grad_in(ns, g), c.shape, c.coalesced, shared=True))


def values(input):
    if not is_sparse(input):
        raise _layout_error("values", "sparse tensor")
    c = input._data
    if not c.coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    if input._rg and grad.enabled:
        n = ValuesBackward0((edge(input),))
        n.coo = c
        return make(c.values, True, n)
    return make(c.values)


def indices(input):
    if not is_sparse(input):
        raise _layout_error("indices")
    if not input._data.coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return make(input._data.indices)


def _indices(input):
    if not is_sparse(input):
        raise NotImplementedError(not_on_sparse("_indices").args[0].replace("'SparseCPU'", "'CPU'"))
    return make(input._data.indices)


def _values(input):
    if not is_sparse(input):
        raise NotImplementedError(not_on_sparse("_values").args[0].replace("'SparseCPU'", "'CPU'"))
    return make(input._data.values)


def _nnz(input):
    raise NotImplementedError(not_on_sparse("_nnz").args[0].replace("'SparseCPU'", "'CPU'"))


class CloneBackward0(Node):
    __slots__ = ()

    def backward(self, ns, g):
        return (g,)


def clone(input, memory_format=None):
    c = input._data
    return out(COO(c.indices.copy(), c.values.copy(), c.shape, c.coalesced), CloneBackward0, (input,))[0]


class ToCopyBackward0(Node):
    __slots__ = ("np_dtype",)

    def backward(self, ns, g):
        return grads_out(ns, grad_in(ns, g).astype(self.np_dtype))


def to_dtype(input, name):
    return _to(input, getattr(_dtype, name))


def _to(input, dt):
    c = input._data
    if c.values.dtype == dt.np:
        return input
    res, n = out(COO(c.indices, c.values.astype(dt.np), c.shape, c.coalesced), ToCopyBackward0,
                 (input,) if dt.np.kind in "fV" else ())
    if n is not None:
        n.np_dtype = c.values.dtype
    return res


def to(input, *args, **kwargs):
    dt = kwargs.get("dtype")
    for a in args:
        if isinstance(a, _dtype.dtype):
            dt = a
        elif isinstance(a, Tensor):
            dt = a.dtype
    return input if dt is None else _to(input, dt)


def type_(input, dtype=None):
    if dtype is None:
        return "torch.sparse." + {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
                                  "float16": "Half", "bool": "Bool", "int16": "Short", "int8": "Char",
                                  "uint8": "Byte"}.get(input._data.dtype.name, "Float") + "Tensor"
    return _to(input, _dtype.to_dtype(dtype))


# -- shape -----------------------------------------------------------------------------------------------
class TBackward0(Node):
    __slots__ = ()

    def backward(self, ns, g):
        g = grad_in(ns, g)
        if g.__class__ is COO:
            return grads_out(ns, COO(g.indices[::-1].copy(), g.values, g.shape[::-1], False))
        return grads_out(ns, g.T)


def t(input):
    c = input._data
    if c.sparse_dim > 2 or c.dense_dim:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got {c.sparse_dim} "
                           f"sparse and {c.dense_dim} dense dimensions")
    return out(COO(c.indices[::-1].copy(), c.values, c.shape[::-1], c.ndim < 2 and c.coalesced), TBackward0,
               (input,))[0]


class SelectBackward0(Node):
    """A dense gradient goes to its slice of a dense zero gradient; torch has no select_backward for a sparse
    gradient: backward raises its error."""
    __slots__ = ("dim", "index", "in_shape")

    def backward(self, ns, g):
        g = grad_in(ns, g)
        if isinstance(g, COO):
            raise not_on_sparse("select_backward")
        g = as_array(g)         # (a NumPy scalar where the selected slice is 0-d)
        full = np.zeros(self.in_shape, dtype=g.dtype, like=g)
        full[(slice(None),) * self.dim + (self.index,)] = g
        return grads_out(ns, full)


def select(input, dim, index):
    c = input._data
    d = dim + c.ndim if dim < 0 else dim
    if not 0 <= d < c.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-c.ndim}, {c.ndim - 1}], but got "
                         f"{dim})")
    size = c.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(c.shape)} at dimension "
                         f"{dim}")
    i = index + size if index < 0 else index
    shape = c.shape[:d] + c.shape[d + 1:]
    if d < c.sparse_dim and c.sparse_dim == 1:     # no sparse dim left: a dense result (the matches summed)
        keep = c.indices[0] == i
        y = c.values[keep].sum(0) if keep.any() else np.zeros(shape, c.values.dtype, like=c.values)
        if grad.enabled and input._rg:
            n = SelectBackward0((edge(input),))
            n.dim, n.index, n.in_shape = d, i, c.shape
            return make(y, True, n)
        return make(y)
    if d < c.sparse_dim:
        keep = c.indices[d] == i
        res = COO(np.delete(c.indices[:, keep], d, axis=0), c.values[keep], shape,
                  c.coalesced or int(keep.sum()) <= 1)
    else:
        res = COO(c.indices, np.take(c.values, i, axis=d - c.sparse_dim + 1), shape, c.coalesced)
    r, n = out(res, SelectBackward0, (input,))
    if n is not None:
        n.dim, n.index, n.in_shape = d, i, c.shape
    return r


def getitem(input, index):
    if isinstance(index, (int, np.integer)):
        return select(input, 0, int(index))
    if isinstance(index, tuple) and index and all(isinstance(k, (int, np.integer)) or k == slice(None)
                                                  for k in index):
        res, dim = input, 0
        for k in index:
            if k == slice(None):
                dim += 1
            else:
                res = select(res, dim, int(k))
        return res
    raise not_on_sparse("as_strided")


# -- elementwise ---------------------------------------------------------------------------------------------
class MulBackward0(Node):
    __slots__ = ("other", "coo", "oshape")

    def backward(self, ns, g):
        g = grad_in(ns, g)
        o, c = self.other, self.coo
        gs = go = None
        if self.next_functions[0][0] is not None:
            if o.__class__ is not np.ndarray or not o.ndim or g.__class__ is not COO:
                gs = g * o
            else:       # a sparse gradient times the dense factor, on the gradient's pattern
                gs = COO(g.indices, g.values * gather(o, g.indices, g.shape), g.shape, g.coalesced)
        if len(self.next_functions) > 1 and self.next_functions[1][0] is not None:
            prod = COO(c.indices, gather(g, c.indices, c.shape[:c.sparse_dim]) * c.values, c.shape, c.coalesced)
            go = _to_factor_shape(prod, self.oshape)
        return grads_out(ns, gs, go) if go is not None else grads_out(ns, gs)


def _to_factor_shape(prod, shape):
    """The dense factor's gradient: sparse, as torch's (g * self), summed over its broadcast dims (kept);
    torch cannot view a sparse gradient down to fewer dims, nor is a 0-d factor's gradient sparse."""
    if not shape:
        return as_array(prod.values.sum(), prod.values.dtype)
    if len(shape) != prod.ndim:
        raise not_on_sparse("view")
    if tuple(shape) == prod.shape:
        return prod
    if prod.dense_dim:
        return sum_to(_dense(prod), shape)
    idx = prod.indices.copy()
    idx[[d for d, n in enumerate(shape) if n == 1 and prod.shape[d] != 1]] = 0
    return _coalesce(COO(idx, prod.values, shape))


def mul(input, other):
    c = input._data
    if isinstance(other, Tensor):
        if is_sparse(other):
            return SPARSE_MUL[0](input, other)     # sparse_matmul.sparse_mul
        o = other._data
        if o.ndim == 0:
            vals, ov = c.values * o, o
        else:
            ov = np.broadcast_to(o, c.shape)
            vals = c.values * gather(ov, c.indices, c.shape)
        dt = _dtype.promote_types(input.dtype, other.dtype).np
        res, n = out(COO(c.indices, vals.astype(dt, copy=False), c.shape, c.coalesced), MulBackward0,
                     (input, other))
        if n is not None:
            n.other, n.coo, n.oshape = ov, c, o.shape
        return res
    dt = _dtype.result_type(input, other).np
    res, n = out(COO(c.indices, (c.values * other).astype(dt, copy=False), c.shape, c.coalesced), MulBackward0,
                 (input,))
    if n is not None:
        n.other, n.coo = other, c
    return res


class DivBackward0(Node):
    __slots__ = ("other", "coo")

    def backward(self, ns, g):
        g, o, c = grad_in(ns, g), self.other, self.coo
        gs = g / o if self.next_functions[0][0] is not None else None
        if len(self.next_functions) < 2 or self.next_functions[1][0] is None:
            return grads_out(ns, gs)
        go = -(gather(g, c.indices, c.shape[:c.sparse_dim]) * c.values).sum() / (o * o)     # a 0-d divisor
        return grads_out(ns, gs, as_array(go, o.dtype))


def div(input, other, *, rounding_mode=None):
    divisor = other if isinstance(other, Tensor) else None
    if divisor is not None:
        if other._data.ndim:
            raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                               f"{list(other._data.shape)} for divisor)")
        other = other._data
    c = input._data
    vals = c.values / other if c.values.dtype.kind in "fV" else (c.values / other).astype(np.float32)
    if rounding_mode == "floor":
        vals = np.floor(vals)
    elif rounding_mode == "trunc":
        vals = np.trunc(vals)
    res, n = out(COO(c.indices, vals, c.shape, c.coalesced), DivBackward0,
                 (input,) if divisor is None or rounding_mode else (input, divisor))
    if n is not None:
        n.other, n.coo = other, c
    return res


class NegBackward0(Node):
    __slots__ = ()

    def backward(self, ns, g):
        return grads_out(ns, -grad_in(ns, g))


def neg(input):
    c = input._data
    return out(COO(c.indices, -c.values, c.shape, c.coalesced), NegBackward0, (input,))[0]


class AddBackward0(Node):
    __slots__ = ("alpha", "shapes")

    def backward(self, ns, g):
        g = grad_in(ns, g)
        ga = g if self.shapes[0] is None else sum_to(_dense(g) if g.__class__ is COO else g, self.shapes[0])
        gb = g if self.alpha == 1 else g * self.alpha
        return grads_out(ns, ga, gb)


def add(input, other, *, alpha=1):
    """sparse + sparse (its indices concatenated; coalesced when both are)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"add(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    if not is_sparse(other):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    a, b = input._data, other._data
    if a.shape != b.shape:
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but {list(a.shape)} != "
                           f"{list(b.shape)}")
    res, n = out(_coo_add(a, b, alpha), AddBackward0, (input, other))
    if n is not None:
        n.alpha, n.shapes = alpha, (None, None)
    return res


class SubBackward0(AddBackward0):
    __slots__ = ()


def dense_add_sparse(input, other, alpha=1):
    """dense + sparse (dense - sparse: alpha=-1, SubBackward0): a dense result."""
    if not isinstance(input, Tensor):
        input = make(np.asarray(input, dtype=other._data.dtype))
    a = input._data
    if a.shape != other._data.shape:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size {list(a.shape)} "
                           f"while other has size {list(other._data.shape)} (FYI: dense-sparse addition does not "
                           "currently support broadcasting)")
    b = _dense(other._data)
    y = a + (b if alpha == 1 else b * alpha)
    dt = _dtype.promote_types(input.dtype, other.dtype).np
    y = y.astype(dt, copy=False)
    if grad.enabled and (input._rg or other._rg):
        n = (SubBackward0 if alpha == -1 else AddBackward0)((edge(input) if input._rg else NO_EDGE,
                                                             edge(other) if other._rg else NO_EDGE))
        n.alpha, n.shapes = alpha, (a.shape, None)
        return make(y, True, n)
    return make(y)


def _sub(input, other, *, alpha=1):
    return add(input, other, alpha=-alpha)


register(t=t, clone=clone, mul=mul, multiply=mul, div=div, divide=div, true_divide=div, neg=neg, negative=neg, add=add,
         sub=_sub, subtract=_sub, select=select, zeros_like=zeros_like,)
