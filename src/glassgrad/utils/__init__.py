"""torch.utils"""
from . import data  # noqa: F401
