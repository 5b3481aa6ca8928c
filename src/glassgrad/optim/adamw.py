"""torch.optim.adamw: AdamW lives with Adam (it is Adam with decoupled weight decay)."""
from .adam import AdamW  # noqa: F401
from ._functional import adamw  # noqa: F401  (torch.optim.adamw.adamw)

__all__ = ["AdamW", "adamw"]
