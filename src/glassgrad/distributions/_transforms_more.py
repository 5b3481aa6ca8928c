"""torch.distributions.transforms, continued: CorrCholeskyTransform, PositiveDefiniteTransform, CatTransform,
StackTransform."""
import math

from . import _ops as T
from . import constraints
from ._linalg import cholesky
from ._transform_base import Transform
from .utils import _sum_rightmost, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["CorrCholeskyTransform", "PositiveDefiniteTransform", "CatTransform", "StackTransform"]


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of D(D-1)/2 to Cholesky factors of D x D correlation matrices."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        x = T.tanh(x)
        eps = T.finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.clamp(min=-1 + eps, max=1 - eps), diag=-1)
        z1m_cumprod_sqrt = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + T.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * T.pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        y_cumsum = 1 - T.cumsum(y * y, dim=-1)
        y_cumsum_shifted = T.pad(y_cumsum[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(y_cumsum_shifted, diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum_tril = tril_matrix_to_vec(1 - (y * y).cumsum(dim=-1), diag=-2)
        stick_breaking_logdet = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_logdet = -2 * (x + T.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        N = shape[-1]
        D = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D * (D - 1) // 2 != N:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return T.Size(tuple(shape[:-1]) + (D, D))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D = shape[-1]
        return T.Size(tuple(shape[:-2]) + (D * (D - 1) // 2,))


class PositiveDefiniteTransform(Transform):
    """Unconstrained matrices to positive-definite ones: L L^T of the LowerCholeskyTransform."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        from .transforms import LowerCholeskyTransform
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        from .transforms import LowerCholeskyTransform
        return LowerCholeskyTransform().inv(cholesky(y))


def _check(z, dim, n, what, name="tensor", limit="length"):
    """torch's AssertionErrors for a dim out of range or a slice count that does not fit."""
    if not -z.dim() <= dim < z.dim():
        raise AssertionError(f"dim {dim} out of range for {name} with {z.dim()} dimensions")
    if z.size(dim) != n:
        raise AssertionError(f"{what}.size({dim}) = {z.size(dim)} must equal {limit} {n}")


class CatTransform(Transform):
    """Transforms applied to consecutive slices of `dim` of the given lengths."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _map(self, z, fn, what):
        _check(z, self.dim, self.length, what)
        out, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            out.append(fn(trans, z.narrow(self.dim, start, length)))
            start = start + length
        return T.cat(out, dim=self.dim)

    def _call(self, x):
        return self._map(x, lambda t, s: t(s), "x")

    def _inverse(self, y):
        return self._map(y, lambda t, s: t.inv(s), "y")

    def log_abs_det_jacobian(self, x, y):
        _check(x, self.dim, self.length, "x", "x")
        _check(y, self.dim, self.length, "y", "y")
        terms, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            ld = trans.log_abs_det_jacobian(x.narrow(self.dim, start, length), y.narrow(self.dim, start, length))
            if trans.event_dim < self.event_dim:
                ld = _sum_rightmost(ld, self.event_dim - trans.event_dim)
            terms.append(ld)
            start = start + length
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        return T.cat(terms, dim=dim) if dim < 0 else sum(terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Transforms applied to the slices of `dim`."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        _check(x, self.dim, len(self.transforms), "x", limit="len(transforms)")
        return T.stack([t(s) for s, t in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        _check(y, self.dim, len(self.transforms), "y", limit="len(transforms)")
        return T.stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        return T.stack([t.log_abs_det_jacobian(a, b)
                        for a, b, t in zip(self._slice(x), self._slice(y), self.transforms)], dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
