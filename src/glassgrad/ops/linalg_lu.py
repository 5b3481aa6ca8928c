"""torch.linalg, part 4: LU, least squares and Householder products (real dtypes, batched).

ops: lu_factor lu_factor_ex lu lu_solve lstsq householder_product
     (the LU itself is linalg_solve.lu_arrays: LAPACK getrf's partial pivoting, batched)
"""
import numpy as np

from .. import _dtype
from ._core import make, edge, save_out, grad, real_only
from .shape import cat, stack
from .linalg_solve import (_LaNode, wrap, named, check_float, lapack_dtype, low_kernel, check_matrix, check_square, lu_arrays, perm_from_pivots,
                           _tri_solve, solve_triangular, batch_prefix)
from .linalg_decomp import pinv, pinv_backward
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = []


# -- unpacking and the LU backward (PyTorch's linalg_lu_backward) -------------------------------------------------
def _unpack(LU, pivots):
    """(P, L, U) arrays of a packed LU (..., m, n) and its pivots."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype, like=LU)
    U = np.triu(LU[..., :k, :])
    return perm_from_pivots(pivots, m).astype(LU.dtype), L, U


def _tril1(L):
    """L's strictly lower part plus the unit diagonal (a differentiable unit-lower factor)."""
    m, k = L.shape[-2:]
    return L.tril(-1) + make(np.eye(m, k, dtype=L._data.dtype, like=L._data))


def lu_backward(gL, gU, P, L, U):
    if gL is None and gU is None:
        return None
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = L.mH @ gL if gL is not None else None
        gA = None if gA is None else gA.tril(-1)
        if gU is not None:
            t = (gU @ U.mH).triu()
            gA = t if gA is None else gA + t
        gA = solve_triangular(U.mH, gA, upper=False, left=False)
        return P @ solve_triangular(L.mH, gA, upper=True, left=True, unitriangular=True)
    if m < n:
        gA = L.mH @ gL if gL is not None else None
        if gU is not None:
            t = gU.triu() @ U.mH
            gA = -t if gA is None else gA - t
        gA = solve_triangular(U.narrow(-1, 0, k).mH, gA.tril(-1), upper=False, left=False)
        if gU is not None:
            gA = cat([gA + gU.narrow(-1, 0, k).triu(), gU.narrow(-1, k, n - k)], -1)
        gA = solve_triangular(L.mH, gA, upper=True, left=True, unitriangular=True)
        if gU is None:
            gA = cat([gA, make(np.zeros(tuple(U.shape[:-1]) + (n - k,), U._data.dtype, like=U._data))], -1)
        return P @ gA
    gA = gU @ U.mH if gU is not None else None
    if gL is not None:
        t = L.mH @ gL.tril(-1)
        gA = -t if gA is None else gA - t
    gA = solve_triangular(L.narrow(-2, 0, k).mH, gA.triu(), upper=True, left=True, unitriangular=True)
    if gL is not None:
        gA = cat([gA + gL.narrow(-2, 0, k).tril(-1), gL.narrow(-2, k, m - k)], -2)
    gA = solve_triangular(U.mH, gA, upper=False, left=False)
    if gL is None:
        gA = cat([gA, make(np.zeros(tuple(L.shape[:-2]) + (m - k, k), L._data.dtype, like=L._data))], -2)
    return P @ gA


class LinalgLuFactorExBackward0(_LaNode):    # PyTorch's lu_factor_ex_backward: the LU backward on the packed LU
    __slots__ = ()
    _saved_names = ("LU", "pivots")

    def formula(self, g, LU):
        P = make(self.info)
        m, n = LU.shape[-2:]
        k = min(m, n)
        L = _tril1(LU.narrow(-1, 0, k))
        U = LU.narrow(-2, 0, k).triu()
        return (lu_backward(g.narrow(-1, 0, k), g.narrow(-2, 0, k), P, L, U),)


class LinalgLuBackward0(_LaNode):            # outputs (P, L, U); P is not differentiable
    __slots__ = ()
    n_outputs = 3
    _saved_names = ("L", "U")

    def formula(self, grads, L, U):
        return (lu_backward(grads[1], grads[2], make(self.info), L, U),)


def _lu_checks(fname, A, pivot):
    check_matrix(fname, A)
    if A._data.dtype.kind not in "fcV":
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{_dtype.c_name(A._data.dtype)}'")
    low_kernel("lu_cpu", A._data)
    if not pivot:
        raise RuntimeError(f"{fname}: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    _lu_checks("linalg.lu_factor", A, pivot)
    LU, piv, info = lu_arrays(A._data)
    if check_errors and info.any():
        _lu_error(info)
    pt, it = make(piv), make(info)
    if grad.enabled and A._rg:
        n = LinalgLuFactorExBackward0((edge(A),))
        n.info = _unpack(LU, piv)[0]
        LUt = make(LU, True, n, 0)
        n._saved = (save_out(LUt),)
    else:
        LUt = make(LU)
    return named("linalg_lu_factor_ex", ("LU", "pivots", "info"), (LUt, pt, it))


def _lu_error(info):
    k = int(info.reshape(-1)[np.flatnonzero(info.reshape(-1))[0]])
    raise RuntimeError(f"torch.linalg.lu_factor: {batch_prefix(info)}U[{k},{k}] is zero and using it on lu_solve "
                       "would result in a division by zero. If you still want to perform the factorization, consider "
                       "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A, *, pivot=True, out=None):
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    if info._data.any():
        _lu_error(info._data)
    return named("linalg_lu_factor", ("LU", "pivots"), (LU, piv))


def lu(A, *, pivot=True, out=None):
    _lu_checks("linalg.lu", A, pivot)
    LU, piv, _ = lu_arrays(A._data)
    P, L, U = _unpack(LU, piv)
    Pt = make(P)
    if grad.enabled and A._rg:
        n = LinalgLuBackward0((edge(A),))
        n.info = P
        Lt, Ut = make(L, True, n, 1), make(U, True, n, 2)
        n._saved = (save_out(Lt), save_out(Ut))
    else:
        Lt, Ut = make(L), make(U)
    return named("linalg_lu", ("P", "L", "U"), (Pt, Lt, Ut))


# -- lu_solve ---------------------------------------------------------------------------------------------------
class LinalgLuSolveBackward0(_LaNode):   # gB = lu_solve(LU, gX, adjoint flipped); gLU through gA = -A^-T gX X^T
    __slots__ = ()
    _saved_names = ("LU", "result")

    def formula(self, g, LU, X):
        left, adjoint, piv, lu_shape, b_shape = self.info
        pv = make(piv)
        gB = lu_solve(LU, pv, g, left=left, adjoint=not adjoint)
        gLU = None
        if self.need(0):
            gM = -(gB @ X.mH) if left else -(X.mH @ gB)       # the gradient of op(A) (A or A^H; mH: mT if real)
            gA = gM.mH if adjoint else gM
            P = make(perm_from_pivots(piv, lu_shape[-1]).astype(LU._data.dtype))
            L, U = _tril1(LU), LU.triu()
            PtgA = P.mT @ gA
            gLU = (PtgA @ U.mH).tril(-1) + (L.mH @ PtgA).triu()
            gLU = gLU if tuple(gLU.shape) == lu_shape else gLU.sum_to_size(lu_shape)
        gB = (gB if tuple(gB.shape) == b_shape else gB.sum_to_size(b_shape)) if self.need(1) else None
        return (gLU, gB)


def _lu_solve_arrays(LU, piv, B, left, adjoint):
    P, L, U = _unpack(LU, piv)
    if adjoint and LU.dtype.kind == "c":     # A^H: conj(A) = P conj(L) conj(U), then the transposed solves
        L, U = np.conj(L), np.conj(U)
    b = B if left else np.swapaxes(B, -1, -2)
    transposed = adjoint == left        # solve A^T Y = b (left adjoint, or right non-adjoint)
    with np.errstate(all="ignore"):
        if not transposed:              # A Y = b: Y = U^-1 L^-1 P^T b
            y = _tri_solve(L, np.matmul(np.swapaxes(P, -1, -2), b), False)
            y = _tri_solve(U, y, True)
        else:                           # A^T Y = b: Y = P L^-T U^-T b
            y = _tri_solve(np.swapaxes(U, -1, -2), b, False)
            y = np.matmul(P, _tri_solve(np.swapaxes(L, -1, -2), y, True))
    return y if left else np.swapaxes(y, -1, -2)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    check_square("torch.linalg.lu_solve", LU)
    check_matrix("torch.linalg.lu_solve", B, "B")
    check_float("torch.linalg.lu_solve", LU)
    lu_a, b = LU._data, B._data
    if lu_a.dtype != b.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{_dtype.c_name(lu_a.dtype)} and B of type {_dtype.c_name(b.dtype)} instead")
    n = lu_a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    piv = pivots._data
    batch = np.broadcast_shapes(lu_a.shape[:-2], b.shape[:-2])
    lu_b = np.broadcast_to(lu_a, batch + lu_a.shape[-2:])
    piv_b = np.broadcast_to(piv, batch + piv.shape[-1:])
    x = _lu_solve_arrays(lu_b, piv_b, np.broadcast_to(b, batch + b.shape[-2:]), left, adjoint).astype(b.dtype)
    X, = wrap((x,), LinalgLuSolveBackward0, (LU, B), saved_in=(0,), saved_out=(0,),
              info=(left, adjoint, piv_b, lu_a.shape, b.shape))
    return X


# -- lstsq ------------------------------------------------------------------------------------------------------
class LinalgLstsqBackward0(_LaNode):     # PyTorch's linalg_lstsq_backward (through pinv, and the residuals)
    __slots__ = ()
    n_outputs = 2
    _saved_names = ("self", "b", "solution")

    def formula(self, grads, A, B, X):
        gX, gL = grads
        vector = self.info
        if vector:
            B, X = B.unsqueeze(-1), X.unsqueeze(-1)
            gX = None if gX is None else gX.unsqueeze(-1)
        gA = gB = None
        if gX is not None:
            pinvA = pinv(A)
            gA = pinv_backward(gX @ B.mH, pinvA, A) if self.need(0) else None     # mH: mT for real tensors
            gB = pinvA.mH @ gX if self.need(1) else None
        if gL is not None and gL.numel():
            r = A @ X - B
            gl = gL.unsqueeze(-2)
            if self.need(0):
                t = 2 * (gl * r) @ X.mH
                gA = t if gA is None else gA + t
            if self.need(1):
                t = -2 * gl * r
                gB = t if gB is None else gB + t
        if vector and gB is not None:
            gB = gB.squeeze(-1)
        return (gA, gB)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):
    if _acs.on:
        return _ac.fp32(lstsq, A, B, rcond, driver=driver)
    check_matrix("linalg.lstsq", A)
    if not lapack_dtype(A._data.dtype):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    driver = driver or "gelsy"
    a, b = A._data, B._data
    if a.dtype != b.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                           f"input's dtype {_dtype.c_name(a.dtype)} and other's dtype {_dtype.c_name(b.dtype)}")
    vector = b.ndim == a.ndim - 1
    b2 = b[..., None] if vector else b
    m, n = a.shape[-2:]
    if b2.shape[-2] != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size({-1 if vector else -2})")
    U, S, Vh = np.linalg.svd(a, full_matrices=False)
    rc = np.finfo(a.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    keep = S > rc * S[..., :1]
    with np.errstate(all="ignore"):
        Sinv = np.where(keep, 1 / S, 0)
    x = np.matmul(np.conj(np.swapaxes(Vh, -1, -2)) * Sinv[..., None, :],
                  np.matmul(np.conj(np.swapaxes(U, -1, -2)), b2))          # V S^+ U^H b
    rank = keep.sum(-1).astype(np.int64)
    full = bool(np.all(rank == min(m, n)))
    if m > n and driver != "gelsy" and full:
        res = np.sum(np.abs(np.matmul(a, x) - b2) ** 2, -2).astype(a.real.dtype)
    else:
        res = np.zeros((0,), a.real.dtype, like=a)
    x = (x[..., 0] if vector else x).astype(a.dtype)
    sol, rt = wrap((x, res), LinalgLstsqBackward0, (A, B), saved_in=(0, 1), saved_out=(0,), info=vector)
    rank_t = make(rank if driver != "gels" else np.zeros((0,), np.int64, like=a))
    sv = make(S.astype(a.real.dtype) if driver in ("gelsd", "gelss") else np.zeros((0,), a.real.dtype, like=a))
    return named("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"), (sol, rt, rank_t, sv))


# -- householder_product ----------------------------------------------------------------------------------------
class LinalgHouseholderProductBackward0(_LaNode):   # the exact gradient of (H_1 ... H_k)[:, :n], H_i = I - t_i v_i v_i^T
    __slots__ = ()
    _saved_names = ("self", "tau")

    @staticmethod
    def formula(g, A, tau):
        return householder_backward(g, A, tau)


def _reflectors(A, tau):
    """The Householder vectors v_i (..., m, 1) (zeros above row i, 1 at row i, A's column below) and H_i."""
    m, k = A.shape[-2], tau.shape[-1]
    dt = A._data.dtype
    bs = tuple(A.shape[:-2])
    like = A._data
    eye = make(np.eye(m, dtype=dt, like=like))
    vs, hs = [], []
    for i in range(k):
        head = make(np.concatenate([np.zeros(bs + (i, 1), dt, like=like), np.ones(bs + (1, 1), dt, like=like)], -2))
        v = cat([head, A.narrow(-2, i + 1, m - i - 1).narrow(-1, i, 1)], -2)
        vs.append(v)
        hs.append(eye - tau.narrow(-1, i, 1).unsqueeze(-1) * (v @ v.mT))
    return vs, hs


def householder_backward(g, A, tau):
    m, n, k = A.shape[-2], A.shape[-1], tau.shape[-1]
    dt = A._data.dtype
    bs = tuple(A.shape[:-2])
    like = A._data
    vs, hs = _reflectors(A, tau)
    G = cat([g, make(np.zeros(bs + (m, m - n), dt, like=like))], -1) if m > n else g
    rights = [None] * k
    R = make(np.eye(m, dtype=dt, like=like))
    for i in range(k - 1, -1, -1):
        rights[i] = R
        R = hs[i] @ R
    Pl = make(np.eye(m, dtype=dt, like=like))
    cols, gtaus = [], []
    for i in range(k):
        gH = Pl.mT @ G @ rights[i].mT
        v, t = vs[i], tau.narrow(-1, i, 1).unsqueeze(-1)
        gv = -t * ((gH + gH.mT) @ v)
        gtaus.append(-(v.mT @ gH @ v).squeeze(-1).squeeze(-1))
        cols.append(cat([make(np.zeros(bs + (i + 1, 1), dt, like=like)), gv.narrow(-2, i + 1, m - i - 1)], -2))
        Pl = Pl @ hs[i]
    if n > k:
        cols.append(make(np.zeros(bs + (m, n - k), dt, like=like)))
    return (cat(cols, -1), stack(gtaus, -1))


def householder_product(A, tau, *, out=None):
    if _acs.on:
        return _ac.fp32(householder_product, A, tau, out=out)
    check_matrix("torch.linalg.householder_product", A, "input")
    real_only("torch.linalg.householder_product", A, tau)
    a, t = A._data, tau._data
    m, n = a.shape[-2:]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if t.ndim < 1 or n < t.shape[-1]:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if not lapack_dtype(a.dtype):
        raise NotImplementedError(f"\"orgqr_cpu\" not implemented for '{_dtype.c_name(a.dtype)}'")
    k = t.shape[-1]
    q = np.broadcast_to(np.eye(m, dtype=a.dtype, like=a), a.shape[:-2] + (m, m)).copy()
    for i in range(k - 1, -1, -1):
        v = np.concatenate([np.zeros(a.shape[:-2] + (i,), a.dtype, like=a), np.ones(a.shape[:-2] + (1,), a.dtype, like=a),
                            a[..., i + 1:, i]], -1)
        q = q - t[..., i, None, None] * v[..., :, None] * np.matmul(v[..., None, :], q)
    Q, = wrap((q[..., :n].astype(a.dtype),), LinalgHouseholderProductBackward0, (A, tau), saved_in=(0, 1))
    return Q
