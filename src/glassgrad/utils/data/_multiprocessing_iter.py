"""DataLoader iteration with a pool of worker processes.

The pool owns the processes (start, stop, death detection), deals requests to them and reassembles the
answers. Requests are numbered in plan order (``seq``) and dealt to the live workers in turn, with at most
``prefetch_factor * num_workers`` outstanding: a new one is sent each time one is handed out. All workers
answer on one result queue in whatever order they finish; with ``in_order`` an answer is held back until
every earlier one has been handed out, so the batches are exactly those of ``num_workers=0``.

A worker of an iterable dataset that runs dry answers ``_StreamEnded``; it then gets no more requests, and
the requests it still held are skipped. Persistent pools keep their processes between epochs: a new
epoch sends every worker an ``_EpochMarker`` and discards whatever the previous epoch left in the queue.
"""
import atexit
import multiprocessing
import pickle
import queue
import warnings

from ._fetch import _DatasetKind, _EpochIter
from ._worker import MP_STATUS_CHECK_INTERVAL, _CaughtError, _EpochMarker, _StreamEnded, _WorkerJob, worker_main

__all__ = ["_WorkerPoolIter"]

_RESULT_WAIT = 0.2      # seconds between liveness checks of the workers while waiting without a timeout
                        # (torch hears of a dead worker through SIGCHLD; polling keeps the report prompt)

_interpreter_exiting = []       # non-empty once the interpreter is exiting: multiprocessing then reaps workers
atexit.register(_interpreter_exiting.append, True)

_PICKLE_HINT = ("Got pickle error when attempting to start a worker Process. This might be because the worker "
                "Process arguments are not picklable. Python 3.14+ changed the multiprocessing start method in "
                "non-Mac POSIX platforms to 'forkserver', which requires the worker Process arguments to be "
                "picklable. You can also try multiprocessing.set_start_method('fork').")


class _WorkerPoolIter(_EpochIter):
    _torch_name = "_MultiProcessingDataLoaderIter"

    def __init__(self, plan):
        self._closed = True         # nothing to stop until processes exist
        self._workers = []          # the Process objects (torch's attribute name; tests look at it)
        super().__init__(plan)
        if plan.prefetch <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        ctx = plan.context or multiprocessing.get_context()
        count = plan.workers
        self._results = ctx.Queue()
        self._stop = ctx.Event()
        self._inboxes = []
        self._live = [True] * count
        self._closed = False
        job = _WorkerJob(plan.kind, plan.dataset, plan.batched, plan.collate, plan.drop_last, plan.seed,
                         plan.init_fn)
        for wid in range(count):
            inbox = ctx.Queue()
            inbox.cancel_join_thread()      # exiting never waits on requests a dead worker won't read
            proc = ctx.Process(target=worker_main, args=(wid, count, job, inbox, self._results, self._stop),
                               daemon=True)
            try:
                proc.start()
            except (TypeError, AttributeError, pickle.PicklingError):
                warnings.warn(_PICKLE_HINT, stacklevel=2)
                raise
            self._inboxes.append(inbox)
            self._workers.append(proc)
        self._clear_books()
        self._fill()

    # -- bookkeeping of one epoch ----------------------------------------------------------------------
    def _clear_books(self):
        count = len(self._workers)
        self._next_seq = 0              # number the next request sent gets
        self._want = 0                  # number of the next answer to hand out
        self._holder = {}               # seq -> worker, for requests sent and not yet handed out
        self._early = {}                # seq -> answer received ahead of its turn
        self._live = [True] * count     # workers that still take requests
        self._load = [0] * count        # requests each worker holds
        self._turn = 0                  # the worker asked first for the next request

    def _fill(self):
        for _ in range(self._plan.prefetch * len(self._workers)):
            self._send_one()

    def _new_epoch(self, announced_len):
        """Persistent pools: restart the plan and have every worker begin a new pass."""
        self._rewind(announced_len)
        self._clear_books()
        for inbox in self._inboxes:
            inbox.put(_EpochMarker())
        pending = len(self._workers)
        while pending:
            seq, _ = self._receive()
            if seq is None:             # an acknowledgement; anything else is left from the last epoch
                pending -= 1
        self._fill()

    def _pick_worker(self):
        """The next live worker in turn that may take a request (out of order: one below its share of
        the prefetch budget); None when there is none -- the request is then dropped, as torch does."""
        count = len(self._workers)
        share = self._plan.prefetch * count // max(1, sum(self._live))
        for _ in range(count):
            wid = self._turn
            self._turn = (wid + 1) % count
            if self._live[wid] and (self._plan.in_order or self._load[wid] < share):
                return wid
        return None

    def _send_one(self):
        try:
            request = next(self._requests)
        except StopIteration:
            return
        wid = self._pick_worker()
        if wid is None:
            return
        seq = self._next_seq
        self._inboxes[wid].put((seq, request))
        self._holder[seq] = wid
        self._load[wid] += 1
        self._next_seq = seq + 1

    # -- receiving ---------------------------------------------------------------------------------------
    def _check_deaths(self, cause):
        dead = [wid for wid, proc in enumerate(self._workers) if self._live[wid] and not proc.is_alive()]
        if dead:
            for wid in dead:
                self._retire(wid)
            pids = ", ".join(str(self._workers[wid].pid) for wid in dead)
            raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from cause

    def _receive(self):
        """The next ``(seq, payload)`` from the result queue; torch's errors when a worker died or
        ``timeout`` seconds passed without one."""
        limit = self._plan.timeout
        while True:
            try:
                return self._results.get(timeout=limit if limit > 0 else _RESULT_WAIT)
            except queue.Empty as err:
                self._check_deaths(err)
            except Exception as err:
                self._check_deaths(err)
                raise
            if limit > 0:
                raise RuntimeError(f"DataLoader timed out after {limit} seconds")

    def _turn_is_pending(self):
        """Move ``_want`` past requests whose worker ran dry before answering them; False when nothing
        of this epoch is left to hand out."""
        while self._want < self._next_seq:
            wid = self._holder.get(self._want)
            if wid is not None and (self._live[wid] or self._want in self._early):
                return True
            self._holder.pop(self._want, None)
            self._want += 1
        return False

    def _hand_out(self, seq, payload):
        wid = self._holder.pop(seq)
        if seq == self._want:
            self._want += 1
        self._load[wid] -= 1
        self._send_one()
        if isinstance(payload, _CaughtError):
            payload.reraise()
        return payload

    def _produce(self):
        iterable = self._plan.kind == _DatasetKind.Iterable
        while True:
            if not self._turn_is_pending():
                if not self._plan.persistent:
                    self._shutdown_workers()
                raise StopIteration
            if self._want in self._early:
                return self._hand_out(self._want, self._early.pop(self._want))
            seq, payload = self._receive()
            if iterable and isinstance(payload, _StreamEnded):
                if self._plan.persistent:
                    self._live[payload.worker_id] = False       # keep the process for the next epoch
                else:
                    self._retire(payload.worker_id)
                self._send_one()
                continue
            if seq == self._want or not self._plan.in_order:
                return self._hand_out(seq, payload)
            self._early[seq] = payload

    # -- stopping ------------------------------------------------------------------------------------------
    def _retire(self, wid):
        """Tell worker ``wid`` to exit and send it nothing more."""
        self._inboxes[wid].put(None)
        self._live[wid] = False

    def _shutdown_workers(self):
        if self._closed or _interpreter_exiting:
            return
        self._closed = True
        try:
            self._stop.set()
            for wid in range(len(self._workers)):
                if self._live[wid] or self._plan.persistent:
                    self._retire(wid)
            for proc in self._workers:
                proc.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for inbox in self._inboxes:
                inbox.cancel_join_thread()
                inbox.close()
        finally:
            for proc in self._workers:
                if proc.is_alive():
                    proc.terminate()
                    proc.join(timeout=MP_STATUS_CHECK_INTERVAL)

    def __del__(self):
        self._shutdown_workers()
