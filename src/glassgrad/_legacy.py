"""Legacy tensor types the older tutorials use: torch.FloatTensor([[2, 1]]), torch.LongTensor(3), ...

``isinstance(t, torch.FloatTensor)`` is true for float32 CPU tensors, as in PyTorch.
"""
from . import _dtype


class _LegacyMeta(type):
    def __instancecheck__(cls, obj):
        from ._tensor import Tensor
        return isinstance(obj, Tensor) and obj.dtype is cls._gg_dtype and obj.device.type == "cpu"

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _legacy(dt):
    def __new__(cls, *args, device=None):
        from .ops.creation import legacy_new
        return legacy_new(None, dt, args, device)
    return _LegacyMeta(dt._legacy, (), {"__new__": __new__, "_gg_dtype": dt, "dtype": dt})


FloatTensor = _legacy(_dtype.float32)
DoubleTensor = _legacy(_dtype.float64)
HalfTensor = _legacy(_dtype.float16)
BFloat16Tensor = _legacy(_dtype.bfloat16)
LongTensor = _legacy(_dtype.int64)
IntTensor = _legacy(_dtype.int32)
ShortTensor = _legacy(_dtype.int16)
CharTensor = _legacy(_dtype.int8)
ByteTensor = _legacy(_dtype.uint8)
BoolTensor = _legacy(_dtype.bool)
