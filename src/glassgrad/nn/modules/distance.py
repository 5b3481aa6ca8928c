"""torch.nn.modules.distance: PairwiseDistance and CosineSimilarity (defined in activation.py)."""
from .activation import PairwiseDistance, CosineSimilarity

__all__ = ["PairwiseDistance", "CosineSimilarity"]
