"""Op table rows: torch's top-level spellings of torch.linalg (ops/linalg_legacy.py) and their Tensor methods.

Singular vectors and Q are unique only up to sign: the rows return sign-invariant functions of them, as
linalg_decomp.py's rows do.
"""
import numpy as np

from .core import OpInfo, Sample
from .linalg_decomp import _errs, _ge, _pd, _rect_samples, _sq, _sq_samples, _square_errors, I64, NPD, _z


def _svd_old(T, a, some):
    U, S, V = T.svd(a, some=some)
    k = S.shape[-1]
    return S, U[..., :k] @ V[..., :k].mT, V[..., :k].abs()


def _qr_old(T, a, some):
    Q, R = T.qr(a, some)
    return Q @ R, R.abs()


def _mpow_samples(rng, dt):
    return [Sample(_sq(rng, (3, 3), dt) / 3), Sample(_sq(rng, (2, 2, 2), dt) / 2)]


OPS = [
    OpInfo("det", lambda T, a: T.det(a), _sq_samples(), errors=_errs(*_square_errors("linalg.det"))),
    OpInfo("Tensor.det", lambda T, a: a.det(), _sq_samples(((3, 3), (2, 3, 3)), nc=False)),
    OpInfo("logdet", lambda T, a: T.logdet(a),
           lambda rng, dt: [Sample(_pd(rng, (3, 3), dt), name="pd"), Sample(_pd(rng, (2, 3, 3), dt), name="batch"),
                            Sample(-_sq(rng, (3, 3), dt), name="neg")],
           gradcheck=False, gradgrad=False, errors=_errs(*_square_errors("logdet"))),
    OpInfo("logdet_pd", lambda T, a: a.logdet(), lambda rng, dt: [Sample(_pd(rng, (3, 3), dt))]),
    OpInfo("slogdet", lambda T, a: T.slogdet(a),
           lambda rng, dt: [Sample(_sq(rng, (3, 3), dt), name="pos"), Sample(-_sq(rng, (3, 3), dt), name="neg")],
           errors=_errs(*_square_errors("linalg.slogdet"))),
    OpInfo("Tensor.slogdet", lambda T, a: a.slogdet(), lambda rng, dt: [Sample(_sq(rng, (2, 3, 3), dt))]),
    OpInfo("inverse", lambda T, a: T.inverse(a), _sq_samples(), errors=_errs(*_square_errors("linalg.inv"))),
    OpInfo("Tensor.inverse", lambda T, a: a.inverse(), _sq_samples(((3, 3),), nc=False)),
    OpInfo("pinverse", lambda T, a: T.pinverse(a), _rect_samples()),
    OpInfo("Tensor.pinverse", lambda T, a: a.pinverse(1e-10), _rect_samples(((4, 3),))),
    OpInfo("svd", lambda T, a: _svd_old(T, a, True), _rect_samples(),
           errors=_errs(((_z((3,)),), RuntimeError, "linalg.svd: input should have at least 2 dimensions, but has 1 "
                                                 "dimensions instead"),
                        ((I64,), RuntimeError, "linalg.svd: Expected a floating point or complex tensor as input."))),
    OpInfo("svd_some_false", lambda T, a: _svd_old(T, a, False), _rect_samples()),
    OpInfo("svd_no_uv", lambda T, a: T.svd(a, compute_uv=False)[1], _rect_samples(((3, 3), (4, 3), (2, 2, 5)))),
    OpInfo("svd_no_uv_zeros", lambda T, a: T.svd(a.detach(), compute_uv=False), _rect_samples(((4, 3), (2, 2, 5))),
           differentiable=False),
    OpInfo("Tensor.svd", lambda T, a: _svd_old(T, a, True)[0], _rect_samples(((4, 3),))),
    OpInfo("qr", lambda T, a: _qr_old(T, a, True), _rect_samples(),
           errors=_errs(((_z((3,)),), RuntimeError, "linalg.qr: The input tensor A must have at least 2 dimensions."))),
    OpInfo("qr_some_false", lambda T, a: _qr_old(T, a, False), _rect_samples(((3, 3), (3, 5)))),
    OpInfo("Tensor.qr", lambda T, a: a.qr()[1].abs(), _rect_samples(((4, 3),))),
    OpInfo("matrix_exp", lambda T, a: T.matrix_exp(a), lambda rng, dt: [Sample(_ge(rng, (3, 3), dt))],
           errors=_errs(*_square_errors("linalg.matrix_exp")[:1])),
    OpInfo("Tensor.matrix_exp", lambda T, a: a.matrix_exp(), lambda rng, dt: [Sample(_ge(rng, (2, 3, 3), dt))]),
    OpInfo("matrix_power", lambda T, a: T.matrix_power(a, 3), _mpow_samples),
    OpInfo("Tensor.matrix_power", lambda T, a: a.matrix_power(-2), _mpow_samples),
]


def _lower(rng, shape, dt):
    """A well-conditioned lower-triangular factor (batch): tril(random) + n I."""
    return np.tril(_sq(rng, shape, dt))


def _chol_solve_samples(rng, dt):
    return [Sample(_ge(rng, (3, 2), dt), _lower(rng, (3, 3), dt), name="lower"),
            Sample(_ge(rng, (3, 2), dt), np.swapaxes(_lower(rng, (3, 3), dt), -1, -2), upper=True, name="upper"),
            Sample(_ge(rng, (2, 3, 1), dt), _lower(rng, (3, 3), dt), name="broadcast_L"),
            Sample(_ge(rng, (3, 4), dt), _lower(rng, (2, 3, 3), dt), name="broadcast_B")]


def _tri_solve_samples(rng, dt):
    out = []
    for upper in (True, False):
        for transpose in (False, True):
            for unit in (False, True):
                out.append(Sample(_ge(rng, (2, 3, 2), dt), _sq(rng, (3, 3), dt), upper=upper, transpose=transpose,
                                  unitriangular=unit, name=f"u{int(upper)}t{int(transpose)}d{int(unit)}"))
    return out


def _tri(L, k):
    """The triangle that LAPACK reads (so that finite differences see the function the gradient describes)."""
    return L.triu() if k.get("upper") else L.tril()


def _lu_solve_old(T, b, a):
    LU, piv = T.linalg.lu_factor(a)
    return T.lu_solve(b, LU, piv)


OPS += [
    OpInfo("cholesky", lambda T, a, **k: T.cholesky(a + a.mT, **k), _sq_samples(((3, 3), (2, 4, 4)), make=_pd)),
    OpInfo("cholesky_errors", lambda T, a: T.cholesky(a), lambda rng, dt: [],
           errors=_errs(((_z((2, 3)),), RuntimeError, "cholesky: A must be batches of square matrices, but they are 2 "
                                                     "by 3 matrices"),
                        ((_z((3,)),), RuntimeError, "cholesky: The input tensor A must have at least 2 dimensions."),
                        ((I64,), NotImplementedError, "\"cholesky_cpu\" not implemented for 'Long'"),
                        ((NPD / 2,), RuntimeError, "cholesky: The factorization could not be completed because the "
                                                   "input is not positive-definite (the leading minor of order 2"))),
    OpInfo("cholesky_upper", lambda T, a: T.cholesky(a + a.mT, upper=True), _sq_samples(((3, 3),), make=_pd)),
    OpInfo("Tensor.cholesky", lambda T, a: (a + a.mT).cholesky(True), _sq_samples(((2, 3, 3),), make=_pd, nc=False)),
    OpInfo("cholesky_solve", lambda T, b, L, **k: T.cholesky_solve(b, _tri(L, k), **k), _chol_solve_samples,
           errors=_errs(((np.ones((3, 2)), np.eye(2)), RuntimeError, "Incompatible matrix sizes for cholesky_solve: "
                                                                     "each A matrix is 2 by 2 but each b matrix is 3 by 2"),
                        ((I64, I64), NotImplementedError, "\"cholesky_solve_cpu\" not implemented for 'Long'"))),
    OpInfo("Tensor.cholesky_solve", lambda T, b, L, **k: b.cholesky_solve(_tri(L, k), **k), _chol_solve_samples),
    OpInfo("cholesky_inverse", lambda T, L, **k: T.cholesky_inverse(_tri(L, k), **k),
           lambda rng, dt: [Sample(_lower(rng, (3, 3), dt), name="lower"),
                            Sample(np.swapaxes(_lower(rng, (2, 3, 3), dt), -1, -2), upper=True, name="upper")]),
    OpInfo("cholesky_inverse_errors", lambda T, L: T.cholesky_inverse(L), lambda rng, dt: [],
           errors=_errs(((_z((2, 3)),), RuntimeError, "cholesky_inverse: A must be batches of square matrices, but "
                                                     "they are 2 by 3 matrices"),
                        ((_z((3,)),), RuntimeError, "cholesky_inverse: The input tensor A must have at least 2 "
                                                    "dimensions."))),
    OpInfo("Tensor.cholesky_inverse", lambda T, L: L.tril().cholesky_inverse(),
           lambda rng, dt: [Sample(_lower(rng, (3, 3), dt))]),
    OpInfo("triangular_solve", lambda T, b, a, **k: T.triangular_solve(b, a, **k), _tri_solve_samples,
           errors=_errs(((np.ones((3, 2)), np.eye(2)), RuntimeError, "Incompatible matrix sizes for triangular_solve: "
                                                                     "each A matrix is 2 by 2 but each b matrix is 3 by 2"))),
    OpInfo("Tensor.triangular_solve", lambda T, b, a: b.triangular_solve(a, False).solution,
           lambda rng, dt: [Sample(_ge(rng, (3, 2), dt), _sq(rng, (3, 3), dt))]),
    OpInfo("lu_solve", _lu_solve_old, lambda rng, dt: [Sample(_ge(rng, (3, 2), dt), _sq(rng, (3, 3), dt)),
                                                        Sample(_ge(rng, (2, 3, 1), dt), _sq(rng, (2, 3, 3), dt))]),
    OpInfo("Tensor.lu_solve", lambda T, b, a: b.lu_solve(*T.linalg.lu_factor(a)),
           lambda rng, dt: [Sample(_ge(rng, (3, 2), dt), _sq(rng, (3, 3), dt))]),
]


def _ge_tau(rng, dt):
    return [Sample(_ge(rng, (4, 3), dt), _ge(rng, (2,), dt)), Sample(_ge(rng, (2, 3, 3), dt), _ge(rng, (2, 3), dt))]


OPS += [
    OpInfo("lu", lambda T, a: T.lu(a)[0], _sq_samples(((3, 3), (2, 4, 4)), nc=False)),
    OpInfo("Tensor.lu", lambda T, a: a.lu(get_infos=True), _sq_samples(((3, 3),), nc=False), gradcheck=False,
           gradgrad=False),
    OpInfo("orgqr", lambda T, h, t: T.orgqr(h, t), _ge_tau),
    OpInfo("Tensor.orgqr", lambda T, h, t: h.orgqr(t), _ge_tau),
]


def _cross_samples(rng, dt):
    return [Sample(_ge(rng, (2, 3, 4), dt), _ge(rng, (2, 3, 4), dt), name="first_3"),
            Sample(_ge(rng, (1, 3), dt), _ge(rng, (4, 3), dt), name="bcast"),
            Sample(_ge(rng, (3, 3), dt), _ge(rng, (3, 3), dt), dim=1, name="dim1")]


OPS += [
    OpInfo("cross", lambda T, a, b, **k: T.cross(a, b, **k), _cross_samples,
           errors=_errs(((np.ones((2, 2)), np.ones((2, 2))), RuntimeError, "no dimension of size 3 in input"))),
    OpInfo("Tensor.cross", lambda T, a, b, **k: a.cross(b, **k), _cross_samples),
]
