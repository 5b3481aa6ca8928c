"""torch.cuda.profiler: start and stop the CUDA profiler's collection (cudaProfilerStart / cudaProfilerStop,
through CuPy), for nsys / nvprof runs; without a GPU, torch's CPU-build error."""
import contextlib

__all__ = ["start", "stop", "profile"]


def start():
    from . import _lazy_init
    _lazy_init().cuda.profiler.start()


def stop():
    from . import _lazy_init
    _lazy_init().cuda.profiler.stop()


@contextlib.contextmanager
def profile():
    """Collect profile data inside the block."""
    try:
        start()
        yield
    finally:
        stop()
