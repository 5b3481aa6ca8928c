"""torch.distributions.beta: Beta, defined beside Dirichlet here (dirichlet.py)."""
from .dirichlet import Beta

__all__ = ["Beta"]
