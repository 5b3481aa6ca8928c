"""torch.cuda.amp.GradScaler: torch.amp.GradScaler('cuda', ...), deprecated."""
from ...amp.grad_scaler import OptState, deprecated_scaler  # noqa: F401

__all__ = ["GradScaler"]

GradScaler = deprecated_scaler("cuda", __name__)
