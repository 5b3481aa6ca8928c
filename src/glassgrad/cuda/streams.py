"""torch.cuda.streams: Stream, ExternalStream and Event (defined in cuda/__init__.py)."""
from . import Event, ExternalStream, Stream  # noqa: F401
