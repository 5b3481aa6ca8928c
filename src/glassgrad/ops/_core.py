"""What every op needs: edges to the graph, output wrapping, scalar handling, broadcasting
checks, in-place bookkeeping.  Kept small and branch-light: this is the hot path.

The pattern of an op (see elementwise.py):

    def exp(x):                                  # y = exp(x); dx = gy * y
        y = np.exp(x._data)
        if x._rg and grad.enabled:               # cheap test first
            n = ExpBackward0((edge(x),))
            out = make(y, True, n)
            n._saved = (save_out(out),)
            return out
        return make(y)

    class ExpBackward0(Node):
        __slots__ = ()
        _saved_names = ("result",)
        def backward(self, F, gy):
            y, = F.unpack(self)
            return (gy * y,)
"""
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from ..autograd.graph import edge, NO_EDGE, save_in, save_out   # the graph primitives (re-exported to ops)
from ..autograd.grad_mode import state as grad  # grad.enabled is read on every op
from ..autograd.inplace import check_inplace, commit_inplace

__all__ = ["np", "Tensor", "make", "edge", "NO_EDGE", "save_in", "save_out", "grad", "as_tensor_arg", "quiet",
           "binary_operands", "check_inplace", "commit_inplace", "broadcast_error", "broadcast_shape", "sum_to"]


class _NotDefault:
    @staticmethod
    def get():
        return None


try:    # NumPy's floating-point error state (NumPy >= 2: a context variable holding the current settings)
    from numpy._core._ufunc_config import _extobj_contextvar as fp_state
    FP_DEFAULT = fp_state.get()
except (ImportError, AttributeError, LookupError):
    fp_state, FP_DEFAULT = _NotDefault, object()     # unknown NumPy internals: always use np.errstate


def quiet(f, *args):
    """f(*args) without NumPy floating-point warnings or errors about inf / nan (PyTorch is silent).

    With NumPy's default settings the warnings are already dropped by the filter glassgrad installs for
    its own modules (__init__.py), so f runs directly: ``np.errstate`` costs ~1.5 us per use, more than a
    small op itself.  When the user changed the settings (``np.seterr(all="raise")`` ...), or their warning
    filters turn the warning into an exception, f runs (again) inside ``np.errstate``: `f` must be free
    of side effects."""
    if fp_state.get() is FP_DEFAULT:
        try:
            return f(*args)
        except (RuntimeWarning, FloatingPointError):
            pass        # the caller's warning filters turned NumPy's warning into an error: redo it silently
    with np.errstate(all="ignore"):
        return f(*args)


make = _make    # make(data, rg=False, fn=None, nr=0): wrap an op's result (the hot path: no extra call)


def broadcast_error(a_shape, b_shape):
    """PyTorch's message for two shapes that do not broadcast."""
    na, nb = len(a_shape), len(b_shape)
    n = max(na, nb)
    for i in range(1, n + 1):
        da = a_shape[-i] if i <= na else 1
        db = b_shape[-i] if i <= nb else 1
        if da != db and da != 1 and db != 1:
            return RuntimeError(
                f"The size of tensor a ({da}) must match the size of tensor b ({db}) "
                f"at non-singleton dimension {n - i}")
    return RuntimeError(f"shapes {tuple(a_shape)} and {tuple(b_shape)} cannot be broadcast")


def broadcast_shape(*shapes):
    """The shape `shapes` broadcast to, with PyTorch's error for the first one that does not fit."""
    out = ()
    for s in shapes:
        try:
            out = np.broadcast_shapes(out, s)
        except ValueError:
            raise broadcast_error(out, s) from None
    return out


def sum_to(g, shape):
    """Sum array `g` down to `shape` (undo broadcasting)."""
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and g.shape[i + lead] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    if lead:
        g = g.reshape(shape)
    return g

_scalar_types = (int, float, bool)


def as_tensor_arg(x, like):
    """Turn a Python number or array-like operand into a Tensor (no grad) next to `like`."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return _make(np.asarray(x))
    dt = _dtype.scalar_dtype(x) if isinstance(x, _scalar_types) else None
    if dt is None:
        from .creation import tensor
        return tensor(x)
    return _make(np.asarray(x, dtype=dt.np))


def binary_operands(a, b):
    """Arrays for a binary elementwise op, cast to PyTorch's result dtype.

    Returns (a_arr, b_arr_or_scalar, b_tensor_or_None).  A Python number stays a Python
    number (NumPy 2 treats it as weakly typed, as PyTorch does) unless it must raise the
    category (int tensor * 2.5).
    """
    ad = a._data
    if b.__class__ is Tensor:
        return _tensor_operands(a, ad, b)
    t = b.__class__
    if t is float:
        if ad.dtype.kind == "f":
            return ad, b, None
        return ad.astype(_dtype._default[0].np), b, None
    if t is int:
        if ad.dtype.kind in "fiu":
            if ad.dtype.kind == "u" and b < 0 or ad.dtype.kind in "iu" and not _fits(b, ad.dtype):
                return ad, np.array(b).astype(ad.dtype)[()], None
            return ad, b, None
        return ad.astype(np.int64), b, None   # bool tensor + int -> int64
    if t is bool:
        return ad, b, None
    if isinstance(b, Tensor):
        return _tensor_operands(a, ad, b)  # subclass (Parameter)
    if isinstance(b, (np.ndarray, np.generic)):
        return binary_operands(a, as_tensor_arg(b, a))
    raise TypeError(f"unsupported operand type: '{type(b).__name__}' (the other operand must be a Tensor or a "
                    "number)")


def is_operand(b):
    """Whether `b` can be the other operand of a Tensor operator (else the operator returns NotImplemented,
    as torch's do: x == 'a' is False, x < None a TypeError)."""
    return isinstance(b, (Tensor, int, float, np.ndarray, np.generic))


def _tensor_operands(a, ad, b):
    bd = b._data
    if ad.dtype is bd.dtype or ad.dtype == bd.dtype:
        return ad, bd, b
    rt = _dtype.result_type(a, b).np
    return (ad if ad.dtype == rt else ad.astype(rt)), (bd if bd.dtype == rt else bd.astype(rt)), b


def _fits(v, npdt):
    info = np.iinfo(npdt)
    return info.min <= v <= info.max
