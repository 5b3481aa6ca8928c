"""Saved-tensor hooks: torch.autograd.graph.saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks.

While a pair ``(pack_hook, unpack_hook)`` is on the stack, every tensor an op saves for backward goes through
``pack_hook`` at forward time (``graph.save_in`` / ``graph.save_out`` hand it here) and the node keeps what the
hook returned; backward (and ``grad_fn._saved_<name>``, ``ctx.saved_tensors``) calls ``unpack_hook`` on it each
time the saved tensor is read.  The innermost pair wins.  No hooks, no cost: ``save_in`` / ``save_out`` test one
list (``STACK``) and build their plain tuples as before.

A hooked saved entry is a 3-tuple ``(packed, unpack_hook, meta)`` (plain entries have 2 or 4 items, see
graph.py).  ``meta`` is what the unpacked tensor needs to join the graph again under create_graph, as torch's
SavedVariable keeps it: the output_nr of a saved output (the node itself is its grad_fn), otherwise
``(grad_fn, output_nr, leaf)`` of the saved input (``leaf`` is the input itself when it is a leaf that requires
grad, so its AccumulateGrad is found again).  As in torch, a hooked tensor is not version-checked when
unpacked: the hooks own its storage.
"""
import contextlib
import weakref as _weakref
from collections import defaultdict

from .._tensor import Tensor, _make

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "increment_version",
           "allow_mutation_on_saved_tensors", "SavedTensor"]

STACK = []                 # (pack_hook, unpack_hook), innermost last; graph.save_in / save_out test it
_disabled = [None]         # the error message of disable_saved_tensors_hooks while it is active

_INPLACE_MSG = ("A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                "cannot be modified by in-place operations as this can lead to unexpected side-effects. Please "
                "open an issue if you need to perform in-place operations on the input to a pack hook.")


def pack(t, is_output):
    """The hooked saved entry of `t` (an op's input, or its output when `is_output`)."""
    pack_hook, unpack_hook = STACK[-1]
    version = t._vc[0]
    packed = pack_hook(t)
    if t._vc[0] != version:
        raise RuntimeError(_INPLACE_MSG)
    if is_output:
        return (packed, unpack_hook, t._out_nr)
    leaf = t if (t._grad_fn is None and t._rg) else None
    return (packed, unpack_hook, (t._grad_fn, t._out_nr, leaf))


def unpack_value(s):
    """Call the unpack hook of hooked entry `s`; torch's TypeError when it gives back no Tensor."""
    r = s[1](s[0])
    if not isinstance(r, Tensor):
        raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                        f"{type(r).__name__}")
    return r


def unpack_tensor(node, s):
    """Hooked entry `s` of `node` as a Tensor that is part of the graph (create_graph, ctx.saved_tensors, the
    ``_saved_<name>`` attributes): a saved output has `node` as grad_fn, a saved input its own grad_fn or leaf."""
    r = unpack_value(s)
    meta = s[2]
    if meta.__class__ is int:
        return _make(r._data, True, node, meta)
    fn, out_nr, leaf = meta
    if fn is not None:
        return _make(r._data, True, fn, out_nr)
    if leaf is not None:
        if r is leaf:
            return leaf
        from .graph import edge
        u = _make(r._data, True)
        u._acc = _weakref.ref(edge(leaf)[0])   # gradients reach the leaf's AccumulateGrad
        return u
    return r


class saved_tensors_hooks:
    """Context manager that sets a pair of pack / unpack hooks for saved tensors (torch's
    torch.autograd.graph.saved_tensors_hooks)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled[0] is not None:
            raise RuntimeError(_disabled[0])
        STACK.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *args):
        STACK.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """While active, setting saved-tensor hooks raises RuntimeError(error_message) (as does entering it while
    hooks are set)."""
    prev = _disabled[0]
    try:
        if STACK:
            raise RuntimeError(error_message)
        _disabled[0] = error_message
        yield
    finally:
        _disabled[0] = prev


def increment_version(tensor):
    """Bump the version counter of a tensor (or of each tensor of an iterable) written behind autograd's back,
    so that a saved copy of it fails its version check; inference tensors have none."""
    if isinstance(tensor, Tensor):
        tensor = (tensor,)
    try:
        items = list(tensor)
    except TypeError:
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input") from None
    for t in items:
        if not isinstance(t, Tensor):
            raise RuntimeError("increment_version expects each element of the iterable to be a tensor")
        if not (t._extra and t._extra.get("inference")):
            t._vc[0] += 1


class _Handle:
    pass


class _AllowMutationOnSavedContext:
    """The state of one allow_mutation_on_saved_tensors context (torch's object of that name): ``cloned`` maps
    each pack handle to the copy backward will use (here made when the tensor is saved, see below)."""

    def __init__(self):
        self.cloned = _weakref.WeakKeyDictionary()
        self.original = _weakref.WeakKeyDictionary()
        self.tid_to_weakhandle = _weakref.WeakValueDictionary()
        self.sid_to_tid = defaultdict(set)

    def clear(self):
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


_mutation_enabled = [False]
_OUTSIDE_MSG = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which the graph was "
                "originally recorded.")


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Tensors saved for backward may be modified in place under this context: backward uses the values they
    had when saved.  torch clones a saved tensor when an op first writes into it (a dispatch mode sees every
    write); glassgrad has no such interception point, so it clones each saved tensor when it is saved (once per
    tensor and version) -- the same gradients and errors, at the memory cost of one copy of the saved tensors."""
    ctx = _AllowMutationOnSavedContext()

    def pack_hook(tensor):
        tid = (id(tensor), tensor._vc[0])
        handle = ctx.tid_to_weakhandle.get(tid)
        if handle is None:
            handle = _Handle()
            ctx.tid_to_weakhandle[tid] = handle
            ctx.cloned[handle] = _make(tensor._data.copy())
        return handle

    def unpack_hook(handle):
        if not _mutation_enabled[0] or handle not in ctx.cloned:
            raise AssertionError(_OUTSIDE_MSG)
        return ctx.cloned[handle]

    with saved_tensors_hooks(pack_hook, unpack_hook):
        try:
            if _mutation_enabled[0]:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _mutation_enabled[0] = True
            yield ctx
        finally:
            ctx.clear()
            _mutation_enabled[0] = False


_FREED_HOOKS_MSG = ("Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the "
                    "graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you "
                    "need to backward through the graph a second time or if you need to access saved variables after "
                    "calling backward.")


class SavedTensor:
    """``grad_fn._raw_saved_<name>``: one saved entry of a node, to put a pair of hooks on that tensor alone."""
    __slots__ = ("_node", "_index")

    def __init__(self, node, index):
        self._node = node
        self._index = index

    def _entry(self):
        saved = self._node._saved
        if saved is None:
            return None
        return saved[self._index]

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack the saved tensor now with `pack_hook`; backward unpacks it with `unpack_hook` (once a pair)."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, "
                            "arg1: collections.abc.Callable) -> None")
        s = self._entry()
        if s is None:
            raise RuntimeError(_FREED_HOOKS_MSG)
        if len(s) == 3:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only "
                               "one pair of hooks is allowed at a time.")
        from .graph import TEN
        t = TEN.unpack_one(self._node, s)
        if len(s) == 4:
            entry = (pack_hook(t), unpack_hook, s[3])
        else:
            leaf = t if (t._grad_fn is None and t._rg) else None
            entry = (pack_hook(t), unpack_hook, (t._grad_fn, t._out_nr, leaf))
        saved = list(self._node._saved)
        saved[self._index] = entry
        self._node._saved = tuple(saved)

    def unpack(self):
        s = self._entry()
        if s is None:
            from .graph import freed_error
            raise freed_error()
        from .graph import TEN
        return TEN.unpack_one(self._node, s)

    @property
    def unpack_hook(self):
        s = self._entry()
        return s[1] if s is not None and len(s) == 3 else None
