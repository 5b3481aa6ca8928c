"""torch.utils.dlpack: exchanging tensors with other array libraries without copies (DLPack).

``from_dlpack(x)`` takes anything with ``__dlpack__`` / ``__dlpack_device__`` (NumPy arrays, PyTorch
tensors, CuPy arrays when the GPU backend is present) or a DLPack capsule, and returns a Tensor sharing
its memory.  ``to_dlpack(t)`` returns a capsule for ``t``; a Tensor is itself an exporter
(``Tensor.__dlpack__``), so ``torch.from_dlpack(glassgrad_tensor)`` and ``np.from_dlpack(t)`` share memory.
"""
import numpy as np

__all__ = ["from_dlpack", "to_dlpack"]

_CPU, _CUDA = 1, 2
_INVALID = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, so "
            "you might have already constructed a tensor from it once.")


class _Capsule:
    """A bare DLPack capsule presented as an exporter (NumPy's from_dlpack wants one)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.capsule

    def __dlpack_device__(self):
        return (_CPU, 0)


def _is_capsule(x):
    return type(x).__name__ == "PyCapsule"


def from_dlpack(ext_tensor):
    from .._tensor import Tensor, _make
    if isinstance(ext_tensor, Tensor):
        ext_tensor = _Exporter(ext_tensor)
    elif _is_capsule(ext_tensor):
        ext_tensor = _Capsule(ext_tensor)
    elif not hasattr(ext_tensor, "__dlpack__"):
        raise RuntimeError(_INVALID)
    device = ext_tensor.__dlpack_device__()[0] if hasattr(ext_tensor, "__dlpack_device__") else _CPU
    if int(device) == _CUDA:
        from .. import backend
        arr = backend.from_dlpack(ext_tensor)
    elif int(device) == _CPU:
        try:
            arr = np.from_dlpack(ext_tensor)
        except (TypeError, ValueError, BufferError) as e:
            if isinstance(ext_tensor, _Capsule):
                raise RuntimeError(_INVALID) from None
            raise RuntimeError(f"from_dlpack: {e}") from None
    else:
        raise RuntimeError(f"from_dlpack: unsupported DLPack device type {int(device)}")
    return _make(arr)


class _Exporter:
    """A glassgrad Tensor seen through its DLPack methods (from_dlpack of a glassgrad Tensor)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return export(self.t, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def export(t, stream=None, max_version=None, dl_device=None, copy=None):
    """Tensor.__dlpack__ (the array's own DLPack export; PyTorch refuses tensors that require grad)."""
    return t.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)


def to_dlpack(tensor):
    return export(tensor)
