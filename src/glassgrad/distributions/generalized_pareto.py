"""torch.distributions.GeneralizedPareto.  rsample: icdf(torch.rand(shape)) (torch's numbers)."""
import math
import numbers

from . import _ops as T
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(T.Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration"))

    def rsample(self, sample_shape=T.Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(T.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _safe_conc(self):
        eq_zero = T.isclose(self.concentration, T.tensor(0.0, device=self.concentration.device))
        return eq_zero, T.where(eq_zero, T.ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_conc()
        y = 1 / safe_conc + T.ones_like(z)
        where_nonzero = T.where(y == 0, y, y * T.log1p(safe_conc * z))
        return -self.scale.log() - T.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_conc()
        return T.where(eq_zero, -z, -T.log1p(safe_conc * z) / safe_conc)

    def log_cdf(self, value):
        return T.log1p(-T.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return T.exp(self.log_cdf(value))

    def icdf(self, value):
        conc = self.concentration
        eq_zero = T.isclose(conc, T.zeros_like(conc))
        safe_conc = T.where(eq_zero, T.ones_like(conc), conc)
        logu = T.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * T.expm1(-safe_conc * logu)
        return T.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = T.where(valid, self.concentration, 0.5)
        return T.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = T.where(valid, self.concentration, 0.25)
        return T.where(valid, self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc)), math.nan)

    def entropy(self):
        return T.broadcast_to(T.log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = T.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
