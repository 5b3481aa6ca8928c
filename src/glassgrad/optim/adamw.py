"""torch.optim.adamw: AdamW lives with Adam (it is Adam with decoupled weight decay)."""
from .adam import AdamW  # noqa: F401

__all__ = ["AdamW"]
