"""torch.signal.windows: scipy-style window functions (M, sym=, dtype=, ...), each built from ordinary ops
(linspace, exp, cos, i0, ...) as torch builds them, so requires_grad=True gives a graph with torch's nodes
(a window made with requires_grad is a non-leaf, as torch's)."""
import math
from collections.abc import Iterable

from .. import _dtype
from .._layout import strided
from ..ops import creation as _c

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    """torch's checks (in its order): the length, the layout, the dtype; returns the dtype to use."""
    dtype = _dtype.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_dtype.float32, _dtype.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _empty(M, dtype, device, requires_grad):
    return _c.empty((M,), dtype=dtype, device=device, requires_grad=requires_grad)


def _ones(dtype, device, requires_grad):
    return _c.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)


def _grid(start, end, M, dtype, device, requires_grad):
    return _c.linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None,
                requires_grad=False):
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / tau
    k = _grid(-center * c, (-center + (M - 1)) * c, M, dtype, device, requires_grad)
    return (-k.abs()).exp()


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _empty(M, dtype, device, requires_grad)
    c = math.pi / (M + 1 if not sym and M > 1 else M)
    return (_grid(0.5 * c, (0.5 + (M - 1)) * c, M, dtype, device, requires_grad)).sin()


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / (std * math.sqrt(2))
    k = _grid(start * c, (start + (M - 1)) * c, M, dtype, device, requires_grad)
    return (-(k ** 2)).exp()


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return _empty(M, dtype, device, requires_grad)
    if M == 1:
        return _ones(dtype, device, requires_grad)
    b = _c.tensor(beta, dtype=dtype, device=device)
    start = -b
    c = 2.0 * b / (M if not sym else M - 1)
    end = b.minimum(start + (M - 1) * c)
    k = _grid(start, end, M, dtype, device, requires_grad)
    return (b * b - k.pow(2)).sqrt().i0() / b.i0()


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    dtype = _checks("bartlett", M, dtype, layout)
    if M == 0:
        return _empty(M, dtype, device, requires_grad)
    if M == 1:
        return _ones(dtype, device, requires_grad)
    c = 2 / (M if not sym else M - 1)
    k = _grid(-1, -1 + (M - 1) * c, M, dtype, device, requires_grad)
    return 1 - k.abs()


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    dtype = _checks("general_cosine", M, dtype, layout)
    if M == 0:
        return _empty(M, dtype, device, requires_grad)
    if M == 1:
        return _ones(dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    c = 2 * math.pi / (M if not sym else M - 1)
    k = _grid(0, (M - 1) * c, M, dtype, device, requires_grad)
    a_i = _c.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                    requires_grad=requires_grad)
    i = _c.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device, requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * (i.unsqueeze(-1) * k).cos()).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
