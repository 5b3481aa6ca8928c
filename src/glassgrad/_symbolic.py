"""torch's symbolic-shape helpers as eager code sees them: sym_int, sym_float, sym_max, sym_min, sym_not,
sym_sqrt, sym_sum, sym_ite, sym_fresh_size, sym_constrain_range(_for_size), and the SymInt / SymFloat / SymBool
classes.

glassgrad traces no shapes, so no value here is ever symbolic: the helpers compute on Python numbers (and on
0-d tensors where torch's do), with torch's results, result types and errors.  The Sym* classes are torch's
Python wrappers around a shape node (``SymInt(node)``); a plain int is no SymInt, as in torch, so the
``isinstance(x, torch.SymInt)`` checks libraries make answer as they do on torch in eager mode.
"""
import builtins
import math

import numpy as np

from . import overrides as _ov

__all__ = ["SymInt", "SymFloat", "SymBool", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt",
           "sym_sum", "sym_ite", "sym_fresh_size", "sym_constrain_range", "sym_constrain_range_for_size"]

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class SymInt:
    """An int whose operations go to a shape node (``node``), as torch's: ``int()`` / ``bool()`` ask it."""

    def __init__(self, node):
        self.node = node

    def __bool__(self):
        return builtins.bool(self.node.int_() != 0)

    def __int__(self):
        return self.node.int_()

    def __index__(self):
        return self.node.int_()

    def __round__(self, ndigits=None):
        return self

    def conjugate(self):
        return self


class SymFloat:
    """A float whose operations go to a shape node (``node``), as torch's."""

    def __init__(self, node):
        self.node = node

    def __bool__(self):
        return self.node.bool_()


class SymBool:
    """A bool whose operations go to a shape node (``node``), as torch's."""

    def __init__(self, node):
        self.node = node

    def __bool__(self):
        return self.node.bool_()

    def __int__(self):
        return builtins.int(self.node.bool_())


def _dispatch(fn, args, relevant=None):
    """torch's __torch_function__ dispatch of the sym_* helpers: (True, result) when an argument's type
    implements it."""
    relevant = args if relevant is None else relevant
    if _ov.has_torch_function(relevant):
        return True, _ov.handle_torch_function(fn, relevant, *args)
    return False, None


def sym_not(a):
    """``not a`` (a SymBool's own negation when it has one)."""
    done, r = _dispatch(sym_not, (a,))
    if done:
        return r
    if hasattr(a, "__sym_not__"):
        return a.__sym_not__()
    return not a


def sym_float(a):
    """``float(a)`` (a SymFloat as it is)."""
    done, r = _dispatch(sym_float, (a,))
    if done:
        return r
    if isinstance(a, SymFloat):
        return a
    if hasattr(a, "__sym_float__"):
        return a.__sym_float__()
    return builtins.float(a)


def sym_int(a):
    """``int(a)`` (truncating a float, as int() does)."""
    done, r = _dispatch(sym_int, (a,))
    if done:
        return r
    if isinstance(a, SymInt):
        return a
    if isinstance(a, SymFloat):
        return math.trunc(a)
    return builtins.int(a)


_ALL_TYPES = (np.integer, np.floating, builtins.int, builtins.float)
_FLOAT_TYPES = (np.floating, builtins.float)


def _check_number(x):
    if not isinstance(x, _ALL_TYPES):
        raise AssertionError(f"expected {_ALL_TYPES}, got {type(x)}")


def _sym_extremum(fn, a, b):
    _check_number(a)
    _check_number(b)
    if isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES):
        return builtins.float(fn(a, b))          # a float when either is (unlike max)
    return fn(a, b)


def sym_max(a, b):
    """max of two numbers; a float when either is a float (unlike builtins.max)."""
    done, r = _dispatch(sym_max, (a, b))
    if done:
        return r
    return _sym_extremum(builtins.max, a, b)


def sym_min(a, b):
    """min of two numbers; a float when either is a float (unlike builtins.min)."""
    done, r = _dispatch(sym_min, (a, b))
    if done:
        return r
    return _sym_extremum(builtins.min, a, b)


def sym_sum(*args):
    """sum(args); ``sym_sum([a, b])`` and ``sym_sum(a, b)`` both work."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    if _ov.has_torch_function(args):
        return _ov.handle_torch_function(sym_sum, args, args)
    return builtins.sum(args)


def sym_sqrt(a):
    """math.sqrt (of a SymInt's float)."""
    done, r = _dispatch(sym_sqrt, (a,))
    if done:
        return r
    if isinstance(a, SymInt):
        a = sym_float(a)
    if hasattr(a, "__sym_sqrt__"):
        return a.__sym_sqrt__()
    return math.sqrt(a)


sym_sqrt.__name__ = sym_sqrt.__qualname__ = "_sym_sqrt"


def sym_ite(b, t, f):
    """``t if b else f``; b must be a bool and t, f of one type."""
    done, r = _dispatch(sym_ite, (b, t, f))
    if done:
        return r
    if not isinstance(b, (SymBool, builtins.bool)):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_fresh_size(expr):
    """A fresh size from an expression: eagerly, its value as a 0-d tensor's ``item()``."""
    from .ops.creation import tensor
    return tensor(expr).item()


def _size_arg(fname, size):
    from ._tensor import Tensor
    if isinstance(size, Tensor) and size.dim() == 0 and not size.requires_grad:
        size = size.item()
    if isinstance(size, (builtins.bool, np.bool_)):
        return builtins.int(size)
    if not isinstance(size, (builtins.int, builtins.float, builtins.complex, np.number)):
        raise TypeError(f"{fname}(): argument 'size' (position 1) must be Number, not {type(size).__name__}")
    if isinstance(size, (builtins.int, np.integer)):
        if not _INT64_MIN <= size <= _INT64_MAX:
            raise OverflowError("int too big to convert")
        return builtins.int(size)
    v = complex(size)
    if v.imag != 0 or not math.isfinite(v.real) or not -2.0 ** 63 <= v.real < 2.0 ** 63:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return math.trunc(v.real)


def _bound_arg(fname, name, v, default):
    from ._tensor import Tensor
    if v is None:
        return default
    if isinstance(v, Tensor) and v.dim() == 0 and not v.is_floating_point() and not v.is_complex():
        v = v.item()
    if isinstance(v, (builtins.bool, np.bool_)) or not isinstance(v, (builtins.int, np.integer)):
        raise TypeError(f"{fname}(): argument '{name}' must be int, not {type(v).__name__}")
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    return builtins.int(v)


def _constrain(fname, size, lo, hi):
    if hi < lo:
        raise RuntimeError(f"Max must be greater than or equal to min. Got min={lo} max={hi}")
    if not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


def sym_constrain_range(size, *, min=None, max=None):
    """Checks min <= size <= max (a number, truncated to an integer; the bounds int64's by default)."""
    s = _size_arg("sym_constrain_range", size)
    lo = _bound_arg("sym_constrain_range", "min", min, _INT64_MIN)
    hi = _bound_arg("sym_constrain_range", "max", max, _INT64_MAX)
    _constrain("sym_constrain_range", s, lo, hi)


def sym_constrain_range_for_size(size, *, min=None, max=None):
    """sym_constrain_range for a size: min defaults to 0, and a max must be greater than 2."""
    fname = "sym_constrain_range_for_size"
    s = _size_arg(fname, size)
    lo = _bound_arg(fname, "min", min, 0)
    hi = _bound_arg(fname, "max", max, _INT64_MAX)
    if max is not None and hi <= 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. got: {hi}")
    _constrain(fname, s, lo, hi)
