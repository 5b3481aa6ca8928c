"""torch.distributions.Gamma and Chi2.  rsample: torch._standard_gamma(concentration) / rate, with ATen's
sampler replayed on the replica generator (distributions/_samplers.py): the same seed gives torch's samples,
and the gradient is torch's implicit reparameterisation (_standard_gamma_grad).  cdf is torch.special.gammainc
(ops.special_binary.igamma)."""
import numbers

from . import _ops as T
from . import constraints
from ._samplers import standard_gamma
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma", "Chi2"]


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(T.Size() if scalar else self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    def rsample(self, sample_shape=T.Size()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=T.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        value = T.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (T.xlogy(self.concentration, self.rate) + T.xlogy(self.concentration - 1, value)
                - self.rate * value - T.lgamma(self.concentration))

    def entropy(self):
        c = self.concentration
        return c - T.log(self.rate) + T.lgamma(c) + (1.0 - c) * T.digamma(c)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return T.gammainc(self.concentration, self.rate * value)

    def _log_normalizer(self, x, y):
        return T.lgamma(x + 1) + (x + 1) * T.log(-y.reciprocal())


class Chi2(Gamma):
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))

    @property
    def df(self):
        return self.concentration * 2
