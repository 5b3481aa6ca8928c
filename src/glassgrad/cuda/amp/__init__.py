"""torch.cuda.amp: the deprecated spellings torch.cuda.amp.autocast / GradScaler / custom_fwd / custom_bwd
(torch's FutureWarnings; without a GPU autocast and the scaler disable themselves with torch's warnings)."""
from . import autocast_mode, grad_scaler, common  # noqa: F401
from .autocast_mode import autocast, custom_fwd, custom_bwd  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "custom_fwd", "custom_bwd", "GradScaler"]
