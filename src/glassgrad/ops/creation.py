"""Tensor creation, the random generators' front end, and the in-place initialisers.

ops: tensor as_tensor asarray from_numpy zeros ones empty full arange range linspace logspace eye
     zeros_like ones_like empty_like full_like rand_like randn_like randint_like rand randn randint
     randperm normal bernoulli multinomial manual_seed seed initial_seed get_rng_state set_rng_state
     Generator; Tensor.fill_ zero_ uniform_ normal_ random_ bernoulli_ exponential_ geometric_
     log_normal_ cauchy_ copy_
"""
import math
import warnings

import numpy as np

from .. import _dtype, _rng, backend
from .._device import as_device, cpu
from .._tensor import Tensor, Size, _make
from ._core import check_inplace, grad, commit_inplace

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full", "arange", "linspace",
           "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
           "randint_like", "rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
           "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "Generator",
           "default_generator", "scalar_tensor", "empty_strided", "range"]

_pyrange = range


# -- generators -------------------------------------------------------------------------------
class Generator(_rng.Generator):
    """torch.Generator (CPU): PyTorch's mt19937 stream, bit for bit."""

    def __init__(self, device="cpu"):
        super().__init__()
        self.device = as_device(device)

    def manual_seed(self, seed):
        super().manual_seed(int(seed))
        return self

    def get_state(self):
        return _make(super().get_state())

    def set_state(self, new_state):
        super().set_state(new_state._data if isinstance(new_state, Tensor) else new_state)
        return self


default_generator = Generator()
default_generator.seed()      # torch 2.13 seeds its default CPU generator randomly at start-up


def manual_seed(seed):
    default_generator.manual_seed(seed)
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def _gen(g):
    return default_generator if g is None else g


# -- helpers ------------------------------------------------------------------------------------
def _size(size):
    if len(size) == 1 and not isinstance(size[0], (int, np.integer)):
        size = size[0]
    try:
        return tuple(int(s) for s in size)
    except TypeError:
        raise TypeError(f"size must be a tuple of ints, but got {type(size).__name__}") from None


def _check_size(shape):
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")


def _finish(arr, requires_grad, device=None):
    if device is not None:
        dev = as_device(device)
        if dev.type != "cpu":
            arr = backend.to_device(arr, dev)
    t = _make(arr)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")
    return t


def _dt(dtype, default=None):
    if dtype is None:
        return default or _dtype._default[0]
    return _dtype.to_dtype(dtype)


# -- from data --------------------------------------------------------------------------------
def _ragged_error(data):
    def length_at(seq, depth, want):
        if depth == len(want):
            return
        if not isinstance(seq, (list, tuple)):
            raise ValueError(f"expected sequence of length {want[depth]} at dim {depth} (got 0)")
        if len(seq) != want[depth]:
            raise ValueError(f"expected sequence of length {want[depth]} at dim {depth} (got {len(seq)})")
        for s in seq:
            length_at(s, depth + 1, want)
    want, cur = [], data
    while isinstance(cur, (list, tuple)):
        want.append(len(cur))
        if not cur:
            break
        cur = cur[0]
    length_at(data, 0, want)
    raise ValueError("could not infer a tensor shape from the given data")


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        return data._data if data._data.ndim else data._data.item()
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(d) for d in data]
    return data


def _sequence_dtype_with_numpy_scalars(data):
    """PyTorch's dtype for a nested list holding NumPy scalars: each NumPy scalar keeps its dtype,
    Python numbers count as int64 / the default float / bool, and all are promoted together.
    None when the list holds no NumPy scalar (the common case, left to NumPy's inference)."""
    found = []

    def walk(d):
        for x in d:
            if isinstance(x, list):
                walk(x)
            else:
                found.append(x)
    walk(data)
    if not any(isinstance(x, np.generic) for x in found):
        return None
    out = None
    for x in found:
        if isinstance(x, np.generic):
            dt = _dtype.from_numpy_dtype(x.dtype)
        elif isinstance(x, bool):
            dt = _dtype.bool
        elif isinstance(x, int):
            dt = _dtype.int64
        elif isinstance(x, float):
            dt = _dtype._default[0]
        else:
            return None
        out = dt if out is None else _dtype.promote_types(out, dt)
    return out


def _array_from_data(data, dtype):
    """An ndarray for torch.tensor(data): PyTorch's dtype inference."""
    if isinstance(data, Tensor):
        arr = backend.to_host(data._data)
        return arr if dtype is None else arr.astype(dtype.np)
    if isinstance(data, np.ndarray):
        _dtype.from_numpy_dtype(data.dtype)
        return data if dtype is None else data.astype(dtype.np)
    if isinstance(data, np.generic):
        arr = np.asarray(data)
        return arr if dtype is None else arr.astype(dtype.np)
    scalar_dt = None
    if isinstance(data, (list, tuple)):
        data = _unwrap_nested(data)
        if dtype is None:
            scalar_dt = _sequence_dtype_with_numpy_scalars(data)
    try:
        arr = np.array(data)
    except ValueError:
        _ragged_error(data)
    except OverflowError:
        raise RuntimeError("Overflow when unpacking long") from None
    if arr.dtype == object:
        if any(isinstance(x, str) for x in np.ravel(arr)):
            raise TypeError("new(): invalid data type 'str'")
        _ragged_error(data)
    if arr.dtype.kind in "US":
        raise TypeError("new(): invalid data type 'str'")
    if scalar_dt is not None:
        dtype = scalar_dt
    if dtype is not None:
        return arr.astype(dtype.np)
    k = arr.dtype.kind
    if k == "f":
        return arr.astype(_dtype._default[0].np)
    if k in "iu":
        if arr.dtype == np.uint64:
            raise RuntimeError("Overflow when unpacking long")
        return arr.astype(np.int64)
    if k == "b":
        return arr
    if k == "c":
        raise TypeError("complex tensors are not supported by glassgrad")
    return arr.astype(_dtype._default[0].np)


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
    _dtype.from_numpy_dtype(ndarray.dtype)
    if ndarray.size and any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a "
                         "copy of your array  with array.copy().) ")
    if not ndarray.flags.writeable and not _warned_readonly:
        import warnings
        _warned_readonly.append(True)
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
                      "This means writing to this tensor will result in undefined behavior. You may want to copy "
                      "the array to protect its data or make it writable before converting it to a tensor. This "
                      "type of warning will be suppressed for the rest of this program.", UserWarning, stacklevel=2)
    return _make(ndarray)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return _finish(np.array(s, dtype=_dt(dtype).np), requires_grad, device)


def _rebuild(arr, requires_grad):
    t = _make(arr)
    t._rg = requires_grad
    return t


# -- filled -------------------------------------------------------------------------------------
def zeros(*size, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    shape = _size(size)
    _check_size(shape)
    return _finish(np.zeros(shape, _dt(dtype).np), requires_grad, device)


def ones(*size, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    shape = _size(size)
    _check_size(shape)
    return _finish(np.ones(shape, _dt(dtype).np), requires_grad, device)


def empty(*size, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False,
          memory_format=None):
    shape = _size(size)
    _check_size(shape)
    return _finish(np.zeros(shape, _dt(dtype).np), requires_grad, device)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, **kw):
    return empty(tuple(size), dtype=dtype, device=device, requires_grad=requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
         requires_grad=False):
    shape = _size((size,))
    _check_size(shape)
    if dtype is None:
        fv = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
        dt = _dtype.scalar_dtype(fv)
    else:
        dt = _dtype.to_dtype(dtype)
    return _finish(np.full(shape, fill_value, dt.np), requires_grad, device)


def _like(x, dtype):
    return x._data.dtype if dtype is None else _dtype.to_dtype(dtype).np


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _finish(np.zeros(input._data.shape, _like(input, dtype)), requires_grad, device or input.device)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _finish(np.ones(input._data.shape, _like(input, dtype)), requires_grad, device or input.device)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _finish(np.zeros(input._data.shape, _like(input, dtype)), requires_grad, device or input.device)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _finish(np.full(input._data.shape, fill_value, _like(input, dtype)), requires_grad,
                   device or input.device)


# -- ranges --------------------------------------------------------------------------------------
def _num(v):
    return v.item() if isinstance(v, Tensor) else v


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0 and end != start:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        isf = any(isinstance(v, float) for v in (start, end, step))
        dt = _dtype._default[0] if isf else _dtype.int64
    else:
        dt = _dtype.to_dtype(dtype)
    n = max(int(math.ceil((end - start) / step)), 0)
    if dt.is_floating_point:
        # PyTorch computes start + i * step in double then casts
        arr = (start + np.arange(n, dtype=np.float64) * step).astype(dt.np)
    else:
        arr = np.arange(start, start + n * step, step)[:n].astype(dt.np) if n else np.zeros(0, dt.np)
    return _finish(arr, requires_grad, device)


def range(start, end, step=1, *, dtype=None, device=None, requires_grad=False):
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values "
                  "in [start, end).", UserWarning, stacklevel=2)
    n = int(math.floor((end - start) / step)) + 1
    dt = _dt(dtype)
    arr = (start + np.arange(n, dtype=np.float64) * step).astype(dt.np)
    return _finish(arr, requires_grad, device)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    start, end = _num(start), _num(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dt(dtype)
    if steps == 1:
        arr = np.array([start], dtype=np.float64)
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
            arr = np.array([s])
    return _finish(arr.astype(dt.np), requires_grad, device)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    lin = linspace(start, end, steps, dtype=_dtype.float64)._data
    dt = _dt(dtype)
    return _finish(np.power(base, lin).astype(dt.np), requires_grad, device)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    if m is None:
        m = n
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    return _finish(np.eye(n, m, dtype=_dt(dtype).np), requires_grad, device)


# -- random ------------------------------------------------------------------------------------
def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=False,
         requires_grad=False):
    shape = _size(size)
    _check_size(shape)
    return _finish(_rng.rand(_gen(generator), shape, _dt(dtype).np), requires_grad, device)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=False,
          requires_grad=False):
    shape = _size(size)
    _check_size(shape)
    return _finish(_rng.randn(_gen(generator), shape, _dt(dtype).np), requires_grad, device)


def randint(*args, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=False,
            requires_grad=False, **kw):
    if "size" in kw:
        args = args + (kw.pop("size"),)
    if "high" in kw:
        args = (kw.pop("low", 0), kw.pop("high")) + args
    if len(args) == 2:
        low, high, size = 0, args[0], args[1]
    elif len(args) == 3:
        low, high, size = args
    else:
        raise TypeError("randint() received an invalid combination of arguments")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dt = _dt(dtype, _dtype.int64)
    return _finish(_rng.randint(_gen(generator), int(low), int(high), tuple(size), dt.np), requires_grad, device)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False):
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    dt = _dt(dtype, _dtype.int64)
    return _finish(_rng.randperm(_gen(generator), int(n), dt.np), requires_grad, device)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return rand(input._data.shape, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return randn(input._data.shape, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, **kw):
    if high is None:
        low, high = 0, low
    return randint(low, high, input._data.shape, dtype=dtype or input.dtype, device=device)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    g = _gen(generator)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._data if isinstance(mean, Tensor) else np.asarray(mean)
        s = std._data if isinstance(std, Tensor) else np.asarray(std)
        shape = np.broadcast_shapes(m.shape, s.shape)
        ref = mean if isinstance(mean, Tensor) else std
        z = _rng.normal(g, shape, 0.0, 1.0, ref._data.dtype)
        return _finish((z * s + m).astype(ref._data.dtype), False)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments")
    shape = _size((size,))
    return _finish(_rng.normal(g, shape, float(mean), float(std), _dt(dtype).np), requires_grad, device)


def bernoulli(input, p=None, *, generator=None, out=None):
    g = _gen(generator)
    if p is not None:
        return _make(_rng.bernoulli_scalar(g, input._data.shape, float(p), input._data.dtype))
    return _make(_rng.bernoulli_tensor(g, input._data, input._data.dtype))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    return _make(_rng.multinomial(_gen(generator), input._data, int(num_samples), bool(replacement)))


# -- in-place initialisers (Tensor methods) ---------------------------------------------------------
def _fill_inplace(x, arr, name="FillBackward2"):
    """Write `arr` into x (an initialiser: no history, version bumped)."""
    check_inplace(x)
    if x._rg and grad.enabled and x._grad_fn is not None:
        # filling a non-leaf cuts its history (node `name`: zero gradient upstream)
        from .elementwise import _detached_overwrite
        return _detached_overwrite(x, arr, name)
    x._data[...] = arr
    x._vc[0] += 1
    return x


def fill_(x, value):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        value = value._data
    return _fill_inplace(x, value)


def zero_(x):
    return _fill_inplace(x, 0, "ZeroBackward0")


def uniform_(x, a=0, b=1, *, generator=None):
    return _fill_inplace(x, _rng.uniform(_gen(generator), x._data.shape, float(a), float(b), x._data.dtype),
                         "UniformBackward0")


def normal_(x, mean=0, std=1, *, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _fill_inplace(x, _rng.normal(_gen(generator), x._data.shape, float(mean), float(std), x._data.dtype),
                         "NormalBackward0")


def random_(x, *args, generator=None, **kw):
    low = high = None
    if "to" in kw:
        args = args + (kw.pop("to"),)
    if "from" in kw:
        args = (kw.pop("from"),) + args
    if len(args) == 1:
        high = int(args[0])
    elif len(args) == 2:
        low, high = (None if args[0] is None else int(args[0])), (None if args[1] is None else int(args[1]))
        if low is None:
            low = 0
    return _fill_inplace(x, _rng.random_(_gen(generator), x._data.shape, x._data.dtype, low, high),
                         f"RandomBackward{len(args)}")


def bernoulli_(x, p=0.5, *, generator=None):
    g = _gen(generator)
    if isinstance(p, Tensor):
        arr = _rng.bernoulli_tensor(g, np.broadcast_to(p._data, x._data.shape), x._data.dtype)
    else:
        arr = _rng.bernoulli_scalar(g, x._data.shape, float(p), x._data.dtype)
    return _fill_inplace(x, arr, "BernoulliBackward1" if isinstance(p, Tensor) else "BernoulliBackward2")


def exponential_(x, lambd=1, *, generator=None):
    return _fill_inplace(x, _rng.exponential(_gen(generator), x._data.shape, float(lambd), x._data.dtype),
                         "ExponentialBackward0")


def geometric_(x, p, *, generator=None):
    u = _rng.rand(_gen(generator), x._data.shape, np.float64)
    return _fill_inplace(x, np.ceil(np.log(u) / np.log1p(-p)))


def log_normal_(x, mean=1, std=2, *, generator=None):
    z = _rng.normal(_gen(generator), x._data.shape, float(mean), float(std), x._data.dtype)
    return _fill_inplace(x, np.exp(z))


def cauchy_(x, median=0, sigma=1, *, generator=None):
    u = _rng.rand(_gen(generator), x._data.shape, x._data.dtype)
    return _fill_inplace(x, median + sigma * np.tan(np.pi * (u - 0.5)))


def copy_(x, src, non_blocking=False):
    from .elementwise import copy_ as _copy
    return _copy(x, src)


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
        shape = _size(args)
        _check_size(shape)
        return _finish(np.zeros(shape, dtype.np), False, device)
    if len(args) == 1:
        return _finish(np.array(_array_from_data(args[0], dtype), copy=True), False, device)
    raise TypeError("new(): invalid arguments")


_ = cpu
