"""torch.utils"""
from . import data, dlpack  # noqa: F401
from . import checkpoint  # noqa: F401
from . import _pytree  # noqa: F401  (torch.utils._pytree: bound at import, as torch)
from . import backcompat, deterministic, hooks, weak  # noqa: F401
from . import throughput_benchmark  # noqa: F401
from ._swap import swap_tensors  # noqa: F401
from .throughput_benchmark import ThroughputBenchmark  # noqa: F401


def set_module(obj, mod):
    """Set `obj.__module__` to `mod` (a string), for nicer printing."""
    if not isinstance(mod, str):
        raise TypeError("The mod argument should be a string")
    obj.__module__ = mod
