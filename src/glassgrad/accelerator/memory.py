"""torch.accelerator.memory: the accelerator's memory counters (torch.cuda's, through CuPy's pool);
torch's RuntimeError without an accelerator."""
from ._common import require

__all__ = ["empty_cache", "empty_host_cache", "get_memory_info", "max_memory_allocated", "max_memory_reserved",
           "memory_allocated", "memory_reserved", "memory_stats", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats"]


def empty_cache():
    require().empty_cache()


def empty_host_cache():
    require()


def get_memory_info(device_index=None, /):
    return require().mem_get_info(device_index)


def memory_allocated(device_index=None, /):
    return require().memory_allocated(device_index)


def max_memory_allocated(device_index=None, /):
    return require().max_memory_allocated(device_index)


def memory_reserved(device_index=None, /):
    return require().memory_reserved(device_index)


def max_memory_reserved(device_index=None, /):
    return require().max_memory_reserved(device_index)


def memory_stats(device_index=None, /):
    return require().memory_stats(device_index)


def reset_peak_memory_stats(device_index=None, /):
    require().reset_peak_memory_stats(device_index)


def reset_accumulated_memory_stats(device_index=None, /):
    require()
