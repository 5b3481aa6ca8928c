"""Shared body of HalfCauchy and HalfNormal: |base(0, scale)| built as a TransformedDistribution of an
AbsTransform (torch writes the two classes out in full; the methods here are theirs, line for line)."""
import math

from . import constraints
from . import _ops as T
from .transformed_distribution import TransformedDistribution

__all__ = []


class _HalfDistribution(TransformedDistribution):
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return T.zeros_like(self.scale)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
