"""torch.utils.checkpoint: activation checkpointing (trade compute for memory).

``checkpoint(function, *args, use_reentrant=...)`` runs `function` without keeping the tensors its ops save for
backward, and runs it again in backward to get them back; ``checkpoint_sequential`` does so for the segments of
a sequential model.  Both of torch's variants, as torch builds them:

  * reentrant (``use_reentrant=True``, what a missing ``use_reentrant`` means, with torch's warning):
    ``CheckpointFunction``, a custom Function whose forward runs `function` under no_grad (nothing is recorded
    at all) and whose backward runs it again with grad enabled and calls ``autograd.backward`` inside the
    backward (hence torch's error under ``autograd.grad`` / ``backward(inputs=...)``);
  * non-reentrant (``use_reentrant=False``): `function` runs with grad, under a saved-tensor hook
    (autograd/saved_hooks.py) whose pack keeps a small ``_Holder`` instead of the tensor; the first unpack in a
    backward reruns `function` under a second hook that fills the holders (and stops as soon as the last
    one is filled, torch's early stop), after checking that as many tensors were saved, with the same
    shapes / dtypes / devices (``determinism_check="default"``).  ``_frame.py`` holds that machinery.

The CPU RNG state is saved at forward and restored for the recomputation (``preserve_rng_state=True``), so
dropout draws the same mask; the forward's autocast state (CPU and CUDA: enabled, dtype, cache) is re-entered for
it, as torch does, so a segment recomputed in backward -- outside the autocast block -- computes in the same
dtypes.  glassgrad has no per-device RNG besides the CPU generator, so there is no device state to stash; ``debug=True`` is accepted but its error text has no operator log (glassgrad has no
dispatch-mode logging).
"""
import contextlib
import warnings

from .. import autograd as _autograd
from .._tensor import Tensor
from ..autograd import engine as _engine
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..ops import random as _random
from . import _frame
from ._frame import CheckpointError, GraphExecGroup, set_checkpoint_early_stop, set_checkpoint_debug_enabled

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "check_backward_validity",
           "detach_variable", "get_device_states", "set_device_states", "noop_context_fn", "set_checkpoint_early_stop",
           "DefaultDeviceType", "set_checkpoint_debug_enabled", "GraphExecGroup"]

_WARN_REENTRANT = ("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
                   "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False "
                   "is recommended, but if you need to preserve the current default behavior, you can pass "
                   "use_reentrant=True. Refer to docs for more details on the differences between the two variants.")
_WARN_SEQUENTIAL = ("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                    "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                    "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                    "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
                    "two variants.")


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    if isinstance(inputs, tuple):
        out = []
        for inp in inputs:
            if not isinstance(inp, Tensor):
                out.append(inp)
                continue
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            out.append(x)
        return tuple(out)
    raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


class DefaultDeviceType:
    """The device type whose RNG state checkpoint saves when no argument is on an accelerator ("cpu" here:
    glassgrad's accelerator tensors draw from the CPU generator too)."""
    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


def get_device_states(*args):
    """(device ids, RNG states) of the accelerator tensors among `args`: glassgrad keeps no per-device RNG
    state, so both are empty."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    """Nothing to restore: glassgrad has no per-device RNG state (see get_device_states)."""


def _autocast_kwargs():
    """The autocast state a checkpointed forward runs under (torch's cpu / device autocast kwargs)."""
    from .._autocast_state import state
    return {d: dict(enabled=state.enabled[d], dtype=state.dtype[d], cache_enabled=state.cache_enabled)
            for d in ("cpu", "cuda")}


@contextlib.contextmanager
def _autocast_as(kwargs):
    """Re-enter the forward's autocast state for the recomputation."""
    from ..amp import autocast
    with contextlib.ExitStack() as stack:
        for device, kw in kwargs.items():
            if device == "cpu" or kw["enabled"]:      # (a disabled CUDA autocast has nothing to restore)
                stack.enter_context(autocast(device, **kw))
        yield


@contextlib.contextmanager
def _fork_rng(enabled, state):
    """torch.random.fork_rng for the CPU generator, entered with `state` set (when enabled)."""
    if not enabled:
        yield
        return
    outer = _random.get_rng_state()
    _random.set_rng_state(state)
    try:
        yield
    finally:
        _random.set_rng_state(outer)


class CheckpointFunction(Function):
    """The reentrant variant: no graph in forward, the segment rerun and backpropagated inside backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = _random.get_rng_state()
        ctx.autocast_kwargs = _autocast_kwargs()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        if not _engine.is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                "`inputs` parameter to .backward(). To resolve this error, you can either set use_reentrant=False, "
                "or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = ctx.saved_tensors[i]
        with _fork_rng(ctx.preserve_rng_state, getattr(ctx, "fwd_cpu_state", None)):
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad(), _autocast_as(ctx.autocast_kwargs):
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outputs_with_grad = []
        args_with_grad = []
        for i in range(len(outputs)):
            if isinstance(outputs[i], Tensor) and outputs[i].requires_grad:
                outputs_with_grad.append(outputs[i])
                args_with_grad.append(args[i])
        if len(outputs_with_grad) == 0:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _autograd.backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs)
        return (None, None) + grads


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    """Checkpoint a model or part of the model (torch.utils.checkpoint.checkpoint)."""
    if use_reentrant is None:
        warnings.warn(_WARN_REENTRANT, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    gen = _checkpoint_without_reentrant_generator(function, preserve, context_fn, determinism_check, debug,
                                                  early_stop, *args, **kwargs)
    next(gen)                                   # pre-forward: the hooks are set
    try:
        ret = function(*args, **kwargs)
    except BaseException as e:
        try:
            gen.throw(e)
        except StopIteration as stop:
            raise RuntimeError(
                "torch.utils.checkpoint: the forward context provided by context_fn suppressed an exception raised "
                "during the checkpointed forward. This is not supported because checkpoint cannot return a value "
                "for a failed forward.") from stop
        raise
    try:
        next(gen)                               # post-forward: the hooks are removed
    except StopIteration:
        return ret
    raise AssertionError("torch.utils.checkpoint: expected context_fn generator to yield exactly twice, but it "
                         "yielded more than twice.")


def _checkpoint_without_reentrant_generator(fn, preserve_rng_state=True, context_fn=noop_context_fn,
                                            determinism_check="default", debug=False, early_stop=True, *args,
                                            **kwargs):
    """The non-reentrant variant, as a generator that yields once the forward's hooks are set."""
    if _frame.debug_enabled(debug) and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    metadata_fn = _frame.metadata_fn(determinism_check)
    forward_context, recompute_context = context_fn()
    fwd_cpu_state = _random.get_rng_state() if preserve_rng_state else None
    autocast_kwargs = _autocast_kwargs()

    def recompute_fn(*inputs):
        with _fork_rng(preserve_rng_state, fwd_cpu_state), _autocast_as(autocast_kwargs), recompute_context:
            fn(*inputs, **kwargs)

    frame = _frame.CheckpointFrame(recompute_fn, _frame.early_stop(early_stop), metadata_fn)
    if not is_grad_enabled():
        yield
        return
    frame.save_inputs(*args)
    suppressed = False
    with _frame.checkpoint_hook(frame), forward_context:
        try:
            yield
        except BaseException:
            suppressed = True
            raise
    if suppressed:
        raise RuntimeError(
            "torch.utils.checkpoint: the forward context provided by context_fn suppressed an exception raised "
            "during the checkpointed forward. This is not supported because checkpoint cannot return a value for "
            "a failed forward.")
    frame.forward_completed = True


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Checkpoint a sequential model: every segment but the last runs under checkpoint."""
    if use_reentrant is None:
        warnings.warn(_WARN_SEQUENTIAL, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
