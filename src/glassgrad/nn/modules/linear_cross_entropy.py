"""torch.nn.modules.linear_cross_entropy: LinearCrossEntropyLoss (defined in loss.py)."""
from .loss import LinearCrossEntropyLoss  # noqa: F401

__all__ = []
