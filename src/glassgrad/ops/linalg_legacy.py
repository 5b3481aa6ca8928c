"""torch's top-level spellings of torch.linalg: torch.det, logdet, slogdet, inverse, pinverse, svd (the old
some=/compute_uv= API, which returns V rather than Vh), qr (some=), matrix_exp and matrix_power.

ops: det logdet slogdet inverse pinverse svd qr matrix_exp matrix_power lu_solve lu orgqr cross
Each is the torch.linalg op (ops/linalg_decomp.py, linalg_solve.py, linalg_norm.py) under its old name and
return type, so the grad_fn names are torch's (LinalgDetBackward0, LinalgInvExBackward0, ...).
"""
import warnings

import numpy as np

from ._core import make
from .ternary import where
from .linalg_solve import named, inv, square_float
from . import linalg_decomp as _dec
from .linalg_norm import matrix_power as _matrix_power
from .linalg_deprecated import deprecated
from .linalg_lu import lu_solve as _lu_solve, lu_factor_ex as _lu_factor_ex, householder_product
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["det", "logdet", "slogdet", "inverse", "pinverse", "svd", "qr", "matrix_exp", "matrix_power", "lu_solve", "lu", "orgqr", "cross"]


def det(input):
    return _dec.det(input)


def slogdet(input):
    s, la = _dec.slogdet(input)
    return named("slogdet", ("sign", "logabsdet"), (s, la))


def logdet(input):
    """log det A: nan where det A < 0 (torch's where(sign == -1, nan, logabsdet))."""
    square_float("logdet", input)
    s, la = _dec.slogdet(input)
    return where(s == -1, float("nan"), la)


def inverse(input, *, out=None):
    if _acs.on:
        return _ac.fp32(inverse, input, out=out)
    return inv(input)


def pinverse(input, rcond=1e-15):
    if _acs.on:
        return _ac.fp32(pinverse, input, rcond)
    return _dec.pinv(input, rtol=rcond)


def svd(input, some=True, compute_uv=True, *, out=None):
    """U, S, V with A = U diag(S) V^T; compute_uv=False gives zero U (m, m) and V (n, n), as torch."""
    if _acs.on:
        return _ac.fp32(svd, input, some, compute_uv, out=out)
    if input._data.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {input._data.ndim} "
                           "dimensions instead")
    if not compute_uv:
        S = _dec.svdvals(input)
        m, n = input._data.shape[-2:]
        b = input._data.shape[:-2]
        z = [make(np.zeros(b + (k, k), input._data.dtype, like=input._data)) for k in (m, n)]
        return named("svd", ("U", "S", "V"), (z[0], S, z[1]))
    U, S, Vh = _dec.svd(input, full_matrices=not some)
    return named("svd", ("U", "S", "V"), (U, S, Vh.mT))


def qr(input, some=True, *, out=None):
    if _acs.on:
        return _ac.fp32(qr, input, some, out=out)
    deprecated("qr")
    Q, R = _dec.qr(input, "reduced" if some else "complete")
    return named("qr", ("Q", "R"), (Q, R))


def matrix_exp(input):
    return _dec.matrix_exp(input)


def matrix_power(input, n):
    return _matrix_power(input, n)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve(b, LU, pivots): torch.linalg.lu_solve with its arguments in the old order."""
    deprecated("lu_solve")
    return _lu_solve(LU_data, LU_pivots, b)


def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots), with infos when get_infos (a plain tuple, as torch's)."""
    deprecated("lu")
    LU, piv, info = _lu_factor_ex(A, pivot=pivot)
    return (LU, piv, info) if get_infos else (LU, piv)


def orgqr(input, tau):
    if _acs.on:
        return _ac.fp32(orgqr, input, tau)
    return householder_product(input, tau)


def cross(input, other, dim=None, *, out=None):
    """torch.cross: linalg.cross over `dim`; dim=None (deprecated, warns as torch) is the first dimension of
    size 3 of the broadcast shape."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        shape = np.broadcast_shapes(input._data.shape, other._data.shape)
        dims = [i for i, n in enumerate(shape) if n == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        dim = dims[0]
    return _dec.cross(input, other, dim=dim)
