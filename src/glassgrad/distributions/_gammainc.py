"""torch.special.gammainc (the regularised lower incomplete gamma P(a, x)), which Gamma.cdf needs: the power
series below x = a + 1 and Lentz's continued fraction for Q = 1 - P above, per element in double precision.
Below a = 20 it agrees with torch to ~1e-14; above, torch switches to Temme's asymptotic expansion, which is
itself off by up to ~2e-9 (relative, checked against mpmath) where this evaluation stays within ~1e-13.  Differentiable in x only, as in torch: a gradient
for `a` raises torch's NotImplementedError."""
import math

import numpy as np

from . import _ops as T
from ..autograd.function import Function, once_differentiable

_EPS = 2.0 ** -53


def _series(a, x):
    term = total = 1.0 / a
    ap = a
    for _ in range(100000):
        ap += 1.0
        term *= x / ap
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _cont_frac_q(a, x):
    tiny = 1e-300
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def _igamma_one(a, x):
    if math.isnan(a) or math.isnan(x) or a < 0 or x < 0:
        return math.nan
    if a == 0:
        return 1.0 if x > 0 else math.nan
    if x == 0:
        return 0.0
    if math.isinf(x):
        return 1.0
    if x < a + 1.0:
        return _series(a, x)
    return 1.0 - _cont_frac_q(a, x)


class _Gammainc(Function):
    @staticmethod
    def forward(ctx, a, x):
        an, xn = np.broadcast_arrays(a.detach().numpy(), x.detach().numpy())
        out = [_igamma_one(p, q) for p, q in zip(an.ravel().tolist(), xn.ravel().tolist())]
        ctx.save_for_backward(a, x)
        return T.from_numpy(np.array(out, dtype=x.dtype.np).reshape(an.shape))

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        gx = g * T.exp((a - 1) * T.log(x) - x - T.lgamma(a))
        while gx.dim() > x.dim():
            gx = gx.sum(0)
        for i, (m, n) in enumerate(zip(gx.shape, x.shape)):
            if m != n:
                gx = gx.sum(i, keepdim=True)
        return None, gx


def gammainc(a, x):
    """torch.special.gammainc(a, x)."""
    a, x = T.broadcast_tensors(a, x)
    return _Gammainc.apply(a, x)
