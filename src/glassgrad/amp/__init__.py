"""torch.amp: automatic mixed precision -- autocast (CPU: torch's per-op cast policy, ops/_autocast.py),
GradScaler, custom_fwd / custom_bwd, is_autocast_available."""
from . import autocast_mode, grad_scaler  # noqa: F401
from .autocast_mode import autocast, custom_fwd, custom_bwd, is_autocast_available  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available", "GradScaler"]


def _enter_autocast(*vals):
    mode = autocast(*vals)
    mode.__enter__()
    return mode


def _exit_autocast(mode):
    mode.__exit__(None, None, None)
