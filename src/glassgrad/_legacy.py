"""Legacy tensor types the older tutorials use: torch.FloatTensor([[2, 1]]), torch.LongTensor(3), ...

``isinstance(t, torch.FloatTensor)`` is true for float32 CPU tensors, as in PyTorch.
"""
from . import _dtype


_DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")


class _LegacyMeta(type):
    def __instancecheck__(cls, obj):
        from ._tensor import Tensor
        return isinstance(obj, Tensor) and obj.dtype is cls._gg_dtype and obj.device.type == cls._device

    def __repr__(cls):
        return f"<class '{cls._prefix}{cls.__name__}'>"


def _legacy(dt, device, prefix, new):
    def __new__(cls, *args, device=None):
        return new(dt, args, device)
    return _LegacyMeta(dt._legacy, (), {"__new__": __new__, "_gg_dtype": dt, "dtype": dt, "_device": device,
                                        "_prefix": prefix})


def legacy_types(device, prefix, new):
    """torch's ten legacy tensor types of `device` as {name: class}, printed as `prefix` + name (``torch.`` /
    ``torch.cuda.``); ``new(dtype, args, device)`` builds what calling one gives."""
    return {getattr(_dtype, n)._legacy: _legacy(getattr(_dtype, n), device, prefix, new) for n in _DTYPES}


def _new(dt, args, device):
    from .ops.creation import legacy_new
    return legacy_new(None, dt, args, device)


_TYPES = legacy_types("cpu", "torch.", _new)
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = (_TYPES[getattr(_dtype, n)._legacy] for n in _DTYPES)
