"""torch.utils"""
from . import data, dlpack  # noqa: F401
from . import checkpoint  # noqa: F401
from . import _pytree  # noqa: F401  (torch.utils._pytree: bound at import, as torch)
