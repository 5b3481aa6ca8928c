"""torch.distributions.ContinuousBernoulli.  sample / rsample: icdf(torch.rand(shape)) (torch's numbers); near
probs = 1/2 the moments and normaliser switch to torch's Taylor expansions."""
import math
import numbers

from . import _ops as T
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not self.arg_constraints["probs"].check(self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        else:
            scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        self._lims = lims
        super().__init__(T.Size() if scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"))
        new._lims = self._lims
        new._param = new.__dict__["logits" if "logits" in self.__dict__ else "probs"]
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self):
        return T.le(self.probs, self._lims[0]) | T.gt(self.probs, self._lims[1])

    def _cut_probs(self):
        return T.where(self._outside_unstable_region(), self.probs, self._lims[0] * T.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        cut = self._cut_probs()
        below = T.where(T.le(cut, 0.5), cut, T.zeros_like(cut))
        above = T.where(T.ge(cut, 0.5), cut, T.ones_like(cut))
        log_norm = T.log(T.abs(T.log1p(-cut) - T.log(cut))) - T.where(T.le(cut, 0.5), T.log1p(-2.0 * below),
                                                                      T.log(2.0 * above - 1.0))
        x = T.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return T.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (T.log1p(-cut) - T.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * T.pow(x, 2)) * x
        return T.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return T.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        vs = cut * (cut - 1.0) / T.pow(1.0 - 2.0 * cut, 2) + 1.0 / T.pow(T.log1p(-cut) - T.log(cut), 2)
        x = T.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return T.where(self._outside_unstable_region(), vs, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=T.Size()):
        u = T.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        with T.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=T.Size()):
        return self.icdf(T.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -T.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (T.pow(cut, value) * T.pow(1.0 - cut, 1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = T.where(self._outside_unstable_region(), cdfs, value)
        return T.where(T.le(value, 0.0), T.zeros_like(value), T.where(T.ge(value, 1.0), T.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        inv = (T.log1p(-cut + value * (2.0 * cut - 1.0)) - T.log1p(-cut)) / (T.log(cut) - T.log1p(-cut))
        return T.where(self._outside_unstable_region(), inv, value)

    def entropy(self):
        log_probs0, log_probs1 = T.log1p(-self.probs), T.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        out = T.le(x, self._lims[0] - 0.5) | T.gt(x, self._lims[1] - 0.5)
        cut = T.where(out, x, (self._lims[0] - 0.5) * T.ones_like(x))
        log_norm = T.log(T.abs(T.expm1(cut))) - T.log(T.abs(cut))
        taylor = 0.5 * x + T.pow(x, 2) / 24.0 - T.pow(x, 4) / 2880.0
        return T.where(out, log_norm, taylor)
