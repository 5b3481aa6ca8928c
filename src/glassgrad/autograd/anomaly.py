"""detect_anomaly / set_detect_anomaly: remember where each node was made; on a failing or
NaN-producing backward, show that forward traceback."""
import functools
import warnings

import numpy as np

from .grad_mode import state, record_trace  # noqa: F401  (record_trace: its old home)
from .graph import freed_error

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]

_ENABLE_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                   "enabled for debugging.")


def is_anomaly_enabled():
    return state.anomaly


def is_anomaly_check_nan_enabled():
    return state.anomaly_check_nan


class detect_anomaly:
    def __init__(self, check_nan=True):
        self.prev = state.anomaly
        self.prev_nan = state.anomaly_check_nan
        self.check_nan = check_nan
        warnings.warn(_ENABLE_WARNING, UserWarning, stacklevel=2)

    def __enter__(self):
        state.anomaly = True
        state.anomaly_check_nan = self.check_nan

    def __exit__(self, *exc):
        state.anomaly = self.prev
        state.anomaly_check_nan = self.prev_nan

    def __call__(self, fn):

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with self.__class__(self.check_nan):
                return fn(*a, **k)
        return wrapper


class set_detect_anomaly:
    def __init__(self, mode, check_nan=True):
        self.prev = state.anomaly
        self.prev_nan = state.anomaly_check_nan
        state.anomaly = bool(mode)
        state.anomaly_check_nan = check_nan

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.anomaly = self.prev
        state.anomaly_check_nan = self.prev_nan


def run_with_anomaly(node, grads, ns):
    """Run node's backward; on error print the forward trace; with check_nan, raise on NaN output."""
    try:
        if node._saved is None:
            raise freed_error()
        out = node.backward(ns, grads[0]) if node.n_outputs == 1 else node.backward(ns, grads)
    except Exception:
        _warn_trace(node)
        raise
    if state.anomaly_check_nan:
        for i, g in enumerate(out):
            if g is None:
                continue
            arr = ns.data(g)
            if arr.dtype.kind in "fV" and np.isnan(arr).any():
                _warn_trace(node)
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    return out


def _warn_trace(node):
    tr = node._trace
    if tr:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{tr} "
                      "(Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/python_anomaly_mode.cpp:122.)",
                      UserWarning, stacklevel=3)
