"""torch.distributions.LKJCholesky: the LKJ distribution over Cholesky factors of correlation matrices, sampled
by the onion method as torch does (a Beta sample, then torch.randn on the hypersphere: torch's numbers)."""
import math

from . import _ops as T
from . import constraints
from .dirichlet import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = T.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = T.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), T.Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = T.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(T.Size(tuple(batch_shape) + (self.dim,)))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=T.Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = T.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_hypersphere[..., 0, :].fill_(0.0)
        w = T.sqrt(y) * u_hypersphere
        diag_elems = T.clamp(1 - T.sum(w ** 2, dim=-1), min=T.finfo(w.dtype).tiny).sqrt()
        w += T.diag_embed(diag_elems)
        return w

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - T.arange(2, self.dim + 1, device=self.concentration.device)
        unnormalized_log_pdf = T.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize_term = 0.5 * dm1 * math.log(math.pi) + T.mvlgamma(alpha - 0.5, dm1) - T.lgamma(alpha) * dm1
        return unnormalized_log_pdf - normalize_term
