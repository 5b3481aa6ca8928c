"""Window functions (torch's formulas, computed in the requested dtype as torch's kernels do): bartlett_window
blackman_window hamming_window hann_window kaiser_window.

ops: bartlett_window blackman_window hamming_window hann_window kaiser_window
"""
import math

import numpy as np

from .. import _args, _dtype, backend
from .._device import as_device, default_device as _default_device
from ._core import as_array, make
from .special_kernels import i0_arr

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window"]


def _window_args(name, window_length, dtype, periodic=True, *numbers):
    n = _args.int_arg(window_length, name, "window_length", 1)
    _args.bool_arg(periodic, name, "periodic", 2)
    for i, v in enumerate(numbers):
        _args.number_arg(v, name, ("alpha", "beta")[i] if name == "hamming_window" else "beta", 3 + i)
    dt = _dtype._default[0] if dtype is None else _dtype.to_dtype(dtype)
    if dt.np.kind not in "fV":
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={_dtype.cpp_name(dt.np)}, "
                           "device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false, "
                           "memory_format=(nullopt))")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    return n, dt


def _like(device):
    """An empty array on the window's device (NEP 35's like= for the arrays made here); None for the CPU."""
    dev = _default_device() if device is None else device
    if dev is None or as_device(dev).type == "cpu":
        return None
    return backend.to_device(np.empty(0), as_device(dev))


def _finish(a, dt, requires_grad):
    t = make(as_array(a).astype(dt.np))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _special(n, dt, requires_grad, like=None):
    """Length 0 and 1: an empty window, and [1]."""
    t = make(np.ones(n, dt.np, like=like))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _work_dtype(dt):
    return np.float32 if dt.np.kind == "V" else dt.np.type


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    n, dt = _window_args("hamming_window", window_length, dtype, periodic, alpha, beta)
    if n <= 1:
        return _special(n, dt, requires_grad, _like(device))
    m = n + 1 if periodic else n
    w = _work_dtype(dt)
    a = np.arange(m, dtype=w, like=_like(device)) * w(2 * math.pi / (m - 1))
    a = np.cos(a) * w(-beta) + w(alpha)
    return _finish(a[:n], dt, requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    _window_args("hann_window", window_length, dtype, periodic)
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, device=device, requires_grad=requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    n, dt = _window_args("bartlett_window", window_length, dtype, periodic)
    if n <= 1:
        return _special(n, dt, requires_grad, _like(device))
    m = n + 1 if periodic else n
    w = _work_dtype(dt)
    a = np.arange(m, dtype=w, like=_like(device)) * w(2.0 / (m - 1))
    half = ((m - 1) >> 1) + 1
    a[half:] = a[half:] * w(-1) + w(2)
    return _finish(a[:n], dt, requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    n, dt = _window_args("blackman_window", window_length, dtype, periodic)
    if n <= 1:
        return _special(n, dt, requires_grad, _like(device))
    m = n + 1 if periodic else n
    w = _work_dtype(dt)
    a = np.arange(m, dtype=w, like=_like(device)) * w(math.pi / (m - 1))
    a = np.cos(a * w(4)) * w(0.08) - np.cos(a * w(2)) * w(0.5) + w(0.42)
    return _finish(a[:n], dt, requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    n, dt = _window_args("kaiser_window", window_length, dtype, periodic, beta)
    if n <= 1:
        return _special(n, dt, requires_grad, _like(device))
    m = n + 1 if periodic else n
    w = _work_dtype(dt)
    alpha = w((m - 1) / 2.0)
    x = (np.arange(m, dtype=w, like=_like(device)) - alpha) / alpha
    with np.errstate(invalid="ignore"):
        arg = w(beta) * np.sqrt(np.maximum(w(1) - x * x, w(0)))
    a = i0_arr(arg.astype(w)) / i0_arr(as_array(beta, w))
    return _finish(as_array(a, w)[:n], dt, requires_grad)
