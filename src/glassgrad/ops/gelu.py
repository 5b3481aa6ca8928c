"""GELU and its fused float32 kernels (PyTorch's GeluBackward0, exact and tanh forms).

ops: gelu (GeluBackward0)
kernels: _gelu32 / _gelu32_block (exact float32 GELU and its derivative in one blockwise pass, kept by
         the node so the backward is one multiply), _gelu_tanh32 (tanh form in float32), _erfc_fast and
         _cdf_arr / _cdf (the standard normal CDF: fast for float32, exact for float64, ops in tensor mode).

y = x Phi(x);  dx = gy (Phi(x) + x pdf(x));  tanh form: y = x (1 + tanh(k (x + c x^3))) / 2.
"""
import math

import numpy as np

from .. import _cuda_kernels
from .._cuda_kernels import seq as _k_seq
from ._core import grad
from ..autograd.graph import Node
from ..autograd.saved_hooks import STACK as _SAVED_HOOKS
from .activation import _float_only, _hi, _out, _record
from .unary import _erf_arr, erf

__all__ = ["gelu"]

_SQRT1_2 = 1.0 / math.sqrt(2.0)
_KAPPA = math.sqrt(2.0 / math.pi)          # tanh-GELU's sqrt(2 / pi)
_PDF_C = 1.0 / math.sqrt(2.0 * math.pi)    # standard normal pdf constant
_GELU_C = 0.044715


_ERFC_POLY = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418,
              0.37409196, 1.00002368, -1.26551223)


def _erfc_fast(z):
    """erfc on a float64 array, relative error < 1.2e-7 everywhere (Chebyshev fit, Numerical Recipes'
    erfcc): accurate enough for float32 results, and vectorised."""
    shape = np.shape(z)
    z = np.reshape(z, -1)                   # 1-d, so that the in-place steps below also work for 0-d input
    az = np.abs(z)
    t = 0.5 * az
    t += 1.0
    np.reciprocal(t, out=t)                 # t = 1 / (1 + |z| / 2)
    p = np.full_like(t, _ERFC_POLY[0])
    for c in _ERFC_POLY[1:]:                # Horner, in place (the same operations, no temporaries)
        p *= t
        p += c
    az *= az
    p -= az
    np.exp(p, out=p)
    p *= t
    return np.where(z >= 0, p, 2.0 - p).reshape(shape)


# float32 GELU from q = Phi(-|x|) = pdf(x) M(|x|), M the Mills ratio, as M(a) = t R(t), t = 1 / (1 + 0.355 a):
# R (degree 8) was fitted by weighted least squares to a relative error of 5.4e-8 on [0, 25] (where q
# underflows), so q keeps float32 accuracy in the tails.  Phi = |H - q| with H = [x >= 0], and
# gelu = x H - |x| q, which keeps the sign of -0.0 (x < 0 whose x q underflows), as PyTorch.
_F32 = np.float32
_Q_SCALE = _F32(0.355)
_Q_POLY = tuple(_F32(c * _PDF_C) for c in (-0.07462440967319983, 0.3561034853097903, -0.601304915720357,
                                            0.3324725183757445, -0.02710526856359057, 0.2514960563413999,
                                            0.30596141902663176, 0.3553253628507192, 0.3549898623431879))
_BLOCK = 32768      # elements per block: the ~30 in-place passes below then run in cache


def _gelu32_block(x, y, d, a, t, e):
    """y = gelu(x) for a float32 block x, and d = gelu'(x) unless d is None; a, t, e: scratch blocks."""
    np.abs(x, out=a)
    np.multiply(a, _Q_SCALE, out=t)
    t += _F32(1.0)
    np.reciprocal(t, out=t)
    np.multiply(t, _Q_POLY[0], out=y)           # Horner, in place: y = R(t) / sqrt(2 pi)
    for c in _Q_POLY[1:-1]:
        y += c
        y *= t
    y += _Q_POLY[-1]
    y *= t
    np.multiply(a, a, out=e)
    e *= _F32(-0.5)
    np.exp(e, out=e)                            # e = exp(-x^2 / 2)
    y *= e                                      # y = q
    np.minimum(a, _F32(1e30), out=a)            # |x| = inf has q = 0: t = 0, so gelu(inf) = inf as in float64
    np.multiply(a, y, out=t)                    # t = |x| q
    h = a if d is None else d
    np.greater_equal(x, _F32(0.0), out=h)       # h = H
    if d is not None:                           # d = Phi(x) + x pdf(x), Phi = |H - q| (1 - q or q)
        np.subtract(h, y, out=a)
        np.abs(a, out=a)
        e *= x
        e *= _F32(_PDF_C)
    np.multiply(x, h, out=y)
    y -= t
    if d is not None:
        np.add(a, e, out=d)


def _gelu32(a, need_d):
    """gelu of float32 array a (and its derivative, or None), block by block; y has a's memory layout
    (as PyTorch's elementwise results)."""
    dense = a.flags.c_contiguous or a.flags.f_contiguous
    order = "C" if a.flags.c_contiguous or not dense else "F"
    x = np.ravel(a, order=order)
    if x.__class__ is not np.ndarray and _cuda_kernels.available():     # a GPU: one kernel, the same steps
        y, d = _k_seq.gelu32(x, need_d, _Q_SCALE, _Q_POLY, _PDF_C)
    else:
        y, d = _gelu32_blocks(x, need_d)
    if not dense:
        y = _like(a, y.reshape(a.shape))
    return y.reshape(a.shape, order=order), (None if d is None else d.reshape(a.shape, order=order))


def _gelu32_blocks(x, need_d):
    n = x.size
    y = np.empty_like(x)
    d = np.empty_like(x) if need_d else None
    blk = _BLOCK if x.__class__ is np.ndarray else max(n, 1)     # a device runs the whole array at once
    m = min(n, blk)
    s1, s2, s3 = np.empty(m, _F32, like=x), np.empty(m, _F32, like=x), np.empty(m, _F32, like=x)
    with np.errstate(all="ignore"):
        for i in range(0, n, blk):
            j = min(n, i + blk)
            _gelu32_block(x[i:j], y[i:j], None if d is None else d[i:j], s1[:j - i], s2[:j - i], s3[:j - i])
    return y, d


def _like(a, y):
    """y (C-ordered, a's shape) copied into an array with a's memory layout."""
    out = np.empty_like(a)
    out[...] = y
    return out


def _gelu_tanh32(x):
    """0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) for float32 x, in float32."""
    if x.__class__ is not np.ndarray and _cuda_kernels.available():     # a GPU: one kernel, the same steps
        return _k_seq.gelu_tanh32(x, _KAPPA * _GELU_C, _KAPPA)
    u = np.multiply(x, x, out=np.empty_like(x))     # (out=: an array even for 0-d x, in x's layout)
    u *= _F32(_KAPPA * _GELU_C)
    u += _F32(_KAPPA)
    u *= x
    np.tanh(u, out=u)
    u += _F32(1.0)
    u *= x
    u *= _F32(0.5)
    return u


def _cdf_arr(h, exact):
    """The standard normal CDF of float64 array h: exact (math.erf) for float64 results, else fast."""
    if exact:
        return 0.5 * (1.0 + _erf_arr(h * _SQRT1_2)) if h.size else h.copy()
    return 0.5 * _erfc_fast(-h * _SQRT1_2)


def _cdf(ns, x):
    if ns.is_tensor_mode:
        return (erf(x * _SQRT1_2) + 1) * 0.5
    return _cdf_arr(_hi(x), x.dtype == np.float64).astype(x.dtype, copy=False)


def _fused_backward(x, g, approximate):
    """Whether GeluBackward0's array-mode formula (tanh form; exact float64) goes to one fused kernel."""
    return (x.__class__ is not np.ndarray and x.dtype in _FUSED and (approximate == "tanh" or x.dtype == np.float64)
            and g.dtype == x.dtype and g.shape == x.shape and x.flags.c_contiguous and g.flags.c_contiguous
            and _cuda_kernels.available())


_FUSED = (np.dtype(np.float32), np.dtype(np.float64))


# -- gelu ---------------------------------------------------------------------------------------------
class GeluBackward0(Node):
    __slots__ = ("approximate", "_dx")      # _dx: gelu'(x) computed by the float32 forward, or None
    _saved_names = ("self",)

    def _release(self):
        self._dx = None
        Node._release(self)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        if not ns.is_tensor_mode and self.approximate == "none" and x.dtype == np.float32:
            d = self._dx if self._dx is not None else _gelu32(x, True)[1]
            return (g * d,)
        if not ns.is_tensor_mode and _fused_backward(x, g, self.approximate):   # a GPU: one kernel
            return (_k_seq.gelu_backward(g, x, self.approximate, _KAPPA, _GELU_C, _SQRT1_2, _PDF_C),)
        if self.approximate == "tanh":
            x2 = x * x
            t = ns.tanh((x + x2 * x * _GELU_C) * _KAPPA)
            d = (t + 1) * 0.5 + (x * 0.5) * (1 - t * t) * ((x2 * (3 * _GELU_C) + 1) * _KAPPA)
            return (g * d,)
        cdf = _cdf(ns, x)
        pdf = ns.exp(x * x * -0.5) * _PDF_C
        return (g * (cdf + x * pdf),)


def gelu(input, approximate="none"):
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not {type(approximate).__name__}")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    a = _float_only(input, "GeluKernelImpl")
    rec = input._rg and grad.enabled and not _SAVED_HOOKS   # gelu'(x) kept beside x only without saved-tensor hooks
    dx = None
    if a.dtype == np.float32:
        if approximate == "tanh":
            with np.errstate(all="ignore"):
                y = _gelu_tanh32(a)
        else:
            y, dx = _gelu32(a, rec)
    else:
        if a.dtype == np.float64 and a.__class__ is not np.ndarray and _cuda_kernels.available():
            return _record(input, _k_seq.gelu64(a, approximate, _KAPPA, _GELU_C, _SQRT1_2), GeluBackward0,
                           approximate=approximate, _dx=None)      # a GPU: one kernel, the same steps
        h = _hi(a)
        with np.errstate(all="ignore"):
            if approximate == "tanh":
                y = 0.5 * h * (1 + np.tanh(_KAPPA * (h + _GELU_C * h * h * h)))
            else:
                y = h * _cdf_arr(h, a.dtype == np.float64)
        y = _out(y, a)
    return _record(input, y, GeluBackward0, approximate=approximate, _dx=dx)
