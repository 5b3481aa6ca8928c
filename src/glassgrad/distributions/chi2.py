"""torch.distributions.chi2: Chi2, defined beside Gamma here (gamma.py)."""
from .gamma import Chi2

__all__ = ["Chi2"]
