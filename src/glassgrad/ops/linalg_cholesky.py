"""torch's top-level Cholesky and triangular solvers: torch.cholesky (the deprecated upper= form),
cholesky_solve, cholesky_inverse and triangular_solve (real dtypes, batched).

ops: cholesky cholesky_solve cholesky_inverse triangular_solve
The backward formulas are PyTorch's (FunctionsManual.cpp), written with glassgrad's ops.
"""
import numpy as np

from .. import _dtype
from ._core import make
from .linalg_deprecated import deprecated
from .linalg_solve import (_LaNode, LinalgCholeskyExBackward0, lapack_dtype, LinAlgError, wrap, named, check_matrix, check_square,
                           _chol_arrays, _triangle, _tri_solve, _sum_to, batch_prefix, first_failure,
                           solve_triangular)
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["cholesky", "cholesky_solve", "cholesky_inverse", "triangular_solve"]


def _float_only(op, *ts):
    for t in ts:
        if not lapack_dtype(t._data.dtype):
            raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{_dtype.c_name(t._data.dtype)}'")


class CholeskyBackward0(LinalgCholeskyExBackward0):   # torch.cholesky: linalg.cholesky's formula
    __slots__ = ()


def cholesky(input, upper=False, *, out=None):
    if _acs.on:
        return _ac.fp32(cholesky, input, upper, out=out)
    deprecated("cholesky")
    check_square("cholesky", input)
    _float_only("cholesky", input)
    L, info = _chol_arrays(input._data)
    if info.any():
        raise LinAlgError(f"cholesky: {batch_prefix(info)}The factorization could not be completed because the input "
                          f"is not positive-definite (the leading minor of order {first_failure(info)} is not "
                          "positive-definite).")
    if upper:
        L = np.swapaxes(L, -1, -2).copy()
    return wrap((L,), CholeskyBackward0, (input,), saved_out=(0,), info=bool(upper))[0]


def _sizes_match(op, a, b):
    check_matrix(op, make(b), "b")
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {op}: each A matrix is {a.shape[-1]} by {a.shape[-1]} but "
                           f"each b matrix is {b.shape[-2]} by {b.shape[-1]}")


def _chol_solve_arrays(b, L, upper):
    """X with (L L^H) X = b (upper: U^H U), by two triangular substitutions (^H: ^T for real tensors)."""
    Lo = np.conj(np.swapaxes(L, -1, -2)) if upper else L
    y = _tri_solve(np.tril(Lo), b, False)
    return _tri_solve(np.triu(np.conj(np.swapaxes(Lo, -1, -2))), y, True)


class CholeskySolveBackward0(_LaNode):   # gB = cholesky_solve(gX, L); gL = -(C L) or -(L C), C = gB X^T + X gB^T
    __slots__ = ()
    _saved_names = ("input2", "result")

    def formula(self, g, L, X):
        upper, b_shape = self.info
        gB = cholesky_solve(g, L, upper)
        C = gB @ X.mH
        C = C + C.mH
        gL = -(L @ C) if upper else -(C @ L)
        return _sum_to(gB, b_shape), _sum_to(gL, L.shape)


def cholesky_solve(input, input2, upper=False, *, out=None):
    if _acs.on:
        return _ac.fp32(cholesky_solve, input, input2, upper, out=out)
    check_square("cholesky_solve", input2, "A")
    _float_only("cholesky_solve", input, input2)
    b, L = input._data, input2._data
    _sizes_match("cholesky_solve", L, b)
    x = _chol_solve_arrays(b, L, upper) if b.size and L.size else np.zeros(
        np.broadcast_shapes(b.shape[:-2], L.shape[:-2]) + b.shape[-2:], np.result_type(b, L), like=b)
    return wrap((x.astype(np.result_type(b, L), copy=False),), CholeskySolveBackward0, (input, input2),
                saved_in=(1,), saved_out=(0,), info=(bool(upper), b.shape))[0]


class CholeskyInverseBackward0(_LaNode):   # C = inv (g + g^T) inv; gL = -(C L) or -(L C)
    __slots__ = ()
    _saved_names = ("self", "result")

    def formula(self, g, L, inv):
        C = inv @ ((g + g.mH) @ inv)
        return (-(L @ C) if self.info else -(C @ L),)


def cholesky_inverse(input, upper=False, *, out=None):
    if _acs.on:
        return _ac.fp32(cholesky_inverse, input, upper, out=out)
    check_square("cholesky_inverse", input)
    _float_only("cholesky_inverse_out", input)
    L = input._data
    n = L.shape[-1]
    eye = np.broadcast_to(np.eye(n, dtype=L.dtype, like=L), L.shape)
    inv = _chol_solve_arrays(eye, L, upper) if L.size else np.zeros(L.shape, L.dtype, like=L)
    return wrap((inv.astype(L.dtype, copy=False),), CholeskyInverseBackward0, (input,), saved_in=(0,),
                saved_out=(0,), info=bool(upper))[0]


class TriangularSolveBackward0(_LaNode):   # torch's triangular_solve_backward; the clone's gradient adds to gA
    __slots__ = ()
    n_outputs = 2
    _saved_names = ("A", "solution")

    def formula(self, grads, A, X):
        gX, gM = grads
        upper, transpose, unit, b_shape = self.info
        gB = gA = None
        if gX is not None:
            Aop = A.mT if transpose else A
            gB = solve_triangular(Aop.mT, gX, upper=upper == transpose, unitriangular=unit)
            if self.need(1):
                gA = -(X @ gB.mT) if transpose else -(gB @ X.mT)
                gA = gA.triu(int(unit)) if upper else gA.tril(-int(unit))
        if gM is not None and self.need(1):
            gA = gM if gA is None else gA + gM
        return (None if gB is None else _sum_to(gB, b_shape)), (None if gA is None else _sum_to(gA, A.shape))


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    if _acs.on:
        return _ac.fp32(triangular_solve, input, A, upper, transpose, unitriangular, out=out)
    deprecated("triangular_solve")
    check_square("triangular_solve", A)
    _float_only("triangular_solve", input, A)
    b, a = input._data, A._data
    _sizes_match("triangular_solve", a, b)
    t = _triangle(a, upper, unitriangular)
    if transpose:
        t = np.swapaxes(t, -1, -2)
    x = _tri_solve(t, b, upper != transpose).astype(np.result_type(a, b), copy=False)
    M = np.broadcast_to(a, x.shape[:-2] + a.shape[-2:]).copy()
    X, M = wrap((x, M), TriangularSolveBackward0, (input, A), saved_in=(1,), saved_out=(0,),
                info=(bool(upper), bool(transpose), bool(unitriangular), b.shape))
    return named("triangular_solve", ("solution", "cloned_coefficient"), (X, M))
