"""Integer and floating-point bit functions: gcd lcm (integers only, no gradient), ldexp (LdexpBackward0),
frexp (FrexpBackward0 on the mantissa), nextafter (NextafterBackward0: the gradient passes to self), positive.

ops: gcd gcd_ lcm lcm_ ldexp ldexp_ frexp nextafter nextafter_ positive
"""
import math

import numpy as np

from .. import _args, _dtype
from ._core import as_array, make, edge, grad, binary_operands, broadcast_error, _inplace, save_in
from ..autograd.graph import Node
from .linalg_solve import _LaNode, wrap
from .sorting import named

__all__ = ["gcd", "gcd_", "lcm", "lcm_", "ldexp", "ldexp_", "frexp", "nextafter", "nextafter_", "positive"]


def _pair(name, input, other):
    _args.tensor_arg(other, name, "other", 2)
    a, b, _ = binary_operands(input, other)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise broadcast_error(a.shape, b.shape) from None
    return a, b


# -- gcd / lcm -------------------------------------------------------------------------------------------------
def _int_op(name, fn, input, other):
    a, b = _pair(name, input, other)
    if a.dtype.kind not in "iu":
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_dtype.c_name(a.dtype)}'")
    with np.errstate(all="ignore"):
        return make(as_array(fn(a, b), a.dtype))


def gcd(input, other, *, out=None):
    return _int_op("gcd", np.gcd, input, other)


def lcm(input, other, *, out=None):
    return _int_op("lcm", np.lcm, input, other)


def gcd_(input, other):
    return _inplace(gcd, input, other)


def lcm_(input, other):
    return _inplace(lcm, input, other)


# -- ldexp -----------------------------------------------------------------------------------------------------
class LdexpBackward0(_LaNode):
    """y = self * 2**other; dself = g * 2**other, dother = g * self * ln 2 * 2**other.  As torch's, 2**other is
    an integer power for an integer `other`: 0 where it is negative."""
    __slots__ = ()
    _saved_names = ("other", "self")

    def formula(self, g, other, x):
        if other._data.dtype.kind in "iub":
            o = other._data.astype(np.int64)
            p = make(np.where(o < 0, 0, np.left_shift(1, np.maximum(o, 0), dtype=np.int64)).astype(g._data.dtype))
        else:
            p = other.exp2()
        gx = (g * p).sum_to_size(x.shape) if self.need(0) else None
        return gx, ((g * x * math.log(2.0) * p).sum_to_size(other.shape) if self.need(1) else None)


def ldexp(input, other, *, out=None):
    _args.tensor_arg(other, "ldexp", "other", 2)
    a, b = _pair("ldexp", input, other)
    dt = a.dtype if a.dtype.kind in "fV" else _dtype._default[0].np
    with np.errstate(all="ignore"):
        y = as_array(a.astype(dt) * np.power(dt.type(2.0), b.astype(dt)), dt)
    return wrap((y,), LdexpBackward0, (input, other), (1, 0))[0]


def ldexp_(input, other):
    _args.tensor_arg(other, "ldexp_", "other", 2)
    if input._data.dtype.kind not in "fV":
        raise RuntimeError(f"ldexp can't be cast to the desired output type {_dtype.c_name(input._data.dtype)}")
    return _inplace(ldexp, input, other)


# -- frexp -----------------------------------------------------------------------------------------------------
class FrexpBackward0(Node):
    """mantissa = self / 2**exponent; dself = g / 2**exponent."""
    __slots__ = ("scale",)
    n_outputs = 2
    _saved_names = ("exponent",)

    def backward(self, ns, grads):
        g = grads[0] if isinstance(grads, (tuple, list)) else grads
        return (g * ns.const(self.scale, g),)



def frexp(input, *, out=None):
    a = input._data
    if a.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = np.frexp(a)
    m, e = as_array(m, a.dtype), as_array(e, np.int32)
    if input._rg and grad.enabled:
        n = FrexpBackward0((edge(input),))
        with np.errstate(all="ignore"):
            n.scale = as_array(np.ldexp(np.ones_like(a), -e), a.dtype)
        out = make(m, True, n, 0)
        ex = make(e)
        n._saved = (save_in(ex),)
        return named("frexp", out, ex, ("mantissa", "exponent"))
    return named("frexp", make(m), make(e), ("mantissa", "exponent"))


# -- nextafter / positive --------------------------------------------------------------------------------------------
class NextafterBackward0(Node):
    """The gradient passes to self unchanged; other gets zeros."""
    __slots__ = ("oshape", "xshape")

    def backward(self, ns, g):
        gx = ns.sum_to(g, self.xshape) if self.next_functions[0][0] is not None else None
        go = None
        if self.next_functions[1][0] is not None:
            go = ns.const(np.zeros(self.oshape, ns.data(g).dtype, like=ns.data(g)), g)
        return gx, go


def nextafter(input, other, *, out=None):
    a, b = _pair("nextafter", input, other)
    if a.dtype.kind not in "fV":
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{_dtype.c_name(a.dtype)}'")
    y = as_array(np.nextafter(a, b), a.dtype)
    if grad.enabled and (input._rg or other._rg):
        n = NextafterBackward0((edge(input), edge(other)))
        n.xshape, n.oshape = input._data.shape, other._data.shape
        return make(y, True, n)
    return make(y)


def nextafter_(input, other):
    return _inplace(nextafter, input, other)


def positive(input):
    if input._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input

