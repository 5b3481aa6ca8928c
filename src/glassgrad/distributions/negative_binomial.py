"""torch.distributions.NegativeBinomial.  sample: torch.poisson(Gamma(total_count, exp(-logits)).sample())
(both samplers replayed: torch's numbers)."""
from . import _ops as T
from . import constraints
from ._samplers import poisson
from .binomial import _count_and_param
from .distribution import Distribution
from .gamma import Gamma
from .utils import _BinaryProbsLogits, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_BinaryProbsLogits, Distribution):
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _count_and_param(self, total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(NegativeBinomial, batch_shape, _instance, ("total_count", "probs", "logits"))
        new._param = new.__dict__["logits" if "logits" in self.__dict__ else "probs"]
        return new

    @property
    def mean(self):
        return self.total_count * T.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / T.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=T.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=T.Size()):
        with T.no_grad():
            return poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized_prob = n * T.log_sigmoid(-self.logits) + value * T.log_sigmoid(self.logits)
        log_normalization = -T.lgamma(n + value) + T.lgamma(1.0 + value) + T.lgamma(n)
        log_normalization = log_normalization.masked_fill(n + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
