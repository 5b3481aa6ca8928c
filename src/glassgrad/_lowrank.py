"""torch.svd_lowrank and torch.pca_lowrank: randomized low-rank SVD / PCA (Halko, Martinsson and Tropp 2009,
algorithms 4.4 and 5.1), composed of ordinary ops in torch's order -- the same Gaussian draw from the
generator (randn of shape (n, q)), QR-orthonormalised subspace iterations, then a thin SVD of the projected
matrix -- so the same seed gives torch's factors and gradients flow through matmul / qr / svd."""
from . import _dtype
from .ops import random as _random, linalg_decomp as _decomp, sparse_ops as _sparse_ops, sparse as _sparse
from .ops import creation as _creation

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating(A):
    """The dtype the algorithm works in: A's if float16/32/64, else float32 (integers)."""
    return A.dtype if A.dtype in (_dtype.float16, _dtype.float32, _dtype.float64) else _dtype.float32


def _mm(A, B):
    """A @ B, with a sparse A through torch.sparse.mm; no A (None) means B."""
    if A is None:
        return B
    if A.is_sparse:
        return _sparse_ops.sparse_mm(A, B)
    return A.matmul(B)


def _H(A):
    """A's conjugate transpose (a sparse A through transpose: sparse tensors have no mH view)."""
    return A.transpose(-2, -1).conj() if A.is_sparse else A.mH


def _basis(A, q, niter=2, M=None):
    """An orthonormal Q (m, q) whose range approximates that of A - M (algorithm 4.4)."""
    niter = 2 if niter is None else niter
    dtype = A.dtype if A.is_complex() else _floating(A)
    R = _random.randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = _mm(A, R)
    if M is not None:
        X = X - _mm(M, R)
    Q = _decomp.qr(X).Q
    for _ in range(niter):
        X = _mm(_H(A), Q)
        if M is not None:
            X = X - _mm(M.mH, Q)
        Q = _decomp.qr(X).Q
        X = _mm(A, Q)
        if M is not None:
            X = X - _mm(M, Q)
        Q = _decomp.qr(X).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:
        A = _H(A)
        if M is not None:
            M = M.mH
    Q = _basis(A, q, niter=niter, M=M)
    B = _mm(Q.mH, A) if not A.is_sparse else _mm(_H(A), Q).mH   # Q^H A, sparse A on the left
    if M is not None:
        B = B - _mm(Q.mH, M)
    U, S, Vh = _decomp.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^H: a rank-q randomized SVD (a plain tuple, as torch's)."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V): the randomized SVD of A centred on its column means (V's columns: principal directions)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    dtype = _floating(A)
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    if A.is_sparse:
        if len(A.shape) != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        c = _sparse_ops.sparse_sum(A, dim=(-2,)) / m
        cols = c.indices()[0]
        idx = _creation.zeros(2, len(cols), dtype=cols.dtype, device=cols.device)
        idx[0] = cols
        C_t = _sparse.sparse_coo_tensor(idx, c.values(), (n, 1), dtype=dtype, device=A.device)
        ones = _creation.ones(A.shape[:-2] + (1, m), dtype=dtype, device=A.device)
        return _svd_lowrank(A, q, niter=niter, M=_sparse_ops.sparse_mm(C_t, ones).mT)
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter=niter, M=None)
