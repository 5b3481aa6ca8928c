"""torch's C++ samplers that torch.distributions calls -- _standard_gamma, _sample_dirichlet, poisson,
binomial -- and the reparameterised gradients of the first two (_standard_gamma_grad, _dirichlet_grad).

The samplers follow ATen's CPU kernels (aten/src/ATen/native/Distributions.{h,cpp}): each element, in the
output's memory order, runs Marsaglia-Tsang (gamma), Hoermann's transformed rejection or inversion (Poisson),
BTRS or inversion (binomial) on the generator's ``uniform_real_distribution<double>`` and
``normal_distribution<double>`` draws (the cached Box-Muller second sample included), so the same seed gives
torch's samples.  Loops are per element in Python: fine for the sizes distributions sample, not fast.

A CUDA tensor draws from its CUDA generator, on its device (_device_samplers.py: the same algorithms as array
code); under ops.random's private host-stream switch it draws from the CPU generator here, on the host, as
every CUDA random op then does.
"""
import math

import numpy as np

from .._rng.common import _u53
from . import _ops as T
from . import _device_samplers as _dev
from .. import backend
from ..backend import host_apply
from ._dirichlet_grad import dirichlet_grad
from ._sampler_grads import standard_gamma_grad
from ..autograd.function import Function, once_differentiable

_F = np.float32


def _gen():
    from ..ops.random import default_generator
    return default_generator


def _launcher(x, generator, fn):
    """The CUDA generator's launcher for a device array `x` (None for a host array, or when the host-stream
    switch sends CUDA draws to the CPU generator); `generator` checked against the device as torch does."""
    from .._rng import cuda as _rng_cuda
    from ..ops.random import _source
    m, g = _source(generator, backend.device_of(x), fn)
    return g if m is _rng_cuda else None


def _gamma_one(alpha, uniform, normal, f32):
    """One Marsaglia-Tsang draw; `alpha` a Python float (float32 arithmetic where ATen's is)."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        inv = float(_F(1.0) / _F(alpha)) if f32 else 1.0 / alpha
        scale *= math.pow(1.0 - uniform(), inv)
        alpha = float(_F(alpha) + _F(1.0)) if f32 else alpha + 1.0
    third = float(_F(1.0) / _F(3.0))
    d = float(_F(alpha) - _F(third)) if f32 else alpha - third
    c = 1.0 / math.sqrt(9.0 * d)
    c331 = float(_F(0.0331))
    while True:
        while True:
            x = normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - uniform()
        xx = x * x
        if u < 1.0 - c331 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


class _Draws:
    """``uniform_real_distribution<double>`` and ``normal_distribution<double>`` draws (Box-Muller with the
    generator's cached second sample), read ahead in blocks; finish() leaves the generator exactly where the
    draws actually consumed would have."""

    def __init__(self, gen, block):
        self.gen, self.block = gen, max(int(block), 16)
        self.start = gen.get_state()
        self.cache = gen._next_double_normal
        self.buf, self.i, self.used = _u53(gen, self.block).tolist(), 0, 0

    def uniform(self):
        if self.i == len(self.buf):
            self.buf, self.i = _u53(self.gen, self.block).tolist(), 0
        self.i += 1
        self.used += 1
        return self.buf[self.i - 1]

    def normal(self):
        if self.cache is not None:
            z, self.cache = self.cache, None
            return z
        u1 = self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-self.uniform()))
        theta = (2.0 * math.pi) * u1
        self.cache = r * math.sin(theta)
        return r * math.cos(theta)

    def finish(self):
        self.gen.set_state(self.start)
        _u53(self.gen, self.used)
        self.gen._next_double_normal = self.cache


def _gamma_array(alpha, as_double=False):
    """Gamma(alpha, 1) samples of a NumPy array, element by element in C order."""
    f32 = alpha.dtype == np.float32 and not as_double
    flat = np.ascontiguousarray(alpha).ravel().tolist()
    d = _Draws(_gen(), 3 * len(flat))
    out = np.array([_gamma_one(a, d.uniform, d.normal, f32) for a in flat], dtype=np.float64)
    d.finish()
    tiny = np.finfo(np.float64 if as_double else alpha.dtype).tiny
    if as_double:
        return np.maximum(out, tiny).reshape(alpha.shape)
    return np.maximum(out.astype(alpha.dtype), tiny).reshape(alpha.shape)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, alpha):
        a = alpha.detach()._data
        L = _launcher(a, None, "_standard_gamma")
        x = T.from_array(_dev.standard_gamma(L, a) if L is not None else host_apply(_gamma_array, a))
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        alpha, x = ctx.saved_tensors
        return g * standard_gamma_grad(alpha, x)


def standard_gamma(alpha):
    """torch._standard_gamma, differentiable in alpha (implicit reparameterisation)."""
    return _StandardGamma.apply(alpha)


def sample_dirichlet_array(alpha):
    """torch._sample_dirichlet: double-precision gammas normalised over the last dim, clipped into
    [tiny, nextafter(1, 0)] of the dtype."""
    gam = _gamma_array(alpha, as_double=True)
    r = (gam / gam.sum(-1, keepdims=True)).astype(alpha.dtype)
    return np.clip(r, np.finfo(alpha.dtype).tiny, np.nextafter(alpha.dtype.type(1), alpha.dtype.type(0)))


class DirichletSample(Function):
    @staticmethod
    def forward(ctx, concentration):
        a = concentration.detach()._data
        L = _launcher(a, None, "_sample_dirichlet")
        x = T.from_array(_dev.sample_dirichlet(L, a) if L is not None else host_apply(sample_dirichlet_array, a))
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        total = concentration.sum(-1, True).expand_as(concentration)
        grad = dirichlet_grad(x, concentration, total)
        return grad * (grad_output - (x * grad_output).sum(-1, True))


# -- Poisson and binomial ------------------------------------------------------------------------------
def _poisson_one(lam, uniform):
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            U = uniform() - 0.5
            V = uniform()
            us = 0.5 - abs(U)
            k = math.floor((2 * a / us + b) * U + lam + 0.43)
            if us >= 0.07 and V <= vr:
                return k
            if k < 0 or (us < 0.013 and V > us):
                continue
            if math.log(V) + math.log(invalpha) - math.log(a / (us * us) + b) <= -lam + k * loglam - math.lgamma(k + 1):
                return k
    if lam == 0:
        return 0
    enlam, x, prod = math.exp(-lam), 0, 1.0
    while True:
        prod *= uniform()
        if prod > enlam:
            x += 1
        else:
            return x


def poisson(rate, generator=None):
    """torch.poisson."""
    a = rate.detach()._data
    if (~(a >= 0)).any():                             # negative or NaN, as torch's check
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    L = _launcher(a, generator, "poisson")
    if L is not None:
        return T.from_array(_dev.poisson(L, a))
    return T.from_array(host_apply(lambda h: _poisson_array(h, generator), a))   # a Python loop: host only


def _poisson_array(a, generator):
    flat = np.ascontiguousarray(a).ravel().tolist()
    d = _Draws(generator or _gen(), 2 * len(flat) + sum(min(v, 10.0) for v in flat))
    out = [_poisson_one(v, d.uniform) for v in flat]
    d.finish()
    return np.array(out, dtype=a.dtype).reshape(a.shape)


_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
         0.0138761288230707, 0.0118967099458917, 0.0104112652619720, 0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    if k <= 9:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _btrs(n, p, uniform):
    stddev = math.sqrt(n * p * (1 - p))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    r = p / (1 - p)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((n + 1) * p)
    while True:
        U = uniform() - 0.5
        V = uniform()
        us = 0.5 - abs(U)
        k = math.floor((2 * a / us + b) * U + c)
        if k < 0 or k > n:
            continue
        if us >= 0.07 and V <= v_r:
            return k
        V = math.log(V * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1))) + (n + 1) * math.log((n - m + 1) / (n - k + 1))
                 + (k + 0.5) * math.log(r * (n - k + 1) / (k + 1)) + _stirling_tail(m) + _stirling_tail(n - m)
                 - _stirling_tail(k) - _stirling_tail(n - k))
        if V <= bound:
            return k


def _binomial_inversion(n, p, uniform):
    geom_sum, num = 0.0, 0
    logprob = math.log1p(-p)
    while True:
        geom_sum += math.ceil(math.log(uniform()) / logprob)
        if geom_sum > n:
            return num
        num += 1


def _binomial_one(n, p, uniform):
    if n <= 0.0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if p <= 0.5:
        return _btrs(n, p, uniform) if n * p >= 10.0 else _binomial_inversion(n, p, uniform)
    if p > 0.5:
        q = 1.0 - p
        return n - (_btrs(n, q, uniform) if n * q >= 10.0 else _binomial_inversion(n, q, uniform))
    return float("nan")


def binomial(count, prob, generator=None):
    """torch.binomial."""
    c, p = count.detach()._data, prob.detach()._data
    L = _launcher(c, generator, "binomial")
    if L is not None:
        return T.from_array(_dev.binomial(L, c, p))
    # a Python loop per element (ATen's kernel on the generator's stream): host only, an explicit round trip
    return T.from_array(host_apply(lambda c, p: _binomial_array(c, p, generator), c, p))


def _binomial_array(c, p, generator):
    dt = p.dtype
    c, p = np.broadcast_arrays(c, p)
    d = _Draws(generator or _gen(), 3 * c.size + 16)
    out = [_binomial_one(a, b, d.uniform) for a, b in zip(c.ravel().tolist(), p.ravel().tolist())]
    d.finish()
    return np.array(out, dtype=dt).reshape(c.shape)


