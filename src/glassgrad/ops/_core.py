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


# -- shared by the pointwise op families (arithmetic.py, unary.py, binary.py, ternary.py) -----------------
# _bcast, the binary node _Binary (+ _binary_node, _needs_grad), the gradient reduction of an n-ary node
# (_red_n, _want), _inplace (x.op_() through op(), used by every family's in-place forms) and
# _detached_overwrite (fill_ / zero_ / the random initialisers on a non-leaf, ops/creation.py).
from ..autograd.graph import Node  # noqa: E402


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


def _red_n(F, grads, shapes, dts):
    """_Binary._red for any number of inputs: each gradient summed to its input's shape, cast to its dtype."""
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
    """Whether input i of `node` takes a gradient."""
    return node.next_functions[i][0] is not None


def _detached_overwrite(x, arr, name="FillBackward2"):
    """Overwrite a non-leaf with constants: its values no longer depend on its history, so the node
    (`name`, one of the classes below) passes a zero gradient back."""
    e = edge(x)
    backend.shared_writable(x._data)[...] = arr
    x._vc[0] += 1
    x._grad_fn = _OVERWRITE_NODES[name]((e,))
    x._out_nr = 0
    return x


class _OverwriteBackward(Node):     # x overwritten with constants; dx = 0
    __slots__ = ()

    def backward(self, F, g):
        return (F.zeros_like(g),)


class FillBackward2(_OverwriteBackward):        # x.fill_(v), and the initialisers without a node of their own
    __slots__ = ()


class ZeroBackward0(_OverwriteBackward):        # x.zero_()
    __slots__ = ()


class UniformBackward0(_OverwriteBackward):     # x.uniform_()
    __slots__ = ()


class NormalBackward0(_OverwriteBackward):      # x.normal_()
    __slots__ = ()


class RandomBackward0(_OverwriteBackward):      # x.random_()
    __slots__ = ()


class RandomBackward1(_OverwriteBackward):      # x.random_(to)
    __slots__ = ()


class RandomBackward2(_OverwriteBackward):      # x.random_(from, to)
    __slots__ = ()


class BernoulliBackward1(_OverwriteBackward):   # x.bernoulli_(p) with a tensor p
    __slots__ = ()


class BernoulliBackward2(_OverwriteBackward):   # x.bernoulli_(p) with a number p
    __slots__ = ()


class ExponentialBackward0(_OverwriteBackward):     # x.exponential_()
    __slots__ = ()


_OVERWRITE_NODES = {c.__name__: c for c in (FillBackward2, ZeroBackward0, UniformBackward0, NormalBackward0,
                                            RandomBackward0, RandomBackward1, RandomBackward2, BernoulliBackward1,
                                            BernoulliBackward2, ExponentialBackward0)}
