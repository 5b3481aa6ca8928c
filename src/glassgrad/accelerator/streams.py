"""torch.Stream and torch.Event: the device-generic stream and event.  A CPU (or meta) stream has nothing to
queue -- query() is True, synchronize() returns -- and refuses events as torch does; a CUDA stream / event
is CuPy's (torch.cuda.Stream / Event) when it has a GPU, torch's RuntimeError otherwise."""
from .. import backend
from .._autocast_state import DEVICE_TYPES
from .._device import device as _device_cls

__all__ = ["Stream", "Event"]

_DUMMY = ("cpu", "meta")


def _place(device):
    """(device type, index) of a Stream / Event's device argument, with torch's errors."""
    if device is None:
        return ("cuda", _cuda().current_device()) if backend.cuda_available() else ("cpu", -1)
    if isinstance(device, int) and not isinstance(device, bool):
        from ._common import require
        require()
        return "cuda", device
    if isinstance(device, str):
        base = device.split(":")[0]
        if base not in DEVICE_TYPES:
            raise RuntimeError("Expected one of " + ", ".join(DEVICE_TYPES)
                               + f" device type at start of device string: {device}")
        device = _device_cls(device)
    kind = device.type
    if kind in _DUMMY:
        return kind, -1
    if kind != "cuda" or not backend.cuda_available():
        raise RuntimeError(f"PyTorch is not linked with support for {kind} devices")
    return kind, _cuda().current_device() if device.index is None else device.index


def _cuda():
    import glassgrad.cuda
    return glassgrad.cuda


class Stream:
    """Stream(device=None, *, priority=0): an in-order queue of work on a device."""

    def __init__(self, device=None, *, priority=0):
        self.device_type, self.device_index = _place(device)
        self._cuda = None
        if self.device_type == "cuda":
            with _cuda().device(self.device_index):
                self._cuda = _cuda().Stream(priority=priority)

    @property
    def stream_id(self):
        return 0 if self._cuda is None else self._cuda.cupy_stream.ptr

    @property
    def device(self):
        return _device_cls(self.device_type) if self.device_index < 0 else _device_cls(self.device_type,
                                                                                        self.device_index)

    @property
    def native_handle(self):
        if self._cuda is None:
            raise RuntimeError("Backend doesn't support getting stream native handle.")
        return self._cuda.cupy_stream.ptr

    def _events(self):
        if self._cuda is None:
            raise RuntimeError(f"{self.device_type} backend doesn't support events.")

    def query(self):
        return True if self._cuda is None else self._cuda.query()

    def synchronize(self):
        if self._cuda is not None:
            self._cuda.synchronize()

    def is_capturing(self):
        return False if self._cuda is None else self._cuda.cupy_stream.is_capturing()

    def record_event(self, event=None):
        self._events()
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        if self._cuda is not None:
            self._cuda.wait_event(event._cuda)

    def wait_stream(self, stream):
        self._events()
        self._cuda.wait_stream(stream._cuda)

    def __enter__(self):
        if self._cuda is not None:
            self._ctx = _cuda().StreamContext(self._cuda)
            self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self._cuda is not None:
            self._ctx.__exit__(*exc)
        return False

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device_type, self.device_index, self.stream_id) == \
            (other.device_type, other.device_index, other.stream_id)

    def __hash__(self):
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self):
        return (f"torch.Stream device_type={self.device_type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


class Event:
    """Event(device=None, *, enable_timing=False, blocking=False, interprocess=False): a marker in a stream."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device_type, self.device_index = _place(device)
        self._flag = int(bool(enable_timing))
        self._cuda = None
        if self.device_type == "cuda":
            self._cuda = _cuda().Event(enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)

    @property
    def device(self):
        return _device_cls(self.device_type) if self.device_index < 0 else _device_cls(self.device_type,
                                                                                        self.device_index)

    @property
    def event_id(self):
        return 0

    def query(self):
        return True if self._cuda is None else self._cuda.query()

    def record(self, stream=None):
        if self._cuda is None:
            raise RuntimeError(f"{self.device_type} backend doesn't support events.")
        self._cuda.record(None if stream is None else stream._cuda)

    def synchronize(self):
        if self._cuda is not None:
            self._cuda.synchronize()

    def wait(self, stream=None):
        if self._cuda is not None:
            self._cuda.wait(None if stream is None else stream._cuda)

    def elapsed_time(self, end_event):
        if not (self._flag and end_event._flag):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._cuda is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        return self._cuda.elapsed_time(end_event._cuda)

    def __repr__(self):
        return (f"torch.Event device_type={self.device_type}, device_index={self.device_index}, "
                f"event_flag={self._flag}, event_id={self.event_id}")
