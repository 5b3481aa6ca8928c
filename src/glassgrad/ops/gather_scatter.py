"""Gather and scatter: values picked or written by index tensors along a dimension.

ops: gather scatter scatter_ scatter_add scatter_add_ scatter_reduce index_select index_add index_add_
     index_copy index_copy_ index_fill index_fill_

Backward formulas are written once; the few helpers below (_gather, _scatter_add, ...) run the
NumPy form on arrays and the differentiable glassgrad op on Tensors (create_graph).
"""
import warnings

import numpy as np

from .. import _args, _dtype, backend
from .._tensor import _wrap_dim
from ._core import Tensor, make, edge, grad, as_tensor_arg, save_in, save_out, _inplace as ip
from ..autograd.graph import guard, Node
from .indexing import index_put_zeros
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add", "index_copy",
           "index_fill"]


# -- helpers ------------------------------------------------------------------------------
def _ix(idx, dim):
    if idx.__class__ is np.ndarray:
        grids = list(np.indices(idx.shape, sparse=True))
    else:                               # a device index: the grids beside it (np.indices makes host arrays)
        n = idx.ndim
        grids = [np.arange(s, like=idx).reshape((1,) * k + (s,) + (1,) * (n - k - 1))
                 for k, s in enumerate(idx.shape)]
    grids[dim] = idx
    return tuple(grids)


def _part(src, shape):
    return src[tuple(slice(0, s) for s in shape)]


def _gather(ns, g, dim, idx):
    if ns.is_tensor_mode:
        return gather(g, dim, make(idx))
    return g[_ix(idx, dim)]


def _scatter_add(ns, shape, dim, idx, src):
    if ns.is_tensor_mode:
        return scatter_add(make(np.zeros(shape, src._data.dtype, like=src._data)), dim, make(idx), src)
    out = np.zeros(shape, src.dtype, like=src)
    np.add.at(out, _ix(idx, dim), _part(src, idx.shape))
    return out


def _scatter_fill(ns, g, dim, idx, v):
    if ns.is_tensor_mode:
        return scatter(g, dim, make(idx), value=v)
    out = g.copy()
    out[_ix(idx, dim)] = v
    return out


def _along(dim, idx):
    return (slice(None),) * dim + (idx,)


def _index_select(ns, g, dim, idx):
    if ns.is_tensor_mode:
        return index_select(g, dim, make(idx))
    return np.take(g, idx, axis=dim)


def _index_add_zeros(ns, shape, dim, idx, g):
    if ns.is_tensor_mode:
        return index_add(make(np.zeros(shape, g._data.dtype, like=g._data)), dim, make(idx), g)
    out = np.zeros(shape, g.dtype, like=g)
    if not _add_rows_by_rank(np.moveaxis(out, dim, 0), idx, np.moveaxis(g, dim, 0)):
        np.add.at(out, _along(dim, idx), g)
    return out


def _add_rows_by_rank(out, idx, g):
    """out[idx[k]] += g[k] for a 1-d idx, in the order of k like np.add.at (so bit for bit the same), as one
    fancy `+=` per occurrence rank: the k-th occurrences of distinct values never collide.  ~5-10x faster
    than np.add.at on rows of 16 or more elements; False (nothing done) where it would not pay."""
    n = idx.size
    if idx.ndim != 1 or n == 0 or g.size < 4096 or g.size // n < 16 or idx.min() < 0:
        return False
    counts = np.bincount(idx, minlength=out.shape[0])
    most = int(counts.max())
    if most == 1:
        out[idx] = g
        return True
    if most > 64:
        return False
    order = np.argsort(idx, kind="stable")
    rank = np.empty(n, np.int64, like=idx)
    rank[order] = np.arange(n, like=idx) - (np.cumsum(counts) - counts)[idx[order]]
    for r in range(most):
        k = np.flatnonzero(rank == r)
        out[idx[k]] += g[k]
    return True


def _index_fill0(ns, g, dim, idx):
    if ns.is_tensor_mode:
        return index_fill(g, dim, make(idx), 0)
    out = g.copy()
    out[_along(dim, idx)] = 0
    return out


def _node(cls, inputs, guards=(), **attrs):
    """A `cls` node over `inputs`, with `attrs` set; `guards`: the index / mask tensors its backward reads, which
    must not change before it runs (graph.guard)."""
    n = cls(tuple(edge(t) if isinstance(t, Tensor) else (None, 0) for t in inputs))
    if guards:
        guard(n, *guards)
    for k, v in attrs.items():
        setattr(n, k, v)
    return n


def _needs(*ts):
    return grad.enabled and any(isinstance(t, Tensor) and t._rg for t in ts)


def _long_index(index, name):
    _args.tensor_arg(index, name, "index", 3)
    if index._data.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    return index._data.astype(np.int64)


def _inplace(fn, x, *args, **kw):
    return ip(fn, x, *args, **kw)


def _dim_checks(x, dim, idx, src, name):
    nd = max(x._data.ndim, 1)
    d = _wrap_dim(dim, x._data.ndim)
    if idx.ndim != x._data.ndim and not (idx.ndim <= 1 and x._data.ndim <= 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {name} tensor")
    xs = x._data.shape if x._data.ndim else (1,)
    ishape = idx.shape if idx.ndim else (1,)
    ss = None if src is None else (src._data.shape if src._data.ndim else (1,))
    for k in range(nd):
        if k != d and ishape[k] > xs[k] or ss is not None and k < len(ss) and ishape[k] > ss[k]:
            if ss is not None:
                raise RuntimeError(f"Expected index {list(ishape)} to be no larger than self {list(xs)} apart from "
                                   f"dimension {d} and to be no larger size than src {list(ss)}")
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(ishape)} to be no "
                               f"larger than self {list(xs)} apart from dimension {d}")
    if idx.size:
        bad = (idx < 0) | (idx >= xs[d])       # torch: no negative indices here
        if bad.any():
            v = int(idx[bad].reshape(-1)[0])
            raise RuntimeError(f"index {v} is out of bounds for dimension {d} with size {xs[d]}")
    return d


def _as1(a):
    return a.reshape(1) if a.ndim == 0 else a


# -- gather / scatter ---------------------------------------------------------------------------
class GatherBackward0(Node):        # y = x.gather(d, i); dx = zeros.scatter_add(d, i, gy)
    __slots__ = ("dim", "index", "shape", "oshape")

    def backward(self, ns, g):
        r = _scatter_add(ns, self.shape, self.dim, self.index, ns.reshape(g, self.index.shape))
        return (ns.reshape(r, self.oshape),)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    idx = _long_index(index, "gather")
    d = _dim_checks(input, dim, idx, None, "input")
    a = _as1(input._data)
    i1 = _as1(idx)
    y = a[_ix(i1, d)].reshape(idx.shape)
    if _needs(input):
        return make(y, True, _node(GatherBackward0, (input,), guards=(index,), dim=d, index=i1, shape=a.shape,
                                   oshape=input._data.shape))
    return make(y)


class ScatterBackward0(Node):       # y = x.scatter(d, i, src); dx = gy.scatter(d, i, 0); dsrc = gy.gather(d, i)
    __slots__ = ("dim", "index", "xshape", "sshape")

    def backward(self, ns, g):
        g = ns.reshape(g, self.xshape)
        gx = _scatter_fill(ns, g, self.dim, self.index, 0)
        gs = None
        if self.sshape is not None:
            gs = _pad_to(ns, _gather(ns, g, self.dim, self.index), self.sshape)
        return (gx, gs)


class ScatterBackward1(ScatterBackward0):
    __slots__ = ()


class _ScatterNotImplemented(Node):
    __slots__ = ()

    def backward(self, ns, g):
        raise RuntimeError("the derivative for 'scatter' with reduce is not implemented.")


_ScatterNotImplemented.__name__ = "torch::autograd::NotImplemented"


def _pad_to(ns, part, shape):
    """gradient for src of shape `shape` when only part (index-shaped) was used: zero-pad."""
    shape = tuple(shape) if len(shape) else (1,)
    if tuple(part.shape) == shape:
        return part
    if ns.is_tensor_mode:
        sl = tuple(np.arange(s, like=part._data).reshape((-1,) + (1,) * (len(part.shape) - k - 1))
                   for k, s in enumerate(part.shape))
        return index_put_zeros(shape, sl, part)
    out = np.zeros(shape, part.dtype, like=part)
    out[tuple(slice(0, s) for s in part.shape)] = part
    return out


def _scatter_impl(input, dim, index, src, value, reduce):
    idx = _long_index(index, "scatter")
    if src is not None and src._data.dtype != input._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if src is None:
        value = _args.number_arg(value, "scatter", "value", 4)
    d = _dim_checks(input, dim, idx, src, "self")
    a = _as1(input._data).copy()
    i1 = _as1(idx)
    ix = _ix(i1, d)
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if src is not None:
        if not isinstance(src, Tensor):
            src = as_tensor_arg(src, input)
        if reduce is not None:
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in "
                          "a future PyTorch release. Use torch.scatter_reduce instead for more reduction options. "
                          "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                          "TensorAdvancedIndexing.cpp:225.)", UserWarning, stacklevel=4)
        if src._data.dtype != a.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        s = _as1(src._data)
        vals = _part(s, i1.shape)
    else:
        vals = np.asarray(value).astype(a.dtype) if not isinstance(value, Tensor) else value._data.astype(a.dtype)
        if a.__class__ is not np.ndarray and vals.__class__ is np.ndarray:
            vals = vals[()]                 # a number: a scalar beside device data (CuPy takes no host array)
    if reduce == "add":
        np.add.at(a, ix, vals)
    elif reduce == "multiply":
        backend.ufunc_at(np.multiply, a, ix, vals)
    else:
        a[ix] = vals
    a = a.reshape(input._data.shape)
    if _needs(input, src):
        if reduce is not None:
            return make(a, True, _node(_ScatterNotImplemented, (input, src) if src is not None else (input,)))
        if src is not None:
            n = _node(ScatterBackward0, (input, src), guards=(index,), dim=d, index=i1, xshape=_as1(input._data).shape,
                      sshape=_as1(src._data).shape)
            return make(a, True, n)
        n = _node(ScatterBackward1, (input,), guards=(index,), dim=d, index=i1, xshape=_as1(input._data).shape, sshape=None)
        return make(a, True, n)
    return make(a)


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    if src is not None and not isinstance(src, Tensor):
        value, src = src, None
    return _scatter_impl(input, dim, index, src, value, reduce)


def scatter_(x, dim, index, src=None, *, value=None, reduce=None):
    return _inplace(scatter, x, dim, index, src, value=value, reduce=reduce)


class ScatterAddBackward0(Node):    # y = x.scatter_add(d, i, src); dx = gy; dsrc = gy.gather(d, i)
    __slots__ = ("dim", "index", "xshape", "sshape")

    def backward(self, ns, g):
        g1 = ns.reshape(g, self.xshape)
        return (g, _pad_to(ns, _gather(ns, g1, self.dim, self.index), self.sshape))


def _scatter_src(input, src, name):
    _args.tensor_arg(src, name, "src", 4)
    if src._data.dtype != input._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    return src


def scatter_add(input, dim, index, src):
    idx = _long_index(index, "scatter_add")
    _scatter_src(input, src, "scatter_add")
    d = _dim_checks(input, dim, idx, src, "self")
    a = _as1(input._data).copy()
    i1 = _as1(idx)
    s = _as1(src._data)
    np.add.at(a, _ix(i1, d), _part(s, i1.shape).astype(a.dtype))
    a = a.reshape(input._data.shape)
    if _needs(input, src):
        n = _node(ScatterAddBackward0, (input, src), guards=(index,), dim=d, index=i1, xshape=_as1(input._data).shape, sshape=s.shape)
        return make(a, True, n)
    return make(a)


def scatter_add_(x, dim, index, src):
    return _inplace(scatter_add, x, dim, index, src)


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


class ScatterReduceBackward0(Node):
    __slots__ = ("dim", "index", "reduce", "include_self", "consts")
    _saved_names = ("self", "src", "result")

    def backward(self, ns, g):
        d, idx, red = self.dim, self.index, self.reduce
        x, src, res = ns.unpack(self)
        hit, cnt, self_eq, src_eq = self.consts[:4]
        if red == "sum":
            gx = g if self.include_self else ns.mask(ns.const(~hit, g), g)
            gs = _gather(ns, g, d, idx)
        elif red == "mean":
            gc = g / ns.const(cnt.astype(self.consts[4]), g)
            gx = ns.where(ns.const(hit, g), gc, g) if self.include_self else ns.mask(ns.const(~hit, g), g)
            gs = _gather(ns, gc, d, idx)
        elif red == "prod":
            gr = g * res
            gx = ns.where(ns.const(hit, g), gr / x, g) if self.include_self else ns.mask(ns.const(~hit, g), g)
            gs = _gather(ns, gr, d, idx) / src
        else:
            gc = g / ns.const(cnt.astype(self.consts[4]), g)
            gx = ns.where(ns.const(hit, g), ns.mask(ns.const(self_eq, g), gc), g)
            gs = ns.mask(ns.const(src_eq, g), _gather(ns, gc, d, idx))
        return (gx, _pad_to(ns, gs, self.consts[5]))


def scatter_reduce_(x, dim, index, src, reduce, *, include_self=True):
    return _inplace(scatter_reduce, x, dim, index, src, reduce, include_self=include_self)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    idx = _long_index(index, "scatter_reduce")
    _scatter_src(input, src, "scatter_reduce")
    d = _dim_checks(input, dim, idx, src, "self")
    x = _as1(input._data)
    i1 = _as1(idx)
    s = _part(_as1(src._data), i1.shape)
    ix = _ix(i1, d)
    hit = np.zeros(x.shape, bool, like=x)
    hit[ix] = True
    cnt = np.zeros(x.shape, np.int64, like=x)
    np.add.at(cnt, ix, 1)
    a = x.copy()
    red_init = {"sum": 0, "prod": 1, "mean": 0, "amax": -np.inf, "amin": np.inf}[reduce]
    if not include_self:
        a[hit] = red_init if a.dtype.kind in "fV" or abs(red_init) != np.inf else \
            (np.iinfo(a.dtype).min if red_init < 0 else np.iinfo(a.dtype).max)
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    backend.ufunc_at(ufunc, a, ix, s)
    if reduce == "mean":
        c = cnt + (1 if include_self else 0)
        c = np.where(c == 0, 1, c)
        a = np.where(hit, a / c, a) if a.dtype.kind in "fV" else np.where(hit, a // c, a)
        cnt = c
    self_eq = src_eq = None
    if reduce in ("amax", "amin"):
        self_eq = (x == a) & include_self
        src_eq = s == a[ix]
        c = self_eq.astype(np.int64)
        np.add.at(c, ix, src_eq.astype(np.int64))
        cnt = np.where(c == 0, 1, c)
        self_eq = self_eq | ~hit
    y = a.astype(x.dtype).reshape(input._data.shape)
    if _needs(input, src):
        n = _node(ScatterReduceBackward0, (input, src), guards=(index,), dim=d, index=i1, reduce=reduce, include_self=include_self,
                  consts=(hit, cnt, self_eq, src_eq, x.dtype, _as1(src._data).shape))
        out = make(y, True, n)
        n._saved = (save_in(input), save_in(src), save_out(out))
        return out
    return make(y)


# -- index_select / index_add / index_copy / index_fill -----------------------------------------
# torch checks each op's index in its own words: (dtype error type and text, whether negative indices count
# from the end, the error type for an index out of range)
_INDEX_RULES = {
    "index_select": (RuntimeError, "index_select(): Expected dtype int32 or int64 for index", False, IndexError),
    "index_add_": (RuntimeError, "index_add_(): Expected dtype int32/int64 for index but got: {}", False,
                   RuntimeError),
    "index_copy_": (RuntimeError, "index_copy_(): Expected a long tensor for index, but got {}", False, IndexError),
    "index_fill_": (IndexError, "index_fill_(): Expected dtype int64 for index.", True, IndexError),
}


def _index_arg(x, dim, index, name):
    dtype_err, dtype_msg, negative_ok, range_err = _INDEX_RULES[name]
    _args.tensor_arg(index, name.rstrip("_"), "index", 3)
    idx = index._data
    if idx.dtype not in (np.int64, np.int32):
        raise dtype_err(dtype_msg.format(_dtype.from_numpy_dtype(idx.dtype).name_c))
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    d = _wrap_dim(dim, x._data.ndim)
    size = x._data.shape[d] if x._data.ndim else 1
    idx = idx.reshape(-1).astype(np.int64)
    bad = ((idx < -size) if negative_ok else (idx < 0)) | (idx >= size)
    if idx.size and bad.any():
        if name == "index_select":
            raise IndexError("index out of range in self")
        v = int(idx[bad][0])
        prefix = "index_copy_(): " if name == "index_copy_" else ""
        raise range_err(f"{prefix}index {v} is out of bounds for dimension {d} with size {size}")
    return d, idx


class IndexSelectBackward0(Node):   # y = x.index_select(d, i); dx = zeros.index_add(d, i, gy)
    __slots__ = ("dim", "index", "shape", "oshape")

    def backward(self, ns, g):
        g = ns.reshape(g, tuple(self.shape[:self.dim]) + (len(self.index),) + tuple(self.shape[self.dim + 1:]))
        return (ns.reshape(_index_add_zeros(ns, self.shape, self.dim, self.index, g), self.oshape),)


def index_select(input, dim, index, *, out=None):
    d, idx = _index_arg(input, dim, index, "index_select")
    a = _as1(input._data)
    y = np.take(a, idx, axis=d)
    if input._data.ndim == 0:
        y = y.reshape(() if index._data.ndim == 0 else (-1,))
    if _needs(input):
        return make(y, True, _node(IndexSelectBackward0, (input,), guards=(index,), dim=d, index=idx, shape=a.shape,
                                   oshape=input._data.shape))
    return make(y)


class IndexAddBackward0(Node):      # y = x.index_add(d, i, s, alpha); dx = gy; ds = alpha * gy.index_select(d, i)
    __slots__ = ("dim", "index", "alpha", "sshape")

    def backward(self, ns, g):
        gs = _index_select(ns, g, self.dim, self.index)
        if self.alpha != 1:
            gs = gs * self.alpha
        return (g, ns.reshape(gs, self.sshape))


def _src_check(x, d, idx, source, name):
    _args.tensor_arg(source, name.rstrip("_"), "source", 4)
    xs, srcs = x._data.shape, source._data.shape
    if source._data.ndim and (len(srcs) != len(xs) or srcs[:d] + srcs[d + 1:] != xs[:d] + xs[d + 1:]):
        if name == "index_copy_":
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. "
                               f"Destination slice shape: {list(xs[:d] + xs[d + 1:])} at dimension {d} and source "
                               f"slice shape: {list(srcs[:d] + srcs[d + 1:])} at dimension 0.")
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(xs)} source.shape = {list(srcs)}")
    if name == "index_add_" and source._data.dtype != x._data.dtype:
        raise RuntimeError(f"index_add_(): self ({_dtype.from_numpy_dtype(x._data.dtype).name_c}) and source "
                           f"({_dtype.from_numpy_dtype(source._data.dtype).name_c}) must have the same scalar type")
    ss = source._data.shape[d] if source._data.ndim else 1
    if idx.shape[0] != ss:
        if name == "index_copy_":
            raise IndexError(f"index_copy_(): Number of indices ({idx.shape[0]}) should be equal to "
                             f"source.size(dim) ({ss})")
        raise RuntimeError(f"{name}(): Number of indices ({idx.shape[0]}) should be equal to source.size(dim): "
                           f"({ss}), for dim: {d}")


def index_add(input, dim, index, source, *, alpha=1, out=None):
    d, idx = _index_arg(input, dim, index, "index_add_")
    _src_check(input, d, idx, source, "index_add_")
    a = _as1(input._data).copy()
    s = source._data.reshape(a.shape[:d] + (idx.shape[0],) + a.shape[d + 1:])
    np.add.at(a, _along(d, idx), (s * alpha).astype(a.dtype) if alpha != 1 else s.astype(a.dtype))
    a = a.reshape(input._data.shape)
    if _needs(input, source):
        return make(a, True, _node(IndexAddBackward0, (input, source), guards=(index,), dim=d, index=idx, alpha=alpha,
                                   sshape=source._data.shape))
    return make(a)


def index_add_(x, dim, index, source, *, alpha=1):
    return _inplace(index_add, x, dim, index, source, alpha=alpha)


class IndexCopyBackward0(Node):     # dx = gy.index_fill(d, i, 0); ds = gy.index_select(d, i)
    __slots__ = ("dim", "index", "sshape")

    def backward(self, ns, g):
        return (_index_fill0(ns, g, self.dim, self.index),
                ns.reshape(_index_select(ns, g, self.dim, self.index), self.sshape))


def index_copy(input, dim, index, source, *, out=None):
    if _acs.on:
        return _ac.promote(index_copy, input, dim, index, source, out=out)
    d, idx = _index_arg(input, dim, index, "index_copy_")
    _src_check(input, d, idx, source, "index_copy_")
    a = _as1(input._data).copy()
    a[_along(d, idx)] = source._data.reshape(a.shape[:d] + (idx.shape[0],) + a.shape[d + 1:])
    a = a.reshape(input._data.shape)
    if _needs(input, source):
        return make(a, True, _node(IndexCopyBackward0, (input, source), guards=(index,), dim=d, index=idx,
                                   sshape=source._data.shape))
    return make(a)


def index_copy_(x, dim, index, source):
    return _inplace(index_copy, x, dim, index, source)


class IndexFillBackward0(Node):     # dx = gy.index_fill(d, i, 0)
    __slots__ = ("dim", "index")

    def backward(self, ns, g):
        return (_index_fill0(ns, g, self.dim, self.index),)


class IndexFillBackward1(Node):     # value is a 0-d tensor: dvalue = gy.index_select(d, i).sum()
    __slots__ = ("dim", "index")

    def backward(self, ns, g):
        return (_index_fill0(ns, g, self.dim, self.index), ns.sum(_index_select(ns, g, self.dim, self.index), None))


def index_fill(input, dim, index, value):
    d, idx = _index_arg(input, dim, index, "index_fill_")
    a = _as1(input._data).copy()
    vt = isinstance(value, Tensor)
    if not vt:
        value = _args.number_arg(value, "index_fill", "value", 4)
    if vt and value._data.ndim != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._data.ndim} dimension(s).")
    a[_along(d, idx)] = value._data if vt else value
    a = a.reshape(input._data.shape)
    if _needs(input, value if vt else None):
        if vt:
            return make(a, True, _node(IndexFillBackward1, (input, value), guards=(index,), dim=d, index=idx))
        return make(a, True, _node(IndexFillBackward0, (input,), guards=(index,), dim=d, index=idx))
    return make(a)


def index_fill_(x, dim, index, value):
    return _inplace(index_fill, x, dim, index, value)

