"""The op table's vocabulary: OpInfo (one op), Sample (one call), ErrorSample (one bad call).

An op is described once, with one callable `op(T, *args, **kwargs)` that works for both
libraries: `T` is the module (torch or glassgrad) and tensor args arrive as that library's
tensors.  The generated tests in tests/test_ops.py run every sample on both libraries and
compare values, dtypes, shapes, grad_fn names, gradients (vs torch.autograd.grad), float64
finite differences, second derivatives, and error types.

Sample args: NumPy arrays become tensors (float arrays require grad unless listed in
`no_grad`), Python scalars / tuples / strings pass through.  `Idx(arr)` marks an integer or
bool array that must become an index tensor (never requires grad).
"""
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


class Idx:
    """An index/mask argument: becomes an integer/bool tensor, never requires grad."""

    def __init__(self, arr):
        self.arr = np.asarray(arr)


class NoGrad:
    """A float tensor argument that does not require grad."""

    def __init__(self, arr):
        self.arr = np.asarray(arr)


class TList:
    """A list of tensor arguments (for cat, stack, ...)."""

    def __init__(self, *arrs):
        self.arrs = [np.asarray(a) for a in arrs]


@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    name: str = ""

    def __init__(self, *args, name="", **kwargs):
        self.args = args
        self.kwargs = kwargs
        self.name = name


@dataclass
class ErrorSample:
    sample: Sample
    error: type            # the exception type torch raises (RuntimeError, IndexError, ...)
    match: str = ""        # a substring both messages must contain ("" = type only)


@dataclass
class OpInfo:
    name: str
    op: Callable[..., Any]                     # op(T, *args, **kwargs)
    samples: Callable[[np.random.Generator, Any], list]   # samples(rng, np_dtype) -> [Sample]
    dtypes: tuple = ("float32", "float64")     # dtypes the samples are generated in
    differentiable: bool = True
    gradcheck: bool = True                     # float64 finite differences
    gradgrad: bool = True                      # second derivatives vs torch
    check_grad_fn: bool = True                 # grad_fn name must equal torch's
    atol: float = 1e-5
    rtol: float = 1.3e-6
    grad_atol: float = 1e-4
    grad_rtol: float = 1e-4
    errors: Callable[[], list] = lambda: []    # [ErrorSample]
    variant_of: str = ""                       # e.g. "Tensor.exp" for method forms (informational)
    outputs_int: bool = False                  # output has no gradient (indices, masks)
    nondeterministic_grad: bool = False        # e.g. ties: compare values only

    def __repr__(self):
        return f"OpInfo({self.name})"


def functional(name, **fixed):
    """The op `T.nn.functional.<name>` (with `fixed` keyword arguments) for a table row."""
    def op(T, *a, **k):
        return getattr(T.nn.functional, name)(*a, **k, **fixed)
    return op


# -- sample helpers -------------------------------------------------------------------------------
def arr(rng, shape, dtype, low=-2.0, high=2.0):
    """Random array of `shape` in [low, high)."""
    if np.dtype(dtype).kind == "f":
        return rng.uniform(low, high, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "c":     # real and imaginary parts each in [low, high)
        return np.asarray(rng.uniform(low, high, size=shape) + 1j * rng.uniform(low, high, size=shape)).astype(dtype)
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)


def noncontig(a):
    """The same values in a non-contiguous (transposed-storage) layout."""
    if a.ndim < 2:
        b = np.empty(a.shape[:-1] + (a.shape[-1] * 2,) if a.ndim else (), a.dtype)
        if a.ndim == 0:
            return a
        b[..., ::2] = a
        return b[..., ::2]
    return np.asfortranarray(a)


def away_from_zero(a, eps=0.1):
    """Push values away from 0 (kinks of abs, sign, division)."""
    return np.where(np.abs(a) < eps, np.where(a >= 0, eps, -eps), a).astype(a.dtype)


def unary_samples(low=-2.0, high=2.0, kink=None):
    """The standard sample set for a unary elementwise op: scalar, 0-d, empty, broadcast-free shapes,
    non-contiguous."""
    def gen(rng, dt):
        def A(shape):
            a = arr(rng, shape, dt, low, high)
            return away_from_zero(a) if kink == 0 else a
        return [Sample(A(()), name="0d"), Sample(A((5,)), name="1d"), Sample(A((3, 4)), name="2d"),
                Sample(A((0, 3)), name="empty"), Sample(noncontig(A((4, 3))), name="noncontig"),
                Sample(A((2, 3, 4)), name="3d")]
    return gen


def binary_samples(low=-2.0, high=2.0, b_low=None, b_high=None, scalar=True):
    """Binary elementwise op samples: same shape, broadcasting both ways, 0-d with n-d, empty,
    non-contiguous, and a Python scalar second operand."""
    b_low = low if b_low is None else b_low
    b_high = high if b_high is None else b_high

    def gen(rng, dt):
        def A(s):
            return arr(rng, s, dt, low, high)

        def B(s):
            return arr(rng, s, dt, b_low, b_high)
        out = [Sample(A((3, 4)), B((3, 4)), name="same"), Sample(A((3, 4)), B((4,)), name="bcast_b"),
               Sample(A((4,)), B((3, 4)), name="bcast_a"), Sample(A((2, 1, 4)), B((3, 1)), name="bcast_both"),
               Sample(A(()), B((3,)), name="0d_a"), Sample(A((3,)), B(()), name="0d_b"),
               Sample(A((0, 4)), B((4,)), name="empty"), Sample(noncontig(A((4, 3))), B((4, 3)), name="noncontig")]
        if scalar:
            s = float(np.round(B(()), 2))
            if s == 0:
                s = 0.5
            out.append(Sample(A((3, 4)), s, name="scalar"))
        return out
    return gen
