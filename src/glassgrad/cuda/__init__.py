"""torch.cuda: the device surface scripts touch, answered truthfully.

Without a GPU (no CuPy, or CuPy without a device) every function answers as torch's CPU build does:
``is_available()`` False, ``device_count()`` 0, the memory counters 0, and torch's own errors where it
raises (``AssertionError: Torch not compiled with CUDA enabled`` from the functions that initialise CUDA).
With CuPy and a GPU (glassgrad's CUDA backend, ``backend.py``) the answers come from CuPy: the current
device, its properties, the default memory pool's byte counts, streams and events.
"""
import collections
import warnings

from .. import backend
from .._device import device as _device_cls
from . import amp, nvtx  # noqa: F401
from ._legacy import (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor,  # noqa: F401
                      ShortTensor, CharTensor, ByteTensor, BoolTensor)

__all__ = ["is_available", "device_count", "is_initialized", "init", "current_device", "set_device",
           "get_device_name", "get_device_properties", "get_device_capability", "synchronize", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "memory_allocated", "memory_reserved", "max_memory_allocated",
           "max_memory_reserved", "memory_cached", "max_memory_cached", "memory_stats", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "empty_cache", "mem_get_info", "is_bf16_supported", "is_tf32_supported",
           "get_arch_list", "get_gencode_flags", "initial_seed", "get_rng_state", "set_rng_state",
           "get_rng_state_all", "set_rng_state_all", "device", "device_of", "Stream", "Event", "StreamContext", "stream",
           "current_stream", "default_stream", "set_stream", "ipc_collect", "set_per_process_memory_fraction",
           "get_per_process_memory_fraction", "memory_stats_as_nested_dict", "reset_max_memory_cached",
           "can_device_access_peer", "is_current_stream_capturing", "OutOfMemoryError", "FloatTensor", "DoubleTensor",
           "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
           "BoolTensor"]

has_half = True           # as torch's builds answer
has_magma = False


class OutOfMemoryError(RuntimeError):
    """torch.OutOfMemoryError (torch.cuda.OutOfMemoryError): a device ran out of memory."""


_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _cp():
    """CuPy when a GPU is there, else None."""
    return backend._cupy if backend.cuda_available() else None


def _lazy_init():
    """torch's _lazy_init: CuPy, or torch's CPU-build AssertionError."""
    cp = _cp()
    if cp is None:
        raise AssertionError(_NOT_COMPILED)
    return cp


def _index(dev, optional=True):
    """torch's _get_device_index: an int, 'cuda:1' or a device; no index: the current device when `optional`
    (None without a GPU), else torch's ValueError."""
    if isinstance(dev, str):
        dev = _device_cls(dev)
    if isinstance(dev, _device_cls):
        if dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        if dev.index is None and not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{dev}")
        dev = dev.index
    if dev is None:
        return current_device() if _cp() is not None else None
    return dev


def is_available():
    return backend.cuda_available()


def device_count():
    return backend.device_count()


def is_initialized():
    return backend.cuda_available()


def init():
    _lazy_init()


def _is_compiled():
    return backend._cupy is not None


def current_device():
    return _lazy_init().cuda.runtime.getDevice()


def set_device(device):
    idx = _index(device, optional=False)
    if idx >= 0:
        cp = _cp()
        if cp is None:
            raise AttributeError("module 'torch._C' has no attribute '_cuda_setDevice'")
        cp.cuda.runtime.setDevice(idx)


def _props(device):
    cp = _lazy_init()
    return cp.cuda.runtime.getDeviceProperties(_index(device))


class _CudaDeviceProperties:
    """What torch.cuda.get_device_properties answers (name, capability, memory, multiprocessors)."""

    def __init__(self, p):
        name = p["name"]
        self.name = name.decode() if isinstance(name, bytes) else name
        self.major, self.minor = p["major"], p["minor"]
        self.total_memory = p["totalGlobalMem"]
        self.multi_processor_count = p["multiProcessorCount"]
        self.is_integrated = bool(p.get("integrated", 0))
        self.is_multi_gpu_board = bool(p.get("isMultiGpuBoard", 0))

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    return _CudaDeviceProperties(_props(device))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return (p.major, p.minor)


def is_bf16_supported(including_emulation=True):
    return _cp() is not None and get_device_capability()[0] >= 8


def is_tf32_supported():
    return _cp() is not None and get_device_capability()[0] >= 8


def synchronize(device=None):
    _lazy_init()
    backend.synchronize(device)


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


# -- RNG: each CUDA device has its own Philox generator (ops/random.py); seeds kept until CUDA is there, as torch --
def _gen(device="cuda"):
    from ..ops import random as _random
    idx = _index(device)
    return _random.cuda_generator(current_device() if idx is None or idx < 0 else idx)


def manual_seed(seed):
    seed = int(seed)
    if _cp() is None:           # torch queues it until CUDA is initialised: without CUDA, nothing to seed
        return
    _gen().manual_seed(seed)


def manual_seed_all(seed):
    seed = int(seed)
    from ..ops import random as _random
    _random.seed_cuda_all(seed)


def seed():
    if _cp() is not None:
        _gen().seed()


def seed_all():
    if _cp() is None:
        return
    s = _gen(0).seed()
    manual_seed_all(s)


def initial_seed():
    _lazy_init()
    return _gen().initial_seed()


def get_rng_state(device="cuda"):
    """The CUDA generator's state: 16 bytes, seed then Philox offset (a CPU ByteTensor, as torch)."""
    _lazy_init()
    return _gen(device).get_state()


def set_rng_state(new_state, device="cuda"):
    _lazy_init()
    _gen(device).set_state(new_state)


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, st in enumerate(new_states):
        set_rng_state(st, i)


def __getattr__(name):
    if name == "default_generators":          # one generator per device, made on first use
        if _cp() is None:
            return ()
        from ..ops import random as _random
        return tuple(_random.cuda_generator(i) for i in range(device_count()))
    raise AttributeError(f"module 'glassgrad.cuda' has no attribute '{name}'")


# -- memory: CuPy's default pool when there is a GPU; 0 otherwise (torch's CPU build) --
_peaks = {"allocated": 0, "reserved": 0}


def _pool_bytes():
    cp = _cp()
    if cp is None:
        return 0, 0
    pool = cp.get_default_memory_pool()
    used, total = pool.used_bytes(), pool.total_bytes()
    _peaks["allocated"] = max(_peaks["allocated"], used)
    _peaks["reserved"] = max(_peaks["reserved"], total)
    return used, total


def memory_allocated(device=None):
    return _pool_bytes()[0]


def memory_reserved(device=None):
    return _pool_bytes()[1]


def max_memory_allocated(device=None):
    """With CuPy: the largest pool use seen by a memory query since the last reset (CuPy keeps no peak)."""
    _pool_bytes()
    return _peaks["allocated"]


def max_memory_reserved(device=None):
    _pool_bytes()
    return _peaks["reserved"]


def memory_cached(device=None):
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning,
                  stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None):
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def memory_stats(device=None):
    if _cp() is None:
        return collections.OrderedDict()
    used, total = _pool_bytes()
    return collections.OrderedDict([("allocated_bytes.all.current", used),
                                    ("allocated_bytes.all.peak", _peaks["allocated"]),
                                    ("reserved_bytes.all.current", total),
                                    ("reserved_bytes.all.peak", _peaks["reserved"])])


def reset_peak_memory_stats(device=None):
    if _cp() is None:
        raise AttributeError("module 'torch._C' has no attribute '_cuda_resetPeakMemoryStats'")
    _peaks["allocated"] = _peaks["reserved"] = 0
    _pool_bytes()


def reset_max_memory_cached(device=None):
    warnings.warn("torch.cuda.reset_max_memory_cached now calls torch.cuda.reset_peak_memory_stats, which resets "
                  "/all/ peak memory stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def memory_stats_as_nested_dict(device=None):
    """memory_stats' dotted keys as nested dicts ({} without a GPU)."""
    out = {}
    for key, v in memory_stats(device).items():
        *path, last = key.split(".")
        d = out
        for p in path:
            d = d.setdefault(p, {})
        d[last] = v
    return out


def reset_max_memory_allocated(device=None):
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, which resets "
                  "/all/ peak memory stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def empty_cache():
    cp = _cp()
    if cp is not None:
        cp.get_default_memory_pool().free_all_blocks()


def mem_get_info(device=None):
    return _lazy_init().cuda.runtime.memGetInfo()


def ipc_collect():
    _lazy_init()


def get_per_process_memory_fraction(device=None):
    """The pool's limit as a fraction of the device's memory (1.0: no limit)."""
    cp = _lazy_init()
    limit = cp.get_default_memory_pool().get_limit()
    return limit / get_device_properties(device).total_memory if limit else 1.0


def can_device_access_peer(device, peer_device):
    cp = _lazy_init()
    d, p = _index(device), _index(peer_device)
    if d < 0 or d >= device_count():
        raise AssertionError("Invalid device id")
    if p < 0 or p >= device_count():
        raise AssertionError("Invalid peer device id")
    return bool(cp.cuda.runtime.deviceCanAccessPeer(d, p))


def is_current_stream_capturing():
    cp = _cp()
    if cp is None:
        raise RuntimeError("Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing")
    return cp.cuda.get_current_stream().is_capturing()


def set_per_process_memory_fraction(fraction, device=None):
    cp = _lazy_init()
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    cp.get_default_memory_pool().set_limit(fraction=fraction)


# -- devices, streams, events --
class device:
    """Context manager that makes a CUDA device current (torch.cuda.device)."""

    def __init__(self, device):
        self.idx = _index(device)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _exchange_device(self.idx)

    def __exit__(self, type, value, traceback):
        self.idx = _exchange_device(self.prev_idx)
        return False


def _exchange_device(idx):
    if idx < 0:
        return -1
    cp = _cp()
    if cp is None:
        raise RuntimeError("PyTorch was compiled without CUDA support")
    prev = cp.cuda.runtime.getDevice()
    if prev != idx:
        cp.cuda.runtime.setDevice(idx)
    return prev


class device_of(device):
    """torch.cuda.device_of(obj): the device of a CUDA tensor current inside the block (CPU: no change)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


class Stream:
    """A CUDA stream (CuPy's)."""

    def __init__(self, device=None, priority=0, **kwargs):
        cp = _cp()
        if cp is None:
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        self.cupy_stream = cp.cuda.Stream(non_blocking=True)
        self.device = _device_cls("cuda", cp.cuda.runtime.getDevice())

    def synchronize(self):
        self.cupy_stream.synchronize()

    def query(self):
        return self.cupy_stream.done

    def wait_event(self, event):
        self.cupy_stream.wait_event(event.cupy_event)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event


class Event:
    """A CUDA event (CuPy's)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        cp = _cp()
        if cp is None:
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self.cupy_event = cp.cuda.Event(block=blocking, disable_timing=not enable_timing, interprocess=interprocess)

    def record(self, stream=None):
        self.cupy_event.record(None if stream is None else stream.cupy_stream)

    def wait(self, stream=None):
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        return self.cupy_event.done

    def synchronize(self):
        self.cupy_event.synchronize()

    def elapsed_time(self, end_event):
        return _cp().cuda.get_elapsed_time(self.cupy_event, end_event.cupy_event)


def _wrap_stream(cs):
    s = Stream.__new__(Stream)
    s.cupy_stream = cs
    s.device = _device_cls("cuda", _cp().cuda.runtime.getDevice())
    return s


def current_stream(device=None):
    return _wrap_stream(_lazy_init().cuda.get_current_stream())


def default_stream(device=None):
    return _wrap_stream(_lazy_init().cuda.Stream.null)


def set_stream(stream):
    if stream is None:
        return
    stream.cupy_stream.use()


class StreamContext:
    """Makes `stream` current inside the block (None, or no GPU: no change)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        if self.stream is None or _cp() is None:
            return None
        self.prev = _cp().cuda.get_current_stream()
        self.stream.cupy_stream.use()
        return self.stream

    def __exit__(self, type, value, traceback):
        if self.prev is not None:
            self.prev.use()
            self.prev = None


def stream(stream):
    return StreamContext(stream)


from . import _more  # noqa: E402
from ._more import *  # noqa: E402,F401,F403  (NVML queries, CudaError / check_error, allocator statistics)

ExternalStream = _more._external_stream(Stream)
__all__ += _more.__all__ + ["ExternalStream", "CUDAGraph", "graph", "graph_pool_handle"]
from . import memory, profiler, random, streams, graphs  # noqa: E402,F401  (torch.cuda's submodules of those names)
from .graphs import CUDAGraph, graph, graph_pool_handle  # noqa: E402
