"""A thin ctypes binding to the BLAS library NumPy already loaded (the OpenBLAS its wheels ship), for the
two things ``numpy`` does not expose:

* ``axpy(alpha, x, y)``: ``y += alpha * x`` in place.  OpenBLAS's vector kernels use fused
  multiply-add instructions where the CPU has them, as ATen's ``add(alpha=)`` does, so optimizer
  updates round like PyTorch's and run at memory speed on all BLAS threads (a float64 emulation of the
  fused step is ~8x slower).
* the thread count behind ``glassgrad.set_num_threads`` / ``get_num_threads``.

Nothing here is required: when no BLAS with the expected symbols is found (another NumPy build, or
``GLASSGRAD_BLAS=numpy`` in the environment) ``axpy`` returns False and callers use their NumPy path,
and the thread functions only record the number.  The library is located and bound on first use.
"""
import ctypes
import glob
import os

import numpy as np

# (symbol prefix, suffix, integer type): NumPy's wheels bundle an ILP64 OpenBLAS with `scipy_` names;
# other builds link a plain OpenBLAS (LP64 or ILP64).
_VARIANTS = (("scipy_", "64_", ctypes.c_int64), ("", "64_", ctypes.c_int64), ("", "", ctypes.c_int))


class _Lib:
    def __init__(self, lib, path, prefix, suffix, cint):
        self.path = path
        self.saxpy = self._fn(lib, f"{prefix}cblas_saxpy{suffix}", cint, ctypes.c_float)
        self.daxpy = self._fn(lib, f"{prefix}cblas_daxpy{suffix}", cint, ctypes.c_double)
        self.set_threads = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
        get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
        if get is not None:
            get.restype = ctypes.c_int
        self.get_threads = get
        core = getattr(lib, f"{prefix}openblas_get_corename{suffix}", None)
        if core is not None:
            core.restype = ctypes.c_char_p
        self.corename = core().decode() if core is not None else "?"

    @staticmethod
    def _fn(lib, name, cint, real):
        f = getattr(lib, name)
        f.argtypes = [cint, real, ctypes.c_void_p, cint, ctypes.c_void_p, cint]
        f.restype = None
        return f


_lib = [None, False]     # the bound library, and whether we looked for it


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
    """Which BLAS the binding uses: a dict with its path and CPU kernel set, or None."""
    lib = _load()
    return None if lib is None else {"path": os.path.normpath(lib.path), "core": lib.corename}


def axpy(alpha, x, y):
    """y += alpha * x in place with one rounding per element; True when done, False when the arrays are
    not float32/float64 C-contiguous arrays of one dtype and size (or no BLAS is bound): the caller then
    computes it with NumPy."""
    dt = y.dtype
    if (x.dtype != dt or x.size != y.size or not (x.flags.c_contiguous and y.flags.c_contiguous)
            or not y.flags.writeable or x.__class__ is not np.ndarray or y.__class__ is not np.ndarray):
        return False
    if dt == np.float32:
        name = "saxpy"
    elif dt == np.float64:
        name = "daxpy"
    else:
        return False
    lib = _load()
    if lib is None:
        return False
    if y.size:
        getattr(lib, name)(y.size, float(alpha), x.ctypes.data, 1, y.ctypes.data, 1)
    return True


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
    lib = _load()
    if lib is not None and lib.set_threads is not None:
        lib.set_threads(int(n))
    _threads[0] = int(n)


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
