"""The gamma family and the modified Bessel functions of the first kind, with their gradients.

ops: lgamma digamma polygamma mvlgamma i0 sinc (torch.*, Tensor methods and their in-place forms)
     special_i0e special_i1 special_i1e (torch.special.i0e, i1, i1e)

The values come from the NumPy kernels of ops/special_kernels.py (PyTorch's Cephes algorithms, vectorised);
the backward formulas are PyTorch's: d lgamma = digamma, d digamma = polygamma(1, .), d polygamma(n, .) =
polygamma(n + 1, .), d mvlgamma = the sum of the digammas, d i0 = i1, d i1 = i0 - i1 / x (1/2 at 0), ...
Each one is written with ns functions, so it is itself differentiable.
"""
import math

import numpy as np

from .. import _args
from ._core import as_array, make, edge, save_in, save_out, grad, quiet, _inplace, full_precision
from ..autograd.graph import Node
from .unary import _node, _unary, _float_input
from . import unary as _U
from . import special_kernels as K

# the torch.* names (torch has no torch.lgamma_, digamma_, ...: those are Tensor methods only)
__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "i0", "i0_", "sinc", "sinc_"]


def _cast(f):
    """The kernel f computed on the array, cast back to the array's dtype."""
    def run(a):
        return as_array(f(a)).astype(a.dtype, copy=False)
    return run


def _here(cls):
    """A node class made by unary._node, declared as this module's own (tests/test_findable_nodes.py)."""
    cls.__module__ = __name__
    return cls


# -- lgamma, digamma, i0, sinc and the scaled / first-order Bessel functions: made by the factories ----
LgammaBackward0 = _here(_node("LgammaBackward0", lambda ns, g, x: g * ns.digamma(x)))
lgamma, lgamma_ = _unary("lgamma", LgammaBackward0, _cast(K.lgamma_arr))
DigammaBackward0 = _here(_node("DigammaBackward0", lambda ns, g, x: g * ns.polygamma(1, x)))
digamma, digamma_ = _unary("digamma", DigammaBackward0, _cast(K.digamma_arr))
I0Backward0 = _here(_node("I0Backward0", lambda ns, g, x: g * ns.special_i1(x)))
i0, i0_ = _unary("i0", I0Backward0, _cast(K.i0_arr))


def _i0e_bwd(ns, g, x, y):        # y = i0e(x); dx = i1e(x) - sgn(x) y
    return g * (ns.special_i1e(x) - ns.sign(x) * y)


def _i1_grad(ns, x, y, scaled):
    """d/dx of i1 (scaled=False) or i1e: i0(x) - y / x (minus sgn(x) y for i1e), 1/2 at |x| <= eps."""
    xd = ns.data(x)
    tiny = np.abs(xd) <= np.finfo(xd.dtype).eps
    safe = ns.where(ns.const(tiny, x), ns.const(as_array(np.finfo(xd.dtype).eps, xd.dtype), x), x)
    if scaled:
        gx = ns.special_i0e(safe) - y * (ns.sign(safe) + ns.reciprocal(safe))
    else:
        gx = ns.i0(safe) - y * ns.reciprocal(safe)
    return ns.where(ns.const(tiny, x), ns.const(as_array(0.5, xd.dtype), x), gx)


class _SelfResult(Node):
    """Base of the Bessel nodes that save both the input and the result."""
    __slots__ = ()
    stack_rule = "generic"
    _saved_names = ("self", "result")

    def backward(self, ns, g):
        x, y = ns.unpack(self)
        return (self._f(ns, g, x, y),)


class SpecialI0EBackward0(_SelfResult):
    __slots__ = ()
    _f = staticmethod(_i0e_bwd)


class SpecialI1Backward0(_SelfResult):
    __slots__ = ()
    _f = staticmethod(lambda ns, g, x, y: g * _i1_grad(ns, x, y, False))


class SpecialI1EBackward0(_SelfResult):
    __slots__ = ()
    _f = staticmethod(lambda ns, g, x, y: g * _i1_grad(ns, x, y, True))


def _self_result_op(name, cls, kernel, full=False):
    """torch.special.<name>: a float elementwise op whose node saves the input and the result (`full`: torch's
    kernel has no float16 / bfloat16)."""
    f = _cast(kernel)

    def fn(input, *, out=None):
        a = _float_input(input)
        if full:
            full_precision(name[len("special_"):] + "_cpu", a.dtype)
        y = as_array(quiet(f, a))
        if input._rg and grad.enabled:
            n = cls((edge(input),))
            res = make(y, True, n)
            n._saved = (save_in(input), save_out(res))
            return res
        return make(y)
    fn.__name__ = fn.__qualname__ = name
    return fn


special_i0e = _self_result_op("special_i0e", SpecialI0EBackward0, K.i0e_arr)
special_i1 = _self_result_op("special_i1", SpecialI1Backward0, K.i1_arr)
special_i1e = _self_result_op("special_i1e", SpecialI1EBackward0, K.i1e_arr)


def _sinc_bwd(ns, g, x):          # PyTorch's sinc_backward: (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at 0
    xpi = x * math.pi
    sq = x * x * math.pi
    out = g * (xpi * ns.cos(xpi) - ns.sin(xpi)) / sq
    return ns.where(ns.const(ns.data(sq) == 0, g), g * 0, out)


SincBackward0 = _here(_node("SincBackward0", _sinc_bwd))
sinc, sinc_ = _unary("sinc", SincBackward0, _cast(K.sinc_arr))


# -- polygamma(n, x), written by hand: the node keeps n ------------------------------------------------
class PolygammaBackward0(Node):     # y = psi^(n)(x); dx = gy psi^(n+1)(x)
    __slots__ = ("n",)
    stack_rule = "generic"
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        return (g * ns.polygamma(self.n + 1, x),)


class PolygammaBackward1(PolygammaBackward0):  # the in-place form's node (x.polygamma_(n)), same formula
    __slots__ = ()


def _order(n, fn):
    n = _args.int_arg(n, fn, "n", 1)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return n


def polygamma(n, input, *, out=None, _cls=PolygammaBackward0):
    n = _order(n, "polygamma")
    _args.tensor_arg(input, "polygamma", "input", 2)
    a = _float_input(input)
    y = as_array(quiet(lambda u: as_array(K.polygamma_arr(n, u)).astype(u.dtype, copy=False), a))
    if input._rg and grad.enabled:
        node = _cls((edge(input),))
        node.n = n
        node._saved = (save_in(input),)
        return make(y, True, node)
    return make(y)


def polygamma_method(x, n):
    """Tensor.polygamma: x.polygamma(n) is polygamma(n, x)."""
    return polygamma(n, x)


def polygamma_(x, n):
    n = _order(n, "polygamma_")
    return _inplace(lambda t: polygamma(n, t, _cls=PolygammaBackward1), x)


# -- mvlgamma(x, p) = sum_j lgamma(x - j/2) + p (p - 1) / 4 log(pi), written by hand ----------------------
def _mv_offsets(p):
    return np.arange(-p * 0.5 + 0.5, 0.5, 0.5)


class MvlgammaBackward0(Node):      # dx = gy sum_j digamma(x - j/2)
    __slots__ = ("p",)
    stack_rule = "generic"
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        s = None
        for c in _mv_offsets(self.p):
            d = ns.digamma(x + float(c))
            s = d if s is None else s + d
        return (g * s,)


def _mvlgamma_arr(a, p):
    x = a.astype(np.float64)
    y = sum(K.lgamma_arr(x + c) for c in _mv_offsets(p)) + p * (p - 1) * math.log(math.pi) * 0.25
    return as_array(y).astype(a.dtype, copy=False)


def mvlgamma(input, p, *, out=None):
    _args.tensor_arg(input, "mvlgamma", "input", 1)
    p = _args.int_arg(p, "mvlgamma", "p", 2)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    a = _float_input(input)
    y = quiet(_mvlgamma_arr, a, p)
    if input._rg and grad.enabled:
        node = MvlgammaBackward0((edge(input),))
        node.p = p
        node._saved = (save_in(input),)
        return make(y, True, node)
    return make(y)


def mvlgamma_(x, p):
    p = _args.int_arg(p, "mvlgamma_", "p", 1)
    return _inplace(lambda t: mvlgamma(t, p), x)


# -- torch.special's own unary functions: entr erfcx ndtri log_ndtr ndtr ----------------------------------
SpecialEntrBackward0 = _here(_node("SpecialEntrBackward0", lambda ns, g, x: g * -(ns.log(x) + 1)))
special_entr = _unary("special_entr", SpecialEntrBackward0, K.entr_arr, inplace=False)[0]
SpecialNdtriBackward0 = _here(_node("SpecialNdtriBackward0",
                                    lambda ns, g, y: g * (ns.exp(y * y * 0.5) * math.sqrt(2 * math.pi)),
                                    save="result"))
_ndtri = _unary("special_ndtri", SpecialNdtriBackward0, _cast(K.ndtri_arr), inplace=False)[0]


def special_ndtri(input, *, out=None):
    full_precision("ndtri_cpu", input._data.dtype)
    return _ndtri(input)


class SpecialErfcxBackward0(_SelfResult):     # dx = 2 x erfcx(x) - 2 / sqrt(pi)
    __slots__ = ()
    _f = staticmethod(lambda ns, g, x, y: (x * y * 2.0 - 2.0 / math.sqrt(math.pi)) * g)


class SpecialLogNdtrBackward0(_SelfResult):   # dx = exp(-(y + x^2 / 2)) / sqrt(2 pi)
    __slots__ = ()
    _f = staticmethod(lambda ns, g, x, y: g / math.sqrt(2 * math.pi) * ns.exp(-(y + x * x / 2)))


special_erfcx = _self_result_op("special_erfcx", SpecialErfcxBackward0, K.erfcx_arr, full=True)
special_log_ndtr = _self_result_op("special_log_ndtr", SpecialLogNdtrBackward0, K.log_ndtr_arr, full=True)


class MulBackward1(Node):           # y = x * c (c a C++ Scalar); dx = gy * c
    __slots__ = ("c",)

    def backward(self, ns, g):
        return (g * self.c,)


def special_ndtr(input, *, out=None):
    """The standard normal CDF, PyTorch's composite (1 + erf(x / sqrt 2)) * 0.5, whose last product is by a
    C++ Scalar (MulBackward1)."""
    _args.tensor_arg(input, "special_ndtr", "input", 1)
    h = _U.erf(input * math.sqrt(0.5)) + 1
    y = as_array(h._data * h._data.dtype.type(0.5))
    if h._rg and grad.enabled:
        n = MulBackward1((edge(h),))
        n.c = 0.5
        return make(y, True, n)
    return make(y)


def special_round(input, *, decimals=0, out=None):
    """torch.special.round: round with its decimals overload's node (RoundBackward1) even for decimals=0."""
    y = _U.round(input, decimals=decimals)
    if y._grad_fn is not None and type(y._grad_fn) is not _U.RoundBackward1:
        return make(y._data, True, _U.RoundBackward1((edge(input),)))
    return y
