"""torch.cpu.amp.autocast: torch.amp.autocast('cpu', ...) under its deprecated name."""
import warnings

from ... import _dtype
from ...amp import autocast_mode as _am

__all__ = ["autocast"]


class autocast(_am.autocast):
    """Deprecated: torch.amp.autocast('cpu', ...)."""

    def __init__(self, enabled=True, dtype=_dtype.bfloat16, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
