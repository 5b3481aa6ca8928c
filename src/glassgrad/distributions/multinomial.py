"""torch.distributions.Multinomial.  sample: total_count Categorical draws (torch.multinomial) counted with
scatter_add_ -- torch's numbers."""
from . import _ops as T
from . import constraints
from .binomial import Binomial
from .categorical import Categorical, _WrapsCategorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(_WrapsCategorical, Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_categorical(Multinomial, batch_shape, _instance, "total_count")

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    def sample(self, sample_shape=T.Size()):
        sample_shape = T.Size(sample_shape)
        samples = self._categorical.sample(T.Size((self.total_count,) + tuple(sample_shape)))
        idx = list(range(samples.dim()))
        idx.append(idx.pop(0))
        samples = samples.permute(*idx)
        counts = samples.new_zeros(self._extended_shape(sample_shape))
        counts.scatter_add_(-1, samples, T.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        n = T.tensor(self.total_count, device=self.probs.device)
        term1 = n * self._categorical.entropy() - T.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = T.exp(self._binomial.log_prob(support))
        weights = T.lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum([0, -1])

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = T.lgamma(value.sum(-1) + 1)
        log_factorial_xs = T.lgamma(value + 1).sum(-1)
        logits[(value == 0) & (logits == float("-inf"))] = 0
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
