"""torch's autocast state functions (torch.is_autocast_enabled, torch.set_autocast_dtype, ...): the flags of
the leaf ``_autocast_state``, with torch's argument checks and deprecation warnings."""
import warnings

from .. import _dtype
from .._autocast_state import state, device_type as _devtype, set_enabled as _set_enabled, clear_cache

__all__ = ["is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
           "is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype",
           "get_autocast_gpu_dtype", "set_autocast_gpu_dtype", "clear_autocast_cache", "autocast_increment_nesting",
           "autocast_decrement_nesting", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "is_autocast_ipu_enabled", "set_autocast_ipu_enabled", "get_autocast_ipu_dtype", "set_autocast_ipu_dtype",
           "is_autocast_xla_enabled", "set_autocast_xla_enabled", "get_autocast_xla_dtype", "set_autocast_xla_dtype"]


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def _str(fn, v, pos=1):
    if not isinstance(v, str):
        raise TypeError(f"{fn}(): argument 'device_type' (position {pos}) must be str, not {type(v).__name__}")
    return _devtype(v)


def _bool(fn, v, pos):
    if v.__class__ is not bool:
        raise TypeError(f"{fn}(): argument 'enabled' (position {pos}) must be bool, not {type(v).__name__}")


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for `device_type` (no argument: CUDA's, as torch)."""
    return state.enabled["cuda" if device_type is None else _str("is_autocast_enabled", device_type)]


def set_autocast_enabled(*args):
    """set_autocast_enabled(enabled) (CUDA's) or set_autocast_enabled(device_type, enabled)."""
    if len(args) == 1:
        _bool("set_autocast_enabled", args[0], 1)
        _set_enabled("cuda", args[0])
        return
    dev = _str("set_autocast_enabled", args[0])
    _bool("set_autocast_enabled", args[1], 2)
    _set_enabled(dev, args[1])


def get_autocast_dtype(device_type):
    if not isinstance(device_type, str):
        raise TypeError(f"get_autocast_dtype(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    dev = _devtype(device_type, available=True)
    if dev == "hip":
        return _dtype.float16
    if dev not in state.dtype:
        raise RuntimeError("unsupported scalarType")
    return state.dtype[dev]


def set_autocast_dtype(device_type, dtype):
    dev = _str("set_autocast_dtype", device_type)
    if dtype.__class__ is not _dtype.dtype:
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, not "
                        f"{type(dtype).__name__}")
    state.dtype[dev] = dtype


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return state.enabled["cpu"]


def set_autocast_cpu_enabled(enabled):
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _bool("set_autocast_cpu_enabled", enabled, 1)
    _set_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return state.dtype["cpu"]


def set_autocast_cpu_dtype(dtype):
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return state.dtype["cuda"]


def set_autocast_gpu_dtype(dtype):
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def clear_autocast_cache():
    clear_cache()


def autocast_increment_nesting():
    state.nesting += 1
    return state.nesting


def autocast_decrement_nesting():
    state.nesting -= 1
    return state.nesting


def is_autocast_cache_enabled():
    return state.cache_enabled


def set_autocast_cache_enabled(enabled):
    if enabled.__class__ is not bool:
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    state.cache_enabled = enabled


def _legacy_device_functions(dev):
    """torch's deprecated per-device spellings (is_autocast_ipu_enabled, set_autocast_xla_dtype, ...)."""
    def is_enabled():
        _deprecated(f"is_autocast_{dev}_enabled()", f"is_autocast_enabled('{dev}')")
        return state.enabled[dev]

    def set_enabled(enabled):
        _deprecated(f"set_autocast_{dev}_enabled(enabled)", f"set_autocast_enabled('{dev}', enabled)")
        _bool(f"set_autocast_{dev}_enabled", enabled, 1)
        _set_enabled(dev, enabled)

    def get_dtype():
        _deprecated(f"get_autocast_{dev}_dtype()", f"get_autocast_dtype('{dev}')")
        return state.dtype[dev]

    def set_dtype(dtype):
        _deprecated(f"set_autocast_{dev}_dtype(dtype)", f"set_autocast_dtype('{dev}', dtype)")
        set_autocast_dtype(dev, dtype)
    fns = (is_enabled, set_enabled, get_dtype, set_dtype)
    for f, name in zip(fns, (f"is_autocast_{dev}_enabled", f"set_autocast_{dev}_enabled", f"get_autocast_{dev}_dtype",
                             f"set_autocast_{dev}_dtype")):
        f.__name__ = f.__qualname__ = name
    return fns


is_autocast_ipu_enabled, set_autocast_ipu_enabled, get_autocast_ipu_dtype, set_autocast_ipu_dtype = \
    _legacy_device_functions("ipu")
is_autocast_xla_enabled, set_autocast_xla_enabled, get_autocast_xla_dtype, set_autocast_xla_dtype = \
    _legacy_device_functions("xla")
