"""The backward graph: Node (what ``tensor.grad_fn`` is), AccumulateGrad, saved tensors, hooks.

A Node keeps only what its backward needs: ``next_functions`` (one ``(node, input_nr)``
edge per differentiable input, ``(None, 0)`` for inputs that need no gradient), the
tensors it saved, and plain attributes such as a dim or a shape.  It never holds its
input Tensors except as saved tensors.

Saved tensors are tuples, cheap to make on the hot path:
  * an input:  ``(tensor, version)``
  * an output: ``(array, version_counter, version, output_nr)`` -- the output Tensor itself
    is not stored (that would be a reference cycle output -> grad_fn -> output).
They are unpacked through the backward namespace ``ns`` (``ns.unpack(node)``), which checks
the version counter (``check_saved``) and raises PyTorch's errors for modified or freed tensors.

The graph primitives every op uses live here: ``edge(t)`` (the edge a node gets for input ``t``),
``NO_EDGE``, ``save_in`` / ``save_out``.  The two backward namespaces are defined in ``ops/namespaces.py``
(they are built from ops) and plugged in here by ``use_namespaces`` when ops is imported.
"""
import itertools
import re
import typing
import weakref as _weakref

from .._dtype import _FROM_NP
from .grad_mode import state

__all__ = ["guard", "check_guards", "Node", "AccumulateGrad", "RemovableHandle", "freed_error", "version_error", "edge", "NO_EDGE", "save_in",
           "save_out", "check_saved", "use_namespaces", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "increment_version", "allow_mutation_on_saved_tensors", "GradientEdge",
           "get_gradient_edge"]

_seq = itertools.count()


def next_sequence_nr():
    """The sequence number the next node will get, without taking it (explain's module tracing
    uses it to tell which nodes a module call created)."""
    return int(repr(_seq)[len("count("):-1])
_ACC_SEQ = (1 << 64) - 1   # AccumulateGrad: UINT64_MAX, as in PyTorch (runs as soon as it is ready;
                           # ties among them are broken by the heap exactly as std::priority_queue does)

FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
    "a second time or if you need to access saved tensors after calling backward.")


def freed_error():
    return RuntimeError(FREED_MSG)


def version_error(desc, found, expected):
    # torch 2.13 names the forward op: "which is output 0 of Exp," (not ExpBackward0)
    desc = re.sub(r"(which is output \d+ of [\w:]+?)Backward\d*,$", r"\1,", desc)
    hint = ("Hint: the backtrace further above shows the operation that failed to compute its gradient. "
            "The variable in question was changed in there or anywhere later. Good luck!"
            if state.anomaly else
            "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
            "with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    return RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {desc} is at version {found}; expected version {expected} instead. {hint}")


def _desc(arr, fn, nr):
    legacy = _FROM_NP[arr.dtype]._legacy
    shape = list(arr.shape)
    if legacy == "BoolTensor":          # torch names a bool tensor by its backend type
        return f"[{'CPU' if arr.__class__.__module__ == 'numpy' else 'CUDA'}BoolType {shape}]"
    if fn is None:
        return f"[torch.{legacy} {shape}]"
    return f"[torch.{legacy} {shape}], which is output {nr} of {fn.name()},"


def check_saved(node, s):
    """Version check of one saved entry of `node`; returns the array (a hooked entry: its unpack hook's)."""
    n = len(s)
    if n == 2:
        t, v = s
        if t._vc[0] != v:
            raise version_error(_desc(t._data, t._grad_fn, t._out_nr), t._vc[0], v)
        return t._data
    if n == 3:
        return _hooks.unpack_value(s)._data
    arr, vc, v, nr = s
    if vc[0] != v:
        raise version_error(_desc(arr, node, nr), vc[0], v)
    return arr


# -- the backward namespaces (ops/namespaces.py's ARR and TEN), plugged in when ops is imported -----------------
ARR = TEN = None


def use_namespaces(array_ns, tensor_ns):
    """Plug in the two namespaces backward formulas run in: `array_ns` (raw arrays, the usual case) and
    `tensor_ns` (Tensors, create_graph).  ops/namespaces.py calls this when it is imported."""
    global ARR, TEN
    ARR, TEN = array_ns, tensor_ns


# nodes PyTorch implements in C++ under torch::autograd (their name() carries the namespace)
_CPP_NODES = frozenset(("AccumulateGrad", "CopySlices", "GraphRoot", "Error", "DelayedError", "Identity",
                        "NotImplemented", "UndefinedGrad", "UndefinedGradBackward", "CopyBackwards"))


class RemovableHandle:
    """Handle returned by every register_*hook; ``remove()`` unregisters the hook."""
    __slots__ = ("_store", "_extra", "id")
    _ids = itertools.count()

    def __init__(self, store, *, extra_dict=None):
        self._store = store
        self._extra = (extra_dict,) if isinstance(extra_dict, dict) else tuple(extra_dict or ())
        self.id = next(RemovableHandle._ids)

    def remove(self):
        store = self._store
        if store is not None:
            store.pop(self.id, None)
            self._store = None
        for d in self._extra:           # torch's extra_dict: flags kept beside the hook
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _Hooks:
    """Hooks of one node; created only when a hook is registered."""
    __slots__ = ("pre", "post", "tensor_pre", "retain")

    def __init__(self):
        self.pre = {}          # id -> fn(grad_outputs)
        self.post = {}         # id -> fn(grad_inputs, grad_outputs)
        self.tensor_pre = {}   # output_nr -> {id: fn(grad)}
        self.retain = _weakref.WeakValueDictionary()   # output_nr -> tensor; weak, as PyTorch's retains_grad
        #                                                 hook (a strong ref would be a cycle t -> node -> t)


class Node:
    """Base of every backward node.  ``type(node).__name__`` is PyTorch's name (MulBackward0)."""
    __slots__ = ("next_functions", "_seq", "_saved", "_hooks", "_meta", "_trace", "_guards", "__weakref__")
    n_outputs = 1          # number of forward outputs (grads this node receives)
    _saved_names = ()      # names for the _saved_<name> attributes, in _saved order
    # May explain.attribute run this formula once on K loss terms' gradients stacked along a new leading
    # axis?  None: no (one call per term); "generic": yes, the formula as written (it touches g only through
    # operators that broadcast from the right and the namespace's functions); another name: a rule of that
    # name in explain/_attribute_stack.py.  Declared on each class beside its formula.
    stack_rule = None

    def __init__(self, next_functions=()):
        self.next_functions = next_functions
        self._seq = next(_seq)
        self._saved = ()
        self._hooks = None
        self._meta = None
        self._trace = None
        self._guards = None     # index tensors the backward reads (see guard): version-checked before it runs

    # -- the public Node surface -------------------------------------------------
    def name(self):
        n = type(self).__name__
        return "torch::autograd::" + n if n in _CPP_NODES else n

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def metadata(self):
        if self._meta is None:
            self._meta = {}
        return self._meta

    def _sequence_nr(self):
        return self._seq

    def __lt__(self, other):
        # the engine's heap holds (-seq, node); equal seqs (AccumulateGrad) must compare equal, so
        # that heapq breaks ties like libstdc++'s priority_queue (same sift algorithm)
        return False

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) -> new grad_inputs or None; runs after this node."""
        h = self._get_hooks().post
        handle = RemovableHandle(h)
        h[handle.id] = fn
        return handle

    def register_prehook(self, fn):
        """fn(grad_outputs) -> new grad_outputs or None; runs before this node."""
        h = self._get_hooks().pre
        handle = RemovableHandle(h)
        h[handle.id] = fn
        return handle

    def _get_hooks(self):
        if self._hooks is None:
            self._hooks = _Hooks()
        return self._hooks

    def _register_tensor_hook(self, output_nr, fn):
        d = self._get_hooks().tensor_pre.setdefault(output_nr, {})
        handle = RemovableHandle(d)
        d[handle.id] = fn
        return handle

    # -- saved tensors --------------------------------------------------------------
    def _release(self):
        """Free saved tensors (after backward without retain_graph)."""
        if self._saved:
            self._saved = None

    def __getattr__(self, name):
        # _saved_self, _saved_other, _saved_result, ... (as PyTorch's generated nodes expose)
        if name.startswith("_saved_"):
            key = name[7:]
            names = type(self)._saved_names
            if key in names:
                saved = object.__getattribute__(self, "_saved")
                if saved is None:
                    raise freed_error()
                i = names.index(key)
                if i < len(saved) and saved[i] is not None:
                    return TEN.unpack_one(self, saved[i])
                try:                    # not saved as a tensor: a Python number this node keeps, else None
                    return object.__getattribute__(self, key)
                except AttributeError:
                    return None
            try:
                return object.__getattribute__(self, key)
            except AttributeError:
                pass
        elif name.startswith("_raw_saved_"):          # torch's SavedTensor objects (register_hooks)
            names = type(self)._saved_names
            if name[11:] in names:
                return _hooks.SavedTensor(self, names.index(name[11:]))
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def backward(self, ns, grad):  # pragma: no cover - every node overrides it
        raise NotImplementedError

    # the engine calls this; a Python-level Node subclass may override
    def __call__(self, *grads):
        res = self.backward(TEN, *grads) if self.n_outputs == 1 else self.backward(TEN, list(grads))
        return res


class AccumulateGrad(Node):
    """Leaf node: adds the incoming gradient into ``variable.grad``."""
    __slots__ = ("variable",)

    def __init__(self, variable):
        self.next_functions = ()
        self._seq = _ACC_SEQ
        self._saved = ()
        self._hooks = None
        self._meta = None
        self._trace = None
        self._guards = None
        self.variable = variable


class GraphRoot(Node):
    """The virtual root of one backward call; its 'backward' hands out the initial grads."""
    __slots__ = ("grads",)

    def __init__(self, edges, grads):
        Node.__init__(self, edges)
        self.grads = grads


# -- edges and saved tensors: what every op uses to record its node -------------------------------------
NO_EDGE = (None, 0)


def edge(t):
    """The edge an op's node gets for input `t`: its grad_fn, its AccumulateGrad, or nothing."""
    b = t._base
    if b is not None and t._vbase_fn is not b._grad_fn:
        refresh_view(t, b)     # the base was rewritten in place since this view was taken
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._out_nr)
    if t._rg:
        ref = t._acc
        acc = ref() if ref is not None else None
        if acc is None:
            acc = AccumulateGrad(t)
            t._acc = _weakref.ref(acc)
        return (acc, 0)
    return NO_EDGE


class GradientEdge(typing.NamedTuple):
    """torch.autograd.graph.GradientEdge: where a gradient enters the graph -- a node and its input number.
    autograd.grad takes one in place of a tensor (the gradient flowing into that edge)."""
    node: object
    output_nr: int
    ownership_token: object = None


def get_gradient_edge(tensor):
    """The GradientEdge at which `tensor`'s gradient arrives: its grad_fn and output number, or (a leaf) its
    AccumulateGrad, made now if it has none (as torch's)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    node, nr = edge(tensor)
    return GradientEdge(node, nr)


def guard(node, *tensors):
    """Index / mask / target tensors `node`'s backward reads as arrays (gather's index, where's condition, a
    loss's target): torch saves them, so rewriting one in place before backward is its version error, not a
    gradient computed from the new values.  The engine checks them (check_guards) before the node runs."""
    g = tuple((t._vc, t._vc[0], t._data) for t in tensors if t is not None and t.__class__ is not int
              and hasattr(t, "_vc"))
    if g:
        node._guards = g if node._guards is None else node._guards + g
    return node


def check_guards(node):
    """torch's error for a guarded tensor rewritten in place since the forward ([torch.LongTensor [2]])."""
    for vc, v, arr in node._guards:
        if vc[0] != v:
            raise version_error(_desc(arr, None, 0), vc[0], v)


def save_in(t):
    """Save input tensor `t` for backward (version-checked when unpacked; through the pack hook of
    saved_tensors_hooks when one is set)."""
    if _HOOK_STACK:
        return _hooks.pack(t, False)
    return (t, t._vc[0])


def save_out(out):
    """Save an op's own output for backward without keeping the output Tensor alive."""
    if _HOOK_STACK:
        return _hooks.pack(out, True)
    return (out._data, out._vc, out._vc[0], out._out_nr)


from .inplace import refresh_view  # noqa: E402
from . import saved_hooks as _hooks  # noqa: E402
from .saved_hooks import STACK as _HOOK_STACK  # noqa: E402
# torch.autograd.graph's public names for saved-tensor hooks
from .saved_hooks import (saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks, increment_version,  # noqa: E402,F401
                          allow_mutation_on_saved_tensors)


def __getattr__(name):
    # register_multi_grad_hook needs the engine, which imports this module: loaded on first use
    if name == "register_multi_grad_hook":
        from .multi_grad_hook import register_multi_grad_hook
        return register_multi_grad_hook
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
