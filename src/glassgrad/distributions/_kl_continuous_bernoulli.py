"""kl_divergence pairs with ContinuousBernoulli (torch's registered closed forms): with itself, from it to
Exponential / Normal / Uniform (and Pareto: infinite), and from Beta / Uniform to it.  The infinite pairs from
Exponential, Gamma, Gumbel, Laplace, Normal and Pareto (supports not inside [0, 1]) are registered with those
families' other infinite pairs in _kl_cross.py."""
import math

from . import _ops as T
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Beta
from .exponential import Exponential
from .kl import _infinite_like, _inf, register_kl
from .normal import Normal
from .pareto import Pareto
from .uniform import Uniform


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + T.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - T.log1p(-q.probs)
    return t1 + t2 + t3


def _cross_entropy_to_cb(p, q):
    """-E_p[log q] - H(p) for p supported inside [0, 1] and q a ContinuousBernoulli."""
    return -p.entropy() - p.mean * q.logits - T.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return _cross_entropy_to_cb(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = _cross_entropy_to_cb(p, q)
    outside = T.max(T.ge(p.high, q.support.upper_bound), T.le(p.low, q.support.lower_bound))
    return T.where(outside, T.ones_like(result) * _inf, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - T.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + T.square(q.loc / q.scale)) + T.log(q.scale)
    t3 = (p.variance + T.square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * T.square(q.scale))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = T.max(T.ge(q.low, p.support.lower_bound), T.le(q.high, p.support.upper_bound))
    return T.where(outside, T.ones_like(result) * _inf, result)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p, q):
    return _infinite_like(p.probs)
