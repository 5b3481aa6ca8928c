"""torch.accelerator: the device-agnostic accelerator API.  glassgrad's accelerator is CUDA through CuPy;
without one, torch's CPU-build answers (no accelerator, 0 devices, RuntimeError for device access)."""
import warnings

from .. import backend
from .._device import device as _device_cls
from ._common import require
from . import memory  # noqa: F401
from .memory import (empty_cache, empty_host_cache, get_memory_info, max_memory_allocated,  # noqa: F401
                     max_memory_reserved, memory_allocated, memory_reserved, memory_stats,
                     reset_accumulated_memory_stats, reset_peak_memory_stats)

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "current_stream", "device_count",
           "device_index", "is_available", "set_device_idx", "set_device_index", "set_stream", "synchronize",
           *memory.__all__]


def device_count():
    return backend.device_count()


def is_available():
    return backend.cuda_available()


def current_accelerator(check_available=False):
    """device('cuda') when CuPy has a GPU, else None."""
    return _device_cls("cuda") if backend.cuda_available() else None


def current_device_index():
    return require().current_device()


def current_device_idx():
    """Deprecated name of current_device_index (torch's FutureWarning)."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /):
    require().set_device(device)


def set_device_idx(device, /):
    """Deprecated name of set_device_index (torch's FutureWarning)."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


def synchronize(device=None, /):
    require().synchronize(device)


def current_stream(device=None, /):
    return require().current_stream(device)


def set_stream(stream):
    require().set_stream(stream)


class device_index:
    """Makes accelerator device `device` current inside the block (None: no change)."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            cuda = require()
            self.prev_idx = cuda.current_device()
            cuda.set_device(self.idx)
        return None

    def __exit__(self, *exc):
        if self.idx is not None:
            require().set_device(self.prev_idx)
        return False
