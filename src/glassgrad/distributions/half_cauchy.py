"""torch.distributions.HalfCauchy: |Cauchy(0, scale)| (torch's numbers)."""
import math

from . import _ops as T
from .cauchy import Cauchy
from ._half import _HalfDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(_HalfDistribution):
    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(HalfCauchy, _instance))

    @property
    def mean(self):
        return T.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = T.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return T.where(value >= 0, log_prob, -math.inf)
