"""torch.utils.data.sampler: index samplers.

The random samplers consume the generators exactly as torch's do (same calls, same sizes, same order),
so with equal seeds they give torch's indices and leave the generators in torch's state.
"""
import itertools
from typing import Generic, TypeVar

from ... import _dtype
from ...ops.creation import Generator, as_tensor, empty, multinomial, randint, randperm, random_

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]

_T_co = TypeVar("_T_co", covariant=True)
_CHUNK = 32      # RandomSampler(replacement=True) draws its indices 32 at a time


def _draw_seed(generator=None):
    """One int64 from ``generator`` (the default one when None): torch's
    ``torch.empty((), dtype=torch.int64).random_(generator=...).item()``."""
    return int(random_(empty((), dtype=_dtype.int64), generator=generator).item())


class Sampler(Generic[_T_co]):
    """Base class: subclasses yield indices (or batches of indices) from ``__iter__``."""

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A permutation per pass (or ``num_samples`` draws with replacement). Without an explicit generator
    each iteration seeds a fresh Generator from one draw of the default generator, as torch does."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        n = self.num_samples
        if not isinstance(n, int) or n <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={n}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        g = self.generator
        if g is None:
            g = Generator().manual_seed(_draw_seed())
        total = self.num_samples
        if self.replacement:
            full, rest = divmod(total, _CHUNK)
            for size in [_CHUNK] * full + [rest]:
                yield from randint(high=n, size=(size,), dtype=_dtype.int64, generator=g).tolist()
        else:
            full, rest = divmod(total, n)
            for _ in range(full):
                yield from randperm(n, generator=g).tolist()
            yield from randperm(n, generator=g).tolist()[:rest]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (one randperm per pass)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for k in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[k]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn by ``multinomial`` over ``weights`` (float64)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = as_tensor(weights, dtype=_dtype.float64)
        if w.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from iter(drawn.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter unless dropped)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        n = len(self.sampler)
        if self.drop_last:
            return n // self.batch_size
        return -(-n // self.batch_size)
