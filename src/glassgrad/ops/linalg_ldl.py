"""torch.linalg, part 5: the LDL^T factorization of symmetric matrices (real dtypes, batched).

ops: ldl_factor ldl_factor_ex ldl_solve

LAPACK's Bunch-Kaufman factorization (sytf2, lower triangle: 1x1 and 2x2 pivots, negative pivots marking a 2x2
block) written out in NumPy, one matrix at a time, and its solve (sytrs).  As in PyTorch, the factorization has
no derivative (its node is `NotImplemented`); ldl_solve is not differentiable either.
"""
import numpy as np

from .. import _dtype, backend
from ._core import make, edge, grad, real_only
from .linalg_solve import named, check_matrix, lapack_dtype, low_kernel
from ._core import NotImplementedNode

__all__ = []

_ALPHA = (1 + np.sqrt(17.0)) / 8


def _sytf2(a):
    """(LD, pivots, info) of one symmetric matrix (lower triangle read), as LAPACK's sytf2 with uplo='L'."""
    A = np.tril(a).astype(np.float64)
    n = A.shape[0]
    piv = np.zeros(n, np.int32)
    info, k = 0, 0
    while k < n:
        kstep, kp = 1, k
        absakk = abs(A[k, k])
        imax = k + 1 + int(np.argmax(np.abs(A[k + 1:, k]))) if k < n - 1 else k
        colmax = abs(A[imax, k]) if k < n - 1 else 0.0
        if max(absakk, colmax) == 0:
            info = info or k + 1
        else:
            kp, kstep = _bk_pivot(A, k, imax, absakk, colmax)
            _bk_swap(A, k, kp, kstep)
            _bk_update(A, k, kstep)
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return A, piv, info


def _bk_pivot(A, k, imax, absakk, colmax):
    n = A.shape[0]
    if absakk >= _ALPHA * colmax:
        return k, 1
    rowmax = np.max(np.abs(A[imax, k:imax])) if imax > k else 0.0
    if imax < n - 1:
        rowmax = max(rowmax, np.max(np.abs(A[imax + 1:, imax])))
    if absakk >= _ALPHA * colmax * (colmax / rowmax):
        return k, 1
    if abs(A[imax, imax]) >= _ALPHA * rowmax:
        return imax, 1
    return imax, 2


def _bk_swap(A, k, kp, kstep):
    """Interchange rows and columns kk and kp of the trailing lower triangle."""
    kk = k + kstep - 1
    if kp == kk:
        return
    n = A.shape[0]
    if kp < n - 1:
        A[kp + 1:, [kk, kp]] = A[kp + 1:, [kp, kk]]
    t = A[kk + 1:kp, kk].copy()
    A[kk + 1:kp, kk] = A[kp, kk + 1:kp]
    A[kp, kk + 1:kp] = t
    A[kk, kk], A[kp, kp] = A[kp, kp], A[kk, kk]
    if kstep == 2:
        A[k + 1, k], A[kp, k] = A[kp, k], A[k + 1, k]


def _bk_update(A, k, kstep):
    n = A.shape[0]
    if kstep == 1:
        if k < n - 1:
            r = 1.0 / A[k, k]
            x = A[k + 1:, k].copy()
            A[k + 1:, k + 1:] -= np.tril(r * np.outer(x, x))
            A[k + 1:, k] = x * r
        return
    if k < n - 2:
        d21 = A[k + 1, k]
        d11 = A[k + 1, k + 1] / d21
        d22 = A[k, k] / d21
        t = 1.0 / (d11 * d22 - 1.0)
        d21 = t / d21
        for j in range(k + 2, n):
            wk = d21 * (d11 * A[j, k] - A[j, k + 1])
            wkp1 = d21 * (d22 * A[j, k + 1] - A[j, k])
            A[j:, j] -= A[j:, k] * wk + A[j:, k + 1] * wkp1
            A[j, k] = wk
            A[j, k + 1] = wkp1


def _sytrs(A, piv, b):
    """X with (L D L^T) X = b for one factorization (LAPACK's sytrs, uplo='L')."""
    B = b.astype(np.float64).copy()
    n = A.shape[0]
    k = 0
    while k < n:                        # L D Y = b
        if piv[k] > 0:
            kp = piv[k] - 1
            B[[k, kp]] = B[[kp, k]]
            B[k + 1:] -= np.outer(A[k + 1:, k], B[k])
            B[k] /= A[k, k]
            k += 1
            continue
        kp = -piv[k] - 1
        B[[k + 1, kp]] = B[[kp, k + 1]]
        B[k + 2:] -= np.outer(A[k + 2:, k], B[k]) + np.outer(A[k + 2:, k + 1], B[k + 1])
        akm1k = A[k + 1, k]
        akm1, ak = A[k, k] / akm1k, A[k + 1, k + 1] / akm1k
        denom = akm1 * ak - 1.0
        bkm1, bk = B[k] / akm1k, B[k + 1] / akm1k
        B[k], B[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
        k += 2
    k = n - 1
    while k >= 0:                       # L^T X = Y
        if piv[k] > 0:
            B[k] -= A[k + 1:, k] @ B[k + 1:]
            kp = piv[k] - 1
            B[[k, kp]] = B[[kp, k]]
            k -= 1
            continue
        B[k] -= A[k + 1:, k] @ B[k + 1:]
        B[k - 1] -= A[k + 1:, k - 1] @ B[k + 1:]
        kp = -piv[k] - 1
        B[[k, kp]] = B[[kp, k]]
        k -= 2
    return B


def _ldl_checks(fname, A):
    check_matrix(fname, A)
    a = A._data
    m, n = a.shape[-2:]
    if m != n:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are {m} by {n} matrices")
    if a.dtype.kind not in "fcV":
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.c_name(a.dtype)}")
    low_kernel("ldl_factor_kernel_cpu", a)
    return a


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    real_only("torch.linalg.ldl_factor_ex", A)
    a = _ldl_checks("torch.linalg.ldl_factor_ex", A)
    n = a.shape[-1]
    dev = backend.device_of(a)
    a = backend.to_host(a)      # Bunch-Kaufman in Python loops over elements (CuPy has no sytrf): on the host
    res = [_sytf2(x) for x in a.reshape((-1, n, n))] if a.size else []
    LD = np.stack([r[0] for r in res]).reshape(a.shape).astype(a.dtype) if res else np.zeros(a.shape, a.dtype)
    piv = np.stack([r[1] for r in res]).reshape(a.shape[:-1]) if res else \
        np.broadcast_to(np.arange(1, n + 1, dtype=np.int32), a.shape[:-1]).copy()
    info = np.array([r[2] for r in res], np.int32).reshape(a.shape[:-2]) if res else np.zeros(a.shape[:-2], np.int32)
    if check_errors and info.any():
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: Unknown error code: {int(info.reshape(-1).max())}.")
    LD, piv, info = (backend.to_device(x, dev) for x in (LD, piv, info))
    if grad.enabled and A._rg:
        node = NotImplementedNode((edge(A),))
        node.what = "aten::linalg_ldl_factor_ex"
        LDt = make(LD, True, node, 0)
    else:
        LDt = make(LD)
    return named("linalg_ldl_factor_ex", ("LD", "pivots", "info"), (LDt, make(piv), make(info)))


def ldl_factor(A, *, hermitian=False, out=None):
    LD, piv, info = ldl_factor_ex(A, hermitian=hermitian)
    if info._data.any():
        raise RuntimeError(f"torch.linalg.ldl_factor: Unknown error code: {int(info._data.reshape(-1).max())}.")
    return named("linalg_ldl_factor", ("LD", "pivots"), (LD, piv))


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    real_only("torch.linalg.ldl_solve", LD, B)
    ld, b = LD._data, B._data
    check_matrix("torch.linalg.ldl_solve", LD, "LD")
    check_matrix("torch.linalg.ldl_solve", B, "B")
    if not lapack_dtype(ld.dtype):
        raise RuntimeError("torch.linalg.ldl_solve: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.c_name(ld.dtype)}")
    n = ld.shape[-1]
    if b.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is {n} by {n} but "
                           f"each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    dev = backend.device_of(b)
    ld, b = backend.to_host(ld), backend.to_host(b)     # sytrs in Python loops (CuPy has none): on the host
    ldb = np.broadcast_to(ld, batch + ld.shape[-2:]).reshape((-1, n, n))
    pvb = np.broadcast_to(backend.to_host(pivots._data), batch + (n,)).reshape((-1, n))
    bb = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    x = np.stack([_sytrs(*t) for t in zip(ldb, pvb, bb)]) if bb.shape[0] else np.zeros(bb.shape)
    X = make(backend.to_device(x.reshape(batch + b.shape[-2:]).astype(b.dtype), dev))
    if grad.enabled and (LD._rg or B._rg):
        node = NotImplementedNode((edge(LD), edge(B)))
        node.what = "aten::linalg_ldl_solve"
        X = make(X._data, True, node, 0)
    return X
