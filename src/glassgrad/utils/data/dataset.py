"""torch.utils.data.dataset: map-style and iterable datasets, their combinators, and random_split."""
import bisect
import collections.abc
import itertools
import math
import warnings
import typing

from ...ops.random import default_generator, randperm

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split"]

_Sample = typing.TypeVar("_Sample", covariant=True)


class Dataset(typing.Generic[_Sample]):
    """A map from keys to samples: subclasses define ``__getitem__`` (and usually ``__len__``)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset((self, other))


class IterableDataset(Dataset[_Sample], collections.abc.Iterable):
    """A stream of samples: subclasses define ``__iter__``."""

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the i-th rows of each of the given tensors (all of one length along dim 0)."""

    def __init__(self, *tensors):
        if len({t.size(0) for t in tensors}) > 1:
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        first = self.tensors[0]
        return first.size(0)


def _rows_of(dataset, keys, check=True):
    """``dataset``'s samples at ``keys``, through its ``__getitems__`` when it has one (whose answer's
    length is checked when ``check``)."""
    bulk = getattr(dataset, "__getitems__", None)
    if not callable(bulk):
        return [dataset[k] for k in keys]
    rows = bulk(keys)
    if check and len(rows) != len(keys):
        raise ValueError(f"Nested dataset's output size mismatch. Expected {len(keys)}, got {len(rows)}")
    return rows


class StackDataset(Dataset):
    """Datasets of equal length side by side: positional ones give tuples, keyword ones give dicts."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        members = list(args or kwargs.values())
        if not members:
            raise ValueError("At least one dataset should be passed")
        sizes = {len(m) for m in members}
        if len(sizes) > 1:
            raise ValueError("Size mismatch between datasets")
        self._length = len(members[0])
        self.datasets = args or kwargs

    def _named(self):
        """(key, dataset) pairs; the keys of positional datasets are their positions."""
        d = self.datasets
        return list(d.items()) if isinstance(d, dict) else list(enumerate(d))

    def _shape(self, fields):
        """One sample from its fields (a dict keyed like ``_named``)."""
        return fields if isinstance(self.datasets, dict) else tuple(fields.values())

    def __getitem__(self, index):
        return self._shape({key: ds[index] for key, ds in self._named()})

    def __getitems__(self, keys):
        columns = [(name, _rows_of(ds, keys)) for name, ds in self._named()]
        return [self._shape({name: col[j] for name, col in columns}) for j in range(len(keys))]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Datasets laid end to end; ``cumulative_sizes[k]`` is the total length of the first k+1."""

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(map(len, sequence)))

    def __init__(self, datasets):
        super().__init__()
        parts = list(datasets)
        if not parts:
            raise AssertionError("datasets should not be an empty iterable")
        for part in parts:
            if isinstance(part, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.datasets = parts
        self.cumulative_sizes = ConcatDataset.cumsum(parts)

    def __len__(self):
        ends = self.cumulative_sizes
        return ends[-1]

    def __getitem__(self, idx):
        total = len(self)
        if idx < 0:
            if -idx > total:
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += total
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]

    @property
    def cummulative_sizes(self):
        warnings.warn("cummulative_sizes attribute is renamed to cumulative_sizes", FutureWarning, stacklevel=2)
        return self.cumulative_sizes


def _chained(part):
    if isinstance(part, IterableDataset):
        return part
    raise AssertionError("ChainDataset only supports IterableDataset")


class ChainDataset(IterableDataset):
    """Iterable datasets streamed one after another (each checked when it is reached)."""

    def __init__(self, datasets):
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for part in self.datasets:
            yield from _chained(part)

    def __len__(self):
        return sum(len(_chained(part)) for part in self.datasets)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__. When subclassing Subset and "
                "overriding __getitem__, you must also override __getitems__ to ensure DataLoader works correctly "
                "with your custom logic. A simple implementation:\n\ndef __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        where = [self.indices[i] for i in idx] if isinstance(idx, list) else self.indices[idx]
        return self.dataset[where]

    def __getitems__(self, keys):
        return _rows_of(self.dataset, [self.indices[k] for k in keys], check=False)

    def __len__(self):
        return len(self.indices)


def _lengths_from_fractions(fractions, n):
    """floor(n * f) each, then the remainder handed out one at a time from the first split on."""
    lengths = []
    for pos, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {pos} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for k in range(n - sum(lengths)):
        lengths[k % len(lengths)] += 1
    for pos in (p for p, size in enumerate(lengths) if size == 0):
        warnings.warn(f"Length of split at index {pos} is 0. This might result in an empty dataset.", stacklevel=3)
    return lengths


def random_split(dataset, lengths, generator=default_generator):
    """Split ``dataset`` into non-overlapping Subsets of the given lengths (or fractions summing to 1),
    with one ``randperm`` drawn from ``generator`` -- the same subsets torch gives for the same seed."""
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        lengths = _lengths_from_fractions(lengths, len(dataset))
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = randperm(sum(lengths), generator=generator).tolist()
    bounds = list(itertools.accumulate(lengths, initial=0))
    return [Subset(dataset, order[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]
