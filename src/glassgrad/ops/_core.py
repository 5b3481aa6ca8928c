"""What every op needs: edges to the graph, output wrapping, scalar handling, broadcasting
checks, in-place bookkeeping.  Kept small and branch-light: this is the hot path.

The pattern of an op (see unary.py):

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
        def backward(self, ns, gy):
            y, = ns.unpack(self)
            return (gy * y,)
"""

import numpy as np

from .. import _dtype, backend
from ..backend import as_array  # noqa: F401  (device-neutral np.asarray(result), re-exported to the op families)
from .._globals import warn_once  # noqa: F401  (torch's TORCH_WARN_ONCE, re-exported to the op families)
from .._tensor import Tensor, _make
from ..autograd.graph import edge, NO_EDGE, save_in, save_out   # the graph primitives (re-exported to ops)
from ..autograd.graph import Node
from ..autograd.grad_mode import state as grad  # grad.enabled is read on every op
from ..autograd.inplace import check_inplace, commit_inplace
from ..autograd.saved_hooks import STACK as _SAVED_HOOKS
from ._data import _array_from_data

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
        g = g.sum(axis=axes, keepdims=True) if g.dtype.kind != "V" else \
            g.sum(axis=axes, keepdims=True, dtype=np.float32).astype(g.dtype)     # bfloat16: in float32
    if lead:
        g = g.reshape(shape)
    return g

_scalar_types = (int, float, bool, complex)


def as_tensor_arg(x, like):
    """Turn a Python number or array-like operand into a Tensor (no grad) next to `like`."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return _make(np.asarray(x))
    dt = _dtype.scalar_dtype(x) if isinstance(x, _scalar_types) else None
    if dt is None:                       # a list or other data: as torch.tensor(x) reads it
        return _make(np.array(_array_from_data(x, None), copy=True))
    d = like._data if isinstance(like, Tensor) else like      # a number: a 0-d tensor on `like`'s device
    return _make(np.asarray(x, dtype=dt.np, like=d if d.__class__ is not _nd and isinstance(d, _ARRAYS) else None))


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
        if ad.dtype.kind in "fVc":
            return ad, b, None
        return ad.astype(_dtype._default[0].np), b, None
    if t is int:
        if ad.dtype.kind in "fiuVc":
            if ad.dtype.kind == "u" and b < 0 or ad.dtype.kind in "iu" and not _fits(b, ad.dtype):
                return ad, np.array(b).astype(ad.dtype)[()], None
            return ad, b, None
        return ad.astype(np.int64), b, None   # bool tensor + int -> int64
    if t is bool:
        return ad, b, None
    if t is complex:         # a complex number: the tensor's complex type (PyTorch's result_type)
        rt = _dtype.result_type(a, b).np
        return (ad if ad.dtype == rt else ad.astype(rt)), b, None
    if isinstance(b, Tensor):
        return _tensor_operands(a, ad, b)  # subclass (Parameter)
    if isinstance(b, (np.ndarray, np.generic)):
        return binary_operands(a, as_tensor_arg(b, a))
    raise TypeError(f"unsupported operand type: '{type(b).__name__}' (the other operand must be a Tensor or a "
                    "number)")


def is_operand(b):
    """Whether `b` can be the other operand of a Tensor operator (else the operator returns NotImplemented,
    as torch's do: x == 'a' is False, x < None a TypeError)."""
    return isinstance(b, (Tensor, int, float, complex, np.ndarray, np.generic))


def _tensor_operands(a, ad, b):
    bd = b._data
    if ad.__class__ is not bd.__class__:        # a host array beside a device array
        ad, bd = mixed_devices(ad, bd)
        if bd.__class__ is not b._data.__class__:   # other: a CPU scalar tensor -- it joins a's device, so the op
            b = b.to(backend.device_of(ad))         # saves it there and its gradient goes back (ToCopyBackward0)
            bd = b._data
    if ad.dtype is bd.dtype or ad.dtype == bd.dtype:
        return ad, bd, b
    rt = _dtype.result_type(a, b).np
    return (ad if ad.dtype == rt else ad.astype(rt)), (bd if bd.dtype == rt else bd.astype(rt)), b


def mixed_devices(*arrays):
    """The operands of one op, host and device arrays mixed: torch's TensorIterator lets a CPU 0-dim tensor (a
    scalar) join CUDA tensors -- here as a NumPy scalar, which a device kernel takes -- and refuses any other
    mix with its RuntimeError (the device first found that is not the CPU, then the other)."""
    dev = next((x for x in arrays if x.__class__ is not _nd and isinstance(x, _ARRAYS)), None)
    if dev is None:
        return arrays
    for x in arrays:
        if x.__class__ is _nd and x.ndim:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                               f"{backend.device_of(dev)} and cpu!")
    return tuple(x[()] if x.__class__ is _nd else x for x in arrays)


def _fits(v, npdt):
    info = np.iinfo(npdt)
    return info.min <= v <= info.max


_nd = np.ndarray
_ARRAYS = backend._ARRAYS         # host or device arrays


def _bf16_with_number(ad, bd):
    if ad.__class__ is _nd:             # (the other: a number)
        return ad.dtype.kind == "V"
    if bd.__class__ is _nd:
        return bd.dtype.kind == "V"
    a_arr, b_arr = isinstance(ad, _ARRAYS), isinstance(bd, _ARRAYS)     # device arrays
    if a_arr is b_arr:                  # two arrays: ml_dtypes' ufuncs compute in float32 already
        return False
    return (ad if a_arr else bd).dtype.kind == "V"


def _bcast_bf16(fn, ad, bd, a, b):
    """bfloat16 as torch's CPU kernels compute it: in float32, the result rounded once to bfloat16.  A Python
    number is first rounded to bfloat16 (the common dtype), but mul and div keep it as a float32 'opmath'
    scalar; a NumPy float32 scalar is one already computed in float32 (add's alpha * other)."""
    dt = (ad if isinstance(ad, _ARRAYS) and ad.dtype.kind == "V" else bd).dtype
    keep = fn is np.multiply or fn is np.true_divide
    r = _bcast(fn, _f32_operand(ad, dt, keep), _f32_operand(bd, dt, keep), a, b)
    return r.astype(dt) if r.dtype == np.float32 else r


def _f32_operand(x, dt, keep):
    if isinstance(x, _ARRAYS):
        return x.astype(np.float32)
    if keep or x.__class__ is np.float32:
        return np.float32(x)
    return np.asarray(x, np.float32).astype(dt).astype(np.float32)[()]


# -- shared by the pointwise op families (arithmetic.py, unary.py, binary.py, ternary.py) -----------------
# _bcast, the binary node _Binary (+ _binary_node, _needs_grad), the gradient reduction of an n-ary node
# (_red_n, _want), _inplace (x.op_() through op(), used by every family's in-place forms) and
# _detached_overwrite (fill_ / zero_ / the random initialisers on a non-leaf, ops/creation.py).


def _bcast(fn, ad, bd, a, b):
    """Apply a NumPy binary function, turning NumPy's broadcast error into PyTorch's."""
    if (ad.__class__ is not _nd or bd.__class__ is not _nd) and _bf16_with_number(ad, bd):
        return _bcast_bf16(fn, ad, bd, a, b)      # two bf16 arrays: ml_dtypes' ufuncs compute in float32 already
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

    def _red(self, ns, ga, gb):
        if ga is not None:
            if ga.shape != self.ashape:
                ga = ns.sum_to(ga, self.ashape)
            if ga.dtype != self.adt:
                ga = ns.cast(ga, self.adt)
        if gb is not None:
            if gb.shape != self.bshape:
                gb = ns.sum_to(gb, self.bshape)
            if gb.dtype != self.bdt:
                gb = ns.cast(gb, self.bdt)
        return ga, gb


class _OneEdge:
    """Mixin of a binary node whose other operand is a Python number where torch's node (a Scalar overload,
    e.g. FmodBackward0, XlogyBackward1) has one edge, the tensor's: `slot` says which of the binary backward's
    two gradients that is (0: the number is second, 1: it is first)."""
    __slots__ = ()
    slot = 0

    def backward(self, ns, g):
        return (super().backward(ns, g)[self.slot],)


def _sub_check(input, other):
    """ATen's sub_check: no bool operand (a bool tensor, or a Python bool) on either side."""
    a_bool = input._data.dtype == np.bool_
    b_bool = other.__class__ is bool or (isinstance(other, Tensor) and other._data.dtype == np.bool_)
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def _int_pow(a, b, dtype=None):
    """Integer a ** b with some b negative, as torch's: 1 ** -n = 1, (-1) ** -n = +-1, any other base 0."""
    y = np.power(a, np.maximum(b, 0), dtype=dtype)
    return np.where(b < 0, np.where(a == 1, 1, np.where(a == -1, 1 - 2 * (b % 2), 0)), y).astype(y.dtype)


def _complex_zero_pow(y, a, b):
    """PyTorch's complex pow (exp(b log a)): 0 ** 0 is nan + nanj."""
    if y.dtype.kind == "c":
        return np.where((a == 0) & (b == 0), y.dtype.type(complex(np.nan, np.nan)), y)
    return y


def _binary_node(cls, a, b, bt):
    """Create the node for a binary op whose inputs are tensor `a` and `b` (tensor `bt` or scalar)."""
    if bt is None:
        n = cls((edge(a),) if issubclass(cls, _OneEdge) else (edge(a), NO_EDGE))
        n.bshape = None
        n.bdt = None
        n.other = b
    else:
        if a._data.__class__ is not bt._data.__class__:   # input: a CPU scalar tensor beside a CUDA one (other moved
            n = cls((edge(a.to(bt.device)), edge(bt)))      # in _tensor_operands): its gradient goes back to the CPU
        else:
            n = cls((edge(a), edge(bt)))
        n.bshape = bt._data.shape
        n.bdt = bt._data.dtype
        n.other = None
    n.ashape = a._data.shape
    n.adt = a._data.dtype
    return n


def no_complex(x, name, fmt='"{}_cpu" not implemented for \'{}\'', exc=NotImplementedError):
    """PyTorch's error for an op without complex kernels (`fmt` gets the op name and the C++ dtype name)."""
    if x._data.dtype.kind == "c":
        raise exc(fmt.format(name, _dtype.c_name(x._data.dtype)))


def real_only(fname, *tensors):
    """The linear-algebra ops glassgrad computes for real tensors only: a clear error for complex ones (never a
    silently wrong answer)."""
    for t in tensors:
        if t._data.dtype.kind == "c":
            raise NotImplementedError(f"{fname}: complex tensors are not supported by glassgrad (real dtypes only)")


def holomorphic(bw):
    """Decorate the backward of a node whose formula is written for real numbers and whose op is holomorphic
    (products, matrix products): on a complex gradient it runs as conj(bw(conj(gy))), which is PyTorch's
    conjugate Wirtinger gradient gy * conj(f'(x))."""
    def backward(self, ns, g):
        if ns.data(g).dtype.kind != "c":
            return bw(self, ns, g)
        return tuple(None if r is None else ns.conj(r) for r in bw(self, ns, ns.conj(g)))
    backward.__name__ = bw.__name__
    return backward


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
        # under saved-tensor hooks the pack hook sees the stand-in: it gets x's old values in memory of its own
        # (as torch's pack hook gets a clone of self), so that a hook sharing its memory keeps the old values
        snap = make(x._data.copy() if _SAVED_HOOKS else x._data, x._rg, x._grad_fn, x._out_nr)
        snap._vc = [x._vc[0]]
        out = fn(snap, *args, **kw)
        _check_cast(out, x)
        saved = out._grad_fn._saved if out._grad_fn is not None else None
        if saved and not _SAVED_HOOKS and any(s[0] is snap for s in saved if s is not None and len(s) == 2):
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


def _red_n(ns, grads, shapes, dts):
    """_Binary._red for any number of inputs: each gradient summed to its input's shape, cast to its dtype."""
    out = []
    for g, s, d in zip(grads, shapes, dts):
        if g is not None:
            if g.shape != s:
                g = ns.sum_to(g, s)
            if g.dtype != d:
                g = ns.cast(g, d)
        out.append(g)
    return tuple(out)


def _want(node, i):
    """Whether input i of `node` takes a gradient (a _OneEdge node's one edge is its tensor's, whatever i)."""
    nf = node.next_functions
    return nf[i if len(nf) > 1 else 0][0] is not None


def _detached_overwrite(x, arr, name="FillBackward2"):
    """Overwrite a non-leaf with constants: its values no longer depend on its history, so the node
    (`name`, one of the classes below) passes a zero gradient back."""
    e = edge(x)
    if x._base is not None:     # a view: its base's graph is rewritten as for any in-place op (CopySlices)
        y = np.empty(x._data.shape, x._data.dtype, like=x._data)
        y[...] = arr
        out = make(y, True, _OVERWRITE_NODES[name]((e,)))
        return commit_inplace(x, out)
    backend.shared_writable(x._data)[...] = arr
    x._vc[0] += 1
    x._grad_fn = _OVERWRITE_NODES[name]((e,))
    x._out_nr = 0
    return x


class _OverwriteBackward(Node):     # x overwritten with constants; dx = 0
    __slots__ = ()

    def backward(self, ns, g):
        return (ns.zeros_like(g),)


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


# -- shared by the nodes that save their input only for PyTorch's double-backward graph (conv, pool, pad,
# grid_sample) -----------------------------------------------------------------------------------------------
class _AttachBackward(Node):
    """y = r, recorded as depending on x too (with zero gradient): PyTorch's pooling backward nodes save
    `self`, so their gradient requires grad under create_graph even where it is linear in grad."""
    __slots__ = ()

    def backward(self, ns, g):
        return (g, None)


def attach_self(ns, r, node):
    if not ns.is_tensor_mode:
        return r
    x = ns.unpack_one(node, node._saved[0])
    if not (x._rg and grad.enabled):
        return r
    n = _AttachBackward((edge(r), edge(x)))
    return make(r._data, True, n)


class NotImplementedNode(Node):
    """Stands for a PyTorch backward that has no derivative (name: torch::autograd::NotImplemented)."""
    __slots__ = ("what",)

    def backward(self, ns, g):
        raise RuntimeError(f"derivative for {self.what} is not implemented")


NotImplementedNode.__name__ = "NotImplemented"
NotImplementedNode.__qualname__ = "NotImplemented"


def ordered(a):
    """The array to order or scan for NaN in place of `a`: bfloat16 as float32 (exact both ways; ml_dtypes'
    bfloat16 sorts NaN as an ordinary value and NumPy's nan-functions do not see its NaN), anything else as is."""
    return a.astype(np.float32) if a.dtype.kind == "V" else a


def full_precision(kernel, dt):
    """torch's NotImplementedError for a CPU kernel that has no float16 / bfloat16 (most of torch.special, some
    losses and 3-d pooling), raised for NumPy dtype `dt` when it is one of those."""
    if dt.itemsize == 2 and dt.kind in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.c_name(dt)}'")
