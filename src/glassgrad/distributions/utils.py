"""torch.distributions.utils: broadcasting of parameters, logits <-> probs, lazy properties."""
import numbers
from functools import update_wrapper

from . import _ops as T

euler_constant = 0.57721566490153286060

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]


def params_batch_shape(broadcast, *raw):
    """A distribution's batch shape from its parameters as given (`raw`): Size() when all are Python numbers,
    else the shape of `broadcast`, one of them after broadcast_all (torch's Normal / Laplace / Cauchy rule)."""
    return T.Size() if all(isinstance(v, numbers.Number) for v in raw) else broadcast.size()


def broadcast_all(*values):
    """Broadcast tensors and numbers together; numbers take the first tensor's dtype (else the default)."""
    if not all(isinstance(v, (T.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, T.Tensor) for v in values):
        first = next((v for v in values if isinstance(v, T.Tensor)), None)
        dtype = T.get_default_dtype() if first is None else first.dtype
        device = None if first is None else first.device
        values = [v if isinstance(v, T.Tensor) else T.tensor(v, dtype=dtype, device=device) for v in values]
    return T.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return T.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return T.sigmoid(logits)
    return T.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamp to [eps, 1 - eps] of the dtype."""
    eps = T.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return T.log(ps_clamped) - T.log1p(-ps_clamped)
    return T.log(ps_clamped)


class lazy_property:
    """A property computed on first access (with grad enabled) and then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with T.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n, diag, device=None):
    arange = T.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries of (a batch of) D x D matrices, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_mask(n, diag, mat.device).nonzero(as_tuple=True)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    """(A batch of) D x D lower-triangular matrices filled in row order from vectors."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = T.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    rows, cols = _tril_mask(n, diag, vec.device).nonzero(as_tuple=True)
    mat[..., rows, cols] = vec
    return mat


class _BinaryProbsLogits:
    """The members Bernoulli, Binomial, NegativeBinomial and LogitRelaxedBernoulli write out alike in torch:
    lazily derived logits/probs (the one not given is computed from ``self._param``'s twin on first use),
    param_shape and _new.  A mixin listed before the Distribution base, so the MRO finds these first as it
    found the class's own definitions."""

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()


class _RelaxedFromBase:
    """temperature, logits and probs read through ``self.base_dist``: written out alike in torch's
    RelaxedBernoulli and RelaxedOneHotCategorical.  A mixin listed before TransformedDistribution."""

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
