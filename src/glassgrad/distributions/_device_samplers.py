"""torch's C++ samplers -- _standard_gamma, _sample_dirichlet, poisson, binomial -- for CUDA tensors: the
algorithms of _samplers.py (Marsaglia-Tsang with the alpha < 1 boost, Hoermann's PTRS or inversion by products
of uniforms, BTRS or inversion by geometric sums with the p > 0.5 symmetry) as array code on the parameters'
device, drawing from the CUDA generator (a ``Launcher`` of _rng/cuda.py).

Rejection loops run over arrays: each round draws fresh normals / uniforms (``_rng.cuda.normal`` /
``_rng.cuda.uniform``, float64) for every element still pending, accepts with a mask, writes the accepted
values and keeps the rest (boolean indexing on the device), until none is pending.  A draw rejected by the
CPU code's inner ``y > 0`` loop rejects the whole round here (a fresh normal and uniform), which leaves the
distribution unchanged.

The values cannot equal torch's CUDA samples: torch's CUDA kernels give every element its own curand stream
(curand_init(seed, element, offset)) and loop per thread, a layout array code cannot replay.  What matches
torch is the distribution and the seeding semantics: the same seed gives the same samples, and the draws
advance the CUDA generator, never the CPU one.  Degenerate parameters end at once instead of looping: a NaN or
negative alpha gives NaN (torch's CUDA clamp lets NaN through), an infinite Poisson rate inf, a NaN count NaN.
"""
import numpy as np

from .._rng import cuda as _rng_cuda
from ..ops.special_kernels import lgamma_arr

__all__ = ["standard_gamma", "sample_dirichlet", "poisson", "binomial"]

_F = np.float32
_F64 = np.float64
_THIRD = float(_F(1.0) / _F(3.0))
_C331 = float(_F(0.0331))
_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
         0.0138761288230707, 0.0118967099458917, 0.0104112652619720, 0.00925546218271273, 0.00833056343336287)


def _uniform(L, k):
    """k float64 uniforms in [0, 1) from the CUDA generator."""
    return _rng_cuda.uniform(L, (k,), 0.0, 1.0, _F64)


def _normal(L, k):
    return _rng_cuda.normal(L, (k,), 0.0, 1.0, _F64)


def _pending(mask):
    """The indices (a device array) of the elements `mask` marks."""
    return np.nonzero(mask)[0]


def _keep(keep, *arrays):
    return [a[keep] for a in arrays]


# -- gamma -------------------------------------------------------------------------------------------------
def _boost(L, a, f32):
    """alpha < 1: Gamma(alpha) = Gamma(alpha + 1) * u^(1/alpha) (u in (0, 1]); returns (alpha', scale)."""
    scale = np.ones_like(a)
    small = (a > 0) & (a < 1)
    if not bool(small.any()):
        return a, scale
    ib = _pending(small)
    ab = a[ib]
    inv = (_F(1.0) / ab.astype(_F)).astype(_F64) if f32 else 1.0 / ab
    scale[ib] = np.power(1.0 - _uniform(L, ib.size), inv)
    a[ib] = (ab.astype(_F) + _F(1.0)).astype(_F64) if f32 else ab + 1.0
    return a, scale


def _gamma_flat(L, a, f32):
    """Gamma(a, 1) draws of the flat float64 array `a` (float32 arithmetic where ATen's CPU code has it for a
    float32 alpha), as float64."""
    bad = ~(a >= 0)                                   # NaN or negative: NaN, at once
    a, scale = _boost(L, np.where(bad, 0.0, a), f32)
    d = (a.astype(_F) - _F(_THIRD)).astype(_F64) if f32 else a - _THIRD
    live = a > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        c = 1.0 / np.sqrt(9.0 * np.where(live, d, 1.0))
    out = np.where(bad, np.nan, 0.0)
    idx = _pending(live)
    dd, cc, ss = d[idx], c[idx], scale[idx]
    while idx.size:
        k = idx.size
        x = _normal(L, k)
        u = 1.0 - _uniform(L, k)
        y = 1.0 + cc * x
        v = y * y * y
        xx = x * x
        with np.errstate(divide="ignore", invalid="ignore"):
            lv = np.log(np.where(y > 0, v, 1.0))
            ok = (y > 0) & ((u < 1.0 - _C331 * xx * xx) | (np.log(u) < 0.5 * xx + dd * (1.0 - v + lv)))
            out[idx[ok]] = (ss * dd * v)[ok]
        rest = ~ok
        idx, dd, cc, ss = _keep(rest, idx, dd, cc, ss)
    return out


def standard_gamma(L, alpha, as_double=False):
    """torch._standard_gamma of the device array `alpha` (its dtype, clamped to the dtype's tiny; float64 when
    `as_double`)."""
    f32 = alpha.dtype == np.float32 and not as_double
    out = _gamma_flat(L, alpha.astype(_F64).reshape(-1), f32).reshape(alpha.shape)
    if as_double:
        return np.maximum(out, np.finfo(_F64).tiny)
    return np.maximum(out.astype(alpha.dtype), np.finfo(alpha.dtype).tiny)


def sample_dirichlet(L, alpha):
    """torch._sample_dirichlet: double gammas normalised over the last dim, clipped into [tiny, nextafter(1, 0)]
    of the dtype (as the CPU version)."""
    gam = standard_gamma(L, alpha, as_double=True)
    r = (gam / gam.sum(-1, keepdims=True)).astype(alpha.dtype)
    one = alpha.dtype.type(1)
    return np.clip(r, np.finfo(alpha.dtype).tiny, np.nextafter(one, alpha.dtype.type(0)))


# -- Poisson -----------------------------------------------------------------------------------------------
def _ptrs(L, lam):
    """Hoermann's transformed rejection with squeeze (rates >= 10), over the flat float64 array `lam`."""
    slam, loglam = np.sqrt(lam), np.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    loginv = np.log(1.1239 + 1.1328 / (b - 3.4))
    vr = 0.9277 - 3.6224 / (b - 2)
    out = np.zeros_like(lam)
    idx = np.arange(lam.size, like=lam)
    while idx.size:
        U, V, us, k = _tr_draw(L, idx.size, a, b, lam, 0.43)
        ok = (us >= 0.07) & (V <= vr)
        cand = _pending(~ok & ~((k < 0) | ((us < 0.013) & (V > us))))
        if cand.size:
            kc, usc = k[cand], us[cand]
            with np.errstate(divide="ignore"):
                lhs = np.log(V[cand]) + loginv[cand] - np.log(a[cand] / (usc * usc) + b[cand])
            rhs = -lam[cand] + kc * loglam[cand] - lgamma_arr(kc + 1.0)
            ok[cand] = lhs <= rhs
        out[idx[ok]] = k[ok]
        rest = ~ok
        idx, lam, loglam, a, b, loginv, vr = _keep(rest, idx, lam, loglam, a, b, loginv, vr)
    return out


def _poisson_inversion(L, lam):
    """Counts of uniforms whose running product stays above exp(-lam) (0 < lam < 10)."""
    enlam = np.exp(-lam)
    out = np.zeros_like(lam)
    idx = np.arange(lam.size, like=lam)
    x, prod = np.zeros_like(lam), np.ones_like(lam)
    while idx.size:
        prod = prod * _uniform(L, idx.size)
        more = prod > enlam
        done = ~more
        out[idx[done]] = x[done]
        idx, x, prod, enlam = _keep(more, idx, x + 1.0, prod, enlam)
    return out


def _by_branch(parts, fill):
    """Runs each (mask, sampler) of `parts` on its elements of the flat array; the rest take `fill`."""
    out = fill
    for mask, fn in parts:
        i = _pending(mask)
        if i.size:
            out[i] = fn(i)
    return out


def poisson(L, rate):
    """torch.poisson of the device array `rate` (non-negative, checked by the caller), in its dtype."""
    lam = rate.astype(_F64).reshape(-1)
    fin = np.isfinite(lam)
    fill = np.where(fin, 0.0, lam)                    # rate 0 (and NaN): 0; an infinite rate: inf
    out = _by_branch([(fin & (lam >= 10), lambda i: _ptrs(L, lam[i])),
                      ((lam > 0) & (lam < 10), lambda i: _poisson_inversion(L, lam[i]))], fill)
    return out.astype(rate.dtype).reshape(rate.shape)


# -- binomial ----------------------------------------------------------------------------------------------
def _stirling_tail(k):
    """ATen's stirling_approx_tail of a float64 array of integers >= 0."""
    table = np.array(_TAIL, like=k)
    small = table[np.clip(k, 0, 9).astype(np.int64)]
    kp1sq = (k + 1) * (k + 1)
    return np.where(k <= 9, small, (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1))


def _btrs_params(n, p):
    stddev = np.sqrt(n * p * (1 - p))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    return [b, a, n * p + 0.5, 0.92 - 4.2 / b, p / (1 - p), (2.83 + 5.1 / b) * stddev, np.floor((n + 1) * p)]


def _btrs_bound(n, k, r, m):
    return ((m + 0.5) * np.log((m + 1) / (r * (n - m + 1))) + (n + 1) * np.log((n - m + 1) / (n - k + 1))
            + (k + 0.5) * np.log(r * (n - k + 1) / (k + 1)) + _stirling_tail(m) + _stirling_tail(n - m)
            - _stirling_tail(k) - _stirling_tail(n - k))


def _tr_draw(L, size, a, b, shift, extra=None):
    """One round of Hoermann's transformed rejection (PTRS and BTRS alike): uniforms U - 1/2 and V, us = 1/2 - |U|
    and the candidate k = floor((2 a / us + b) U + shift + extra), added left to right."""
    U = _uniform(L, size) - 0.5
    V = _uniform(L, size)
    us = 0.5 - np.abs(U)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = (2 * a / us + b) * U + shift
        k = np.floor(k if extra is None else k + extra)
    return U, V, us, k


def _btrs(L, n, p):
    """Hoermann's BTRS (n * p >= 10, p <= 0.5) over flat float64 arrays."""
    b, a, c, v_r, r, alpha, m = _btrs_params(n, p)
    out = np.zeros_like(n)
    idx = np.arange(n.size, like=n)
    while idx.size:
        U, V, us, k = _tr_draw(L, idx.size, a, b, c)
        inside = (k >= 0) & (k <= n)
        ok = inside & (us >= 0.07) & (V <= v_r)
        cand = _pending(inside & ~ok)
        if cand.size:
            usc = us[cand]
            with np.errstate(divide="ignore"):
                lv = np.log(V[cand] * alpha[cand] / (a[cand] / (usc * usc) + b[cand]))
            ok[cand] = lv <= _btrs_bound(n[cand], k[cand], r[cand], m[cand])
        out[idx[ok]] = k[ok]
        idx, n, b, a, c, v_r, r, alpha, m = _keep(~ok, idx, n, b, a, c, v_r, r, alpha, m)
    return out


def _binomial_inversion(L, n, p):
    """The number of geometric(p) gaps that fit in n (n * p < 10), over flat float64 arrays."""
    logprob = np.log1p(-p)
    out = np.zeros_like(n)
    idx = np.arange(n.size, like=n)
    geom, num = np.zeros_like(n), np.zeros_like(n)
    while idx.size:
        with np.errstate(divide="ignore"):
            geom = geom + np.ceil(np.log(_uniform(L, idx.size)) / logprob)
        done = geom > n
        out[idx[done]] = num[done]
        more = ~done
        idx, geom, num, n, logprob = _keep(more, idx, geom, num + 1.0, n, logprob)
    return out


def binomial(L, count, prob):
    """torch.binomial of the device arrays `count` and `prob` (broadcast), in prob's dtype."""
    dt = prob.dtype
    c, p = np.broadcast_arrays(count, prob)
    shape = c.shape
    n, p = c.astype(_F64).reshape(-1), p.astype(_F64).reshape(-1)
    flip = p > 0.5
    q = np.where(flip, 1.0 - p, p)
    zero = (n <= 0) | (p <= 0)
    fill = np.where(zero, 0.0, np.where(np.isnan(p) | np.isnan(n), np.nan, n))    # p >= 1 or n = inf: n
    run = ~zero & np.isfinite(n) & (p < 1.0)
    big = n * q >= 10.0
    s = _by_branch([(run & big, lambda i: _btrs(L, n[i], q[i])),
                    (run & ~big, lambda i: _binomial_inversion(L, n[i], q[i]))], np.zeros_like(n))
    out = np.where(run, np.where(flip, n - s, s), fill)
    return out.astype(dt).reshape(shape)
