"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

The state lives in one small object read on every op (`state.enabled`), defined in the leaf module
``glassgrad/_grad_state.py`` so that Tensor can read it without loading autograd.  Each context
manager also works as a decorator, as in PyTorch.
"""
import functools
import inspect
import threading

from .._grad_state import state, record_trace  # noqa: F401  (the flags live in a leaf module: Tensor reads them)


def is_grad_enabled():
    return state.enabled


def is_inference_mode_enabled():
    return state.inference


class _DecoratorContextManager:
    """A context manager that is also usable as ``@decorator`` and ``@decorator()``."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("Decorating classes is deprecated and will be disabled in future versions.")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:
                            with self.clone():
                                response = gen.throw(e)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as e:
                    return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    def __init__(self, orig_func=None):
        self.prev = None
        if orig_func is not None:  # used as a bare decorator: @no_grad
            self._wrapped = self(orig_func)

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __enter__(self):
        self.prev = state.enabled
        state.enabled = False

    def __exit__(self, *exc):
        state.enabled = self.prev


class enable_grad(no_grad):
    def __enter__(self):
        self.prev = state.enabled
        state.enabled = True


def _check_enabled(fn, mode):
    """torch's parser on the `enabled` argument: a bool, nothing else."""
    if mode.__class__ is not bool:
        raise TypeError(f"{fn}(): argument 'enabled' (position 1) must be bool, not {type(mode).__name__}")


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on construction (function use) and restores it on exit (with-block use)."""

    def __init__(self, mode):
        _check_enabled("set_grad_enabled", mode)
        self.prev = state.enabled
        self.mode = mode
        state.enabled = self.mode

    def __call__(self, func):
        state.enabled = self.prev
        return super().__call__(func)

    def __enter__(self):
        state.enabled = self.mode

    def __exit__(self, *exc):
        state.enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    def __init__(self, mode=True):
        self.mode = mode
        self.prev = None

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __enter__(self):
        self.prev = (state.enabled, state.inference)
        if self.mode:
            state.enabled = False
            state.inference = True
        else:
            state.inference = False

    def __exit__(self, *exc):
        state.enabled, state.inference = self.prev

    def clone(self):
        return self.__class__(self.mode)


class _Threads(threading.local):
    multithreading = True


_threads = _Threads()


def is_multithreading_enabled():
    """This thread's set_multithreading_enabled switch (torch._C._is_multithreading_enabled)."""
    return _threads.multithreading


class set_multithreading_enabled(_DecoratorContextManager):
    """Enable or disable multithreaded backward for this thread; as a function it sets the switch, as a context
    manager (or decorator) the previous value comes back on exit.  torch runs backward on per-device worker threads
    only for accelerator devices; glassgrad's engine runs every backward on the calling thread, so either value
    computes the same gradients on the same thread."""

    def __init__(self, mode):
        _check_enabled("set_multithreading_enabled", mode)
        self.prev = _threads.multithreading
        _threads.multithreading = mode
        self.mode = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _threads.multithreading = self.prev

    def clone(self):
        return self.__class__(self.mode)
