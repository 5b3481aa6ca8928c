"""torch.distributed.constants: the default process-group timeouts (no NCCL here, so its timeout is None,
as in torch's CPU build)."""
from .distributed_c10d import default_pg_timeout

default_pg_nccl_timeout = None

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]
