"""Real-valued samplers of the torch CPU RNG replica: ``uniform``/``rand``, the
scalar double Box-Muller with its cached second sample, ``normal``/``randn``
(16-wide fill or scalar path), ``log_normal``, ``cauchy`` and ``exponential``,
each consuming the generator exactly like torch's CPU kernels."""

from __future__ import annotations

import math

import numpy as np

from . import common
from .common import _half, finfo, _f32, _f64, _float_dtype, _numel, _shape, _to_float, _u24, _u53, sampler_args
from .engine import _gen
from .kernels import (_fma32, _fma64, _libm, _normal16_f32, _normal16_f32_default,
                      _normal16_f64)


# ----------------------------------------------------------------------------
# public sampling functions
# ----------------------------------------------------------------------------

def uniform_bounds(dt, low, high):
    """uniform_'s checks (every device) and its bounds clamped to the dtype's range."""
    low = float(low)
    high = float(high)
    if dt == _f64:
        lo, hi = low, high
    else:
        fin = finfo(dt)
        lo = min(max(low, float(fin.min)), float(fin.max))
        hi = max(min(high, float(fin.max)), float(fin.min))
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}")
    if not (high - low) <= float(finfo(dt).max):
        raise RuntimeError(f"uniform_ expects to-from <= {finfo(dt).max}, but found to={high} and from={low}")
    return lo, hi


def uniform(gen, shape, low=0.0, high=1.0, dtype=np.float32):
    """``torch.empty(shape, dtype).uniform_(low, high, generator=gen)``."""
    gen = _gen(gen)
    dt = _float_dtype(dtype, "uniform")
    shape = _shape(shape)
    n = _numel(shape)
    lo, hi = uniform_bounds(dt, low, high)
    if n == 0:
        return np.empty(shape, dtype=dt)
    if dt == _f64:
        x = _u53(gen, n)
        if common.CPU_KERNEL == "avx2":
            v = _fma64(x, hi - lo, lo)   # x * (to - from) + from, contracted
        else:
            v = x * (hi - lo) + lo
        to_s, from_s = np.float64(hi), np.float64(lo)
    else:
        x = _u24(gen, n)
        f, t = np.float32(lo), np.float32(hi)
        if f == 0 and t == 1:
            v = x
        elif common.CPU_KERNEL == "avx2":
            v = _fma32(x, t - f, f)
        else:
            v = x * (t - f) + f
        if _half(dt):
            v = v.astype(dt)
            to_s = np.float32(hi).astype(dt)
            from_s = np.float32(lo).astype(dt)
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
        z = np.empty(2 * pairs, dtype=np.float64)
        if pairs <= 8:      # a few samples (torch.randn(3)): Python floats and libm through `math` -- the
            us = u.tolist()     # same operations, ~10x less overhead than NumPy calls on tiny arrays
            for i in range(pairs):
                r = math.sqrt(-2.0 * math.log1p(-us[2 * i + 1]))
                theta = (2.0 * math.pi) * us[2 * i]
                z[2 * i] = r * math.cos(theta)
                z[2 * i + 1] = r * math.sin(theta)
        else:
            u1, u2 = u[0::2], u[1::2]
            r = np.sqrt(-2.0 * _libm("log1p", -u2))
            theta = (2.0 * math.pi) * u1
            z[0::2] = r * _libm("cos", theta)
            z[1::2] = r * _libm("sin", theta)
        out[k:] = z[:m]
        if m % 2:
            gen._next_double_normal = float(z[-1])
    return out


def _affine_double(z, std, mean):
    """transformation::normal(z, mean, std) = z * std + mean (contracted to an FMA
    in torch's AVX2/AVX512 kernels)."""
    if common.CPU_KERNEL == "avx2":
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
    fill = _normal16_f32 if common.CPU_KERNEL == "avx2" else _normal16_f32_default
    out = np.empty(n, dtype=np.float32)
    out[:16 * full] = fill(u[:16 * full], mean, std)
    if tail:
        out[n - 16:] = fill(_u24(gen, 16), mean, std)
    return out.astype(dt, copy=False).reshape(shape)


def randn(gen, shape, dtype=np.float32, *, contiguous=True):
    """``torch.randn(shape, dtype=dtype, generator=gen)``."""
    return normal(gen, shape, 0.0, 1.0, dtype, contiguous=contiguous)


# --- log_normal / cauchy (double-precision scalar kernels) -------------------

def log_normal(gen, shape, mean=1.0, std=2.0, dtype=np.float32):
    """``torch.empty(shape, dtype).log_normal_(mean, std, generator=gen)``:
    ``exp(normal)`` from the scalar double Box-Muller (shares the cached sample)."""
    gen = _gen(gen)
    dt, shape, n, std = sampler_args("log_normal", dtype, shape, std)
    mean = float(mean)
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
    dt, shape, n, sigma = sampler_args("cauchy", dtype, shape, sigma)
    median = float(median)
    if n == 0:
        return np.empty(shape, dtype=dt)
    t = _libm("tan", math.pi * (_u53(gen, n) - 0.5))
    if common.CPU_KERNEL == "avx2":
        v = _fma64(t, sigma, median)
    else:
        v = median + sigma * t
    return _to_float(v, dt).reshape(shape)


# --- exponential -------------------------------------------------------------

def exponential(gen, shape, lambd=1.0, dtype=np.float32):
    """``torch.empty(shape, dtype).exponential_(lambd, generator=gen)``."""
    gen = _gen(gen)
    dt, shape, n, lambd = sampler_args("exponential", dtype, shape, lambd)
    if n == 0:
        return np.empty(shape, dtype=dt)
    u = _u53(gen, n)
    v = (-1.0 / lambd) * _libm("log1p", -u)
    return _to_float(v, dt).reshape(shape)
