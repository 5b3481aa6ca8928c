"""torch.distributed.nn: collectives that autograd differentiates (functional.py), and, as torch's star import
leaves them here, ReduceOp, group and Function.  No RemoteModule (nor its api / jit packages): glassgrad has no
torch.distributed.rpc."""
from .functional import *  # noqa: F401,F403
from .functional import Function, ReduceOp, group  # noqa: F401
