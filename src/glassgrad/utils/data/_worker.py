"""The code that runs in a DataLoader worker process.

Protocol. The main process sends on the worker's inbox ``(seq, request)`` to ask for one batch, an
``_EpochMarker`` when a persistent pool starts a new epoch, and ``None`` to stop. The worker answers on
the shared result queue with ``(seq, payload)`` -- the batch, a ``_CaughtError``, or ``_StreamEnded`` when
its iterable dataset has no more samples -- and acknowledges an epoch marker with ``(None, None)``.

Seeding follows torch: Python's ``random`` and glassgrad's default generator get ``base_seed + worker_id``,
NumPy's global RNG the state torch's workers give it (a SeedSequence-style hash of both numbers).
"""
import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from ...ops.random import manual_seed
from ._fetch import _DatasetKind, make_reader

__all__ = ["WorkerInfo", "get_worker_info"]

MP_STATUS_CHECK_INTERVAL = 5.0     # seconds the main process waits for a worker to exit before terminating it
_INBOX_WAIT = 0.5                  # seconds between a worker's checks of its parent and of the stop event

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


class _StreamEnded(NamedTuple):
    """Payload meaning: this worker's iterable dataset is exhausted."""
    worker_id: int


class _EpochMarker:
    """Inbox message of a persistent pool: a new epoch starts (rebuild the reader, then acknowledge)."""


class _WorkerJob(NamedTuple):
    """What a worker needs to serve requests (pickled to the worker under 'spawn'/'forkserver')."""
    kind: int
    dataset: Any
    batched: bool
    collate: Callable
    drop_last: bool
    base_seed: int
    init_fn: Optional[Callable]


class _PlainStr(str):
    """A KeyError argument that prints without quotes (KeyError's str() would show its repr)."""

    def __repr__(self):
        return str.__str__(self)


class _CaughtError:
    """An exception from a worker, carried as its class and the formatted traceback, re-raised in the main
    process with the text "Caught <Type> in DataLoader worker process <n>.\\nOriginal Traceback ..."."""

    def __init__(self, where):
        etype, value, tb = sys.exc_info()
        self.exc_type = etype
        self.trace_text = "".join(traceback.format_exception(etype, value, tb))
        self.where = where

    def reraise(self):
        cls = self.exc_type
        text = f"Caught {cls.__name__} {self.where}.\nOriginal {self.trace_text}"
        if cls is KeyError:
            text = _PlainStr(text)
        elif getattr(cls, "message", None):
            raise cls(message=text)
        try:
            err = cls(text)
        except Exception:
            err = None
        if err is None:                 # the class cannot be built from one message string
            raise RuntimeError(text)
        try:
            raise err
        finally:
            del err     # break exception -> traceback -> this frame -> exception (it would keep iterators alive)


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


def _answer(reader, request, kind, worker_id, where):
    """(payload, exhausted) for one request."""
    try:
        return reader.fetch(request), False
    except StopIteration:
        if kind == _DatasetKind.Iterable:
            return _StreamEnded(worker_id), True
        return _CaughtError(where), False
    except Exception:
        return _CaughtError(where), False


def worker_main(worker_id, num_workers, job, inbox, results, stop):
    """Entry point of a worker process (see the module docstring for the protocol)."""
    global _worker_info
    try:
        seed = job.base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        np.random.seed(_numpy_seed_state(job.base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=job.dataset)
        where = f"in DataLoader worker process {worker_id}"

        def new_reader():
            return make_reader(job.kind, job.dataset, job.batched, job.collate, job.drop_last)

        startup_error, reader = None, None
        try:
            if job.init_fn is not None:
                job.init_fn(worker_id)
            reader = new_reader()
        except Exception:
            startup_error = _CaughtError(where)     # reported as the answer to the first request
        exhausted = False
        parent = os.getppid()
        while os.getppid() == parent:               # stop when orphaned
            try:
                msg = inbox.get(timeout=_INBOX_WAIT)
            except queue.Empty:
                if stop.is_set():                   # shutting down: the final None may never come
                    break
                continue
            if msg is None:
                break
            if isinstance(msg, _EpochMarker):
                results.put((None, None))
                reader, exhausted = new_reader(), False
                continue
            if exhausted or stop.is_set():
                continue
            seq, request = msg
            if startup_error is None:
                payload, exhausted = _answer(reader, request, job.kind, worker_id, where)
            else:
                payload, startup_error = startup_error, None
            results.put((seq, payload))
            del payload, msg, request               # hold no batch while waiting for the next request
    except KeyboardInterrupt:
        pass
    if stop.is_set():
        # the main process may have stopped reading: don't block exit on flushing unread results
        results.cancel_join_thread()
        results.close()
