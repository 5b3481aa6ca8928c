"""The random generators' front end: torch.Generator -- on the CPU PyTorch's mt19937 stream, bit for bit (_rng);
on CUDA PyTorch's Philox generator, its numbers made on the device (_rng/philox.py, _rng/cuda.py) --, the global
seed functions, random creation and the random in-place initialisers.  Every draw goes through ``_source``: a
tensor's device picks the generator kind, as torch's check_generator does.

ops: Generator manual_seed seed initial_seed get_rng_state set_rng_state rand randn randint randperm
     rand_like randn_like randint_like normal bernoulli multinomial; Tensor.uniform_ normal_ random_
     bernoulli_ exponential_ geometric_ log_normal_ cauchy_
"""
import math

import numpy as np

from .. import _args, _cuda_kernels, _dtype, _rng, backend
from .._device import as_device, default_device
from .._rng import cuda as _rng_cuda, philox as _philox
from .._tensor import Tensor, _make
from .creation import _spec, _new, _finish, _fill_inplace, _size, _dt, _device_arg, check_alloc
from ._core import broadcast_shape
from . import conversion as _cv
from .. import _memory_format as _mf

__all__ = ["rand_like", "randn_like", "randint_like", "rand", "randn", "randint", "randperm", "normal", "bernoulli",
           "multinomial", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "Generator",
           "default_generator"]

_NO_CUDA_GEN = ("Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into two shared "
                "libraries: a CPU library and a CUDA library; this error has occurred because you are trying to use "
                "some CUDA functionality, but the CUDA library has not been loaded by the dynamic linker for some "
                "reason.  The CUDA library MUST be loaded, EVEN IF you don't directly use any symbols from the CUDA "
                "library! One common culprit is a lack of -Wl,--no-as-needed in your link arguments; many dynamic "
                "linkers will delete dynamic library dependencies if you don't depend on any of their symbols.  You "
                "can check if this has occurred by using ldd on your binary to see if there is a dependency on "
                "*_cuda.so library.")


# -- generators -------------------------------------------------------------------------------
class Generator(_rng.Generator):
    """torch.Generator: on the CPU PyTorch's mt19937 stream, bit for bit; on CUDA PyTorch's Philox state (seed and
    offset; the numbers are made on the device)."""

    _philox = None

    def __init__(self, device="cpu"):
        super().__init__()
        self.device = as_device(device)
        if self.device.type == "cuda":
            if not backend.cuda_available():
                raise RuntimeError(_NO_CUDA_GEN)
            self._philox = _philox.PhiloxState()

    def manual_seed(self, seed):
        if isinstance(seed, bool) or _args.as_int(seed) is None:
            raise RuntimeError(f"manual_seed expected a long, but got {_args.type_name(seed)}")
        seed = _args.as_int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        if self._philox is not None:
            self._philox.manual_seed(seed)
        else:
            super().manual_seed(seed)
        return self

    def seed(self):
        return self._philox.seed() if self._philox is not None else super().seed()

    def initial_seed(self):
        return self._philox.initial_seed() if self._philox is not None else super().initial_seed()

    def get_state(self):
        return _make(self._philox.get_state() if self._philox is not None else super().get_state())

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {_args.type_name(new_state)}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if self._philox is not None:
            self._philox.set_state(backend.to_host(new_state._data))
        else:
            super().set_state(new_state._data)
        return self

    def get_offset(self):
        if self._philox is None:
            raise RuntimeError("CPU Generator does not use offset")
        return self._philox.offset

    def set_offset(self, offset):
        if self._philox is None:
            raise RuntimeError("CPU Generator does not use offset")
        offset = _args.int_arg(offset, "set_offset", "offset", 1)
        if offset % 4:
            raise RuntimeError("offset must be a multiple of 4")
        self._philox.offset = offset
        return self

    def __repr__(self):
        return f"<glassgrad.Generator device={self.device} initial_seed={self.initial_seed()}>"

    def clone_state(self):
        g = Generator(self.device)
        g.set_state(self.get_state())
        return g

    def clone(self):
        g = super().clone()
        if self._philox is not None:
            g._philox = self._philox.clone()
        return g


default_generator = Generator()
default_generator.seed()      # torch 2.13 seeds its default CPU generator randomly at start-up


_cuda_generators = {}


def cuda_generator(index=0):
    """torch.cuda.default_generators[index]: made on first use (seeded with torch's default seed, or with the last
    torch.manual_seed)."""
    g = _cuda_generators.get(index)
    if g is None:
        g = _cuda_generators[index] = Generator(f"cuda:{index}")
        if _cuda_seed[0] is not None:
            g.manual_seed(_cuda_seed[0])
    return g


_cuda_seed = [None]        # torch.manual_seed / torch.seed also seed every CUDA generator (made or not yet)


def seed_cuda_all(seed):
    _cuda_seed[0] = seed
    for g in _cuda_generators.values():
        g.manual_seed(seed)


def manual_seed(seed):
    seed = int(seed)                              # torch.manual_seed calls int() first: '5' and 1.5 are seeds
    default_generator.manual_seed(seed)
    seed_cuda_all(seed)
    return default_generator


def seed():
    s = default_generator.seed()
    seed_cuda_all(s)
    return s


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def _gen(g):
    return default_generator if g is None else g


_HOST_STREAM = [False]


class host_stream_for_cuda:
    """``with host_stream_for_cuda():`` -- CUDA tensors draw from the CPU generator's stream (computed on the host
    and moved) instead of their CUDA generator: a private switch for the tests that compare an op's device path
    with its CPU path value for value (dropout masks, initialisers, samplers).  torch has no such mode; outside
    the block each device has its own generator, as in torch."""

    def __enter__(self):
        self._outer, _HOST_STREAM[0] = _HOST_STREAM[0], True
        return self

    def __exit__(self, *exc):
        _HOST_STREAM[0] = self._outer


def _source(generator, device, fn):
    """(module, generator) drawing a tensor on `device` (None: the default device): the CPU replica and a CPU
    generator, or the CUDA samplers and a CUDA generator's launcher on that device -- a generator of the other
    kind is torch's RuntimeError."""
    dev = as_device(device) if device is not None else (default_device() or as_device("cpu"))
    if generator is not None and not isinstance(generator, _rng.Generator):
        raise TypeError(f"{fn}(): argument 'generator' must be torch.Generator, not {_args.type_name(generator)}")
    if dev.type == "cuda" and backend.cuda_available() and not _HOST_STREAM[0]:
        idx = dev.index or 0
        g = cuda_generator(idx) if generator is None else generator
        if getattr(g, "_philox", None) is None:
            raise RuntimeError("Expected a 'cuda' device type for generator but found 'cpu'")
        kernel = _cuda_kernels.philox_words if _cuda_kernels.available() else None
        return _rng_cuda, _rng_cuda.Launcher(g._philox, backend.sm_layout(idx), backend.device_arange(idx), kernel)
    g = _gen(generator)
    if getattr(g, "_philox", None) is not None:
        raise RuntimeError("Expected a 'cpu' device type for generator but found 'cuda'")
    return _rng, g


def _src_of(x, generator, fn):
    return _source(generator, backend.device_of(x._data), fn)


# -- random ------------------------------------------------------------------------------------
def _gen_arg(generator, fn):
    if generator is not None and not isinstance(generator, _rng.Generator):
        raise TypeError(f"{fn}(): argument 'generator' must be torch.Generator, not {_args.type_name(generator)}")
    return _gen(generator)


def rand(*size_, size=None, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=False,
         requires_grad=False):
    shape, dt, dev = _spec("rand", size_, dtype, device, requires_grad, size)
    m, g = _source(generator, dev, "rand")
    return _finish(_new(lambda sh: _pairs(lambda s2, rt: m.uniform(g, s2, 0.0, 1.0, rt), sh, dt.np), shape, dt),
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
    m, g = _source(generator, dev, "randn")
    if dt.is_complex:        # PyTorch: normals of std 1/sqrt(2) into view_as_real of the result
        return _finish(_new(lambda sh: _complex_randn(m, g, sh, dt), shape, dt), requires_grad, dev)
    return _finish(_new(lambda sh: m.normal(g, sh, 0.0, 1.0, dt.np), shape, dt), requires_grad, dev)


def _complex_randn(m, g, shape, dt):
    r = m.normal(g, tuple(shape) + (2,), 0.0, 1.0 / math.sqrt(2.0), dt.to_real().np)
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
    dev = _device_arg(device)
    m, g = _source(generator, dev, "randint")
    return _finish(_new(lambda sh: m.random_(g, sh, dt.np, low, high), shape, dt), requires_grad, dev)


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
    dev = _device_arg(device)
    m, g = _source(generator, dev, "randperm")
    return _finish(_new(lambda sh: m.randperm(g, n, dt.np), (n,), dt), requires_grad, dev)


def _laid_like(t, input, fmt, fn):
    """A fresh *_like result `t` (drawn in C order) under the layout of torch's *_like of `input`: torch draws
    into memory order, so the draws keep their order in memory."""
    if fmt is not None or not input._data.flags.c_contiguous:
        t._data = _cv.restride(t._data, _cv.like_strides(input, fmt, fn))
    return t


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _laid_like(rand(input._data.shape, dtype=dtype or input.dtype, device=device or input.device,
                           requires_grad=requires_grad), input, memory_format, "rand_like")


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    if memory_format is None and input._data.flags.c_contiguous:
        return randn(input._data.shape, dtype=dtype or input.dtype, device=device or input.device,
                     requires_grad=requires_grad)
    st = _cv.like_strides(input, memory_format, "randn_like")
    dt = _dt(dtype, None, "randn_like") if dtype is not None else input.dtype
    dev = _device_arg(device) if device is not None else input.device
    m, g = _source(None, dev, "randn_like")
    if st is None or m is not _rng or dt.is_complex or _mf.is_contiguous_as(input.shape, st, _mf.contiguous_format):
        return _laid_like(randn(input._data.shape, dtype=dt, device=dev, requires_grad=requires_grad), input,
                          memory_format, "randn_like")
    # a non-contiguous result: torch's normal_ draws one value at a time (no 16-wide fill), in memory order
    arr = _new(lambda sh: m.normal(g, sh, 0.0, 1.0, dt.np, contiguous=False), input._data.shape, dt)
    return _finish(_cv.restride(arr, st), requires_grad, dev)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, memory_format=None,
                 **kw):
    if high is None:
        low, high = 0, low
    return _laid_like(randint(low, high, input._data.shape, dtype=dtype or input.dtype, device=device or input.device),
                      input, memory_format, "randint_like")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
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
        mod, g = _src_of(ref, generator, "normal")
        z = beside(ref._data, mod.normal(g, shape, 0.0, 1.0, ref._data.dtype))
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
    dev = _device_arg(device)
    m, g = _source(generator, dev, "normal")
    return _finish(_new(lambda sh: m.normal(g, sh, float(mean), float(std), dt.np), shape, dt), requires_grad,
                   dev)


def beside(x, arr):
    """A host draw `arr` placed on the device of array `x` (the distribution samplers' streams are host code)."""
    return arr if x.__class__ is np.ndarray else backend.to_device(arr, backend.device_of(x))


def bernoulli(input, p=None, *, generator=None, out=None):
    a = input._data
    m, g = _src_of(input, generator, "bernoulli")
    if p is not None:
        return _make(beside(a, m.bernoulli_scalar(g, a.shape, float(_args.number_arg(p, "bernoulli", "p", 2)),
                                                  a.dtype)))
    return _make(beside(a, m.bernoulli_tensor(g, a if m is _rng_cuda else backend.to_host(a), a.dtype)))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    num_samples = _args.int_arg(num_samples, "multinomial", "num_samples", 2)
    m, g = _src_of(input, generator, "multinomial")
    a = input._data
    return _make(beside(a, m.multinomial(g, a if m is _rng_cuda else backend.to_host(a), num_samples,
                                         _args.bool_arg(replacement, "multinomial", "replacement", 3))))


def draws_on_device(x):
    """Whether random draws for `x` come from its CUDA generator (a CUDA tensor, the host-stream switch off): then
    dropout takes torch's fused CUDA kernel (native_dropout) and rrelu its CUDA noise kernel."""
    return x._data.__class__ is not np.ndarray and not _HOST_STREAM[0]


def dropout_mask(x, keep):
    """fused_dropout's keep mask for the CUDA tensor `x` (bool, x's shape): 4 or 2 elements a thread where x is
    dense and its size divides, else the unrolled layout (ATen's get_vector_size)."""
    m, g = _src_of(x, None, "dropout")
    a = x._data
    n = a.size
    vec = 1 if not (a.flags.c_contiguous or a.flags.f_contiguous) else 4 if n % 4 == 0 else 2 if n % 2 == 0 else 1
    return m.dropout_mask(g, n, keep, vec).reshape(a.shape)


# -- in-place initialisers (Tensor methods) ---------------------------------------------------------
def _float_arg(v, fn, arg, pos):
    return float(_args.number_arg(v, fn, arg, pos))


def _drawn(x, m, draw):
    """draw(shape, contiguous) for the elements of x in the order torch's CPU kernels fill them: memory order
    (TensorIterator's dimension order) when x is not contiguous, which also takes torch's one-at-a-time
    paths (contiguous=False)."""
    a = x._data
    if a.flags.c_contiguous or m is not _rng:
        return draw(a.shape, True)
    perm = _mf.dim_order(a.shape, x.stride())[::-1]             # outermost first
    vals = draw(tuple(a.shape[d] for d in perm), False)
    return vals.transpose(np.argsort(perm))


def uniform_(x, a=0, b=1, *, generator=None):
    a, b = _float_arg(a, "uniform_", "from", 1), _float_arg(b, "uniform_", "to", 2)
    m, g = _src_of(x, generator, "uniform_")
    return _fill_inplace(x, _drawn(x, m, lambda sh, c: _pairs(lambda s, dt: m.uniform(g, s, a, b, dt), sh,
                                                              x._data.dtype)), "UniformBackward0")


def normal_(x, mean=0, std=1, *, generator=None):
    mean, std = _float_arg(mean, "normal_", "mean", 1), _float_arg(std, "normal_", "std", 2)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    m, g = _src_of(x, generator, "normal_")
    if x._data.dtype.kind == "c":       # PyTorch: std / sqrt(2) for each of the two parts
        std = std / math.sqrt(2.0)
    def draw(sh, c):        # (contiguous=False: torch's one-at-a-time path, the CPU replica only)
        return _pairs(lambda s, dt: m.normal(g, s, mean, std, dt) if c else
                      m.normal(g, s, mean, std, dt, contiguous=False), sh, x._data.dtype)
    return _fill_inplace(x, _drawn(x, m, draw), "NormalBackward0")


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
    m, g = _src_of(x, generator, "random_")
    return _fill_inplace(x, _drawn(x, m, lambda sh, c: m.random_(g, sh, x._data.dtype, low, high)),
                         f"RandomBackward{len(args)}")


def bernoulli_(x, p=0.5, *, generator=None):
    m, g = _src_of(x, generator, "bernoulli_")
    if isinstance(p, Tensor):
        pa = p._data if m is _rng_cuda else backend.to_host(p._data)
        arr = m.bernoulli_tensor(g, np.broadcast_to(pa, x._data.shape), x._data.dtype)
    else:
        p = _float_arg(p, "bernoulli_", "p", 1)
        arr = _drawn(x, m, lambda sh, c: m.bernoulli_scalar(g, sh, p, x._data.dtype))
    return _fill_inplace(x, arr, "BernoulliBackward1" if isinstance(p, Tensor) else "BernoulliBackward2")


def exponential_(x, lambd=1, *, generator=None):
    lambd = _float_arg(lambd, "exponential_", "lambd", 1)
    m, g = _src_of(x, generator, "exponential_")
    return _fill_inplace(x, _drawn(x, m, lambda sh, c: m.exponential(g, sh, lambd, x._data.dtype)),
                         "ExponentialBackward0")


def geometric_(x, p, *, generator=None):
    p = _float_arg(p, "geometric_", "p", 1)
    m, g = _src_of(x, generator, "geometric_")
    return _fill_inplace(x, _drawn(x, m, lambda sh, c: m.geometric(g, sh, p, x._data.dtype)))


def log_normal_(x, mean=1, std=2, *, generator=None):
    mean, std = _float_arg(mean, "log_normal_", "mean", 1), _float_arg(std, "log_normal_", "std", 2)
    m, g = _src_of(x, generator, "log_normal_")
    return _fill_inplace(x, _drawn(x, m, lambda sh, c: m.log_normal(g, sh, mean, std, x._data.dtype)))


def cauchy_(x, median=0, sigma=1, *, generator=None):
    median, sigma = _float_arg(median, "cauchy_", "median", 1), _float_arg(sigma, "cauchy_", "sigma", 2)
    m, g = _src_of(x, generator, "cauchy_")
    return _fill_inplace(x, _drawn(x, m, lambda sh, c: m.cauchy(g, sh, median, sigma, x._data.dtype)))
