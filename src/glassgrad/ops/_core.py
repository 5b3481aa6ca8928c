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
import weakref

import numpy as np

from .. import _dtype, backend
from .._tensor import Tensor, _make
from ..autograd.graph import AccumulateGrad
from ..autograd.grad_mode import state as grad  # grad.enabled is read on every op

__all__ = ["np", "Tensor", "make", "edge", "NO_EDGE", "save_in", "save_out", "grad", "as_tensor_arg", "quiet",
           "binary_operands", "check_inplace", "commit_inplace", "broadcast_error", "broadcast_shape", "sum_to"]

NO_EDGE = (None, 0)
_ndarray = np.ndarray
_FROM_NP = _dtype._FROM_NP


def edge(t):
    """The edge an op's node gets for input `t`: its grad_fn, its AccumulateGrad, or nothing."""
    b = t._base
    if b is not None and t._vbase_fn is not b._grad_fn:
        refresh_view(t, b)     # the base was rewritten in place since this view was taken
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._out_nr)
    if t._rg:
        ref = t._acc
        acc = ref() if ref is not None else None
        if acc is None:
            acc = AccumulateGrad(t)
            t._acc = weakref.ref(acc)
        return (acc, 0)
    return NO_EDGE


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


def save_in(t):
    """Save input tensor `t` for backward (version-checked when unpacked)."""
    return (t, t._vc[0])


def save_out(out):
    """Save an op's own output for backward without keeping the output Tensor alive."""
    return (out._data, out._vc, out._vc[0], out._out_nr)


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


from .view_writes import refresh_view  # noqa: E402

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


# -- in-place ops ---------------------------------------------------------------------
LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_LEAF_MSG = "a view of a leaf Variable that requires grad is being used in an in-place operation."


def check_inplace(t, shared_ok=False):
    """PyTorch's checks before writing into `t` (grad-mode checks, and memory that cannot be written).
    shared_ok: the op writes one value everywhere (fill_, zero_), which torch allows into elements that share
    memory."""
    a = t._data
    if a.__class__ is _ndarray and not a.flags.writeable and not (
            shared_ok and a.size > 1 and 0 in a.strides and backend.shared_writable(a) is not None):
        if a.size > 1 and 0 in a.strides:
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
        raise RuntimeError("the tensor's memory is read-only (a NumPy array that is not writeable): clone() it "
                           "before writing into it")
    if grad.enabled:
        base = t._base
        # torch checks the view first: a view that requires grad, or views a leaf that does, of a leaf base
        # (x = b.view(2, 3).requires_grad_() makes x and its own views such views even though b needs no grad)
        if base is not None and base._grad_fn is None and (base._rg or t._rg):
            raise RuntimeError(VIEW_LEAF_MSG)
        if t._rg and t._grad_fn is None:
            raise RuntimeError(LEAF_MSG)
    if t._extra is not None and t._extra.get("inference") and not grad.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed."
                           "You can make a clone to get a normal tensor before doing inplace update."
                           "See https://github.com/pytorch/rfcs/pull/17 for more details.")


def commit_inplace(t, out):
    """Make `t` hold the result `out` of an op applied to `t` (out-of-place result).

    The values are written into t's memory (so views and NumPy arrays sharing it see them),
    the version counter is bumped, and t takes over out's place in the graph -- through
    CopySlices on its base when `t` is a view.
    """
    src = out._data
    if src.dtype != t._data.dtype:
        src = src.astype(t._data.dtype)
    if src.shape != t._data.shape:
        raise RuntimeError(
            f"output with shape {list(t._data.shape)} doesn't match the broadcast shape {list(src.shape)}")
    np.copyto(t._data, src)
    t._vc[0] += 1
    fn = out._grad_fn
    if fn is None:
        return t
    # a saved output now lives in t's memory and version counter
    saved = fn._saved
    if saved:
        fn._saved = tuple((t._data, t._vc, t._vc[0], s[3]) if len(s) == 4 and s[0] is out._data else s
                          for s in saved)
    base = t._base
    if base is None:
        t._grad_fn = fn
        t._out_nr = out._out_nr
        t._rg = True
        return t
    from .view_writes import CopySlices, ViewFromBase
    cs = CopySlices((edge(base),) + fn.next_functions[1:], base._data.shape, t._view_fn, fn)
    base._grad_fn = cs
    base._out_nr = 0
    base._rg = True
    t._grad_fn = ViewFromBase(((cs, 0),), base._data.shape, base._data.dtype, t._view_fn)
    t._out_nr = 0
    t._rg = True
    t._vbase_fn = cs
    return t
