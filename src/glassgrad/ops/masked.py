"""Writes and reads by mask or flat index: masked_*, take/put, take_along_dim, index_put, x[i] = v,
Tensor.where (shared helpers and gather: ops/gather_scatter.py).

ops: masked_fill masked_fill_ masked_select masked_scatter masked_scatter_ take take_along_dim put put_
     index_put index_put_ setitem where (Tensor.where)
"""
import numpy as np

from .conversion import c_result
from .. import _args, _dtype
from .._tensor import _wrap_dim
from ._core import Tensor, make, as_tensor_arg, broadcast_error, as_array
from ..autograd.graph import Node, guard
from .indexing import getitem, _to_np_index, _is_basic, _check_adv, normalize_index, _expand_ellipsis, _check_masks
from .gather_scatter import _node, _needs, _inplace, gather
from .arithmetic import copy_
from .conversion import to_dtype
from .shape import cat
from .ternary import where as _where
from . import views as V

__all__ = ["masked_fill", "masked_select", "masked_scatter", "take", "take_along_dim", "index_put", "index_put_",
           "put"]


# -- masked ops -------------------------------------------------------------------------------
def _mask_arg(x, mask, name):
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        if name == "masked_select":
            raise RuntimeError("masked_select: expected BoolTensor for mask")
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{_dtype._FROM_NP[m.dtype].name if hasattr(_dtype._FROM_NP[m.dtype], 'name') else m.dtype}")
    return m


def _full_mask(x, mask, name):
    """The boolean mask broadcast to x's shape (torch's dtype and broadcast errors otherwise)."""
    m = _mask_arg(x, mask, name)
    try:
        return np.broadcast_to(m, x._data.shape)
    except ValueError:
        raise broadcast_error(m.shape, x._data.shape) from None


class MaskedFillBackward0(Node):    # dx = gy where not mask
    __slots__ = ("mask",)

    def backward(self, ns, g):
        return (ns.mask(ns.const(~self.mask, g), g),)


class MaskedFillBackward1(Node):    # dvalue = sum of gy where mask
    __slots__ = ("mask",)

    def backward(self, ns, g):
        return (ns.mask(ns.const(~self.mask, g), g), ns.sum(ns.mask(ns.const(self.mask, g), g), None))


def masked_fill(input, mask, value):
    a = input._data
    mb = _full_mask(input, mask, "masked_fill_")
    vt = isinstance(value, Tensor)
    if vt and value._data.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._data.ndim} dimension(s).")
    v = value._data if vt else _args.number_arg(value, "masked_fill", "value", 3, complex_ok=True)
    v = as_array(v).astype(a.dtype)
    y = np.where(mb, v if v.__class__ is a.__class__ else v[()], a)     # (a number beside device data: a scalar)
    y = c_result(y, a)                  # torch: a contiguous result
    if _needs(input, value if vt else None):
        if vt:
            return make(y, True, _node(MaskedFillBackward1, (input, value), guards=(mask,), mask=mb))
        return make(y, True, _node(MaskedFillBackward0, (input,), guards=(mask,), mask=mb))
    return make(y)


def masked_fill_(x, mask, value):
    return _inplace(masked_fill, x, mask, value)


class MaskedSelectBackward0(Node):  # dx = sum_to(zeros with gy at mask)
    __slots__ = ("mask", "shape")

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            z = make(np.zeros(self.mask.shape, g._data.dtype, like=g._data))
            full = masked_scatter(z, make(self.mask), g)
        else:
            full = np.zeros(self.mask.shape, g.dtype, like=g)
            full[self.mask] = g
        return (ns.sum_to(full, self.shape),)


def masked_select(input, mask, *, out=None):
    m = _mask_arg(input, mask, "masked_select")
    a = input._data
    try:
        shape = np.broadcast_shapes(a.shape, m.shape)
    except ValueError:
        raise broadcast_error(a.shape, m.shape) from None
    mb = np.broadcast_to(m, shape)
    y = np.broadcast_to(a, shape)[mb]
    if _needs(input):
        return make(y, True, _node(MaskedSelectBackward0, (input,), guards=(mask,), mask=np.ascontiguousarray(mb, like=mb),
                                   shape=a.shape))
    return make(y)


class MaskedScatterBackward0(Node):  # dx = gy where not mask; dsrc = gy[mask] zero-padded to src's shape
    __slots__ = ("mask", "sshape")

    def backward(self, ns, g):
        gx = ns.mask(ns.const(~self.mask, g), g)
        n = int(np.prod(self.sshape))
        if ns.is_tensor_mode:
            sel = masked_select(g, make(self.mask))
            k = sel._data.shape[0]
            flat = cat([sel, make(np.zeros(n - k, g._data.dtype, like=g._data))]) if n > k else sel
        else:
            sel = g[self.mask]
            flat = np.zeros(n, g.dtype, like=g)
            flat[:sel.shape[0]] = sel
        return (gx, ns.reshape(flat, self.sshape))


def masked_scatter(input, mask, source):
    a = input._data
    mb = _full_mask(input, mask, "masked_scatter_")
    k = int(mb.sum())
    s = source._data.reshape(-1)
    if s.shape[0] < k:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    y = a.copy()
    y[mb] = s[:k].astype(a.dtype)
    if _needs(input, source):
        return make(y, True, _node(MaskedScatterBackward0, (input, source), guards=(mask,), mask=np.ascontiguousarray(mb, like=mb),
                                   sshape=source._data.shape))
    return make(y)


def masked_scatter_(x, mask, source):
    return _inplace(masked_scatter, x, mask, source)


# -- take / put / take_along_dim ------------------------------------------------------------------
def _flat_index(x, index, name):
    idx = _args.tensor_arg(index, name, "index", 2)._data
    if idx.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {_dtype._FROM_NP[idx.dtype]}")
    n = x._data.size
    if idx.size:
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            v = int(idx[bad].reshape(-1)[0])
            raise IndexError(f"out of range: tried to access index {v} on a tensor of {n} elements.")
    return np.where(idx < 0, idx + n, idx)


class TakeBackward0(Node):          # y = x.take(i); dx = zeros.put_(i, gy, accumulate=True)
    __slots__ = ("index", "shape")

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            return (put(make(np.zeros(self.shape, g._data.dtype, like=g._data)), make(self.index), g, True),)
        out = np.zeros(int(np.prod(self.shape)), g.dtype, like=g)
        np.add.at(out, self.index.reshape(-1), g.reshape(-1))
        return (out.reshape(self.shape),)


def take(input, index):
    idx = _flat_index(input, index, "take")
    y = np.ascontiguousarray(input._data, like=input._data).reshape(-1)[idx]
    if _needs(input):
        return make(y, True, _node(TakeBackward0, (input,), guards=(index,), index=idx, shape=input._data.shape))
    return make(y)


class PutBackward0(Node):           # y = x.put(i, s, acc); dx = gy (acc) or gy.put(i, 0); ds = gy.take(i)
    __slots__ = ("index", "accumulate", "sshape")

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            gx = g if self.accumulate else put(g, make(self.index),
                                                make(np.zeros(self.index.shape, g._data.dtype, like=g._data)))
            return (gx, ns.reshape(take(g, make(self.index)), self.sshape))
        gx = g
        if not self.accumulate:
            gx = g.copy()
            gx.reshape(-1)[self.index.reshape(-1)] = 0
        return (gx, g.reshape(-1)[self.index].reshape(self.sshape))


def put(input, index, source, accumulate=False):
    idx = _flat_index(input, index, "put")
    _args.tensor_arg(source, "put", "source", 3)
    if idx.size != source._data.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source._data.size}, index.numel() = {idx.size}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {input.dtype} and source.dtype = {source.dtype}")
    a = np.array(input._data, order="C", like=input._data)
    f = a.reshape(-1)
    if accumulate:
        np.add.at(f, idx.reshape(-1), source._data.reshape(-1))
    else:
        f[idx.reshape(-1)] = source._data.reshape(-1)
    if _needs(input, source):
        return make(a, True, _node(PutBackward0, (input, source), guards=(index,), index=idx, accumulate=accumulate,
                                   sshape=source._data.shape))
    return make(a)


def put_(x, index, source, accumulate=False):
    return _inplace(put, x, index, source, accumulate)


def take_along_dim(input, indices, dim=None, *, out=None):
    if indices._data.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be int64 but got "
                           f"{indices.dtype.__repr__()[6:]} instead")
    if dim is None:
        return gather(V.reshape(input, (-1,)), 0, V.reshape(indices, (-1,)))
    nd = input._data.ndim
    if nd != indices._data.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {nd} dimensions for input, and {indices._data.ndim} dimensions "
                           f"for indices")
    d = _wrap_dim(dim, nd)
    xs, is_ = list(input._data.shape), list(indices._data.shape)
    xs[d] = is_[d] = 1
    try:
        b = list(np.broadcast_shapes(tuple(xs), tuple(is_)))
    except ValueError:
        raise broadcast_error(tuple(xs), tuple(is_)) from None
    bx, bi = list(b), list(b)
    bx[d] = input._data.shape[d]
    bi[d] = indices._data.shape[d]
    x2 = input if tuple(bx) == input._data.shape else V.expand(input, bx)
    # (torch gathers with a broadcast copy of the indices, even at their own shape: rewriting the caller's
    # indices before backward is not its version error here, unlike dim=None's flattened view)
    i2 = make(indices._data.copy()) if tuple(bi) == indices._data.shape else make(np.ascontiguousarray(
        np.broadcast_to(indices._data, bi), like=indices._data))
    return gather(x2, d, i2)


# -- index_put / setitem ------------------------------------------------------------------------
class IndexPutBackward0(Node):      # dx = gy with zeros at idx (or gy if accumulate); dv = sum_to(gy[idx])
    __slots__ = ("index", "accumulate", "vshape")

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            zero = make(np.zeros((), g._data.dtype, like=g._data))
            gx = g if self.accumulate else _index_put_np(g, self.index, zero, False)
            gv = getitem(g, self.index)
        else:
            gx = g
            if not self.accumulate:
                gx = g.copy()
                gx[self.index] = 0
            gv = g[self.index]
        if self.vshape is None:
            return (gx, None)
        return (gx, ns.sum_to(gv, self.vshape))


def _tensors(items):
    return [t for t in items if isinstance(t, Tensor)]


def _index_put_np(x, npidx, values, accumulate, index_tensors=()):
    a = x._data.copy()
    target_shape = _check_adv(x, npidx).shape
    v = values._data
    try:
        vb = np.broadcast_to(v, target_shape)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(target_shape)}") from None
    if accumulate:
        np.add.at(a, npidx, vb)
    else:
        a[npidx] = vb
    if _needs(x, values):
        return make(a, True, guard(_node(IndexPutBackward0, (x, values), index=npidx, accumulate=accumulate,
                                         vshape=v.shape if values._rg else None), *index_tensors))
    return make(a)


def _scalar_name(t):
    return _dtype._FROM_NP[t._data.dtype]._legacy.replace("Tensor", "")


def index_put(input, indices, values, accumulate=False):
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put(): argument 'indices' must be tuple of Tensors")
    if len(indices) > input._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input._data.ndim} (got {len(indices)})")
    if values._data.dtype != input._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_scalar_name(input)} for the destination and {_scalar_name(values)} for the source.")
    npidx = _to_np_index(tuple(indices), input)
    return _index_put_np(input, npidx, values, accumulate, _tensors(indices))


def index_put_(x, indices, values, accumulate=False):
    return _inplace(index_put, x, indices, values, accumulate)


def setitem(x, index, value):
    if isinstance(index, Tensor) and index._data.dtype == np.uint8:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
    if not isinstance(value, (Tensor, int, float, complex, np.generic)):
        raise TypeError(f"can't assign a {_args.type_name(value)} to a torch.{x.dtype._legacy}")
    idx = normalize_index(index, x._data.ndim)
    index = idx if isinstance(index, tuple) or len(idx) != 1 else idx[0]
    if all(_is_basic(it) for it in idx):
        if isinstance(value, Tensor) and value._data.__class__ is not x._data.__class__:
            value = value.to(x.device)      # torch's copy_ crosses devices (a CPU value into a CUDA tensor)
        copy_(getitem(x, index), value)
        return
    if not isinstance(value, Tensor):
        value = as_tensor_arg(value, x)
    if value._data.dtype != x._data.dtype:
        value = to_dtype(value, x.dtype)
    items = _expand_ellipsis(list(idx), x._data.ndim)
    basic, rest, viewing = [], [], False
    for it in items:
        if it is None:
            basic.append(None)
            rest.append(slice(None))
            viewing = True
        elif isinstance(it, slice):
            basic.append(it)
            rest.append(slice(None))
            viewing = viewing or it != slice(None)
        elif _is_basic(it):
            basic.append(it)
            viewing = True
        else:
            t = it if isinstance(it, Tensor) else None
            k = t._data.ndim if t is not None and t._data.dtype in (np.bool_, np.uint8) else 1
            basic.extend([slice(None)] * k)
            rest.append(it)
    target = getitem(x, tuple(basic)) if viewing else x
    npidx = _to_np_index(tuple(rest), target)
    _check_masks(npidx, target._data.shape)
    _inplace(_index_put_np, target, npidx, value, False, _tensors(rest))


def where(input, condition, other):
    return _where(condition, input, other)
