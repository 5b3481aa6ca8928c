"""More of torch.cuda against torch: each name is called under torch (its CPU build) and glassgrad and the result,
or the exception's type and message, compared.  On a machine with a GPU (CuPy) the CPU-build comparisons are
skipped and the GPU tests run instead."""
import pytest
import torch

import glassgrad

HAS_CUDA = glassgrad.cuda.is_available()
no_gpu = pytest.mark.skipif(HAS_CUDA, reason="compares with torch's CPU build (this machine has a GPU)")
needs_gpu = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU with CuPy")


def _outcome(fn):
    try:
        return "ok", fn()
    except BaseException as e:          # noqa: BLE001 -- compared
        return "err", (type(e).__name__, str(e))


CALLS = {
    "list_gpu_processes": lambda c: c.list_gpu_processes(),
    "memory_usage": lambda c: c.memory_usage(),
    "utilization": lambda c: c.utilization(),
    "temperature": lambda c: c.temperature(),
    "power_draw": lambda c: c.power_draw(),
    "clock_rate": lambda c: c.clock_rate(),
    "device_memory_used": lambda c: c.device_memory_used(),
    "utilization(0)": lambda c: c.utilization(0),
    "host_memory_stats": lambda c: c.host_memory_stats(),
    "host_memory_stats_as_nested_dict": lambda c: c.host_memory_stats_as_nested_dict(),
    "reset_accumulated_memory_stats": lambda c: c.reset_accumulated_memory_stats(),
    "reset_peak_host_memory_stats": lambda c: c.reset_peak_host_memory_stats(),
    "reset_accumulated_host_memory_stats": lambda c: c.reset_accumulated_host_memory_stats(),
    "get_allocator_backend": lambda c: c.get_allocator_backend(),
    "ExternalStream": lambda c: c.ExternalStream(0),
    "CudaError": lambda c: c.CudaError(2),
    "check_error(0)": lambda c: c.check_error(0),
    "check_error(2)": lambda c: c.check_error(2),
    "get_stream_from_external": lambda c: c.get_stream_from_external(0),
    "get_stream_from_external(dev)": lambda c: c.get_stream_from_external(0, 0),
    "current_blas_handle": lambda c: c.current_blas_handle(),
    "current_solver_handle": lambda c: c.current_solver_handle(),
    "caching_allocator_alloc": lambda c: c.caching_allocator_alloc(10),
    "caching_allocator_alloc(stream)": lambda c: c.caching_allocator_alloc(10, stream=3),
    "caching_allocator_delete": lambda c: c.caching_allocator_delete(0),
    "caching_allocator_enable(False)": lambda c: c.caching_allocator_enable(False),
    "caching_allocator_enable()": lambda c: c.caching_allocator_enable(),
    "caching_allocator_disabled": lambda c: c.caching_allocator_disabled().__enter__(),
    "cudaStatus": lambda c: (c.cudaStatus.SUCCESS, c.cudaStatus.ERROR_NOT_READY),
    "profiler.start": lambda c: c.profiler.start(),
    "profiler.stop": lambda c: c.profiler.stop(),
    "profiler.profile": lambda c: c.profiler.profile().__enter__(),
}


@no_gpu
@pytest.mark.parametrize("name", sorted(CALLS))
def test_answers_as_torchs_cpu_build(name):
    theirs, ours = _outcome(lambda: CALLS[name](torch.cuda)), _outcome(lambda: CALLS[name](glassgrad.cuda))
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "err":
        assert ours[1] == theirs[1]
    else:
        assert type(ours[1]) is type(theirs[1]) and ours[1] == theirs[1]


def test_the_exception_classes_are_torchs():
    for name in ["CudaError", "DeferredCudaCallError"]:
        ours, theirs = getattr(glassgrad.cuda, name), getattr(torch.cuda, name)
        assert [k.__name__ for k in ours.__mro__] == [k.__name__ for k in theirs.__mro__]
    assert issubclass(glassgrad.cuda.ExternalStream, glassgrad.cuda.Stream)
    with pytest.raises(glassgrad.cuda.DeferredCudaCallError, match="late"):
        raise glassgrad.cuda.DeferredCudaCallError("late")


def test_names_are_in_all():
    for name in ["CudaError", "DeferredCudaCallError", "check_error", "ExternalStream", "utilization",
                 "host_memory_stats", "get_allocator_backend"]:
        assert name in glassgrad.cuda.__all__ and name in torch.cuda.__all__, name


@needs_gpu
def test_runtime_errors_on_a_gpu():
    glassgrad.cuda.check_error(0)
    with pytest.raises(glassgrad.cuda.CudaError, match=r"\(2\)$") as e:
        glassgrad.cuda.check_error(2)
    assert "memory" in str(e.value)                 # cudaErrorMemoryAllocation: "out of memory (2)"
    assert glassgrad.cuda.get_allocator_backend() == "native"
    assert glassgrad.cuda.host_memory_stats() == {}
    glassgrad.cuda.reset_accumulated_memory_stats()


@needs_gpu
def test_external_stream_wraps_a_cupy_stream():
    import cupy
    s = cupy.cuda.Stream(non_blocking=True)
    ext = glassgrad.cuda.ExternalStream(s.ptr)
    assert ext.cupy_stream.ptr == s.ptr and ext.device == glassgrad.device("cuda", glassgrad.cuda.current_device())
    with glassgrad.cuda.stream(ext):
        y = glassgrad.ones(4, device="cuda") * 2
    ext.synchronize()
    assert y.tolist() == [2.0] * 4


@needs_gpu
def test_raw_allocations_handles_and_external_streams_on_a_gpu():
    import cupy
    before = glassgrad.cuda.memory_allocated()
    ptr = glassgrad.cuda.caching_allocator_alloc(1 << 20)
    assert isinstance(ptr, int) and ptr and glassgrad.cuda.memory_allocated() >= before + (1 << 20)
    glassgrad.cuda.caching_allocator_delete(ptr)
    assert glassgrad.cuda.memory_allocated() == before
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        glassgrad.cuda.caching_allocator_delete(ptr)
    with pytest.raises(TypeError, match="Invalid type for stream argument"):
        glassgrad.cuda.caching_allocator_alloc(8, stream="s")
    assert isinstance(glassgrad.cuda.current_blas_handle(), int) and glassgrad.cuda.current_blas_handle()
    s = cupy.cuda.Stream(non_blocking=True)
    st = glassgrad.cuda.get_stream_from_external(s.ptr)
    assert type(st) is glassgrad.cuda.Stream and st.cupy_stream.ptr == s.ptr
    with glassgrad.cuda.caching_allocator_disabled():
        x = glassgrad.ones(1 << 18, device="cuda")
        assert glassgrad.cuda.memory_allocated() == before         # not from the pool
    del x
    with glassgrad.cuda.profiler.profile():
        glassgrad.ones(2, device="cuda").sum().item()


@pytest.mark.parametrize("sub", ["memory", "random", "streams", "profiler"])
def test_submodules_hold_torch_cudas_functions(sub):
    import importlib
    ours, theirs = importlib.import_module("glassgrad.cuda." + sub), importlib.import_module("torch.cuda." + sub)
    names = getattr(ours, "__all__", ["Stream", "ExternalStream", "Event"])
    assert names and set(names) <= set(getattr(theirs, "__all__", dir(theirs)))
    for n in names:
        assert sub == "profiler" or getattr(ours, n) is getattr(glassgrad.cuda, n), n
