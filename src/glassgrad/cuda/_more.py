"""More of torch.cuda: the NVML queries (utilization, temperature, ...), CUDA runtime errors (CudaError,
check_error), ExternalStream and the allocator's extra statistics; re-exported by cuda/__init__.py.

Without a GPU each answers as torch's CPU build does, its errors included.  With CuPy and a GPU: the NVML
queries go through `pynvml` (nvidia-ml-py) as torch's do, runtime error strings come from CuPy's runtime, an
ExternalStream is CuPy's, and the allocator (CuPy's memory pool) reports what it keeps: it keeps no
accumulated counters and glassgrad has no host (pinned) caching allocator, so those statistics are empty and
their resets have nothing to clear.
"""
import collections
import contextlib
import os

from .. import backend

__all__ = ["list_gpu_processes", "device_memory_used", "memory_usage", "utilization", "temperature", "power_draw",
           "clock_rate", "CudaError", "DeferredCudaCallError", "check_error", "host_memory_stats",
           "host_memory_stats_as_nested_dict", "reset_accumulated_memory_stats", "reset_peak_host_memory_stats",
           "reset_accumulated_host_memory_stats", "get_allocator_backend", "cudaStatus", "get_stream_from_external",
           "current_blas_handle", "current_solver_handle", "caching_allocator_alloc", "caching_allocator_delete",
           "caching_allocator_enable", "caching_allocator_disabled"]


def _cp():
    return backend._cupy if backend.cuda_available() else None


def _no_c(name):
    return AttributeError(f"module 'torch._C' has no attribute '{name}'")


# -- NVML (through pynvml, as torch) --------------------------------------------------------------------------

def _strtoul(s):
    """The integer a string starts with ('+'/'-' allowed first), or -1 when it starts with none."""
    n = 0
    while n < len(s) and (s[n].isdigit() or (n == 0 and s[n] in "+-")):
        n += 1
    try:
        return int(s[:n])
    except ValueError:
        return -1


def _visible_devices():
    """CUDA_VISIBLE_DEVICES as torch parses it: ordinals up to the first invalid entry, or GPU-/MIG- uuid
    prefixes; a duplicate makes the list empty; unset: 64 ordinals."""
    var = os.getenv("CUDA_VISIBLE_DEVICES")
    if var is None:
        return list(range(64))
    for prefix in ("GPU-", "MIG-"):
        if var.startswith(prefix):
            out = []
            for elem in var.split(","):
                if elem in out:
                    return []
                if not elem.startswith(prefix):
                    break
                out.append(elem)
            return out
    out = []
    for elem in var.split(","):
        x = _strtoul(elem.strip())
        if x in out:
            return []
        if x < 0:
            break
        out.append(x)
    return out


def _nvml_index(pynvml, device):
    from . import _index, _NOT_COMPILED
    idx = _index(device)
    if idx is None:                         # no GPU: torch's current_device() initialises CUDA and fails
        raise AssertionError(_NOT_COMPILED)
    visible = _visible_devices()
    if visible and isinstance(visible[0], str):
        uuids = [pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(i))
                 for i in range(pynvml.nvmlDeviceGetCount())]
        uuids = [u.decode() if isinstance(u, bytes) else u for u in uuids]
        ordinals = []
        for cand in visible:
            match = [i for i, u in enumerate(uuids) if u.startswith(cand)]
            if len(match) != 1:
                break
            if match[0] in ordinals:
                ordinals = []
                break
            ordinals.append(match[0])
        visible = ordinals
    if idx < 0 or idx >= len(visible):
        raise RuntimeError(f"device {idx} is not visible (CUDA_VISIBLE_DEVICES={visible})")
    return visible[idx]


def _pynvml():
    try:
        import pynvml
    except ImportError as e:
        raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be imported.") from e
    return pynvml


def _handle(device):
    """pynvml and the NVML handle of `device` (the current one for None), as torch's _get_pynvml_handler."""
    pynvml = _pynvml()
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_DriverNotLoaded as e:
        raise RuntimeError("cuda driver can't be loaded, is cuda enabled?") from e
    return pynvml, pynvml.nvmlDeviceGetHandleByIndex(_nvml_index(pynvml, device))


def device_memory_used(device=None):
    """Used device memory in bytes, as nvidia-smi reports it."""
    pynvml, h = _handle(device)
    return pynvml.nvmlDeviceGetMemoryInfo(h).used


def memory_usage(device=None):
    """Percent of the last sample period during which device memory was read or written (nvidia-smi)."""
    pynvml, h = _handle(device)
    return pynvml.nvmlDeviceGetUtilizationRates(h).memory


def utilization(device=None):
    """Percent of the last sample period during which a kernel ran (nvidia-smi)."""
    pynvml, h = _handle(device)
    return pynvml.nvmlDeviceGetUtilizationRates(h).gpu


def temperature(device=None):
    """The GPU die's temperature in degrees C (nvidia-smi)."""
    pynvml, h = _handle(device)
    return pynvml.nvmlDeviceGetTemperature(h, 0)


def power_draw(device=None):
    """Average power draw in mW over the last sample period (nvidia-smi)."""
    pynvml, h = _handle(device)
    return pynvml.nvmlDeviceGetPowerUsage(h)


def clock_rate(device=None):
    """The SM clock in MHz (nvidia-smi)."""
    pynvml, h = _handle(device)
    return pynvml.nvmlDeviceGetClockInfo(h, 1)


def list_gpu_processes(device=None):
    """A printout of the processes running on `device` and their GPU memory (or why it cannot be had)."""
    try:
        import pynvml
    except ModuleNotFoundError:
        return "pynvml module not found, please install nvidia-ml-py"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_DriverNotLoaded:
        return "cuda driver can't be loaded, is cuda enabled?"
    index = _nvml_index(pynvml, device)
    procs = pynvml.nvmlDeviceGetComputeRunningProcesses(pynvml.nvmlDeviceGetHandleByIndex(index))
    lines = [f"GPU:{index}"]
    if len(procs) == 0:
        lines.append("no processes are running")
    for p in procs:
        lines.append(f"process {p.pid:>10d} uses {p.usedGpuMemory / (1024 * 1024):>12.3f} MB GPU memory")
    return "\n".join(lines)


# -- runtime errors -------------------------------------------------------------------------------------------

class CudaError(RuntimeError):
    """A CUDA runtime error `code`, with the runtime's description: '<description> (<code>)'."""

    def __init__(self, code):
        cp = _cp()
        if cp is None:
            raise AttributeError("'NoneType' object has no attribute 'cudaGetErrorString'")
        text = str(cp.cuda.runtime.CUDARuntimeError(code))       # '<name>: <description>'
        super().__init__(f"{text.split(': ', 1)[-1]} ({code})")


class DeferredCudaCallError(Exception):
    """An error of a CUDA call deferred until CUDA initialises."""


def check_error(res):
    """Raise CudaError unless `res` (a CUDA runtime result) is success (0)."""
    if _cp() is None:
        raise AttributeError("'NoneType' object has no attribute 'cudaError'")
    if res != 0:
        raise CudaError(res)


# -- ExternalStream -------------------------------------------------------------------------------------------

def _external_stream(Stream):
    class ExternalStream(Stream):
        """A CUDA stream allocated elsewhere (its cudaStream_t as an int), wrapped; its life stays the owner's."""

        def __init__(self, stream_ptr, device=None, **kwargs):
            from . import _index
            from .._device import device as device_cls
            cp = _cp()
            if cp is None:
                raise TypeError("'<' not supported between instances of 'NoneType' and 'int'")
            index = _index(device)
            self.cupy_stream = cp.cuda.ExternalStream(int(stream_ptr), index)
            self.device = device_cls("cuda", index)
    return ExternalStream


# -- allocator statistics -------------------------------------------------------------------------------------

def host_memory_stats():
    """The host (pinned) caching allocator's statistics: glassgrad has no such allocator, so none (as torch's
    CPU build answers)."""
    return collections.OrderedDict()


def host_memory_stats_as_nested_dict():
    return {}


def reset_accumulated_memory_stats(device=None):
    """Reset the allocator's accumulated counters (CuPy's pool keeps none)."""
    if _cp() is None:
        raise _no_c("_cuda_resetAccumulatedMemoryStats")


def reset_peak_host_memory_stats():
    if _cp() is None:
        raise _no_c("_cuda_resetPeakHostMemoryStats")


def reset_accumulated_host_memory_stats():
    if _cp() is None:
        raise _no_c("_cuda_resetAccumulatedHostMemoryStats")


def get_allocator_backend():
    """The device allocator: CuPy's caching memory pool, torch's 'native' kind (not cudaMallocAsync)."""
    if _cp() is None:
        raise _no_c("_cuda_getAllocatorBackend")
    return "native"


# -- handles, external streams, raw allocations -----------------------------------------------------------------

class cudaStatus:
    SUCCESS = 0
    ERROR_NOT_READY = 34


def get_stream_from_external(data_ptr, device=None):
    """A Stream over the CUDA stream `data_ptr` allocated elsewhere (its life stays the owner's)."""
    from . import _lazy_init, _index, Stream
    from .._device import device as device_cls
    cp = _lazy_init()
    index = _index(device)
    s = Stream.__new__(Stream)
    s.cupy_stream = cp.cuda.ExternalStream(int(data_ptr), index)
    s.device = device_cls("cuda", index)
    return s


def current_blas_handle():
    """The cuBLAS handle (a pointer as an int) of the current device: CuPy's, which its matmuls use."""
    from . import _lazy_init
    return _lazy_init().cuda.device.get_cublas_handle()


def current_solver_handle():
    """The cuSOLVER handle (a pointer as an int) of the current device: CuPy's."""
    from . import _lazy_init
    return _lazy_init().cuda.device.get_cusolver_handle()


_raw = {}       # pointer -> CuPy MemoryPointer of caching_allocator_alloc, until caching_allocator_delete


def caching_allocator_alloc(size, device=None, stream=None):
    """`size` bytes from the caching allocator (CuPy's pool) on `device`, ordered on `stream` (a Stream or a
    cudaStream_t as an int; default the current one): the device pointer as an int, for
    caching_allocator_delete."""
    from . import _index, current_device, Stream
    if device is None:
        device = current_device()
    index = _index(device)
    cp = _cp()
    if stream is None:
        cs = cp.cuda.get_current_stream()
    elif isinstance(stream, Stream):
        cs = stream.cupy_stream
    elif isinstance(stream, int):
        cs = cp.cuda.ExternalStream(stream, index)
    else:
        raise TypeError("Invalid type for stream argument, must be `torch.cuda.Stream` or `int` representing a "
                        "pointer to an existing stream")
    with cp.cuda.Device(index), cs:
        mem = cp.cuda.alloc(size)
    _raw[mem.ptr] = mem
    return mem.ptr


def caching_allocator_delete(mem_ptr):
    """Give memory from caching_allocator_alloc back to the allocator."""
    if _cp() is None:
        raise _no_c("_cuda_cudaCachingAllocator_raw_delete")
    if _raw.pop(mem_ptr, None) is None:
        raise RuntimeError(f"invalid device pointer: {mem_ptr:#x}")


# -- switching the caching allocator off: CuPy allocates straight from cudaMalloc then ---------------------------

_caching = [True]


def caching_allocator_enable(value=True):
    """Turn the caching allocator (CuPy's memory pool) on or off; off, each allocation is a cudaMalloc of its
    own and freed memory goes back to the device at once.  Without CUDA initialised, nothing to switch."""
    from . import is_initialized
    if is_initialized():
        cp = _cp()
        cp.cuda.set_allocator(cp.get_default_memory_pool().malloc if value else None)
        _caching[0] = bool(value)


@contextlib.contextmanager
def caching_allocator_disabled():
    """The caching allocator off inside the block, back as it was after."""
    if _cp() is None:
        raise _no_c("_cuda_cudaCachingAllocator_is_enabled")
    prev = _caching[0]
    caching_allocator_enable(False)
    try:
        yield
    finally:
        caching_allocator_enable(prev)
