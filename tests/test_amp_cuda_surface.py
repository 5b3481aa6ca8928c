"""torch.cuda / torch.cpu / torch.accelerator answer as torch's CPU build on a machine without a GPU (values,
warnings, exception types and messages), and route to CuPy when it has a GPU (checked with a fake CuPy)."""
import collections
import warnings

import pytest
import torch

import glassgrad
from glassgrad import backend

pytestmark = pytest.mark.skipif(backend.cuda_available(), reason="compares with torch's CPU build: needs no GPU")


def _outcome(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = f()
            r = (type(r).__name__, r) if r is None or isinstance(r, (bool, int, str, list, tuple, dict)) else \
                type(r).__name__
        except Exception as e:     # noqa: BLE001  (compared with torch's)
            r = (type(e).__name__, str(e))
    return str(r), [(x.category.__name__, str(x.message)) for x in w]


CUDA = [
    lambda c: c.is_available(), lambda c: c.device_count(), lambda c: c.is_initialized(),
    lambda c: c.current_device(), lambda c: c.set_device(0), lambda c: c.set_device("cpu"),
    lambda c: c.set_device("cuda"), lambda c: c.set_device(-1), lambda c: c.get_device_name(),
    lambda c: c.get_device_name("cpu"), lambda c: c.get_device_properties(0), lambda c: c.get_device_capability(),
    lambda c: c.memory_allocated(), lambda c: c.memory_reserved(), lambda c: c.max_memory_allocated(),
    lambda c: c.max_memory_reserved(), lambda c: c.memory_allocated("cpu"), lambda c: c.reset_peak_memory_stats(),
    lambda c: c.reset_max_memory_allocated(), lambda c: c.empty_cache(), lambda c: c.memory_stats(),
    lambda c: c.memory_cached(), lambda c: c.max_memory_cached(), lambda c: c.mem_get_info(),
    lambda c: c.is_bf16_supported(), lambda c: c.is_tf32_supported(), lambda c: c.synchronize(),
    lambda c: c.manual_seed(1), lambda c: c.manual_seed_all(1), lambda c: c.seed(), lambda c: c.seed_all(),
    lambda c: c.device(0).__enter__(), lambda c: c.device("cuda").__enter__(), lambda c: c.device("cpu"),
    lambda c: c.device(-1).__enter__(), lambda c: c.Stream(), lambda c: c.Event(), lambda c: c.Event(enable_timing=True),
    lambda c: c.stream(None).__enter__(), lambda c: c.StreamContext(None).__enter__(), lambda c: c.current_stream(),
    lambda c: c.default_stream(), lambda c: c.set_stream(None), lambda c: c.get_arch_list(),
    lambda c: c.get_gencode_flags(), lambda c: c.ipc_collect(), lambda c: c.init(),
    lambda c: c.set_per_process_memory_fraction(0.5), lambda c: c._is_compiled(),
    lambda c: c.amp.common.amp_definitely_not_available(),
    lambda c: c.FloatTensor(2), lambda c: c.LongTensor([1]), lambda c: c.BoolTensor(),
    lambda c: (repr(c.HalfTensor), isinstance(glassgrad.zeros(1) if c is glassgrad.cuda else torch.zeros(1),
                                                c.FloatTensor)),
    lambda c: c.memory_stats_as_nested_dict(), lambda c: c.reset_max_memory_cached(),
    lambda c: c.get_per_process_memory_fraction(), lambda c: c.can_device_access_peer(0, 1),
    lambda c: c.is_current_stream_capturing(), lambda c: (c.has_half, c.has_magma, c.default_generators),
    lambda c: c.nvtx.range_push("a"), lambda c: c.nvtx.range_pop(), lambda c: c.nvtx.mark("a"),
    lambda c: c.nvtx.range("a").__enter__(),
    lambda c: [k.__name__ for k in c.OutOfMemoryError.__mro__],
]


@pytest.mark.parametrize("k", range(len(CUDA)))
def test_cuda_surface_as_torch_cpu_build(k):
    assert _outcome(lambda: CUDA[k](glassgrad.cuda)) == _outcome(lambda: CUDA[k](torch.cuda))


def test_cuda_device_of_and_memory_stats_type():
    for T in (torch, glassgrad):
        with T.cuda.device_of(T.zeros(1)):
            pass
        assert isinstance(T.cuda.memory_stats(), collections.OrderedDict)
        with T.cuda.device(-1):
            pass


ACC = ["current_accelerator", "current_device_idx", "current_device_index", "current_stream", "device_count",
       "empty_cache", "empty_host_cache", "get_memory_info", "is_available", "max_memory_allocated",
       "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats", "reset_accumulated_memory_stats",
       "reset_peak_memory_stats", "synchronize"]


@pytest.mark.parametrize("name", ACC)
def test_accelerator_as_torch_cpu_build(name):
    assert _outcome(lambda: getattr(glassgrad.accelerator, name)()) == \
        _outcome(lambda: getattr(torch.accelerator, name)())


@pytest.mark.parametrize("call", [
    lambda a: a.set_device_index(0), lambda a: a.set_device_idx(0), lambda a: a.device_index(0).__enter__(),
    lambda a: a.device_index(None).__enter__(), lambda a: a.current_accelerator(True), lambda a: a.memory.memory_stats(),
])
def test_accelerator_calls_as_torch_cpu_build(call):
    assert _outcome(lambda: call(glassgrad.accelerator)) == _outcome(lambda: call(torch.accelerator))


CPU = [
    lambda c: (c.is_available(), c.is_initialized(), c.device_count(), c.current_device(), c.synchronize(),
               c.set_device("cpu")),
    lambda c: (c.current_stream() is c.current_stream(), type(c.current_stream()).__name__),
    lambda c: (c.Event().query(), c.Event().record(), c.Event().synchronize(), c.Event().wait()),
    lambda c: (c.Stream().wait_stream(c.Stream()), c.Stream().record_event(), c.Stream().wait_event(c.Event())),
]


@pytest.mark.parametrize("k", range(len(CPU)))
def test_cpu_module_as_torch(k):
    assert _outcome(lambda: CPU[k](glassgrad.cpu)) == _outcome(lambda: CPU[k](torch.cpu))


def test_cpu_stream_context_as_torch():
    for T in (torch, glassgrad):
        s = T.cpu.Stream()
        before = T.cpu.current_stream()
        with T.cpu.stream(s):
            assert T.cpu.current_stream() is s
            with T.cpu.stream(None):
                assert T.cpu.current_stream() is s
        assert T.cpu.current_stream() is before


def test_out_of_memory_error_is_torchs():
    assert glassgrad.OutOfMemoryError is glassgrad.cuda.OutOfMemoryError
    assert issubclass(glassgrad.OutOfMemoryError, RuntimeError)


def test_get_device_module_is_the_modules():
    assert glassgrad.get_device_module("cuda") is glassgrad.cuda and glassgrad.get_device_module() is glassgrad.cpu


# -- with a GPU: CuPy answers (a fake CuPy stands in for it here) --------------------------------------------
class _Pool:
    def __init__(self):
        self.used, self.total, self.freed, self.limit = 100, 400, 0, None

    def used_bytes(self):
        return self.used

    def total_bytes(self):
        return self.total

    def free_all_blocks(self):
        self.freed += 1

    def set_limit(self, fraction=None):
        self.limit = fraction

    def get_limit(self):
        return int(self.limit * 2 ** 34) if self.limit else 0


class _FakeCupy:
    def __init__(self):
        self.pool, self.dev, self.synced = _Pool(), 0, 0
        fake = self

        class runtime:
            @staticmethod
            def getDeviceCount():
                return 2

            @staticmethod
            def getDevice():
                return fake.dev

            @staticmethod
            def setDevice(i):
                fake.dev = i

            @staticmethod
            def deviceSynchronize():
                fake.synced += 1

            @staticmethod
            def getDeviceProperties(i):
                return {"name": b"Fake GPU %d" % i, "major": 8 + i, "minor": 6, "totalGlobalMem": 2 ** 34,
                        "multiProcessorCount": 80}

            @staticmethod
            def memGetInfo():
                return (1, 2)

            @staticmethod
            def deviceCanAccessPeer(d, p):
                return 1

        class Stream:
            null = "null-stream"

            def __init__(self, non_blocking=False):
                self.non_blocking, self.ptr, self.done = non_blocking, 1234, True

            def synchronize(self):
                fake.synced += 1

        class Event:
            def __init__(self, block=False, disable_timing=True, interprocess=False):
                self.disable_timing, self.recorded, self.done = disable_timing, None, False

            def record(self, stream=None):
                self.recorded, self.done = stream, True

        class cuda:
            pass
        cuda.runtime, cuda.Stream, cuda.Event = runtime, Stream, Event
        cuda.get_current_stream = staticmethod(lambda: "current-stream")
        self.cuda = cuda

    def get_default_memory_pool(self):
        return self.pool


@pytest.fixture
def fake_cupy(monkeypatch):
    fake = _FakeCupy()
    monkeypatch.setattr(backend, "_cupy", fake)
    yield fake


@pytest.mark.skipif(backend._cupy is not None, reason="replaces an absent CuPy")
def test_cuda_routes_to_cupy(fake_cupy):
    c, a = glassgrad.cuda, glassgrad.accelerator
    assert (c.is_available(), c.device_count(), c.current_device(), c.is_initialized()) == (True, 2, 0, True)
    c.set_device(1)
    assert c.current_device() == 1 and a.current_device_index() == 1
    assert c.get_device_name() == "Fake GPU 1" and c.get_device_capability(0) == (8, 6)
    p = c.get_device_properties("cuda:1")
    assert (p.name, p.major, p.total_memory, p.multi_processor_count) == ("Fake GPU 1", 9, 2 ** 34, 80)
    assert c.is_bf16_supported()
    with c.device(0):
        assert c.current_device() == 0
    assert c.current_device() == 1
    a.set_device_index(0)
    assert c.current_device() == 0
    assert (c.memory_allocated(), c.memory_reserved()) == (100, 400)
    fake_cupy.pool.used = 300
    assert c.max_memory_allocated() == 300
    fake_cupy.pool.used = 50
    assert (c.memory_allocated(), c.max_memory_allocated(), a.memory_allocated()) == (50, 300, 50)
    c.reset_peak_memory_stats()
    assert c.max_memory_allocated() == 50 and c.memory_stats()["allocated_bytes.all.current"] == 50
    c.empty_cache()
    a.empty_cache()
    assert fake_cupy.pool.freed == 2
    c.synchronize()
    a.synchronize()
    assert fake_cupy.synced == 2
    c.set_per_process_memory_fraction(0.25)
    assert fake_cupy.pool.limit == 0.25 and c.mem_get_info() == (1, 2)
    assert a.is_available() and a.current_accelerator() == glassgrad.device("cuda") and a.device_count() == 2
    assert c.current_stream().cupy_stream == "current-stream" and c.default_stream().cupy_stream == "null-stream"
    assert c.Stream().cupy_stream.non_blocking
    assert c.memory_stats_as_nested_dict()["allocated_bytes"]["all"] == {"current": 50, "peak": 50}
    assert c.get_per_process_memory_fraction() == 0.25
    assert c.can_device_access_peer(0, 1) is True
    with pytest.raises(AssertionError, match="Invalid peer device id"):
        c.can_device_access_peer(0, 2)


STREAMS = [
    lambda T: repr(T.Stream()), lambda T: repr(T.Stream("cpu:1")), lambda T: repr(T.Stream(T.device("meta"))),
    lambda T: T.Stream("cuda"), lambda T: T.Stream("xpu"), lambda T: T.Stream("foo"), lambda T: T.Stream(3),
    lambda T: (T.Stream().query(), T.Stream().synchronize(), T.Stream().is_capturing(), str(T.Stream().device)),
    lambda T: T.Stream().record_event(), lambda T: T.Stream().wait_stream(T.Stream()),
    lambda T: T.Stream("meta").wait_event(T.Event("meta")), lambda T: T.Stream().wait_event(T.Event()),
    lambda T: T.Stream().native_handle,
    lambda T: (T.Stream() == T.Stream(), hash(T.Stream()) == hash(T.Stream()), T.Stream(priority=-1).stream_id),
    lambda T: repr(T.Stream().__enter__()),
    lambda T: [repr(T.Event()), repr(T.Event("meta", enable_timing=True)), repr(T.Event(blocking=True))],
    lambda T: T.Event("cuda"),
    lambda T: (T.Event().query(), T.Event().synchronize(), T.Event().wait(), str(T.Event().device), T.Event().event_id),
    lambda T: T.Event().record(), lambda T: T.Event("meta").record(T.Stream("meta")),
    lambda T: T.Event().elapsed_time(T.Event()),
    lambda T: T.Event(enable_timing=True).elapsed_time(T.Event(enable_timing=True)),
]


@pytest.mark.parametrize("k", range(len(STREAMS)))
def test_generic_stream_and_event_as_torch(k):
    assert _outcome(lambda: STREAMS[k](glassgrad)) == _outcome(lambda: STREAMS[k](torch))


@pytest.mark.skipif(backend._cupy is not None, reason="replaces an absent CuPy")
def test_generic_stream_and_event_route_to_cupy(fake_cupy):
    s = glassgrad.Stream("cuda:1")
    assert (s.device_type, s.device_index, s.stream_id, s.native_handle) == ("cuda", 1, 1234, 1234)
    assert repr(s) == "torch.Stream device_type=cuda, device_index=1, stream_id=1234"
    assert fake_cupy.dev == 0 and s.query() is True and str(s.device) == "cuda:1"
    s.synchronize()
    assert fake_cupy.synced == 1
    e = s.record_event()
    assert e.query() is True and e._cuda.cupy_event.recorded is s._cuda.cupy_stream
    t = glassgrad.Event(enable_timing=True)
    assert (t.device_type, t.device_index, repr(t)) == ("cuda", 0, "torch.Event device_type=cuda, device_index=0, "
                                                                   "event_flag=1, event_id=0")
    assert not t._cuda.cupy_event.disable_timing
