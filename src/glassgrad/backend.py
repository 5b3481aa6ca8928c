"""The one module that knows NumPy from CuPy.

Ops are written once against the NumPy API.  Without a GPU, ``GLASSGRAD_STRICT_DEVICE=1`` puts _strict.py's CuPy
look-alike in CuPy's place: a ``cuda`` device whose arrays refuse every silent conversion to host arrays.  CuPy arrays implement NumPy's
``__array_ufunc__``/``__array_function__`` protocols, so ``np.exp(cupy_array)`` runs on the
GPU; only array *creation* needs to be told where to put memory, and that goes through
``xp_for(device)`` here.
"""
import numpy as np

try:  # optional GPU backend
    import cupy as _cupy  # noqa: F401
except Exception:  # pragma: no cover - no GPU on CI
    _cupy = None

STRICT = False
if _cupy is None:
    import os as _os
    if _os.environ.get("GLASSGRAD_STRICT_DEVICE") == "1":     # the strict stand-in device (_strict.py) as CuPy
        from . import _strict
        _cupy, STRICT = _strict.xp, True


def cuda_available():
    if _cupy is None:
        return False
    try:
        return _cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def device_count():
    if not cuda_available():
        return 0
    return _cupy.cuda.runtime.getDeviceCount()


def xp_for(device):
    """Array module for a glassgrad device."""
    if device.type == "cpu":
        return np
    if _cupy is None:
        raise AssertionError("Torch not compiled with CUDA enabled")
    return _cupy


def xp_of(arr):
    """Array module that owns `arr`."""
    if arr.__class__ is np.ndarray:
        return np
    return _cupy if _cupy is not None and isinstance(arr, _cupy.ndarray) else np


def device_of(arr):
    from ._device import cpu, device
    if arr.__class__ is np.ndarray or _cupy is None or not isinstance(arr, _cupy.ndarray):
        return cpu
    return device("cuda", arr.device.id)


def to_device(arr, dev):
    """Copy `arr` to `dev` (no copy when it is already there)."""
    if dev.type == "cpu":
        if arr.__class__ is np.ndarray:
            return arr
        return _cupy.asnumpy(arr)
    if dev.type != "cuda":
        raise RuntimeError(f"PyTorch is not linked with support for {dev.type} devices (glassgrad's tensors live "
                           "on cpu or, through CuPy, cuda)")
    if _cupy is None:
        raise AssertionError("Torch not compiled with CUDA enabled")
    with _cupy.cuda.Device(dev.index or 0):
        return _cupy.asarray(arr)


def to_host(arr):
    return arr if arr.__class__ is np.ndarray else _cupy.asnumpy(arr)


def synchronize(device=None):
    if _cupy is not None:
        _cupy.cuda.runtime.deviceSynchronize()


def from_dlpack(ext):
    """A CuPy array sharing the memory of a CUDA DLPack exporter."""
    if _cupy is None:
        raise RuntimeError("from_dlpack: a CUDA tensor needs the GPU backend (CuPy), which is not installed")
    return _cupy.from_dlpack(ext)


_ARRAYS = (np.ndarray,) if _cupy is None else (np.ndarray, _cupy.ndarray)


def on_device(a):
    """Whether `a` is a device (CuPy) array -- not a NumPy array, nor a NumPy scalar (a CPU result can be one)."""
    return a.__class__ is not np.ndarray and isinstance(a, _ARRAYS)


def as_array(y, dtype=None):
    """An op's result as an array on its device: a NumPy scalar (what a NumPy reduction returns) becomes a 0-d
    host array; arrays -- host or device (CuPy's reductions return 0-d device arrays) -- pass through (cast to
    `dtype` if given).  The device-neutral spelling of ``np.asarray(result[, dtype])``."""
    if isinstance(y, _ARRAYS):
        return y if dtype is None else y.astype(dtype, copy=False)
    return np.asarray(y, dtype)


def owner(arr):
    """The storage `arr` views: the outermost array of `arr`'s dtype that it is a view of (`arr` itself when
    it owns its memory).  Views made by NumPy's as_strided are followed through the stand-in object it puts
    between a view and its source; arrays of another dtype further down (a file mapping's bytes, say) are
    not part of the storage."""
    dt = arr.dtype
    while True:
        b = arr.base
        if b is not None and not isinstance(b, _ARRAYS) and hasattr(b, "__array_interface__"):
            b = getattr(b, "base", None)            # as_strided's DummyArray
        if not isinstance(b, _ARRAYS) or b.dtype != dt:
            return arr
        arr = b


def data_ptr(arr):
    """Address of `arr`'s first element (host or device memory)."""
    if arr.__class__ is np.ndarray:
        return arr.__array_interface__["data"][0]
    return arr.data.ptr


def writeable(arr):
    """NumPy's ``flags.writeable`` for any array: a device array (CuPy keeps no such flag; its arrays are always
    writable) counts as writeable unless a dimension of stride 0 shares its elements (a broadcast view)."""
    if arr.__class__ is np.ndarray:
        return arr.flags.writeable
    return all(st != 0 or n <= 1 for n, st in zip(arr.shape, arr.strides))


def shared_writable(arr):
    """A writable view of the memory `arr` reads, for writing one value into every element: NumPy makes
    arrays whose elements share memory (a stride of 0: expand, broadcast) read-only; their dimensions of
    stride 0 are collapsed to one element here.  Only memory `arr` already addresses is reached."""
    if arr.__class__ is not np.ndarray or arr.flags.writeable:
        return arr
    own = owner(arr)
    if not own.flags.writeable or not (own.flags.c_contiguous or own.flags.f_contiguous):
        return None
    off = (data_ptr(arr) - data_ptr(own)) // arr.itemsize
    shape = tuple(1 if st == 0 else n for n, st in zip(arr.shape, arr.strides))
    flat = own.reshape(-1, order="A")[off:]
    return np.lib.stride_tricks.as_strided(flat, shape, arr.strides, writeable=True)


def as_strided(arr, shape, strides):
    """A writable view of `arr`'s memory with byte `strides` (the caller checks the bounds)."""
    if arr.__class__ is np.ndarray:
        if arr.dtype.kind == "f" and arr.dtype.itemsize == 1:     # ml_dtypes' float8_e5m2: NumPy cannot read
            u = np.lib.stride_tricks.as_strided(arr.view(np.uint8), shape, strides, writeable=True)   # its typestr
            return u.view(arr.dtype)
        return np.lib.stride_tricks.as_strided(arr, shape, strides, writeable=True)
    return _cupy.lib.stride_tricks.as_strided(arr, shape, strides)


def contiguous(a):
    """Device-neutral ``np.ascontiguousarray(a)``: NumPy's creation functions (ascontiguousarray, asarray, array)
    dispatch only on ``like=``, never on their argument, so a device array is passed as its own ``like``."""
    return np.ascontiguousarray(a) if a.__class__ is np.ndarray else np.ascontiguousarray(a, like=a)


def host_apply(fn, *arrays):
    """``fn(*arrays)`` for a kernel that only NumPy can run (a Python-level loop such as ``np.frompyfunc(math.erf)``,
    an object-dtype step): on the CPU it is just the call; device arrays are copied to the host, and the result
    (an array, or a tuple of arrays) is copied back to the device of the first device array -- an explicit round
    trip, used only where there is no NumPy-API (device) way to compute the same values."""
    dev = next((a for a in arrays if a.__class__ is not np.ndarray and isinstance(a, _ARRAYS)), None)
    if dev is None:
        return fn(*arrays)
    d = device_of(dev)
    y = fn(*[to_host(a) if isinstance(a, _ARRAYS) else a for a in arrays])
    if isinstance(y, tuple):
        return tuple(to_device(np.asarray(v), d) for v in y)
    return to_device(np.asarray(y), d)


_LIBM = {"erf": "erf", "erfc": "erfc", "lgamma": "gammaln"}    # C library name -> CuPy's cupyx.scipy.special name
_libm_host = {}


def libm(name, x):
    """The C library's elementwise ``name`` (erf, erfc, lgamma) of the float64 array `x`, on `x`'s device.  NumPy
    has none of them: on the host, Python's ``math.<name>`` per element (the C library torch's CPU kernels call);
    on CuPy, its elementwise kernel (``cupyx.scipy.special``, CUDA's libdevice -- what torch's CUDA kernels call);
    on the strict stand-in device, that device's own kernel."""
    if x.__class__ is not np.ndarray and (_cupy is None or not isinstance(x, _cupy.ndarray)):
        x = np.asarray(x, np.float64)       # a NumPy scalar or a Python number: on the host
    if x.__class__ is np.ndarray:
        f = _libm_host.get(name)
        if f is None:
            import math
            f = _libm_host[name] = np.frompyfunc(getattr(math, name), 1, 1)
        return np.asarray(f(x), dtype=np.float64) if x.size else np.zeros(x.shape)
    if STRICT:
        special = _cupy.special
    else:
        import cupyx.scipy.special as special
    return getattr(special, _LIBM[name])(x)


_SM = {}


def sm_layout(index=0):
    """(multiprocessors, threads per multiprocessor) of CUDA device `index`: what ATen's random kernels size their
    grid by (the strict stand-in plays an H100 SXM: 132 x 2048)."""
    sm = _SM.get(index)
    if sm is None:
        if STRICT:
            p = _cupy.cuda.runtime.getDeviceProperties(index)
            sm = (p["multiProcessorCount"], p["maxThreadsPerMultiProcessor"])
        else:
            attrs = _cupy.cuda.Device(index).attributes
            sm = (attrs["MultiProcessorCount"], attrs["MaxThreadsPerMultiProcessor"])
        _SM[index] = sm
    return sm


def device_arange(index=0):
    """``k -> arange(k, dtype=uint64)`` on CUDA device `index` (the random kernels' thread and call numbers)."""
    def arange(k):
        with _cupy.cuda.Device(index):
            return _cupy.arange(k, dtype=np.uint64)
    return arange


def anchor(dev):
    """A 0-element array on device `dev` to pass as NEP 35's ``like=`` (None for the CPU): creation on a device
    named by the caller rather than by an input array."""
    if dev is None or dev.type == "cpu" or _cupy is None:
        return None
    with _cupy.cuda.Device(dev.index or 0):
        return _cupy.empty(0, dtype=np.int8)


_SCATTER_UFUNCS = (np.add, np.subtract, np.maximum, np.minimum)


def ufunc_at(ufunc, a, ix, vals):
    """``ufunc.at(a, ix, vals)`` on any device.  CuPy offers ufunc.at only for its scatter kernels (add, subtract,
    maximum, minimum); another ufunc on a device array is applied in rounds: the k-th occurrence of each target
    (in index order, as ufunc.at applies them) in round k, so each round's targets are distinct and a plain
    fancy-indexed update is exact.  `ix`: one index array into `a`'s first axis, or a tuple of index arrays."""
    if a.__class__ is np.ndarray or ufunc in _SCATTER_UFUNCS:
        ufunc.at(a, ix, vals)
        return
    comps = ix if isinstance(ix, tuple) else (ix,)
    shape = np.broadcast_shapes(*[np.shape(c) for c in comps])
    comps = [np.broadcast_to(c, shape).reshape(-1) for c in comps]
    rest = a.shape[len(comps):]
    v = np.broadcast_to(vals, shape + rest).reshape((-1,) + rest)
    n = comps[0].size
    if n == 0:
        return
    key = np.ravel_multi_index(comps, a.shape[:len(comps)], mode="wrap")
    order = np.argsort(key, kind="stable")
    sk = key[order]
    first = np.concatenate([np.ones(1, bool, like=sk), sk[1:] != sk[:-1]])
    starts = np.nonzero(first)[0]
    pos = np.arange(n, like=sk)
    rank = np.empty(n, np.int64, like=sk)
    rank[order] = pos - starts[np.cumsum(first) - 1]
    for r in range(int(rank.max()) + 1):
        sel = rank == r
        t = tuple(c[sel] for c in comps)
        a[t] = ufunc(a[t], v[sel])


def like(x):
    """`x` as NEP 35's ``like=`` argument of an allocation beside it: an array (host or device) as it is,
    anything else (a NumPy scalar, a Python number) None -- a host allocation, as without ``like=``."""
    return x if isinstance(x, _ARRAYS) else None
