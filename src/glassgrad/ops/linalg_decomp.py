"""torch.linalg, part 2: determinants, decompositions and matrix functions (real dtypes, batched).

ops: det slogdet eigh eigvalsh svd svdvals qr pinv matrix_exp cross
     (inverses, solvers, Cholesky, LU and the node base `_LaNode`: ops/linalg_solve.py)

Eigenvectors and singular vectors are unique only up to sign: NumPy's LAPACK drivers (syevd, gesdd, geqrf)
are those PyTorch's CPU kernels call, so the signs agree in practice, but only sign-invariant functions of
them are promised equal.  The backward formulas are PyTorch's (FunctionsManual.cpp): degenerate eigenvalues
or singular values give what PyTorch gives (inf / nan from the 1 / (l_j - l_i) terms).
"""
import numpy as np

from .. import _dtype
from ._core import make, grad, broadcast_shape, as_array
from .shape import cat
from .complex import conj, imag
from .ternary import where
from .linalg_solve import (_LaNode, wrap, named, check_float, lapack_dtype, low_kernel, check_matrix, check_square, square_float,
                           solve_triangular, solve, lu_arrays, perm_from_pivots, _tri_solve)
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = []


# -- eigh / eigvalsh ----------------------------------------------------------------------------------------------
class LinalgEighBackward0(_LaNode):   # gA = V (skew(V^T gV) / E + diag(gL)) V^T, E_ij = L_j - L_i
    __slots__ = ()
    n_outputs = 2
    _saved_names = ("eigenvalues", "eigenvectors")

    @staticmethod
    def formula(grads, L, V):
        gL, gV = grads
        if gV is None:
            if gL is None:
                return (None,)
            return ((V * gL.unsqueeze(-2)) @ V.mH,)
        VhgV = V.mH @ gV                    # mH: the conjugate transpose (mT for real tensors)
        VhgV = 0.5 * (VhgV - VhgV.mH)
        n = L.shape[-1]
        eye = np.eye(n, dtype=bool, like=L._data)
        E = L.unsqueeze(-2) - L.unsqueeze(-1) + make(eye.astype(L._data.dtype))
        ret = VhgV / E
        if gL is not None:
            ret = where(make(eye), gL.diag_embed(), ret)
        else:
            ret = ret * make((~eye).astype(L._data.dtype))
        return (V @ (ret @ V.mH),)


def _uplo(UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


def _eigh_arrays(A, fname):
    check_square(fname, A)
    a = A._data
    if a.dtype.kind not in "fcV":
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{_dtype.c_name(a.dtype)}'")
    low_kernel("linalg_eigh_cpu", a)
    return a


def eigh(A, UPLO="L", *, out=None):
    if _acs.on:
        return _ac.fp32(eigh, A, UPLO, out=out)
    a = _eigh_arrays(A, "linalg.eigh")
    uplo = _uplo(UPLO)
    if a.size:
        L, V = np.linalg.eigh(a, UPLO=uplo)
    else:
        L, V = np.zeros(a.shape[:-1], a.dtype, like=a), np.zeros(a.shape, a.dtype, like=a)
    Lt, Vt = wrap((L.astype(a.real.dtype), V.astype(a.dtype)), LinalgEighBackward0, (A,), saved_out=(0, 1))
    return named("linalg_eigh", ("eigenvalues", "eigenvectors"), (Lt, Vt))


def eigvalsh(A, UPLO="L", *, out=None):
    if _acs.on:
        return _ac.fp32(eigvalsh, A, UPLO, out=out)
    if A._rg:
        if grad.enabled:
            return eigh(A, UPLO)[0]
    a = _eigh_arrays(A, "linalg.eigh")
    uplo = _uplo(UPLO)
    L = np.linalg.eigvalsh(a, UPLO=uplo) if a.size else np.zeros(a.shape[:-1], a.dtype, like=a)
    return make(L.astype(a.real.dtype))        # Hermitian: real eigenvalues


# -- det / slogdet ----------------------------------------------------------------------------------------------
class LinalgDetBackward0(_LaNode):     # gA = g det A^-T; the adjugate through the SVD where A is singular
    __slots__ = ()
    _saved_names = ("A", "result")

    @staticmethod
    def formula(g, A, det):         # complex: conj of the real formula at conj(g), i.e. g conj(det) A^-H
        if A.is_complex():
            return (conj(_det_backward(conj(g), A, det)),)
        return (_det_backward(g, A, det),)

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            return _LaNode.backward(self, ns, g)
        A, d = ns.unpack(self)
        if A.size == 0:
            return (np.zeros_like(A),)
        if A.dtype.kind == "c":
            return (np.conj(_det_backward_first(np.conj(g), A, d, self.info)),)
        return (_det_backward_first(g, A, d, self.info),)


def _det_backward_first(g, A, det, use_at):
    """PyTorch's first-order det gradient: (g det) A^-T through the forward's LU factors (of A^T for a
    contiguous A, as PyTorch hands LAPACK its row-major memory), a zero pivot replaced by eps: an exactly
    singular matrix (det == 0) gets a zero gradient."""
    n = A.shape[-1]
    d = (g * det)[..., None, None] * np.eye(n, dtype=A.dtype, like=A)
    F = np.swapaxes(A, -1, -2) if use_at else A
    LU, piv, info = lu_arrays(F)
    with np.errstate(all="ignore"):
        if not info.any():
            return np.linalg.solve(np.swapaxes(A, -1, -2), d).astype(A.dtype)
        idx = np.arange(n, like=A)
        dg = LU[..., idx, idx]
        LU[..., idx, idx] = np.where(dg == 0, np.finfo(A.dtype).eps, dg)
        U = np.triu(LU)
        L = np.tril(LU, -1) + np.eye(n, dtype=A.dtype, like=A)
        P = perm_from_pivots(piv, n)
        if use_at:          # F = A^T = P L U: A^-T d = U^-1 L^-1 P^T d
            y = _tri_solve(L, np.matmul(np.swapaxes(P, -1, -2), d), False)
            return _tri_solve(U, y, True).astype(A.dtype)
        y = _tri_solve(np.swapaxes(U, -1, -2), d, False)        # F = A = P L U: A^-T d = P L^-T U^-T d
        return np.matmul(P, _tri_solve(np.swapaxes(L, -1, -2), y, True)).astype(A.dtype)


def _det_backward(g, A, det):
    if A._data.size == 0:
        return make(np.zeros(A._data.shape, A._data.dtype, like=A._data))
    n = A.shape[-1]
    eps = float(np.finfo(A._data.dtype).eps)
    d = (g * det).unsqueeze(-1).unsqueeze(-2) * _eye_like(A)
    singular = np.abs(det._data) < 100 * eps
    if not singular.any():
        return solve(A.mT, d)
    sing = _det_singular(g, A)
    if singular.all():
        return sing
    safe = A._data.copy()
    safe[singular] = np.eye(n, like=safe)
    Asafe = A + make(safe - A._data)            # A itself where non-singular (the gradient flows to A)
    mask = make(np.broadcast_to(singular[..., None, None], A.shape))
    return where(mask, sing, solve(Asafe.mT, d))


def _det_singular(g, A):
    U, S, Vh = svd(A)
    alpha = det(U) * det(Vh) * g
    D = _prod_safe_zeros_backward(alpha.unsqueeze(-1), S)
    return (U * D.unsqueeze(-2)) @ Vh


def _prod_safe_zeros_backward(g, x):
    """The gradient of prod(x, -1) with zeros allowed (exclusive products from both sides)."""
    n = x.shape[-1]
    if x._data.size == 0:
        return g.expand(x.shape)
    if n == 1:
        return g
    ones = make(np.ones(x.shape[:-1] + (1,), x._data.dtype, like=x._data))
    fwd = cat([ones, x.narrow(-1, 0, n - 1)], -1).cumprod(-1)
    rev = cat([ones, x.narrow(-1, 1, n - 1).flip(-1)], -1).cumprod(-1).flip(-1)
    return g * (fwd * rev)


def _eye_like(A):
    return make(np.eye(A.shape[-1], dtype=A._data.dtype, like=A._data))


def _lapack_transposed(a):
    """Whether PyTorch factors A^T (it hands LAPACK a contiguous matrix's memory as column-major)."""
    return a.ndim >= 2 and a.flags.c_contiguous


def det(A, *, out=None):
    a = square_float("linalg.det", A, kernel="lu_cpu")
    use_at = _lapack_transposed(a)
    with np.errstate(all="ignore"):
        y = as_array(np.linalg.det(np.swapaxes(a, -1, -2) if use_at else a) if a.size else
                     np.ones(a.shape[:-2], like=a), a.dtype)
    d, = wrap((y,), LinalgDetBackward0, (A,), saved_in=(0,), saved_out=(0,), info=use_at)
    return d


class LinalgSlogdetBackward0(_LaNode):     # gA = g A^-H, g = g_logabsdet (- i Im(g_sign conj(sign)) if complex)
    __slots__ = ()
    n_outputs = 2
    _saved_names = ("A", "sign")

    @staticmethod
    def formula(grads, A, sign):
        gs, g = grads
        if A.is_complex() and gs is not None:       # the sign moves with the phase of det (real: constant)
            t = imag(gs * conj(sign)) * -1j
            g = t if g is None else g + t
        if g is None:
            return (None,)
        n = A.shape[-1]
        return (solve(A.mH, g.unsqueeze(-1).unsqueeze(-1) * _eye_like(A).expand(tuple(A.shape[:-2]) + (n, n))),)


def slogdet(A, *, out=None):
    a = square_float("linalg.slogdet", A)
    with np.errstate(all="ignore"):
        s, l_ = np.linalg.slogdet(np.swapaxes(a, -1, -2) if _lapack_transposed(a) else a) if a.size else (np.ones(a.shape[:-2], like=a), np.zeros(a.shape[:-2], like=a))
    s, l_ = wrap((as_array(s, a.dtype), as_array(l_, a.real.dtype)), LinalgSlogdetBackward0, (A,), saved_in=(0,),
                 saved_out=(0,))
    return named("linalg_slogdet", ("sign", "logabsdet"), (s, l_))


# -- svd / svdvals --------------------------------------------------------------------------------------------
class LinalgSvdBackward0(_LaNode):    # PyTorch's svd_backward (real case)
    __slots__ = ()
    n_outputs = 3
    _saved_names = ("U", "S", "Vh")

    def formula(self, grads, U, S, Vh):
        gU, gS, gVh = grads
        k = S.shape[-1]
        if self.info:       # full_matrices: only the first k singular vectors enter
            gU = None if gU is None else gU.narrow(-1, 0, k)
            gVh = None if gVh is None else gVh.narrow(-2, 0, k)
            U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        return (svd_backward(gU, gS, gVh, U, S, Vh),)


def svd_backward(gU, gS, gVh, U, S, Vh):
    if gS is None and gU is None and gVh is None:
        return None
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        return U @ (gS.unsqueeze(-1) * Vh) if m >= n else (U * gS.unsqueeze(-2)) @ Vh
    UhgU = None if gU is None else _skew(U.mH @ gU)      # mH: conjugate transposes (mT for real tensors)
    VhgV = None if gVh is None else _skew(Vh @ gVh.mH)
    S2 = S * S
    k = S.shape[-1]
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + make(np.eye(k, dtype=S._data.dtype, like=S._data))
    if gU is not None and gVh is not None:
        gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif gU is not None:
        gA = (UhgU / E) * S.unsqueeze(-2)
    else:
        gA = S.unsqueeze(-1) * (VhgV / E)
    if gS is not None:
        gA = gA + gS.diag_embed()
    if U.is_complex() and gU is not None:      # the phase term: i Im(diag(U^H gU)) / S
        gA = gA + (imag((U.mH @ gU).diagonal(0, -2, -1)) / S * 1j).diag_embed()
    if m > n and gU is not None:
        gA = U @ gA
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U @ (U.mH @ gUSinv)
        return gA @ Vh
    if m < n and gVh is not None:
        gA = gA @ Vh
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - (SinvgVh @ Vh.mH) @ Vh
        return U @ gA
    return U @ (gA @ Vh) if m >= n else (U @ gA) @ Vh


def _skew(X):
    return X - X.mH


def _svd_arrays(A, full_matrices):
    check_matrix("linalg.svd", A)
    check_float("linalg.svd", A, kernel="linalg_svd_cpu")
    a = A._data
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        um, vn = (m, n) if full_matrices else (k, k)
        eye_u = np.broadcast_to(np.eye(m, um, dtype=a.dtype, like=a), a.shape[:-2] + (m, um)).copy()
        eye_v = np.broadcast_to(np.eye(vn, n, dtype=a.dtype, like=a), a.shape[:-2] + (vn, n)).copy()
        return eye_u, np.zeros(a.shape[:-2] + (k,), a.real.dtype, like=a), eye_v
    U, S, Vh = np.linalg.svd(a, full_matrices=full_matrices)
    return U.astype(a.dtype), S.astype(a.real.dtype), Vh.astype(a.dtype)


def _no_driver(driver):
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


def svd(A, full_matrices=True, *, driver=None, out=None):
    if _acs.on:
        return _ac.fp32(svd, A, full_matrices, driver=driver, out=out)
    _no_driver(driver)
    U, S, Vh = _svd_arrays(A, full_matrices)
    m, n = A._data.shape[-2:]
    Ut, St, Vht = wrap((U, S, Vh), LinalgSvdBackward0, (A,), saved_out=(0, 1, 2),
                       info=bool(full_matrices and m != n))
    return named("linalg_svd", ("U", "S", "Vh"), (Ut, St, Vht))


def svdvals(A, *, driver=None, out=None):
    if _acs.on:
        return _ac.fp32(svdvals, A, driver=driver, out=out)
    _no_driver(driver)
    if A._rg and grad.enabled:
        return svd(A, full_matrices=False)[1]
    check_matrix("linalg.svd", A)
    check_float("linalg.svd", A, kernel="linalg_svd_cpu")
    a = A._data
    S = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(a.shape[:-2] + (min(a.shape[-2:]),), a.dtype, like=a)
    return make(S.astype(a.real.dtype))        # singular values are real


# -- qr ---------------------------------------------------------------------------------------------------------
class LinalgQrBackward0(_LaNode):     # PyTorch's linalg_qr_backward (real case)
    __slots__ = ()
    n_outputs = 2
    _saved_names = ("Q", "R")

    def formula(self, grads, Q, R):
        return (qr_backward(grads[0], grads[1], Q, R, self.info),)


def qr_backward(gQ, gR, Q, R, mode):
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if gQ is None and gR is None:
        return None
    if gQ is not None:          # mH: conjugate transposes (mT for real tensors), as PyTorch's linalg_qr_backward
        gA = gR @ R.mH - Q.mH @ gQ if gR is not None else -(Q.mH @ gQ)
    else:
        gA = gR @ R.mH
    if m >= n:
        X = gA.triu()
        sym = X + X.mH
        sym = sym - 0.5 * sym.diagonal(0, -2, -1).diag_embed()
        gA = Q @ sym
        if gQ is not None:
            gA = gA + gQ
        return solve_triangular(R.mH, gA, upper=False, left=False)
    skew = (-gA - (-gA).mH).tril()
    if skew.is_complex():       # its diagonal is 2i Im(.): halved, as PyTorch
        skew = skew - 0.5 * skew.diagonal(0, -2, -1).diag_embed()
    gA = Q @ skew
    gA = solve_triangular(R.narrow(-1, 0, m).mH, gA, upper=False, left=False)
    gA = cat([gA, make(np.zeros(tuple(R.shape[:-1]) + (n - m,), R._data.dtype, like=R._data))], -1)
    if gR is not None:
        gA = gA + Q @ gR
    return gA


def qr(A, mode="reduced", *, out=None):
    if _acs.on:
        return _ac.fp32(qr, A, mode, out=out)
    if mode not in ("reduced", "r", "complete"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    check_matrix("linalg.qr", A)
    check_float("linalg.qr", A, kernel="geqrf_cpu", kernel_on_empty=True)
    a = A._data
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        qc = m if mode == "complete" else k
        Q = np.broadcast_to(np.eye(m, qc, dtype=a.dtype, like=a), a.shape[:-2] + (m, qc)).copy()
        R = np.zeros(a.shape[:-2] + (qc, n), a.dtype, like=a)
    else:
        Q, R = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        Q = np.zeros((0,), a.dtype, like=a)
    Qt, Rt = wrap((Q.astype(a.dtype), R.astype(a.dtype)), LinalgQrBackward0, (A,), saved_out=(0, 1), info=mode)
    return named("linalg_qr", ("Q", "R"), (Qt, Rt))


# -- pinv -------------------------------------------------------------------------------------------------------
class LinalgPinvBackward0(_LaNode):    # PyTorch's pinv_backward
    __slots__ = ()
    _saved_names = ("self", "result")

    @staticmethod
    def formula(g, A, pinvA):
        return (pinv_backward(g, pinvA, A),)


def pinv_backward(g, pinvA, A):
    m, n = A.shape[-2], A.shape[-1]
    pinvAh = pinvA.mH                   # PyTorch's pinv_backward, with conjugate transposes
    gh = g.mH
    if m <= n:
        K = gh @ pinvA
        KpinvAh = K @ pinvAh
        return -(pinvA @ K).mH + KpinvAh - (A @ pinvA) @ KpinvAh + (pinvAh @ pinvA) @ (gh - K @ A)
    K = pinvA @ gh
    pinvAhK = pinvAh @ K
    return -(K @ pinvA).mH + ((gh - A @ K) @ pinvA) @ pinvAh + pinvAhK - (pinvAhK @ pinvA) @ A


def _tol(v):
    if v is None:
        return None
    return v._data if hasattr(v, "_data") else np.asarray(v)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    a = A._data
    if a.ndim < 2 or not lapack_dtype(a.dtype):
        raise RuntimeError(f"linalg.pinv({_dtype.c_name(a.dtype)}{{{list(a.shape)}}}): expected a tensor with 2 or "
                           "more dimensions of float, double, cfloat or cdouble types")
    m, n = a.shape[-2:]
    if a.size == 0:
        y = np.zeros(a.shape[:-2] + (n, m), a.dtype, like=a)
    else:
        U, S, Vh = np.linalg.svd(a, full_matrices=False)
        cut = _cutoff(S, atol, rtol, m, n, a.dtype)
        with np.errstate(all="ignore"):
            Sinv = np.where(S > cut, 1 / S, 0)
        y = np.matmul(np.conj(np.swapaxes(Vh, -1, -2)) * Sinv[..., None, :],
                      np.conj(np.swapaxes(U, -1, -2))).astype(a.dtype)      # V S^+ U^H
    P, = wrap((y,), LinalgPinvBackward0, (A,), saved_in=(0,), saved_out=(0,))
    return P


def _cutoff(S, atol, rtol, m, n, dtype):
    """max(atol, rtol * largest singular value), per matrix (keepdim), with PyTorch's default rtol."""
    atol, rtol = _tol(atol), _tol(rtol)
    if rtol is None:
        rtol = 0.0 if (atol is not None and np.any(atol > 0)) else np.finfo(dtype).eps * max(m, n)
    smax = S[..., :1] if S.shape[-1] else np.zeros(S.shape[:-1] + (1,), S.dtype, like=S)
    at = 0.0 if atol is None else np.asarray(atol, like=S)[..., None]
    return np.maximum(at, np.asarray(rtol, like=S)[..., None] * smax)


# -- matrix_exp -------------------------------------------------------------------------------------------------
class LinalgMatrixExpBackward0(_LaNode):   # gA = the top-right block of exp([[A^T, g], [0, A^T]])
    __slots__ = ()
    _saved_names = ("self",)

    @staticmethod
    def formula(g, A):
        At = A.mH
        n = A.shape[-1]
        Z = make(np.zeros(tuple(A.shape), A._data.dtype, like=A._data))
        M = cat([cat([At, g], -1), cat([Z, At], -1)], -2)
        return (matrix_exp(M).narrow(-2, 0, n).narrow(-1, n, n),)


_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
           10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.)


def _expm(a):
    """exp of square matrices `a` (..., n, n): scaling and squaring with the [13/13] Pade approximant (Higham
    2005), in float64."""
    x = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    n = x.shape[-1]
    norm1 = np.abs(x).sum(-2).max(-1) if x.size else np.zeros(x.shape[:-2], like=x)
    s = np.maximum(0, np.ceil(np.log2(np.maximum(norm1, 1e-300) / 5.371920351148152))).astype(int)
    x = x / (2.0 ** s)[..., None, None]
    b = _PADE13
    eye = np.eye(n, like=x)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
    r = np.linalg.solve(v - u, v + u) if x.size else x + eye
    for k in range(int(s.max()) if s.size else 0):
        sq = r @ r
        r = np.where((s > k)[..., None, None], sq, r)
    return r.astype(a.dtype)


def matrix_exp(A):
    a = square_float("linalg.matrix_exp", A, allow_low=True)
    y = _expm(a) if a.size else np.array(a, copy=True, like=a)
    E, = wrap((y,), LinalgMatrixExpBackward0, (A,), saved_in=(0,))
    return E


# -- cross ------------------------------------------------------------------------------------------------------
class LinalgCrossBackward0(_LaNode):     # ga = b x g; gb = g x a
    __slots__ = ()
    _saved_names = ("self", "other")

    def formula(self, g, a, b):
        dim, sa, sb = self.info
        ga = cross(conj(b), g, dim=dim) if self.need(0) else None      # conj: no-op for real tensors
        gb = cross(g, conj(a), dim=dim) if self.need(1) else None
        ga = ga if ga is None or tuple(ga.shape) == sa else ga.sum_to_size(sa)
        gb = gb if gb is None or tuple(gb.shape) == sb else gb.sum_to_size(sb)
        return (ga, gb)


def cross(input, other, *, dim=-1, out=None):
    a, b = input._data, other._data
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = broadcast_shape(a.shape, b.shape)
    d = dim + len(shape) if dim < 0 else dim
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
                           f"{b.shape[d]}")
    if a.dtype != b.dtype:
        raise RuntimeError("linalg.cross: expected both inputs to have the same dtype")
    y = np.cross(np.broadcast_to(a, shape), np.broadcast_to(b, shape), axis=d)
    Y, = wrap((y.astype(a.dtype),), LinalgCrossBackward0, (input, other), saved_in=(0, 1), info=(d, a.shape, b.shape))
    return Y


