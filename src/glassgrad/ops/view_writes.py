"""Writing through a view: the graph rewrite PyTorch calls CopySlices, and the differentiable
helpers the tensor backward namespace uses for gradients that live in a region of a larger array.

When an in-place op `fn` writes into a view `v` of `base`, `ops._core.commit_inplace` makes
  base.grad_fn = CopySlices(base's old edge, fn)   and   v.grad_fn = ViewFromBase(base's new node),
so gradients reach both the base's old history and fn's other inputs.
"""
import numpy as np

from ._core import make, edge, grad
from ..autograd.graph import Node


# -- the graph rewrite for in-place writes through a view -------------------------------------
class CopySlices(Node):
    """base's new grad_fn after an in-place op `fn` wrote into one of its views.

    dbase_old = g with the view's region replaced by fn's gradient for the view's old value;
    fn's other inputs get fn's gradients computed from g's view region.
    """
    __slots__ = ("shape", "view_fn", "fn")

    def __init__(self, edges, shape, view_fn, fn):
        Node.__init__(self, edges)
        self.shape = shape
        self.view_fn = view_fn
        self.fn = fn

    def backward(self, F, g):
        gv = F.apply_view(g, self.view_fn)
        if self.fn._saved is None:
            from ..autograd.graph import freed_error
            raise freed_error()
        res = self.fn.backward(F, gv)
        g_old_view = res[0]
        gb = F.view_fill(g, self.view_fn, 0 if g_old_view is None else g_old_view)
        return (gb,) + tuple(res[1:])

    def _release(self):
        self.fn._release()


class AsStridedBackward0(Node):
    """ViewFromBase: grad_fn of a view after an in-place write, the view taken again from its base's new
    value (PyTorch names it AsStridedBackward0)."""
    __slots__ = ("shape", "dtype", "view_fn")

    def __init__(self, edges, shape, dtype, view_fn):
        Node.__init__(self, edges)
        self.shape = shape
        self.dtype = dtype
        self.view_fn = view_fn

    def backward(self, F, g):
        return (F.view_scatter(self.shape, self.view_fn, g),)


ViewFromBase = AsStridedBackward0


def refresh_view(t, base):
    """Remake view t's grad_fn from its base's current grad_fn (the base was rewritten in place)."""
    fn = base._grad_fn
    t._vbase_fn = fn
    if fn is None:
        return
    t._grad_fn = ViewFromBase(((fn, base._out_nr),), base._data.shape, base._data.dtype, t._view_fn)
    t._out_nr = 0
    t._rg = True


# differentiable helpers used by the TEN namespace (create_graph through views)
class _ViewScatterBackward(Node):   # y = scatter g into zeros through view_fn; dg = view_fn(gy)
    __slots__ = ("view_fn",)

    def backward(self, F, g):
        return (F.apply_view(g, self.view_fn),)


def view_scatter(shape, view_fn, g):
    out = np.zeros(shape, g._data.dtype)
    view_fn(out)[...] = g._data
    if g._rg and grad.enabled:
        n = _ViewScatterBackward((edge(g),))
        n.view_fn = view_fn
        return make(out, True, n)
    return make(out)


class _ApplyViewBackward(Node):
    __slots__ = ("view_fn", "shape")

    def backward(self, F, g):
        return (F.view_scatter(self.shape, self.view_fn, g),)


def apply_view(g, view_fn):
    arr = np.ascontiguousarray(view_fn(g._data))
    if g._rg and grad.enabled:
        n = _ApplyViewBackward((edge(g),))
        n.view_fn = view_fn
        n.shape = g._data.shape
        return make(arr, True, n)
    return make(arr)


class _ViewFillBackward(Node):
    __slots__ = ("view_fn",)

    def backward(self, F, g):
        return (F.view_fill(g, self.view_fn, 0), F.apply_view(g, self.view_fn))


def view_fill(g, view_fn, value):
    from ._core import as_tensor_arg
    value = as_tensor_arg(value, g)
    out = g._data.copy()
    view_fn(out)[...] = value._data
    if (g._rg or value._rg) and grad.enabled:
        n = _ViewFillBackward((edge(g), edge(value)))
        n.view_fn = view_fn
        return make(out, True, n)
    return make(out)


