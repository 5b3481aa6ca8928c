"""torch.compiler.config: the compiler-wide settings.  Its own (job_id, cache_key_tag, the PGO keys, the
dynamic / unbacked source lists, force_disable_caches, force_cudagraph_gc) take their defaults from torch's
environment variables; the others are aliases of torch._dynamo.config's settings (reading or setting one here
reads or sets it there).  glassgrad compiles nothing, so they are stored and read back only."""
import contextlib
import os
import sys
import types

from .._dynamo import config as _dynamo_config

# (the names are served by the module class at the bottom)
__all__ = ["job_id", "dynamic_shapes", "assume_static_by_default", "automatic_dynamic_shapes",  # noqa: F822
           "recompile_limit",
           "accumulated_recompile_limit", "verbose", "capture_scalar_outputs", "capture_dynamic_output_shape_ops",
           "log_file_name", "fail_on_recompile_limit_hit", "allow_unspec_int_on_nn_module",
           "skip_tensor_guards_with_matching_dict_tags", "enable_cpp_symbolic_shape_guards", "wrap_top_frame",
           "reorderable_logging_functions", "force_disable_caches"]

_ALIASES = ("dynamic_shapes", "assume_static_by_default", "automatic_dynamic_shapes", "recompile_limit",
            "accumulated_recompile_limit", "verbose", "capture_scalar_outputs", "capture_dynamic_output_shape_ops",
            "log_file_name", "fail_on_recompile_limit_hit", "allow_unspec_int_on_nn_module",
            "skip_tensor_guards_with_matching_dict_tags", "enable_cpp_symbolic_shape_guards", "wrap_top_frame",
            "reorderable_logging_functions")

# name: (environment variables giving the default, default); force_disable_caches' variables force it on
_OWN = {"job_id": (("TORCH_COMPILE_JOB_ID", "TORCH_COMPILE_STICKY_PGO_KEY"), None),
        "pgo_extra_read_key": (("TORCH_COMPILE_STICKY_PGO_READ",), None),
        "pgo_extra_write_key": (("TORCH_COMPILE_STICKY_PGO_WRITE",), None),
        "cache_key_tag": (("TORCH_COMPILE_CACHE_KEY_TAG",), ""),
        "force_disable_caches": (("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "TORCH_COMPILE_FORCE_DISABLE_CACHES"), False),
        "dynamic_sources": (("TORCH_COMPILE_DYNAMIC_SOURCES",), ""),
        "dynamic_values": (("TORCH_COMPILE_DYNAMIC_VALUES",), ""),
        "unbacked_sources": (("TORCH_COMPILE_UNBACKED_SOURCES",), ""),
        "force_cudagraph_gc": (("TORCH_CUDAGRAPH_GC",), False)}


def _initial(names, default):
    for name in names:
        v = os.environ.get(name)
        if v is not None:
            return v == "1" if isinstance(default, bool) else v
    return default


_values = {k: _initial(*spec) for k, spec in _OWN.items()}


def get_config_copy():
    """A dict of this module's own settings (not the aliases)."""
    return dict(_values)


@contextlib.contextmanager
def _patched(changes):
    mod = sys.modules[__name__]
    old = {k: getattr(mod, k) for k in changes}         # (an unknown name raises here, on entry, as torch's)
    for k, v in changes.items():
        setattr(mod, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(mod, k, v)


def patch(arg1=None, arg2=None, **kwargs):
    """patch(name, value) / patch({name: value}) / patch(name=value): the settings changed for a block (a context
    manager and decorator)."""
    return _patched(_dynamo_config.patch_changes(arg1, arg2, kwargs))


class _ConfigModule(types.ModuleType):
    def __getattr__(self, name):
        if name in _values:
            return _values[name]
        if name in _ALIASES:
            return getattr(_dynamo_config, name)
        raise AttributeError(f"torch.compiler.config.{name} does not exist")

    def __setattr__(self, name, value):
        if name.startswith("__") or name in ("get_config_copy", "patch"):
            super().__setattr__(name, value)
        elif name in _values:
            _values[name] = value
        elif name in _ALIASES:
            setattr(_dynamo_config, name, value)
        else:
            raise AttributeError(f"torch.compiler.config.{name} does not exist")


sys.modules[__name__].__class__ = _ConfigModule
