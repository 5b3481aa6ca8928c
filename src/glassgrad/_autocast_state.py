"""Autocast's process-wide state (torch's per-device autocast flags, dtypes, nesting and cast cache).

A leaf: ops read ``state.on`` (one attribute, True only while CPU or CUDA autocast is on) before anything else,
so the ordinary path pays one flag test.  ``glassgrad.amp`` and the ``torch.*`` autocast functions
(``is_autocast_enabled``, ``set_autocast_dtype``, ...) read and write the rest; ``ops/_autocast.py``
holds the per-op cast policies.
"""
from . import _dtype

# torch's device-type names (its error lists them in this order), and those autocast knows
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_DEFAULTS = {"cpu": "bfloat16", "cuda": "float16", "ipu": "float16", "xpu": "float16", "maia": "bfloat16",
             "xla": "bfloat16", "mps": "float16", "hpu": "bfloat16", "mtia": "float16", "privateuseone": "float16"}


class _State:
    __slots__ = ("on", "enabled", "dtype", "nesting", "cache_enabled", "cache")

    def __init__(self):
        self.on = False                      # CPU or CUDA autocast is on: the one flag the ops test
        self.enabled = dict.fromkeys(_DEFAULTS, False)
        self.dtype = {k: getattr(_dtype, v) for k, v in _DEFAULTS.items()}
        self.nesting = 0
        self.cache_enabled = True
        self.cache = {}                      # id(fp32 leaf weight) -> (the weight, its lower-precision copy)


state = _State()


def device_type(name, available=False):
    """torch's check of an autocast device-type string; returns the type.  ``available``: False (no error)
    for a real device type that has no autocast."""
    base = name.split(":")[0] if isinstance(name, str) else name
    if base not in DEVICE_TYPES:
        raise RuntimeError("Expected one of " + ", ".join(DEVICE_TYPES)
                           + f" device type at start of device string: {name}")
    if base not in _DEFAULTS and not available:
        raise RuntimeError("unknown device type for autocast in get_autocast_dispatch_key_from_device_type")
    return base


def set_enabled(dev, enabled):
    state.enabled[dev] = enabled
    state.on = state.enabled["cpu"] or state.enabled["cuda"]


def clear_cache():
    state.cache.clear()
