"""Arithmetic: the operators + - * / ** // % and their torch functions.

ops: add sub subtract rsub mul multiply div divide true_divide rdiv neg negative pow rpow square
     floor_divide remainder fmod float_power copy_
     and the in-place forms add_ sub_ mul_ div_ true_divide_ pow_ neg_ (negative_) floor_divide_ remainder_ fmod_
     square_ float_power_

Binary ops broadcast; their backward (a `_Binary` node, ops/_core.py) sums the gradient back to
each input's shape and casts it to the input's dtype (an op computed in a promoted dtype hands
each input a gradient of its own dtype, as PyTorch does).
"""
import numpy as np

from .. import _args, _dtype, backend
from ._core import (_OneEdge, _sub_check, _int_pow, _complex_zero_pow, Tensor, as_array, make, edge, save_in, save_out, grad, binary_operands, check_inplace,
                    commit_inplace, as_tensor_arg, _bcast, _Binary, _binary_node, _needs_grad, _want, _inplace)
from ..autograd.graph import Node
from .conversion import to_dtype
from .unary import reciprocal

__all__ = ["add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "neg",
           "negative", "negative_", "pow", "true_divide_", "neg_", "floor_divide", "floor_divide_", "remainder",
           "remainder_", "fmod", "fmod_", "float_power", "square", "square_"]


# -- add / sub ----------------------------------------------------------------------------------
class AddBackward0(_Binary):        # y = a + alpha * b; da = gy; db = alpha * gy
    __slots__ = ("alpha",)
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        gb = None
        if self.bshape is not None:
            gb = g if self.alpha == 1 else g * _cj(self.alpha)
        return self._red(ns, g, gb)


class SubBackward0(AddBackward0):   # y = a - alpha * b; da = gy; db = -alpha * gy
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        gb = None
        if self.bshape is not None:
            gb = -g if self.alpha == 1 else g * (-_cj(self.alpha))
        return self._red(ns, g, gb)


class RsubBackward1(_OneEdge, _Binary):       # y = other - alpha * a (other a scalar); da = -alpha * gy
    __slots__ = ("alpha",)
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):       # one edge, as torch's (the number has none)
        return self._red(ns, -g if self.alpha == 1 else g * (-self.alpha), None)[:1]


class RsubBackward0(_Binary):       # y = b - alpha * a (b a tensor); da = -alpha * gy; db = gy
    __slots__ = ("alpha",)
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return self._red(ns, -g if self.alpha == 1 else g * (-self.alpha), g)


def _check_alpha(a_dtype_kind, alpha, fn="add"):
    _args.number_arg(alpha, fn, "alpha", complex_ok=a_dtype_kind == "c")
    if isinstance(alpha, float) and a_dtype_kind in "iub" and alpha != int(alpha):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _times_alpha(ad, b, alpha):
    """A Python number times alpha; for bfloat16 both are rounded to bfloat16 and multiplied in float32."""
    if ad.dtype.kind != "V":
        return b * alpha
    r = np.array([b, alpha], np.float32).astype(ad.dtype).astype(np.float32)
    return r[0] * r[1]


def add(input, other, *, alpha=1, out=None):
    if not isinstance(input, Tensor):
        input, other = as_tensor_arg(input, other), other
    ad, bd, bt = binary_operands(input, other)
    if alpha != 1:
        _check_alpha(ad.dtype.kind, alpha)
        y = _bcast(np.add, ad, _times_alpha(ad, bd, alpha) if bt is None else bd * np.asarray(alpha, bd.dtype), input, other)
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
    _sub_check(input, other)
    if alpha != 1:
        _check_alpha(ad.dtype.kind, alpha)
        y = _bcast(np.subtract, ad, _times_alpha(ad, bd, alpha) if bt is None else bd * np.asarray(alpha, bd.dtype), input, other)
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
    _sub_check(input, other)
    y = _bcast(np.subtract, bd, ad * alpha if alpha != 1 else ad, input, other)
    if _needs_grad(input, bt):
        n = _binary_node(RsubBackward1 if bt is None else RsubBackward0, input, other, bt)
        n.alpha = alpha
        return make(y, True, n)
    return make(y)


# -- mul / div ------------------------------------------------------------------------------------
class MulBackward0(_Binary):        # y = a * b; da = gy * b; db = gy * a
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)
    _saved_names = ("self", "other")

    def backward(self, ns, g):
        if self.bshape is None:                      # b is a Python number
            return self._red(ns, g * _cj(self.other), None)
        a, b = ns.unpack(self)
        ga = None if self.next_functions[0][0] is None else g * ns.conj(b)     # complex: gy * conj(other)
        gb = None if self.next_functions[1][0] is None else g * ns.conj(a)
        return self._red(ns, ga, gb)


def _cj(v):
    """The conjugate of a Python number (complex gradients: PyTorch's conjugate Wirtinger convention)."""
    return v.conjugate() if v.__class__ is complex else v


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
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)
    _saved_names = ("self", "other")

    def backward(self, ns, g):
        if self.bshape is None:
            return self._red(ns, g / _cj(self.other), None)
        a, b = ns.unpack(self)
        b = ns.conj(b)
        ga = None if self.next_functions[0][0] is None else g / b
        gb = None if self.next_functions[1][0] is None else -g * ns.conj(a) / (b * b)
        return self._red(ns, ga, gb)


class DivBackward2(DivBackward0):   # rounding_mode given: zero gradient (piecewise constant)
    __slots__ = ()
    stack_rule = None     # not verified for stacked gradients (explain.attribute calls it per term)

    def backward(self, ns, g):
        z = ns.zeros_like(g) * 0
        return self._red(ns, z, None if self.bshape is None else z)


class DivBackward1(Node):           # y = x / c (c a C++ Scalar in x's dtype); dx = gy / c
    __slots__ = ("c",)

    def backward(self, ns, g):
        return (g / self.c,)


def _div_scalar(x, c):
    """x / c with c cast to x's dtype first: PyTorch's division by a C++ Scalar (node DivBackward1), which
    its loss functions use (nn/functional/_loss.py)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        y = as_array(x._data / x._data.dtype.type(c))
    if x._rg and grad.enabled:
        n = DivBackward1((edge(x),))
        n.c = c
        return make(y, True, n)
    return make(y)


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
    if ad.dtype.kind == "c":
        raise NotImplementedError(f'"div_{rounding_mode}_cpu" not implemented for \'{_dtype.c_name(ad.dtype)}\'')
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
    if _needs_grad(input, bt) and y.dtype.kind in "fV":
        return make(y, True, _binary_node(DivBackward2, input, other, bt))
    return make(y)


def _int_zero_check(bd):
    if np.any(as_array(bd) == 0):
        raise RuntimeError("ZeroDivisionError")


divide = div


def true_divide(input, other):
    return div(input, other)


def rdiv(input, other):
    """other / input, what `2 / x` calls: PyTorch computes reciprocal(x) * other."""
    if isinstance(other, Tensor):
        return div(other, input)
    return mul(reciprocal(input), other)


# -- neg -----------------------------------------------------------------------------------------
class NegBackward0(Node):           # y = -x; dx = -gy
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
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


# -- pow -------------------------------------------------------------------------------------------
class PowBackward0(Node):           # y = x ** p (p a number); dx = gy * p * x ** (p - 1)
    __slots__ = ("exponent",)
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        p = self.exponent
        if p == 0:
            return (ns.zeros_like(g),)        # torch: zeros_like(self), whatever the gradient (NaN included)
        if ns.data(x).dtype.kind == "c" or p.__class__ is complex:
            return (g * ns.conj(p * ns.pow(x, p - 1)),)
        return (g * (p * ns.pow(x, p - 1)),)


class PowBackward1(_Binary):        # y = a ** b; da = gy * b * a ** (b - 1); db = gy * y * log(a)
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)
    _saved_names = ("self", "exponent", "result")

    def backward(self, ns, g):
        a, b, y = ns.unpack(self)
        if ns.data(y).dtype.kind == "c":
            return self._complex(ns, g, a, b, y)
        ga = gb = None
        if self.next_functions[0][0] is not None:
            ga = ns.where(ns.const(ns.data(b) == 0, g), ns.zeros_like(g), g * b * ns.pow(a, b - 1))  # torch: 0, NaN grad too
        if self.next_functions[1][0] is not None:
            gb = ns.where(ns.const((ns.data(a) == 0) & (ns.data(b) >= 0), g), g * 0, g * y * ns.log(a))
        return self._red(ns, ga, gb)


    def _complex(self, ns, g, a, b, y):       # PyTorch's pow_backward_self / _exponent with conjugates
        ga = gb = None
        bd, ad = ns.data(b), ns.data(a)
        a = a if ad.dtype.kind == "c" else ns.cast(a, ns.data(y).dtype)     # computed in the complex type
        if self.next_functions[0][0] is not None:
            ga = ns.where(ns.const(bd == 0, g), g * 0, g * ns.conj(b * ns.pow(a, b - 1)))
        if self.next_functions[1][0] is not None:
            real_exp = (np.imag(bd) == 0) & (np.real(bd) >= 0)
            gb = ns.where(ns.const((ad == 0) & real_exp, g), g * 0, g * ns.conj(y * ns.log(a)))
        return self._red(ns, ga, gb)


class PowBackward2(_Binary):        # y = s ** b (s a number); db = gy * y * log(s)
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)
    _saved_names = ("exponent", "result")

    def backward(self, ns, g):
        b, y = ns.unpack(self)
        s = self.other
        if ns.data(y).dtype.kind == "c":        # db = gy * conj(y log(s)), complex log
            return (self._red(ns, None, g * ns.conj(y * complex(np.log(complex(s)))))[1],)
        if s == 0:
            return (ns.where(ns.const(ns.data(b) >= 0, g), g * 0, g * y * float(np.log(s) if s > 0 else np.nan)),)
        return (self._red(ns, None, g * y * float(np.log(s)))[1],)     # one edge, as torch's


def pow(input, exponent, *, out=None):
    if not isinstance(input, Tensor):
        return rpow(exponent, input)
    ad, bd, bt = binary_operands(input, exponent)
    if bt is None:
        if ad.dtype.kind in "iu" and isinstance(bd, int) and bd < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        y = np.power(ad, bd) if ad.dtype.kind != "V" else _bcast(np.power, ad, bd, input, exponent)
        if input._rg and grad.enabled:
            n = PowBackward0((edge(input),))
            n.exponent = bd
            n._saved = (save_in(input),)
            return make(y, True, n)
        return make(y)
    y = _int_pow(ad, bd) if ad.dtype.kind in "iu" and np.any(bd < 0) else _bcast(np.power, ad, bd, input, exponent)
    y = _complex_zero_pow(y, ad, bd)
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
    _args.number_arg(other, "pow", "self", 1, complex_ok=True)
    ed = input._data
    rt = _dtype.result_type(input, other).np        # 2 ** bool: int64; 2.5 ** int: float
    if rt == np.bool_ and ed.size:
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    base = np.array(other).astype(rt)               # an integer base wraps into the dtype ((-3) ** uint8: 253)
    dt = base.dtype if ed.dtype.kind in "iub" and base.dtype.kind in "iuf" else None
    y = _int_pow(base, ed, dt) if rt.kind in "iu" and ed.dtype.kind in "iu" and (ed < 0).any() else \
        np.power(base, ed, dtype=dt)
    y = _complex_zero_pow(y, base, ed)
    if input._rg and grad.enabled:
        n = PowBackward2((edge(input),))
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
    __slots__ = ("src_shape", "src_dt", "src_dev")

    def backward(self, ns, g):
        gs = ns.cast(ns.sum_to(g, self.src_shape), self.src_dt)
        if self.src_dev is not None:        # a copy between devices: src's gradient goes back to src's device
            gs = gs.to(self.src_dev) if ns.is_tensor_mode else backend.to_device(gs, self.src_dev)
        return (ns.zeros_like(g), gs)


def _copy_from(x, src):
    s = src._data if isinstance(src, Tensor) else as_array(src)
    if s.__class__ is not x._data.__class__ and (s.ndim or s.__class__ is not np.ndarray):   # a copy between
        # devices, as torch's copy_ makes (a 0-d device array into a host tensor too: load_state_dict's counters)
        s = backend.to_device(s, backend.device_of(x._data))
    try:
        arr = np.broadcast_to(s, x._data.shape)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({x._data.shape[-1] if x._data.ndim else 1}) must match the "
                           f"size of tensor b ({s.shape[-1] if s.ndim else 1}) at non-singleton dimension "
                           f"{max(x._data.ndim - 1, 0)}") from None
    return arr.astype(x._data.dtype, copy=True)


def copy_(x, src, non_blocking=False):
    check_inplace(x)
    if not isinstance(src, (Tensor, int, float, complex, np.generic)):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {_args.type_name(src)}")
    if not isinstance(src, Tensor):
        src = as_tensor_arg(src, x)
    if grad.enabled and (x._rg or src._rg):
        arr = _copy_from(x, src)
        n = CopyBackwards((edge(x), edge(src)))
        n.src_shape = src._data.shape
        n.src_dt = src._data.dtype
        n.src_dev = None if src._data.__class__ is x._data.__class__ else backend.device_of(src._data)
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


def square(input, *, out=None):         # y = x ** 2: pow's node (PowBackward0), as PyTorch
    if input._data.dtype == np.bool_:
        input = to_dtype(input, _dtype.int64)
    return pow(input, 2)


def square_(x):
    return _inplace(square, x)


def neg_(x):
    return _inplace(neg, x)


true_divide_ = div_
negative_ = neg_


# -- floor_divide / remainder / fmod / float_power ---------------------------------------------------
class _FloorDivideNotImplemented(Node):    # y = floor(a / b): PyTorch has no derivative, its backward raises
    __slots__ = ()

    def backward(self, ns, g):
        raise RuntimeError("derivative for aten::floor_divide is not implemented")


_FloorDivideNotImplemented.__name__ = "torch::autograd::NotImplemented"


def floor_divide(input, other, *, out=None):
    if not isinstance(input, Tensor):
        input = as_tensor_arg(input, other)
    y = div(input, other, rounding_mode="floor")
    if y._grad_fn is not None:
        y._grad_fn = _FloorDivideNotImplemented(y._grad_fn.next_functions)
    return y


def floor_divide_(x, other):
    return _inplace(floor_divide, x, other)


class RemainderBackward1(_Binary):  # y = a - b floor(a / b); da = gy; db = -gy * floor(a / b)
    __slots__ = ()
    _saved_names = ("self", "other")
    _round = staticmethod(np.floor)

    def backward(self, ns, g):
        if self.bshape is None:
            return self._red(ns, g, None)
        a, b = ns.unpack(self)
        gb = None
        if _want(self, 1):
            if ns.is_tensor_mode:    # a differentiable (zero-gradient) quotient, as PyTorch's
                q = div(a, b, rounding_mode="floor" if self._round is np.floor else "trunc")
            else:
                with np.errstate(all="ignore"):
                    q = self._round(a / b)
            gb = -g * q
        return self._red(ns, g, gb)


class RemainderBackward0(_OneEdge, RemainderBackward1):  # b a number: da = gy
    __slots__ = ()


class FmodBackward1(RemainderBackward1):   # y = a - b trunc(a / b); da = gy; db = -gy * trunc(a / b)
    __slots__ = ()
    _round = staticmethod(np.trunc)


class FmodBackward0(_OneEdge, FmodBackward1):        # b a number: da = gy
    __slots__ = ()


def _mod(fn, scalar_cls, tensor_cls):
    def op(input, other, *, out=None):
        if not isinstance(input, Tensor):
            input = as_tensor_arg(input, other)
        ad, bd, bt = binary_operands(input, other)
        if ad.dtype.kind == "c":
            raise NotImplementedError(f'"{"remainder" if fn is _remainder_arr else "fmod"}_cpu" not implemented for \'{_dtype.c_name(ad.dtype)}\'')
        if ad.dtype.kind in "iu" and np.any(as_array(bd) == 0):
            raise RuntimeError("ZeroDivisionError")
        with np.errstate(all="ignore"):
            y = _bcast(fn, ad, bd, input, other)
        if _needs_grad(input, bt) and y.dtype.kind in "fV":
            n = _binary_node(scalar_cls if bt is None else tensor_cls, input, other, bt)
            n._saved = (save_in(input), save_in(bt)) if bt is not None else ()
            return make(y, True, n)
        return make(y)
    return op


def _remainder_arr(a, b):
    """PyTorch's remainder: fmod, moved into the divisor's sign (7 % -7.0 is 0., not -0.)."""
    if np.result_type(a, b).kind not in "fV":
        return np.remainder(a, b)
    m = np.fmod(a, b)
    return np.where((m != 0) & ((as_array(b) < 0) != (m < 0)), m + b, m)


remainder = _mod(_remainder_arr, RemainderBackward0, RemainderBackward1)
fmod = _mod(np.fmod, FmodBackward0, FmodBackward1)


def remainder_(x, other):
    return _inplace(remainder, x, other)


def fmod_(x, other):
    return _inplace(fmod, x, other)


def float_power_(self, exponent):
    if self._data.dtype != np.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dtype.c_name(self._data.dtype)} but the "
                           "operation's result requires dtype Double")
    return _inplace(float_power, self, exponent)


def float_power(input, exponent, *, out=None):
    if not isinstance(input, Tensor):
        input = as_tensor_arg(input, exponent)
    x = input if input._data.dtype == np.float64 else to_dtype(input, _dtype.float64)
    if isinstance(exponent, Tensor):
        e = exponent if exponent._data.dtype == np.float64 else to_dtype(exponent, _dtype.float64)
        return pow(x, e)
    return pow(x, float(_args.number_arg(exponent, "float_power", "exponent", 2)))
