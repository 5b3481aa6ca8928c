"""torch.distributed.nn: collectives that autograd differentiates (functional.py).  No RemoteModule: glassgrad
has no torch.distributed.rpc."""
from .functional import *  # noqa: F401,F403
