"""A thin ctypes binding to the BLAS library NumPy already loaded (the OpenBLAS its wheels ship), for the
two things ``numpy`` does not expose:

* ``axpy(alpha, x, y)``: ``y += alpha * x`` in place.  OpenBLAS's vector kernels use fused
  multiply-add instructions where the CPU has them, as ATen's ``add(alpha=)`` does, so optimizer
  updates round like PyTorch's and run at memory speed on all BLAS threads (a float64 emulation of the
  fused step is ~8x slower).  A library's axpy is used only after a probe shows it rounds once (MKL's
  does not on AMD CPUs, a pre-FMA CPU's kernels do not): otherwise the NumPy path computes the same
  once-rounded update, so an optimizer step's bits do not depend on the BLAS or its CPU kernel.
* the thread count behind ``glassgrad.set_num_threads`` / ``get_num_threads``.

Optionally, GEMMs (``matmul``) go through Intel MKL when its wheel is installed (``pip install
glassgrad[mkl]``): a few % to 10% faster than NumPy's OpenBLAS on a quiet machine, and far steadier on a
busy one (OpenBLAS's spinning threads collapse under oversubscription).

Nothing here is required: when no BLAS with the expected symbols is found, ``axpy`` returns False and
callers use their NumPy path, ``matmul`` is ``np.matmul``, and the thread functions only record the
number.  The libraries are located and bound on first use.  ``GLASSGRAD_BLAS`` in the environment:
unset or ``auto`` (NumPy's OpenBLAS, plus MKL's GEMMs if installed), ``openblas`` (no MKL), ``numpy`` (no
binding at all: plain NumPy).
"""
import ctypes
import glob
import os

import numpy as np

# (symbol prefix, suffix, integer type): NumPy's wheels bundle an ILP64 OpenBLAS with `scipy_` names;
# other builds link a plain OpenBLAS (LP64 or ILP64).
_VARIANTS = (("scipy_", "64_", ctypes.c_int64), ("", "64_", ctypes.c_int64), ("", "", ctypes.c_int))


def _bind(lib, name, argtypes):
    f = getattr(lib, name)
    f.argtypes = argtypes
    f.restype = None
    return f


class _Lib:
    """The BLAS functions glassgrad calls, bound from one library (`cint`: its integer type)."""

    def __init__(self, lib, path, prefix, suffix, cint, threads=None):
        self.path = path
        cp = ctypes.c_void_p
        for t, real in (("s", ctypes.c_float), ("d", ctypes.c_double)):
            setattr(self, t + "axpy", _bind(lib, f"{prefix}cblas_{t}axpy{suffix}", [cint, real, cp, cint, cp, cint]))
            setattr(self, t + "gemm", _bind(lib, f"{prefix}cblas_{t}gemm{suffix}",
                                            [ctypes.c_int] * 3 + [cint] * 3 + [real, cp, cint, cp, cint, real, cp, cint]))
        set_name, get_name = threads or (f"{prefix}openblas_set_num_threads{suffix}",
                                         f"{prefix}openblas_get_num_threads{suffix}")
        self.set_threads = getattr(lib, set_name, None)
        get = getattr(lib, get_name, None)
        if get is not None:
            get.restype = ctypes.c_int
        self.get_threads = get
        core = getattr(lib, f"{prefix}openblas_get_corename{suffix}", None)
        if core is not None:
            core.restype = ctypes.c_char_p
        self.corename = core().decode() if core is not None else "mkl" if threads else "?"
        self._fused = {}

    def fused(self, name):
        """Whether this library's `name` ("saxpy"/"daxpy") rounds y + a*x once per element, as ATen's fused
        kernels and glassgrad's NumPy path do; probed once.  Not every BLAS does on every CPU (MKL's saxpy on
        an AMD CPU takes a path without FMA): one that does not is not used, so an update's bits do not
        depend on which BLAS or CPU kernel is present."""
        ok = self._fused.get(name)
        if ok is None:
            ok = self._fused[name] = _rounds_once(getattr(self, name), np.float32 if name == "saxpy" else np.float64)
        return ok


_lib = [None, False]     # the bound library, and whether we looked for it


def _rounds_once(fn, dt):
    """Probe axpy `fn` on a vector long enough for its unrolled body and its tail.  The operands are in
    [1, 2) with half-width mantissas, so a * x + y is exact in a type twice as wide and the fused result is
    that sum rounded once; a two-rounding kernel differs from it in about a third of the elements."""
    wide = np.float64 if dt == np.float32 else np.longdouble
    bits = 24 if dt == np.float32 else 30
    if np.finfo(wide).nmant < 2 * bits + 2:          # no wide type to tell (long double == double)
        return False
    rng = np.random.default_rng(12)
    n = 1031
    x, y = (1 + rng.integers(0, 2 ** (bits - 1), n) / 2 ** (bits - 1) for _ in range(2))
    a = 1 + 987654321 % 2 ** (bits - 1) / 2 ** (bits - 1)
    x, y = x.astype(dt), y.astype(dt)
    want = (x.astype(wide) * wide(a) + y.astype(wide)).astype(dt)
    got = y.copy()
    fn(n, float(a), x.ctypes.data, 1, got.ctypes.data, 1)
    return bool(np.array_equal(got, want))


def _candidates():
    root = os.path.dirname(np.__file__)
    pats = [os.path.join(root, os.pardir, "numpy.libs", "*openblas*"),    # Linux / Windows wheels
            os.path.join(root, ".dylibs", "*openblas*")]                   # macOS wheels
    for pat in pats:
        yield from sorted(glob.glob(pat))


def _load():
    if _lib[1]:
        return _lib[0]
    _lib[1] = True
    if os.environ.get("GLASSGRAD_BLAS", "").lower() in ("numpy", "off", "none"):
        return None
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)         # already mapped by NumPy: this only opens a handle
        except OSError:
            continue
        for prefix, suffix, cint in _VARIANTS:
            try:
                _lib[0] = _Lib(lib, path, prefix, suffix, cint)
                return _lib[0]
            except AttributeError:
                continue
    return None


def info():
    """Which BLAS the binding uses: a dict with its path and CPU kernel set (and MKL's path when its GEMMs
    are used), or None."""
    lib = _load()
    if lib is None:
        return None
    out = {"path": os.path.normpath(lib.path), "core": lib.corename}
    if _load_mkl() is not None:
        out["gemm"] = _mkl[0].path
    return out


def _axpy_fn(x, y):
    """The bound once-rounding ?axpy that can compute y += alpha * x for these arrays, else None."""
    dt = y.dtype
    if (x.dtype != dt or x.size != y.size or not (x.flags.c_contiguous and y.flags.c_contiguous)
            or not y.flags.writeable or x.__class__ is not np.ndarray or y.__class__ is not np.ndarray):
        return None
    if dt == np.float32:
        name = "saxpy"
    elif dt == np.float64:
        name = "daxpy"
    else:
        return None
    lib = _mkl[0] or _load()    # MKL's once it is loaded: one thread pool, not two fighting for the cores
    if lib is None or not lib.fused(name):
        return None
    return getattr(lib, name)


def axpy_ready(x, y):
    """Whether axpy(alpha, x, y) will be done by BLAS (so a caller may prepare y first)."""
    return _axpy_fn(x, y) is not None


def axpy(alpha, x, y):
    """y += alpha * x in place with one rounding per element; True when done, False when the arrays are
    not float32/float64 C-contiguous arrays of one dtype and size, or no BLAS that rounds once is bound:
    the caller then computes it with NumPy (y untouched)."""
    fn = _axpy_fn(x, y)
    if fn is None:
        return False
    if y.size:
        fn(y.size, float(alpha), x.ctypes.data, 1, y.ctypes.data, 1)
    return True


def gemm_fn(dtype):
    """Row-major cblas_sgemm / cblas_dgemm for float32 / float64 (MKL's when installed, else the OpenBLAS
    NumPy ships), for callers that need what np.matmul cannot do (C = A @ B + beta * C on strided rows);
    None when neither library is available or the dtype is another.  Host memory only (it takes .ctypes
    pointers): a caller uses it only for NumPy arrays (``arr.__class__ is np.ndarray``)."""
    if dtype == np.float32:
        name = "sgemm"
    elif dtype == np.float64:
        name = "dgemm"
    else:
        return None
    lib = _load_mkl() or _load()
    return None if lib is None else getattr(lib, name)


# -- threads -----------------------------------------------------------------------------------------

_threads = [None]


def _default_threads():
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        v = os.environ.get(var, "")
        if v.isdigit() and int(v) > 0:
            return int(v)
    return n


def _check_threads(fname, n):
    if n.__class__ is bool or not isinstance(n, (int, np.integer)):
        raise RuntimeError(f"{fname} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{fname} expects a positive integer")
    return int(n)


def set_num_threads(n):
    """The number of threads the BLAS (GEMMs, axpy) uses, like torch.set_num_threads."""
    n = _check_threads("set_num_threads", n)
    _threads[0] = n
    if _mkl[0] is not None:
        _mkl[0].set_threads(n)
        _quiet_openblas()
        return
    lib = _load()
    if lib is not None and lib.set_threads is not None:
        lib.set_threads(n)


def get_num_threads():
    if _threads[0] is None:
        lib = _load()
        if lib is not None and lib.get_threads is not None:
            return int(lib.get_threads())
        return _default_threads()
    return _threads[0]


_interop = [None]


def set_num_interop_threads(n):
    """Recorded only: glassgrad runs no inter-op thread pool."""
    _interop[0] = _check_threads("set_num_interop_threads", n)


def get_num_interop_threads():
    return _default_threads() if _interop[0] is None else _interop[0]


# -- optional: Intel MKL for GEMMs (pip install glassgrad[mkl]) ----------------------------------------

_ROW, _COL, _NOTRANS, _TRANS = 101, 102, 111, 112
_mkl = [None, False]


def _find_mkl():
    import sys
    import sysconfig
    dirs = [os.path.join(sys.prefix, "lib"), sysconfig.get_config_var("LIBDIR") or ""]
    for d in dirs:
        hits = sorted(glob.glob(os.path.join(d, "libmkl_rt.so*")) + glob.glob(os.path.join(d, "libmkl_rt*.dylib"))
                      + glob.glob(os.path.join(d, "mkl_rt*.dll")))
        if hits:
            return hits[0]
    return None


def _load_mkl():
    """MKL's GEMMs when the `mkl` wheel is installed and GLASSGRAD_BLAS is unset or "mkl"."""
    if _mkl[1]:
        return _mkl[0]
    _mkl[1] = True
    if os.environ.get("GLASSGRAD_BLAS", "auto").lower() not in ("auto", "mkl", ""):
        return None
    path = _find_mkl()
    if path is None:
        return None
    try:
        lib = _Lib(ctypes.CDLL(path), path, "", "", ctypes.c_int, ("MKL_Set_Num_Threads", "MKL_Get_Max_Threads"))
    except (OSError, AttributeError):
        return None
    _mkl[0] = lib
    if _threads[0] is not None:
        lib.set_threads(_threads[0])
    _quiet_openblas()
    return lib


def _quiet_openblas():
    """With MKL doing the GEMMs (and axpy), NumPy's OpenBLAS keeps one thread for what is left to it
    (batched matmul, dot): two pools of spinning threads on the same cores slow both down several-fold."""
    ob = _load()
    if ob is not None and ob.set_threads is not None:
        ob.set_threads(1)


def _operand(x):
    """(transpose flag, leading dimension) of a 2-d array BLAS can read in place, else None."""
    s0, s1 = x.strides
    it = x.itemsize
    m, n = x.shape
    if (s1 == it or n == 1) and s0 >= max(1, n) * it and s0 % it == 0:
        return _NOTRANS, s0 // it
    if (s0 == it or m == 1) and s1 >= max(1, m) * it and s1 % it == 0:
        return _TRANS, s1 // it
    return None


def _matmul_bf16(a, b, out):
    f32 = np.float32
    y = matmul(a.astype(f32), b.astype(f32)).astype(a.dtype)
    if out is None:
        return y
    out[...] = y
    return out


def matmul(a, b, out=None):
    """np.matmul(a, b, out=out); a 2-d @ 2-d float32/float64 product goes through MKL's GEMM when the
    optional `mkl` wheel is installed (glassgrad[mkl]; GLASSGRAD_BLAS=numpy turns it off).  bfloat16 is
    multiplied in float32 and rounded once, as torch's CPU GEMM accumulates it.  Device (CuPy) arrays take
    np.matmul, which CuPy runs as cuBLAS; so does axpy's caller (axpy refuses anything but NumPy arrays)."""
    if a.dtype.kind == "V":
        return _matmul_bf16(a, b, out)
    lib = _mkl[0] if _mkl[1] else _load_mkl()
    if lib is None or a.__class__ is not np.ndarray or b.__class__ is not np.ndarray:
        return np.matmul(a, b, out=out)
    dt = a.dtype
    if a.ndim != 2 or b.ndim != 2 or dt != b.dtype or dt not in (np.float32, np.float64):
        return np.matmul(a, b, out=out)
    m, k = a.shape
    k2, n = b.shape
    if k != k2 or not (m and n and k):
        return np.matmul(a, b, out=out)
    oa, ob = _operand(a), _operand(b)
    if out is None:
        out = np.empty((m, n), dt)
    elif (out.__class__ is not np.ndarray or out.shape != (m, n) or out.dtype != dt
          or not out.flags.c_contiguous or np.shares_memory(out, a) or np.shares_memory(out, b)):
        oa = None
    if oa is None or ob is None:
        return np.matmul(a, b, out=out)
    f = lib.sgemm if dt == np.float32 else lib.dgemm
    f(_ROW, oa[0], ob[0], m, n, k, 1.0, a.ctypes.data, oa[1], b.ctypes.data, ob[1], 0.0, out.ctypes.data, n)
    return out
