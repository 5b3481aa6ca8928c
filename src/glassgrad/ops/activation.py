"""Activation functions that have their own backward node in PyTorch.

ops: leaky_relu hardtanh elu (selu, celu) silu mish hardsigmoid hardswish softplus glu
     log_sigmoid softshrink hardshrink threshold prelu rrelu_with_noise, plus the in-place forms
     that PyTorch records with a different node (LeakyReluBackward1, EluBackward1, ...).
     gelu and its float32 kernels live in ops/gelu.py (it uses the helpers below).

Every forward runs on arrays; every backward is written once with ns (arrays or Tensors), so
second derivatives compose.  Piecewise-linear ops (leaky_relu, hardtanh, threshold, shrink)
have a gradient whose derivative is zero, yet PyTorch's gradient still depends on the input:
`_tie` keeps that dependence in tensor mode so double backward sees the same graph shape.
"""
import numpy as np

from .. import _args, _dtype, backend
from .._rng.common import _u53
from ._core import as_array, make, edge, save_in, save_out, grad, _inplace
from ..autograd.graph import Node
from . import random as _rnd
from .random import default_generator
from .reduction import _wrap_dim
from .shape import cat
from .slicing import narrow

__all__ = ["leaky_relu", "leaky_relu_", "hardtanh", "hardtanh_", "elu", "elu_", "celu", "celu_", "silu",
           "silu_", "mish", "mish_", "hardsigmoid", "hardsigmoid_", "hardswish", "hardswish_",
           "softplus", "glu", "log_sigmoid", "softshrink", "hardshrink", "threshold", "threshold_", "prelu",
           "rrelu_with_noise"]


# -- helpers -----------------------------------------------------------------------------------
def _name_c(a):
    return _dtype.from_numpy_dtype(a.dtype).name_c


def _scalars(fn, **params):
    """torch's TypeError for a Scalar parameter (slope, alpha, beta, threshold...) that is not a number."""
    for name, v in params.items():
        _args.number_arg(v, fn, name)


def _float_only(x, kernel):
    a = x._data
    if a.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_name_c(a)}'")
    return a


def _hi(a):
    """The array in float64 (transcendental forwards are computed there, then rounded once)."""
    return a.astype(np.float64) if a.dtype != np.float64 else a


def _f32(a):
    """bfloat16 in float32 (torch computes the piecewise activations there and rounds once), else `a`."""
    return a.astype(np.float32) if a.dtype.kind == "V" else a


def _out(y, a):
    return as_array(y, a.dtype)


def _record(x, y, cls, save="self", **attrs):
    """Wrap forward result array `y` of unary op on `x`; the node saves x or the result."""
    if x._rg and grad.enabled:
        n = cls((edge(x),))
        for k, v in attrs.items():
            setattr(n, k, v)
        out = make(y, True, n)
        n._saved = (save_in(x),) if save == "self" else (save_out(out),)
        return out
    return make(y)


def _tie(ns, r, x):
    """r, made to depend (with zero derivative) on x in tensor mode when it does not already."""
    if ns.is_tensor_mode and not r.requires_grad and x.requires_grad:
        return ns.where(ns.const(np.zeros((), np.bool_), r), x, r)
    return r


def _sel(ns, cond, a, b):
    """where(cond, a, b) for a boolean array cond (never differentiated)."""
    return ns.where(ns.const(cond, a), a, b)


def _cat(ns, parts, dim):
    if ns.is_tensor_mode:
        return cat(parts, dim)
    return np.concatenate(parts, axis=dim)


def _halves(ns, x, dim):
    h = x.shape[dim] // 2
    if ns.is_tensor_mode:
        return narrow(x, dim, 0, h), narrow(x, dim, h, h)
    return np.split(x, 2, axis=dim)


class _NoDerivative(Node):
    __slots__ = ("what",)

    def backward(self, ns, g):
        raise RuntimeError(f"derivative for aten::{self.what} is not implemented")


def _not_differentiable(r, inputs, what):
    """r (a Tensor) as the output of a node whose backward raises PyTorch's 'not implemented' error."""
    ins = [t for t in inputs if t.requires_grad]
    if not ins or not grad.enabled:
        return r
    n = _NoDerivative(tuple(edge(t) for t in ins))
    n.what = what
    return make(r._data, True, n)


# -- leaky_relu ----------------------------------------------------------------------------------
_LEAKY_INPLACE_MSG = ("In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                      "supported. This is caused by calling in-place forward function with a negative slope, please "
                      "call out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you "
                      "do require supporting in-place leakRelu backward calculation with negative slope")


class LeakyReluBackward0(Node):     # dx = gy where x > 0 else gy * slope
    __slots__ = ("negative_slope",)
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        return (_tie(ns, _sel(ns, ns.data(x) > 0, g, g * self.negative_slope), x),)


class LeakyReluBackward1(LeakyReluBackward0):   # in place: the same from the result
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, ns, g):
        if self.negative_slope < 0:
            raise RuntimeError(_LEAKY_INPLACE_MSG)
        return LeakyReluBackward0.backward(self, ns, g)


def _leaky(a, slope):
    return np.where(a > 0, a, a * slope).astype(a.dtype, copy=False)


def leaky_relu(input, negative_slope=0.01, *, _node=LeakyReluBackward0):
    _scalars("leaky_relu", negative_slope=negative_slope)
    a = _float_only(input, "leaky_relu_cpu")
    save = "self" if _node is LeakyReluBackward0 else "result"
    return _record(input, _leaky(a, negative_slope), _node, save, negative_slope=negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return _inplace(leaky_relu, input, negative_slope, _node=LeakyReluBackward1)


# -- hardtanh (relu6) ------------------------------------------------------------------------------
class HardtanhBackward0(Node):      # dx = gy inside (min_val, max_val), else 0
    __slots__ = ("min_val", "max_val")
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        xd = ns.data(x)
        return (_tie(ns, ns.mask(~((xd <= self.min_val) | (xd >= self.max_val)), g), x),)


def hardtanh(input, min_val=-1.0, max_val=1.0):
    _scalars("hardtanh", min_val=min_val, max_val=max_val)
    a = input._data
    if a.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if a.dtype.kind in "fV":
        lo, hi = np.asarray(min_val, a.dtype), np.asarray(max_val, a.dtype)
        y = np.minimum(np.maximum(a, lo), hi)
        y = np.where(np.isnan(a), a, y)
    else:
        y = np.clip(a, int(min_val), int(max_val)).astype(a.dtype)
    if a.dtype.kind not in "fV":
        return make(y)
    return _record(input, y, HardtanhBackward0, min_val=min_val, max_val=max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _inplace(hardtanh, input, min_val, max_val)


# -- elu / selu / celu --------------------------------------------------------------------------------
_ELU_INPLACE_MSG = ("In-place elu backward calculation is triggered with a negative slope which is not supported. "
                    "This is caused by calling in-place forward function with a negative slope, please call "
                    "out-of-place version instead.")


class EluBackward0(Node):   # y = scale x (x > 0); scale alpha (exp(x input_scale) - 1) otherwise
    __slots__ = ("alpha", "scale", "input_scale")
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        neg = g * (ns.exp(x * self.input_scale) * (self.alpha * self.scale * self.input_scale))
        return (_sel(ns, ns.data(x) <= 0, neg, g * self.scale),)


class EluBackward1(EluBackward0):   # in place: from the result, dy/dx = input_scale (y + alpha scale) for y <= 0
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, ns, g):
        if self.alpha < 0:
            raise RuntimeError(_ELU_INPLACE_MSG)
        y, = ns.unpack(self)
        neg = g * ((y + self.alpha * self.scale) * self.input_scale)
        return (_sel(ns, ns.data(y) <= 0, neg, g * self.scale),)


class CeluBackward0(EluBackward0):
    __slots__ = ()


class CeluBackward1(EluBackward1):
    __slots__ = ()


def elu(input, alpha=1.0, scale=1.0, input_scale=1.0, *, _node=EluBackward0):
    _scalars("elu", alpha=alpha, scale=scale, input_scale=input_scale)
    a = _float_only(input, "elu_cpu")
    with np.errstate(all="ignore"):
        h = _hi(a)
        y = np.where(h <= 0, np.expm1(h * input_scale) * (alpha * scale), h * scale)
    save = "result" if issubclass(_node, EluBackward1) else "self"
    return _record(input, _out(y, a), _node, save, alpha=alpha, scale=scale, input_scale=input_scale)


def elu_(input, alpha=1.0, scale=1.0, input_scale=1.0):
    return _inplace(elu, input, alpha, scale, input_scale, _node=EluBackward1)


def _celu_args(alpha):
    _scalars("celu", alpha=alpha)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return alpha, 1.0, 1.0 / alpha


def celu(input, alpha=1.0):
    _float_only(input, "elu_cpu")
    return elu(input, *_celu_args(alpha), _node=CeluBackward0)


def celu_(input, alpha=1.0):
    _float_only(input, "elu_cpu")
    return _inplace(elu, input, *_celu_args(alpha), _node=CeluBackward1)


# -- silu / mish ----------------------------------------------------------------------------------------
def _sig(ns, x):
    return ns.sigmoid(x)


class SiluBackward0(Node):          # dx = gy s (1 + x (1 - s)), s = sigmoid(x)
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        s = _sig(ns, x)
        return (g * (s * (x * (1 - s) + 1)),)


def silu(input):
    a = _float_only(input, "silu_cpu")
    with np.errstate(all="ignore"):
        h = _hi(a)
        y = h / (1 + np.exp(-h))
    return _record(input, _out(y, a), SiluBackward0)


def silu_(input):
    _float_only(input, "silu_cpu")
    return _inplace(silu, input)


class MishBackward0(Node):          # dx = gy (tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)), sp = softplus(x)
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        if ns.is_tensor_mode:
            sp = softplus(x)
        else:
            sp = np.logaddexp(np.zeros((), x.dtype), x)
        t = ns.tanh(sp)
        return (g * (t + x * _sig(ns, x) * (1 - t * t)),)


def mish(input):
    a = _float_only(input, "mish_cpu")
    h = _hi(a)
    with np.errstate(all="ignore"):
        y = h * np.tanh(np.logaddexp(0.0, h))
    return _record(input, _out(y, a), MishBackward0)


def mish_(input):
    _float_only(input, "mish_cpu")
    return _inplace(mish, input)


# -- hardsigmoid / hardswish ------------------------------------------------------------------------------
class HardsigmoidBackward0(Node):   # dx = gy / 6 on (-3, 3), else 0
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        xd = ns.data(x)
        r = ns.mask((xd > -3) & (xd < 3), g * (1.0 / 6))
        if ns.is_tensor_mode:        # PyTorch has no derivative for hardsigmoid_backward
            return (_not_differentiable(r, (g, x), "hardsigmoid_backward"),)
        return (r,)


def hardsigmoid(input):
    a = _float_only(input, "hardsigmoid_cpu")
    c = _f32(a)
    y = np.minimum(np.maximum(c + 3, 0), 6) / 6
    return _record(input, _out(y, a), HardsigmoidBackward0)


def hardsigmoid_(input):
    _float_only(input, "hardsigmoid_cpu")
    return _inplace(hardsigmoid, input)


class HardswishBackward0(Node):     # dx = 0 (x <= -3), gy (x / 3 + 1/2) (-3 < x < 3), gy otherwise
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        xd = ns.data(x)
        mid = ns.mask(xd > -3, g * (x / 3 + 0.5))
        return (_sel(ns, ~(xd < 3), g, mid),)


def hardswish(input):
    a = _float_only(input, "hardswish_cpu")
    c = _f32(a)
    y = c * np.minimum(np.maximum(c + 3, 0), 6) / 6
    return _record(input, _out(y, a), HardswishBackward0)


def hardswish_(input):
    _float_only(input, "hardswish_cpu")
    return _inplace(hardswish, input)


# -- softplus / log_sigmoid ------------------------------------------------------------------------------
class SoftplusBackward0(Node):      # dx = gy sigmoid(beta x), gy where beta x > threshold
    __slots__ = ("beta", "threshold")
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        bx = x * self.beta
        return (_sel(ns, ns.data(bx) > self.threshold, g, g * _sig(ns, bx)),)


def softplus(input, beta=1.0, threshold=20.0):
    _scalars("softplus", beta=beta, threshold=threshold)
    a = _float_only(input, "softplus_cpu")
    h = _hi(a)
    with np.errstate(all="ignore"):
        bx = h * beta
        y = np.where(bx > threshold, h, np.log1p(np.exp(bx)) / beta)
    return _record(input, _out(y, a), SoftplusBackward0, beta=beta, threshold=threshold)


class LogSigmoidBackward0(Node):    # dx = gy sigmoid(-x)
    __slots__ = ()
    _saved_names = ("self", "buffer")

    def backward(self, ns, g):
        x, _ = ns.unpack(self)
        return (g * _sig(ns, -x),)


def log_sigmoid(input):
    a = _float_only(input, "log_sigmoid_cpu")
    h = _hi(a)
    with np.errstate(all="ignore"):
        z = np.exp(-np.abs(h))
        y = np.minimum(h, 0) - np.log1p(z)
    if input._rg and grad.enabled:
        n = LogSigmoidBackward0((edge(input),))
        out = make(_out(y, a), True, n)
        buf = make(_out(z, a))
        n._saved = (save_in(input), save_in(buf))
        return out
    return make(_out(y, a))


# -- shrink / threshold -------------------------------------------------------------------------------------
class SoftshrinkBackward0(Node):    # dx = gy where |x| > lambd
    __slots__ = ("lambd",)
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        xd = ns.data(x)
        return (_tie(ns, ns.mask(~((xd >= -self.lambd) & (xd <= self.lambd)), g), x),)


class HardshrinkBackward0(SoftshrinkBackward0):
    __slots__ = ()


def _fmt(v):
    return f"{v:g}"


def softshrink(input, lambd=0.5):
    _scalars("softshrink", lambd=lambd)
    a = _float_only(input, "softshrink_check")
    mx = float(_dtype.np_finfo(a.dtype).max)
    if not 0 <= lambd <= mx:
        raise RuntimeError(f"lambda must be in range [0, {_fmt(mx)}] for input dtype {_name_c(a)}, "
                           f"but found {_fmt(lambd)}")
    lam = np.asarray(lambd, a.dtype)
    y = np.where(a > lam, a - lam, np.where(a < -lam, a + lam, np.zeros((), a.dtype)))
    y = np.where(np.isnan(a), a, y)
    return _record(input, _out(y, a), SoftshrinkBackward0, lambd=lambd)


def hardshrink(input, lambd=0.5):
    _scalars("hardshrink", lambd=lambd)
    a = _float_only(input, "hardshrink_cpu")
    y = np.where((a >= -lambd) & (a <= lambd), np.zeros((), a.dtype), a)
    return _record(input, _out(y, a), HardshrinkBackward0, lambd=lambd)


class ThresholdBackward0(Node):     # dx = gy where x > threshold
    __slots__ = ("threshold",)
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        return (_tie(ns, ns.mask(~(ns.data(x) <= self.threshold), g), x),)


class ThresholdBackward1(ThresholdBackward0):
    __slots__ = ()


def _threshold(input, threshold, value, node):
    """The body of threshold and threshold_ (a name of its own: their parameter `threshold` hides the function)."""
    _scalars("threshold", threshold=threshold, value=value)
    a = input._data
    if a.dtype == np.bool_:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    if a.dtype.kind in "fV":
        th, v = threshold, np.asarray(value, a.dtype)
    else:
        th, v = np.asarray(threshold).astype(a.dtype), np.asarray(value).astype(a.dtype)
    y = np.where(a <= th, v, a).astype(a.dtype, copy=False)
    if a.dtype.kind not in "fV":
        return make(y)
    return _record(input, y, node, threshold=threshold)


def threshold(input, threshold, value, *, _node=ThresholdBackward0):
    return _threshold(input, threshold, value, _node)


def threshold_(input, threshold, value):
    return _inplace(_threshold, input, threshold, value, ThresholdBackward1)


# -- glu --------------------------------------------------------------------------------------------------
class GluBackward0(Node):           # y = a sigmoid(b); da = gy s; db = gy a s (1 - s)
    __slots__ = ("dim",)
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        a, b = _halves(ns, x, self.dim)
        s = _sig(ns, b)
        return (_cat(ns, [g * s, g * a * s * (1 - s)], self.dim),)


def glu(input, dim=-1):
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    if a.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {a.shape[d]}")
    _float_only(input, "glu_cpu")
    p, q = np.split(a, 2, axis=d)
    with np.errstate(all="ignore"):
        y = p * (1 / (1 + np.exp(-_hi(q))))
    return _record(input, _out(y, a), GluBackward0, dim=d)


# -- prelu --------------------------------------------------------------------------------------------------
class PreluKernelBackward0(Node):   # dx = gy where x > 0 else gy w; dw = sum(gy x where x <= 0)
    __slots__ = ("wshape",)
    _saved_names = ("self", "weight")

    def backward(self, ns, g):
        x, w = ns.unpack(self)
        pos = ns.data(x) > 0
        gx = gw = None
        if self.next_functions[0][0] is not None:
            gx = _sel(ns, pos, g, g * w)
        if self.next_functions[1][0] is not None:
            gw = ns.sum_to(ns.mask(~pos, g * x), self.wshape)
        return gx, gw


def prelu(input, weight):
    """PReLU with `weight` already shaped to broadcast against `input` (see nn.functional.prelu)."""
    a, w = input._data, weight._data
    if a.dtype.kind not in "fV":
        raise NotImplementedError(f"\"prelu_cpu\" not implemented for '{_name_c(a)}'")
    if w.dtype != a.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_name_c(a)} and {_name_c(w)}")
    y = np.where(a > 0, a, w * a).astype(a.dtype, copy=False)
    if grad.enabled and (input._rg or weight._rg):
        n = PreluKernelBackward0((edge(input), edge(weight)))
        n.wshape = w.shape
        n._saved = (save_in(input), save_in(weight))
        return make(y, True, n)
    return make(y)


# -- rrelu ----------------------------------------------------------------------------------------------------
class RreluWithNoiseBackward0(Node):   # training: dx = gy noise; eval: leaky_relu's gradient
    __slots__ = ("lower", "upper", "training")
    _saved_names = ("self", "noise")

    def backward(self, ns, g):
        x, noise = ns.unpack(self)
        if self.training and float(np.float32(self.upper)) - float(np.float32(self.lower)) > 1e-6:
            return (_tie(ns, g * noise, x),)
        slope = (self.lower + self.upper) / 2
        if slope < 0 and type(self) is RreluWithNoiseBackward1:
            raise RuntimeError(_LEAKY_INPLACE_MSG)
        return (_tie(ns, _sel(ns, ns.data(x) > 0, g, g * slope), x),)


class RreluWithNoiseBackward1(RreluWithNoiseBackward0):
    __slots__ = ()
    _saved_names = ("result", "noise")


def rrelu_with_noise(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None, *,
                     _node=RreluWithNoiseBackward0):
    a = input._data
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if a.dtype.kind not in "fV" or (training and a.dtype == np.float16):    # torch's noise kernel has no Half
        raise NotImplementedError(f"\"{'rrelu_with_noise_out_cpu' if training else 'leaky_relu_cpu'}\" "
                                  f"not implemented for '{_name_c(a)}'")
    if training and _rnd.draws_on_device(input):      # a CUDA tensor: its CUDA generator, one uniform per element
        m, gen = _rnd._src_of(input, generator, "rrelu_with_noise")
        lo, hi = (float(lower), float(upper)) if a.dtype == np.float64 else (float(np.float32(lower)),
                                                                             float(np.float32(upper)))
        noise = np.where(a <= 0, m.uniform(gen, a.shape, lo, hi, a.dtype), a.dtype.type(1))
        y = (a * noise).astype(a.dtype, copy=False)
    elif training:
        gen = default_generator if generator is None else generator
        flat = np.ascontiguousarray(a, like=a).reshape(-1)
        neg = flat <= 0
        if a.dtype == np.float64:
            lo, hi = float(lower), float(upper)
        else:
            lo, hi = float(np.float32(lower)), float(np.float32(upper))
        r = _u53(gen, int(neg.sum())) * (hi - lo) + lo
        noise = np.ones(flat.shape, a.dtype, like=a)
        r = r.astype(a.dtype if a.dtype != np.float16 else np.float32).astype(a.dtype)
        noise[neg] = r if a.__class__ is np.ndarray else backend.to_device(r, backend.device_of(a))   # host RNG draws
        noise = noise.reshape(a.shape)
        y = (a * noise).astype(a.dtype, copy=False)
    else:
        noise = np.zeros(a.shape, a.dtype, like=a)
        y = _leaky(a, (lower + upper) / 2)
    if input._rg and grad.enabled:
        n = _node((edge(input),))
        n.lower, n.upper, n.training = lower, upper, training
        out = make(y, True, n)
        nz = make(noise)
        n._saved = ((save_in(input) if _node is RreluWithNoiseBackward0 else save_out(out)), save_in(nz))
        return out
    return make(y)
