"""torch.mps.profiler: OS Signpost tracing of the MPS backend; without it, start / stop raise torch's error."""
import contextlib

from .event import _no_mps

__all__ = ["start", "stop", "profile"]


def start(mode="interval", wait_until_completed=False):
    mode.lower().replace(" ", "")
    raise _no_mps("profilerStartTrace")


def stop():
    raise _no_mps("profilerStopTrace")


@contextlib.contextmanager
def profile(mode="interval", wait_until_completed=False):
    try:
        start(mode, wait_until_completed)
        yield
    finally:
        stop()
