"""torch.cuda's legacy tensor types (torch.cuda.FloatTensor, ...): CUDA tensors of a dtype through CuPy;
without a GPU, torch's CPU-build TypeError (and isinstance is False for every tensor)."""
from .. import _dtype, backend
from .._legacy import _DTYPES, legacy_types


def _new(dt, args, device):
    if not backend.cuda_available():
        raise TypeError(f"type torch.cuda.{dt._legacy} not available. Torch not compiled with CUDA enabled.")
    from ..ops.creation import legacy_new
    return legacy_new(None, dt, args, "cuda" if device is None else device)


_TYPES = legacy_types("cuda", "torch.cuda.", _new)
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = (_TYPES[getattr(_dtype, n)._legacy] for n in _DTYPES)
