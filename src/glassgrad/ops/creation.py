"""Tensor creation from data, sizes and ranges, and the deterministic in-place initialisers; each size is
checked before anything is allocated (random creation: ops/random.py).

ops: tensor as_tensor asarray from_numpy scalar_tensor zeros ones empty empty_strided full arange range
     linspace logspace eye zeros_like ones_like empty_like full_like; Tensor.fill_ zero_ copy_
"""
import math
import os
import warnings

import numpy as np

from .. import _args, _dtype, backend
from .._device import as_device, cpu, default_device as _default_device
from .._globals import fill_uninitialized as _fill_uninit
from .._tensor import Tensor, Size, _make
from ._core import check_inplace, grad, _detached_overwrite
from ._data import _array_from_data
from . import conversion as _cv

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full", "arange", "linspace",
           "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "scalar_tensor", "empty_strided",
           "range"]

_pyrange = range


# -- helpers ------------------------------------------------------------------------------------
def _size(size, fn="size"):
    """The sizes of zeros(*size) and its kin, parsed as torch parses them (TypeError for non-integers,
    RuntimeError for negative sizes)."""
    shape = _args.sizes(size, fn)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def _memory_limit():
    """Bytes one array may take: physical memory plus swap (what the kernel would let one process have)."""
    if not _limit:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            total = 2 ** 63
        try:
            with open("/proc/meminfo") as f:
                total += next(int(ln.split()[1]) * 1024 for ln in f if ln.startswith("SwapTotal:"))
        except (OSError, StopIteration, ValueError):
            pass
        _limit.append(total)
    return _limit[0]


_limit = []


def _alloc_error(nbytes):
    return RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate {nbytes} bytes. "
                        "Error code 12 (Cannot allocate memory)")


def check_alloc(shape, itemsize):
    """torch's checks of a new tensor's byte size, made before anything is allocated: a size whose product
    overflows (torch multiplies in unsigned 64-bit, then by the element size, and wants an int64) and one
    no allocator can serve (more than this machine's memory and swap) are RuntimeErrors."""
    if 0 < math.prod(shape) * itemsize <= _memory_limit():     # no partial product overflowed either
        return
    n, overflow = 1, False
    for s in shape:
        n *= s
        overflow = overflow or n >= 2 ** 64
    nbytes = n * itemsize
    if overflow or nbytes >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    if nbytes > _memory_limit():
        raise _alloc_error(nbytes)


def _new(make, shape, dt, *args):
    """make(shape, *args) -> an array of dtype `dt` (glassgrad dtype), its size checked first; the
    allocator's own failure (memory taken by others, a process limit) is torch's RuntimeError too."""
    check_alloc(shape, dt.itemsize)
    try:
        return make(shape, *args)
    except MemoryError:
        raise _alloc_error(math.prod(shape) * dt.itemsize) from None


def _device_arg(device):
    return None if device is None else as_device(device)


def _on(fn, dev):
    """The allocator `fn` (np.zeros / np.ones / np.full) for a tensor on `dev` (None: the default device): NumPy's
    for the CPU, the same function of CuPy's module under the CUDA device (memory allocated where it lives rather
    than copied there).  Any other device keeps NumPy's: _finish gives its error."""
    xp = backend._cupy
    if xp is None:
        return fn
    if dev is None:
        dev = _default_device()
        if dev is None:
            return fn
    dev = as_device(dev)
    if dev.type != "cuda":
        return fn
    xfn = getattr(xp, fn.__name__)

    def alloc(*args):
        with xp.cuda.Device(dev.index or 0):
            return xfn(*args)
    return alloc


def _finish(arr, requires_grad, device=None):
    if device is None:
        device = _default_device()
    if device is not None:
        dev = as_device(device)
        if dev.type != "cpu":
            arr = backend.to_device(arr, dev)
    t = _make(arr)
    if requires_grad:
        t._set_requires_grad(_args.bool_arg(requires_grad),
                             "Only Tensors of floating point and complex dtype can require gradients")
    return t


def _dt(dtype, default=None, fn=None):
    if dtype is None:
        return default or _dtype._default[0]
    return _dtype.to_dtype(dtype, fn)


def _spec(fn, size, dtype, device, requires_grad, size_kw=None):
    """zeros/ones/empty/rand/randn's arguments checked in torch's order, before anything is allocated:
    (shape, dtype, device).  `size` are the positional sizes, `size_kw` the size= keyword (a sequence)."""
    if size_kw is not None:
        if size or not isinstance(size_kw, (tuple, list)):
            raise TypeError(f"{fn}(): argument 'size' must be tuple of ints, not {_args.type_name(size_kw)}")
        size = (size_kw,)
    shape = _size(size, fn)
    dt = _dt(dtype, None, fn)
    _args.bool_arg(requires_grad, fn, "requires_grad")
    return shape, dt, _device_arg(device)


# -- from data --------------------------------------------------------------------------------


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
                      "or sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    dt = None if dtype is None else _dtype.to_dtype(dtype)
    arr = np.array(_array_from_data(data, dt), copy=True)
    return _finish(arr, requires_grad, device)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        out = data
        if dtype is not None:
            out = out.to(_dtype.to_dtype(dtype))
        if device is not None:
            out = out.to(device)
        return out
    if isinstance(data, np.ndarray):
        arr = data if dtype is None else data.astype(_dtype.to_dtype(dtype).np, copy=False)
        _dtype.from_numpy_dtype(data.dtype, user=True)
        _dtype.from_numpy_dtype(arr.dtype)
        return _finish(arr, False, device)
    dt = None if dtype is None else _dtype.to_dtype(dtype)
    return _finish(np.array(_array_from_data(data, dt)), False, device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    t = as_tensor(obj, dtype, device)
    if copy:
        t = t.clone()
    if requires_grad:
        t.requires_grad_(True)
    return t


_warned_readonly = []


def from_numpy(ndarray):
    """A tensor sharing `ndarray`'s memory (torch's checks: ndarray, supported dtype, native byte order, no
    negative strides; a warning, once, for a read-only array)."""
    if not isinstance(ndarray, np.ndarray):
        t = type(ndarray)
        name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__.split('.')[0]}.{t.__name__}"
        raise TypeError(f"expected np.ndarray (got {name})")
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion "
                         "between byte orders is currently not supported.")
    _dtype.from_numpy_dtype(ndarray.dtype, user=True)
    if ndarray.size and any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a "
                         "copy of your array  with array.copy().) ")
    if not ndarray.flags.writeable and not _warned_readonly:
        _warned_readonly.append(True)
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
                      "This means writing to this tensor will result in undefined behavior. You may want to copy "
                      "the array to protect its data or make it writable before converting it to a tensor. This "
                      "type of warning will be suppressed for the rest of this program.", UserWarning, stacklevel=2)
    return _make(ndarray)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    dt = _dt(dtype, None, "scalar_tensor")
    return _finish(np.array(_fill_value(s, dt, "scalar_tensor", "s", 1)), requires_grad, _device_arg(device))


def _rebuild(arr, requires_grad, device=None):
    t = _make(arr if device is None else backend.to_device(arr, as_device(device)))
    t._rg = requires_grad
    return t


# -- filled -------------------------------------------------------------------------------------
def zeros(*size_, size=None, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    shape, dt, dev = _spec("zeros", size_, dtype, device, requires_grad, size)
    return _finish(_new(_on(np.zeros, dev), shape, dt, dt.np), requires_grad, dev)


def ones(*size_, size=None, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    shape, dt, dev = _spec("ones", size_, dtype, device, requires_grad, size)
    return _finish(_new(_on(np.ones, dev), shape, dt, dt.np), requires_grad, dev)


def empty(*size_, size=None, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False,
          memory_format=None):
    shape, dt, dev = _spec("empty", size_, dtype, device, requires_grad, size)
    return _finish(_cv.empty_as(_fill_uninit(_new(_on(np.zeros, dev), shape, dt, dt.np)), memory_format),
                   requires_grad, dev)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, **kw):
    size = _args.int_list(size, "empty_strided", "size", 1)
    stride = _args.int_list(stride, "empty_strided", "stride", 2)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    _size((size,), "empty_strided")
    dt = _dt(dtype, None, "empty_strided")
    n = 0 if 0 in size else 1 + sum((s - 1) * st for s, st in zip(size, stride))
    if min(stride, default=0) < 0 or n * dt.itemsize >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    dev = _device_arg(device)
    # the smallest storage the strides address, as torch, on the device it is asked for
    storage = _fill_uninit(_new(_on(np.zeros, dev), (n,), dt, dt.np))
    strides = tuple(st * dt.itemsize for st in stride)
    if storage.__class__ is not np.ndarray:
        return _finish(backend.as_strided(storage, size, strides), requires_grad, dev)
    # elements that share memory (a stride of 0) cannot be written, as torch refuses writes into them
    shared = any(s > 1 and st == 0 for s, st in zip(size, stride))
    arr = np.lib.stride_tricks.as_strided(storage, size, strides, writeable=not shared)
    return _finish(arr, requires_grad, dev)


def _fill_value(v, dt, fn, arg="fill_value", pos=2):
    """A fill value (torch's Scalar) as a NumPy scalar of dtype `dt`, with torch's errors for an int out of
    every range (OverflowError) and for a value `dt` cannot hold (RuntimeError); negative values wrap into
    unsigned types, as in torch."""
    v = v if isinstance(v, complex) else _args.number_arg(v, fn, arg, pos)
    if isinstance(v, complex) and dt.np.kind != "c":
        if v.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {dt.np.name if dt.np.kind != 'f' else _C_REAL[dt.name]} "
                               "without overflow")
        v = v.real
    if isinstance(v, int) and not isinstance(v, bool) and not -2 ** 63 <= v < 2 ** 64:
        raise OverflowError("int too big to convert")
    if dt.np.kind in "iu" and not isinstance(v, bool):
        info = np.iinfo(dt.np)
        if not math.isfinite(v) or v > info.max or v < (-info.max if info.min == 0 else info.min):
            raise RuntimeError(f"value cannot be converted to type {dt.name}_t without overflow")
    return _dtype.cast(np.array(v), dt.np)[()]


_C_REAL = {"float16": "c10::Half", "float32": "float", "float64": "double", "bfloat16": "c10::BFloat16"}


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
         requires_grad=False):
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {_args.type_name(size)}")
    shape = _size((size,), "full")
    fv = fill_value if isinstance(fill_value, complex) else _args.number_arg(fill_value, "full", "fill_value", 2)
    dt = _dtype.scalar_dtype(fv) if dtype is None else _dtype.to_dtype(dtype, "full")
    fv = _fill_value(fv, dt, "full")
    _args.bool_arg(requires_grad, "full", "requires_grad")
    dev = _device_arg(device)
    return _finish(_new(_on(np.full, dev), shape, dt, fv, dt.np), requires_grad, dev)


def _here(x, device):
    """The like= of a *_like allocation: x's array when the new tensor goes to x's device (device None)."""
    d = x._data
    if d.__class__ is np.ndarray or device is not None:
        return None
    return d if isinstance(d, backend._ARRAYS) else None


def _like(x, dtype, fn):
    return x._data.dtype if dtype is None else _dtype.to_dtype(dtype, fn).np


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    arr = np.zeros(input._data.shape, _like(input, dtype, "zeros_like"), like=_here(input, device))
    return _finish(_cv.like(input, memory_format, "zeros_like", arr), requires_grad, device or input.device)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    arr = np.ones(input._data.shape, _like(input, dtype, "ones_like"), like=_here(input, device))
    return _finish(_cv.like(input, memory_format, "ones_like", arr), requires_grad, device or input.device)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _finish(_cv.like(input, memory_format, "empty_like", _fill_uninit(np.zeros(
        input._data.shape, _like(input, dtype, "empty_like"), like=_here(input, device)))), requires_grad,
        device or input.device)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    npdt = _like(input, dtype, "full_like")
    fv = _fill_value(fill_value, _dtype.from_numpy_dtype(npdt), "full_like")
    arr = np.full(input._data.shape, fv, npdt, like=_here(input, device))
    return _finish(_cv.like(input, memory_format, "full_like", arr), requires_grad, device or input.device)


# -- ranges --------------------------------------------------------------------------------------
def _range_arg(v, fn, arg, pos):
    """A Number argument of arange/range/linspace (a 0-d tensor is its value)."""
    if isinstance(v, Tensor):
        if v._data.ndim:
            if fn == "linspace" or fn == "logspace":
                raise RuntimeError(f"{fn} only supports 0-dimensional start and end tensors, but got {arg} with "
                                   f"{v._data.ndim} dimension(s).")
            raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Number, not Tensor")
        return v._data.item()
    return _args.number_arg(v, fn, arg, pos)


def _range_size(fn, start, end, step, dt):
    """Number of elements of arange / range, with torch's checks on the bounds and the step."""
    for v in (start, end, step):
        if isinstance(v, int) and not -2 ** 63 <= v < 2 ** 63:
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
    if step != step or step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) * step < 0 and end != start:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign" if fn == "arange" else
                           "upper bound and lower bound inconsistent with step sign")
    if all(isinstance(v, int) for v in (start, end, step)):
        n = -((start - end) // step) if fn == "arange" else (end - start) // step + 1
    else:
        q = (end - start) / step
        if not math.isfinite(q) or abs(q) >= 2 ** 63:
            raise RuntimeError("invalid size, possible overflow?")
        n = math.ceil(q) if fn == "arange" else math.floor(q) + 1
    n = max(n, 0)
    check_alloc((n,), dt.itemsize)
    return n


def _range(fn, start, end, step, dtype, float_default, dev=None):
    """The values of arange / range: start + i * step, computed in double for floating dtypes (as torch)."""
    isf = any(isinstance(v, float) for v in (start, end, step))
    dt = _dt(dtype, (_dtype._default[0] if isf or float_default else _dtype.int64), fn)
    if dt is _dtype.bool or dt in _dtype._LIMITED or dt.is_complex:
        raise NotImplementedError(f'"{fn}_cpu" not implemented for \'{dt.name_c}\'')
    if not dt.is_floating_point:
        if isf and step != 0 and int(step) == 0:
            raise ValueError("step must be nonzero")
        start, end, step = (int(v) if math.isfinite(v) else v for v in (start, end, step))
    n = _range_size(fn, start, end, step, dt)
    ar = _on(np.arange, dev)            # (on a CUDA device: computed there, the same float64 / int64 arithmetic)
    if dt.is_floating_point:
        return (start + ar(0, n, 1, np.float64) * step).astype(dt.np)
    return (start + ar(0, n, 1, np.int64) * step).astype(dt.np)


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    start = _range_arg(start, "arange", "end" if end is None else "start", 1)
    end = None if end is None else _range_arg(end, "arange", "end", 2)
    step = _range_arg(step, "arange", "step", 3)
    if end is None:
        start, end = 0, start
    dev = _device_arg(device)
    return _finish(_range("arange", start, end, step, dtype, False, dev), requires_grad, dev)


def range(start, end, step=1, *, dtype=None, device=None, requires_grad=False):
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values "
                  "in [start, end).", UserWarning, stacklevel=2)
    start, end, step = (_range_arg(v, "range", a, i + 1) for i, (v, a) in
                        enumerate(((start, "start"), (end, "end"), (step, "step"))))
    dev = _device_arg(device)
    return _finish(_range("range", start, end, step, dtype, True, dev), requires_grad, dev)


def _steps(steps, fn):
    steps = _args.int_arg(steps, fn, "steps", 3)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return steps


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    start, end = _range_arg(start, "linspace", "start", 1), _range_arg(end, "linspace", "end", 2)
    steps = _steps(steps, "linspace")
    dt = _dt(dtype, None, "linspace")
    if dt in _dtype._LIMITED:
        raise NotImplementedError(f'"linspace_cpu" not implemented for \'{dt.name_c}\'')
    check_alloc((steps,), max(dt.itemsize, 8))
    dev = _device_arg(device)
    if steps <= 1:
        arr = np.array([start] * steps, dtype=np.float64)
    else:
        # PyTorch fills the first half from start and the second half from end
        step = (end - start) / (steps - 1)
        i = np.arange(steps, dtype=np.float64)
        half = steps // 2
        arr = np.where(i < half, start + step * i, end - step * (steps - 1 - i))
    if dt.is_floating_point and dt is not _dtype.float64:
        # PyTorch computes in the output dtype
        s, e = np.array(start, dt.np), np.array(end, dt.np)
        if steps > 1:
            stp = (e - s) / np.array(steps - 1, dt.np)
            i = np.arange(steps).astype(dt.np)
            half = steps // 2
            arr = np.where(np.arange(steps) < half, s + stp * i, e - stp * (np.array(steps - 1, dt.np) - i))
        else:
            arr = np.array([s] * steps)
    return _finish(arr.astype(dt.np), requires_grad, dev)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    start, end = _range_arg(start, "logspace", "start", 1), _range_arg(end, "logspace", "end", 2)
    steps = _steps(steps, "logspace")
    dt = _dt(dtype, None, "logspace")
    lin = linspace(start, end, steps, dtype=_dtype.float64)._data
    return _finish(np.power(base, lin).astype(dt.np), requires_grad, _device_arg(device))


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    n = _args.int_arg(n, "eye", "n", 1)
    m = n if m is None else _args.int_arg(m, "eye", "m", 2)
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dt = _dt(dtype, None, "eye")
    dev = _device_arg(device)
    return _finish(_new(lambda shape: _on(np.eye, dev)(*shape, 0, dt.np), (n, m), dt), requires_grad, dev)


# -- in-place initialisers (Tensor methods) ---------------------------------------------------------
def _fill_inplace(x, arr, name="FillBackward2", shared_ok=False):
    """Write `arr` into x (an initialiser: no history, version bumped).  shared_ok: `arr` is one value, which
    may be written into elements that share memory (fill_, zero_ on an expanded tensor, as torch)."""
    check_inplace(x, shared_ok)
    if arr.__class__ is np.ndarray and x._data.__class__ is not np.ndarray and arr.ndim:
        # the RNG streams are host code (ops/_rng.py: torch's CPU generators, bit for bit): their numbers are
        # moved to the device explicitly
        arr = backend.to_device(arr, backend.device_of(x._data))
    if x._rg and grad.enabled and x._grad_fn is not None:
        # filling a non-leaf cuts its history (node `name`: zero gradient upstream)
        return _detached_overwrite(x, arr, name)
    backend.shared_writable(x._data)[...] = arr
    x._vc[0] += 1
    return x


def fill_(x, value):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        value = value._data.item()
    return _fill_inplace(x, _fill_value(value, _dtype.from_numpy_dtype(x._data.dtype), "fill_", "value", 1),
                         shared_ok=True)


def zero_(x):
    return _fill_inplace(x, 0, "ZeroBackward0", shared_ok=True)


# -- legacy constructors ----------------------------------------------------------------------------
def legacy_new(cls, dtype, args, device=None):
    """torch.Tensor(...), torch.FloatTensor(...), x.new(...): sizes give an uninitialised (zero) tensor,
    a sequence gives data."""
    if not args:
        return _finish(np.zeros((0,), dtype.np), False, device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        t = args[0]
        if t._data.dtype != dtype.np:
            raise TypeError(f"expected {dtype} (got {t.dtype})")
        return t.detach()
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args) or \
            (len(args) == 1 and isinstance(args[0], Size)):
        shape = _size(args, dtype._legacy)
        return _finish(_new(np.zeros, shape, dtype, dtype.np), False, device)
    if len(args) == 1:
        return _finish(np.array(_array_from_data(args[0], dtype), copy=True), False, device)
    raise TypeError("new(): invalid arguments")


_ = cpu


# -- tensors over memory the caller owns: a Python buffer, a file ----------------------------------------
__all__ += ["frombuffer", "from_file"]

_RO_BUFFER = ("The given buffer is not writable, and PyTorch does not support non-writable tensors. This means you "
              "can write to the underlying (supposedly non-writable) buffer using the tensor. You may want to copy "
              "the buffer to protect its data or make it writable before converting it to a tensor. This type of "
              "warning will be suppressed for the rest of this program.")


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over an object's buffer (bytearray, array.array, mmap, ...), sharing its memory."""
    try:
        mv = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    dt = _dtype.to_dtype(dtype, "frombuffer")
    n, es = mv.nbytes, dt.itemsize
    if n == 0 or count == 0:
        raise ValueError(f"both buffer length ({n}) and count ({count}) must not be 0")
    if not 0 <= offset < n:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({n} "
                         f"bytes) minus 1")
    if count < 0:
        if (n - offset) % es:
            raise ValueError(f"buffer length ({n - offset} bytes) after offset ({offset} bytes) must be a multiple "
                             f"of element size ({es})")
        count = (n - offset) // es
    elif count * es > n - offset:
        raise ValueError(f"requested buffer length ({count} * {es} bytes) after offset ({offset} bytes) must not be "
                         f"greater than actual buffer length ({n} bytes)")
    arr = np.frombuffer(mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv, np.uint8, count * es, offset)
    if not arr.flags.writeable:
        from .._globals import warn_once
        warn_once(_RO_BUFFER)
    return _finish(arr.view(dt.np), requires_grad)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """`size` elements of `dtype` mapped from a file: written back to it when `shared`, a private copy
    otherwise."""
    import os
    dt = _dt(dtype, None, "from_file")
    if not os.path.exists(filename):
        raise RuntimeError(f"unable to open file <{filename}> in read-only mode: No such file or directory (2)")
    need = int(size) * dt.itemsize
    have = os.path.getsize(filename)
    if need > have:
        raise RuntimeError(f"file <{filename}> size <{have}> is smaller than the required mapping size <{need}>")
    if need == 0:
        return _finish(np.zeros(0, dt.np), requires_grad, device)
    arr = np.memmap(filename, dtype=np.uint8, mode="r+" if shared else "c", shape=(need,)).view(np.ndarray)
    return _finish(arr.view(dt.np), requires_grad, device)


__all__ += ["empty_permuted"]


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialised tensor of `size` whose memory holds its dims in the order `physical_layout` (outermost
    first): strides follow that order."""
    size = _args.int_list(size, "empty_permuted", "size", 1)
    perm = _args.int_list(physical_layout, "empty_permuted", "physical_layout", 2)
    if len(size) != len(perm):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(perm)}")
    nd = len(size)
    for i, p in enumerate(perm):
        if not 0 <= p < nd:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {nd - 1}, but got {p} at index "
                               f"{i}).  NB: negative dims not currently supported; file an issue if you want it.")
    if len(set(perm)) != nd:
        raise RuntimeError("Duplicate dim not allowed")
    dt = _dt(dtype, None, "empty_permuted")
    _size((tuple(size),), "empty_permuted")
    phys = _fill_uninit(np.zeros(tuple(size[p] for p in perm), dt.np))
    return _finish(phys.transpose(tuple(np.argsort(perm))), requires_grad, _device_arg(device))
