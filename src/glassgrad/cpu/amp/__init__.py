"""torch.cpu.amp: the deprecated spellings torch.cpu.amp.autocast / GradScaler (torch's FutureWarnings)."""
from . import autocast_mode, grad_scaler  # noqa: F401
from .autocast_mode import autocast  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "GradScaler"]
