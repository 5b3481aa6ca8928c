"""Activation layers: thin Modules over nn.functional with PyTorch's constructor arguments,
attribute names and extra_repr text."""
import warnings

from .module import Module
from ..parameter import Parameter
from .. import init
from .. import functional as F
from ...ops.creation import empty
from ...ops import unary as _U

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish",
           "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus",
           "Softshrink", "PReLU", "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax",
           "CosineSimilarity", "PairwiseDistance"]


def _inplace_only(inplace):
    return "inplace=True" if inplace else ""


def _and_inplace(inplace):
    return ", inplace=True" if inplace else ""


class _InplaceActivation(Module):
    """An activation whose one argument is `inplace` (shown in the repr when True)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return _inplace_only(self.inplace)


class _AlphaActivation(Module):
    """ELU / CELU: `alpha` and `inplace`, applied by `_fn`."""
    _fn = None

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_and_inplace(self.inplace)}"


class _Shrink(Module):
    """Hardshrink / Softshrink: one threshold `lambd`, applied by `_fn`."""
    _fn = None

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self)._fn(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_and_inplace(self.inplace)}"


class ReLU(_InplaceActivation):
    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_and_inplace(self.inplace)}"


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_and_inplace(self.inplace)}"


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_only(self.inplace)


class Sigmoid(Module):
    def forward(self, input):
        return _U.sigmoid(input)


class Hardsigmoid(_InplaceActivation):
    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self):
        return ""


class Tanh(Module):
    def forward(self, input):
        return _U.tanh(input)


class SiLU(_InplaceActivation):
    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_InplaceActivation):
    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardswish(_InplaceActivation):
    def forward(self, input):
        return F.hardswish(input, self.inplace)

    def extra_repr(self):
        return ""


class ELU(_AlphaActivation):
    _fn = staticmethod(F.elu)


class CELU(_AlphaActivation):
    _fn = staticmethod(F.celu)


class SELU(_InplaceActivation):
    def forward(self, input):
        return F.selu(input, self.inplace)


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(_Shrink):
    _fn = staticmethod(F.hardshrink)


class LeakyReLU(Module):
    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_and_inplace(self.inplace)}"


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(_Shrink):
    _fn = staticmethod(F.softshrink)


class PReLU(Module):
    """max(0, x) + weight * min(0, x); `weight` has num_parameters entries, all `init`."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class _DimModule(Module):
    """Softmax / Softmin / LogSoftmax: one `dim` (None = PyTorch's deprecated implicit choice).

    The implicit-dim warning is attributed to the Module call machinery in module.py, as in
    PyTorch (whose call goes through one more frame, hence its _stacklevel=5 where this is 4).
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_DimModule):
    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=4)


class Softmax(_DimModule):
    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=4)


class LogSoftmax(_DimModule):
    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=4)


class Softmax2d(Module):
    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=4)


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


def __getattr__(name):
    """torch's module path of MultiheadAttention (defined in attention.py, which imports this module)."""
    if name == "MultiheadAttention":
        from .attention import MultiheadAttention
        return MultiheadAttention
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
