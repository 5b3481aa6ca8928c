"""Comparisons and logic: results never require grad.

ops: eq ne lt le gt ge (more in later sections: isnan isinf isfinite logical_* bitwise_* allclose
     isclose equal ...)
"""
import numpy as np

from ._core import Tensor, make, binary_operands, broadcast_error, as_tensor_arg

__all__ = ["eq", "ne", "lt", "le", "gt", "ge"]


def _cmp(fn, a, b):
    if not isinstance(a, Tensor):
        a = as_tensor_arg(a, b)
    ad, bd, _ = binary_operands(a, b)
    try:
        return make(np.asarray(fn(ad, bd)))
    except ValueError:
        raise broadcast_error(ad.shape, getattr(bd, "shape", ())) from None


def eq(input, other, *, out=None):
    if other is None:
        return False
    return _cmp(np.equal, input, other)


def ne(input, other, *, out=None):
    if other is None:
        return True
    return _cmp(np.not_equal, input, other)


def lt(input, other, *, out=None):
    return _cmp(np.less, input, other)


def le(input, other, *, out=None):
    return _cmp(np.less_equal, input, other)


def gt(input, other, *, out=None):
    return _cmp(np.greater, input, other)


def ge(input, other, *, out=None):
    return _cmp(np.greater_equal, input, other)
