"""torch.distributions.Bernoulli.  sample: torch.bernoulli(probs expanded) (torch's numbers)."""
import numbers

from . import _ops as T
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _BinaryProbsLogits, broadcast_all

__all__ = ["Bernoulli"]


def _probs_or_logits(self, probs, logits):
    """Store the one parameter given (broadcast to a tensor); return whether it was a Python number."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        (self.probs,) = broadcast_all(probs)
        self._param = self.probs
        return isinstance(probs, numbers.Number)
    (self.logits,) = broadcast_all(logits)
    self._param = self.logits
    return isinstance(logits, numbers.Number)


class Bernoulli(_BinaryProbsLogits, ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        scalar = _probs_or_logits(self, probs, logits)
        super().__init__(T.Size() if scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(Bernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.__dict__["logits" if "logits" in self.__dict__ else "probs"]
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = float("nan")
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=T.Size()):
        shape = self._extended_shape(sample_shape)
        with T.no_grad():
            return T.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -T.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return T.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = T.arange(2, dtype=self._param.dtype, device=self._param.device).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    @property
    def _natural_params(self):
        return (T.logit(self.probs),)

    def _log_normalizer(self, x):
        return T.log1p(T.exp(x))
