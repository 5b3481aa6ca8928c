"""torch.utils.data.DataLoader: batches from a dataset, in this process or in worker processes.

The loader checks its arguments (``_check_args``), keeps torch's public attributes, and on each
``iter()`` captures a ``_Plan`` -- the requests to make (the batch sampler, or the sampler without
auto-batching), how to read and collate them, and a base seed -- which it hands to an in-process
iterator or to a worker pool (_multiprocessing_iter.py).

RNG use matches torch's: each new iterator draws one int64 base seed from the loader's generator (the
default one when None), then the sampler draws what it draws; so shuffled orders and the default
generator's state after an epoch equal torch's for the same seed. Workers are seeded from the base seed.
"""
import itertools
import multiprocessing
import os
import warnings
from typing import Any, Callable, Generic, NamedTuple, Optional, TypeVar

from ... import backend
from ._collate import default_collate, default_convert
from ._fetch import _DatasetKind, _EpochIter, make_reader
from ._multiprocessing_iter import _WorkerPoolIter
from ._worker import get_worker_info
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _draw_seed

# torch's names for the iterator classes (libraries test isinstance against them): the base, in-process, pool
_BaseDataLoaderIter, _MultiProcessingDataLoaderIter = _EpochIter, _WorkerPoolIter

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

_Batch = TypeVar("_Batch", covariant=True)

# attributes that cannot be reassigned once the loader is built (torch's list)
_FROZEN = frozenset({"batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"})


class _InfiniteConstantSampler(Sampler):
    """The sampler given to an iterable dataset (torch's class name): ``None`` requests without end; the
    dataset itself decides when an epoch is over."""

    def __iter__(self):
        return itertools.repeat(None)


def _checked_context(ctx, num_workers):
    """A multiprocessing context from a context object, a start-method name or None, checked as torch does."""
    if ctx is None:
        return None
    if num_workers <= 0:
        raise ValueError("multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                         f"but got num_workers={num_workers}")
    if isinstance(ctx, str):
        methods = multiprocessing.get_all_start_methods()
        if ctx not in methods:
            raise ValueError(f"multiprocessing_context option should specify a valid start method in {methods!r}, "
                             f"but got multiprocessing_context={ctx!r}")
        ctx = multiprocessing.get_context(ctx)
    if isinstance(ctx, multiprocessing.context.BaseContext):
        return ctx
    raise TypeError("multiprocessing_context option should be a valid context object or a string specifying the "
                    f"start method, but got multiprocessing_context={ctx}")


def _check_args(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, timeout, drop_last, generator,
                prefetch_factor, persistent_workers, mp_context):
    """Validate the constructor arguments in torch's order, with torch's messages, and resolve the defaults.
    Returns a dict of the public attributes that depend on them (plus ``kind``)."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if prefetch_factor is None:
        prefetch_factor = 2 if num_workers else None
    elif not num_workers:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                         "to enable multiprocessing, otherwise set prefetch_factor to None.")
    elif prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and not num_workers:
        raise ValueError("persistent_workers option needs num_workers > 0")
    mp_context = _checked_context(mp_context, num_workers)

    streaming = isinstance(dataset, IterableDataset)
    if streaming:
        given = {"shuffle": shuffle not in (False, None), "sampler": sampler is not None,
                 "batch_sampler": batch_sampler is not None}
        for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
            if given[name]:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, but got "
                                 f"{name}={value}")
    else:
        shuffle = bool(shuffle)
    if shuffle and sampler is not None:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is None:
        if drop_last and batch_size is None:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
    elif batch_size != 1 or shuffle or sampler is not None or drop_last:
        raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                         "drop_last")
    else:
        batch_size, drop_last = None, False

    if sampler is None:
        if streaming:
            sampler = _InfiniteConstantSampler()
        else:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
    if batch_sampler is None and batch_size is not None:
        batch_sampler = BatchSampler(sampler, batch_size, drop_last)
    return dict(kind=_DatasetKind.Iterable if streaming else _DatasetKind.Map, prefetch_factor=prefetch_factor,
                multiprocessing_context=mp_context, sampler=sampler, batch_sampler=batch_sampler,
                batch_size=batch_size, drop_last=drop_last)


def _usable_cpus():
    """(CPUs this process may run on or None, whether CPU affinity could be taken into account)."""
    if not hasattr(os, "sched_getaffinity"):
        return os.cpu_count(), False
    try:
        return len(os.sched_getaffinity(0)), True
    except Exception:
        return os.cpu_count(), True


class _Plan(NamedTuple):
    """One iterator's view of its loader, captured at ``iter()`` (iterators keep no reference to the loader)."""
    dataset: Any
    kind: int
    requests: Any               # the batch sampler (auto-batching) or the sampler
    batched: bool
    collate: Callable
    drop_last: bool
    workers: int
    timeout: float
    prefetch: Optional[int]
    in_order: bool
    persistent: bool
    init_fn: Optional[Callable]
    context: Any
    seed: int                   # the base seed, drawn from the loader's generator
    announced_len: Optional[int]  # len(dataset) as reported by len(loader) for an iterable dataset


class _InProcessIter(_EpochIter):
    _torch_name = "_SingleProcessDataLoaderIter"

    def __init__(self, plan):
        super().__init__(plan)
        if plan.timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._reader = make_reader(plan.kind, plan.dataset, plan.batched, plan.collate, plan.drop_last)

    def _produce(self):
        return self._reader.fetch(next(self._requests))


_SingleProcessDataLoaderIter = _InProcessIter


class DataLoader(Generic[_Batch]):
    """Combines a dataset and a sampler and iterates over batches (see torch.utils.data.DataLoader)."""

    _built = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        resolved = _check_args(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, timeout,
                               drop_last, generator, prefetch_factor, persistent_workers, multiprocessing_context)
        self._kind = resolved.pop("kind")
        if collate_fn is None:
            collate_fn = default_collate if resolved["batch_sampler"] is not None else default_convert
        attrs = dict(dataset=dataset, num_workers=num_workers, pin_memory=pin_memory,
                     pin_memory_device=pin_memory_device, timeout=timeout, worker_init_fn=worker_init_fn,
                     in_order=in_order, generator=generator, collate_fn=collate_fn,
                     persistent_workers=persistent_workers, **resolved)
        for name, value in attrs.items():
            setattr(self, name, value)
        self._built = True
        self._reported_len = None       # len(dataset) as last reported through len(self), iterable datasets
        self._iterator = None            # the persistent pool (torch's attribute name)
        self.check_worker_number_rationality()

    def __setattr__(self, name, value):
        if name in _FROZEN and self._built:
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def multiprocessing_context(self):
        return self._mp_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        self._mp_context = _checked_context(ctx, self.num_workers)

    def check_worker_number_rationality(self):
        """Warn, with torch's text, when more workers are requested than this process has CPUs."""
        wanted = self.num_workers
        if not wanted:
            return
        cpus, affinity_known = _usable_cpus()
        if cpus is not None and wanted <= cpus:
            return
        if cpus is None:
            advice = "DataLoader is not able to compute a suggested max number of worker in current system."
        else:
            note = "" if affinity_known else " (`cpuset` is not taken into account)"
            advice = (f"Our suggested max number of worker in current system is {cpus}{note}, which is smaller "
                      "than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {wanted} worker processes in total. {advice} Please be aware "
                      "that excessive worker creation might get DataLoader running slow or even freeze, lower the "
                      "worker number to avoid potential slowness/freeze if necessary.", stacklevel=2)

    # -- iteration -------------------------------------------------------------------------------------
    def _requests(self):
        return self.sampler if self.batch_sampler is None else self.batch_sampler

    def _start(self):
        """A new iterator: torch's warnings (worker count, pin memory), the base-seed draw, then the
        in-process iterator or a worker pool."""
        if self.num_workers:
            self.check_worker_number_rationality()
        if self.pin_memory:
            if self.pin_memory_device:
                warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the "
                              f"device,ignore pin_memory_device='{self.pin_memory_device}'.", stacklevel=3)
            if not backend.cuda_available():
                warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device "
                              "pinned memory won't be used.", stacklevel=3)
        plan = _Plan(dataset=self.dataset, kind=self._kind, requests=self._requests(),
                     batched=self.batch_sampler is not None, collate=self.collate_fn, drop_last=self.drop_last,
                     workers=self.num_workers, timeout=self.timeout, prefetch=self.prefetch_factor,
                     in_order=self.in_order, persistent=self.persistent_workers, init_fn=self.worker_init_fn,
                     context=self.multiprocessing_context, seed=_draw_seed(self.generator),
                     announced_len=self._reported_len)
        return _WorkerPoolIter(plan) if plan.workers else _InProcessIter(plan)

    def __iter__(self):
        if not (self.persistent_workers and self.num_workers > 0):
            return self._start()
        if self._iterator is None:
            self._iterator = self._start()
        else:
            self._iterator._new_epoch(self._reported_len)
        return self._iterator

    def __len__(self):
        if self._kind != _DatasetKind.Iterable:
            return len(self._requests())
        n = self._reported_len = len(self.dataset)
        size = self.batch_size
        if size is None:
            return n
        return n // size if self.drop_last else -(-n // size)
