"""torch's process-wide switches and build facts: deterministic algorithms, float32 matmul precision, warn-always,
flush-denormal, anomaly mode, and has_lapack / has_mkl / has_openmp / has_spectral.

What each one does here:
- deterministic algorithms: every glassgrad kernel is deterministic on CPU (NumPy, fixed reduction orders), so
  no op refuses to run; as in torch, `empty`, `empty_like` and `empty_strided` fill their memory (NaN for
  floating types, the largest value for integers, True for bool) while the mode is on.
- float32 matmul precision: recorded; glassgrad's float32 matmuls always run in full float32 ("highest").
- warn-always: the warnings torch raises once per process (`warn_once`: set_default_tensor_type's, ...) are
  raised every time while it is on.
- flush-denormal: sets FTZ and DAZ in this thread's MXCSR (x86-64 with glibc, through fegetenv / fesetenv),
  so NumPy's arithmetic flushes denormals as torch's does; False (nothing set) elsewhere, as torch.
"""
import ctypes
import ctypes.util
import importlib.util
import platform

import numpy as np

from . import _grad_state

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision",
           "set_warn_always", "is_warn_always_enabled", "set_flush_denormal", "set_anomaly_enabled",
           "init_num_threads", "has_lapack", "has_mkl", "has_openmp", "has_spectral"]

_state = {"deterministic": False, "warn_only": False, "matmul_precision": "highest", "warn_always": False,
          "fill_uninitialized_memory": True}     # torch.utils.deterministic.fill_uninitialized_memory


def _bool(v, fn, arg="mode", pos=1):
    if v.__class__ is not bool:
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be bool, not {type(v).__name__}")
    return v


def use_deterministic_algorithms(mode, *, warn_only=False):
    _state["deterministic"] = _bool(mode, "_set_deterministic_algorithms")
    _state["warn_only"] = _bool(warn_only, "_set_deterministic_algorithms", "warn_only", 2)


def are_deterministic_algorithms_enabled():
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def fill_uninitialized(arr):
    """What torch writes into fresh memory while deterministic algorithms are on (in place; returns arr)."""
    if _state["deterministic"] and _state["fill_uninitialized_memory"] and arr.size:
        k = arr.dtype.kind
        if k in "fV":
            arr[...] = np.nan
        elif k == "b":
            arr[...] = True
        elif k in "iu":
            arr[...] = np.iinfo(arr.dtype).max
    return arr


def set_float32_matmul_precision(precision):
    if precision not in ("highest", "high", "medium"):
        import warnings
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      f"setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision():
    return _state["matmul_precision"]


def set_warn_always(b):
    if b.__class__ is not bool:
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _state["warn_always"] = b


def is_warn_always_enabled():
    return _state["warn_always"]


_warned = set()


def warn_once(msg, category=UserWarning, stacklevel=3):
    """torch's TORCH_WARN_ONCE: the first time in the process, or every time while warn-always is on."""
    if _state["warn_always"] or msg not in _warned:
        _warned.add(msg)
        import warnings
        warnings.warn(msg, category, stacklevel=stacklevel)


def _fenv():
    """glibc's fegetenv / fesetenv on x86-64 (fenv_t: 28 bytes of x87 state, then the 4-byte MXCSR), or None."""
    if platform.machine() not in ("x86_64", "AMD64") or platform.system() != "Linux":
        return None
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        return libm.fegetenv, libm.fesetenv
    except (OSError, AttributeError):
        return None


_FTZ_DAZ = 0x8040      # MXCSR bit 15 (flush to zero) and bit 6 (denormals are zero)


def set_flush_denormal(mode):
    """Flush denormal floats to zero in this thread's arithmetic (True where supported, as torch)."""
    fns = _fenv()
    if fns is None:
        return False
    get, put = fns
    env = (ctypes.c_uint32 * 8)()
    if get(ctypes.byref(env)) != 0:
        return False
    env[7] = (env[7] | _FTZ_DAZ) if mode else (env[7] & ~_FTZ_DAZ & 0xFFFFFFFF)
    return put(ctypes.byref(env)) == 0


def set_anomaly_enabled(enabled, check_nan=True):
    _grad_state.state.anomaly = bool(enabled)
    _grad_state.state.anomaly_check_nan = bool(check_nan)


def init_num_threads():
    """torch initialises its OpenMP pool here; glassgrad's BLAS threads need no initialisation."""


has_lapack = True        # NumPy's linalg is LAPACK
has_mkl = "mkl" in str(getattr(np, "__config__", None) and np.__config__.CONFIG.get("Build Dependencies", {})).lower()
has_openmp = False       # no OpenMP: NumPy's BLAS threads are its own
has_spectral = importlib.util.find_spec("glassgrad.fft") is not None     # whether glassgrad has torch.fft
