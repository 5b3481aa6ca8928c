"""torch.cuda.amp.GradScaler: torch.amp.GradScaler('cuda', ...), deprecated."""
import warnings

from ...amp import grad_scaler as _gs
from ...amp.grad_scaler import OptState  # noqa: F401

__all__ = ["GradScaler"]


class GradScaler(_gs.GradScaler):
    """Deprecated: torch.amp.GradScaler('cuda', ...)."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
