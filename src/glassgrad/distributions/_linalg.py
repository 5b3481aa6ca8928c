"""The linear algebra MultivariateNormal needs (glassgrad has no torch.linalg yet): Cholesky factor and
triangular solve, computed with NumPy, as autograd Functions whose backward formulas are torch's
(cholesky_backward, linalg_solve_triangular's backward) written in differentiable glassgrad ops."""
import numpy as np

from . import _ops as T
from ..backend import as_array, contiguous
from ..autograd.function import Function


def _wrap(a, like):
    if a.__class__ is np.ndarray:
        return T.from_numpy(np.ascontiguousarray(a, dtype=like.dtype.np))
    return T.from_array(contiguous(a.astype(like.dtype.np, copy=False)))     # a device result stays there


def _solve_tri_np(a, b, upper, left):
    a = np.triu(a) if upper else np.tril(a)
    if left:
        return np.linalg.solve(a, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


class _Cholesky(Function):
    @staticmethod
    def forward(ctx, A):
        L = _wrap(np.linalg.cholesky(A.detach()._data), A)
        ctx.save_for_backward(L)
        return L

    @staticmethod
    def backward(ctx, gL):
        (L,) = ctx.saved_tensors
        gA = T.matmul(L.mT, gL).tril()
        gA = 0.5 * (gA + gA.tril(-1).mT)
        gA = solve_triangular(L.mT, gA, upper=True, left=True)
        return solve_triangular(L, gA, upper=False, left=False)


class _SolveTriangular(Function):
    @staticmethod
    def forward(ctx, A, B, upper, left):
        X = _wrap(_solve_tri_np(A.detach()._data, B.detach()._data, upper, left), B)
        ctx.save_for_backward(A, X)
        ctx.upper, ctx.left = upper, left
        return X

    @staticmethod
    def backward(ctx, gX):
        A, X = ctx.saved_tensors
        upper, left = ctx.upper, ctx.left
        gB = solve_triangular(A.mT, gX, upper=not upper, left=left)
        gA = -T.matmul(gB, X.mT) if left else -T.matmul(X.mT, gB)
        gA = gA.triu() if upper else gA.tril()
        return _sum_to(gA, A.shape), _sum_to(gB, gX.shape), None, None


def _sum_to(g, shape):
    """Sum a broadcast gradient back to `shape` (the batch dims of a triangular solve broadcast)."""
    while g.dim() > len(shape):
        g = g.sum(0)
    for i, (a, b) in enumerate(zip(g.shape, shape)):
        if a != b:
            g = g.sum(i, keepdim=True)
    return g


def cholesky(A):
    """torch.linalg.cholesky (lower)."""
    return _Cholesky.apply(A)


def solve_triangular(A, B, *, upper, left=True):
    """torch.linalg.solve_triangular: A X = B (left) or X A = B, A's other triangle ignored."""
    return _SolveTriangular.apply(A, B, upper, left)


class _CholeskyInverse(Function):
    @staticmethod
    def forward(ctx, L):
        a = L.detach()._data
        Linv = _solve_tri_np(a, np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype, like=a), a.shape), False, True)
        P = _wrap(np.swapaxes(Linv, -1, -2) @ Linv, L)
        ctx.save_for_backward(L, P)
        return P

    @staticmethod
    def backward(ctx, g):
        L, P = ctx.saved_tensors
        return -T.matmul(T.matmul(P, T.matmul(g + g.mT, P)), L)


def cholesky_inverse(L):
    """torch.cholesky_inverse (lower): (L L^T)^-1, with torch's gradient (the full matrix L)."""
    return _CholeskyInverse.apply(L)


def eigvalsh(A):
    return _wrap(np.linalg.eigvalsh(A.detach()._data), A)


def cholesky_ok(A):
    """torch.linalg.cholesky_ex(A).info == 0, per matrix, computed on A's device."""
    return T.from_array(_cholesky_ok_arr(A.detach()._data))


def _cholesky_ok_arr(a):
    """Whether each matrix of `a` has a Cholesky factor, by one batched factorisation on `a`'s device."""
    if a.size == 0:
        return np.ones(a.shape[:-2], dtype=bool, like=a)
    try:
        L = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:           # NumPy's LAPACK (also the strict device's) failed on some matrix
        return _lapack_ok(a)
    if a.__class__ is np.ndarray:
        return np.ones(a.shape[:-2], dtype=bool)
    # CuPy's cuSOLVER never raises (it reports failure only in its info array): a matrix that failed stops at
    # its non-positive (or NaN) pivot, on the factor's diagonal; one that succeeded has a positive diagonal
    return as_array((np.diagonal(L, axis1=-2, axis2=-1).real > 0).all(-1))


def _one_ok(m):
    try:
        np.linalg.cholesky(m)
        return np.asarray(True)
    except np.linalg.LinAlgError:
        return np.asarray(False)


def _lapack_ok(a):
    """LAPACK's verdict per matrix, from the gufunc beneath np.linalg.cholesky, which fills a failed matrix's
    whole factor with NaN (a factor has zeros above its diagonal); a 1x1 matrix is checked as diag(a, 1)."""
    try:
        from numpy.linalg import _umath_linalg
        lo = _umath_linalg.cholesky_lo
    except (ImportError, AttributeError):   # a NumPy without that private gufunc: matrix by matrix
        return as_array(np.stack([_one_ok(m) for m in a.reshape((-1,) + a.shape[-2:])]).reshape(a.shape[:-2]))
    if a.shape[-1] == 1:
        z = np.zeros_like(a)
        a = np.concatenate([np.concatenate([a, z], -1), np.concatenate([z, z + 1], -1)], -2)
    with np.errstate(invalid="ignore"):
        L = lo(a, signature="D->D" if a.dtype.kind == "c" else "d->d")
    return as_array(~np.isnan(L[..., 0, -1].real))


def logdet_pd(A):
    """log|det A| of a positive-definite A (torch.linalg.slogdet(A).logabsdet there), through its Cholesky
    factor: 2 * sum(log(diag(L)))."""
    return 2 * cholesky(A).diagonal(dim1=-2, dim2=-1).log().sum(-1)


def cholesky_solve(B, L):
    """torch.cholesky_solve(B, L) (lower): (L L^T)^-1 B by two triangular solves."""
    return solve_triangular(L.mT, solve_triangular(L, B, upper=False), upper=True)
