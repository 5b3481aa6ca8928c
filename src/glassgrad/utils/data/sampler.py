"""torch.utils.data.sampler: index samplers.

The random samplers consume the generators exactly as torch's do (same calls, same sizes, same order),
so with equal seeds they give torch's indices and leave the generators in torch's state.
"""
import itertools
import typing

from ... import _dtype
from ...ops.creation import as_tensor, empty
from ...ops.random import Generator, multinomial, randint, randperm, random_

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]

_Index = typing.TypeVar("_Index", covariant=True)
_CHUNK = 32      # RandomSampler(replacement=True) draws its indices 32 at a time


def _draw_seed(generator=None):
    """One int64 from ``generator`` (the default one when None): torch's
    ``torch.empty((), dtype=torch.int64).random_(generator=...).item()``."""
    return int(random_(empty((), dtype=_dtype.int64), generator=generator).item())


def _strict_positive_int(value):
    """An int (not a bool) above zero."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


class Sampler(typing.Generic[_Index]):
    """Base class: subclasses yield indices (or batches of indices) from ``__iter__``."""

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __len__(self):
        return len(self.data_source)

    def __iter__(self):
        n = len(self.data_source)
        return iter(range(n))


class RandomSampler(Sampler):
    """A permutation per pass (or ``num_samples`` draws with replacement). Without an explicit generator
    each iteration seeds a fresh Generator from one draw of the default generator, as torch does."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples       # torch's attribute (accelerate reads it)
        self.generator = generator
        if type(replacement) is not bool:
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        count = self.num_samples
        if not isinstance(count, int) or count <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={count}")

    @property
    def num_samples(self):
        fixed = self._num_samples
        return len(self.data_source) if fixed is None else fixed

    def __len__(self):
        return self.num_samples

    def _chunks(self, n, gen):
        """Lists of indices, in the order (and with the generator calls) torch makes them."""
        wanted = self.num_samples
        if self.replacement:
            whole, tail = divmod(wanted, _CHUNK)
            for size in [_CHUNK] * whole + [tail]:
                yield randint(high=n, size=(size,), dtype=_dtype.int64, generator=gen).tolist()
            return
        whole, tail = divmod(wanted, n)
        for _ in range(whole):
            yield randperm(n, generator=gen).tolist()
        yield randperm(n, generator=gen).tolist()[:tail]

    def __iter__(self):
        n = len(self.data_source)
        gen = self.generator if self.generator is not None else Generator().manual_seed(_draw_seed())
        for chunk in self._chunks(n, gen):
            yield from chunk


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (one randperm per pass)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):        # a generator: the permutation is drawn at the first next(), as torch does
        order = randperm(len(self.indices), generator=self.generator).tolist()
        for k in order:
            yield self.indices[k]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn by ``multinomial`` over ``weights`` (float64)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not _strict_positive_int(num_samples):
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if type(replacement) is not bool:
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        table = as_tensor(weights, dtype=_dtype.float64)
        if table.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(table.shape)}")
        self.weights, self.num_samples = table, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self):        # drawn lazily, at the first next()
        picks = multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from picks.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter unless dropped)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not _strict_positive_int(batch_size):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if type(drop_last) is not bool:
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
