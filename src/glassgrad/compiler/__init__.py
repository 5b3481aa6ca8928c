"""torch.compile and torch.compiler, eagerly: glassgrad has no graph compiler, so torch.compile checks its
arguments as torch does (mode / options, the backend's name) and returns a callable that runs the code as it
is -- identical results.  A module comes back as torch's `OptimizedModule` (the module under ``_orig_mod``,
so its state_dict keys read as torch's); a function comes back wrapped; ``disable=True`` returns the model
itself.  A callable backend is accepted and never called (there is no FX graph to hand it)."""
import functools

__all__ = ["compile", "allow_in_graph", "assume_constant_result", "cudagraph_mark_step_begin", "disable",
           "is_compiling", "is_dynamo_compiling", "is_exporting", "list_backends", "reset", "set_stance",
           "substitute_in_graph", "wrap_numpy", "get_default_backend", "set_default_backend",
           "nested_compile_region", "set_enable_guard_collectives", "save_cache_artifacts", "load_cache_artifacts",
           "skip_guard_on_inbuilt_nn_modules_unsafe", "skip_guard_on_all_nn_modules_unsafe",
           "keep_tensor_guards_unsafe", "skip_guard_on_globals_unsafe", "skip_all_guards_unsafe",
           "keep_portable_guards_unsafe"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_BACKENDS = ("cudagraphs", "inductor", "openxla", "tvm")
_DEBUG_BACKENDS = ("eager", "aot_eager", "aot_eager_decomp_partition", "aot_eager_decomp_partition_crossref",
                   "aot_eager_decomp_partition_with_mode", "aot_ts", "eager_debug", "eager_noexcept",
                   "aot_inductor_debug")
_state = {"default_backend": "inductor", "stance": "default", "guard_collectives": False}


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable=False):
    """torch.compile: `model` (a module or a function; None: a decorator) runnable with identical results."""
    if model is None:
        def fn(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)
        return fn
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same "
                           "time.")
    if backend == "inductor" and mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if not callable(backend) and backend not in _BACKENDS + _DEBUG_BACKENDS:
        from .._dynamo.exc import InvalidBackend
        raise InvalidBackend(backend)
    if disable:
        return model
    from ..nn import Module
    if isinstance(model, Module):
        from .._dynamo.eval_frame import OptimizedModule
        return OptimizedModule(model)
    if not callable(model):
        raise RuntimeError(f"Model must be callable, got {type(model).__name__}")

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)
    compiled._torchdynamo_orig_callable = model
    return compiled


def disable(fn=None, recursive=True, *, reason=None):
    """torch.compiler.disable: the function as it is (nothing here is compiled); a decorator without fn."""
    if fn is None:
        return lambda f: f
    return fn


def allow_in_graph(fn):
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False, skip_signature_check=False):
    return lambda fn: fn


def assume_constant_result(fn):
    return fn


def wrap_numpy(fn):
    return fn


def is_compiling():
    """False: glassgrad never traces code into a graph."""
    return False


def is_dynamo_compiling():
    return False


def is_exporting():
    return False


def reset():
    """Clears compiled code: there is none."""


def cudagraph_mark_step_begin():
    """No CUDA graphs here: nothing to mark."""


def list_backends(exclude_tags=("debug", "experimental")):
    names = _BACKENDS if exclude_tags else _BACKENDS + _DEBUG_BACKENDS
    return sorted(names)


def get_default_backend():
    return _state["default_backend"]


def set_default_backend(backend):
    _state["default_backend"] = backend


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """Stores the stance (torch's values); eager code runs the same under each."""
    if stance not in ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile",
                      "aot_eager_then_compile"):
        raise RuntimeError(f"invalid torch.compile stance '{stance}'")
    _state["stance"] = stance


def nested_compile_region(fn=None, *, options=None, max_reuse_entries=8, reuse_hash_fn=None):
    """Marks a region torch compiles once and reuses: the function as it is here (also as a decorator)."""
    if fn is None:
        return lambda f: f
    return fn


def set_enable_guard_collectives(enabled):
    """Stores the switch; returns the previous value (as torch's)."""
    old, _state["guard_collectives"] = _state["guard_collectives"], bool(enabled)
    return old


# -- compile caches: glassgrad compiles nothing, so there are no artifacts to save and none it could use ----------

def save_cache_artifacts():
    """The cache artifacts of the compilations so far, serialized: None, as torch answers when nothing was
    compiled."""
    return None


def load_cache_artifacts(serialized_artifacts):
    """Hot-load artifacts from save_cache_artifacts: glassgrad has no compiler caches to fill, so nothing is
    loaded and there is no CacheInfo (None)."""
    return None


# -- guard filters (torch.compile(options={"guard_filter_fn": ...})): one keep-flag per guard entry -------------

def skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries):
    """Keep every guard but those on built-in nn modules (torch.nn.Linear, ...)."""
    return [not e.orig_guard.source.is_unspecialized_builtin_nn_module() for e in guard_entries]


def skip_guard_on_all_nn_modules_unsafe(guard_entries):
    """Keep every guard but those on nn modules, user-defined or built in."""
    return [not e.orig_guard.source.is_unspecialized_nn_module() for e in guard_entries]


def keep_tensor_guards_unsafe(guard_entries, keep_parameters=False):
    """Keep only the tensor-match guards (on parameters too with `keep_parameters`)."""
    from ..nn.parameter import Parameter
    return [e.guard_type == "TENSOR_MATCH" and (keep_parameters or not isinstance(e.value, Parameter))
            for e in guard_entries]


def skip_guard_on_globals_unsafe(guard_entries):
    """Keep every guard but those on globals."""
    return [not e.is_global for e in guard_entries]


def skip_all_guards_unsafe(guard_entries):
    """Keep no guard."""
    return [False for _ in guard_entries]


def keep_portable_guards_unsafe(guard_entries):
    """Keep the global-state and shape-env guards and the tensor-match guards on non-globals."""
    return [e.guard_type in ("GLOBAL_STATE", "SHAPE_ENV") or (e.guard_type == "TENSOR_MATCH" and not e.is_global)
            for e in guard_entries]


from . import config  # noqa: E402,F401  (torch.compiler.config; _dynamo imports this package first)
