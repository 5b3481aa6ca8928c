"""nn.functional: activation functions, softmax family, normalize and the distance functions.

Ops with a backward node of their own in PyTorch live in ops/activation.py; the composites
PyTorch writes in Python (softsign, tanhshrink, softmin, normalize, cosine_similarity,
pairwise_distance) are composed here from differentiable glassgrad ops, so their grad_fn names
and second derivatives come out as PyTorch's.
"""
import warnings

import numpy as np

from ... import _dtype
from ...ops import activation as A, gelu as _gelu_op
from ...ops._core import make, broadcast_error
from ...ops._core import _inplace
from ...ops import unary as _U, softmax as _sm, tensor_misc as _tensor_misc
from ...ops.statistics import LinalgVectorNormBackward0, NormBackward1, norm as _norm

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "elu", "elu_", "selu", "selu_",
           "celu", "celu_", "gelu", "silu", "mish", "sigmoid", "tanh", "hardtanh", "hardtanh_", "hardsigmoid",
           "hardswish", "softplus", "softsign", "softmax", "log_softmax", "softmin", "glu", "logsigmoid",
           "tanhshrink", "softshrink", "hardshrink", "threshold", "threshold_", "rrelu", "rrelu_", "normalize",
           "cosine_similarity", "pairwise_distance", "gumbel_softmax"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# -- rectifiers -------------------------------------------------------------------------------------
def relu(input, inplace=False):
    return _U.relu_(input) if inplace else _U.relu(input)


def relu_(input):
    return _U.relu_(input)


def relu6(input, inplace=False):
    return A.hardtanh_(input, 0.0, 6.0) if inplace else A.hardtanh(input, 0.0, 6.0)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return A.leaky_relu_(input, negative_slope) if inplace else A.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return A.leaky_relu_(input, negative_slope)


def prelu(input, weight):
    return _tensor_misc.prelu(input, weight)      # (the checks and dim-1 broadcast of Tensor.prelu)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if inplace:
        return rrelu_(input, lower, upper, training)
    return A.rrelu_with_noise(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return _inplace(A.rrelu_with_noise, input, lower, upper, training, _node=A.RreluWithNoiseBackward1)


def threshold(input, threshold, value, inplace=False):
    if inplace:
        return A.threshold_(input, threshold, value)
    return A.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return A.threshold_(input, threshold, value)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return A.hardtanh_(input, min_val, max_val) if inplace else A.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return A.hardtanh_(input, min_val, max_val)


# -- exponential units ------------------------------------------------------------------------------
def elu(input, alpha=1.0, inplace=False):
    return A.elu_(input, alpha) if inplace else A.elu(input, alpha)


def elu_(input, alpha=1.0):
    return A.elu_(input, alpha)


def selu(input, inplace=False):
    if inplace:
        return A.elu_(input, _SELU_ALPHA, _SELU_SCALE)
    return A.elu(input, _SELU_ALPHA, _SELU_SCALE)


def selu_(input):
    return A.elu_(input, _SELU_ALPHA, _SELU_SCALE)


def celu(input, alpha=1.0, inplace=False):
    return A.celu_(input, alpha) if inplace else A.celu(input, alpha)


def celu_(input, alpha=1.0):
    return A.celu_(input, alpha)


# -- smooth gates -----------------------------------------------------------------------------------
def gelu(input, *, approximate="none"):
    return _gelu_op.gelu(input, approximate)


def silu(input, inplace=False):
    return A.silu_(input) if inplace else A.silu(input)


def mish(input, inplace=False):
    return A.mish_(input) if inplace else A.mish(input)


def hardsigmoid(input, inplace=False):
    return A.hardsigmoid_(input) if inplace else A.hardsigmoid(input)


def hardswish(input, inplace=False):
    return A.hardswish_(input) if inplace else A.hardswish(input)


def sigmoid(input):
    return _U.sigmoid(input)


def tanh(input):
    return _U.tanh(input)


def softplus(input, beta=1.0, threshold=20.0):
    return A.softplus(input, beta, threshold)


def softsign(input):
    return input / (input.abs() + 1)


def logsigmoid(input):
    return A.log_sigmoid(input)


def tanhshrink(input):
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    return A.softshrink(input, lambd)


def hardshrink(input, lambd=0.5):
    return A.hardshrink(input, lambd)


def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return A.glu(input, dim)


# -- softmax family -----------------------------------------------------------------------------------
def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _sm.softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return _sm.softmax(-input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _sm.log_softmax(input, dim, dtype)


# -- normalize and distances -----------------------------------------------------------------------------
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    res = input / denom
    if out is not None:
        out.copy_(res)
        return out
    return res


def _clamped_norm(x, dim, eps):
    """||x|| over dim (keepdim) whose value is clamped to eps while its gradient stays the norm's:
    PyTorch clamps the norm in place under no_grad, so the result keeps the norm's grad_fn."""
    n = _norm(x, 2, dim, True)
    c = np.maximum(n._data, n._data.dtype.type(eps))       # (a NumPy scalar: any device, the same cast)
    if n._grad_fn is None:
        return make(c)
    return make(c, True, n._grad_fn, n._out_nr)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    dt = _dtype.result_type(x1, x2)
    if not dt.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {dt.name_c}")
    if x1.dtype != dt:
        x1 = x1.to(dt)
    if x2.dtype != dt:
        x2 = x2.to(dt)
    s1, s2 = tuple(x1.shape), tuple(x2.shape)
    if s1 != s2:
        try:
            shape = np.broadcast_shapes(s1, s2)
        except ValueError:
            raise broadcast_error(s1, s2) from None
        if s1 != shape:
            x1 = x1.expand(shape)
        if s2 != shape:
            x2 = x2.expand(shape)
    return ((x1 / _clamped_norm(x1, dim, eps)) * (x2 / _clamped_norm(x2, dim, eps))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    inner = max(x1.dim(), x2.dim()) - 1
    out = _norm(x1 - x2 + eps, p, inner, keepdim)
    fn = out._grad_fn
    if fn is not None and type(fn) is LinalgVectorNormBackward0:
        fn.__class__ = NormBackward1
    return out


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """torch's draws: -log(Exp(1)) noise from empty_like(logits).exponential_(), then softmax; hard: straight
    through a one-hot of the argmax."""
    from ...ops.creation import empty_like, zeros_like
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if hard:
        index = y_soft.max(dim, keepdim=True)[1]
        y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
        return y_hard - y_soft.detach() + y_soft
    return y_soft
