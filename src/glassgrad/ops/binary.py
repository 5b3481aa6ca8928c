"""Binary math: two tensors (or a tensor and a number) in, one out, element by element.

ops: minimum maximum fmin fmax clamp clip clamp_min clamp_max atan2 arctan2 hypot xlogy copysign logaddexp logaddexp2
     heaviside heaviside_
     and the in-place forms clamp_ clip_ clamp_min_ clamp_max_ atan2_ hypot_ xlogy_ copysign_
(the operators + - * / ** // % are in arithmetic.py; where, lerp, addcmul, addcdiv in ternary.py)
"""
import numpy as np

from .. import _dtype
from ._core import (_OneEdge, Tensor, as_array, make, edge, NO_EDGE, save_in, save_out, grad, binary_operands, as_tensor_arg,
                    _bcast, _Binary, _binary_node, _needs_grad, _red_n, _want, _inplace, broadcast_error,
                    NotImplementedNode)
from ..autograd.graph import Node

__all__ = ["clamp", "clamp_", "clip", "clip_", "clamp_min", "clamp_min_", "clamp_max", "clamp_max_", "minimum",
           "maximum", "fmin", "fmax", "atan2", "arctan2", "atan2_", "hypot", "hypot_", "xlogy", "xlogy_",
           "copysign", "copysign_", "logaddexp", "logaddexp2", "heaviside"]


def _need_tensor(fn, other, pos=2, arg="other"):
    if not isinstance(other, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(other).__name__}")


def _floatify(ad, bd, bt):
    if ad.dtype.kind not in "fV":
        f = _dtype._default[0].np
        ad = ad.astype(f)
        bd = bd.astype(f) if bt is not None else bd
    return ad, bd


# -- clamp ------------------------------------------------------------------------------------------
class ClampBackward1(Node):         # y = clamp(x, min, max), number bounds; dx = gy where min <= x <= max
    __slots__ = ("min", "max")
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        xd = ns.data(x)
        m = np.ones(xd.shape, bool, like=xd)
        if self.min is not None:
            m &= xd >= self.min
        if self.max is not None:
            m &= xd <= self.max
        return (ns.mask(m, g),)


class ClampBackward0(Node):         # tensor bounds: gy goes to the one of x, min, max that y is (max if min > max)
    __slots__ = ("shapes", "dts", "has")
    _saved_names = ("self", "min", "max")

    def backward(self, ns, g):
        sv = ns.unpack(self)
        x = ns.data(sv[0])
        lo = ns.data(sv[1]) if self.has[0] else None
        hi = ns.data(sv[2 if self.has[0] else 1]) if self.has[1] else None
        gx = gl = gh = None
        if lo is not None and hi is not None:
            gx = ns.mask((x >= lo) & (x <= hi), g)
            gl = ns.mask((x < lo) & (lo < hi), g)
            gh = ns.mask((x > hi) | (hi < lo), g)
        elif lo is not None:
            gx, gl = ns.mask(x >= lo, g), ns.mask(x < lo, g)
        else:
            gx, gh = ns.mask(x <= hi, g), ns.mask(x > hi, g)
        grads = [gx if _want(self, 0) else None, gl if _want(self, 1) else None, gh if _want(self, 2) else None]
        return _red_n(ns, grads, self.shapes, self.dts)


def clamp(input, min=None, max=None, *, out=None):
    if input._data.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_t(input, min, max)
    rt = _dtype.result_type(input, *[v for v in (min, max) if v is not None]).np
    a = input._data if input._data.dtype == rt else input._data.astype(rt)
    y = a
    if min is not None:
        y = np.maximum(y, np.asarray(min, rt)) if not np.isnan(min) else np.full_like(y, np.nan)
    if max is not None:
        y = np.minimum(y, np.asarray(max, rt)) if not np.isnan(max) else np.full_like(y, np.nan)
    y = as_array(y).copy(order="K")
    if input._rg and grad.enabled:
        n = ClampBackward1((edge(input),))
        n.min, n.max = min, max
        n._saved = (save_in(input),)
        return make(y, True, n)
    return make(y)


def _clamp_t(input, min, max):
    lo = None if min is None else as_tensor_arg(min, input)
    hi = None if max is None else as_tensor_arg(max, input)
    ts = [t for t in (input, lo, hi) if t is not None]
    rt = _dtype.result_type(*ts).np
    cv = [t._data.astype(rt, copy=False) for t in ts]
    y = cv[0]
    try:
        if lo is not None:
            y = np.maximum(y, cv[1])
        if hi is not None:
            y = np.minimum(y, cv[-1])
    except ValueError:
        raise broadcast_error(input._data.shape, ts[1]._data.shape) from None
    y = as_array(y).copy(order="K")
    if grad.enabled and any(t._rg for t in ts):
        n = ClampBackward0((edge(input), edge(lo) if lo is not None else NO_EDGE,
                            edge(hi) if hi is not None else NO_EDGE))
        n.has = (lo is not None, hi is not None)
        n.shapes = [input._data.shape, None if lo is None else lo._data.shape, None if hi is None else hi._data.shape]
        n.dts = [input._data.dtype, None if lo is None else lo._data.dtype, None if hi is None else hi._data.dtype]
        n._saved = tuple(save_in(t) for t in ts)
        return make(y, True, n)
    return make(y)


clip = clamp


_CPP_INT = {_dtype.c_name(d): _dtype.cpp_name(d) for d in ("int64", "int32", "int16", "int8", "uint8", "bool")}


def clamp_(x, min=None, max=None):
    try:
        return _inplace(clamp, x, min, max)
    except RuntimeError as e:       # clamp_ names the C++ type in this message
        m = str(e)
        t = m.rsplit(" ", 1)[-1]
        if "can't be cast to the desired output type" in m and t in _CPP_INT:
            raise RuntimeError(m[:-len(t)] + _CPP_INT[t]) from None
        raise


clip_ = clamp_


class ClampMinBackward0(ClampBackward1):   # y = clamp_min(x, number); dx = gy where x >= min
    __slots__ = ()


class ClampMaxBackward0(ClampBackward1):   # y = clamp_max(x, number); dx = gy where x <= max
    __slots__ = ()


class ClampMinBackward1(_Binary):   # y = clamp_min(x, min); dx = gy where x >= min; dmin = gy where x < min
    __slots__ = ()
    _saved_names = ("self", "min")
    _op = np.greater_equal

    def backward(self, ns, g):
        x, m = ns.unpack(self)
        keep = self._op(ns.data(x), ns.data(m))
        return self._red(ns, ns.mask(keep, g) if _want(self, 0) else None,
                         ns.mask(~keep, g) if _want(self, 1) else None)


class ClampMaxBackward1(ClampMinBackward1):    # y = clamp_max(x, max); dx = gy where x <= max; dmax = gy elsewhere
    __slots__ = ()
    _saved_names = ("self", "max")
    _op = np.less_equal


def _clamp_one(input, bound, lo):
    if isinstance(bound, Tensor):
        ad, bd, bt = binary_operands(input, bound)
        y = _bcast(np.maximum if lo else np.minimum, ad, bd, input, bound)
        if _needs_grad(input, bt):
            n = _binary_node(ClampMinBackward1 if lo else ClampMaxBackward1, input, bound, bt)
            n._saved = (save_in(input), save_in(bt))
            return make(y, True, n)
        return make(y)
    out = clamp(input, bound, None) if lo else clamp(input, None, bound)
    if out._grad_fn is not None:
        n = out._grad_fn
        n.__class__ = ClampMinBackward0 if lo else ClampMaxBackward0
    return out


def clamp_min(input, min):
    return _clamp_one(input, min, True)


def clamp_max(input, max):
    return _clamp_one(input, max, False)


def clamp_min_(x, min):
    return _inplace(clamp_min, x, min)


def clamp_max_(x, max):
    return _inplace(clamp_max, x, max)


# -- minimum / maximum / fmin / fmax ------------------------------------------------------------------
class MaximumBackward0(_Binary):    # y = max(a, b); gy goes to the larger, ties split it 0.5 / 0.5
    __slots__ = ()
    _saved_names = ("self", "other")
    _lt = np.less

    def backward(self, ns, g):
        a, b = ns.unpack(self)
        ad, bd = ns.data(a), ns.data(b)
        eq = ns.const(np.broadcast_to(ad == bd, g.shape), g)
        half = g * 0.5
        ga = ns.where(eq, half, ns.mask(~self._lt(ad, bd), g)) if _want(self, 0) else None
        gb = ns.where(eq, half, ns.mask(~self._lt(bd, ad), g)) if _want(self, 1) else None
        return self._red(ns, ga, gb)


class MinimumBackward0(MaximumBackward0):  # y = min(a, b); gy goes to the smaller, ties split it 0.5 / 0.5
    __slots__ = ()
    _lt = np.greater


class FmaxBackward0(_Binary):       # y = fmax(a, b); da = gy where a >= b or b is nan; db = gy elsewhere
    __slots__ = ()
    _saved_names = ("self", "other")
    _ge = np.greater_equal

    def backward(self, ns, g):
        a, b = ns.unpack(self)
        ad, bd = ns.data(a), ns.data(b)
        sel = np.broadcast_to(self._ge(ad, bd) | np.isnan(bd), g.shape)
        return self._red(ns, ns.mask(sel, g) if _want(self, 0) else None,
                         ns.mask(~sel, g) if _want(self, 1) else None)


class FminBackward0(FmaxBackward0):    # y = fmin(a, b); da = gy where a <= b or b is nan; db = gy elsewhere
    __slots__ = ()
    _ge = np.less_equal


def _minmax(name, fn, cls):
    def op(input, other, *, out=None):
        _need_tensor(name, other)
        ad, bd, bt = binary_operands(input, other)
        if ad.dtype.kind == "c":
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        y = _bcast(fn, ad, bd, input, other)
        if _needs_grad(input, bt):
            n = _binary_node(cls, input, other, bt)
            n._saved = (save_in(input), save_in(bt))
            return make(y, True, n)
        return make(y)
    op.__name__ = name
    return op


maximum = _minmax("maximum", np.maximum, MaximumBackward0)
minimum = _minmax("minimum", np.minimum, MinimumBackward0)
fmax = _minmax("fmax", np.fmax, FmaxBackward0)
fmin = _minmax("fmin", np.fmin, FminBackward0)


# -- atan2 / hypot / xlogy / copysign ----------------------------------------------------------------
class Atan2Backward0(_Binary):      # y = atan2(a, b); da = gy b / (a^2 + b^2); db = -gy a / (a^2 + b^2)
    __slots__ = ()
    _saved_names = ("self", "other")

    def backward(self, ns, g):
        a, b = ns.unpack(self)
        r = g / (a * a + b * b)
        return self._red(ns, r * b if _want(self, 0) else None, -r * a if _want(self, 1) else None)


class HypotBackward0(_Binary):      # y = sqrt(a^2 + b^2); da = gy a / y; db = gy b / y
    __slots__ = ()
    _saved_names = ("self", "other", "result")

    def backward(self, ns, g):
        a, b, y = ns.unpack(self)
        r = g / y
        return self._red(ns, r * a if _want(self, 0) else None, r * b if _want(self, 1) else None)


def _float_binary(name, fn, cls, save_result=False):
    def op(input, other, *, out=None):
        _need_tensor(name, other)
        ad, bd, bt = binary_operands(input, other)
        if ad.dtype.kind == "c":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_dtype.c_name(ad.dtype)}\'')
        ad, bd = _floatify(ad, bd, bt)
        with np.errstate(all="ignore"):
            y = _bcast(fn, ad, bd, input, other)
        if _needs_grad(input, bt):
            n = _binary_node(cls, input, other, bt)
            res = make(y, True, n)
            n._saved = (save_in(input), save_in(bt)) + ((save_out(res),) if save_result else ())
            return res
        return make(y)
    op.__name__ = name
    return op


atan2 = arctan2 = _float_binary("atan2", np.arctan2, Atan2Backward0)
hypot = _float_binary("hypot", np.hypot, HypotBackward0, save_result=True)


class LogaddexpBackward0(_Binary):  # y = log(e^a + e^b); da = gy / (1 + e^(b - a)); db = gy / (1 + e^(a - b))
    __slots__ = ()
    _saved_names = ("self", "other")
    _scale = 1.0

    def backward(self, ns, g):
        a, b = ns.unpack(self)
        ga = g / (ns.exp((b - a) * self._scale) + 1) if _want(self, 0) else None
        gb = g / (ns.exp((a - b) * self._scale) + 1) if _want(self, 1) else None
        return self._red(ns, ga, gb)


class Logaddexp2Backward0(LogaddexpBackward0):     # base 2: da = gy / (1 + 2^(b - a))
    __slots__ = ()
    _scale = float(np.log(2.0))


def _logaddexp_op(name, fn, cls):
    def op(input, other, *, out=None):
        _need_tensor(name, other)
        _need_tensor(name, input, 1, "input")
        ad = binary_operands(input, other)[0]
        if ad.dtype.kind not in "fcV":
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{_dtype.from_numpy_dtype(ad.dtype).name_c}'")
        return inner(input, other, out=out)
    inner = _float_binary(name, fn, cls)
    op.__name__ = name
    return op


logaddexp = _logaddexp_op("logaddexp", np.logaddexp, LogaddexpBackward0)
logaddexp2 = _logaddexp_op("logaddexp2", np.logaddexp2, Logaddexp2Backward0)


def heaviside(input, values, *, out=None):
    """torch.heaviside: values where input == 0, else (input > 0); the two dtypes must be the same.  No
    derivative: with an input that requires grad the grad_fn is NotImplemented, as torch's."""
    _need_tensor("heaviside", input, 1, "input")
    _need_tensor("heaviside", values, 2, "values")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    a, v = input._data, values._data
    y = _bcast(lambda p, q: np.where(p == 0, q, (p > 0).astype(p.dtype)).astype(p.dtype), a, v, input, values)
    if _needs_grad(input, values):
        node = NotImplementedNode((edge(input) if input._rg else NO_EDGE, edge(values) if values._rg else NO_EDGE))
        node.what = "aten::heaviside"
        return make(y, True, node)
    return make(y)


def heaviside_(x, values):
    return _inplace(heaviside, x, values)


def atan2_(x, other):
    return _inplace(atan2, x, other)


def hypot_(x, other):
    return _inplace(hypot, x, other)


def _xlogy_arr(x, y):
    with np.errstate(all="ignore"):
        return np.where((x == 0) & ~np.isnan(y), np.zeros((), np.result_type(x, y)), x * np.log(y))


class XlogyBackward0(_Binary):      # z = x log(y); dx = gy log(y) (0 where x == 0 and y <= 0); dy = gy x / y
    __slots__ = ()
    _saved_names = ("self", "other")

    def backward(self, ns, g):
        if self.ashape is None:     # XlogyBackward1: self a number
            b, = ns.unpack(self)
            return (None, self._red(ns, None, g * self.other / b)[1])
        if self.bshape is None:     # XlogyBackward2: other a number
            a, = ns.unpack(self)
            return self._red(ns, g * float(np.log(self.other)) if self.other > 0 else
                             ns.mask(np.broadcast_to(ns.data(a) != 0, g.shape), g * float(np.log(self.other))), None)
        a, b = ns.unpack(self)
        ga = gb = None
        if _want(self, 0):
            z = np.broadcast_to((ns.data(a) == 0) & (ns.data(b) <= 0), g.shape)
            ga = ns.mask(~z, g * ns.log(ns.where(ns.const(z, g), ns.ones_like(g), g * 0 + b)))
        if _want(self, 1):
            gb = g * a / b
        return self._red(ns, ga, gb)


class XlogyBackward1(_OneEdge, XlogyBackward0):     # x a number: dy = gy x / y
    __slots__ = ()
    slot = 1


class XlogyBackward2(_OneEdge, XlogyBackward0):     # y a number: dx = gy log(y)
    __slots__ = ()


def xlogy(input, other, *, out=None):
    f = _dtype._default[0].np
    if not isinstance(input, Tensor):
        s = input
        od = other._data if other._data.dtype.kind in "fV" else other._data.astype(f)
        y = _xlogy_arr(np.asarray(s, od.dtype), od)
        if other._rg and grad.enabled:
            n = XlogyBackward1((edge(other),))
            n.ashape = n.adt = None
            n.other, n.bshape, n.bdt = s, od.shape, other._data.dtype
            n._saved = (save_in(other),)
            return make(y, True, n)
        return make(y)
    ad, bd, bt = binary_operands(input, other)
    ad, bd = _floatify(ad, bd, bt)
    y = _bcast(_xlogy_arr, ad, bd if bt is not None else np.asarray(bd, ad.dtype), input, other)
    if _needs_grad(input, bt):
        n = _binary_node(XlogyBackward0 if bt is not None else XlogyBackward2, input, other, bt)
        n._saved = (save_in(input), save_in(bt)) if bt is not None else (save_in(input),)
        return make(y, True, n)
    return make(y)


def xlogy_(x, other):
    return _inplace(xlogy, x, other)


class CopysignBackward0(_Binary):   # y = |a| sign(b); da = gy * result / self (0 where self == 0); db = 0
    __slots__ = ()
    _saved_names = ("self", "result")

    def backward(self, ns, g):
        a, y = ns.unpack(self)
        ad = ns.data(a)
        r = ns.mask(np.broadcast_to(ad != 0, g.shape), y / ns.where(ns.const(ad == 0, a), ns.ones_like(a), a))
        gb = None if self.bshape is None or not _want(self, 1) else ns.zeros_like(g)   # torch: zeros_like(other)
        return self._red(ns, g * r if _want(self, 0) else None, gb)


class CopysignBackward1(_OneEdge, CopysignBackward0):   # b a number
    __slots__ = ()


def copysign(input, other, *, out=None):
    ad, bd, bt = binary_operands(input, other)
    ad, bd = _floatify(ad, bd, bt)
    y = _bcast(np.copysign, ad, bd, input, other)
    if _needs_grad(input, bt):
        n = _binary_node(CopysignBackward0 if bt is not None else CopysignBackward1, input, other, bt)
        res = make(y, True, n)
        n._saved = (save_in(input), save_out(res))
        return res
    return make(y)


def copysign_(x, other):
    return _inplace(copysign, x, other)
