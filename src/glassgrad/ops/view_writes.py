"""Writing through a view: the differentiable helpers the tensor backward namespace uses for gradients
that live in a region of a larger array (CopySlices and ViewFromBase, the graph rewrite itself, are in
autograd/inplace.py).
"""
import numpy as np

from ._core import make, edge, grad, as_tensor_arg
from ..autograd.graph import Node


# differentiable helpers used by the TEN namespace (create_graph through views)
class _ViewScatterBackward(Node):   # y = scatter g into zeros through view_fn; dg = view_fn(gy)
    __slots__ = ("view_fn",)

    def backward(self, ns, g):
        return (ns.apply_view(g, self.view_fn),)


def view_scatter(shape, view_fn, g):
    out = np.zeros(shape, g._data.dtype, like=g._data)
    view_fn(out)[...] = g._data
    if g._rg and grad.enabled:
        n = _ViewScatterBackward((edge(g),))
        n.view_fn = view_fn
        return make(out, True, n)
    return make(out)


class _ApplyViewBackward(Node):
    __slots__ = ("view_fn", "shape")

    def backward(self, ns, g):
        return (ns.view_scatter(self.shape, self.view_fn, g),)


def apply_view(g, view_fn):
    arr = np.ascontiguousarray(view_fn(g._data), like=g._data)
    if g._rg and grad.enabled:
        n = _ApplyViewBackward((edge(g),))
        n.view_fn = view_fn
        n.shape = g._data.shape
        return make(arr, True, n)
    return make(arr)


class _ViewFillBackward(Node):
    __slots__ = ("view_fn",)

    def backward(self, ns, g):
        return (ns.view_fill(g, self.view_fn, 0), ns.apply_view(g, self.view_fn))


def view_fill(g, view_fn, value):
    value = as_tensor_arg(value, g)
    out = g._data.copy()
    view_fn(out)[...] = value._data
    if (g._rg or value._rg) and grad.enabled:
        n = _ViewFillBackward((edge(g), edge(value)))
        n.view_fn = view_fn
        return make(out, True, n)
    return make(out)


