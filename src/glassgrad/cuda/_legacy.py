"""torch.cuda's legacy tensor types (torch.cuda.FloatTensor, ...): CUDA tensors of a dtype through CuPy;
without a GPU, torch's CPU-build TypeError (and isinstance is False for every tensor)."""
from .. import _dtype, backend
from .._tensor import Tensor


class _CudaLegacyMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls._gg_dtype and obj.device.type == "cuda"

    def __repr__(cls):
        return f"<class 'torch.cuda.{cls.__name__}'>"


def _legacy(dt):
    def __new__(cls, *args, device=None):
        if not backend.cuda_available():
            raise TypeError(f"type torch.cuda.{dt._legacy} not available. Torch not compiled with CUDA enabled.")
        from ..ops.creation import legacy_new
        return legacy_new(None, dt, args, "cuda" if device is None else device)
    return _CudaLegacyMeta(dt._legacy, (), {"__new__": __new__, "_gg_dtype": dt, "dtype": dt})


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
