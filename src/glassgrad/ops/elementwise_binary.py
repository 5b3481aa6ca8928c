"""Elementwise math, part 3: binary and ternary ops, clamps, softmax.

ops: clamp clip clamp_min clamp_max minimum maximum fmin fmax atan2 arctan2 hypot xlogy copysign
     floor_divide remainder fmod float_power addcmul addcdiv
     (+ in-place forms)
"""
import numpy as np

from .. import _args, _dtype
from ._core import (Tensor, make, edge, NO_EDGE, save_in, save_out, grad, binary_operands, as_tensor_arg,
                    broadcast_shape)
from ..autograd.graph import Node
from .elementwise import _inplace, _Binary, _binary_node, _needs_grad, _bcast, div as _div, pow as _pow

__all__ = ["clamp", "clamp_", "clip", "clip_", "clamp_min", "clamp_min_", "clamp_max", "clamp_max_", "minimum",
           "maximum", "fmin", "fmax", "atan2", "arctan2", "atan2_", "hypot", "hypot_", "xlogy", "xlogy_",
           "copysign", "copysign_", "floor_divide", "floor_divide_", "remainder", "remainder_", "fmod", "fmod_",
           "float_power", "addcmul", "addcmul_", "addcdiv", "addcdiv_"]


def _need_tensor(fn, other, pos=2, arg="other"):
    if not isinstance(other, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {type(other).__name__}")


def _floatify(ad, bd, bt):
    if ad.dtype.kind != "f":
        f = _dtype._default[0].np
        ad = ad.astype(f)
        bd = bd.astype(f) if bt is not None else bd
    return ad, bd


def _red_n(F, grads, shapes, dts):
    out = []
    for g, s, d in zip(grads, shapes, dts):
        if g is not None:
            if g.shape != s:
                g = F.sum_to(g, s)
            if g.dtype != d:
                g = F.cast(g, d)
        out.append(g)
    return tuple(out)


def _want(node, i):
    return node.next_functions[i][0] is not None


# -- clamp ------------------------------------------------------------------------------------------
class ClampBackward1(Node):         # number bounds: dx = gy where min <= x <= max
    __slots__ = ("min", "max")
    _saved_names = ("self",)

    def backward(self, F, g):
        x, = F.unpack(self)
        xd = F.data(x)
        m = np.ones(xd.shape, bool)
        if self.min is not None:
            m &= xd >= self.min
        if self.max is not None:
            m &= xd <= self.max
        return (F.mask(m, g),)


class ClampBackward0(Node):         # tensor bounds (PyTorch's clamp_backward_min_max)
    __slots__ = ("shapes", "dts", "has")
    _saved_names = ("self", "min", "max")

    def backward(self, F, g):
        sv = F.unpack(self)
        x = F.data(sv[0])
        lo = F.data(sv[1]) if self.has[0] else None
        hi = F.data(sv[2 if self.has[0] else 1]) if self.has[1] else None
        gx = gl = gh = None
        if lo is not None and hi is not None:
            gx = F.mask((x >= lo) & (x <= hi), g)
            gl = F.mask((x < lo) & (lo < hi), g)
            gh = F.mask((x > hi) | (hi < lo), g)
        elif lo is not None:
            gx, gl = F.mask(x >= lo, g), F.mask(x < lo, g)
        else:
            gx, gh = F.mask(x <= hi, g), F.mask(x > hi, g)
        grads = [gx if _want(self, 0) else None, gl if _want(self, 1) else None, gh if _want(self, 2) else None]
        return _red_n(F, grads, self.shapes, self.dts)


def clamp(input, min=None, max=None, *, out=None):
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
    y = np.array(y, copy=True)
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
        from ._core import broadcast_error
        raise broadcast_error(input._data.shape, ts[1]._data.shape) from None
    y = np.array(y, copy=True)
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


class ClampMinBackward0(ClampBackward1):
    __slots__ = ()


class ClampMaxBackward0(ClampBackward1):
    __slots__ = ()


class ClampMinBackward1(_Binary):   # dx = gy where x >= min; dmin = gy where x < min
    __slots__ = ()
    _saved_names = ("self", "min")
    _op = np.greater_equal

    def backward(self, F, g):
        x, m = F.unpack(self)
        keep = self._op(F.data(x), F.data(m))
        return self._red(F, F.mask(keep, g) if _want(self, 0) else None,
                         F.mask(~keep, g) if _want(self, 1) else None)


class ClampMaxBackward1(ClampMinBackward1):
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
class MaximumBackward0(_Binary):    # ties split the gradient 0.5 / 0.5
    __slots__ = ()
    _saved_names = ("self", "other")
    _lt = np.less

    def backward(self, F, g):
        a, b = F.unpack(self)
        ad, bd = F.data(a), F.data(b)
        eq = F.const(np.broadcast_to(ad == bd, g.shape), g)
        half = g * 0.5
        ga = F.where(eq, half, F.mask(~self._lt(ad, bd), g)) if _want(self, 0) else None
        gb = F.where(eq, half, F.mask(~self._lt(bd, ad), g)) if _want(self, 1) else None
        return self._red(F, ga, gb)


class MinimumBackward0(MaximumBackward0):
    __slots__ = ()
    _lt = np.greater


class FmaxBackward0(_Binary):       # self gets gy where self >= other or other is nan
    __slots__ = ()
    _saved_names = ("self", "other")
    _ge = np.greater_equal

    def backward(self, F, g):
        a, b = F.unpack(self)
        ad, bd = F.data(a), F.data(b)
        sel = np.broadcast_to(self._ge(ad, bd) | np.isnan(bd), g.shape)
        return self._red(F, F.mask(sel, g) if _want(self, 0) else None,
                         F.mask(~sel, g) if _want(self, 1) else None)


class FminBackward0(FmaxBackward0):
    __slots__ = ()
    _ge = np.less_equal


def _minmax(name, fn, cls):
    def op(input, other, *, out=None):
        _need_tensor(name, other)
        ad, bd, bt = binary_operands(input, other)
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
class Atan2Backward0(_Binary):      # da = gy b / (a^2 + b^2); db = -gy a / (a^2 + b^2)
    __slots__ = ()
    _saved_names = ("self", "other")

    def backward(self, F, g):
        a, b = F.unpack(self)
        r = g / (a * a + b * b)
        return self._red(F, r * b if _want(self, 0) else None, -r * a if _want(self, 1) else None)


class HypotBackward0(_Binary):      # da = gy a / y; db = gy b / y
    __slots__ = ()
    _saved_names = ("self", "other", "result")

    def backward(self, F, g):
        a, b, y = F.unpack(self)
        r = g / y
        return self._red(F, r * a if _want(self, 0) else None, r * b if _want(self, 1) else None)


def _float_binary(name, fn, cls, save_result=False):
    def op(input, other, *, out=None):
        _need_tensor(name, other)
        ad, bd, bt = binary_operands(input, other)
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


def atan2_(x, other):
    return _inplace(atan2, x, other)


def hypot_(x, other):
    return _inplace(hypot, x, other)


def _xlogy_arr(x, y):
    with np.errstate(all="ignore"):
        return np.where((x == 0) & ~np.isnan(y), np.zeros((), np.result_type(x, y)), x * np.log(y))


class XlogyBackward0(_Binary):      # dx = gy log(y) (0 where x == 0 and y <= 0); dy = gy x / y
    __slots__ = ()
    _saved_names = ("self", "other")

    def backward(self, F, g):
        if self.ashape is None:     # XlogyBackward1: self a number
            b, = F.unpack(self)
            return (None, self._red(F, None, g * self.other / b)[1])
        if self.bshape is None:     # XlogyBackward2: other a number
            a, = F.unpack(self)
            return self._red(F, g * float(np.log(self.other)) if self.other > 0 else
                             F.mask(np.broadcast_to(F.data(a) != 0, g.shape), g * float(np.log(self.other))), None)
        a, b = F.unpack(self)
        ga = gb = None
        if _want(self, 0):
            z = np.broadcast_to((F.data(a) == 0) & (F.data(b) <= 0), g.shape)
            ga = F.mask(~z, g * F.log(F.where(F.const(z, g), F.ones_like(g), g * 0 + b)))
        if _want(self, 1):
            gb = g * a / b
        return self._red(F, ga, gb)


class XlogyBackward1(XlogyBackward0):
    __slots__ = ()


class XlogyBackward2(XlogyBackward0):
    __slots__ = ()


def xlogy(input, other, *, out=None):
    f = _dtype._default[0].np
    if not isinstance(input, Tensor):
        s = input
        od = other._data if other._data.dtype.kind == "f" else other._data.astype(f)
        y = _xlogy_arr(np.asarray(s, od.dtype), od)
        if other._rg and grad.enabled:
            n = XlogyBackward1((NO_EDGE, edge(other)))
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


class CopysignBackward0(_Binary):   # da = gy * result / self (0 where self == 0); db = 0
    __slots__ = ()
    _saved_names = ("self", "result")

    def backward(self, F, g):
        a, y = F.unpack(self)
        ad = F.data(a)
        r = F.mask(np.broadcast_to(ad != 0, g.shape), y / F.where(F.const(ad == 0, a), F.ones_like(a), a))
        gb = None if self.bshape is None or not _want(self, 1) else g * 0
        return self._red(F, g * r if _want(self, 0) else None, gb)


class CopysignBackward1(CopysignBackward0):
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


# -- floor_divide / remainder / fmod / float_power ---------------------------------------------------
class _FloorDivideNotImplemented(Node):
    __slots__ = ()

    def backward(self, F, g):
        raise RuntimeError("derivative for aten::floor_divide is not implemented")


_FloorDivideNotImplemented.__name__ = "torch::autograd::NotImplemented"


def floor_divide(input, other, *, out=None):
    if not isinstance(input, Tensor):
        input = as_tensor_arg(input, other)
    y = _div(input, other, rounding_mode="floor")
    if y._grad_fn is not None:
        y._grad_fn = _FloorDivideNotImplemented(y._grad_fn.next_functions)
    return y


def floor_divide_(x, other):
    return _inplace(floor_divide, x, other)


class RemainderBackward1(_Binary):  # da = gy; db = -gy * floor(a / b)
    __slots__ = ()
    _saved_names = ("self", "other")
    _round = staticmethod(np.floor)

    def backward(self, F, g):
        if self.bshape is None:
            return self._red(F, g, None)
        a, b = F.unpack(self)
        gb = None
        if _want(self, 1):
            if F.is_tensor_mode:    # a differentiable (zero-gradient) quotient, as PyTorch's
                q = _div(a, b, rounding_mode="floor" if self._round is np.floor else "trunc")
            else:
                with np.errstate(all="ignore"):
                    q = self._round(a / b)
            gb = -g * q
        return self._red(F, g, gb)


class RemainderBackward0(RemainderBackward1):
    __slots__ = ()


class FmodBackward1(RemainderBackward1):
    __slots__ = ()
    _round = staticmethod(np.trunc)


class FmodBackward0(FmodBackward1):
    __slots__ = ()


def _mod(fn, scalar_cls, tensor_cls):
    def op(input, other, *, out=None):
        if not isinstance(input, Tensor):
            input = as_tensor_arg(input, other)
        ad, bd, bt = binary_operands(input, other)
        if ad.dtype.kind in "iu" and np.any(np.asarray(bd) == 0):
            raise RuntimeError("ZeroDivisionError")
        with np.errstate(all="ignore"):
            y = _bcast(fn, ad, bd, input, other)
        if _needs_grad(input, bt) and y.dtype.kind == "f":
            n = _binary_node(scalar_cls if bt is None else tensor_cls, input, other, bt)
            n._saved = (save_in(input), save_in(bt)) if bt is not None else ()
            return make(y, True, n)
        return make(y)
    return op


def _remainder_arr(a, b):
    """PyTorch's remainder: fmod, moved into the divisor's sign (7 % -7.0 is 0., not -0.)."""
    if np.result_type(a, b).kind != "f":
        return np.remainder(a, b)
    m = np.fmod(a, b)
    return np.where((m != 0) & ((np.asarray(b) < 0) != (m < 0)), m + b, m)


remainder = _mod(_remainder_arr, RemainderBackward0, RemainderBackward1)
fmod = _mod(np.fmod, FmodBackward0, FmodBackward1)


def remainder_(x, other):
    return _inplace(remainder, x, other)


def fmod_(x, other):
    return _inplace(fmod, x, other)


def float_power(input, exponent, *, out=None):
    from .conversion import to_dtype
    if not isinstance(input, Tensor):
        input = as_tensor_arg(input, exponent)
    x = input if input._data.dtype == np.float64 else to_dtype(input, _dtype.float64)
    if isinstance(exponent, Tensor):
        e = exponent if exponent._data.dtype == np.float64 else to_dtype(exponent, _dtype.float64)
        return _pow(x, e)
    return _pow(x, float(_args.number_arg(exponent, "float_power", "exponent", 2)))


# -- addcmul / addcdiv ---------------------------------------------------------------------------------
class AddcmulBackward0(Node):       # y = s + v t1 t2
    __slots__ = ("value", "shapes", "dts")
    _saved_names = ("tensor1", "tensor2")

    def backward(self, F, g):
        t1, t2 = F.unpack(self)
        v = self.value
        return _red_n(F, [g if _want(self, 0) else None, g * (t2 * v) if _want(self, 1) else None,
                          g * (t1 * v) if _want(self, 2) else None], self.shapes, self.dts)


class AddcdivBackward0(AddcmulBackward0):   # y = s + v t1 / t2
    __slots__ = ()

    def backward(self, F, g):
        t1, t2 = F.unpack(self)
        v = self.value
        return _red_n(F, [g if _want(self, 0) else None, g * v / t2 if _want(self, 1) else None,
                          -g * v * t1 / (t2 * t2) if _want(self, 2) else None], self.shapes, self.dts)


def _addc(cls, fn, input, t1, t2, value):
    ts = [input, t1, t2]
    rt = _dtype.result_type(*ts).np
    a, b, c = (t._data.astype(rt, copy=False) for t in ts)
    if cls is AddcdivBackward0 and rt.kind in "iub":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future "
                           " release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
                           "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
                           ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter implementation: "
                           "(input + value * tensor1 / tensor2), for all dtypes.")
    value = _args.number_arg(value, "addcmul" if cls is AddcmulBackward0 else "addcdiv", "value")
    broadcast_shape(b.shape, c.shape, a.shape)
    y = (a + fn(b, c) * np.asarray(value, rt)).astype(rt)
    if grad.enabled and any(t._rg for t in ts):
        n = cls(tuple(edge(t) for t in ts))
        n.value = value
        n.shapes = [t._data.shape for t in ts]
        n.dts = [t._data.dtype for t in ts]
        n._saved = (save_in(t1), save_in(t2))
        return make(y, True, n)
    return make(y)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    return _addc(AddcmulBackward0, np.multiply, input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    with np.errstate(all="ignore"):
        return _addc(AddcdivBackward0, np.true_divide, input, tensor1, tensor2, value)


def addcmul_(x, tensor1, tensor2, *, value=1):
    return _inplace(addcmul, x, tensor1, tensor2, value=value)


def addcdiv_(x, tensor1, tensor2, *, value=1):
    return _inplace(addcdiv, x, tensor1, tensor2, value=value)
