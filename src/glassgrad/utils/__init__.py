"""torch.utils"""
from . import data, dlpack  # noqa: F401
from . import checkpoint  # noqa: F401
