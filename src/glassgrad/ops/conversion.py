"""dtype and device conversions, clone.

ops: to (dtype / device / other tensor), type, float/double/long/... (via to_dtype), clone,
     contiguous (via clone), cpu/cuda (via to_device), view(dtype)
"""
import numpy as np

from .. import _dtype
from .._device import as_device
from .. import backend
from ._core import make, edge, grad, as_tensor_arg  # noqa: F401  (as_tensor_arg re-exported)
from ..autograd.graph import Node

__all__ = ["to_dtype", "to_device", "clone", "to", "type_", "dtype_of_np", "scalar_like"]


def dtype_of_np(npdt):
    return _dtype.from_numpy_dtype(npdt)


class ToCopyBackward0(Node):         # y = x.to(dtype); dx = gy.to(x.dtype)
    __slots__ = ("in_dtype", "in_device")

    def backward(self, F, g):
        return (F.cast(g, self.in_dtype),)


def to_dtype(x, dtype, copy=False):
    npdt = dtype.np
    a = x._data
    if a.dtype == npdt and not copy:
        return x
    arr = a.astype(npdt)
    if x._rg and grad.enabled and dtype.is_floating_point:
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

    def backward(self, F, g):
        if F.is_tensor_mode:
            return (to_device(g, self.in_device),)
        return (backend.to_device(g, self.in_device),)


_ToCopyDevice.__name__ = "ToCopyBackward0"


class CloneBackward0(Node):          # y = x.clone(); dx = gy
    __slots__ = ()

    def backward(self, F, g):
        return (g,)


def clone(x, memory_format=None):
    arr = np.array(x._data, copy=True, order="C")
    if x._rg and grad.enabled:
        return make(arr, True, CloneBackward0((edge(x),)))
    return make(arr)


def _parse_to(args, kwargs):
    dtype = kwargs.get("dtype")
    device = kwargs.get("device")
    copy = kwargs.get("copy", False)
    for a in args:
        if a.__class__ is _dtype.dtype:
            dtype = a
        elif isinstance(a, str) or a.__class__.__name__ == "device":
            device = a
        elif hasattr(a, "_data") and hasattr(a, "dtype"):
            dtype, device = a.dtype, a.device
        elif isinstance(a, bool):
            pass    # non_blocking
        elif a is None:
            pass
        elif isinstance(a, int):
            device = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    return dtype, device, copy


def to(x, *args, **kwargs):
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


_TYPE_NAMES = {f"torch.{d._legacy}": d for d in _dtype.ALL}


def type_(x, dtype=None):
    if dtype is None:
        return f"torch.{x.dtype._legacy}"
    if isinstance(dtype, str):
        if dtype not in _TYPE_NAMES:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = _TYPE_NAMES[dtype]
    elif hasattr(dtype, "_gg_dtype"):
        dtype = dtype._gg_dtype
    return to_dtype(x, _dtype.to_dtype(dtype))


def view_dtype(x, dtype):
    dtype = _dtype.to_dtype(dtype)
    return make(x._data.view(dtype.np))


def scalar_like(v, like):
    """A Python number as a 0-d tensor (for reflected operators such as 2 // t)."""
    return as_tensor_arg(v, like)
