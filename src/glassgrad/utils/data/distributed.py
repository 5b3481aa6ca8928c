"""torch.utils.data.distributed: DistributedSampler (one replica's share of the indices).

Without ``num_replicas`` / ``rank`` they come from the default process group (glassgrad.distributed), whose
error a program without one gets, as in torch.
"""
import math

from ...ops.random import Generator, randperm
from .sampler import Sampler
from ... import distributed as dist

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Indices ``rank, rank + num_replicas, ...`` of a (seed + epoch)-shuffled, padded or truncated index list."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas, self.rank = num_replicas, rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = Generator().manual_seed(self.seed + self.epoch)
            order = randperm(n, generator=g).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[:self.total_size]
        else:
            missing = self.total_size - len(order)
            if missing > 0:
                repeats = -(-missing // len(order))
                order = order + (order * repeats)[:missing]
        if len(order) != self.total_size:
            raise AssertionError(f"Number of indices ({len(order)}) does not match total_size ({self.total_size})")
        mine = order[self.rank:self.total_size:self.num_replicas]
        if len(mine) != self.num_samples:
            raise AssertionError(f"Number of subsampled indices ({len(mine)}) does not match num_samples "
                                 f"({self.num_samples})")
        return iter(mine)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        self.epoch = epoch
