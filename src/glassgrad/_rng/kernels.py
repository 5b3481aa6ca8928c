"""Exact floating-point kernels of the torch CPU RNG replica: correctly rounded
fused multiply-add emulation (float32 via float64 with a double-rounding
fix-up, float64 via error-free transformations and round-to-odd), glibc libm
access (double ``log``/``log1p``/``sin``/``cos``/``exp``/``tan`` probed against
NumPy, float ``logf``/``cosf``/``sinf`` via ctypes), the ``avx_mathfun``
``log256_ps``/``sincos256_ps`` polynomials with GCC's FMA contractions, and the
16-wide Box-Muller ``NormalFill16`` kernels (AVX2 float32, baseline-build
float32, float64)."""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from fractions import Fraction

import numpy as np


# --- exact fused multiply-add emulation ------------------------------------

def _fma32_fast(a, b, c):
    """float32 fma(a, b, c) via float64 without the double-rounding fix-up.

    Exact wherever the float64 sum never lands on a float32 midpoint after an
    inexact addition.  That holds for every FMA inside ``_log256`` and
    ``_sincos256`` on their whole input domain (all 2**24 uniforms; checked
    exhaustively, see ``tests/test_rng.py``), so they use this faster form.
    """
    s = np.multiply(a, b, dtype=np.float64)  # exact: 24 + 24 bits
    s += c
    return s.astype(np.float32)


def _frac_to_f32(v, zero):
    """Round a Fraction to float32, to nearest-even, subnormals included."""
    if v == 0:
        return zero
    mag = abs(v)
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1                                   # now 2**e <= mag < 2**(e+1)
    q = Fraction(2) ** (max(e, -126) - 23)       # float32 spacing at mag
    n = round(mag / q)                           # round() is half-to-even
    r = float(n * q) if n * q < 2 ** 128 else math.inf
    return np.float32(math.copysign(r, v))


def _fma32(a, b, c):
    """Correctly rounded float32 fma(a, b, c) (a: float32 array; b, c: float32)."""
    s = np.multiply(a, b, dtype=np.float64)  # exact: 24 + 24 bits
    s += c
    tiny = np.abs(s) < 2.0 ** -125          # float32-subnormal territory (rare)
    if tiny.any():
        for i in zip(*np.nonzero(tiny)):
            bi = b[i] if np.ndim(b) else b
            ci = c[i] if np.ndim(c) else c
            v = Fraction(float(a[i])) * Fraction(float(bi)) + Fraction(float(ci))
            s[i] = _frac_to_f32(v, np.float32(float(a[i]) * float(bi) + float(ci)))
    # Rounding the double sum to float32 is only wrong (double rounding) when the
    # double lands exactly on a float32 midpoint although the sum was inexact.
    tie = (s.view(np.int64) & 0x1FFFFFFF) == 0x10000000
    tie &= ~tiny
    if tie.any():
        idx = np.nonzero(tie)
        bb = b[idx] if np.ndim(b) else b
        pp = np.multiply(a[idx], bb, dtype=np.float64)
        cc = (c[idx] if np.ndim(c) else np.full(pp.shape, c)).astype(np.float64)
        ss = s[idx]
        t = ss - pp
        err = (pp - (ss - t)) + (cc - t)
        step = np.where(err == 0, 0, np.where((err > 0) == (ss > 0), 1, -1))
        s[idx] = (ss.view(np.int64) + step).view(np.float64)
    return s.astype(np.float32)


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


_SPLIT = 134217729.0  # 2**27 + 1


def _split(a):
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def _fma64(a, b, c):
    """Correctly rounded float64 fma(a, b, c) (Boldo-Melquiond, round-to-odd); `a` an array on any device."""
    a = a.astype(np.float64, copy=False) if hasattr(a, "astype") else np.asarray(a, dtype=np.float64)
    b = np.float64(b)
    c = np.float64(c)
    if b == 1.0:
        return a + c
    if c == 0.0:
        return a * b + c  # "+ c" gives the IEEE sign of an exact zero
    ph = a * b
    if not (2.0 ** -900 < abs(b) < 2.0 ** 900 and abs(c) < 2.0 ** 900
            and np.all(np.abs(ph) < 2.0 ** 900)
            and np.all((np.abs(ph) > 2.0 ** -900) | (ph == 0))
            and np.all(np.abs(a) < 2.0 ** 900)):
        # extreme magnitudes: the error-free transformations could over/underflow
        return np.array([_fma_scalar(x, float(b), float(c)) for x in a.ravel().tolist()],
                        dtype=np.float64).reshape(a.shape)
    ah, al = _split(a)
    bh, bl = _split(b)
    pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl  # a*b == ph + pl exactly
    th, tl = _two_sum(c, ph)
    v, verr = _two_sum(tl, pl)
    vi = v.view(np.int64)
    odd_fix = (verr != 0) & ((vi & 1) == 0)
    if odd_fix.any():
        step = np.where((verr > 0) == (v > 0), 1, -1)
        v = np.where(odd_fix, (vi + step).view(np.float64), v)
    return th + v


def _fma_scalar(a, b, c):
    """Correctly rounded double fma for Python floats (exact rationals)."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    v = Fraction(a) * Fraction(b) + Fraction(c)
    if v == 0:
        return a * b + c  # exact zero: IEEE sign rules
    try:
        return float(v)   # int / int true division: correctly rounded
    except OverflowError:
        return math.copysign(math.inf, v)


# --- glibc libm (double) ----------------------------------------------------
# torch's double kernels call glibc's log/log1p/sin/cos.  Python's math module
# calls the very same libm; NumPy may use its own SIMD code (on x86-64 its float64
# log/log1p differ from glibc in a fraction of a percent of inputs), so a NumPy
# ufunc is used only if it agrees with libm on a probe sample.

_LIBM_OK = {}


def _probe(name):
    npf = getattr(np, name)
    mf = getattr(math, name)
    rs = np.random.RandomState(12345)
    if name in ("log",):
        x = rs.random_sample(20000) + 2.0 ** -30
    elif name == "log1p":
        x = -rs.random_sample(20000)
    elif name == "exp":
        x = rs.standard_normal(20000) * 5
    elif name == "tan":
        x = (rs.random_sample(20000) - 0.5) * math.pi
    else:
        x = rs.random_sample(20000) * (2 * math.pi)
    ok = bool(np.array_equal(npf(x), np.array([mf(v) for v in x.tolist()])))
    _LIBM_OK[name] = ok
    return ok


def _libm(name, x):
    x = np.asarray(x, dtype=np.float64)
    ok = _LIBM_OK.get(name)
    if ok is None:
        ok = _probe(name)
    if ok:
        return getattr(np, name)(x)
    f = getattr(math, name)
    return np.fromiter(map(f, x.ravel().tolist()), dtype=np.float64,
                       count=x.size).reshape(x.shape)


# --- avx_mathfun (log256_ps / sincos256_ps) with GCC's FMA contractions ------

_F = np.float32
_MIN_NORM = np.array(0x00800000, dtype=np.int32).view(np.float32)
_HALF_BITS = int(np.array(0.5, dtype=np.float32).view(np.int32))
_SQRTHF = _F(0.707106781186547524)
_LOG_P = [_F(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                          -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                          2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]
_LOG_Q1 = _F(-2.12194440e-4)
_LOG_Q2 = _F(0.693359375)
_DP1 = _F(-0.78515625)
_DP2 = _F(-2.4187564849853515625e-4)
_DP3 = _F(-3.77489497744594108e-8)
_SINCOF = [_F(v) for v in (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1)]
_COSCOF = [_F(v) for v in (2.443315711809948E-005, -1.388731625493765E-003,
                           4.166664568298827E-002)]
_FOPI = _F(1.27323954473516)
_TWO_PI_F = _F(2.0 * math.pi)


def _log256(x):
    """log256_ps for positive float32 input, bit-exact incl. FMA contraction.

    GCC contracts each ``y*x + c`` of the Cephes polynomial into an FMA; where
    the product is exact in float32 (small-integer times short constant) the FMA
    equals the plain float32 expression, which is what is used there.
    """
    x = np.maximum(x, _MIN_NORM)
    xi = x.view(np.int32)
    e = ((xi >> 23) - 0x7F).astype(np.float32)
    x = ((xi & ~0x7F800000) | _HALF_BITS).view(np.float32)
    mask = x < _SQRTHF
    x = (x - _F(1)) + x * mask       # x + (x & mask); x > 0 here
    e += _F(1)
    e -= mask
    z = x * x
    y = _fma32_fast(x, _LOG_P[0], _LOG_P[1])
    for p in _LOG_P[2:]:
        y = _fma32_fast(y, x, p)
    y *= x
    y = _fma32_fast(y, z, e * _LOG_Q1)
    y -= z * _F(0.5)                 # fma(z, -0.5, y): product exact
    y += x
    y += e * _LOG_Q2                 # fma(e, q2, x + y): product exact
    return y


def _sincos256(x):
    """sincos256_ps for 0 <= x < 8 (float32), bit-exact incl. FMA contraction."""
    j = (x * _FOPI).astype(np.int32)
    j += 1
    j &= ~1
    y = j.astype(np.float32)  # one of 0, 2, 4, 6, 8
    sign_sin = (j & 4) << 29
    sign_cos = (~(j - 2) & 4) << 29
    # all ones where the "cos" polynomial is the sine (j & 2 set), else zero
    swap = -((j >> 1) & 1)
    x = x + y * _DP1          # fma(y, -DP1, x): product exact
    x += y * _DP2             # idem
    x = _fma32_fast(y, _DP3, x)
    z = x * x
    yc = _fma32_fast(z, _COSCOF[0], _COSCOF[1])
    yc = _fma32_fast(yc, z, _COSCOF[2])
    yc *= z
    yc = _fma32_fast(yc, z, -(z * _F(0.5)))
    yc += _F(1)
    ys = _fma32_fast(z, _SINCOF[0], _SINCOF[1])
    ys = _fma32_fast(ys, z, _SINCOF[2])
    ys *= z
    ys = _fma32_fast(ys, x, x)
    yci = yc.view(np.int32)
    ysi = ys.view(np.int32)
    d = yci ^ ysi
    d &= swap
    s = ysi ^ d          # sine:   ys, or yc where swapped
    c = yci ^ d          # cosine: yc, or ys where swapped
    s ^= sign_sin
    c ^= sign_cos
    return s.view(np.float32), c.view(np.float32)


_CHUNK = 1 << 15  # pairs per block (keeps temporaries in cache)


def _normal16_f32(u, mean, std):
    """NormalFill16<float> (AVX2) over rows of 16 uniforms; returns float32."""
    u = u.reshape(-1, 16)
    out = np.empty(u.shape, dtype=np.float32)
    m, sd = _F(mean), _F(std)
    rows_per = _CHUNK // 8
    for r0 in range(0, u.shape[0], rows_per):
        ub = u[r0:r0 + rows_per]
        u1 = (_F(1) - ub[:, :8]).ravel()
        u2 = ub[:, 8:].ravel()
        radius = np.sqrt(_F(-2) * _log256(u1))
        s, c = _sincos256(_TWO_PI_F * u2)
        n1 = radius * c
        n2 = radius * s
        if sd == 1:              # fma(n, 1, m) == n + m (also for signed zeros)
            n1 += m
            n2 += m
        else:
            n1 = _fma32(n1, sd, m)
            n2 = _fma32(n2, sd, m)
        ob = out[r0:r0 + rows_per]
        ob[:, :8] = n1.reshape(-1, 8)
        ob[:, 8:] = n2.reshape(-1, 8)
    return out.ravel()


_LIBMF = None


def _libmf():
    """glibc's float logf/cosf/sinf (used by torch's baseline-build kernel)."""
    global _LIBMF
    if _LIBMF is None:
        lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        fns = []
        for name in ("logf", "cosf", "sinf"):
            f = getattr(lib, name)
            f.restype = ctypes.c_float
            f.argtypes = [ctypes.c_float]
            fns.append(f)
        _LIBMF = tuple(fns)
    return _LIBMF


def _map_f32(f, x):
    return np.fromiter(map(f, x.tolist()), dtype=np.float32, count=x.size)


def _normal16_f32_default(u, mean, std):
    """Scalar NormalFill16<float> of the baseline build (glibc float libm, fmaf)."""
    logf, cosf, sinf = _libmf()
    u = u.reshape(-1, 16)
    u1 = (_F(1) - u[:, :8]).ravel()
    u2 = u[:, 8:].ravel()
    radius = np.sqrt(_F(-2) * _map_f32(logf, u1))
    theta = ((2.0 * math.pi) * u2.astype(np.float64)).astype(np.float32)
    m, sd = _F(mean), _F(std)
    n1 = _fma32(radius * _map_f32(cosf, theta), sd, m)
    n2 = _fma32(radius * _map_f32(sinf, theta), sd, m)
    out = np.empty(u.shape, dtype=np.float32)
    out[:, :8] = n1.reshape(-1, 8)
    out[:, 8:] = n2.reshape(-1, 8)
    return out.ravel()


def _normal16_f64(u, mean, std):
    """NormalFill16<double> over rows of 16 uniforms (glibc log/cos/sin, fma)."""
    u = u.reshape(-1, 16)
    u1 = (1.0 - u[:, :8]).ravel()
    u2 = u[:, 8:].ravel()
    radius = np.sqrt(-2.0 * _libm("log", u1))
    theta = (2.0 * math.pi) * u2
    n1 = _fma64(radius * _libm("cos", theta), std, mean)
    n2 = _fma64(radius * _libm("sin", theta), std, mean)
    out = np.empty(u.shape, dtype=np.float64)
    out[:, :8] = n1.reshape(-1, 8)
    out[:, 8:] = n2.reshape(-1, 8)
    return out.ravel()
