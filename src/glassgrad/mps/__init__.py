"""torch.mps: Apple's Metal device, which this machine does not have.  torch's answers where its build has no MPS
backend (its Linux and Windows builds): no device (device_count 0, is_available False), manual_seed a no-op,
and every function that needs the device raises torch's ``Cannot execute ...() without MPS backend.``"""
import os

from .event import Event, _no_mps
from . import profiler

__all__ = ["compile_shader", "load_metallib", "device_count", "get_rng_state", "manual_seed", "seed",
           "set_rng_state", "synchronize", "empty_cache", "set_per_process_memory_fraction",
           "current_allocated_memory", "driver_allocated_memory", "Event", "profiler", "recommended_max_memory",
           "is_available"]


def device_count():
    """The number of MPS devices: 0."""
    return 0


def is_available():
    """Whether an MPS device is usable: False."""
    return device_count() > 0


def _is_in_bad_fork():
    return False


def synchronize():
    raise _no_mps("deviceSynchronize")


def get_rng_state(device="mps"):
    raise _no_mps("getDefaultGenerator")


def set_rng_state(new_state, device="mps"):
    new_state.clone()           # (torch copies the state first: a non-tensor fails there)
    raise _no_mps("getDefaultGenerator")


def manual_seed(seed):
    """A no-op without MPS (torch.manual_seed calls it on every build)."""
    return None


def seed():
    raise _no_mps("getDefaultGenerator")


def empty_cache():
    raise _no_mps("emptyCache")


def set_per_process_memory_fraction(fraction):
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 2:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~2")
    raise _no_mps("setMemoryFraction")


def current_allocated_memory():
    raise _no_mps("getCurrentAllocatedMemory")


def driver_allocated_memory():
    raise _no_mps("getDriverAllocatedMemory")


def recommended_max_memory():
    raise _no_mps("getRecommendedMaxMemory")


def compile_shader(source):
    raise RuntimeError("MPS is not available")


def load_metallib(source):
    if isinstance(source, (bytes, bytearray, str, os.PathLike)):
        raise RuntimeError("MPS is not available")
    raise TypeError(f"expected bytes or path, got {type(source).__name__}")
