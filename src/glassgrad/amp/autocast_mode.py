"""torch.amp.autocast_mode: autocast (context manager and decorator), is_autocast_available, custom_fwd /
custom_bwd.  CPU autocast casts as torch's AutocastCPU kernels do (ops/_autocast.py holds the policies);
CUDA autocast is refused with torch's warning when no GPU is there."""
import collections.abc
import functools
import warnings

import numpy as np

from .. import _dtype, backend
from .._autocast_state import state, device_type as _devtype
from .._tensor import Tensor
from . import _state as _S

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]

_AVAILABLE = ("cpu", "cuda", "ipu", "xpu", "maia", "xla", "mps", "hpu", "mtia", "privateuseone")


def _type_repr(v):
    """repr(type(v)) as torch shows it (glassgrad's device and Tensor classes under torch's names)."""
    t = type(v)
    return f"<class 'torch.{t.__name__}'>" if t.__module__.startswith("glassgrad.") else repr(t)


def is_autocast_available(device_type):
    """Whether autocast knows `device_type` (torch's answer: 'cpu', 'cuda', 'xpu', 'mps', ... but not 'meta')."""
    return _devtype(device_type, available=True) in _AVAILABLE


def _cuda_missing():
    return not backend.cuda_available()


class autocast:
    """Mixed precision for a region: ops on torch's lists run in `dtype` (CPU default bfloat16) or float32."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{_type_repr(device_type)}`")
        self.fast_dtype = _S.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{self.device}'")
        self.custom_backend_name = "privateuseone"
        self._cache_enabled = state.cache_enabled if cache_enabled is None else cache_enabled
        if enabled:
            if self.device == "cuda":
                if _cuda_missing():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                                  stacklevel=2)
                    enabled = False
                elif self.fast_dtype is _dtype.bfloat16:
                    import glassgrad.cuda
                    if not glassgrad.cuda.is_bf16_supported():
                        raise RuntimeError("Current CUDA Device does not support bfloat16. Please switch dtype to "
                                           "float16.")
            elif self.fast_dtype not in (_dtype.bfloat16, _dtype.float16):
                name = self.device.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                              f"{name} Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                              stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = state.cache_enabled
        self.prev = _S.is_autocast_enabled(self.device)
        self.prev_fastdtype = _S.get_autocast_dtype(self.device)
        _S.set_autocast_enabled(self.device, self._enabled)
        _S.set_autocast_dtype(self.device, self.fast_dtype)
        _S.autocast_increment_nesting()
        _S.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if _S.autocast_decrement_nesting() == 0:
            _S.clear_autocast_cache()
        _S.set_autocast_enabled(self.device, self.prev)
        _S.set_autocast_dtype(self.device, self.prev_fastdtype)
        _S.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                            f"Did you mean to use autocast as a context manager? For example:\n"
                            f"    with torch.autocast(device_type=...):\n"
                            f"        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


def _cast(value, device_type, dtype):
    """custom_fwd's cast of a forward's arguments (floating tensors of the device, not float64; containers
    walked; strings and arrays left alone)."""
    if isinstance(value, Tensor):
        ok = value.is_floating_point() and value.device.type == device_type and value.dtype is not _dtype.float64
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        it = (_cast(v, device_type, dtype) for v in value)
        return type(value)(it) if isinstance(value, (list, tuple)) else it
    return value


def _check_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{_type_repr(device_type)}`")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's forward: records the autocast state for custom_bwd; with
    `cast_inputs`, casts floating inputs to it and runs forward with autocast off (inside autocast only)."""
    _check_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _S.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _S.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        on = _S.is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if not on:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's backward: runs it under the autocast state its forward saw."""
    _check_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
