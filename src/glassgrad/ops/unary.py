"""Unary math: one tensor in, one out, element by element.

ops: exp log sqrt (written by hand: the pattern of an op, see docs/architecture.md section 3)
     abs absolute sign sgn exp2 expm1 log2 log10 log1p rsqrt sin cos tan asin arcsin acos arccos atan arctan
     sinh cosh tanh asinh arcsinh acosh arccosh atanh arctanh sigmoid erf erfc erfinv reciprocal
     deg2rad rad2deg floor ceil trunc fix frac relu (made by the _node + _unary factories)
     round logit nan_to_num
     and the in-place form name_ of each

Most ops here are two lines: `SinBackward0 = _node("SinBackward0", formula, save)` makes the backward
node (PyTorch's grad_fn name, the formula written once with ns -- arrays or Tensors, so it is itself
differentiable) and `sin, sin_ = _unary("sin", SinBackward0, np.sin)` the forward and its in-place form.
"""
import builtins
import math

import numpy as np

from .. import _args, _dtype
from ..backend import libm
from ._core import as_array, make, edge, save_in, save_out, grad, quiet, _inplace, ordered
from ..autograd.graph import Node

__all__ = ["exp", "exp_", "log", "log_", "sqrt", "sqrt_",
           "abs", "abs_", "absolute", "absolute_", "sign", "sign_", "sgn", "sgn_", "exp2", "exp2_", "expm1",
           "expm1_", "log2", "log2_", "log10", "log10_", "log1p", "log1p_", "rsqrt", "rsqrt_", "sin", "sin_",
           "cos", "cos_", "tan", "tan_", "asin", "asin_", "arcsin", "arcsin_", "acos", "acos_", "arccos",
           "arccos_", "atan", "atan_", "arctan", "arctan_", "sinh", "sinh_", "cosh", "cosh_", "tanh", "tanh_",
           "asinh", "asinh_", "arcsinh", "arcsinh_", "acosh", "acosh_", "arccosh", "arccosh_", "atanh", "atanh_",
           "arctanh", "arctanh_", "sigmoid", "sigmoid_", "erf", "erf_", "erfc", "erfc_", "erfinv", "erfinv_",
           "reciprocal", "reciprocal_", "deg2rad", "deg2rad_", "rad2deg", "rad2deg_", "floor", "floor_", "ceil", "ceil_", "trunc",
           "trunc_", "fix", "fix_", "frac", "frac_", "relu", "relu_",
           "round", "round_", "logit", "logit_", "nan_to_num", "nan_to_num_"]
_LN2, _LN10 = math.log(2.0), math.log(10.0)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)


# -- exp / log / sqrt, written by hand ---------------------------------------------------------------
def _float_input(x):
    """Integer inputs of a float function compute in the default float dtype."""
    a = x._data
    return a if a.dtype.kind in "fVc" else a.astype(_dtype._default[0].np)


class ExpBackward0(Node):           # y = exp(x); dx = gy * y
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)
    _saved_names = ("result",)

    def backward(self, ns, g):
        y, = ns.unpack(self)
        return (g * ns.conj(y),)


def exp(input, *, out=None):
    y = quiet(np.exp, _float_input(input))
    if input._rg and grad.enabled:
        n = ExpBackward0((edge(input),))
        out = make(y, True, n)
        n._saved = (save_out(out),)
        return out
    return make(y)


class LogBackward0(Node):           # y = log(x); dx = gy / x
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        return (g / ns.conj(x),)


def log(input, *, out=None):
    y = quiet(np.log, _float_input(input))
    if input._rg and grad.enabled:
        n = LogBackward0((edge(input),))
        n._saved = (save_in(input),)
        return make(y, True, n)
    return make(y)


class SqrtBackward0(Node):          # y = sqrt(x); dx = gy / (2 y)
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)
    _saved_names = ("result",)

    def backward(self, ns, g):
        y, = ns.unpack(self)
        return (g / (2 * ns.conj(y)),)


def sqrt(input, *, out=None):
    y = quiet(np.sqrt, _float_input(input))
    if input._rg and grad.enabled:
        n = SqrtBackward0((edge(input),))
        out = make(y, True, n)
        n._saved = (save_out(out),)
        return out
    return make(y)


def exp_(x):
    return _inplace(exp, x)


def log_(x):
    return _inplace(log, x)


def sqrt_(x):
    return _inplace(sqrt, x)


# -- the factories: _node (the backward class) and _unary (the forward and its in-place form) ------
class _Unary(Node):
    """Base of the nodes made by _node that save one value (the input or the result)."""
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        v, = ns.unpack(self)
        if self._holo and ns.data(v).dtype.kind == "c":     # holomorphic f: gx = gy * conj(f'(x)) (torch's
            return (ns.conj(self._f(ns, ns.conj(g), v)),)   # conjugate Wirtinger convention)
        return (self._f(ns, g, v),)


class _NoSave(Node):
    """Base of the nodes made by _node that save nothing."""
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (self._f(ns, g, None),)


def _node(name, bwd, save="self", holo=True):
    """The backward node class `name` (PyTorch's grad_fn name) whose formula is bwd(ns, g, saved): saved is
    the input ("self"), the result ("result") or nothing (None).  Bound by assignment where the op is
    defined, so `grep "SinBackward0 ="` finds it."""
    class node(_NoSave if save is None else _Unary):
        __slots__ = ()
        _saved_names = () if save is None else (save,)
        _f = staticmethod(bwd)
        _holo = holo            # f is holomorphic (its complex gradient is the conjugate of f')
    node.__name__ = node.__qualname__ = name
    return node


def _unary(name, cls, fwd, keep_int=False, inplace=True, reject=None):
    """`name(input)` and `name_(x)` (None when not `inplace`) computing fwd on arrays, recording node `cls`
    (from _node).  keep_int: integer inputs keep their dtype (else they compute in the default float dtype);
    reject: (dtype kinds, exception type, message) for the dtypes the op refuses."""
    save = cls._saved_names[0] if cls._saved_names else None

    def fn(input, *, out=None):
        if input._data.dtype.kind == "c" and name not in _COMPLEX_OK:
            raise NotImplementedError(_COMPLEX_MSG.get(name, '"{}_cpu" not implemented for \'{}\'').format(
                name, _dtype.c_name(input._data.dtype)))
        if reject is not None and input._data.dtype.kind in reject[0]:
            raise reject[1](reject[2].format(_dtype.from_numpy_dtype(input._data.dtype).name_c))
        a = input._data if keep_int else _float_input(input)
        if keep_int == "bool_copy" and a.dtype == np.bool_:
            return make(a.copy())
        y = as_array(quiet(fwd, a))
        if y.dtype != a.dtype and a.dtype.kind in "fV":
            y = y.astype(a.dtype)
        if input._rg and grad.enabled and y.dtype.kind in "fVc":
            n = cls((edge(input),))
            res = make(y, True, n)
            if save == "self":
                n._saved = (save_in(input),)
            elif save == "result":
                n._saved = (save_out(res),)
            return res
        return make(y)
    fn.__name__ = fn.__qualname__ = name

    def fn_(x):
        return _inplace(fn, x)
    fn_.__name__ = fn_.__qualname__ = name + "_"
    return fn, (fn_ if inplace else None)


# the ops of this file that take complex inputs (the others raise torch's NotImplementedError)
_COMPLEX_OK = {"abs", "sgn", "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "sin", "cos", "tan", "asin",
               "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "reciprocal", "sinc"}


_COMPLEX_MSG = {"floor": "{} is not supported for complex inputs", "ceil": "{} is not supported for complex inputs",
                "trunc": "{} is not supported for complex inputs", "relu": "clamp is not supported for complex types",
                "sign": "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn "
                        "instead.", "erf": '"erf_vml_cpu" not implemented for \'{1}\'',
                "erfc": '"erfc_vml_cpu" not implemented for \'{1}\'', "frac": '"frac_cpu" not implemented for \'{1}\''}


# -- made by the factories: y = f(x) (the _unary line); dx = the formula given to _node -----------------
def _erf_arr(a):
    return libm("erf", a)


def _erfc_arr(a):
    return libm("erfc", a)


def erfinv_array(a):
    """erfinv on an array: Giles' approximation polished with Newton steps (float64)."""
    y = as_array(a, np.float64)
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - y) * (1.0 + y))
        ws = w - 2.5
        p1 = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941):
            p1 = c + p1 * ws
        wl = np.sqrt(w) - 3.0
        p2 = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                  0.00943887047, 1.00167406, 2.83297682):
            p2 = c + p2 * wl
        x = np.where(w < 5.0, p1, p2) * y
        for _ in range(3):
            fin = np.isfinite(x)
            xs = np.where(fin, x, 0.0)
            err = _erf_arr(xs) - y
            x = np.where(fin, xs - err / (_2_SQRTPI * np.exp(-xs * xs)), x)
        x = np.where(y == 1, np.inf, np.where(y == -1, -np.inf, x))
        x = np.where(np.abs(y) > 1, np.nan, x)
    return x


def _zero(ns, g, v):
    """torch's zeros_like(grad) for a piecewise-constant op: zeros, also where grad is NaN or inf."""
    return ns.zeros_like(g)


AbsBackward0 = _node("AbsBackward0", lambda ns, g, x: g * ns.sgn(x), holo=False)
abs, _abs_ = _unary("abs", AbsBackward0, np.abs, keep_int=True,
                    reject=("b", NotImplementedError, '"abs_cpu" not implemented for \'{}\''))


def abs_(x):
    if x._data.dtype.kind == "c":
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return _abs_(x)


absolute, absolute_ = abs, abs_
def sign_array(a):
    """torch's sign, (0 < a) - (a < 0): 0 for NaN and +0 for -0.0, where NumPy's np.sign gives NaN and -0.0 (so
    abs' gradient at NaN is 0, as torch's).  Integers: np.sign."""
    if a.dtype.kind not in "fV":
        return np.sign(a)
    return as_array(np.greater(a, 0).astype(a.dtype) - np.less(a, 0).astype(a.dtype))


SignBackward0 = _node("SignBackward0", _zero, save=None)
sign, sign_ = _unary("sign", SignBackward0, sign_array, keep_int="bool_copy")
def _sgn_bwd(ns, g, x):
    if ns.data(x).dtype.kind != "c":
        return ns.zeros_like(g)          # torch's zeros, also for a NaN gradient
    a = ns.abs(x)                   # complex z: the part of gy orthogonal to sgn(z), over |z| (0 at z = 0)
    s = ns.sgn(x)
    r = (g - s * ns.real(ns.conj(s) * g)) / a
    return ns.where(ns.const(ns.data(a) == 0, r), r * 0, r)


SgnBackward0 = _node("SgnBackward0", _sgn_bwd, holo=False)
sgn, sgn_ = _unary("sgn", SgnBackward0, sign_array, keep_int="bool_copy")
Exp2Backward0 = _node("Exp2Backward0", lambda ns, g, y: g * (y * _LN2), save="result")
exp2, exp2_ = _unary("exp2", Exp2Backward0, np.exp2)
Expm1Backward0 = _node("Expm1Backward0", lambda ns, g, y: g * (y + 1), save="result")
expm1, expm1_ = _unary("expm1", Expm1Backward0, np.expm1)
Log2Backward0 = _node("Log2Backward0", lambda ns, g, x: g / (x * _LN2))
log2, log2_ = _unary("log2", Log2Backward0, np.log2)
Log10Backward0 = _node("Log10Backward0", lambda ns, g, x: g / (x * _LN10))
log10, log10_ = _unary("log10", Log10Backward0, np.log10)
Log1PBackward0 = _node("Log1PBackward0", lambda ns, g, x: g / (x + 1))
log1p, log1p_ = _unary("log1p", Log1PBackward0, np.log1p)
RsqrtBackward0 = _node("RsqrtBackward0", lambda ns, g, y: g * (y * y * y) * -0.5, save="result")
rsqrt, rsqrt_ = _unary("rsqrt", RsqrtBackward0, lambda a: 1 / np.sqrt(a))
SinBackward0 = _node("SinBackward0", lambda ns, g, x: g * ns.cos(x))
sin, sin_ = _unary("sin", SinBackward0, np.sin)
CosBackward0 = _node("CosBackward0", lambda ns, g, x: g * -ns.sin(x))
cos, cos_ = _unary("cos", CosBackward0, np.cos)
TanBackward0 = _node("TanBackward0", lambda ns, g, y: g * (y * y + 1), save="result")
tan, tan_ = _unary("tan", TanBackward0, np.tan)
AsinBackward0 = _node("AsinBackward0", lambda ns, g, x: g / ns.sqrt(1 - x * x))
asin, asin_ = _unary("asin", AsinBackward0, np.arcsin)
arcsin, arcsin_ = asin, asin_
AcosBackward0 = _node("AcosBackward0", lambda ns, g, x: -g / ns.sqrt(1 - x * x))
acos, acos_ = _unary("acos", AcosBackward0, np.arccos)
arccos, arccos_ = acos, acos_
AtanBackward0 = _node("AtanBackward0", lambda ns, g, x: g / (x * x + 1))
atan, atan_ = _unary("atan", AtanBackward0, np.arctan)
arctan, arctan_ = atan, atan_
SinhBackward0 = _node("SinhBackward0", lambda ns, g, x: g * ((ns.exp(x) + ns.exp(-x)) * 0.5))
sinh, sinh_ = _unary("sinh", SinhBackward0, np.sinh)
CoshBackward0 = _node("CoshBackward0", lambda ns, g, x: g * ((ns.exp(x) - ns.exp(-x)) * 0.5))
cosh, cosh_ = _unary("cosh", CoshBackward0, np.cosh)
TanhBackward0 = _node("TanhBackward0", lambda ns, g, y: g * (1 - y * y), save="result")
tanh, tanh_ = _unary("tanh", TanhBackward0, np.tanh)
AsinhBackward0 = _node("AsinhBackward0", lambda ns, g, x: g / ns.sqrt(x * x + 1))
asinh = _unary("asinh", AsinhBackward0, np.arcsinh, inplace=False)[0]
AcoshBackward0 = _node("AcoshBackward0", lambda ns, g, x: g / ns.sqrt(x * x - 1) if ns.data(x).dtype.kind != "c" else
                       g / (ns.sqrt(x - 1) * ns.sqrt(x + 1)))     # complex: acosh's branch, not 1/sqrt(x^2 - 1)
acosh = _unary("acosh", AcoshBackward0, np.arccosh, inplace=False)[0]
AtanhBackward0 = _node("AtanhBackward0", lambda ns, g, x: g / (1 - x * x))
atanh = _unary("atanh", AtanhBackward0, np.arctanh, inplace=False)[0]


def _no_inplace_derivative(what):   # torch: "self: not_implemented(...)" for the in-place inverse hyperbolics
    def bwd(ns, g, _):
        raise NotImplementedError(f"the derivative for 'inplace version of {what}' is not implemented.")
    return bwd


AsinhBackward1 = _node("AsinhBackward1", _no_inplace_derivative("asinh"), save=None)
asinh_ = _unary("asinh", AsinhBackward1, np.arcsinh)[1]
AcoshBackward1 = _node("AcoshBackward1", _no_inplace_derivative("acosh"), save=None)
acosh_ = _unary("acosh", AcoshBackward1, np.arccosh)[1]
AtanhBackward1 = _node("AtanhBackward1", _no_inplace_derivative("atanh"), save=None)
atanh_ = _unary("atanh", AtanhBackward1, np.arctanh)[1]
arcsinh, arcsinh_, arccosh, arccosh_, arctanh, arctanh_ = asinh, asinh_, acosh, acosh_, atanh, atanh_
SigmoidBackward0 = _node("SigmoidBackward0", lambda ns, g, y: g * ((1 - y) * y), save="result")
sigmoid, sigmoid_ = _unary("sigmoid", SigmoidBackward0,
                           lambda a: _sigmoid_arr(a.astype(np.float32) if a.dtype == np.float16 else a))


def _sigmoid_arr(a):
    return 1 / (1 + np.exp(-a))     # PyTorch's formula (exp overflow gives exactly 0 / 1)


ErfBackward0 = _node("ErfBackward0", lambda ns, g, x: g * (ns.exp(-(x * x)) * _2_SQRTPI))
erf, erf_ = _unary("erf", ErfBackward0, _erf_arr)
ErfcBackward0 = _node("ErfcBackward0", lambda ns, g, x: g * (ns.exp(-(x * x)) * -_2_SQRTPI))
erfc, erfc_ = _unary("erfc", ErfcBackward0, _erfc_arr)
ErfinvBackward0 = _node("ErfinvBackward0",
                        lambda ns, g, x: g * (ns.exp(ns.square(ns.erfinv(x))) * (0.5 * math.sqrt(math.pi))))
erfinv, erfinv_ = _unary("erfinv", ErfinvBackward0, erfinv_array)
ReciprocalBackward0 = _node("ReciprocalBackward0", lambda ns, g, y: g * -(y * y), save="result")
def _reciprocal_arr(a):
    if a.dtype.kind != "c":
        return np.reciprocal(a)
    return np.where(a == 0, a.dtype.type(complex(np.inf, np.nan)), np.reciprocal(a))    # PyTorch: 1 / 0j = inf + nanj


reciprocal, reciprocal_ = _unary("reciprocal", ReciprocalBackward0, _reciprocal_arr)
Deg2RadBackward0 = _node("Deg2RadBackward0", lambda ns, g, v: g * (math.pi / 180), save=None)
deg2rad, deg2rad_ = _unary("deg2rad", Deg2RadBackward0, np.deg2rad)
Rad2DegBackward0 = _node("Rad2DegBackward0", lambda ns, g, v: g * (180 / math.pi), save=None)
rad2deg, rad2deg_ = _unary("rad2deg", Rad2DegBackward0, np.rad2deg)
FloorBackward0 = _node("FloorBackward0", _zero, save=None)
floor, floor_ = _unary("floor", FloorBackward0, np.floor, keep_int=True,
                       reject=("b", NotImplementedError, '"floor_vml_cpu" not implemented for \'{}\''))
CeilBackward0 = _node("CeilBackward0", _zero, save=None)
ceil, ceil_ = _unary("ceil", CeilBackward0, np.ceil, keep_int=True,
                     reject=("b", NotImplementedError, '"ceil_vml_cpu" not implemented for \'{}\''))
TruncBackward0 = _node("TruncBackward0", _zero, save=None)
trunc, trunc_ = _unary("trunc", TruncBackward0, np.trunc, keep_int=True,
                       reject=("b", NotImplementedError, '"trunc_vml_cpu" not implemented for \'{}\''))
fix, fix_ = trunc, trunc_
FracBackward0 = _node("FracBackward0", lambda ns, g, v: g, save=None)
frac, frac_ = _unary("frac", FracBackward0, lambda a: a - np.trunc(a),
                     reject=("biu", NotImplementedError, '"frac_cpu" not implemented for \'{}\''))


def _relu_bwd(ns, g, y):
    if ns.is_tensor_mode:        # keep the dependence on the result (PyTorch's gradient is differentiable)
        return ns.where(ns.const(~(ns.data(y) <= 0), g), g, y * 0)
    # PyTorch's rule: zero where y <= 0, so a NaN passes the gradient; y = relu(x) is >= 0 or NaN, where
    # `y != 0` is that same condition in one ufunc
    return ns.mask(y != 0, g)


ReluBackward0 = _node("ReluBackward0", _relu_bwd, save="result")
relu, relu_ = _unary("relu", ReluBackward0, lambda a: np.maximum(a, 0), keep_int=True,
                     reject=("b", RuntimeError, "Boolean inputs not supported for relu"))


# -- round / logit / nan_to_num, written by hand ----------------------------------------------
class RoundBackward0(Node):         # y = round(x); dx = 0 (torch's zeros_like(grad): 0 also for a NaN grad)
    __slots__ = ()

    def backward(self, ns, g):
        return (ns.zeros_like(g),)


class RoundBackward1(RoundBackward0):   # y = round(x, decimals); dx = 0
    __slots__ = ()
    _saved_names = ("decimals",)


def round(input, *, decimals=0, out=None):
    a = input._data
    decimals = _args.int_arg(decimals, "round", "decimals")
    if a.dtype == np.bool_:
        raise NotImplementedError('"round_vml_cpu" not implemented for \'Bool\'')
    if decimals and a.dtype.kind in "iu":
        raise NotImplementedError(f'"round_cpu" not implemented for \'{_dtype.from_numpy_dtype(a.dtype).name_c}\'')
    if decimals == 0 or a.dtype.kind not in "fV":
        y = np.round(a) if a.dtype.kind in "fV" else a.copy()
    else:
        p = 10.0 ** builtins.abs(decimals)
        y = (np.round(a * p) / p if decimals > 0 else np.round(a / p) * p).astype(a.dtype)
    if input._rg and grad.enabled:
        return make(y, True, (RoundBackward0 if decimals == 0 else RoundBackward1)((edge(input),)))
    return make(y)


def round_(x, *, decimals=0):
    return _inplace(round, x, decimals=decimals)


class LogitBackward0(Node):         # y = log(x / (1 - x)); dx = gy / (x (1 - x)), 0 outside [eps, 1 - eps]
    __slots__ = ("eps",)
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        r = g / (x * (1 - x))
        xd = ns.data(x)
        if self.eps is None:
            bad = (xd < 0) | (xd > 1)
            keep = xd.__class__ is np.ndarray and not np.any(bad)     # (on a device: no sync, where always)
            return (r if keep else ns.where(ns.const(bad, g), r * np.nan, r),)
        return (ns.mask(~((xd < self.eps) | (xd > 1 - self.eps)), r),)


def logit(input, eps=None, *, out=None):
    if input._data.dtype.kind == "c":
        raise NotImplementedError(f'"logit_cpu" not implemented for \'{_dtype.c_name(input._data.dtype)}\'')
    a = _float_input(input)
    z = a if eps is None else np.clip(a, eps, 1 - eps)
    with np.errstate(all="ignore"):
        y = np.log(z / (1 - z)).astype(a.dtype)
    if input._rg and grad.enabled:
        n = LogitBackward0((edge(input),))
        n.eps = eps
        n._saved = (save_in(input),)
        return make(y, True, n)
    return make(y)


def logit_(x, eps=None):
    return _inplace(logit, x, eps)


class NanToNumBackward0(Node):      # y = x with nan / inf replaced; dx = gy where x is finite, else 0
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        return (ns.mask(np.isfinite(ns.data(x)), g),)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None:
            _args.number_arg(v, "nan_to_num", name)
    a = input._data
    if a.dtype.kind == "c" and input._rg and grad.enabled:
        raise RuntimeError("nan_to_num does not support automatic differentiation for outputs with complex dtype.")
    if a.dtype.kind == "c":         # the real and imaginary parts each, as PyTorch
        fi = _dtype.np_finfo(a.real.dtype)
        f = (lambda p: np.nan_to_num(p, nan=0.0 if nan is None else nan, posinf=fi.max if posinf is None else posinf,
                                     neginf=fi.min if neginf is None else neginf))
        y = (f(a.real) + 1j * f(a.imag)).astype(a.dtype)
    elif a.dtype.kind not in "fV":
        y = a.copy()
    else:
        fi = _dtype.np_finfo(a.dtype)
        y = np.nan_to_num(ordered(a), nan=0.0 if nan is None else nan, posinf=fi.max if posinf is None else posinf,
                          neginf=fi.min if neginf is None else neginf).astype(a.dtype, copy=False)
    if input._rg and grad.enabled:
        n = NanToNumBackward0((edge(input),))
        n._saved = (save_in(input),)
        return make(y, True, n)
    return make(y)


def nan_to_num_(x, nan=0.0, posinf=None, neginf=None):
    return _inplace(nan_to_num, x, nan, posinf, neginf)
