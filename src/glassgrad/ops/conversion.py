"""dtype and device conversions, clone.

ops: to (dtype / device / other tensor), type, float/double/long/... (via to_dtype), clone,
     contiguous (via clone), cpu/cuda (via to_device), view(dtype)
"""
import warnings

import numpy as np

from .. import _args, _dtype, backend
from .. import _memory_format as _mf
from .._tensor import element_strides
from .._device import as_device, device as _device_cls
from ._core import Tensor, make, edge, grad, as_tensor_arg  # noqa: F401  (as_tensor_arg re-exported)
from ..autograd.graph import Node

__all__ = ["to_dtype", "to_device", "clone", "to", "type_", "dtype_of_np", "scalar_like"]


def dtype_of_np(npdt):
    return _dtype.from_numpy_dtype(npdt)


class ToCopyBackward0(Node):         # y = x.to(dtype); dx = gy.to(x.dtype)
    __slots__ = ("in_dtype", "in_device")
    stack_rule = "generic"    # the formula works on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (ns.cast(g, self.in_dtype),)


def to_dtype(x, dtype, copy=False):
    npdt = dtype.np
    a = x._data
    if a.dtype == npdt and not copy:
        return x
    if a.dtype.kind == "c" and npdt == np.bool_:
        arr = a != 0
    elif a.dtype.kind == "c" and npdt.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
        arr = a.real.astype(npdt)
    else:
        arr = _dtype.cast(a, npdt)
    if not a.flags.c_contiguous:         # torch's preserve rule (NumPy's order K differs on overlapping inputs)
        arr = _relaid(arr, _to_strides(a, None))
    if x._rg and grad.enabled and (dtype.is_floating_point or dtype.is_complex):
        n = ToCopyBackward0((edge(x),))
        n.in_dtype = a.dtype
        return make(arr, True, n)
    return make(arr)


def to_device(x, device, copy=False):
    dev = as_device(device)
    if dev.type == "cuda" and dev.index is None:
        dev = type(dev)("cuda", 0)
    if x.device == dev and not copy:
        return x
    arr = backend.to_device(x._data, dev)
    if arr is x._data:
        arr = arr.copy()
    if not x._data.flags.c_contiguous:          # the copy keeps the layout (torch's preserve rule)
        arr = _relaid(arr, _to_strides(x._data, None))
    if x._rg and grad.enabled:
        n = ToCopyBackward0((edge(x),))
        n.in_dtype = x._data.dtype
        n.in_device = x.device
        n.__class__ = _ToCopyDevice
        return make(arr, True, n)
    return make(arr)


class _ToCopyDevice(ToCopyBackward0):
    __slots__ = ()
    stack_rule = None         # a device copy: not stacked

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            return (to_device(g, self.in_device),)
        return (backend.to_device(g, self.in_device),)


_ToCopyDevice.__name__ = "ToCopyBackward0"


class CloneBackward0(Node):          # y = x.clone(); dx = gy
    __slots__ = ()
    stack_rule = "generic"    # the formula works on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (g,)


def copy_as(a, fmt):
    """A copy of array `a` laid out as torch lays out a copy in memory format `fmt` (None: preserve)."""
    if fmt is _mf.contiguous_format or (fmt is None or fmt is _mf.preserve_format) and a.flags.c_contiguous:
        return np.array(a, copy=True, order="C", like=a)
    strides = _mf.target_strides(a.shape, element_strides(a), fmt)
    out = np.empty(a.shape, a.dtype, like=a)
    if not _mf.is_c_strides(a.shape, strides):
        out = _mf.restrided(out, strides, backend.as_strided)
    out[...] = a
    return out


def clone(x, memory_format=None):
    a = x._data
    if memory_format is None and a.flags.c_contiguous:
        arr = np.array(a, copy=True, order="C", like=a)
    else:
        arr = copy_as(a, _mf.check_arg(memory_format, "clone"))
    if x._rg and grad.enabled:
        return make(arr, True, CloneBackward0((edge(x),)))
    return make(arr)


def contiguous(x, memory_format=_mf.contiguous_format):
    fmt = _mf.check_arg(memory_format, "contiguous", none_ok=False)
    a = x._data
    if fmt is _mf.contiguous_format or fmt is _mf.preserve_format:
        if a.flags.c_contiguous:
            return x
        if fmt is _mf.preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    elif _mf.is_contiguous_as(a.shape, element_strides(a), fmt):
        return x
    return clone(x, fmt)


def c_result(y, a):
    """`y`, the result array of a reduction or scan of array `a`, C-ordered as torch's are (NumPy keeps the
    dimension order of a non-contiguous input); a contiguous `a` costs one flag test."""
    return y if a.flags.c_contiguous or y.flags.c_contiguous else backend.contiguous(y)


def in_format(a, fmt):
    """Array `a` in memory format `fmt` with torch's strides: itself when it has them, else a copy."""
    strides = _mf.format_strides(a.shape, fmt)
    if element_strides(a) == strides:
        return a
    out = _mf.restrided(np.empty(a.shape, a.dtype, like=a), strides, backend.as_strided)
    out[...] = a
    return out


def keep_format(x, y, ranks=(4, 5)):
    """`y`, a fresh tensor (or tuple of them) an op computed from `x`, laid out in the channels-last format
    that x's strides suggest, as torch's pooling / upsampling / padding / convolution kernels write their
    output (only for inputs of a rank in `ranks`); a C-contiguous x costs one flag test."""
    a = x._data
    if a.flags.c_contiguous or a.ndim not in ranks:
        return y
    fmt = _mf.suggest(a.shape, element_strides(a))
    if fmt is not _mf.contiguous_format:
        for t in (y if isinstance(y, tuple) else (y,)):
            t._data = in_format(t._data, fmt)
    return y


def like_strides(x, fmt, fn):
    """The strides of a *_like of `x` in memory format `fmt` (None: preserve: x's own when dense and
    non-overlapping, else dense ones in x's order); None for C order.  The contiguous case: one flag test."""
    a = x._data
    if fmt is None or fmt is _mf.preserve_format:
        if a.flags.c_contiguous:
            return None
        strides = _mf.preserve_strides(a.shape, element_strides(a))
    else:
        strides = _mf.format_strides(a.shape, _mf.check_arg(fmt, fn))
    return None if _mf.is_c_strides(a.shape, strides) else strides


def restride(arr, strides):
    """A fresh C-ordered array under `strides` (None: as it is), its memory-order values kept."""
    return arr if strides is None else _mf.restrided(arr, strides, backend.as_strided)


def like(x, fmt, fn, arr):
    """`arr`, a fresh C-ordered array of x's shape (values in memory order), laid out as torch lays out the
    result of `fn` (a *_like) of x in memory format `fmt`."""
    return arr if fmt is None and x._data.flags.c_contiguous else restride(arr, like_strides(x, fmt, fn))


def empty_as(arr, fmt, fn="empty"):
    """torch.empty(..., memory_format=fmt)'s array from a fresh C-ordered one."""
    if fmt is None or fmt is _mf.contiguous_format:
        return arr
    if _mf.check_arg(fmt, fn) is _mf.preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    return _mf.restrided(arr, _mf.format_strides(arr.shape, fmt), backend.as_strided)


def _to_strides(a, fmt):
    """The strides of _to_copy's result for an input array `a` in format `fmt` (None: preserve, as clone's:
    the input's strides when dense, else dense ones in its order); None for C order."""
    if fmt is None or fmt is _mf.preserve_format:
        return None if a.flags.c_contiguous else _mf.preserve_strides(a.shape, element_strides(a))
    return _mf.format_strides(a.shape, fmt)


def _relaid(arr, strides):
    """A fresh array `arr` under `strides` (itself when they already are its strides, or C order)."""
    if strides is None or element_strides(arr) == strides:
        return arr
    out = _mf.restrided(np.empty(arr.shape, arr.dtype, like=arr), strides, backend.as_strided)
    out[...] = arr
    return out


def _copy_to(x, fmt):
    """x.to(memory_format=fmt) when nothing else changes and x is not laid out so: _to_copy's fresh copy."""
    arr = _relaid(np.array(x._data, copy=True, order="C", like=x._data), _to_strides(x._data, fmt))
    if x._rg and grad.enabled:
        n = ToCopyBackward0((edge(x),))
        n.in_dtype = x._data.dtype
        return make(arr, True, n)
    return make(arr)


def reduce_strided(a, requires_grad):
    """Tensor.__reduce_ex__ of a non-contiguous host array: its elements in memory order and the permutation
    that gives the tensor back its dimension order (NumPy itself pickles C order only)."""
    perm = _mf.dim_order(a.shape, element_strides(a))[::-1]
    return (rebuild_permuted, (np.ascontiguousarray(a.transpose(perm)), tuple(int(i) for i in np.argsort(perm)),
                               requires_grad))


def rebuild_permuted(arr, inverse, requires_grad):
    t = make(arr.transpose(inverse))
    t._rg = requires_grad
    return t


def _to_error(args, kwargs):
    got = ", ".join([_args.type_name(a) for a in args] + [f"{k}={_args.type_name(v)}" for k, v in kwargs.items()])
    got += ", " if kwargs and not args else ""      # (torch's parser writes keywords alone so)
    return TypeError(f"to() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool "
                     "copy = False, *, torch.memory_format memory_format = None)\n"
                     " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format "
                     "memory_format = None)\n"
                     " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format "
                     "memory_format = None)\n")


def _dtype_like(a):
    """A positional dtype of to(): a dtype, the types float/int/bool, or (as torch's parser takes them) a
    float or bool value standing for float64 / bool."""
    if a.__class__ is _dtype.dtype or a in (float, int, bool):
        return _dtype.to_dtype(a)
    if a.__class__ is bool:
        return _dtype.bool
    if a.__class__ is float:
        return _dtype.float64
    return None


def _parse_to(args, kwargs):
    """to()'s three signatures: (device, dtype, non_blocking, copy), (dtype, non_blocking, copy) and
    (tensor, non_blocking, copy); anything else is torch's TypeError."""
    fmt = kwargs.get("memory_format")
    if set(kwargs) - {"dtype", "device", "non_blocking", "copy", "memory_format"} or \
            fmt is not None and fmt.__class__ is not _mf.memory_format:
        raise _to_error(args, kwargs)
    dtype, device = kwargs.get("dtype"), kwargs.get("device")
    rest, taken = list(args), ()          # taken: the keywords the positional form leaves no room for
    if rest and isinstance(rest[0], Tensor):
        dtype, device = rest[0].dtype, rest[0].device
        rest.pop(0)
        taken = ("dtype", "device")
    elif rest and _dtype_like(rest[0]) is not None:
        dtype = _dtype_like(rest.pop(0))
        taken = ("dtype", "device")
    elif rest and (rest[0] is None or isinstance(rest[0], (str, int, _device_cls))):
        device = rest.pop(0)
        taken = ("device",)
        if rest and (rest[0] is None or _dtype_like(rest[0]) is not None):
            d = rest.pop(0)
            dtype = None if d is None else _dtype_like(d)
            taken = ("dtype", "device")
    if any(k in kwargs for k in taken):
        raise _to_error(args, kwargs)
    flags = rest + [kwargs[k] for k in ("non_blocking", "copy") if k in kwargs]
    if len(rest) > 2 or any(f.__class__ is not bool for f in flags):
        raise _to_error(args, kwargs)
    copy = kwargs.get("copy", rest[1] if len(rest) > 1 else False)
    return dtype, device, copy


def to(x, *args, **kwargs):
    if not kwargs and len(args) == 1 and args[0].__class__ is _dtype.dtype:     # x.to(torch.float64)
        return to_dtype(x, args[0], False)
    dtype, device, copy = _parse_to(args, kwargs)
    fmt = kwargs.get("memory_format")
    out = x
    if device is not None:
        out = to_device(out, device, copy)
        copy = copy and out is x
    if dtype is not None:
        out = to_dtype(out, _dtype.to_dtype(dtype), copy)
    elif copy:
        out = _copy_to(out, fmt)
    a = x._data
    if out is x:
        if fmt is None or fmt is _mf.preserve_format or _mf.suggest(a.shape, element_strides(a)) is fmt:
            return x
        _mf.check_rank(fmt, a.ndim)
        return _copy_to(x, fmt)
    if fmt is not None or not a.flags.c_contiguous:
        out._data = _relaid(out._data, _to_strides(a, fmt))      # a fresh result: laid out as _to_copy's
    return out


_TYPE_NAMES = {f"torch.{d._legacy}": d for d in _dtype.ALL + (_dtype.bfloat16,)}


def type_(x, dtype=None):
    if dtype is None:
        return f"torch.{x.dtype._legacy}"
    if isinstance(dtype, str):
        if dtype not in _TYPE_NAMES:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = _TYPE_NAMES[dtype]
    elif hasattr(dtype, "_gg_dtype"):
        dtype = dtype._gg_dtype
    elif isinstance(dtype, type):
        raise ValueError(f"invalid type: '{dtype.__name__}'")
    elif dtype.__class__ is not _dtype.dtype:
        raise TypeError("dtype must be a type, str, or dtype object")
    return to_dtype(x, dtype)


def view_dtype(x, dtype):
    """x.view(dtype): the same bytes as another dtype, with torch's checks when the element size changes."""
    dtype = _dtype.to_dtype(dtype, "view")
    a = x._data
    if dtype.itemsize != a.itemsize:
        what = f"to view {_dtype.from_numpy_dtype(a.dtype).name_c} as {dtype.name_c} (different element sizes)"
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if a.shape[-1] != 1 and a.strides[-1] != a.itemsize:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {a.strides[-1] // a.itemsize}")
        ratio = dtype.itemsize // a.itemsize
        if ratio > 1 and a.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {a.shape[-1]}")
    return make(a.view(dtype.np))


def scalar_like(v, like):
    """A Python number as a 0-d tensor (for reflected operators such as 2 // t)."""
    return as_tensor_arg(v, like)
