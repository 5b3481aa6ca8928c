"""The regularized incomplete gamma functions P(a, x) (igamma, gammainc) and Q(a, x) = 1 - P (igammac,
gammaincc) on NumPy arrays, in float64.

The regions and boundary values are PyTorch's (SciPy's): nan for a < 0 or x < 0, P(0, x > 0) = 1, P(a, 0) = 0,
P(inf, x) = 0, P(a, inf) = 1.  Inside, P by its power series (DLMF 8.11.4) where x <= max(a, 1), Q by
Legendre's continued fraction (Cephes) above, Q for small x by DLMF 8.7.3 (no cancellation); the other
function is 1 minus it.  The prefactor x^a e^-x / Gamma(a) is exp(a log x - x - lgamma(a)): relative error
about a * 1e-16, so ~1e-13 up to a ~ 1000 (PyTorch switches to the uniform asymptotic expansion for large a
near x; its float32 results are float32 sums).
"""
import numpy as np

from ..backend import as_array
from .special_kernels import lgamma_arr

__all__ = ["igamma_arr", "igammac_arr"]

_MACHEP = 1.11022302462515654042e-16
_MAXITER = 2000


def _fac(a, x):
    """x^a e^-x / Gamma(a)."""
    return np.exp(a * np.log(x) - x - lgamma_arr(a))


def _series_p(a, x):
    """P(a, x) by sum_n x^n / ((a+1)...(a+n)), times x^a e^-x / Gamma(a + 1)."""
    ans, c, r = np.ones_like(x), np.ones_like(x), a.copy()
    idx = np.arange(x.size, like=x)
    for _ in range(_MAXITER):
        if not idx.size:
            break
        r[idx] += 1
        c[idx] *= x[idx] / r[idx]
        ans[idx] += c[idx]
        idx = idx[~(c[idx] <= _MACHEP * ans[idx])]
    return ans * _fac(a, x) / a


def _series_q_small(a, x):
    """Q(a, x) for small x (DLMF 8.7.3): -expm1(a log x - lgamma(1 + a)) - x^a / Gamma(a) sum_n (-x)^n / (n! (a+n))."""
    fac, s = np.ones_like(x), np.zeros_like(x)
    act = np.ones(x.shape, bool, like=x)
    for n in range(1, _MAXITER):
        fac = fac * -x / n
        term = fac / (a + n)
        s = np.where(act, s + term, s)
        act &= ~(np.abs(term) <= _MACHEP * np.abs(s))
        if not act.any():
            break
    lx = np.log(x)
    return -np.expm1(a * lx - lgamma_arr(1 + a)) - np.exp(a * lx - lgamma_arr(a)) * s


def _cf_q(a, x):
    """Q(a, x) by the continued fraction (Cephes igamc), for x > a, x > 1."""
    y = 1.0 - a
    z = x + y + 1.0
    pkm2, qkm2 = np.ones_like(x), x.copy()
    pkm1, qkm1 = x + 1.0, z * x
    ans = pkm1 / qkm1
    act = np.ones(x.shape, bool, like=x)
    c = 0.0
    for _ in range(_MAXITER):
        c += 1.0
        y = y + 1.0
        z = z + 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        nz = qk != 0
        r = pk / np.where(nz, qk, 1.0)
        t = np.where(nz, np.abs((ans - r) / np.where(r == 0, 1.0, r)), 1.0)
        ans = np.where(act & nz, r, ans)
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        big = np.abs(pk) > 4.503599627370496e15
        s = np.where(big, 2.22044604925031308085e-16, 1.0)
        pkm2, pkm1, qkm2, qkm1 = pkm2 * s, pkm1 * s, qkm2 * s, qkm1 * s
        act &= ~(t <= _MACHEP)
        if not act.any():
            break
    return ans * _fac(a, x)


def _regions(a, x):
    """Broadcast float64 operands, flat, with the mask of the interior (finite a > 0, x > 0)."""
    a, x = np.broadcast_arrays(as_array(a, np.float64), as_array(x, np.float64))
    shape = a.shape
    a, x = a.ravel(), x.ravel()
    inner = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    return shape, a, x, inner


def _interior_p(a, x):
    """P(a, x) for finite a, x > 0 (1-d arrays)."""
    out = np.empty_like(x)
    up = (x > 1) & (x > a)
    if up.any():
        out[up] = 1.0 - _interior_q(a[up], x[up])
    lo = ~up
    if lo.any():
        out[lo] = _series_p(a[lo], x[lo])
    return out


def _interior_q(a, x):
    """Q(a, x) for finite a, x > 0 (1-d arrays)."""
    out = np.empty_like(x)
    cf = (x > 1.1) & (x >= a)
    small = (x <= 1.1) & ~np.where(x <= 0.5, -0.4 / np.log(np.where(x <= 0.5, x, 0.5)) < a, x * 1.1 < a)
    sub = ~cf & ~small
    if cf.any():
        out[cf] = _cf_q(a[cf], x[cf])
    if small.any():
        out[small] = _series_q_small(a[small], x[small])
    if sub.any():
        out[sub] = 1.0 - _series_p(a[sub], x[sub])
    return out


def igamma_arr(a, x):
    """The regularized lower incomplete gamma function P(a, x), float64."""
    shape, a, x, inner = _regions(a, x)
    out = np.full(a.shape, np.nan, like=a)
    out[(a == 0) & (x > 0)] = 1.0
    out[(a > 0) & (x == 0)] = 0.0
    out[np.isinf(a) & (a > 0) & np.isfinite(x) & (x >= 0)] = 0.0
    out[np.isinf(x) & (x > 0) & (a > 0) & np.isfinite(a)] = 1.0
    if inner.any():
        out[inner] = _interior_p(a[inner], x[inner])
    return out.reshape(shape)


def igammac_arr(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), float64."""
    shape, a, x, inner = _regions(a, x)
    out = np.full(a.shape, np.nan, like=a)
    out[(a == 0) & (x > 0)] = 0.0
    out[(a > 0) & (x == 0)] = 1.0
    out[np.isinf(a) & (a > 0) & np.isfinite(x) & (x >= 0)] = 1.0
    out[np.isinf(x) & (x > 0) & (a > 0) & np.isfinite(a)] = 0.0
    if inner.any():
        out[inner] = _interior_q(a[inner], x[inner])
    return out.reshape(shape)
