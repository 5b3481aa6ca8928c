"""torch._dynamo.config: the switches scripts set before torch.compile (suppress_errors, cache_size_limit, ...).
glassgrad compiles nothing, so they are stored and read back only; `patch` sets some for a block."""
import contextlib

suppress_errors = False
verbose = False
cache_size_limit = 8
recompile_limit = 8
accumulated_cache_size_limit = 256
accumulated_recompile_limit = 256
optimize_ddp = True
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
automatic_dynamic_shapes = True
assume_static_by_default = True
specialize_int = False
specialize_float = False
force_parameter_static_shapes = True
inline_inbuilt_nn_modules = True
guard_nn_modules = False
error_on_recompile = False
allow_unspec_int_on_nn_module = False
dynamic_shapes = True
raise_on_ctx_manager_usage = True
skip_nnmodule_hook_guards = True
log_compilation_metrics = True
log_file_name = None
fail_on_recompile_limit_hit = False
skip_tensor_guards_with_matching_dict_tags = True
enable_cpp_symbolic_shape_guards = False
wrap_top_frame = False
reorderable_logging_functions = set()


@contextlib.contextmanager
def _patched(changes):
    g = globals()
    for k in changes:
        if k not in g or k.startswith("_"):
            raise AttributeError(f"{__name__}.{k} does not exist")
    old = {k: g[k] for k in changes}
    g.update(changes)
    try:
        yield
    finally:
        g.update(old)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, changes):
        self._changes = changes
        self._cm = None

    def __enter__(self):
        self._cm = _patched(self._changes)
        return self._cm.__enter__()

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def patch_changes(arg1, arg2, kwargs):
    """The settings a config.patch(name, value) / patch({name: value}) / patch(name=value) call changes."""
    changes = dict(kwargs)
    if isinstance(arg1, str):
        changes[arg1] = arg2
    elif isinstance(arg1, dict):
        changes.update(arg1)
    return changes


def patch(arg1=None, arg2=None, **kwargs):
    """config.patch(name, value) / patch({name: value}) / patch(name=value): a context manager and decorator."""
    return _Patch(patch_changes(arg1, arg2, kwargs))
