"""Reading one epoch of a DataLoader.

A *request* is what the loader's plan yields per batch: one index (no auto-batching) or a list of
indices (auto-batching). A reader turns a request into collated data; for an iterable dataset only the
length of the list matters, samples are taken from one running iterator over the dataset.

``_EpochIter`` is the part both DataLoader iterators share (in-process and worker pool): the requests of
the current epoch, the count of batches handed out and torch's warning when an IterableDataset yields
more than its reported length.
"""
import itertools
import warnings

__all__ = ["_DatasetKind", "make_reader"]


class _DatasetKind:
    """torch's constants for the two dataset styles (exported by torch.utils.data)."""
    Map, Iterable = 0, 1

    @staticmethod
    def create_fetcher(kind, dataset, batched, collate, drop_last):
        return make_reader(kind, dataset, batched, collate, drop_last)


class _IndexReader:
    """Requests against a map-style dataset; a batch goes through ``__getitems__`` when it has one."""

    def __init__(self, dataset, batched, collate, drop_last=False):
        self._source = dataset
        self._batched = batched
        self._collate = collate

    def fetch(self, request):
        source = self._source
        if not self._batched:
            return self._collate(source[request])
        bulk = getattr(source, "__getitems__", None)
        return self._collate(bulk(request) if bulk else [source[k] for k in request])


class _StreamReader:
    """Requests against an iterable dataset: the next sample, or the next ``len(request)`` ones.

    StopIteration ends the stream: raised once nothing is left, or when ``drop_last`` and only a short
    batch remains; after a short batch the underlying iterator is not asked again.
    """

    def __init__(self, dataset, batched, collate, drop_last=False):
        self._stream = iter(dataset)
        self._batched = batched
        self._collate = collate
        self._drop_short = drop_last
        self._dry = False

    def fetch(self, request):
        if self._dry:
            raise StopIteration
        if not self._batched:
            return self._collate(next(self._stream))
        want = len(request)
        got = list(itertools.islice(self._stream, want))
        self._dry = len(got) < want
        if not got or (self._dry and self._drop_short):
            raise StopIteration
        return self._collate(got)


def make_reader(kind, dataset, batched, collate, drop_last):
    """The reader for ``dataset`` (``kind`` is a _DatasetKind constant)."""
    cls = _StreamReader if kind == _DatasetKind.Iterable else _IndexReader
    return cls(dataset, batched, collate, drop_last)


def _overrun_message(dataset, announced, fetched, pooled):
    text = (f"Length of IterableDataset {dataset} was reported to be {announced}(when accessing "
            f"len(dataloader)), but {fetched} samples have been fetched. ")
    if pooled:
        text += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                 "IterableDataset replica at each worker. Please see "
                 "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
    return text


class _EpochIter:
    """Base of the DataLoader iterators. ``plan`` is the loader's _Plan; subclasses define ``_produce``."""

    _torch_name = ""        # the name torch's corresponding iterator class has (shown when pickling fails)

    def __init__(self, plan):
        self._plan = plan
        self._rewind(plan.announced_len)

    def _rewind(self, announced_len):
        """Start a pass: fresh requests, nothing handed out yet, the loader's current len() report."""
        self._requests = iter(self._plan.requests)
        self._handed = 0
        self._announced = announced_len

    def __iter__(self):
        return self

    def __next__(self):
        out = self._produce()
        self._handed += 1
        limit = self._announced
        if limit is not None and self._handed > limit and self._plan.kind == _DatasetKind.Iterable:
            warnings.warn(_overrun_message(self._plan.dataset, limit, self._handed, self._plan.workers > 0),
                          stacklevel=2)
        return out

    def _produce(self):
        raise NotImplementedError

    def __len__(self):
        return len(self._plan.requests)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self._torch_name)
