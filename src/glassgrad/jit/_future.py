"""torch.futures.Future as torch.jit.fork returns it: a result (or an error) with wait / value / done / then."""
import threading

__all__ = ["Future"]


class Future:
    def __init__(self, *, devices=None):
        self._done = False
        self._event = threading.Event()
        self._result = None
        self._error = None
        self._callbacks = []

    def done(self):
        return self._done

    def wait(self):
        self._event.wait()          # blocks until another thread completes it, as torch's
        if self._error is not None:
            raise self._error
        return self._result

    def value(self):
        return self.wait()

    def set_result(self, result):
        if self._done:
            raise RuntimeError("Future can only be marked completed once")
        self._result, self._done = result, True
        self._fire()

    def set_exception(self, result):
        if self._done:
            raise RuntimeError("Future can only be marked completed once")
        self._error, self._done = result, True
        self._fire()

    def _fire(self):
        self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def then(self, callback):
        """A Future of callback(self), run once this one is done."""
        out = Future()

        def run(fut):
            try:
                out.set_result(callback(fut))
            except Exception as e:
                out.set_exception(e)
        self.add_done_callback(run)
        return out

    def add_done_callback(self, callback):
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)
