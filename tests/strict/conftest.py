"""The strict-device suite: run with GLASSGRAD_STRICT_DEVICE=1 (make test does), never silently without it."""
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
