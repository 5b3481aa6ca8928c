"""torch.futures: Future (a value, or an error, set once; callbacks run when it completes), collect_all,
wait_all. glassgrad runs everything eagerly on the calling thread, so a Future is complete as soon as someone
sets it; ``wait`` blocks (another thread may complete it) and a callback runs at once when added to a
completed Future -- torch's CPU semantics.
"""
import sys
import threading
import traceback

__all__ = ["Future", "collect_all", "wait_all"]


def _callback_error(e):
    """torch's wrapping of an exception raised inside a callback: a RuntimeError naming it, with the frames."""
    frames = traceback.extract_tb(e.__traceback__)[::-1]
    at = "".join(f"  {f.filename}({f.lineno}): {f.name}\n" for f in frames)
    return RuntimeError(f"Got the following error when running the callback: {type(e).__name__}: {e}\n\nAt:\n{at}")


def _cuda_available():
    from . import backend
    return backend.cuda_available()


class Future:
    """A placeholder for a result: ``set_result`` / ``set_exception`` complete it once; ``wait`` returns the
    result (raising the error); ``then`` chains a callback into a new Future."""

    def __init__(self, *, devices=None):
        if devices:
            from ._device import device as _device
            for d in devices:
                dev = _device(d)
                if dev.type == "cuda" and not _cuda_available():
                    raise RuntimeError("PyTorch is not linked with support for cuda devices")
                if dev.index is None:
                    raise ValueError(f"Expected devices to have indices, got {dev}")
        self._done = False
        self._event = threading.Event()
        self._result = None
        self._error = None
        self._callbacks = []
        self._lock = threading.Lock()

    def __class_getitem__(cls, item):          # Future[int], as torch's Generic
        return cls

    def done(self):
        """Whether a result or an error has been set."""
        return self._done

    def wait(self):
        """Block until the Future completes; its result, or raise its error."""
        self._event.wait()
        if self._error is not None:
            raise self._error
        return self._result

    def value(self):
        """The result of a completed Future (raises its error); torch asserts on an incomplete one."""
        if not self._done:
            raise RuntimeError("completed() INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/aten/src/ATen/core/"
                               "ivalue_inl.h\":1016, please report a bug to PyTorch. ")
        if self._error is not None:
            raise self._error
        return self._result

    def _complete(self, result, error):
        with self._lock:
            if self._done:
                raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future "
                                   "can only be marked completed once.")
            self._result, self._error, self._done = result, error, True
            callbacks, self._callbacks = self._callbacks, []
        self._event.set()
        for cb in callbacks:
            self._run(cb)

    def _run(self, callback):
        try:
            callback(self)
        except Exception as e:             # torch logs a callback's error and carries on
            print(str(_callback_error(e)), file=sys.stderr)

    def set_result(self, result):
        """Complete with a result; callbacks run now."""
        self._complete(result, None)

    def set_exception(self, result):
        """Complete with an error, which ``wait`` / ``value`` raise."""
        if not isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def then(self, callback):
        """A new Future completed with ``callback(self)`` once this one completes (its error wrapped as
        torch's RuntimeError)."""
        out = Future()

        def run(fut):
            try:
                out.set_result(callback(fut))
            except Exception as e:
                out.set_exception(_callback_error(e))
        self.add_done_callback(run)
        return out

    def add_done_callback(self, callback):
        """Run ``callback(self)`` when this Future completes (now, if it has)."""
        with self._lock:
            if not self._done:
                self._callbacks.append(callback)
                return
        self._run(callback)


def collect_all(futures):
    """A Future completed, once every one of ``futures`` is, with the list of those futures."""
    futures = list(futures)
    for f in futures:
        if not isinstance(f, Future):
            raise TypeError("_collect_all(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (arg0: collections.abc.Sequence[torch._C.Future]) -> "
                            f"torch._C.Future\n\nInvoked with: {futures!r}")
    out = Future()
    left = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])
        return out

    def one_done(_):
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            bad = next((f._error for f in futures if f._error is not None), None)
            out._complete(None if bad is not None else futures, bad)   # the first failed future's error
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures):
    """The results of all ``futures`` once each completes; the first error raised."""
    futures = list(futures)
    collect_all(futures).wait()
    return [f.wait() for f in futures]
