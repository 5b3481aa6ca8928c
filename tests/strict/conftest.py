"""The strict-device suite: run with GLASSGRAD_STRICT_DEVICE=1 (make test does), never silently without it."""
import os

import pytest

from glassgrad import backend


def pytest_collection_modifyitems(config, items):
    if not backend.STRICT and backend._cupy is None:
        raise pytest.UsageError("tests/strict needs the strict stand-in device: run it with GLASSGRAD_STRICT_DEVICE=1 "
                                "(make test does), or on a GPU with CuPy")


@pytest.fixture(autouse=True)
def _host_stream(request):
    """The device-equals-CPU tests draw a CUDA tensor's random numbers from the CPU generator (a private switch),
    so dropout masks, initialisers and samplers can be compared value for value; tests marked ``cuda_rng`` run
    the CUDA generator itself."""
    from glassgrad.ops.random import host_stream_for_cuda
    if request.node.get_closest_marker("cuda_rng"):
        yield
        return
    with host_stream_for_cuda():
        yield


def _fused_on(monkeypatch):
    """Switch the fused CUDA kernels on: through CuPy on a real GPU (its launches counted as the emulation's), else
    through tests/strict/cuda_emu.py's CPU emulation of CuPy's kernel API, which needs a C++ compiler (CI installs
    g++ through scripts/ci_system_deps.sh where it is missing) and compiles every kernel with NVRTC too (the test
    extra nvidia-cuda-nvrtc)."""
    import platform

    import cuda_emu
    from glassgrad import _cuda_kernels
    if backend._cupy is None or backend.STRICT:
        if cuda_emu.compiler() is None:
            pytest.skip("no C++ compiler (g++) for the CPU emulation of the CUDA kernels; "
                        "scripts/ci_system_deps.sh installs it")
        if cuda_emu.nvrtc() is None and platform.system() == "Linux" and platform.machine() == "x86_64":
            pytest.fail("NVRTC is missing: the kernels' sources are compiled by it (CuPy's compiler) as well as "
                        "emulated; `pip install -e .[test]` installs nvidia-cuda-nvrtc")
        monkeypatch.setattr(_cuda_kernels, "_kit", _emu_kit())
    else:
        monkeypatch.setattr(_cuda_kernels, "_kit", cuda_emu.Counting(backend._cupy))
    monkeypatch.setenv("GLASSGRAD_FUSED", "1")
    assert _cuda_kernels.available()


@pytest.fixture
def fused_kernels(monkeypatch):
    """The fused CUDA kernels switched on (tests/strict/test_cuda_kernels*.py; see _fused_on)."""
    _fused_on(monkeypatch)
    yield


@pytest.fixture(autouse=True)
def _fused_everywhere(monkeypatch):
    """GLASSGRAD_TEST_FUSED=1 (make test's second strict run): every test with the fused kernels on -- the op table,
    the modules, the models, the optimizers against the CPU with the kernels wherever they apply (and CPU tensors
    beside them never reaching a kernel)."""
    if os.environ.get("GLASSGRAD_TEST_FUSED") == "1":
        _fused_on(monkeypatch)
    yield


_KIT = []


def _emu_kit():
    if not _KIT:
        import cuda_emu
        _KIT.append(cuda_emu.Kit())
    return _KIT[0]
