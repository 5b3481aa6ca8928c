"""dtype and device conversions, clone.

ops: to (dtype / device / other tensor), type, float/double/long/... (via to_dtype), clone,
     contiguous (via clone), cpu/cuda (via to_device), view(dtype)
"""
import warnings

import numpy as np

from .. import _args, _dtype, backend
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


def clone(x, memory_format=None):
    arr = np.array(x._data, copy=True, order="C", like=x._data)
    if x._rg and grad.enabled:
        return make(arr, True, CloneBackward0((edge(x),)))
    return make(arr)


def _to_error(args, kwargs):
    got = ", ".join([_args.type_name(a) for a in args] + [f"{k}={_args.type_name(v)}" for k, v in kwargs.items()])
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
    if set(kwargs) - {"dtype", "device", "non_blocking", "copy", "memory_format"}:
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
    out = x
    if device is not None:
        out = to_device(out, device, copy)
        copy = copy and out is x
    if dtype is not None:
        out = to_dtype(out, _dtype.to_dtype(dtype), copy)
    elif copy:
        out = clone(out)
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
