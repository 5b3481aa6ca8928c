"""The random generators' front end: torch.Generator (PyTorch's mt19937 stream, bit for bit, in _rng), the
global seed functions, random creation and the random in-place initialisers.

ops: Generator manual_seed seed initial_seed get_rng_state set_rng_state rand randn randint randperm
     rand_like randn_like randint_like normal bernoulli multinomial; Tensor.uniform_ normal_ random_
     bernoulli_ exponential_ geometric_ log_normal_ cauchy_
"""
import math

import numpy as np

from .. import _args, _dtype, _rng, backend
from .._device import as_device
from .._tensor import Tensor, _make
from .creation import _spec, _new, _finish, _fill_inplace, _size, _dt, _device_arg, check_alloc
from ._core import broadcast_shape

__all__ = ["rand_like", "randn_like", "randint_like", "rand", "randn", "randint", "randperm", "normal", "bernoulli",
           "multinomial", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "Generator",
           "default_generator"]


# -- generators -------------------------------------------------------------------------------
class Generator(_rng.Generator):
    """torch.Generator (CPU): PyTorch's mt19937 stream, bit for bit."""

    def __init__(self, device="cpu"):
        super().__init__()
        self.device = as_device(device)

    def manual_seed(self, seed):
        if isinstance(seed, bool) or _args.as_int(seed) is None:
            raise RuntimeError(f"manual_seed expected a long, but got {_args.type_name(seed)}")
        seed = _args.as_int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        super().manual_seed(seed)
        return self

    def get_state(self):
        return _make(super().get_state())

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {_args.type_name(new_state)}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        super().set_state(new_state._data)
        return self


default_generator = Generator()
default_generator.seed()      # torch 2.13 seeds its default CPU generator randomly at start-up


def manual_seed(seed):
    default_generator.manual_seed(int(seed))      # torch.manual_seed calls int() first: '5' and 1.5 are seeds
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


# -- random ------------------------------------------------------------------------------------
def _gen_arg(generator, fn):
    if generator is not None and not isinstance(generator, _rng.Generator):
        raise TypeError(f"{fn}(): argument 'generator' must be torch.Generator, not {_args.type_name(generator)}")
    return _gen(generator)


def rand(*size_, size=None, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=False,
         requires_grad=False):
    shape, dt, dev = _spec("rand", size_, dtype, device, requires_grad, size)
    g = _gen_arg(generator, "rand")
    return _finish(_new(lambda sh: _pairs(lambda s2, rt: _rng.rand(g, s2, rt), sh, dt.np), shape, dt),
                   requires_grad, dev)


def _pairs(draw, shape, npdt):
    """draw(shape, dtype) for a real dtype; for a complex one, PyTorch draws into view_as_real of the result."""
    if npdt.kind != "c":
        return draw(shape, npdt)
    r = draw(tuple(shape) + (2,), np.float32 if npdt == np.complex64 else np.float64)
    return r.view(npdt)[..., 0]


def randn(*size_, size=None, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=False,
          requires_grad=False):
    shape, dt, dev = _spec("randn", size_, dtype, device, requires_grad, size)
    g = _gen_arg(generator, "randn")
    if dt.is_complex:        # PyTorch: normals of std 1/sqrt(2) into view_as_real of the result
        return _finish(_new(lambda sh: _complex_randn(g, sh, dt), shape, dt), requires_grad, dev)
    return _finish(_new(lambda sh: _rng.randn(g, sh, dt.np), shape, dt), requires_grad, dev)


def _complex_randn(g, shape, dt):
    r = _rng.normal(g, tuple(shape) + (2,), 0.0, 1.0 / math.sqrt(2.0), dt.to_real().np)
    return r.view(dt.np)[..., 0]


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
    for v in (low, high):       # torch: ints beyond int64 fail to unpack before anything else is looked at
        if isinstance(v, int) and not -2 ** 63 <= v < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
    low = _args.int_arg(low, "randint", "low", 1)
    high = _args.int_arg(high, "randint", "high", len(args) - 1)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position {len(args)}) must be tuple of ints, not "
                        f"{_args.type_name(size)}")
    shape = _size((size,), "randint")
    dt = _dt(dtype, _dtype.int64, "randint")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    g = _gen_arg(generator, "randint")
    return _finish(_new(lambda sh: _rng.randint(g, low, high, sh, dt.np), shape, dt), requires_grad,
                   _device_arg(device))


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False):
    n = _args.int_arg(n, "randperm", "n", 1)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    dt = _dt(dtype, _dtype.int64, "randperm")
    if dt is _dtype.bool:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    if dt.np.kind in "iu" and n - 1 > np.iinfo(dt.np).max:
        raise RuntimeError(f"value cannot be converted to type {dt.name}_t without overflow")
    if dt is _dtype.float16 and n > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    check_alloc((n,), 8)
    g = _gen_arg(generator, "randperm")
    return _finish(_new(lambda sh: _rng.randperm(g, n, dt.np), (n,), dt), requires_grad, _device_arg(device))


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
    g = _gen_arg(generator, "normal")
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None:
            raise TypeError("normal() received an invalid combination of arguments - got (Tensor, ..., tuple): a "
                            "size goes with a float mean and std only")
        ref = mean if isinstance(mean, Tensor) else std
        m = mean._data if isinstance(mean, Tensor) else np.asarray(_args.number_arg(mean, "normal", "mean", 1))
        s = std._data if isinstance(std, Tensor) else np.asarray(_args.number_arg(std, "normal", "std", 2))
        if not isinstance(std, Tensor) and s < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        if isinstance(std, Tensor) and not (s >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        shape = broadcast_shape(m.shape, s.shape)
        z = beside(ref._data, _rng.normal(g, shape, 0.0, 1.0, ref._data.dtype))
        return _finish((z * s + m).astype(ref._data.dtype), False)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - got (float, float): a float mean "
                        "and std need a size")
    mean, std = _args.number_arg(mean, "normal", "mean", 1), _args.number_arg(std, "normal", "std", 2)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"normal(): argument 'size' (position 3) must be tuple of ints, not {_args.type_name(size)}")
    shape = _size((size,), "normal")
    dt = _dt(dtype, None, "normal")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _finish(_new(lambda sh: _rng.normal(g, sh, float(mean), float(std), dt.np), shape, dt), requires_grad,
                   _device_arg(device))


def beside(x, arr):
    """A host draw `arr` placed on the device of array `x`.  The generators (_rng.py, distributions/_samplers.py)
    replay torch's CPU streams bit for bit in host code, with no NumPy-API form: their numbers are computed on the
    host and moved explicitly (as are a device tensor's parameters, with backend.to_host, before the draw)."""
    return arr if x.__class__ is np.ndarray else backend.to_device(arr, backend.device_of(x))


def bernoulli(input, p=None, *, generator=None, out=None):
    g = _gen_arg(generator, "bernoulli")
    a = input._data
    if p is not None:
        return _make(beside(a, _rng.bernoulli_scalar(g, a.shape, float(_args.number_arg(p, "bernoulli", "p", 2)),
                                                     a.dtype)))
    return _make(beside(a, _rng.bernoulli_tensor(g, backend.to_host(a), a.dtype)))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    num_samples = _args.int_arg(num_samples, "multinomial", "num_samples", 2)
    a = input._data
    return _make(beside(a, _rng.multinomial(_gen_arg(generator, "multinomial"), backend.to_host(a), num_samples,
                                            _args.bool_arg(replacement, "multinomial", "replacement", 3))))


# -- in-place initialisers (Tensor methods) ---------------------------------------------------------
def _float_arg(v, fn, arg, pos):
    return float(_args.number_arg(v, fn, arg, pos))


def uniform_(x, a=0, b=1, *, generator=None):
    a, b = _float_arg(a, "uniform_", "from", 1), _float_arg(b, "uniform_", "to", 2)
    g = _gen_arg(generator, "uniform_")
    return _fill_inplace(x, _pairs(lambda s, dt: _rng.uniform(g, s, a, b, dt), x._data.shape, x._data.dtype),
                         "UniformBackward0")


def normal_(x, mean=0, std=1, *, generator=None):
    mean, std = _float_arg(mean, "normal_", "mean", 1), _float_arg(std, "normal_", "std", 2)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    g = _gen_arg(generator, "normal_")
    if x._data.dtype.kind == "c":       # PyTorch: std / sqrt(2) for each of the two parts
        std = std / math.sqrt(2.0)
    return _fill_inplace(x, _pairs(lambda s, dt: _rng.normal(g, s, mean, std, dt), x._data.shape, x._data.dtype),
                         "NormalBackward0")


def random_(x, *args, generator=None, **kw):
    if len(args) > 2:
        raise TypeError(f"random_() takes 2 positional arguments but {len(args)} were given")
    low = high = None
    if "to" in kw:
        args = args + (kw.pop("to"),)
    if "from" in kw:
        args = (kw.pop("from"),) + args
    args = tuple(None if a is None else _args.int_arg(a, "random_", ("from", "to")[i + 2 - len(args)], i + 1)
                 for i, a in enumerate(args))
    if not args and x.dtype in _dtype._LIMITED:
        raise NotImplementedError(f'"random_kernel_cpu" not implemented for \'{x.dtype.name_c}\'')
    if len(args) == 1:
        high = args[0]
    elif len(args) == 2:
        low, high = args
        if low is None:
            low = 0
    return _fill_inplace(x, _rng.random_(_gen_arg(generator, "random_"), x._data.shape, x._data.dtype, low, high),
                         f"RandomBackward{len(args)}")


def bernoulli_(x, p=0.5, *, generator=None):
    g = _gen_arg(generator, "bernoulli_")
    if isinstance(p, Tensor):
        arr = _rng.bernoulli_tensor(g, np.broadcast_to(p._data, x._data.shape), x._data.dtype)
    else:
        arr = _rng.bernoulli_scalar(g, x._data.shape, _float_arg(p, "bernoulli_", "p", 1), x._data.dtype)
    return _fill_inplace(x, arr, "BernoulliBackward1" if isinstance(p, Tensor) else "BernoulliBackward2")


def exponential_(x, lambd=1, *, generator=None):
    lambd = _float_arg(lambd, "exponential_", "lambd", 1)
    return _fill_inplace(x, _rng.exponential(_gen_arg(generator, "exponential_"), x._data.shape, lambd,
                                             x._data.dtype), "ExponentialBackward0")


def geometric_(x, p, *, generator=None):
    p = _float_arg(p, "geometric_", "p", 1)
    return _fill_inplace(x, _rng.geometric(_gen_arg(generator, "geometric_"), x._data.shape, p, x._data.dtype))


def log_normal_(x, mean=1, std=2, *, generator=None):
    mean, std = _float_arg(mean, "log_normal_", "mean", 1), _float_arg(std, "log_normal_", "std", 2)
    return _fill_inplace(x, _rng.log_normal(_gen_arg(generator, "log_normal_"), x._data.shape, mean, std,
                                            x._data.dtype))


def cauchy_(x, median=0, sigma=1, *, generator=None):
    median, sigma = _float_arg(median, "cauchy_", "median", 1), _float_arg(sigma, "cauchy_", "sigma", 2)
    return _fill_inplace(x, _rng.cauchy(_gen_arg(generator, "cauchy_"), x._data.shape, median, sigma,
                                        x._data.dtype))
