"""Elementwise arithmetic and math.

ops: add sub rsub mul div rdiv neg exp log sqrt pow rpow where copy_ and the in-place forms
     add_ sub_ mul_ div_ pow_ (more in later sections of this file)

Binary ops broadcast; their backward sums the gradient back to each input's shape and casts
it to the input's dtype (an op computed in a promoted dtype hands each input a gradient of
its own dtype, as PyTorch does).
"""
import numpy as np

from .. import _args, _dtype, backend
from ._core import (Tensor, make, edge, NO_EDGE, save_in, save_out, grad, binary_operands, broadcast_error,
                    check_inplace, commit_inplace, as_tensor_arg, quiet)
from ._core import FP_DEFAULT, fp_state
from ..autograd.graph import Node

__all__ = ["add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "neg",
           "negative", "exp", "log", "sqrt", "pow"]


# -- shared machinery ------------------------------------------------------------------------
def _bcast(fn, ad, bd, a, b):
    """Apply a NumPy binary function, turning NumPy's broadcast error into PyTorch's."""
    try:
        if fp_state.get() is FP_DEFAULT:    # quiet(fn, ad, bd) inlined: the hot path of every binary op
            try:
                return fn(ad, bd)
            except (RuntimeWarning, FloatingPointError):
                pass
        return quiet(fn, ad, bd)
    except ValueError:
        bs = bd.shape if hasattr(bd, "shape") else ()
        raise broadcast_error(ad.shape, bs) from None


class _Binary(Node):
    """Node of a binary op: remembers each input's shape and dtype to reduce its gradient."""
    __slots__ = ("ashape", "bshape", "adt", "bdt", "other")

    def _red(self, F, ga, gb):
        if ga is not None:
            if ga.shape != self.ashape:
                ga = F.sum_to(ga, self.ashape)
            if ga.dtype != self.adt:
                ga = F.cast(ga, self.adt)
        if gb is not None:
            if gb.shape != self.bshape:
                gb = F.sum_to(gb, self.bshape)
            if gb.dtype != self.bdt:
                gb = F.cast(gb, self.bdt)
        return ga, gb


def _binary_node(cls, a, b, bt):
    """Create the node for a binary op whose inputs are tensor `a` and `b` (tensor `bt` or scalar)."""
    if bt is None:
        n = cls((edge(a), NO_EDGE))
        n.bshape = None
        n.bdt = None
        n.other = b
    else:
        n = cls((edge(a), edge(bt)))
        n.bshape = bt._data.shape
        n.bdt = bt._data.dtype
        n.other = None
    n.ashape = a._data.shape
    n.adt = a._data.dtype
    return n


def _needs_grad(a, bt):
    return grad.enabled and (a._rg or (bt is not None and bt._rg))


def _inplace(fn, x, *args, **kw):
    """x.op_(...) = x.copy_(op(x, ...)): PyTorch's in-place semantics through the out-of-place op.

    With no gradient to track the result is simply written into x's memory.  With one, the op
    runs on a stand-in for x (same graph position), x takes the result's place in the graph,
    and if the op saved its input, the stand-in gets a copy of x's old values.
    """
    check_inplace(x)
    if grad.enabled and (x._rg or any(getattr(v, "_rg", False) for v in args)):
        snap = make(x._data, x._rg, x._grad_fn, x._out_nr)
        snap._vc = [x._vc[0]]
        out = fn(snap, *args, **kw)
        _check_cast(out, x)
        saved = out._grad_fn._saved if out._grad_fn is not None else None
        if saved and any(s[0] is snap for s in saved if len(s) == 2):
            snap._data = x._data.copy()
        return commit_inplace(x, out)
    out = fn(x, *args, **kw)
    _check_cast(out, x)
    return commit_inplace(x, out)


def _check_cast(out, x):
    """PyTorch refuses to write a result into a tensor of a lower dtype category (float into long)."""
    rd, xd = out._data.dtype, x._data.dtype
    if rd != xd:
        r, t = _dtype.from_numpy_dtype(rd), _dtype.from_numpy_dtype(xd)
        if not _dtype.can_cast(r, t):
            raise RuntimeError(f"result type {r.name_c} can't be cast to the desired output type {t.name_c}")


def _detached_overwrite(x, arr, name="FillBackward2"):
    """Overwrite a non-leaf with constants: its values no longer depend on its history, so the node
    (PyTorch's FillBackward2, ZeroBackward0, NormalBackward0, ...) passes a zero gradient back."""
    e = edge(x)
    backend.shared_writable(x._data)[...] = arr
    x._vc[0] += 1
    x._grad_fn = _overwrite_node(name)((e,))
    x._out_nr = 0
    return x


class _OverwriteBackward(Node):
    __slots__ = ()

    def backward(self, F, g):
        return (F.zeros_like(g),)


_OVERWRITE_NODES = {}


def _overwrite_node(name):
    cls = _OVERWRITE_NODES.get(name)
    if cls is None:
        cls = _OVERWRITE_NODES[name] = type(name, (_OverwriteBackward,), {"__slots__": ()})
    return cls


# -- add / sub ----------------------------------------------------------------------------------
class AddBackward0(_Binary):        # y = a + alpha * b; da = gy; db = alpha * gy
    __slots__ = ("alpha",)

    def backward(self, F, g):
        gb = None
        if self.bshape is not None:
            gb = g if self.alpha == 1 else g * self.alpha
        return self._red(F, g, gb)


class SubBackward0(AddBackward0):   # y = a - alpha * b; da = gy; db = -alpha * gy
    __slots__ = ()

    def backward(self, F, g):
        gb = None
        if self.bshape is not None:
            gb = -g if self.alpha == 1 else g * (-self.alpha)
        return self._red(F, g, gb)


class RsubBackward1(_Binary):       # y = other - alpha * a (other a scalar); da = -alpha * gy
    __slots__ = ("alpha",)

    def backward(self, F, g):
        return self._red(F, -g if self.alpha == 1 else g * (-self.alpha), None)


class RsubBackward0(_Binary):       # y = b - alpha * a (b a tensor)
    __slots__ = ("alpha",)

    def backward(self, F, g):
        return self._red(F, -g if self.alpha == 1 else g * (-self.alpha), g)


def _check_alpha(a_dtype_kind, alpha, fn="add"):
    _args.number_arg(alpha, fn, "alpha")
    if isinstance(alpha, float) and a_dtype_kind in "iub" and alpha != int(alpha):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def add(input, other, *, alpha=1, out=None):
    if not isinstance(input, Tensor):
        input, other = as_tensor_arg(input, other), other
    ad, bd, bt = binary_operands(input, other)
    if alpha != 1:
        _check_alpha(ad.dtype.kind, alpha)
        y = _bcast(np.add, ad, bd * alpha if bt is None else bd * np.asarray(alpha, bd.dtype), input, other)
    else:
        y = _bcast(np.add, ad, bd, input, other)
    if _needs_grad(input, bt):
        n = _binary_node(AddBackward0, input, other, bt)
        n.alpha = alpha
        return make(y, True, n)
    return make(y)


def sub(input, other, *, alpha=1, out=None):
    if not isinstance(input, Tensor):
        input = as_tensor_arg(input, other)
    ad, bd, bt = binary_operands(input, other)
    if ad.dtype == np.bool_ and (bt is None or bd.dtype == np.bool_) and not isinstance(bd, float):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if alpha != 1:
        _check_alpha(ad.dtype.kind, alpha)
        y = _bcast(np.subtract, ad, bd * alpha if bt is None else bd * np.asarray(alpha, bd.dtype), input, other)
    else:
        y = _bcast(np.subtract, ad, bd, input, other)
    if _needs_grad(input, bt):
        n = _binary_node(SubBackward0, input, other, bt)
        n.alpha = alpha
        return make(y, True, n)
    return make(y)


subtract = sub


def rsub(input, other, *, alpha=1):
    """other - alpha * input (what `2 - x` calls)."""
    ad, bd, bt = binary_operands(input, other)
    y = _bcast(np.subtract, bd, ad * alpha if alpha != 1 else ad, input, other)
    if _needs_grad(input, bt):
        n = _binary_node(RsubBackward1 if bt is None else RsubBackward0, input, other, bt)
        n.alpha = alpha
        return make(y, True, n)
    return make(y)


# -- mul / div ------------------------------------------------------------------------------------
class MulBackward0(_Binary):        # y = a * b; da = gy * b; db = gy * a
    __slots__ = ()
    _saved_names = ("self", "other")

    def backward(self, F, g):
        if self.bshape is None:                      # b is a Python number
            return self._red(F, g * self.other, None)
        a, b = F.unpack(self)
        ga = None if self.next_functions[0][0] is None else g * b
        gb = None if self.next_functions[1][0] is None else g * a
        return self._red(F, ga, gb)


def _save_pair(n, a, bt):
    """Save a and b for a product-like backward (only what the other input's gradient needs)."""
    n._saved = (save_in(a), save_in(bt))


def mul(input, other, *, out=None):
    if not isinstance(input, Tensor):
        input, other = other, input
    ad, bd, bt = binary_operands(input, other)
    y = _bcast(np.multiply, ad, bd, input, other)
    if _needs_grad(input, bt):
        n = _binary_node(MulBackward0, input, other, bt)
        if bt is not None:
            _save_pair(n, input, bt)
        return make(y, True, n)
    return make(y)


multiply = mul


class DivBackward0(_Binary):        # y = a / b; da = gy / b; db = -gy * a / b**2
    __slots__ = ()
    _saved_names = ("self", "other")

    def backward(self, F, g):
        if self.bshape is None:
            return self._red(F, g / self.other, None)
        a, b = F.unpack(self)
        ga = None if self.next_functions[0][0] is None else g / b
        gb = None if self.next_functions[1][0] is None else -g * a / (b * b)
        return self._red(F, ga, gb)


class DivBackward2(DivBackward0):   # rounding_mode given: zero gradient (piecewise constant)
    __slots__ = ()

    def backward(self, F, g):
        z = F.zeros_like(g) * 0
        return self._red(F, z, None if self.bshape is None else z)


def _true_div_operands(input, other):
    ad, bd, bt = binary_operands(input, other)
    if ad.dtype.kind in "iub" and (bt is None and not isinstance(bd, float) or bt is not None and bd.dtype.kind in "iub"):
        f = _dtype._default[0].np
        ad = ad.astype(f)
        bd = bd.astype(f) if bt is not None else bd
    return ad, bd, bt


def div(input, other, *, rounding_mode=None, out=None):
    if not isinstance(input, Tensor):
        input = as_tensor_arg(input, other)
    if rounding_mode is None:
        ad, bd, bt = _true_div_operands(input, other)
        y = _bcast(np.true_divide, ad, bd, input, other)
        if _needs_grad(input, bt):
            n = _binary_node(DivBackward0, input, other, bt)
            if bt is not None:
                _save_pair(n, input, bt)
            return make(y, True, n)
        return make(y)
    ad, bd, bt = binary_operands(input, other)
    if rounding_mode == "trunc":
        if ad.dtype.kind in "iu":
            _int_zero_check(bd)
            y = _bcast(lambda p, q: np.trunc(np.true_divide(p, q)).astype(p.dtype), ad, bd, input, other)
        else:
            y = _bcast(lambda p, q: np.trunc(np.true_divide(p, q)), ad, bd, input, other)
    elif rounding_mode == "floor":
        if ad.dtype.kind in "iu":
            _int_zero_check(bd)
        y = _bcast(np.floor_divide, ad, bd, input, other)
    else:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    if _needs_grad(input, bt) and y.dtype.kind == "f":
        return make(y, True, _binary_node(DivBackward2, input, other, bt))
    return make(y)


def _int_zero_check(bd):
    if np.any(np.asarray(bd) == 0):
        raise RuntimeError("ZeroDivisionError")


divide = div


def true_divide(input, other):
    return div(input, other)


def rdiv(input, other):
    """other / input, what `2 / x` calls: PyTorch computes reciprocal(x) * other."""
    if isinstance(other, Tensor):
        return div(other, input)
    from . import elementwise as _self
    r = _self.reciprocal(input) if hasattr(_self, "reciprocal") else div(1.0, input)
    return mul(r, other)


# -- unary ---------------------------------------------------------------------------------------
class NegBackward0(Node):           # y = -x; dx = -gy
    __slots__ = ()

    def backward(self, F, g):
        return (-g,)


def neg(input, *, out=None):
    if input._data.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    y = np.negative(input._data)
    if input._rg and grad.enabled:
        return make(y, True, NegBackward0((edge(input),)))
    return make(y)


negative = neg


def _float_input(x):
    """Integer inputs of a float function compute in the default float dtype."""
    a = x._data
    return a if a.dtype.kind == "f" else a.astype(_dtype._default[0].np)


class ExpBackward0(Node):           # y = exp(x); dx = gy * y
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, F, g):
        y, = F.unpack(self)
        return (g * y,)


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
    _saved_names = ("self",)

    def backward(self, F, g):
        x, = F.unpack(self)
        return (g / x,)


def log(input, *, out=None):
    y = quiet(np.log, _float_input(input))
    if input._rg and grad.enabled:
        n = LogBackward0((edge(input),))
        n._saved = (save_in(input),)
        return make(y, True, n)
    return make(y)


class SqrtBackward0(Node):          # y = sqrt(x); dx = gy / (2 y)
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, F, g):
        y, = F.unpack(self)
        return (g / (2 * y),)


def sqrt(input, *, out=None):
    y = quiet(np.sqrt, _float_input(input))
    if input._rg and grad.enabled:
        n = SqrtBackward0((edge(input),))
        out = make(y, True, n)
        n._saved = (save_out(out),)
        return out
    return make(y)


# -- pow -------------------------------------------------------------------------------------------
class PowBackward0(Node):           # y = x ** p (p a number); dx = gy * p * x ** (p - 1)
    __slots__ = ("exponent",)
    _saved_names = ("self",)

    def backward(self, F, g):
        x, = F.unpack(self)
        p = self.exponent
        if p == 0:
            return (g * 0,)
        return (g * (p * F.pow(x, p - 1)),)


class PowBackward1(_Binary):        # y = a ** b; da = gy * b * a ** (b - 1); db = gy * y * log(a)
    __slots__ = ()
    _saved_names = ("self", "exponent", "result")

    def backward(self, F, g):
        a, b, y = F.unpack(self)
        ga = gb = None
        if self.next_functions[0][0] is not None:
            ga = F.where(F.const(F.data(b) == 0, g), g * 0, g * b * F.pow(a, b - 1))
        if self.next_functions[1][0] is not None:
            gb = F.where(F.const((F.data(a) == 0) & (F.data(b) >= 0), g), g * 0, g * y * F.log(a))
        return self._red(F, ga, gb)


class PowBackward2(_Binary):        # y = s ** b (s a number); db = gy * y * log(s)
    __slots__ = ()
    _saved_names = ("exponent", "result")

    def backward(self, F, g):
        b, y = F.unpack(self)
        s = self.other
        if s == 0:
            return (None, F.where(F.const(F.data(b) >= 0, g), g * 0, g * y * float(np.log(s) if s > 0 else np.nan)))
        return (None, self._red(F, None, g * y * float(np.log(s)))[1])


def pow(input, exponent, *, out=None):
    if not isinstance(input, Tensor):
        return rpow(exponent, input)
    ad, bd, bt = binary_operands(input, exponent)
    if bt is None:
        if ad.dtype.kind in "iu" and isinstance(bd, int) and bd < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        y = np.power(ad, bd)
        if input._rg and grad.enabled:
            n = PowBackward0((edge(input),))
            n.exponent = bd
            n._saved = (save_in(input),)
            return make(y, True, n)
        return make(y)
    if ad.dtype.kind in "iu" and np.any(bd < 0):     # torch: 1 ** -n = 1, (-1) ** -n = +-1, others 0
        y = _bcast(np.power, ad, np.maximum(bd, 0), input, exponent)
        y = np.where(bd < 0, np.where(ad == 1, 1, np.where(ad == -1, 1 - 2 * (bd % 2), 0)), y).astype(y.dtype)
    else:
        y = _bcast(np.power, ad, bd, input, exponent)
    if _needs_grad(input, bt):
        n = _binary_node(PowBackward1, input, exponent, bt)
        out = make(y, True, n)
        n._saved = (save_in(input), save_in(bt), save_out(out))
        return out
    return make(y)


def rpow(input, other):
    """other ** input with `other` a number (what `2 ** x` calls)."""
    if isinstance(other, Tensor):
        return pow(other, input)
    _args.number_arg(other, "pow", "self", 1)
    ed = input._data
    base = np.asarray(other, dtype=ed.dtype if ed.dtype.kind == "f" or isinstance(other, int) else
                      _dtype._default[0].np)
    y = np.power(base, ed)
    if input._rg and grad.enabled:
        n = PowBackward2((NO_EDGE, edge(input)))
        n.other = other
        n.ashape = None
        n.adt = None
        n.bshape = ed.shape
        n.bdt = ed.dtype
        out = make(y, True, n)
        n._saved = (save_in(input), save_out(out))
        return out
    return make(y)


# -- copy_ and in-place arithmetic ------------------------------------------------------------------
class CopyBackwards(Node):          # x.copy_(src); dsrc = gy (summed to src's shape, cast to its dtype)
    __slots__ = ("src_shape", "src_dt")

    def backward(self, F, g):
        gs = F.sum_to(g, self.src_shape)
        return (F.zeros_like(g), F.cast(gs, self.src_dt))


def _copy_from(x, src):
    s = src._data if isinstance(src, Tensor) else np.asarray(src)
    try:
        arr = np.broadcast_to(s, x._data.shape)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({x._data.shape[-1] if x._data.ndim else 1}) must match the "
                           f"size of tensor b ({s.shape[-1] if s.ndim else 1}) at non-singleton dimension "
                           f"{max(x._data.ndim - 1, 0)}") from None
    return arr.astype(x._data.dtype, copy=True)


def copy_(x, src, non_blocking=False):
    check_inplace(x)
    if not isinstance(src, (Tensor, int, float, np.generic)):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {_args.type_name(src)}")
    if not isinstance(src, Tensor):
        src = as_tensor_arg(src, x)
    if grad.enabled and (x._rg or src._rg):
        arr = _copy_from(x, src)
        n = CopyBackwards((edge(x), edge(src)))
        n.src_shape = src._data.shape
        n.src_dt = src._data.dtype
        return commit_inplace(x, make(arr, True, n))
    x._data[...] = _copy_from(x, src)
    x._vc[0] += 1
    return x


def add_(x, other, *, alpha=1):
    return _inplace(add, x, other, alpha=alpha)


def sub_(x, other, *, alpha=1):
    return _inplace(sub, x, other, alpha=alpha)


def mul_(x, other):
    return _inplace(mul, x, other)


def div_(x, other, *, rounding_mode=None):
    return _inplace(div, x, other, rounding_mode=rounding_mode)


def pow_(x, exponent):
    return _inplace(pow, x, exponent)


def exp_(x):
    return _inplace(exp, x)


def log_(x):
    return _inplace(log, x)


def sqrt_(x):
    return _inplace(sqrt, x)


def neg_(x):
    return _inplace(neg, x)


true_divide_ = div_


# -- the rest of the family lives in elementwise_more.py (unary math) and elementwise_binary.py --------
from . import elementwise_more as _more, elementwise_binary as _binary  # noqa: E402
from .elementwise_more import *  # noqa: E402,F401,F403
from .elementwise_binary import *  # noqa: E402,F401,F403

__all__ += ["true_divide_", "neg_", "exp_", "log_", "sqrt_"] + _more.__all__ + _binary.__all__
