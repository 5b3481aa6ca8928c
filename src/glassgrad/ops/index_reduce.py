"""index_reduce (prod / mean / amax / amin, include_self; IndexReduceBackward0 with torch's
index_reduce_backward written on Tensors) and fill_diagonal_ (torch's fill_ of an as_strided view).

ops: index_reduce index_reduce_ fill_diagonal_
"""

import numpy as np

from .. import _args, _dtype, backend
from .._tensor import _wrap_dim
from ._core import _inplace, make, edge, grad, warn_once
from ..autograd.graph import Node
from .linalg_solve import _LaNode, wrap

__all__ = ["index_reduce"]    # index_reduce_ and fill_diagonal_ are Tensor methods only

_REDUCE = ("prod", "mean", "amax", "amin")


def _checks(x, dim, index, source, reduce):
    if not isinstance(reduce, str):
        raise TypeError(f"index_reduce(): argument 'reduce' (position 4) must be str, not {_args.type_name(reduce)}")
    if reduce not in _REDUCE:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    a, i, s = x._data, index._data, source._data
    d = _wrap_dim(dim, max(a.ndim, 1))
    if i.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {i.ndim} with type: "
                         f"{_dtype.c_name(i.dtype)} and size: {list(i.shape)}")
    if i.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {_dtype.c_name(i.dtype)}")
    n_src = s.shape[d] if s.ndim else 1
    if i.size != n_src:
        raise RuntimeError(f"index_reduce_(): Number of indices ({i.size}) should be equal to source.size(dim): "
                           f"({n_src}), for dim: {d}")
    if a.dtype != s.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_dtype.c_name(a.dtype)}) and source ({_dtype.c_name(s.dtype)}) "
                           "must have the same scalar type")
    sa, ss = list(a.shape), list(s.shape)
    if a.ndim and s.ndim and (len(sa) != len(ss) or sa[:d] + sa[d + 1:] != ss[:d] + ss[d + 1:]):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {sa} source.shape = {ss}")
    size = a.shape[d] if a.ndim else 1
    if i.size and (i.min() < 0 or i.max() >= size):
        raise IndexError("index out of range in self")
    return d


def _identity(dt, reduce):
    if reduce == "prod":
        return 1
    if reduce == "mean":
        return 0
    big = np.inf if dt.kind in "fV" else np.iinfo(dt).max
    return -big if reduce == "amax" else big


def _reduce_arr(a, d, idx, s, reduce, include_self):
    out = np.array(a.reshape(1) if a.ndim == 0 else a, like=a)
    o = np.moveaxis(out, d, 0)
    sv = np.moveaxis(s.reshape(1) if s.ndim == 0 else s, d, 0)
    idx = idx.astype(np.int64)
    if not include_self:
        o[np.unique(idx)] = _identity(a.dtype, reduce)
    ufunc = {"prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}[reduce]
    with np.errstate(all="ignore"):
        backend.ufunc_at(ufunc, o, idx, sv)
        if reduce == "mean":
            cnt = np.bincount(idx, minlength=o.shape[0]) + (1 if include_self else 0)
            cnt = np.maximum(cnt, 1).reshape((-1,) + (1,) * (o.ndim - 1))
            o[...] = o // cnt if a.dtype.kind in "iu" else o / cnt.astype(a.dtype)
    return out.reshape(a.shape)


class _ErrorNode(Node):
    """torch::autograd::Error: a gradient whose own derivative raises (torch's message in `msg`)."""
    __slots__ = ("msg",)

    def backward(self, ns, g):
        raise RuntimeError(self.msg)


_ErrorNode.__name__ = "Error"
_ErrorNode.__qualname__ = "Error"


def _error_wrap(t, msg):
    """t behind an Error node (torch's DelayedError(...)->apply): its value, and a backward that raises."""
    if not (grad.enabled and t._rg):
        return t
    n = _ErrorNode((edge(t),))
    n.msg = msg
    return make(t._data, True, n)




class IndexReduceBackward0(_LaNode):
    """torch's index_reduce_backward."""
    __slots__ = ()
    _saved_names = ("self", "index", "source", "result")

    def formula(self, g, x, index, src, result):
        dim, reduce, include_self = self.info
        if reduce == "prod":
            mx = x.masked_fill(x == 0, 1)
            gx = g * index_reduce(mx, dim, index, src, reduce, include_self=include_self) / mx
            src_zero = src == 0
            nz = x.new_zeros(x.shape).index_add(dim, index, src_zero.to(x.dtype)).index_select(dim, index)
            single = src_zero & (nz == 1)
            msr = index_reduce(x, dim, index, src.masked_fill(single, 1), reduce, include_self=include_self)
            gs = (g * msr).index_select(dim, index).where(
                single, (g * result).index_select(dim, index) / src.masked_fill(src_zero, 1))
            if bool((nz._data > 1).any()):
                gs = _error_wrap(gs, "index_reduce(): Double backward is unsupported for source when >1 zeros in "
                                     "source are scattered to the same position in self")
        elif reduce == "mean":
            n = (x.new_ones(g.shape) if include_self else x.new_zeros(g.shape)).index_add(dim, index, src.new_ones(src.shape))
            n = n.masked_fill(n == 0, 1)
            gx = g / n
            gs = g.index_select(dim, index) / n.index_select(dim, index)
        else:
            value = result.index_select(dim, index)
            self_is = (x == result).to(x.dtype)
            src_is = (src == value).to(x.dtype)
            gd = g / self_is.index_add(dim, index, src_is)
            gx = self_is * gd
            gs = src_is * gd.index_select(dim, index)
        if not include_self:
            gx = gx.index_fill(dim, index, 0)
        return (gx if self.need(0) else None), (gs if self.need(1) else None)     # edges: self, source (as torch's)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    warn_once("index_reduce() is in beta and the API may change at any time.", stacklevel=3)
    d = _checks(input, dim, index, source, reduce)
    y = _reduce_arr(input._data, d, index._data, source._data, reduce, bool(include_self))
    out = wrap((y,), IndexReduceBackward0, (input, index, source), (0, 1, 2), (0,), (d, reduce, bool(include_self)))[0]
    if out.grad_fn is not None:         # the index has no edge, as torch's
        nf = out.grad_fn.next_functions
        out.grad_fn.next_functions = (nf[0], nf[2])
    return out


def index_reduce_(input, dim, index, source, reduce, *, include_self=True):
    return _inplace(index_reduce, input, dim, index, source, reduce, include_self=include_self)


def fill_diagonal_(input, fill_value, wrap=False):
    _args.number_arg(fill_value, "fill_diagonal_", "fill_value", 1)
    _args.bool_arg(wrap, "fill_diagonal_", "wrap", 2)
    a = input._data
    nd = a.ndim
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    h, w = a.shape[0], a.shape[1]
    if nd > 2 and any(s != h for s in a.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    off = input.storage_offset()
    stride = sum(input.stride())
    size = min(h, w)
    _fill(input.as_strided((size,), (stride,), off), fill_value)
    if wrap and nd == 2 and h > w + 1:
        step = w + 1
        n = (a.size + step - 1) // step - size
        _fill(input.as_strided((n,), (stride,), off + input.stride(0) * (w + 1)), fill_value)
    return input


def _fill(view, value):
    """view.fill_(value): the base's graph records the write (CopySlices over fill_'s one edge, as torch's)."""
    view.fill_(value)

