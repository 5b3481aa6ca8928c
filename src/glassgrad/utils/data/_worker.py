"""What runs inside a DataLoader worker process, and what it sends back.

A worker seeds Python's ``random``, glassgrad's default generator (``base_seed + worker_id``) and NumPy's
global RNG (from a hash of base_seed and worker_id, the state torch's workers give NumPy), runs
``worker_init_fn``, then answers ``(task_idx, index)`` requests from its index queue with
``(task_idx, batch)`` on the shared result queue until it receives ``None``.
"""
import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ...ops.creation import manual_seed
from ._fetch import _DatasetKind

__all__ = ["WorkerInfo", "get_worker_info"]

MP_STATUS_CHECK_INTERVAL = 5.0     # seconds the main process waits for a worker to exit before terminating it
_WORKER_POLL = 0.5                 # seconds between a worker's checks of its parent and of the done event

_worker_info = None


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker."""
    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


def get_worker_info():
    """The current worker's WorkerInfo; None in the main process."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """Sent when a worker's iterable dataset is exhausted."""
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; echoed back once seen."""
    seed: object = None


class KeyErrorMessage(str):
    """A KeyError argument that prints as itself (KeyError would otherwise show its repr)."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried back as its type and formatted traceback text."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            err = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        try:
            raise err
        finally:
            del err     # no exception -> traceback -> this frame -> exception cycle keeping the iterator alive


# -- NumPy seeding ------------------------------------------------------------------------------
_M32 = 0xFFFFFFFF


def _numpy_seed_state(base_seed, worker_id):
    """Four 32-bit words for ``np.random.seed``: a SeedSequence-style hash of (worker_id, base_seed).
    The constants are NumPy's SeedSequence ones, which torch's workers use for the same purpose."""
    mult = [0x43B0D7E5]

    def hashmix(v):
        v = (v ^ mult[0]) & _M32
        mult[0] = (mult[0] * 0x931E8875) & _M32
        v = (v * mult[0]) & _M32
        return v ^ (v >> 16)

    def mix(x, y):
        r = (0xCA01F9DD * x - 0x4973F715 * y) & _M32
        return r ^ (r >> 16)

    pool = [hashmix(w) for w in (worker_id, base_seed & _M32, base_seed >> 32, 0)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hashmix(pool[src]))
    out, c = [], 0x8B51F9DD
    for word in pool:
        v = (word ^ c) & _M32
        c = (c * 0x58F38DED) & _M32
        v = (v * c) & _M32
        out.append(v ^ (v >> 16))
    return out


class _ParentWatch:
    """Whether the process that started this worker is still our parent."""

    def __init__(self):
        self.parent = os.getppid()

    def alive(self):
        return os.getppid() == self.parent


def _worker_loop(kind, dataset, index_queue, result_queue, done_event, auto_collation, collate_fn, drop_last,
                 base_seed, init_fn, worker_id, num_workers, persistent_workers):
    global _worker_info
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        np.random.seed(_numpy_seed_state(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        pending_error, fetcher = None, None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            pending_error = ExceptionWrapper(where=where)
        exhausted = False
        watch = _ParentWatch()
        while watch.alive():
            try:
                msg = index_queue.get(timeout=_WORKER_POLL)
            except queue.Empty:
                if done_event.is_set():           # shutting down (the final None may never arrive)
                    break
                continue
            if msg is None:                       # shut down
                break
            if isinstance(msg, _ResumeIteration):  # a new epoch (persistent workers)
                result_queue.put((msg, None))
                exhausted = False
                fetcher = _DatasetKind.create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            if done_event.is_set() or exhausted:
                continue
            task, index = msg
            if pending_error is not None:
                out, pending_error = pending_error, None
            else:
                try:
                    out = fetcher.fetch(index)
                except StopIteration:
                    if kind == _DatasetKind.Iterable:
                        out, exhausted = _IterableDatasetStopIteration(worker_id), True
                    else:
                        out = ExceptionWrapper(where=where)
                except Exception:
                    out = ExceptionWrapper(where=where)
            result_queue.put((task, out))
            del out, msg, index
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        # the main process may no longer read: don't block exit flushing unread results
        result_queue.cancel_join_thread()
        result_queue.close()
