"""torch.signal: signal-processing utilities; today its one submodule, windows."""
from . import windows  # noqa: F401

__all__ = ["windows"]
