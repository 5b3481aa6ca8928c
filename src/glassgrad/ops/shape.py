"""Shape ops that copy (views live in views.py).

ops: cat stack (more in later sections: flip roll repeat repeat_interleave tile tril triu diag
     meshgrid ...)
"""
import numpy as np

from .. import _dtype
from .._tensor import _wrap_dim
from ._core import Tensor, make, edge, grad
from ..autograd.graph import Node

__all__ = ["cat", "concat", "concatenate", "stack"]


class CatBackward0(Node):           # y = cat(xs, d); dx_i = gy narrowed to x_i's part
    __slots__ = ("dim", "sizes", "dts")

    def backward(self, F, g):
        out, start = [], 0
        d = self.dim
        for size, dt in zip(self.sizes, self.dts):
            if size is None:          # a legacy empty 1-d input that was skipped
                out.append(None)
                continue
            key = (slice(None),) * d + (slice(start, start + size),)
            part = g[key]
            out.append(F.cast(part, dt))
            start += size
        return tuple(out)


def cat(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    rt = _dtype.result_type(*[t if t._data.ndim else t for t in tensors])
    rt = tensors[0].dtype
    for t in tensors[1:]:
        rt = _dtype.promote_types(rt, t.dtype)
    # legacy: 1-d empty tensors are skipped
    parts = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
    if not parts:
        return make(np.zeros((0,), rt.np))
    ref = parts[0]._data
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _wrap_dim(dim, ref.ndim)
    for i, t in enumerate(tensors):
        a = t._data
        if a.ndim == 1 and a.shape[0] == 0:
            continue
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if a.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {a.ndim}")
        for k in range(ref.ndim):
            if k != d and a.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {a.shape[k]} for tensor number {i} in the list.")
    y = np.concatenate([t._data.astype(rt.np, copy=False) for t in parts], axis=d)
    if grad.enabled and any(t._rg for t in tensors):
        n = CatBackward0(tuple(edge(t) for t in tensors))
        n.dim = d
        n.sizes = [None if (t._data.ndim == 1 and t._data.shape[0] == 0) else t._data.shape[d] for t in tensors]
        n.dts = [t._data.dtype for t in tensors]
        return make(y, True, n)
    return make(y)


concat = concatenate = cat


class StackBackward0(Node):         # y = stack(xs, d); dx_i = gy.select(d, i)
    __slots__ = ("dim", "dts")

    def backward(self, F, g):
        d = self.dim
        return tuple(F.cast(g[(slice(None),) * d + (i,)], dt) for i, dt in enumerate(self.dts))


def stack(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shp = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != shp:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shp)} at entry 0 and "
                               f"{list(t._data.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shp) + 1)
    rt = tensors[0].dtype
    for t in tensors[1:]:
        rt = _dtype.promote_types(rt, t.dtype)
    y = np.stack([t._data.astype(rt.np, copy=False) for t in tensors], axis=d)
    if grad.enabled and any(t._rg for t in tensors):
        n = StackBackward0(tuple(edge(t) for t in tensors))
        n.dim = d
        n.dts = [t._data.dtype for t in tensors]
        return make(y, True, n)
    return make(y)
