"""torch.distributions.MultivariateNormal, parameterised by covariance, precision or scale_tril.
rsample: loc + scale_tril @ eps with eps from ``empty(shape).normal_()`` -- torch's numbers.  The Cholesky
factor and triangular solves are NumPy's (distributions/_linalg.py), so values agree with torch's LAPACK to
rounding, not bit for bit."""
import math

from . import _ops as T
from . import constraints
from ._linalg import cholesky, cholesky_inverse, solve_triangular
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    return T.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x for a batch of lower factors bL whose batch shape broadcasts into bx's."""
    n = bx.size(-1)
    bx_batch_shape = tuple(bx.shape[:-1])
    bL_batch_dims = bL.dim() - 2
    outer = len(bx_batch_shape) - bL_batch_dims
    old_batch_dims = outer + bL_batch_dims
    new_batch_dims = outer + 2 * bL_batch_dims
    new_shape = tuple(bx.shape[:outer])
    for sL, sx in zip(bL.shape[:-2], bx.shape[outer:-1]):
        new_shape += (sx // sL, sL)
    bx = bx.reshape(new_shape + (n,))
    perm = (list(range(outer)) + list(range(outer, new_batch_dims, 2)) + list(range(outer + 1, new_batch_dims, 2))
            + [new_batch_dims])
    bx = bx.permute(perm)
    flat_L = bL.reshape(-1, n, n)
    flat_x = bx.reshape(-1, flat_L.size(0), n)
    M = solve_triangular(flat_L, flat_x.permute(1, 2, 0), upper=False).pow(2).sum(-2).t()
    permuted_M = M.reshape(bx.shape[:-1])
    inv = list(range(outer))
    for i in range(bL_batch_dims):
        inv += [outer + i, old_batch_dims + i]
    return permuted_M.permute(inv).reshape(bx_batch_shape)


def _precision_to_scale_tril(P):
    Lf = cholesky(T.flip(P, (-2, -1)))
    L_inv = T.transpose(T.flip(Lf, (-2, -1)), -2, -1)
    Id = T.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return solve_triangular(L_inv, Id.expand(L_inv.shape), upper=False)


_ONE_OF = "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(n, m) for n, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix)) if m is not None]
        if len(given) != 1:
            raise ValueError(_ONE_OF)
        name, mat = given[0]
        if mat.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = T.broadcast_shapes(tuple(mat.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, mat.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(T.Size(batch_shape), self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = mat
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = cholesky(mat)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(mat)

    def expand(self, batch_shape, _instance=None):
        batch_shape = T.Size(batch_shape)
        ev = tuple(self.event_shape)
        new = self._expand_params(MultivariateNormal, batch_shape, _instance,
                                  ("covariance_matrix", "scale_tril", "precision_matrix"),
                                  T.Size(tuple(batch_shape) + ev + ev))
        new.loc = self.loc.expand(tuple(batch_shape) + ev)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    def _full(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._full())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return T.matmul(L, L.mT).expand(self._full())

    @lazy_property
    def precision_matrix(self):
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._full())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape)
                                                                    + tuple(self._event_shape))

    def rsample(self, sample_shape=T.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
