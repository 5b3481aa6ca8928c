"""Bit-exact replica of PyTorch's CPU random number generator, on NumPy arrays.

The module reproduces, element for element, what ``torch`` (x86-64 Linux CPU
build, glibc) writes into a contiguous tensor when it is filled by ``rand``,
``uniform_``, ``randn``/``normal_``, ``randint``/``random_``, ``randperm``,
``bernoulli``/``bernoulli_`` (incl. dropout masks), ``exponential_``,
``geometric_``, ``log_normal_``, ``cauchy_`` and ``multinomial`` -- and it
consumes the generator state exactly like torch, so any interleaving of calls
stays in lock-step with torch after the same seed, and ``get_state()`` is
byte-identical to ``torch.Generator.get_state()``.

How torch does it (each point verified against torch 2.13 CPU):

* Engine: plain MT19937 whose state comes from the classic ``init_genrand``
  recurrence on the low 32 bits of the 64-bit seed.  ``random()`` is one 32-bit
  output, ``random64()`` is two, ``(first << 32) | second``.  NumPy's
  ``MT19937`` bit generator runs the same recurrence and tempering, so only its
  key/position are set here and ``random_raw`` supplies vectorised draws.
* Uniform floats: ``(bits & (2**digits - 1)) * 2**-digits`` with 24 digits for
  float32 (float16 is computed in float32, then rounded), 53 digits (from
  ``random64``) for float64.  ``x * (to - from) + from`` is compiled into a
  fused multiply-add, and a value that rounds up to ``to`` becomes ``from``.
* ``randn``/``normal_``: ``numel >= 16`` uses the 16-wide Box-Muller fill (the
  last 16 outputs recomputed from 16 fresh uniforms when ``numel % 16``).  The
  float32/float16 kernel uses the AVX2 ``avx_mathfun`` log/sincos polynomials
  with the FMA contractions GCC applied.  The float64 kernel uses glibc
  ``log``/``cos``/``sin`` and an explicit ``fma``.  ``numel < 16`` uses the
  scalar double Box-Muller with the cached second sample, which is shared with
  the generator state.
* Integers: ``(bits % range) + from`` with a 32-bit draw, or a 64-bit draw
  when ``range >= 2**28`` (public builds; Meta-internal ones use 2**32).
* ``bernoulli_(float p)``: one ``random64`` per element, ``u53 < p``.  torch's
  MKL/VSL variant is compiled only into Meta-internal (FBCODE) builds.

Exactness devices: fused multiply-adds are emulated exactly (float32 via
float64 with a double-rounding fix-up, float64 via error-free transformations
and round-to-odd); glibc ``log``/``log1p`` come from :mod:`math` (NumPy's SIMD
versions differ from glibc in a fraction of the inputs).  NumPy's float64
``sin``/``cos`` call libm and are used after a quick probe.
``CPU_KERNEL`` selects torch's AVX2/AVX512 kernels ("avx2") or its baseline
build ("default", used by torch without AVX2/FMA or with
``ATEN_CPU_CAPABILITY=default``); it is detected like torch does.

Only NumPy and the standard library are used.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import operator
import os
import platform
import struct
from fractions import Fraction

import numpy as np

__all__ = [
    "DEFAULT_SEED",
    "CPU_KERNEL",
    "Generator",
    "default_generator",
    "manual_seed",
    "rand",
    "uniform",
    "randn",
    "normal",
    "randint",
    "random_",
    "randperm",
    "bernoulli_scalar",
    "bernoulli_tensor",
    "exponential",
    "geometric",
    "log_normal",
    "cauchy",
    "multinomial",
]

DEFAULT_SEED = 67280421310721  # torch's default seed for torch.Generator()

_MT_N = 624
_U32 = 0xFFFFFFFF
_U64 = 0xFFFFFFFFFFFFFFFF

_f16 = np.dtype(np.float16)
_f32 = np.dtype(np.float32)
_f64 = np.dtype(np.float64)
_FLOATS = (_f16, _f32, _f64)

# Byte layout of torch's CPUGeneratorImplState (x86-64, 5056 bytes):
#   u64 the_initial_seed, i32 left, i32 seeded, u64 next, u64 state[624],
#   f64 normal_x, f64 normal_y, f64 normal_rho, i32 normal_is_valid, 4 pad,
#   f32 next_float_normal_sample, u8 is_next_float_normal_sample_valid, 3 pad.
_HEAD = struct.Struct("<QiiQ")
_TAIL = struct.Struct("<dddi4xf?3x")
_STATE_OFF = _HEAD.size
_TAIL_OFF = _STATE_OFF + 8 * _MT_N
STATE_SIZE = _TAIL_OFF + _TAIL.size  # 5056


def _detect_cpu_kernel():
    """Which of torch's CPU kernel builds torch itself would run here.

    "avx2": torch's AVX2/AVX512 kernels (x86-64 with AVX2+FMA): the float32
    normal fill uses avx_mathfun and GCC contracted ``a*b + c`` into FMAs.
    "default": the baseline build (``ATEN_CPU_CAPABILITY=default`` or no
    AVX2/FMA): scalar glibc ``logf``/``cosf``/``sinf`` and no contraction.
    """
    if os.environ.get("ATEN_CPU_CAPABILITY", "").strip().lower() == "default":
        return "default"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return "default"  # not verified against torch on non-x86 builds
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return "avx2" if {"avx2", "fma"} <= flags else "default"
    except OSError:
        pass
    return "avx2"


#: "avx2" or "default"; may be overridden (e.g. to mimic another machine).
CPU_KERNEL = _detect_cpu_kernel()


# ----------------------------------------------------------------------------
# MT19937 engine
# ----------------------------------------------------------------------------

def _init_genrand(seed32):
    mt = [0] * _MT_N
    x = seed32 & _U32
    mt[0] = x
    for i in range(1, _MT_N):
        x = (1812433253 * (x ^ (x >> 30)) + i) & _U32
        mt[i] = x
    return np.array(mt, dtype=np.uint32)


def _temper(y):
    y = y.astype(np.uint64)
    y ^= y >> np.uint64(11)
    y ^= (y << np.uint64(7)) & np.uint64(0x9D2C5680)
    y ^= (y << np.uint64(15)) & np.uint64(0xEFC60000)
    y ^= y >> np.uint64(18)
    return y & np.uint64(_U32)


def _check_seed(seed):
    seed = operator.index(seed)
    if not (-(1 << 63) <= seed <= _U64):
        raise RuntimeError("Overflow when unpacking long long")
    return seed & _U64


class Generator:
    """State of one torch CPU generator (MT19937 + cached normal samples)."""

    __slots__ = ("_seed", "_bg", "_next_override", "_irregular",
                 "_next_double_normal", "_next_float_normal")

    def __init__(self, seed=DEFAULT_SEED):
        self._bg = np.random.MT19937(0)
        self.manual_seed(seed)

    # -- seeding -------------------------------------------------------------
    def manual_seed(self, seed):
        seed = _check_seed(seed)
        self._seed = seed
        self._bg.state = {"bit_generator": "MT19937",
                          "state": {"key": _init_genrand(seed), "pos": _MT_N}}
        # torch reports next=0 (left=1) for a freshly seeded engine
        self._next_override = 0
        self._irregular = None
        self._next_double_normal = None
        self._next_float_normal = None
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    # -- raw draws -----------------------------------------------------------
    def _raw32(self, n):
        """``n`` successive ``random()`` outputs as a uint64 array."""
        n = int(n)
        if n <= 0:
            return np.empty(0, dtype=np.uint64)
        if self._irregular is not None:
            return self._raw32_irregular(n)
        self._next_override = None
        return self._bg.random_raw(n)

    def _raw32_irregular(self, n):
        # A state set via set_state whose (left, next) is not the usual
        # left + next == 625: torch returns state[next], ... for left-1 calls
        # and only then regenerates.
        nxt, left = self._irregular
        key = self._bg.state["state"]["key"]
        k = min(n, left - 1)
        head = _temper(key[nxt:nxt + k])
        nxt += k
        left -= k
        if left == 1:
            self._irregular = None
            self._next_override = nxt
            rest = self._raw32(n - k)
            return np.concatenate([head, rest])
        self._irregular = (nxt, left)
        return head

    def _raw64(self, n):
        """``n`` successive ``random64()`` outputs as a uint64 array."""
        r = self._raw32(2 * n)
        return (r[0::2] << np.uint64(32)) | r[1::2]

    # -- state ---------------------------------------------------------------
    def _left_next(self):
        if self._irregular is not None:
            nxt, left = self._irregular
            return left, nxt
        pos = self._bg.state["state"]["pos"]
        if pos >= _MT_N:
            nxt = _MT_N if self._next_override is None else self._next_override
            return 1, nxt
        return _MT_N + 1 - pos, pos

    def get_state(self):
        """torch-compatible byte state (identical to ``Generator.get_state()``)."""
        key = np.asarray(self._bg.state["state"]["key"], dtype=np.uint32)
        left, nxt = self._left_next()
        dn = self._next_double_normal
        fn = self._next_float_normal
        buf = bytearray(STATE_SIZE)
        _HEAD.pack_into(buf, 0, self._seed, left, 1, nxt)
        buf[_STATE_OFF:_TAIL_OFF] = key.astype("<u8").tobytes()
        _TAIL.pack_into(buf, _TAIL_OFF, 0.0, 0.0 if dn is None else dn, 0.0,
                        0 if dn is None else 1, 0.0 if fn is None else fn,
                        fn is not None)
        return np.frombuffer(bytes(buf), dtype=np.uint8).copy()

    def set_state(self, state):
        if hasattr(state, "numpy") and not isinstance(state, np.ndarray):
            state = state.numpy()  # e.g. a torch ByteTensor
        b = np.ascontiguousarray(np.asarray(state, dtype=np.uint8)).tobytes()
        if len(b) != STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found "
                f"the input RNG state size to be {len(b)}")
        seed, left, seeded, nxt = _HEAD.unpack_from(b, 0)
        if not (seeded != 0 and 0 < left <= _MT_N and 0 <= nxt <= _MT_N):
            raise RuntimeError("Invalid mt19937 state")
        if left > 1 and nxt + left - 1 > _MT_N:
            raise RuntimeError("Invalid mt19937 state (would read past the state array)")
        key = (np.frombuffer(b, dtype="<u8", count=_MT_N, offset=_STATE_OFF)
               & np.uint64(_U32)).astype(np.uint32)
        _nx, ny, _rho, nvalid, fval, fvalid = _TAIL.unpack_from(b, _TAIL_OFF)
        pos = _MT_N
        self._irregular = None
        self._next_override = None
        if left == 1:
            self._next_override = nxt
        elif nxt + left == _MT_N + 1:
            pos = nxt
        else:
            self._irregular = (nxt, left)
        self._bg.state = {"bit_generator": "MT19937",
                          "state": {"key": key, "pos": pos}}
        self._seed = seed
        self._next_double_normal = float(ny) if nvalid else None
        self._next_float_normal = float(np.float32(fval)) if fvalid else None
        return self

    def clone(self):
        cls = type(self)
        g = cls.__new__(cls)
        d = getattr(self, "__dict__", None)
        if d:
            g.__dict__.update(d)
        g._bg = np.random.MT19937(0)
        g._bg.state = self._bg.state
        g._seed = self._seed
        g._next_override = self._next_override
        g._irregular = self._irregular
        g._next_double_normal = self._next_double_normal
        g._next_float_normal = self._next_float_normal
        return g

    def __repr__(self):
        return f"<glassgrad._rng.Generator initial_seed={self._seed}>"


default_generator = Generator()
default_generator.seed()  # torch seeds its default CPU generator non-deterministically


def manual_seed(seed):
    """Seed the module-level default generator (like ``torch.manual_seed``)."""
    return default_generator.manual_seed(seed)


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------

def _shape(shape):
    if shape is None:
        return ()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(operator.index(s) for s in shape)


def _numel(shape):
    n = 1
    for s in shape:
        if s < 0:
            raise ValueError(f"negative dimension {s}")
        n *= s
    return n


def _gen(gen):
    return default_generator if gen is None else gen


def _to_float(x64, dtype):
    """static_cast<scalar_t>(double): float16 goes double -> float -> half."""
    if dtype == _f16:
        return x64.astype(np.float32).astype(np.float16)
    return x64.astype(dtype)


def _u24(gen, n):
    """uniform_real_distribution<float>(0, 1): n float32 in [0, 1)."""
    r = gen._raw32(n)
    return (r & np.uint64(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)


def _u53(gen, n):
    """uniform_real_distribution<double>(0, 1): n float64 in [0, 1)."""
    r = gen._raw64(n)
    return (r & np.uint64((1 << 53) - 1)).astype(np.float64) * (2.0 ** -53)


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
    """Correctly rounded float64 fma(a, b, c) (Boldo-Melquiond, round-to-odd)."""
    a = np.asarray(a, dtype=np.float64)
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


def _float_dtype(dtype, what):
    dt = np.dtype(np.float32 if dtype is None else dtype)
    if dt not in _FLOATS:
        raise TypeError(f"{what}: unsupported dtype {dt} (expected float16/32/64)")
    return dt


# ----------------------------------------------------------------------------
# public sampling functions
# ----------------------------------------------------------------------------

def uniform(gen, shape, low=0.0, high=1.0, dtype=np.float32):
    """``torch.empty(shape, dtype).uniform_(low, high, generator=gen)``."""
    gen = _gen(gen)
    dt = _float_dtype(dtype, "uniform")
    shape = _shape(shape)
    n = _numel(shape)
    low = float(low)
    high = float(high)
    if dt == _f64:
        lo, hi = low, high
    else:
        fin = np.finfo(dt)
        lo = min(max(low, float(fin.min)), float(fin.max))
        hi = max(min(high, float(fin.max)), float(fin.min))
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}")
    if not (high - low) <= float(np.finfo(dt).max):
        raise RuntimeError(f"uniform_ expects to-from <= {np.finfo(dt).max}, but found to={high} and from={low}")
    if n == 0:
        return np.empty(shape, dtype=dt)
    if dt == _f64:
        x = _u53(gen, n)
        if CPU_KERNEL == "avx2":
            v = _fma64(x, hi - lo, lo)   # x * (to - from) + from, contracted
        else:
            v = x * (hi - lo) + lo
        to_s, from_s = np.float64(hi), np.float64(lo)
    else:
        x = _u24(gen, n)
        f, t = np.float32(lo), np.float32(hi)
        if f == 0 and t == 1:
            v = x
        elif CPU_KERNEL == "avx2":
            v = _fma32(x, t - f, f)
        else:
            v = x * (t - f) + f
        if dt == _f16:
            v = v.astype(np.float16)
            to_s = np.float32(hi).astype(np.float16)
            from_s = np.float32(lo).astype(np.float16)
        else:
            to_s, from_s = t, f
    v = np.where(v == to_s, from_s, v).astype(dt, copy=False)
    return v.reshape(shape)


def rand(gen, shape, dtype=np.float32):
    """``torch.rand(shape, dtype=dtype, generator=gen)``."""
    return uniform(gen, shape, 0.0, 1.0, dtype)


def _box_muller_double(gen, n):
    """n successive normal_distribution<double> standard samples (with the cache).

    Each fresh pair draws u1, u2 (random64 each) and yields ``r*cos(theta)``;
    ``r*sin(theta)`` is cached in the generator for the next sample.
    """
    out = np.empty(n, dtype=np.float64)
    k = 0
    if n and gen._next_double_normal is not None:
        out[0] = gen._next_double_normal
        gen._next_double_normal = None
        k = 1
    m = n - k
    if m:
        pairs = (m + 1) // 2
        u = _u53(gen, 2 * pairs)
        u1, u2 = u[0::2], u[1::2]
        r = np.sqrt(-2.0 * _libm("log1p", -u2))
        theta = (2.0 * math.pi) * u1
        z = np.empty(2 * pairs, dtype=np.float64)
        z[0::2] = r * _libm("cos", theta)
        z[1::2] = r * _libm("sin", theta)
        out[k:] = z[:m]
        if m % 2:
            gen._next_double_normal = float(z[-1])
    return out


def _affine_double(z, std, mean):
    """transformation::normal(z, mean, std) = z * std + mean (contracted to an FMA
    in torch's AVX2/AVX512 kernels)."""
    if CPU_KERNEL == "avx2":
        return _fma64(z, std, mean)
    return z * std + mean


def _normal_scalar_path(gen, n, mean, std, dt):
    z = _box_muller_double(gen, n)
    return _to_float(_affine_double(z, std, mean), dt)


def normal(gen, shape, mean=0.0, std=1.0, dtype=np.float32, *, contiguous=True):
    """``torch.empty(shape, dtype).normal_(mean, std, generator=gen)``
    (== ``torch.normal(mean, std, shape)`` for float mean/std).

    torch uses the 16-wide fill only for contiguous tensors; ``normal_`` on a
    non-contiguous view takes the scalar path for every element, in memory
    order -- pass ``contiguous=False`` (and the memory-order shape) for that.
    As for every op here, values are produced in memory order of the tensor.
    """
    gen = _gen(gen)
    dt = _float_dtype(dtype, "normal")
    shape = _shape(shape)
    n = _numel(shape)
    mean = float(mean)
    std = float(std)
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if n == 0:
        return np.empty(shape, dtype=dt)
    if n < 16 or not contiguous:
        return _normal_scalar_path(gen, n, mean, std, dt).reshape(shape)
    full = n // 16
    tail = n % 16
    if dt == _f64:
        u = _u53(gen, n)
        out = np.empty(n, dtype=np.float64)
        out[:16 * full] = _normal16_f64(u[:16 * full], mean, std)
        if tail:
            out[n - 16:] = _normal16_f64(_u53(gen, 16), mean, std)
        return out.reshape(shape)
    if dt == _f32:
        u = _u24(gen, n)
    else:
        # half: uniforms are drawn 16 at a time, so the leftover ones are never drawn
        u = _u24(gen, 16 * full)
    fill = _normal16_f32 if CPU_KERNEL == "avx2" else _normal16_f32_default
    out = np.empty(n, dtype=np.float32)
    out[:16 * full] = fill(u[:16 * full], mean, std)
    if tail:
        out[n - 16:] = fill(_u24(gen, 16), mean, std)
    return out.astype(dt, copy=False).reshape(shape)


def randn(gen, shape, dtype=np.float32, *, contiguous=True):
    """``torch.randn(shape, dtype=dtype, generator=gen)``."""
    return normal(gen, shape, 0.0, 1.0, dtype, contiguous=contiguous)


# --- integers ---------------------------------------------------------------

_INT_DTYPES = {np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64,
                                     np.uint8, np.bool_)}
_DIGITS = {_f16: 11, _f32: 24, _f64: 53}


def _int_dtype(dtype):
    dt = np.dtype(np.int64 if dtype is None else dtype)
    if dt not in _INT_DTYPES and dt not in _FLOATS:
        raise TypeError(f"unsupported dtype {dt}")
    return dt


def _cast_i64(v, dt):
    """static_cast<scalar_t>(int64) for values that fit the dtype."""
    if dt == _f16:
        return v.astype(np.float32).astype(np.float16)
    if dt == np.bool_:
        return v != 0
    return v.astype(dt)


def _dtype_limits(dt):
    if dt == np.bool_:
        return 0, 1
    if dt in _FLOATS:
        fi = np.finfo(dt)
        return float(fi.min), float(fi.max)
    ii = np.iinfo(dt)
    return int(ii.min), int(ii.max)


def _update_from(frm, dt):
    d = _DIGITS[dt]
    fp1 = _trunc_via(frm + 1, dt)
    if fp1 < frm:
        f_ = abs(frm + 1)
        k = f_.bit_length() - 1 if f_ > 0 else 0
        frm = fp1 + (1 << (k - d + 1))
    return frm


def _update_to(to, dt):
    d = _DIGITS[dt]
    tm1 = _trunc_via(to - 1, dt)
    if tm1 >= to:
        t_ = abs(to - 1)
        k = t_.bit_length() - 1 if t_ > 0 else 0
        to = tm1 - (1 << (k - d + 1))
    return to


def _trunc_via(v, dt):
    """static_cast<int64_t>(static_cast<scalar_t>(v)) for int64 v."""
    x = np.array(v, dtype=np.int64).astype(np.float32 if dt == _f16 else dt)
    if dt == _f16:
        x = x.astype(np.float16)
    xf = float(x)
    if not math.isfinite(xf):
        raise RuntimeError(f"value {v} is out of bounds for {dt}")
    return int(xf)


def _check_range(frm, to_inc, dt):
    lo, hi = _dtype_limits(dt)
    if not (lo <= frm <= hi):
        raise RuntimeError(f"from is out of bounds for {dt}")
    if not (lo <= to_inc <= hi):
        raise RuntimeError(f"to - 1 is out of bounds for {dt}")


def _from_to(gen, n, rng, base, dt):
    """uniform_int_from_to_distribution<dt>(range, base) for n elements."""
    # Public (non-FBCODE) builds switch to random64() once range >= 2**28, for
    # every dtype (limits the modulo skew); FBCODE builds use 2**32 and only for
    # int64/float/double.
    v = gen._raw64(n) if rng >= (1 << 28) else gen._raw32(n)
    r = (v % np.uint64(rng)) + np.uint64(base & _U64)  # wraps mod 2**64
    return _cast_i64(r.view(np.int64), dt)


def random_(gen, shape, dtype=np.int64, low=None, high=None):
    """``tensor.random_()`` / ``random_(to)`` / ``random_(from, to)``.

    ``low=None, high=None`` -> ``random_()``; ``low=None, high=b`` ->
    ``random_(b)``; ``low=a, high=b`` -> ``random_(a, b)``; ``low=a,
    high=None`` -> ``random_(a, None)`` (i.e. ``[a, max]``).
    """
    gen = _gen(gen)
    dt = _int_dtype(dtype)
    shape = _shape(shape)
    n = _numel(shape)
    if low is None and high is None:
        if n == 0:
            return np.empty(shape, dtype=dt)
        if dt == np.bool_:
            return ((gen._raw32(n) & np.uint64(1)) != 0).reshape(shape)
        if dt == np.int64:
            v = gen._raw64(n) % np.uint64(1 << 63)
        elif dt == _f64:
            v = gen._raw64(n) % np.uint64((1 << 53) + 1)
        elif dt in _FLOATS:
            v = gen._raw32(n) % np.uint64((1 << _DIGITS[dt]) + 1)
        else:
            v = gen._raw32(n) % np.uint64(int(np.iinfo(dt).max) + 1)
        return _cast_i64(v.view(np.int64), dt).reshape(shape)
    frm = 0 if low is None else operator.index(low)
    if high is not None:
        to = operator.index(high)
        if not frm < to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={frm} >= to={to}")
        if dt in _FLOATS:
            frm = _update_from(frm, dt)
            to = _update_to(to, dt)
            if not frm < to:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype")
        _check_range(frm, to - 1, dt)
        if n == 0:
            return np.empty(shape, dtype=dt)
        rng = (to - frm) & _U64
        return _from_to(gen, n, rng, frm, dt).reshape(shape)
    if frm != -(1 << 63):
        if dt in _FLOATS:
            to_inc = 1 << _DIGITS[dt]
            frm = _update_from(frm, dt)
            if not frm < to_inc:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than or "
                                   "equal to 'to_inc' casted to dtype")
        else:
            to_inc = _dtype_limits(dt)[1]
        _check_range(frm, to_inc, dt)
        if n == 0:
            return np.empty(shape, dtype=dt)
        rng = (to_inc - frm + 1) & _U64
        return _from_to(gen, n, rng, frm, dt).reshape(shape)
    # full 64-bit range
    if dt not in (np.dtype(np.int64), _f64, _f32):
        raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
    if n == 0:
        return np.empty(shape, dtype=dt)
    return _cast_i64(gen._raw64(n).view(np.int64), dt).reshape(shape)


def randint(gen, low, high, shape, dtype=np.int64):
    """``torch.randint(low, high, shape, dtype=dtype, generator=gen)``."""
    return random_(gen, shape, dtype, low=low, high=high)


def randperm(gen, n, dtype=np.int64):
    """``torch.randperm(n, dtype=dtype, generator=gen)``."""
    gen = _gen(gen)
    n = operator.index(n)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got {n}")
    dt = np.dtype(dtype)
    if n < _U32 // 20:
        a = list(range(n))
        if n > 1:
            i = np.arange(n - 1, dtype=np.uint64)
            js = (i + gen._raw32(n - 1) % (np.uint64(n) - i)).tolist()
            for i, j in enumerate(js):  # sequential swaps (Fisher-Yates)
                a[i], a[j] = a[j], a[i]
    else:  # "inside-out" Fisher-Yates with 64-bit draws (huge n only)
        a = [0] * n
        zs = gen._raw64(n).tolist()
        for i, r in enumerate(zs):
            z = r % (i + 1)
            a[i] = a[z]
            a[z] = i
    return _cast_i64(np.array(a, dtype=np.int64), dt)


# --- bernoulli --------------------------------------------------------------

def bernoulli_scalar(gen, shape, p=0.5, dtype=np.float32):
    """``torch.empty(shape, dtype).bernoulli_(p, generator=gen)`` (float ``p``).

    torch's MKL/VSL path for this op is compiled only into Meta-internal
    (FBCODE) builds; public CPU wheels use one ``random64`` per element:
    ``u53 < p``.
    """
    gen = _gen(gen)
    dt = np.dtype(dtype)
    shape = _shape(shape)
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype=dt)
    return (_u53(gen, n) < p).astype(dt).reshape(shape)


def bernoulli_tensor(gen, p, dtype=None):
    """``torch.bernoulli(p)`` / ``out.bernoulli_(p)`` for a probability array.

    float64 ``p`` uses one ``random64`` per element (53-bit uniform in double);
    float32/float16 ``p`` uses one ``random()`` per element (24-bit uniform,
    compared in float).  ``dtype`` is the output dtype (default: ``p.dtype``).
    """
    gen = _gen(gen)
    p = np.asarray(p)
    if p.dtype not in _FLOATS:
        raise TypeError(f"bernoulli: probabilities must be float16/32/64, got {p.dtype}")
    dt = p.dtype if dtype is None else np.dtype(dtype)
    n = p.size
    if n == 0:
        return np.empty(p.shape, dtype=dt)
    flat = np.ascontiguousarray(p).ravel()
    if p.dtype == _f64:
        res = _u53(gen, n) < flat
    else:
        res = _u24(gen, n) < flat.astype(np.float32)
    return res.astype(dt).reshape(p.shape)


# --- geometric / log_normal / cauchy (double-precision scalar kernels) -------

def geometric(gen, shape, p, dtype=np.float32):
    """``torch.empty(shape, dtype).geometric_(p, generator=gen)``:
    ``ceil(log(u) / log1p(-p))`` with one 53-bit uniform per element."""
    gen = _gen(gen)
    dt = _int_dtype(dtype)
    if dt == np.bool_:
        raise RuntimeError('"geometric_cpu" not implemented for \'Bool\'')
    shape = _shape(shape)
    p = float(p)
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype=dt)
    with np.errstate(divide="ignore"):
        v = np.ceil(_libm("log", _u53(gen, n)) / math.log1p(-p))
    if dt in _FLOATS:
        return _to_float(v, dt).reshape(shape)
    return v.astype(np.int64).astype(dt).reshape(shape)


def log_normal(gen, shape, mean=1.0, std=2.0, dtype=np.float32):
    """``torch.empty(shape, dtype).log_normal_(mean, std, generator=gen)``:
    ``exp(normal)`` from the scalar double Box-Muller (shares the cached sample)."""
    gen = _gen(gen)
    dt = _float_dtype(dtype, "log_normal")
    shape = _shape(shape)
    mean = float(mean)
    std = float(std)
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype=dt)
    z = _affine_double(_box_muller_double(gen, n), std, mean)
    with np.errstate(over="ignore"):
        v = _libm("exp", z)
    return _to_float(v, dt).reshape(shape)


def cauchy(gen, shape, median=0.0, sigma=1.0, dtype=np.float32):
    """``torch.empty(shape, dtype).cauchy_(median, sigma, generator=gen)``:
    ``median + sigma * tan(pi * (u - 0.5))`` in double."""
    gen = _gen(gen)
    dt = _float_dtype(dtype, "cauchy")
    shape = _shape(shape)
    median = float(median)
    sigma = float(sigma)
    n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype=dt)
    t = _libm("tan", math.pi * (_u53(gen, n) - 0.5))
    if CPU_KERNEL == "avx2":
        v = _fma64(t, sigma, median)
    else:
        v = median + sigma * t
    return _to_float(v, dt).reshape(shape)


# --- torch.topk tie order -----------------------------------------------------
# torch.multinomial without replacement takes topk(p / q) and CPU topk uses
# std::partial_sort (k * 64 <= n) or std::nth_element + std::sort on (value,
# index) pairs, so exactly tied keys come out in libstdc++'s order.  The exact
# algorithms are emulated below (on Python lists) and used only for rows whose
# top-k has ties; otherwise the order is unique and a NumPy argsort is used.


def _push_heap(a, first, hole, top, value, comp):
    parent = (hole - 1) // 2
    while hole > top and comp(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def _adjust_heap(a, first, hole, length, value, comp):
    top = hole
    second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if comp(a[first + second], a[first + second - 1]):
            second -= 1
        a[first + hole] = a[first + second]
        hole = second
    if (length & 1) == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        a[first + hole] = a[first + second - 1]
        hole = second - 1
    _push_heap(a, first, hole, top, value, comp)


def _pop_heap_to(a, first, last, result, comp):
    value = a[result]
    a[result] = a[first]
    _adjust_heap(a, first, 0, last - first, value, comp)


def _stl_make_heap(a, first, last, comp):
    n = last - first
    if n < 2:
        return
    parent = (n - 2) // 2
    while True:
        _adjust_heap(a, first, parent, n, a[first + parent], comp)
        if parent == 0:
            return
        parent -= 1


def _stl_sort_heap(a, first, last, comp):
    while last - first > 1:
        last -= 1
        _pop_heap_to(a, first, last, last, comp)


def _stl_heap_select(a, first, middle, last, comp):
    _stl_make_heap(a, first, middle, comp)
    for i in range(middle, last):
        if comp(a[i], a[first]):
            _pop_heap_to(a, first, middle, i, comp)


def _stl_partial_sort(a, first, middle, last, comp):
    _stl_heap_select(a, first, middle, last, comp)
    _stl_sort_heap(a, first, middle, comp)


def _lg(n):
    return n.bit_length() - 1


def _move_median_to_first(a, result, x, y, z, comp):
    if comp(a[x], a[y]):
        if comp(a[y], a[z]):
            m = y
        elif comp(a[x], a[z]):
            m = z
        else:
            m = x
    elif comp(a[x], a[z]):
        m = x
    elif comp(a[y], a[z]):
        m = z
    else:
        m = y
    a[result], a[m] = a[m], a[result]


def _unguarded_partition(a, first, last, pivot, comp):
    while True:
        while comp(a[first], a[pivot]):
            first += 1
        last -= 1
        while comp(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _partition_pivot(a, first, last, comp):
    mid = first + (last - first) // 2
    _move_median_to_first(a, first, first + 1, mid, last - 1, comp)
    return _unguarded_partition(a, first + 1, last, first, comp)


def _unguarded_linear_insert(a, last, comp):
    val = a[last]
    nxt = last - 1
    while comp(val, a[nxt]):
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = val


def _insertion_sort(a, first, last, comp):
    if first == last:
        return
    for i in range(first + 1, last):
        if comp(a[i], a[first]):
            val = a[i]
            a[first + 1:i + 1] = a[first:i]
            a[first] = val
        else:
            _unguarded_linear_insert(a, i, comp)


def _stl_nth_element(a, first, nth, last, comp):
    if first == last or nth == last:
        return
    depth = _lg(last - first) * 2
    while last - first > 3:
        if depth == 0:
            _stl_heap_select(a, first, nth + 1, last, comp)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, comp)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last, comp)


def _introsort_loop(a, first, last, depth, comp):
    while last - first > 16:
        if depth == 0:
            _stl_partial_sort(a, first, last, last, comp)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, comp)
        _introsort_loop(a, cut, last, depth, comp)
        last = cut


def _stl_sort(a, first, last, comp):
    if first == last:
        return
    _introsort_loop(a, first, last, _lg(last - first) * 2, comp)
    if last - first > 16:
        _insertion_sort(a, first, first + 16, comp)
        for i in range(first + 16, last):
            _unguarded_linear_insert(a, i, comp)
    else:
        _insertion_sort(a, first, last, comp)


def _topk_cmp(x, y):
    a, b = x[0], y[0]
    return a > b or (a != a and b == b)


def _topk_row(vals, k):
    """Indices of torch.topk(vals, k) (largest, sorted) on CPU, ties included."""
    n = vals.shape[0]
    if not np.isnan(vals).any():
        order = np.argsort(-vals.astype(np.float64), kind="stable")
        sv = vals[order]
        m = min(k + 1, n)
        if not np.any(sv[:m - 1] == sv[1:m]):
            return order[:k]
    buf = list(zip(vals.astype(np.float64).tolist(), range(n)))
    if k * 64 <= n:
        _stl_partial_sort(buf, 0, k, n, _topk_cmp)
    else:
        _stl_nth_element(buf, 0, k - 1, n, _topk_cmp)
        _stl_sort(buf, 0, k - 1, _topk_cmp)
    return np.array([b[1] for b in buf[:k]], dtype=np.int64)


# --- exponential / multinomial ---------------------------------------------

def exponential(gen, shape, lambd=1.0, dtype=np.float32):
    """``torch.empty(shape, dtype).exponential_(lambd, generator=gen)``."""
    gen = _gen(gen)
    dt = _float_dtype(dtype, "exponential")
    shape = _shape(shape)
    lambd = float(lambd)
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype=dt)
    u = _u53(gen, n)
    v = (-1.0 / lambd) * _libm("log1p", -u)
    return _to_float(v, dt).reshape(shape)


def multinomial(gen, probs, num_samples, replacement=False):
    """``torch.multinomial(probs, num_samples, replacement, generator=gen)`` (int64)."""
    gen = _gen(gen)
    probs = np.asarray(probs)
    if probs.dtype not in _FLOATS:
        raise TypeError(f"multinomial only supports floating-point dtypes for input, got: {probs.dtype}")
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    num_samples = operator.index(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = probs.shape[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = np.ascontiguousarray(probs).reshape(-1, n_cat)
    out_shape = probs.shape[:-1] + (num_samples,)
    if rows.shape[0] == 0:
        return np.empty(out_shape, dtype=np.int64)
    if not (np.all(np.isfinite(rows)) and np.all(rows >= 0)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if not replacement or num_samples == 1:
        if np.any(rows.sum(axis=-1, dtype=np.float64) == 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        # Gumbel/exponential trick: argmax/topk of p / q with q ~ Exp(1)
        q = exponential(gen, rows.shape, 1.0, probs.dtype)
        with np.errstate(all="ignore"):
            r = rows / q
        if num_samples == 1:
            res = np.argmax(r, axis=-1)[:, None]
        else:
            res = np.stack([_topk_row(row, num_samples) for row in r])
        return res.astype(np.int64).reshape(out_shape)
    acc = np.float64 if probs.dtype == _f64 else np.float32
    res = np.empty((rows.shape[0], num_samples), dtype=np.int64)
    for i in range(rows.shape[0]):
        cum = np.cumsum(rows[i].astype(acc), dtype=acc)  # sequential, like torch
        total = cum[-1]
        if not total > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cum = cum / total
        cum[-1] = 1
        u = _u53(gen, num_samples)
        res[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return res.reshape(out_shape)
