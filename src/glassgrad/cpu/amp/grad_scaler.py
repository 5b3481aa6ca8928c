"""torch.cpu.amp.GradScaler: torch.amp.GradScaler('cpu', ...) under its deprecated name."""
from ...amp.grad_scaler import deprecated_scaler

__all__ = ["GradScaler"]

GradScaler = deprecated_scaler("cpu", __name__)
