"""Comparisons and logic: results never require grad.

ops: eq ne lt le gt ge (+ in-place forms and the aliases greater less not_equal ...),
     isnan isinf isfinite isposinf isneginf isreal signbit, logical_and/or/xor/not (+_),
     bitwise_and/or/xor/not (+_), bitwise_left_shift bitwise_right_shift, allclose isclose equal
"""
import numpy as np

from .. import _dtype
from ._core import Tensor, as_array, make, edge, grad, binary_operands, broadcast_error, as_tensor_arg, _inplace
from ..autograd.graph import Node

__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
           "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit",
           "logical_and", "logical_or", "logical_xor", "logical_not",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
           "bitwise_left_shift", "bitwise_right_shift", "allclose", "isclose", "equal"]


def _cmp(fn, a, b):
    if not isinstance(a, Tensor):
        a = as_tensor_arg(a, b)
    ad, bd, _ = binary_operands(a, b)
    try:
        return make(as_array(fn(ad, bd)))
    except ValueError:
        raise broadcast_error(ad.shape, getattr(bd, "shape", ())) from None


def eq(input, other, *, out=None):
    return _cmp(np.equal, input, other)


def ne(input, other, *, out=None):
    return _cmp(np.not_equal, input, other)


def _order(fn, name, a, b):
    """An ordering comparison: PyTorch refuses complex operands."""
    for x in (a, b):
        if isinstance(x, Tensor) and x._data.dtype.kind == "c" or isinstance(x, complex):
            c = x._data.dtype if isinstance(x, Tensor) else np.dtype(np.complex128)
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_dtype.c_name(c)}\'')
    return _cmp(fn, a, b)


def lt(input, other, *, out=None):
    return _order(np.less, "lt", input, other)


def le(input, other, *, out=None):
    return _order(np.less_equal, "le", input, other)


def gt(input, other, *, out=None):
    return _order(np.greater, "gt", input, other)


def ge(input, other, *, out=None):
    return _order(np.greater_equal, "ge", input, other)


greater = gt
greater_equal = ge
less = lt
less_equal = le
not_equal = ne


def _inplace_nograd(fn, x, *args):
    """x.op_(other): the result written into x, cast to x's dtype (PyTorch's in-place semantics)."""
    return _inplace(fn, x, *args)


def _check_result_cast(x, res_dt):
    rd = _dtype.from_numpy_dtype(res_dt)
    xd = _dtype.from_numpy_dtype(x._data.dtype)
    if not _dtype.can_cast(rd, xd):
        raise RuntimeError(f"result type {rd.name_c} can't be cast to the desired output type {xd.name_c}")


class _CmpInplaceBackward(Node):
    """x.eq_(other) on a tensor that requires grad: the result is piecewise constant, zero gradient."""
    __slots__ = ("shapes",)

    def backward(self, ns, g):
        return tuple(None if s is None else ns.zeros(s, g) for s in self.shapes)


def _cmp_inplace(fn, scalar_cls, tensor_cls, x, other):
    def op(a, b):
        r = fn(a, b)
        bt = b if isinstance(b, Tensor) else None
        if grad.enabled and (a._rg or (bt is not None and bt._rg)):
            if bt is None:
                n = scalar_cls((edge(a),))
                n.shapes = (a._data.shape,)
            else:
                n = tensor_cls((edge(a), edge(bt)))
                n.shapes = (a._data.shape, bt._data.shape)
            return make(r._data.astype(a._data.dtype), True, n)
        return r
    return _inplace_nograd(op, x, other)


class EqBackward0(_CmpInplaceBackward):   # x.eq_(number): x = (x == number); dx = 0
    __slots__ = ()


class EqBackward1(_CmpInplaceBackward):   # x.eq_(other): x = (x == other); dx = dother = 0
    __slots__ = ()


def eq_(x, other):
    return _cmp_inplace(eq, EqBackward0, EqBackward1, x, other)


class NeBackward0(_CmpInplaceBackward):   # x.ne_(number): x = (x != number); dx = 0
    __slots__ = ()


class NeBackward1(_CmpInplaceBackward):   # x.ne_(other): x = (x != other); dx = dother = 0
    __slots__ = ()


def ne_(x, other):
    return _cmp_inplace(ne, NeBackward0, NeBackward1, x, other)


class LtBackward0(_CmpInplaceBackward):   # x.lt_(number): x = (x < number); dx = 0
    __slots__ = ()


class LtBackward1(_CmpInplaceBackward):   # x.lt_(other): x = (x < other); dx = dother = 0
    __slots__ = ()


def lt_(x, other):
    return _cmp_inplace(lt, LtBackward0, LtBackward1, x, other)


class LeBackward0(_CmpInplaceBackward):   # x.le_(number): x = (x <= number); dx = 0
    __slots__ = ()


class LeBackward1(_CmpInplaceBackward):   # x.le_(other): x = (x <= other); dx = dother = 0
    __slots__ = ()


def le_(x, other):
    return _cmp_inplace(le, LeBackward0, LeBackward1, x, other)


class GtBackward0(_CmpInplaceBackward):   # x.gt_(number): x = (x > number); dx = 0
    __slots__ = ()


class GtBackward1(_CmpInplaceBackward):   # x.gt_(other): x = (x > other); dx = dother = 0
    __slots__ = ()


def gt_(x, other):
    return _cmp_inplace(gt, GtBackward0, GtBackward1, x, other)


class GeBackward0(_CmpInplaceBackward):   # x.ge_(number): x = (x >= number); dx = 0
    __slots__ = ()


class GeBackward1(_CmpInplaceBackward):   # x.ge_(other): x = (x >= other); dx = dother = 0
    __slots__ = ()


def ge_(x, other):
    return _cmp_inplace(ge, GeBackward0, GeBackward1, x, other)


# -- classification -----------------------------------------------------------------------------
def _kind(x):
    return x._data.dtype.kind


def isnan(input):
    a = input._data
    return make(np.isnan(a) if a.dtype.kind in "fcV" else np.zeros(a.shape, bool, like=a))


def isinf(input):
    a = input._data
    return make(np.isinf(a) if a.dtype.kind in "fcV" else np.zeros(a.shape, bool, like=a))


def isfinite(input):
    a = input._data
    return make(np.isfinite(a) if a.dtype.kind in "fcV" else np.ones(a.shape, bool, like=a))


def isposinf(input, *, out=None):
    a = input._data
    return make(np.isposinf(a) if a.dtype.kind in "fV" else np.zeros(a.shape, bool, like=a))


def isneginf(input, *, out=None):
    a = input._data
    return make(np.isneginf(a) if a.dtype.kind in "fV" else np.zeros(a.shape, bool, like=a))


def isreal(input):
    a = input._data
    return make(as_array(a.imag == 0) if a.dtype.kind == "c" else np.ones(a.shape, bool, like=a))


def signbit(input, *, out=None):
    a = input._data
    if a.dtype.kind == "b":
        return make(np.zeros(a.shape, bool, like=a))
    if a.dtype.kind == "u":
        return make(np.zeros(a.shape, bool, like=a))
    return make(as_array(np.signbit(a)))


# -- logical ----------------------------------------------------------------------------------------
def _tensor_other(name, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")


def _logical(name, fn, input, other):
    _tensor_other(name, other)
    try:
        return make(as_array(fn(input._data, other._data)))
    except ValueError:
        raise broadcast_error(input._data.shape, other._data.shape) from None


def logical_and(input, other, *, out=None):
    return _logical("logical_and", np.logical_and, input, other)


def logical_or(input, other, *, out=None):
    return _logical("logical_or", np.logical_or, input, other)


def logical_xor(input, other, *, out=None):
    return _logical("logical_xor", np.logical_xor, input, other)


def logical_not(input, *, out=None):
    return make(as_array(np.logical_not(input._data)))


def logical_and_(x, other):
    return _inplace_nograd(logical_and, x, other)


def logical_or_(x, other):
    return _inplace_nograd(logical_or, x, other)


def logical_xor_(x, other):
    return _inplace_nograd(logical_xor, x, other)


def logical_not_(x):
    return _inplace_nograd(logical_not, x)


# -- bitwise ----------------------------------------------------------------------------------------
def _not_impl(kernel, a):
    nm = _dtype.from_numpy_dtype(a.dtype).name_c
    raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{nm}\'')


def _bitwise(kernel, fn, input, other):
    if not isinstance(input, Tensor):
        input, other = as_tensor_arg(input, other), other
    ad, bd, bt = binary_operands(input, other)
    if ad.dtype.kind in "fcV":
        _not_impl(kernel, ad)
    if isinstance(bd, float):
        _not_impl(kernel, np.asarray(bd, _dtype._default[0].np))
    try:
        return ad, bd, as_array(fn(ad, bd))
    except ValueError:
        raise broadcast_error(ad.shape, getattr(bd, "shape", ())) from None


def bitwise_and(input, other, *, out=None):
    return make(_bitwise("bitwise_and", np.bitwise_and, input, other)[2])


def bitwise_or(input, other, *, out=None):
    return make(_bitwise("bitwise_or", np.bitwise_or, input, other)[2])


def bitwise_xor(input, other, *, out=None):
    return make(_bitwise("bitwise_xor", np.bitwise_xor, input, other)[2])


def bitwise_not(input, *, out=None):
    a = input._data
    if a.dtype.kind in "fcV":
        _not_impl("bitwise_not", a)
    return make(as_array(np.invert(a)))


def _bitwise_inplace(fn, x, other):
    if isinstance(other, Tensor):
        rd = _dtype.result_type(x, other).np
        _check_result_cast(x, rd)
    return _inplace_nograd(fn, x, other)


def bitwise_and_(x, other):
    return _bitwise_inplace(bitwise_and, x, other)


def bitwise_or_(x, other):
    return _bitwise_inplace(bitwise_or, x, other)


def bitwise_xor_(x, other):
    return _bitwise_inplace(bitwise_xor, x, other)


def bitwise_not_(x):
    return _inplace_nograd(bitwise_not, x)


def _lshift(a, b):
    a = as_array(a)
    bits = a.dtype.itemsize * 8
    b = as_array(b)
    bad = (b < 0) | (b >= bits)
    with np.errstate(all="ignore"):
        r = np.left_shift(a, np.where(bad, 0, b).astype(b.dtype)).astype(a.dtype)
    return np.where(bad, np.zeros((), r.dtype), r)


def _rshift(a, b):
    a = as_array(a)
    bits = a.dtype.itemsize * 8
    b = as_array(b)
    bad = (b < 0) | (b >= bits)
    with np.errstate(all="ignore"):
        r = np.right_shift(a, np.where(bad, 0, b).astype(b.dtype)).astype(a.dtype)
    fill = np.where(a < 0, -1, 0).astype(r.dtype) if a.dtype.kind == "i" else np.zeros((), r.dtype)
    return np.where(bad, fill, r)


def bitwise_left_shift(input, other, *, out=None):
    return make(_bitwise("lshift", _lshift, input, other)[2])


def bitwise_right_shift(input, other, *, out=None):
    return make(_bitwise("rshift", _rshift, input, other)[2])


def bitwise_left_shift_(x, other):
    return _bitwise_inplace(bitwise_left_shift, x, other)


def bitwise_right_shift_(x, other):
    return _bitwise_inplace(bitwise_right_shift, x, other)


# -- closeness ---------------------------------------------------------------------------------------
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _tensor_other("isclose", other)
    a, b = input._data, other._data
    if a.dtype != b.dtype:
        raise RuntimeError(f"{_dtype.from_numpy_dtype(a.dtype).name_c} did not match "
                           f"{_dtype.from_numpy_dtype(b.dtype).name_c}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise broadcast_error(a.shape, b.shape) from None
    if a.dtype.kind == "b":
        return make(as_array(a == b))
    if a.dtype.kind in "iu":
        a = a.astype(np.float64)
        b = b.astype(np.float64)
    with np.errstate(all="ignore"):
        close = a == b
        fin = np.isfinite(a) & np.isfinite(b)
        close = close | (fin & (np.abs(a - b) <= atol + rtol * np.abs(b)))
        if equal_nan:
            close = close | (np.isnan(a) & np.isnan(b))
    return make(as_array(close))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.all(isclose(input, other, rtol, atol, equal_nan)._data))


def equal(input, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"equal(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    a, b = input._data, other._data
    if a.shape != b.shape:
        return False
    return bool(np.array_equal(a, b))
