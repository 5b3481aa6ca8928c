"""The machinery of non-reentrant checkpointing (torch.utils.checkpoint's _CheckpointFrame and its two hooks).

Forward: ``checkpoint_hook(frame)`` packs each saved tensor as a fresh ``_Holder`` (a weak reference to it goes
to ``frame.weak_holders``; the tensor itself is not kept) and records its metadata.  Backward: the first unpack
in a graph task reruns the segment under ``_recomputation_hook``, which puts each recomputed tensor, in the same
order, into the holder's slot for that task (``holder.handles[gid]`` -> ``frame.recomputed[gid]``), and stops
the rerun once the last live holder is filled (early stop).  Each unpack hands out its tensor once and forgets
it (torch's Rule 4: recomputed tensors die as they are used, even under retain_graph).  A nested checkpoint's
inputs are saved through the enclosing checkpoint's hook (``save_inputs``), so they are recomputed with it.
"""
import contextlib
import uuid
import weakref
from collections import defaultdict

from .._tensor import Tensor
from ..autograd import engine as _engine
from ..autograd.graph import check_saved, save_in, saved_tensors_hooks
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.saved_hooks import unpack_tensor

__all__ = ["CheckpointError", "CheckpointFrame", "checkpoint_hook", "set_checkpoint_early_stop",
           "set_checkpoint_debug_enabled", "GraphExecGroup"]

_state = {"early_stop": None, "debug": None, "group": None}


class GraphExecGroup:
    """Checkpointed regions reached by backward calls under the same instance of this context manager are
    recomputed at most once, however many backward calls there are (they must use disjoint saved activations).
    Only non-reentrant checkpoint looks at it."""

    def __enter__(self):
        if _state["group"] is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group {_state['group']}")
        _state["group"] = self
        return self

    def __exit__(self, *args):
        _state["group"] = None

    @classmethod
    def _get_current_group(cls):
        return _state["group"]


class CheckpointError(RuntimeError):
    pass


@contextlib.contextmanager
def _overriding(key, value):
    """_state[key] = value while the block runs."""
    prev = _state[key]
    _state[key] = value
    try:
        yield
    finally:
        _state[key] = prev


def set_checkpoint_early_stop(enable):
    """Whether non-reentrant checkpoints made under this context stop their recomputation early."""
    return _overriding("early_stop", enable)


def set_checkpoint_debug_enabled(enabled):
    """Overrides checkpoint's ``debug`` argument while active (None: defer to it)."""
    return _overriding("debug", enabled)


def early_stop(default):
    return _state["early_stop"] if _state["early_stop"] is not None else default


def debug_enabled(default):
    return _state["debug"] if _state["debug"] is not None else default


def _default_meta(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_CHECKS = {"default": _default_meta, "none": lambda _: None}


def metadata_fn(determinism_check):
    if determinism_check in _CHECKS:
        return _CHECKS[determinism_check]
    raise ValueError(f"determinism_check should be one of {list(_CHECKS.keys())}, but got {determinism_check}")


_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""


def _internal_assert(cond):
    if not cond:
        raise AssertionError("Something went unexpectedly wrong in activation checkpoint. Please report this bug by "
                             "filing an issue to PyTorch.")


class _Handle:
    pass


class _Holder:
    def __init__(self):
        self.handles = {}


class _StopRecomputationError(Exception):
    pass


class CheckpointFrame:
    """One non-reentrant checkpoint call: its inputs, its holders and what each backward recomputed."""

    def __init__(self, recompute_fn, early_stop, metadata_fn):
        self.recompute_fn = recompute_fn
        self.saved_args = []
        self.weak_holders = []
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter = defaultdict(int)
        self.is_recomputed = defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.x_metadatas = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args):
        # saved as an op saves its inputs: version-checked, and through an enclosing checkpoint's hook (Rule 2)
        self.saved_args = [(save_in(a),) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self):
        out = []
        for a in self.saved_args:
            if isinstance(a, tuple) and len(a) == 1:
                s = a[0]
                if len(s) == 3:
                    out.append(unpack_tensor(None, s))
                else:
                    check_saved(None, s)
                    out.append(s[0])
            else:
                out.append(a)
        return out

    def check_recomputed_tensors_match(self, gid):
        if self.ignore_saved_mismatch:
            return
        if not len(self.weak_holders) == self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n{_DEBUG_TIP}")
        different = []
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            _internal_assert(gid in holder.handles)
            _internal_assert(holder.handles[gid] is not None)
            _internal_assert(holder.handles[gid] in self.recomputed[gid])
            x_meta = self.x_metadatas[idx]
            recomputed = self.metadata_fn(self.recomputed[gid][holder.handles[gid]])
            if x_meta != recomputed:
                different.append((idx, x_meta, recomputed))
        if different:
            text = "".join(f"tensor at position {i}:\nsaved metadata: {a}\nrecomputed metadata: {b}\n"
                           for i, a, b in different)
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have different "
                                  f"metadata than during the forward pass.\n{text}.\n{_DEBUG_TIP}")


def _recomputation_hook(frame_ref, gid):
    """The hooks of a recomputation: each saved tensor fills the next holder's slot for backward `gid`."""
    def pack_hook(x):
        x = x.detach() if x.requires_grad else x
        frame = frame_ref()
        if frame is None:
            raise AssertionError("Internal error: target_frame reference is None")
        idx = frame.recomp_counter[gid]
        frame.recomp_counter[gid] += 1
        if idx >= len(frame.weak_holders):
            if frame.early_stop:
                raise AssertionError("Unexpected state: target_frame.early_stop is set")
            if not frame.forward_completed:
                frame.ignore_saved_mismatch = True
                return x
            raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during recomputation than "
                                  f"during the original forward pass.\n{_DEBUG_TIP}")
        holder = frame.weak_holders[idx]()
        if holder is not None:      # None: a backward inside the forward already used it
            _internal_assert(holder.handles.get(gid, None) is None)
            holder.handles[gid] = _Handle()
            frame.recomputed[gid][holder.handles[gid]] = x
        if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
            raise _StopRecomputationError
        return x

    return saved_tensors_hooks(pack_hook, lambda x: x)


def checkpoint_hook(frame):
    """The hooks of a checkpointed forward: a holder instead of each saved tensor; the segment rerun on the
    first unpack of each backward."""
    def pack_hook(x):
        holder = _Holder()
        frame.weak_holders.append(weakref.ref(holder))
        if frame.metadata_fn is not None:
            with no_grad():
                frame.x_metadatas.append(frame.metadata_fn(x))
        return holder

    def unpack_hook(holder):
        gid = _state["group"]
        if gid is None:
            gid = _engine.current_graph_task_id()
            if gid == -1:           # unpacked outside a backward (grad_fn._saved_self): a fresh id
                gid = int(uuid.uuid4())
        if not frame.is_recomputed[gid]:
            args = frame.get_inputs()
            try:
                with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                    frame.recompute_fn(*args)
            except _StopRecomputationError:
                pass
            frame.is_recomputed[gid] = True
            frame.check_recomputed_tensors_match(gid)
        _internal_assert(gid in holder.handles)
        if holder.handles[gid] is None:
            extra = ("Performing two backward calls that overlap (i.e. require the same saved activation in order "
                     "to compute gradients) is not allowed while under the torch.utils.checkpoint.GraphExecGroup "
                     "context. " if _state["group"] is not None else "")
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. "
                f"{extra}If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise "
                "please open an issue with details on your use case.")
        _internal_assert(holder.handles[gid] in frame.recomputed[gid])
        ret = frame.recomputed[gid][holder.handles[gid]]
        holder.handles[gid] = None
        return ret

    return saved_tensors_hooks(pack_hook, unpack_hook)
