"""torch.cuda.amp.common."""
from ... import backend

__all__ = ["amp_definitely_not_available"]


def amp_definitely_not_available():
    return not backend.cuda_available()
