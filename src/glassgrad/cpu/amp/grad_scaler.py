"""torch.cpu.amp.GradScaler: torch.amp.GradScaler('cpu', ...) under its deprecated name."""
import warnings

from ...amp import grad_scaler as _gs

__all__ = ["GradScaler"]


class GradScaler(_gs.GradScaler):
    """Deprecated: torch.amp.GradScaler('cpu', ...)."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
