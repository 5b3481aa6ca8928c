"""torch._C._nn: the one name libraries call from it, ``_parse_to`` (Lightning's DeviceDtypeModuleMixin.to)."""
from .. import _device, _dtype
from ..ops.conversion import _parse_to as _parse_to_args

__all__ = ["_parse_to"]


def _parse_to(*args, **kwargs):
    """(device, dtype, non_blocking, memory_format) of a ``Tensor.to`` / ``Module.to`` call's arguments: a device
    string becomes a torch.device; a tensor gives its device and dtype; ``copy`` is refused, as torch's."""
    dtype, device, _ = _parse_to_args(args, kwargs)
    flags = [a for a in args if a.__class__ is bool]
    if "copy" in kwargs or len(flags) > 1:
        raise RuntimeError(".to() does not accept copy argument")
    device = None if device is None else _device.device(device)
    dtype = None if dtype is None else _dtype.to_dtype(dtype)
    return device, dtype, kwargs.get("non_blocking", flags[0] if flags else False), kwargs.get("memory_format")
