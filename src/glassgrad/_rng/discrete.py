"""Integer- and boolean-valued samplers of the torch CPU RNG replica:
``random_``/``randint`` (torch's from/to range handling, float-dtype range
adjustment, 32- vs 64-bit draws), ``randperm`` (Fisher-Yates as torch runs it),
``bernoulli_scalar``/``bernoulli_tensor`` and ``geometric``."""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import _dtype
from .common import _FLOATS, _f16, _half, finfo, _f32, _f64, _numel, _shape, _to_float, _u24, _u53
from .engine import _U32, _U64, _gen
from .kernels import _libm


# --- integers ---------------------------------------------------------------

_INT_DTYPES = {np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64,
                                     np.uint8, np.uint16, np.uint32, np.uint64, np.bool_)}
_DIGITS = {_f16: 11, _f32: 24, _f64: 53}


def _digits(dt):
    return 8 if dt.kind == "V" else _DIGITS[dt]      # bfloat16: 8 significand bits


def _int_dtype(dtype):
    dt = np.dtype(np.int64 if dtype is None else dtype)
    if dt not in _INT_DTYPES and dt not in _FLOATS:
        raise TypeError(f"unsupported dtype {dt}")
    return dt


def _cast_i64(v, dt):
    """static_cast<scalar_t>(int64) for values that fit the dtype."""
    if _half(dt):
        return v.astype(np.float32).astype(dt)
    if dt == np.bool_:
        return v != 0
    return v.astype(dt)


def _dtype_limits(dt):
    if dt == np.bool_:
        return 0, 1
    if dt in _FLOATS:
        fi = finfo(dt)
        return float(fi.min), float(fi.max)
    ii = np.iinfo(dt)
    return int(ii.min), int(ii.max)


def _update_from(frm, dt):
    d = _digits(dt)
    fp1 = _trunc_via(frm + 1, dt)
    if fp1 < frm:
        f_ = abs(frm + 1)
        k = f_.bit_length() - 1 if f_ > 0 else 0
        frm = fp1 + (1 << (k - d + 1))
    return frm


def _update_to(to, dt):
    d = _digits(dt)
    tm1 = _trunc_via(to - 1, dt)
    if tm1 >= to:
        t_ = abs(to - 1)
        k = t_.bit_length() - 1 if t_ > 0 else 0
        to = tm1 - (1 << (k - d + 1))
    return to


def _trunc_via(v, dt):
    """static_cast<int64_t>(static_cast<scalar_t>(v)) for int64 v."""
    x = np.array(v, dtype=np.int64).astype(np.float32 if _half(dt) else dt)
    if _half(dt):
        x = x.astype(dt)
    xf = float(x)
    if not math.isfinite(xf):
        raise RuntimeError(f"value {v} is out of bounds for {dt}")
    return int(xf)


def _check_range(frm, to_inc, dt):
    lo, hi = _dtype_limits(dt)
    if not (lo <= frm <= hi):
        raise RuntimeError(f"from is out of bounds for {_dtype.cpp_name(dt)}")
    if not (lo <= to_inc <= hi):
        raise RuntimeError(f"to - 1 is out of bounds for {_dtype.cpp_name(dt)}")


def random_plan(dt, low=None, high=None):
    """random_'s argument checks (every device) and what to draw: ("bits",) for random_(), ("range", range, base)
    for a bounded range (range mod 2**64), ("full64",) for the full 64-bit range."""
    if low is None and high is None:
        return ("bits",)
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
        return ("range", (to - frm) & _U64, frm)
    if frm != -(1 << 63):
        if dt in _FLOATS:
            to_inc = 1 << _digits(dt)
            frm = _update_from(frm, dt)
            if not frm < to_inc:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than or "
                                   "equal to 'to_inc' casted to dtype")
        else:
            to_inc = _dtype_limits(dt)[1]
        _check_range(frm, to_inc, dt)
        return ("range", (to_inc - frm + 1) & _U64, frm)
    if dt not in (np.dtype(np.int64), _f64, _f32):
        raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
    return ("full64",)


def random_values(plan, dt, n, raw32, raw64, wide_bits, wide_range):
    """n values of random_ for `plan` from raw32(n) / raw64(n) draws (uint64 arrays): random_() takes 64-bit
    draws when `wide_bits`, a range takes them from `wide_range` up -- 2**28 in torch's public CPU builds (limits
    the modulo skew), 2**32 in its CUDA kernels."""
    if plan[0] == "bits":
        if dt == np.bool_:
            return (raw32(n) & np.uint64(1)) != 0
        if dt == np.int64:
            v = raw64(n) % np.uint64(1 << 63)
        elif dt in _FLOATS:
            v = (raw64(n) if wide_bits else raw32(n)) % np.uint64((1 << _digits(dt)) + 1)
        else:
            v = raw32(n) % np.uint64(int(np.iinfo(dt).max) + 1)
        return _cast_i64(v.view(np.int64), dt)
    if plan[0] == "full64":
        return _cast_i64(raw64(n).view(np.int64), dt)
    _, rng, base = plan
    v = raw64(n) if rng >= wide_range else raw32(n)
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
    plan = random_plan(dt, low, high)
    n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype=dt)
    wide = dt == _f64          # random_() on the CPU: 64-bit draws for int64 and double only
    return random_values(plan, dt, n, gen._raw32, gen._raw64, wide, 1 << 28).reshape(shape)


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
    dt, shape, n, p = bernoulli_args(dtype, shape, p)
    if n == 0:
        return np.empty(shape, dtype=dt)
    return (_u53(gen, n) < p).astype(dt).reshape(shape)


def bernoulli_args(dtype, shape, p):
    """bernoulli_(float p)'s checks on every device: (dtype, shape, element count, p)."""
    dt = np.dtype(dtype)
    shape = _shape(shape)
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return dt, shape, _numel(shape), p


def bernoulli_tensor(gen, p, dtype=None):
    """``torch.bernoulli(p)`` / ``out.bernoulli_(p)`` for a probability array.

    float64 ``p`` uses one ``random64`` per element (53-bit uniform in double);
    float32/float16 ``p`` uses one ``random()`` per element (24-bit uniform,
    compared in float).  ``dtype`` is the output dtype (default: ``p.dtype``).
    """
    gen = _gen(gen)
    p = np.asarray(p)
    if p.dtype not in _FLOATS:
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{_dtype.c_name(p.dtype)}\'')
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
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


# --- geometric (double-precision scalar kernel) -------------------------------

def geometric_args(dtype, shape, p, kernel):
    """geometric_'s checks on every device (`kernel`: the name torch's error gives for a bool tensor): (dtype,
    shape, element count, p)."""
    dt = _int_dtype(dtype)
    if dt == np.bool_:
        raise RuntimeError(f'"{kernel}" not implemented for \'Bool\'')
    shape = _shape(shape)
    p = float(p)
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return dt, shape, _numel(shape), p


def geometric(gen, shape, p, dtype=np.float32):
    """``torch.empty(shape, dtype).geometric_(p, generator=gen)``:
    ``ceil(log(u) / log1p(-p))`` with one 53-bit uniform per element."""
    gen = _gen(gen)
    dt, shape, n, p = geometric_args(dtype, shape, p, "geometric_cpu")
    if n == 0:
        return np.empty(shape, dtype=dt)
    with np.errstate(divide="ignore"):
        v = np.ceil(_libm("log", _u53(gen, n)) / math.log1p(-p))
    if dt in _FLOATS:
        return _to_float(v, dt).reshape(shape)
    return v.astype(np.int64).astype(dt).reshape(shape)
