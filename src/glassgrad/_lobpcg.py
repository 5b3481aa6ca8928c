"""torch.lobpcg: Knyazev's Locally Optimal Block Preconditioned Conjugate Gradient method for the k largest
(or smallest) eigenpairs of a symmetric (generalized) eigenproblem, in torch's two variants (method="basic",
and "ortho", Stathopoulos-Wu's robust orthogonalisation) and with torch's parameters, stopping rule, tracker
and batching. It is composed of ordinary ops in torch's order, so the same seed draws the same starting
block. Gradients (dense real A, B = I) come through LOBPCGAutogradFunction, whose backward is the symmetric
eigen-decomposition's: the complete-eigenspace formula, or for a partial eigenspace the characteristic-
polynomial series (its orthogonal complement drawn from a fresh default-seeded generator, as torch's)."""
from . import _dtype
from .autograd.function import Function
from .linalg import eigh as _eigh, cholesky as _cholesky, solve_triangular as _solve_triangular, qr as _qr
from .linalg import vector_norm as _vector_norm
from .ops import creation as _c, random as _random, sparse_ops as _sparse_ops, linalg_cholesky as _lchol

__all__ = ["lobpcg"]


# -- helpers (torch._linalg_utils' matmul / qform / symeig / basis) -------------------------------------------
def _mm(A, B):
    """A @ B; None for A means the identity; a sparse A through torch.sparse.mm."""
    if A is None:
        return B
    return _sparse_ops.sparse_mm(A, B) if A.is_sparse else A.matmul(B)


def _qform(A, S):
    return S.mT.matmul(_mm(A, S))


def _symeig(A, largest=False):
    E, Z = _eigh(A, UPLO="U")
    if largest:
        E, Z = E.flip((-1,)), Z.flip((-1,))
    return E, Z


def _fro(x):
    return _vector_norm(x.reshape(-1))


# -- the backward of a symmetric eigen-decomposition --------------------------------------------------------
def _backward_complete(D_grad, U_grad, A, D, U):
    F = D.unsqueeze(-2) - D.unsqueeze(-1)
    F.diagonal(dim1=-2, dim2=-1).fill_(float("inf"))
    F.pow_(-1)
    Ut = U.mT.contiguous()
    return U.matmul((D_grad.diag_embed() + Ut.matmul(U_grad) * F).matmul(Ut))


def _poly_from_roots(roots):
    """The coefficients (lowest power first) of prod_i (x - roots_i), batched over leading dims."""
    order = roots.shape[-1]
    shape = list(roots.shape)
    shape[-1] += 2
    c = roots.new_zeros(shape)
    c[..., 0] = 1
    c[..., -1] = 1
    for i in range(1, order + 1):
        new = c.clone() if roots.requires_grad else c
        out = new.narrow(-1, order - i, i + 1)
        out -= roots.narrow(-1, i - 1, 1) * c.narrow(-1, order - i + 1, i + 1)
        c = new
    return c.narrow(-1, 1, order + 1)


def _poly_value(poly, x, zero_power, step):
    res = zero_power.clone()
    for k in range(poly.size(-1) - 2, -1, -1):
        res = step(res, x, poly[..., k])
    return res


def _matrix_poly(poly, x):
    def step(cur, x, coeff):
        res = x.matmul(cur)
        res.diagonal(dim1=-2, dim2=-1).add_(coeff.unsqueeze(-1))
        return res
    eye = _c.eye(x.size(-1), x.size(-1), dtype=x.dtype, device=x.device)
    return _poly_value(poly, x, eye.view(*[1] * (x.ndim - 2), x.size(-1), x.size(-1)), step)


def _vector_poly(poly, x):
    return _poly_value(poly, x, x.new_ones(1).expand(x.shape),
                       lambda cur, x, coeff: coeff.unsqueeze(-1).addcmul(x, cur))


def _backward_partial(D_grad, U_grad, A, D, U, largest):
    Ut = U.mT.contiguous()
    proj = -U.matmul(Ut)
    proj.diagonal(dim1=-2, dim2=-1).add_(1)
    gen = _random.Generator(A.device)
    U_ortho = proj.matmul(_random.randn((*A.shape[:-1], A.size(-1) - D.size(-1)), dtype=A.dtype, device=A.device,
                                        generator=gen))
    U_ortho_t = U_ortho.mT.contiguous()
    chr_poly = _poly_from_roots(D)
    U_grad_proj = U_grad
    series = U_grad_proj.new_zeros(U_grad_proj.shape)
    for k in range(1, chr_poly.size(-1)):
        series += U_grad_proj * _vector_poly(chr_poly[..., k:], D).unsqueeze(-2)
        U_grad_proj = A.matmul(U_grad_proj)
    at_ortho = U_ortho_t.matmul(_matrix_poly(chr_poly, A).matmul(U_ortho))
    sign = -1 if largest and k % 2 == 1 else +1
    L = _cholesky(sign * at_ortho)
    res = _backward_complete(D_grad, U_grad, A, D, U)
    res -= U_ortho.matmul(sign * _lchol.cholesky_solve(U_ortho_t.matmul(series), L)).matmul(Ut)
    return res


class LOBPCGAutogradFunction(Function):
    @staticmethod
    def forward(ctx, A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
                tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
        A = A if A.is_sparse else A.contiguous()
        if B is not None:
            B = B if B.is_sparse else B.contiguous()
        D, U = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
                       ortho_bparams)
        ctx.save_for_backward(A, B, D, U)
        ctx.largest = largest
        return D, U

    @staticmethod
    def backward(ctx, D_grad, U_grad):
        A, B, D, U = ctx.saved_tensors
        if A.is_sparse or (B is not None and B.is_sparse and ctx.needs_input_grad[2]):
            raise ValueError("lobpcg.backward does not support sparse input yet. Note that lobpcg.forward does though.")
        if A.dtype.is_complex or (B is not None and B.dtype.is_complex):
            raise ValueError("lobpcg.backward does not support complex input yet. Note that lobpcg.forward does though.")
        if B is not None:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        largest = True if ctx.largest is None else ctx.largest
        if U.size(-1) == U.size(-2):
            A_grad = _backward_complete(D_grad, U_grad, A, D, U)
        else:
            A_grad = _backward_partial(D_grad, U_grad, A, D, U, largest)
        return (A_grad,) + (None,) * 13


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None, tracker=None,
           ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """(E, X): the k eigenvalues of largest (default) or smallest value of A x = lambda B x, and their vectors."""
    if A.requires_grad or (B is not None and B.requires_grad):
        A_sym = (A + A.mT) / 2
        B_sym = (B + B.mT) / 2 if B is not None else None
        return LOBPCGAutogradFunction.apply(A_sym, k, B_sym, X, n, iK, niter, tol, largest, method, tracker,
                                            ortho_iparams, ortho_fparams, ortho_bparams)
    return _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
                   ortho_bparams)


def _params(m, n, k, niter, tol, largest, method, oi, of, ob):
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        iparams.update(oi or {})
        fparams.update(of or {})
        bparams.update(ob or {})
        iparams.setdefault("ortho_i_max", 3)
        iparams.setdefault("ortho_j_max", 3)
        for key in ("ortho_tol", "ortho_tol_drop", "ortho_tol_replace"):
            fparams.setdefault(key, tol)
        bparams.setdefault("ortho_use_drop", False)
    return iparams, fparams, bparams


def _lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
            tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = A.dtype if A.dtype in (_dtype.float16, _dtype.float32, _dtype.float64) else _dtype.float32
    device = A.device
    if tol is None:
        tol = {_dtype.float32: 1.2e-07, _dtype.float64: 2.23e-16}[dtype] ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x "
                         f"the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    iparams, fparams, bparams = _params(m, n, k, niter, tol, largest, method, ortho_iparams, ortho_fparams,
                                        ortho_bparams)

    def solve(A_, B_, X_):
        if X_ is None:
            X_ = _random.randn((m, n), dtype=dtype, device=device)
        if not (len(X_.shape) == 2 and X_.shape == (m, n)):
            raise AssertionError(f"X shape mismatch: got {X_.shape}, expected {(m, n)}")
        worker = LOBPCG(A_, B_, X_, iK, iparams, fparams, bparams, method, tracker)
        worker.run()
        return worker.E[:k], worker.X[:, :k]
    if len(A.shape) <= 2:
        return solve(A, B, X)
    N = 1
    for s in A.shape[:-2]:
        N *= s
    bA = A.reshape((N,) + A.shape[-2:])
    bB = B.reshape((N,) + A.shape[-2:]) if B is not None else None
    bX = X.reshape((N,) + X.shape[-2:]) if X is not None else None
    bE = _c.empty((N, k), dtype=dtype, device=device)
    bXret = _c.empty((N, m, k), dtype=dtype, device=device)
    for i in range(N):
        iparams["batch_index"] = i
        E_, X_ = solve(bA[i], bB[i] if bB is not None else None, bX[i] if bX is not None else None)
        bE[i] = E_
        bXret[i] = X_
    return bE.reshape(A.shape[:-2] + (k,)), bXret.reshape(A.shape[:-2] + (m, k))


class LOBPCG:
    """The worker: the block X (m, n), its Ritz values E, residual R and search basis S (m, 3n), and the
    state torch keeps (ivars: istep, converged_count / _end, iterations_left; fvars: the norms and the
    orthogonalisation's relative errors; tvars: rerr); a tracker, when given, is called as tracker(self)."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method, self.tracker = method, tracker
        m, n = iparams["m"], iparams["n"]
        self.X = X
        self.E = _c.zeros((n,), dtype=X.dtype, device=X.device)
        self.R = _c.zeros((m, n), dtype=X.dtype, device=X.device)
        self.S = _c.zeros((m, 3 * n), dtype=X.dtype, device=X.device)
        self.tvars = {}
        self.ivars = {"istep": 0}
        self.fvars = {"_": 0.0}
        self.bvars = {"_": False}

    def __str__(self):
        lines = ["LOBPCG:"] + [f"  {name}={getattr(self, name)}" for name in
                               ("iparams", "fparams", "bparams", "ivars", "fvars", "bvars", "tvars", "A", "B", "iK",
                                "X", "E")]
        return "".join(line + "\n" for line in lines)

    def update(self):
        if self.ivars["istep"] == 0:
            X_norm = float(_fro(self.X))
            iX_norm = X_norm ** (-1)
            self.fvars["X_norm"] = X_norm
            self.fvars["A_norm"] = float(_fro(_mm(self.A, self.X))) * iX_norm
            self.fvars["B_norm"] = float(_fro(_mm(self.B, self.X))) * iX_norm
            self.ivars["iterations_left"] = self.iparams["niter"]
            self.ivars["converged_count"] = 0
            self.ivars["converged_end"] = 0
        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()
        self.ivars["iterations_left"] = self.ivars["iterations_left"] - 1
        self.ivars["istep"] = self.ivars["istep"] + 1

    def update_residual(self):
        self.R = _mm(self.A, self.X) - _mm(self.B, self.X) * self.E

    def update_converged_count(self):
        prev = self.ivars["converged_count"]
        tol, A_norm, B_norm = self.fparams["tol"], self.fvars["A_norm"], self.fvars["B_norm"]
        E, X, R = self.E, self.X, self.R
        rerr = _vector_norm(R, 2, (0,)) / (_vector_norm(X, 2, (0,)) * (A_norm + E[:X.shape[-1]].abs() * B_norm))
        count = 0
        for b in (rerr < tol):
            if not b:
                break
            count += 1
        if count < prev:
            raise AssertionError(f"the number of converged eigenpairs (was {prev}, got {count}) cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def stop_iteration(self):
        return (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def run(self):
        self.update()
        if self.tracker is not None:
            self.call_tracker()
        while not self.stop_iteration():
            self.update()
            if self.tracker is not None:
                self.call_tracker()

    def call_tracker(self):
        self.tracker(self)

    def _update_basic(self):
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            E, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
            self.X[:] = self.X.matmul(Ri.matmul(Z))
            self.E[:] = E
            np_ = 0
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
            W = _mm(self.iK, self.R)
        else:
            S_ = self.S[:, nc:ns]
            Ri = self._get_rayleigh_ritz_transform(S_)
            E_, Z = _symeig(_qform(_qform(self.A, S_), Ri), largest)
            self.X[:, nc:] = S_.matmul(Ri.matmul(Z[:, :n - nc]))
            self.E[nc:] = E_[:n - nc]
            P = S_.matmul(Ri.matmul(Z[:, n:2 * n - nc]))
            np_ = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
            self.S[:, n:n + np_] = P
            W = _mm(self.iK, self.R[:, nc:])
        self.ivars["converged_end"] = ns = n + np_ + W.shape[-1]
        self.S[:, n + np_:ns] = W

    def _update_ortho(self):
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            _E, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
            self.X = self.X.matmul(Ri.matmul(Z))
            self.update_residual()
            np_ = 0
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            W = self._get_ortho(self.R, self.X)
        else:
            S_ = self.S[:, nc:ns]
            E_, Z = _symeig(_qform(self.A, S_), largest)
            self.X[:, nc:] = S_.matmul(Z[:, :n - nc])
            self.E[nc:] = E_[:n - nc]
            P = S_.matmul(Z[:, n - nc:].matmul(_qr(Z[:n - nc, n - nc:].mT).Q))
            np_ = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self.S[:, n:n + np_] = P
            W = self._get_ortho(self.R[:, nc:], self.S[:, :n + np_])
        ns = self.ivars["converged_end"] = n + np_ + W.shape[-1]
        self.S[:, n + np_:ns] = W

    def _get_rayleigh_ritz_transform(self, S):
        SBS = _qform(self.B, S)
        d_row = SBS.diagonal(0, -2, -1) ** (-0.5)
        d_col = d_row.reshape(d_row.shape[0], 1)
        R = _cholesky(SBS * d_row * d_col, upper=True)
        return _solve_triangular(R, d_row.diag_embed(), upper=True, left=False)

    def _get_svqb(self, U, drop, tau):
        if U.numel() == 0:
            return U
        UBU = _qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        nz = (d.abs() != 0.0).nonzero(as_tuple=True)
        if len(nz[0]) < len(d):
            U = U[:, nz[0]]
            if U.numel() == 0:
                return U
            UBU = _qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
        d_col = (d ** (-0.5)).reshape(d.shape[0], 1)
        E, Z = _symeig(UBU * d_col * d_col.mT)
        t = tau * E.abs().max()
        if drop:
            keep = (E > t).nonzero(as_tuple=True)[0]
            E, Z, d_col = E[keep], Z[:, keep], d_col[keep]
        else:
            E[(E < t).nonzero(as_tuple=True)[0]] = t
        return (U * d_col.mT).matmul(Z * E ** (-0.5))

    def _get_ortho(self, U, V):
        """U made B-orthonormal and B-orthogonal to V (Stathopoulos and Wu's SVQB rounds), torch's stopping."""
        m, tau_ortho = self.iparams["m"], self.fparams["ortho_tol"]
        tau_drop, tau_replace = self.fparams["ortho_tol_drop"], self.fparams["ortho_tol_replace"]
        i_max, j_max, use_drop = self.iparams["ortho_i_max"], self.iparams["ortho_j_max"], self.bparams["ortho_use_drop"]
        for key in [k for k in self.fvars if k.startswith("ortho_") and k.endswith("_rerr")]:
            self.fvars.pop(key)
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)
        BV_norm = _fro(_mm(self.B, V))
        VBU = V.mT.matmul(_mm(self.B, U))
        i = j = 0
        for i in range(i_max):
            U = U - V.matmul(VBU)
            drop, tau_svqb = False, tau_drop
            for j in range(j_max):
                if use_drop:
                    U = self._get_svqb(U, drop, tau_svqb)
                    drop, tau_svqb = True, tau_replace
                else:
                    U = self._get_svqb(U, False, tau_replace)
                if U.numel() == 0:
                    self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
                    return U
                BU = _mm(self.B, U)
                UBU = U.mT.matmul(BU)
                U_norm, BU_norm = _fro(U), _fro(BU)
                R_norm = _fro(UBU - _c.eye(UBU.shape[-1], device=UBU.device, dtype=UBU.dtype))
                rerr = float(R_norm) * float(BU_norm * U_norm) ** (-1)
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
                if rerr < tau_ortho:
                    break
            VBU = V.mT.matmul(BU)
            rerr = float(_fro(VBU)) * float(BV_norm * _fro(U)) ** (-1)
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tau_ortho:
                break
            if m < U.shape[-1] + V.shape[-1]:
                if self.B is None:
                    raise AssertionError("B must not be None")
                raise ValueError(f"Overdetermined shape of U: #B-cols(={self.B.shape[-1]}) >= #U-cols(={U.shape[-1]}) "
                                 f"+ #V-cols(={V.shape[-1]}) must hold")
        self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
        return U
