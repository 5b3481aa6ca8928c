"""torch.nn.parallel: DistributedDataParallel (on glassgrad.distributed) and DataParallel (one device: the
module itself runs)."""
from .distributed import DistributedDataParallel
from .data_parallel import DataParallel

__all__ = ["DistributedDataParallel", "DataParallel"]
