"""The samplers of torch's CUDA generator, on the device: each follows the ATen CUDA kernel's recipe on the Philox
words of philox.py (see there for the launch layout), so a CUDA tensor's random numbers never leave its device.

What matches torch's CUDA build by construction (the same words, the same integer arithmetic, IEEE float steps
in the same order): uniform_ / rand (float and double; ``rand * range + from`` as the fused multiply-add nvcc
makes of it), random_ / randint (32- or 64-bit draws as ATen picks them), bernoulli_ with a float p,
bernoulli(p tensor), the dropout mask, the generator state and offsets.  Close but not bit-equal: the samplers
that call a transcendental function (normal / randn through Box-Muller -- CUDA's logf / __sincosf / sincospi are
not NumPy's --, exponential_, geometric_, log_normal_, cauchy_) agree to a few ulp and flip only where a value
sits on a rounding boundary.  Different streams (documented in docs/architecture.md): randperm (a stable sort of
64-bit random keys; torch also reshuffles equal keys) and multinomial with replacement (one uniform per sample
searched in the row's cumulative distribution; torch's kernel strides differently); multinomial without
replacement is torch's own device-independent algorithm (argmax / topk of p / Exp(1) draws).
"""
import math

import numpy as np

from . import philox
from .categorical import check_args, check_rows
from .common import _half, finfo, _f32, _f64, _float_dtype, _numel, _shape, sampler_args
from .continuous import uniform_bounds
from .discrete import _int_dtype, bernoulli_args, geometric_args, random_plan, random_values
from .kernels import _fma32_fast, _fma64

__all__ = ["Launcher", "uniform", "normal", "random_", "bernoulli_scalar", "bernoulli_tensor", "dropout_mask",
           "exponential", "geometric", "log_normal", "cauchy", "randperm", "multinomial"]

_F_INV, _F_HALF = np.float32(2.0 ** -32), np.float32(2.0 ** -33)                     # curand_uniform
_F_2PI = np.float32(2.0 ** -32) * np.float32(2 * math.pi)                               # CURAND_2POW32_INV_2PI
_D_INV = 2.0 ** -53
_SH21, _SH32 = np.uint64(21), np.uint64(32)


class Launcher:
    """A CUDA generator's state on one device: the words of each kernel launch, made on that device."""

    def __init__(self, state, sm, arange, kernel=None):
        self.state, self.sm, self.arange, self.kernel = state, sm, arange, kernel

    def words(self, n, unroll):
        return philox.unrolled(self.state, n, unroll, self.sm, self.arange, self.kernel)

    def empty(self, shape, dt):
        return np.empty(shape, dt, like=self.arange(0))


def _u_float(w):
    """curand_uniform: a 32-bit word to a float32 in (0, 1]."""
    return w.astype(np.float32) * _F_INV + _F_HALF


def _u_double(lo, hi):
    """curand_uniform2_double's draw: 53 bits of two words to a float64 in (0, 1]."""
    return (lo ^ (hi << _SH21)).astype(np.float64) * _D_INV + _D_INV / 2


def _scalar(v, dt):
    """static_cast<scalar_t>(double): half / bfloat16 through float."""
    return np.float32(v).astype(dt) if _half(dt) else np.dtype(dt).type(v)


def _floats(L, n, dt):
    """The uniforms uniform_and_transform feeds the transform (accscalar: float, double for double), in element
    order."""
    if dt == _f64:
        w = L.words(n, 2)
        return philox.arrange([_u_double(w[0], w[1]), _u_double(w[2], w[3])], n)
    return philox.arrange([_u_float(x) for x in L.words(n, 4)], n)


def uniform(L, shape, low=0.0, high=1.0, dtype=np.float32):
    dt = _float_dtype(dtype, "uniform")
    shape = _shape(shape)
    n = _numel(shape)
    lo, hi = uniform_bounds(dt, low, high)
    if n == 0:
        return L.empty(shape, dt)
    u = _floats(L, n, dt)
    if dt == _f64:
        v, to_s, from_s = _fma64(u, hi - lo, lo), np.float64(hi), np.float64(lo)
    else:
        f, t = _scalar(lo, dt), _scalar(hi, dt)
        rng = np.float32(t - f)                  # (to - from) in scalar_t, then as the float accumulator
        v = u if (f == 0 and rng == 1) else _fma32_fast(u, rng, np.float32(f))
        v, to_s, from_s = v.astype(dt), t, f
    return np.where(v == to_s, from_s, v).astype(dt, copy=False).reshape(shape)


def _sinpi_cospi(v):
    """sincospi(v) for float64 v in (0, 2]: reduced to |f| <= 1/4 of a quarter turn, where sin / cos are exact to
    an ulp."""
    k = np.rint(2 * v)
    f = np.pi * (v - k / 2)
    s, c = np.sin(f), np.cos(f)
    q = (k.astype(np.int64) & 3)
    sin = np.where(q == 0, s, np.where(q == 1, c, np.where(q == 2, -s, -c)))
    cos = np.where(q == 0, c, np.where(q == 1, -s, np.where(q == 2, -c, s)))
    return sin, cos


def _normals(L, n, dt):
    """curand_normal4 (float) / curand_normal2_double: Box-Muller on the words, in element order."""
    if dt == _f64:
        w = L.words(n, 2)
        u = _u_double(w[0], w[1])
        v = (w[2] ^ (w[3] << _SH21)).astype(np.float64) * (2 * _D_INV) + _D_INV
        s = np.sqrt(-2.0 * np.log(u))
        sp, cp = _sinpi_cospi(v)
        return philox.arrange([s * sp, s * cp], n)
    w = L.words(n, 4)
    z = []
    for a, b in ((w[0], w[1]), (w[2], w[3])):
        s = np.sqrt(np.float32(-2.0) * np.log(_u_float(a)))
        v = b.astype(np.float32) * _F_2PI + _F_2PI / np.float32(2)
        z += [s * np.sin(v), s * np.cos(v)]
    return philox.arrange(z, n)


def _affine(z, std, mean, dt):
    """rand * std + mean in the accumulator type (fused by nvcc), then the output dtype."""
    if dt == _f64:
        return _fma64(z, std, mean)
    return _fma32_fast(z, np.float32(std), np.float32(mean)).astype(dt)


def normal(L, shape, mean=0.0, std=1.0, dtype=np.float32):
    dt = _float_dtype(dtype, "normal")
    shape = _shape(shape)
    n = _numel(shape)
    if not float(std) >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std)}")
    if n == 0:
        return L.empty(shape, dt)
    return _affine(_normals(L, n, dt), float(std), float(mean), dt).reshape(shape)


def log_normal(L, shape, mean=1.0, std=2.0, dtype=np.float32):
    dt, shape, n, std = sampler_args("log_normal", dtype, shape, std)
    if n == 0:
        return L.empty(shape, dt)
    z = _normals(L, n, dt)
    acc = np.float64 if dt == _f64 else np.float32
    with np.errstate(over="ignore"):
        v = np.exp(_fma64(z, float(std), float(mean)) if dt == _f64 else _fma32_fast(z, acc(std), acc(mean)))
    return v.astype(dt).reshape(shape)


def random_(L, shape, dtype=np.int64, low=None, high=None):
    """random_ / randint: ATen's CUDA kernels take 64-bit draws (two words, unroll 2) for random_() on int64 /
    double / float / bfloat16 and for ranges of 2**32 or more, 32-bit draws (one word, unroll 4) otherwise."""
    dt = _int_dtype(dtype)
    shape = _shape(shape)
    n = _numel(shape)
    plan = random_plan(dt, low, high)
    if n == 0:
        return L.empty(shape, dt)

    def raw32(k):
        return philox.arrange(list(L.words(k, 4)), k)

    def raw64(k):
        w = L.words(k, 2)
        return philox.arrange([(w[0] << _SH32) | w[1], (w[2] << _SH32) | w[3]], k)
    wide = dt in (np.dtype(np.int64), _f64, _f32) or dt.kind == "V"
    return random_values(plan, dt, n, raw32, raw64, wide_bits=wide, wide_range=1 << 32).reshape(shape)


def bernoulli_scalar(L, shape, p=0.5, dtype=np.float32):
    """bernoulli_(float p): ``uniform < p`` (p as a float; double uniforms for a double output)."""
    dt, shape, n, p = bernoulli_args(dtype, shape, p)
    if n == 0:
        return L.empty(shape, dt)
    return (_floats(L, n, _f64 if dt == _f64 else _f32) < np.float32(p)).astype(dt).reshape(shape)


def _vec4(L, n, increment):
    """The first curand4 call of threads 0 .. n/4 (four consecutive elements per thread, CUDA_tensor_apply's
    layout), after philox_cuda_state(increment): one word per element."""
    t = (n + 3) // 4
    w = philox._calls(L.state.seed_, L.state.take(increment), t, 1, L.arange, L.kernel)
    return np.stack([x[0] for x in w], axis=1).reshape(-1)[:n]


def bernoulli_tensor(L, p, dtype=None):
    """bernoulli(p tensor): ATen's bernoulli_tensor_cuda_kernel, ``uniform <= p``, four elements a thread."""
    if p.dtype not in (np.dtype(np.float16), _f32, _f64) and p.dtype.kind != "V":
        raise NotImplementedError(f'"bernoulli_tensor_cuda_p_" not implemented for \'{p.dtype}\'')
    if p.size and not bool(((p >= 0) & (p <= 1)).all()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    dt = p.dtype if dtype is None else np.dtype(dtype)
    n = p.size
    if n == 0:
        return L.empty(p.shape, dt)
    u = _u_float(_vec4(L, n, 10))
    pf = p.reshape(-1) if p.dtype == _f64 else p.reshape(-1).astype(np.float32)
    return (u <= pf).astype(dt).reshape(p.shape)


def dropout_mask(L, n, keep, vec):
    """fused_dropout's keep mask (``uniform < 1 - p``) for `n` elements, `vec` elements a thread (4 or 2 when
    the tensor is dense and its size divides; 1: the unrolled grid-stride layout)."""
    if vec == 1:
        return _floats(L, n, _f32) < np.float32(keep)
    return _u_float(philox.vec_words(L.state, n, vec, L.sm, L.arange, L.kernel)) < np.float32(keep)


def exponential(L, shape, lambd=1.0, dtype=np.float32):
    """``-1 / lambda * log(u)``, with log(u) taken as -eps/2 where u rounds to 1 (ATen's CUDA transformation)."""
    dt, shape, n, lambd = sampler_args("exponential", dtype, shape, lambd)
    if n == 0:
        return L.empty(shape, dt)
    acc = np.float64 if dt == _f64 else np.float32
    u = _floats(L, n, dt)
    eps = acc(float(finfo(dt).eps) / 2)
    lg = np.where(u >= acc(1) - eps, -eps, np.log(u))
    return ((acc(-1.0) / acc(lambd)) * lg).astype(dt).reshape(shape)


def geometric(L, shape, p, dtype=np.float32):
    """``ceil(log(u) / log1p(-p))`` in float (double for a double output)."""
    dt, shape, n, p = geometric_args(dtype, shape, p, "geometric_cuda")
    if n == 0:
        return L.empty(shape, dt)
    acc = np.float64 if dt == _f64 else np.float32
    u = _floats(L, n, _f64 if dt == _f64 else _f32)
    v = np.ceil(np.log(u) / np.log1p(-acc(p)))
    return (v.astype(dt) if dt.kind in "fV" else v.astype(np.int64).astype(dt)).reshape(shape)


def cauchy(L, shape, median=0.0, sigma=1.0, dtype=np.float32):
    """``median + sigma * tan(pi * (u - 0.5))`` in the accumulator type."""
    dt, shape, n, sigma = sampler_args("cauchy", dtype, shape, sigma)
    median = float(median)
    if n == 0:
        return L.empty(shape, dt)
    acc = np.float64 if dt == _f64 else np.float32
    u = _floats(L, n, dt)
    return (acc(median) + acc(sigma) * np.tan(acc(math.pi) * (u - acc(0.5)))).astype(dt).reshape(shape)


def randperm(L, n, dtype=np.int64):
    """A permutation from a stable sort of 64-bit random keys (torch's CUDA randperm sorts random keys too)."""
    dt = np.dtype(dtype)
    if n == 0:
        return L.empty((0,), dt)
    w = L.words(n, 2)
    keys = philox.arrange([(w[0] << _SH32) | w[1], (w[2] << _SH32) | w[3]], n)
    return np.argsort(keys, kind="stable").astype(dt)


def multinomial(L, probs, num_samples, replacement=False):
    """torch.multinomial on the device (the argument and row checks shared with the CPU replica)."""
    num_samples = check_args(probs, num_samples, replacement)
    n_cat = probs.shape[-1]
    rows = probs.reshape(-1, n_cat)
    out_shape = probs.shape[:-1] + (num_samples,)
    if rows.shape[0] == 0:
        return L.empty(out_shape, np.int64)
    check_rows(rows, replacement, num_samples)
    if not replacement or num_samples == 1:       # torch's own algorithm on every device
        q = exponential(L, rows.shape, 1.0, probs.dtype)
        with np.errstate(all="ignore"):
            r = rows / q
        if num_samples == 1:
            return np.argmax(r, axis=-1).astype(np.int64).reshape(out_shape)
        return np.argsort(-r, axis=-1, kind="stable")[:, :num_samples].astype(np.int64).reshape(out_shape)
    acc = np.float64 if probs.dtype == _f64 else np.float32
    cum = np.cumsum(rows.astype(acc), axis=-1, dtype=acc)
    cum = cum / cum[:, -1:]
    u = _floats(L, rows.shape[0] * num_samples, _f64 if probs.dtype == _f64 else _f32).reshape(-1, num_samples)
    idx = (cum[:, None, :] < u[:, :, None].astype(acc)).sum(axis=-1)      # searchsorted, row by row
    return np.minimum(idx, n_cat - 1).astype(np.int64).reshape(out_shape)
