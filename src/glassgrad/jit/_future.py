"""torch.jit.Future is torch.futures.Future (glassgrad/futures.py)."""
from ..futures import Future

__all__ = ["Future"]
