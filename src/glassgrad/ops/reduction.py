"""Reductions.

ops: sum mean (more in later sections: prod max min amax amin argmax argmin var std norm
     logsumexp cumsum cumprod all any median mode kthvalue count_nonzero ...)
"""
import numpy as np

from .. import _dtype
from .._tensor import _wrap_dim
from ._core import Tensor, make, edge, save_in, save_out, grad
from ..autograd.graph import Node

__all__ = ["sum", "mean", "norm"]


def _dims(dim, ndim):
    """Normalise dim (None, int, or sequence) to a sorted tuple of axes."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return tuple(range(ndim))
        ds = tuple(sorted(_wrap_dim(d, ndim) for d in dim))
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"dim {ds[0]} appears multiple times in the list of dims")
        return ds
    return (_wrap_dim(dim, ndim),)


def _expand_back(F, g, in_shape, axes, keepdim):
    """Broadcast a reduced gradient back to the input shape."""
    if not keepdim and axes:
        shp = list(in_shape)
        for a in axes:
            shp[a] = 1
        g = F.reshape(g, tuple(shp))
    return F.expand(g, in_shape)


class SumBackward0(Node):           # y = x.sum(); dx = gy expanded
    __slots__ = ("in_shape", "in_dt")

    def backward(self, F, g):
        return (F.cast(F.expand(F.reshape(g, (1,) * len(self.in_shape)) if self.in_shape else g, self.in_shape),
                       self.in_dt),)


class SumBackward1(Node):           # y = x.sum(dims, keepdim); dx = gy expanded back
    __slots__ = ("in_shape", "axes", "keepdim", "in_dt")

    def backward(self, F, g):
        return (F.cast(_expand_back(F, g, self.in_shape, self.axes, self.keepdim), self.in_dt),)


def _sum_dtype(a, dtype):
    if dtype is not None:
        return _dtype.to_dtype(dtype).np
    if a.dtype.kind in "iub":
        return np.int64
    return None


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    a = input._data
    dt = _sum_dtype(a, dtype)
    if dt is not None:
        a = a.astype(dt)
    if dim is None:
        y = np.sum(a)
        if input._rg and grad.enabled:
            n = SumBackward0((edge(input),))
            n.in_shape = input._data.shape
            n.in_dt = input._data.dtype
            return make(np.asarray(y), True, n)
        return make(np.asarray(y))
    axes = _dims(dim, a.ndim)
    y = np.sum(a, axis=axes, keepdims=keepdim)
    if input._rg and grad.enabled:
        n = SumBackward1((edge(input),))
        n.in_shape = input._data.shape
        n.axes = axes
        n.keepdim = keepdim
        n.in_dt = input._data.dtype
        return make(np.asarray(y), True, n)
    return make(np.asarray(y))


class MeanBackward0(Node):          # y = x.mean(); dx = gy / n expanded
    __slots__ = ("in_shape", "n")

    def backward(self, F, g):
        return (F.expand(F.reshape(g / self.n, (1,) * len(self.in_shape)) if self.in_shape else g / self.n,
                         self.in_shape),)


class MeanBackward1(Node):          # y = x.mean(dims); dx = gy / n expanded back
    __slots__ = ("in_shape", "axes", "keepdim", "n")

    def backward(self, F, g):
        return (_expand_back(F, g / self.n, self.in_shape, self.axes, self.keepdim),)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    a = input._data
    if dtype is not None:
        a = a.astype(_dtype.to_dtype(dtype).np)
    if a.dtype.kind != "f":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_dtype.from_numpy_dtype(a.dtype).name_c}")
    axes = _dims(dim, a.ndim)
    y = np.asarray(np.mean(a, axis=axes, keepdims=keepdim))
    cnt = 1
    for ax in axes:
        cnt *= a.shape[ax]
    if input._rg and grad.enabled:
        if dim is None:
            n = MeanBackward0((edge(input),))
        else:
            n = MeanBackward1((edge(input),))
            n.axes = axes
            n.keepdim = keepdim
        n.in_shape = a.shape
        n.n = cnt
        return make(y, True, n)
    return make(y)


class NormBackward1(Node):          # y = ||x||_2; dx = gy * x / y (0 where y == 0)
    __slots__ = ()
    _saved_names = ("self", "result")

    def backward(self, F, g):
        x, y = F.unpack(self)
        scale = F.where(F.const(F.data(y) == 0, g), F.zeros_like(y), g / y)
        return (x * scale,)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, out=None):
    if (p in ("fro", 2, 2.0)) and dim is None:
        a = input._data
        y = np.asarray(np.sqrt(np.sum(a * a)), dtype=a.dtype)
        if input._rg and grad.enabled:
            n = NormBackward1((edge(input),))
            out = make(y, True, n)
            n._saved = (save_in(input), save_out(out))
            return out
        return make(y)
    from . import reduction_more
    return reduction_more.norm_general(input, p, dim, keepdim, dtype)
