"""torch.distributions.HalfNormal: |Normal(0, scale)| (samples are torch's)."""
import math

from . import _ops as T
from .normal import Normal
from ._half import _HalfDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class HalfNormal(_HalfDistribution):
    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(HalfNormal, _instance))

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return T.where(value >= 0, log_prob, float("-inf"))
