"""torch.nn: modules, parameters, functional, init, utils."""
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer  # noqa: F401
from .modules import *  # noqa: F401,F403
from . import functional, init, utils  # noqa: F401
from .parallel import DataParallel  # noqa: F401
