"""In-place writes and the graph: torch's checks before an op writes into a tensor, and the graph rewrite
after it wrote (the version counter, and CopySlices when the tensor is a view).

When an in-place op `fn` writes into a view `v` of `base`, ``commit_inplace`` makes
  base.grad_fn = CopySlices(base's old edge, fn)   and   v.grad_fn = ViewFromBase(base's new node),
so gradients reach both the base's old history and fn's other inputs.  Other views of `base` notice the
rewrite the next time an op takes their edge (``refresh_view``, called by ``graph.edge``).
"""
import numpy as np

from .. import backend
from .graph import Node, edge, freed_error
from .grad_mode import state as grad

__all__ = ["check_inplace", "commit_inplace", "CopySlices", "ViewFromBase", "refresh_view"]

_ndarray = np.ndarray

LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_LEAF_MSG = "a view of a leaf Variable that requires grad is being used in an in-place operation."


def check_inplace(t, shared_ok=False):
    """PyTorch's checks before writing into `t` (grad-mode checks, and memory that cannot be written).
    shared_ok: the op writes one value everywhere (fill_, zero_), which torch allows into elements that share
    memory."""
    a = t._data
    if a.__class__ is _ndarray and not a.flags.writeable and not (
            shared_ok and a.size > 1 and 0 in a.strides and backend.shared_writable(a) is not None):
        if a.size > 1 and 0 in a.strides:
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
        raise RuntimeError("the tensor's memory is read-only (a NumPy array that is not writeable): clone() it "
                           "before writing into it")
    if grad.enabled:
        base = t._base
        # torch checks the view first: a view that requires grad, or views a leaf that does, of a leaf base
        # (x = b.view(2, 3).requires_grad_() makes x and its own views such views even though b needs no grad)
        if base is not None and base._grad_fn is None and (base._rg or t._rg):
            raise RuntimeError(VIEW_LEAF_MSG)
        if t._rg and t._grad_fn is None:
            raise RuntimeError(LEAF_MSG)
    if t._extra is not None and t._extra.get("inference") and not grad.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed."
                           "You can make a clone to get a normal tensor before doing inplace update."
                           "See https://github.com/pytorch/rfcs/pull/17 for more details.")


def commit_inplace(t, out):
    """Make `t` hold the result `out` of an op applied to `t` (out-of-place result).

    The values are written into t's memory (so views and NumPy arrays sharing it see them),
    the version counter is bumped, and t takes over out's place in the graph -- through
    CopySlices on its base when `t` is a view.
    """
    src = out._data
    if src.dtype != t._data.dtype:
        src = src.astype(t._data.dtype)
    if src.shape != t._data.shape:
        raise RuntimeError(
            f"output with shape {list(t._data.shape)} doesn't match the broadcast shape {list(src.shape)}")
    np.copyto(t._data, src)
    t._vc[0] += 1
    fn = out._grad_fn
    if fn is None:
        return t
    # a saved output now lives in t's memory and version counter
    saved = fn._saved
    if saved:
        fn._saved = tuple((t._data, t._vc, t._vc[0], s[3]) if len(s) == 4 and s[0] is out._data else s
                          for s in saved)
    base = t._base
    if base is None:
        t._grad_fn = fn
        t._out_nr = out._out_nr
        t._rg = True
        return t
    cs = CopySlices((edge(base),) + fn.next_functions[1:], base._data.shape, t._view_fn, fn)
    base._grad_fn = cs
    base._out_nr = 0
    base._rg = True
    t._grad_fn = ViewFromBase(((cs, 0),), base._data.shape, base._data.dtype, t._view_fn)
    t._out_nr = 0
    t._rg = True
    t._vbase_fn = cs
    return t


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

    def backward(self, ns, g):
        gv = ns.apply_view(g, self.view_fn)
        if self.fn._saved is None:
            raise freed_error()
        res = self.fn.backward(ns, gv)
        g_old_view = res[0]
        gb = ns.view_fill(g, self.view_fn, 0 if g_old_view is None else g_old_view)
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

    def backward(self, ns, g):
        return (ns.view_scatter(self.shape, self.view_fn, g),)


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
