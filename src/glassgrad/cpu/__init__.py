"""torch.cpu: the CPU's device-module interface for device-agnostic code (one device, always there, streams
and events that have nothing to wait for), and torch.cpu.amp."""
from . import amp  # noqa: F401

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream", "stream",
           "set_device", "device_count", "Stream", "StreamContext", "Event"]


def is_available():
    return True


def is_initialized():
    return True


def synchronize(device=None):
    """Nothing to wait for (torch's CPU has one synchronous stream)."""


def device_count():
    return 1


def set_device(device):
    """Nothing to set: there is one CPU device."""


def current_device():
    return "cpu"


class Stream:
    """torch.cpu.Stream: a stand-in for device-agnostic code."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_cpu_stream = Stream()
_current = [_default_cpu_stream]


def current_stream(device=None):
    return _current[0]


class StreamContext:
    """Makes `stream` the current CPU stream inside the block (None: no change)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_cpu_stream

    def __enter__(self):
        if self.stream is None:
            return
        self.prev_stream = _current[0]
        _current[0] = self.stream

    def __exit__(self, type, value, traceback):
        if self.stream is None:
            return
        _current[0] = self.prev_stream


def stream(stream):
    return StreamContext(stream)
