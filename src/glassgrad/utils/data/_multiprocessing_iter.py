"""The DataLoader iterator that fetches batches in worker processes.

Tasks (one index or one list of indices each) are numbered in sampler order and handed to the workers
round-robin, at most ``prefetch_factor * num_workers`` in flight. Results come back on one queue in
whatever order the workers finish; they are held until every earlier task has been delivered
(``in_order=True``), so the batches are exactly those of ``num_workers=0``.
"""
import itertools
import multiprocessing
import pickle
import queue
import warnings

from . import dataloader as _dl
from ._fetch import _DatasetKind
from ._worker import (MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, _IterableDatasetStopIteration, _ResumeIteration,
                      _worker_loop)

__all__ = ["_MultiProcessingDataLoaderIter"]

_POLL = 0.2     # seconds between worker liveness checks while waiting without a timeout (torch learns of a
                # dead worker from SIGCHLD at once; polling keeps the report prompt without a signal handler)


class _MultiProcessingDataLoaderIter(_dl._BaseDataLoaderIter):
    def __init__(self, loader):
        self._shutdown = True              # nothing to shut down until the workers exist
        self._workers = []
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._worker_init_fn = loader.worker_init_fn
        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues = []
        self._workers_status = [True] * self._num_workers
        self._shutdown = False
        for wid in range(self._num_workers):
            iq = ctx.Queue()
            iq.cancel_join_thread()     # never block exit on indices a dead worker will not read
            w = ctx.Process(target=_worker_loop, daemon=True,
                            args=(self._dataset_kind, self._dataset, iq, self._result_queue, self._done_event,
                                  self._auto_collation, self._collate_fn, self._drop_last, self._base_seed,
                                  self._worker_init_fn, wid, self._num_workers, self._persistent_workers))
            try:
                w.start()
            except (TypeError, AttributeError, pickle.PicklingError):
                warnings.warn("Got pickle error when attempting to start a worker Process. This might be because "
                              "the worker Process arguments are not picklable. Python 3.14+ changed the "
                              "multiprocessing start method in non-Mac POSIX platforms to 'forkserver', which "
                              "requires the worker Process arguments to be picklable. You can also try "
                              "multiprocessing.set_start_method('fork').", stacklevel=2)
                raise
            self._index_queues.append(iq)
            self._workers.append(w)
        self._reset(loader, first_iter=True)

    # -- epoch bookkeeping ------------------------------------------------------------------------
    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0             # number of the next task to hand out
        self._rcvd_idx = 0             # number of the next task to deliver
        self._owner = {}               # task -> worker, for tasks not yet delivered
        self._arrived = {}             # task -> result that came early (in_order)
        self._tasks_outstanding = 0    # tasks handed out whose result has not come back
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: start a new epoch; drop results of the previous one still in the queue
            for iq in self._index_queues:
                iq.put(_ResumeIteration())
            acks = 0
            while acks < self._num_workers:
                tag, _ = self._get_data()
                if isinstance(tag, _ResumeIteration):
                    acks += 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        limit = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            wid = next(self._worker_cycle)
            if not self._workers_status[wid]:
                continue
            if self._in_order or self._workers_num_tasks[wid] < limit // sum(self._workers_status):
                break
        else:
            return                      # no worker can take it (all ended)
        self._index_queues[wid].put((self._send_idx, index))
        self._owner[self._send_idx] = wid
        self._workers_num_tasks[wid] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    # -- receiving ----------------------------------------------------------------------------------
    def _try_get_data(self, timeout=_POLL):
        try:
            return True, self._result_queue.get(timeout=timeout)
        except Exception as e:
            dead = [w for wid, w in enumerate(self._workers) if self._workers_status[wid] and not w.is_alive()]
            for w in dead:
                self._mark_worker_as_unavailable(self._workers.index(w))
            if dead:
                pids = ", ".join(str(w.pid) for w in dead)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _skip_lost_tasks(self):
        """Advance past tasks whose worker ended its stream before answering them; False when the
        epoch has nothing left to deliver."""
        while self._rcvd_idx < self._send_idx:
            wid = self._owner.get(self._rcvd_idx)
            if wid is not None and (self._rcvd_idx in self._arrived or self._workers_status[wid]):
                return True
            self._owner.pop(self._rcvd_idx, None)
            self._rcvd_idx += 1
        return False

    def _deliver(self, task, data):
        wid = self._owner.pop(task)
        if task == self._rcvd_idx:
            self._rcvd_idx += 1
        self._workers_num_tasks[wid] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _next_data(self):
        while True:
            if not self._skip_lost_tasks():
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if self._rcvd_idx in self._arrived:
                return self._deliver(self._rcvd_idx, self._arrived.pop(self._rcvd_idx))
            task, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable and isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if task == self._rcvd_idx or not self._in_order:
                return self._deliver(task, data)
            self._arrived[task] = data

    # -- shutdown ---------------------------------------------------------------------------------------
    def _mark_worker_as_unavailable(self, wid, shutdown=False):
        self._index_queues[wid].put(None)
        self._workers_status[wid] = False

    def _shutdown_workers(self):
        if _dl._exiting or self._shutdown:
            return
        self._shutdown = True
        try:
            self._done_event.set()
            for wid in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[wid]:
                    self._mark_worker_as_unavailable(wid, shutdown=True)
            for w in self._workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for iq in self._index_queues:
                iq.cancel_join_thread()
                iq.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=MP_STATUS_CHECK_INTERVAL)

    def __del__(self):
        self._shutdown_workers()
