"""Shared helpers of the torch CPU RNG replica: the float dtypes, the detection
of which torch CPU kernel build to mimic (``CPU_KERNEL``), shape/numel checks,
the double-to-dtype cast, the float dtype check, and the 24-/53-bit uniform
draws in [0, 1) (``_u24``/``_u53``) that every sampler builds on."""

from __future__ import annotations

import operator
import os
import platform

import numpy as np

from .. import _dtype

_f16 = np.dtype(np.float16)
_f32 = np.dtype(np.float32)
_f64 = np.dtype(np.float64)


class _FloatDtypes:
    """`dt in _FLOATS`: float16/32/64, and bfloat16 (ml_dtypes' dtype, which NumPy's kind calls 'V')."""
    __slots__ = ()
    _BASE = (_f16, _f32, _f64)

    def __contains__(self, dt):
        return dt in self._BASE or (isinstance(dt, np.dtype) and _dtype.is_bfloat16(dt))


_FLOATS = _FloatDtypes()


def _half(dt):
    """float16 or bfloat16: the 16-bit floats, which torch's CPU kernels compute in float32 and round."""
    return dt.itemsize == 2 and dt.kind in "fV"


finfo = _dtype.np_finfo


def _detect_cpu_kernel():
    """Which of torch's CPU kernel builds torch itself would run here.

    "avx2": torch's AVX2/AVX512 kernels (x86-64 with AVX2+FMA): the float32
    normal fill uses avx_mathfun and GCC contracted ``a*b + c`` into FMAs.
    "default": the baseline build (``ATEN_CPU_CAPABILITY=default`` or no
    AVX2/FMA): scalar glibc ``logf``/``cosf``/``sinf`` and no contraction.
    """
    if os.environ.get("ATEN_CPU_CAPABILITY", "").strip().lower() == "default":
        return "default"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return "default"  # not verified against torch on non-x86 builds
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return "avx2" if {"avx2", "fma"} <= flags else "default"
    except OSError:
        pass
    return "avx2"


#: "avx2" or "default"; may be overridden (e.g. to mimic another machine).
CPU_KERNEL = _detect_cpu_kernel()


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------

def _shape(shape):
    if shape is None:
        return ()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(operator.index(s) for s in shape)


def _numel(shape):
    n = 1
    for s in shape:
        if s < 0:
            raise ValueError(f"negative dimension {s}")
        n *= s
    return n


def _to_float(x64, dtype):
    """static_cast<scalar_t>(double): float16 goes double -> float -> half."""
    if _half(dtype):
        return x64.astype(np.float32).astype(dtype)
    return x64.astype(dtype)


def _u24(gen, n):
    """uniform_real_distribution<float>(0, 1): n float32 in [0, 1)."""
    r = gen._raw32(n)
    return (r & np.uint64(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)


def _u53(gen, n):
    """uniform_real_distribution<double>(0, 1): n float64 in [0, 1)."""
    r = gen._raw64(n)
    return (r & np.uint64((1 << 53) - 1)).astype(np.float64) * (2.0 ** -53)


_KERNELS = {"uniform": "check_uniform_bounds", "normal": "normal_kernel_cpu", "log_normal": "log_normal_cpu"}


def _float_dtype(dtype, what):
    """The dtype of a continuous distribution's output: floating, else torch's error for that sampler."""
    dt = np.dtype(np.float32 if dtype is None else dtype)
    if dt not in _FLOATS:
        name = _dtype.c_name(dt)
        if what in _KERNELS:
            raise NotImplementedError(f'"{_KERNELS[what]}" not implemented for \'{name}\'')
        raise RuntimeError(f"{what.capitalize()} distribution is a continuous probability distribution. dtype must "
                           f"be a floating point but you specified {name}")
    return dt


# the parameter checks of the one-parameter samplers, the same on every device (torch's messages)
_PARAM_CHECKS = {
    "exponential": (lambda v: v > 0.0, "exponential_ expects lambda > 0.0, but found lambda={}"),
    "cauchy": (lambda v: v > 0.0, "cauchy_ expects sigma > 0.0, but found sigma={}"),
    "log_normal": (lambda v: v > 0.0, "log_normal_ expects std > 0.0, but found std={}"),
}


def sampler_args(what, dtype, shape, value):
    """A continuous sampler's checked arguments, for the CPU replica and the CUDA samplers alike: (output dtype,
    shape, element count, the checked parameter as a float)."""
    dt = _float_dtype(dtype, what)
    shape = _shape(shape)
    value = float(value)
    ok, msg = _PARAM_CHECKS[what]
    if not ok(value):
        raise RuntimeError(msg.format(value))
    return dt, shape, _numel(shape), value

