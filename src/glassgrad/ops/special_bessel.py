"""torch.special's Bessel and Airy functions without derivatives: bessel_j0 j1 y0 y1, modified_bessel_i0 i1 k0 k1,
scaled_modified_bessel_k0 k1, spherical_bessel_j0, airy_ai.

ops: special_bessel_j0 special_bessel_j1 special_bessel_y0 special_bessel_y1 special_modified_bessel_i0
     special_modified_bessel_i1 special_modified_bessel_k0 special_modified_bessel_k1
     special_scaled_modified_bessel_k0 special_scaled_modified_bessel_k1 special_spherical_bessel_j0
     special_airy_ai

PyTorch's algorithms (Cephes: rational approximations below 5 and the Hankel asymptotic forms above for J and Y,
Chebyshev series for I and K, the power series and asymptotic expansions for Ai), vectorised, in float64 and
cast to the input's float dtype (integers: the default dtype).  PyTorch defines no derivative for these: the
results never require grad.
"""
import math

import numpy as np

from ._core import as_array, make, full_precision
from .unary import _float_input
from .special_kernels import chbevl, i0_arr, i1_arr
from . import special_bessel_coef as C

_SQ2OPI = 0.797884560802865355879892119868763737     # sqrt(2 / pi)
_2OPI = 0.636619772367581343075535053490057448       # 2 / pi
_PIO4, _3PIO4 = 0.785398163397448309615660845819875721, 2.356194490192344928846982537459627163
_ISQPI = 5.64189583547756286948e-01                  # 1 / sqrt(pi)


def _polevl(z, coef):
    p = np.zeros_like(z)
    for c in coef:
        p = p * z + c
    return p


def _hankel(x, w, pp, pq, qp, qq, shift, y):
    """The large-argument form: (P cos(x - shift) - 5/x Q sin(x - shift)) sqrt(2/pi) / sqrt(x) (J), with
    sin / cos exchanged and + for Y."""
    p = _polevl(w, pp) / _polevl(w, pq)
    q = 5.0 / x * (_polevl(w, qp) / _polevl(w, qq))
    if y:
        return (p * np.sin(x - shift) + q * np.cos(x - shift)) * _SQ2OPI / np.sqrt(x)
    return (p * np.cos(x - shift) - q * np.sin(x - shift)) * _SQ2OPI / np.sqrt(x)


def _j0(a):
    x = np.abs(a)
    small = x <= 5
    xs = np.where(small, x, 1.0)
    x2 = xs * xs
    s = (x2 - 5.78318596294678452118) * (x2 - 30.4712623436620863991) * _polevl(x2, C.J0_RP) / _polevl(x2, C.J0_RQ)
    s = np.where(xs < 1e-5, 1.0 - x2 / 4.0, s)
    xl = np.where(small, 10.0, x)
    return np.where(small, s, _hankel(xl, 25.0 / (xl * xl), C.J0_PP, C.J0_PQ, C.J0_QP, C.J0_QQ, _PIO4, False))


def _j1(a):
    x = np.abs(a)
    small = x <= 5
    xs = np.where(small, x, 1.0)
    x2 = xs * xs
    s = _polevl(x2, C.J1_RP) / _polevl(x2, C.J1_RQ) * xs * (x2 - 1.46819706421238932572e1) * \
        (x2 - 4.92184563216946036703e1)
    xl = np.where(small, 10.0, x)
    big = _hankel(xl, 5.0 / xl * (5.0 / xl), C.J1_PP, C.J1_PQ, C.J1_QP, C.J1_QQ, _3PIO4, False)
    out = np.where(small, s, big)
    return np.where(a < 0, -out, out)


def _y0(x):
    small = x <= 5
    xs = np.where(small & (x > 0), x, 1.0)
    x2 = xs * xs
    s = _polevl(x2, C.Y0_YP) / _polevl(x2, C.Y0_YQ) + _2OPI * np.log(xs) * _j0(xs)
    s = np.where(x == 0, -np.inf, np.where(x < 0, np.nan, s))
    xl = np.where(small, 10.0, x)
    return np.where(small, s, _hankel(xl, 25.0 / (xl * xl), C.J0_PP, C.J0_PQ, C.J0_QP, C.J0_QQ, _PIO4, True))


def _y1(x):
    small = x <= 5
    xs = np.where(small & (x > 0), x, 1.0)
    x2 = xs * xs
    s = xs * (_polevl(x2, C.Y1_YP) / _polevl(x2, C.Y1_YQ)) + _2OPI * (_j1(xs) * np.log(xs) - 1.0 / xs)
    s = np.where(x == 0, -np.inf, np.where(x < 0, np.nan, s))
    xl = np.where(small, 10.0, x)
    big = _hankel(xl, 5.0 / xl * (5.0 / xl), C.J1_PP, C.J1_PQ, C.J1_QP, C.J1_QQ, _3PIO4, True)
    return np.where(small, s, big)


def _k(x, order, scaled):
    """K0 / K1 (Cephes k0.c, k1.c), times exp(x) when `scaled`: inf at 0, nan below."""
    small = x <= 2
    xs = np.where(small & (x > 0), x, 1.0)
    if order == 0:
        s = chbevl(xs * xs - 2.0, C.K0_A) - np.log(0.5 * xs) * i0_arr(xs)
    else:
        s = np.log(0.5 * xs) * i1_arr(xs) + chbevl(xs * xs - 2.0, C.K1_A) / xs
    if scaled:
        s = s * np.exp(xs)
    xl = np.where(small, 4.0, x)
    big = chbevl(8.0 / xl - 2.0, C.K0_B if order == 0 else C.K1_B) / np.sqrt(xl)
    if not scaled:
        big = np.exp(-xl) * big
    out = np.where(small, s, big)
    return np.where(x == 0, np.inf, np.where(x < 0, np.nan, out))


def _spherical_j0(x):
    small = np.abs(x) < 0.5
    x2 = np.where(small, x * x, 0.0)
    s = 1.0 + x2 * (-1.0 / 6.0 + x2 * (1.0 / 120.0 + x2 * (-1.0 / 5040.0 + x2 * (1.0 / 362880.0 + x2 * (
        -1.0 / 39916800.0 + x2 * (1.0 / 6227020800.0))))))
    xl = np.where(small, 1.0, x)
    return np.where(np.isinf(x), 0.0, np.where(small, s, np.sin(xl) / xl))


def _airy_series(x):
    """Ai(x) by its power series (|x| < 2.09): 0.3550 f(x) - 0.2588 g(x)."""
    f, g, k, m, n = np.ones_like(x), x.copy(), np.ones_like(x), np.ones_like(x), x.copy()
    z = x * x * x
    act = np.ones(x.shape, bool, like=x)
    for _ in range(60):
        m2 = m * z / (k + 1.0)
        n2 = n * z / (k + 2.0)
        m2 = m2 / (k + 2.0)
        f2 = f + m2
        n2 = n2 / (k + 3.0)
        g2 = g + n2
        m, n, f, g = (np.where(act, m2, m), np.where(act, n2, n), np.where(act, f2, f), np.where(act, g2, g))
        k = np.where(act, k + 3.0, k)
        act &= np.abs(m / f) > np.finfo(x.dtype).eps
        if not act.any():
            break
    return 0.355028053887817239260 * f - 0.258819403792806798405 * g


def _airy_ai(x):
    neg = x < -2.09
    xn = np.where(neg, x, -3.0)
    zz = -2.0 * xn * np.sqrt(-xn) / 3.0
    z = 1.0 / zz
    z2 = z * z
    t = zz + 0.25 * math.pi
    a_neg = _ISQPI / np.sqrt(np.sqrt(-xn)) * (np.sin(t) * (1.0 + z2 * _polevl(z2, C.AI_AFN) / _polevl(z2, C.AI_AFD))
                                              - np.cos(t) * (z * _polevl(z2, C.AI_AGN) / _polevl(z2, C.AI_AGD)))
    pos = x >= 2.09
    xp = np.where(pos, x, 3.0)
    zeta = 2.0 * xp * np.sqrt(xp) / 3.0
    a_pos = _ISQPI * (_polevl(1.0 / zeta, C.AI_AN) / _polevl(1.0 / zeta, C.AI_AD)) / (
        2.0 * np.sqrt(np.sqrt(xp)) * np.exp(zeta))
    a_mid = _airy_series(np.where(neg | pos, 0.0, x))
    out = np.where(neg, a_neg, np.where(pos, a_pos, a_mid))
    out = np.where(x > 103.892, 0.0, out)
    return np.where(np.isinf(x), np.nan, out)


def _op(name, kernel, native=False):
    """special_<name>(input): the kernel on float64 (`native`: in the input's float dtype, float32 arithmetic
    for float32 as PyTorch, whose float32 results at large arguments carry float32 rounding), cast to the input's
    float dtype; no gradient."""
    def fn(input, *, out=None):
        a = _float_input(input)
        full_precision(name[len("special_"):] + "_cpu", a.dtype)
        with np.errstate(all="ignore"):
            y = kernel(a if native and a.dtype in (np.float32, np.float64) else a.astype(np.float64))
        return make(as_array(y).astype(a.dtype))
    fn.__name__ = fn.__qualname__ = name
    return fn


special_bessel_j0 = _op("special_bessel_j0", _j0, native=True)
special_bessel_j1 = _op("special_bessel_j1", _j1, native=True)
special_bessel_y0 = _op("special_bessel_y0", _y0, native=True)
special_bessel_y1 = _op("special_bessel_y1", _y1, native=True)
special_modified_bessel_i0 = _op("special_modified_bessel_i0", i0_arr, native=True)
special_modified_bessel_i1 = _op("special_modified_bessel_i1", i1_arr, native=True)
special_modified_bessel_k0 = _op("special_modified_bessel_k0", lambda x: _k(x, 0, False))
special_modified_bessel_k1 = _op("special_modified_bessel_k1", lambda x: _k(x, 1, False))
special_scaled_modified_bessel_k0 = _op("special_scaled_modified_bessel_k0", lambda x: _k(x, 0, True))
special_scaled_modified_bessel_k1 = _op("special_scaled_modified_bessel_k1", lambda x: _k(x, 1, True))
special_spherical_bessel_j0 = _op("special_spherical_bessel_j0", _spherical_j0)
special_airy_ai = _op("special_airy_ai", _airy_ai, native=True)
