"""Op table rows: torch.linalg (ops/linalg_solve.py, ops/linalg_decomp.py, ops/linalg_norm.py).

Inputs are well conditioned (random + n I, or A A^T + n I where positive definiteness is needed).  Where the
result is unique only up to sign (eigenvectors, singular vectors), the row's op returns a sign-invariant
function of it (|V|, U Vh), as PyTorch's own OpInfos do with output_process_fn_grad.  Functions that read one
triangle of their input (eigh, cholesky) get a symmetrised input (a + a^T), so that finite differences see
the same function as the analytic gradient.
"""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, NoGrad, noncontig

F64 = np.float64


def _sq(rng, shape, dt):
    """A well-conditioned square matrix (batch): random + n I."""
    n = shape[-1]
    return (rng.uniform(-1, 1, shape) + n * np.eye(n)).astype(dt)


def _pd(rng, shape, dt):
    """A symmetric positive-definite matrix (batch): a a^T + n I."""
    n = shape[-1]
    a = rng.uniform(-1, 1, shape)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dt)


def _ge(rng, shape, dt):
    return rng.uniform(-1, 1, shape).astype(dt)


def _sq_samples(shapes=((3, 3), (2, 3, 3), (1, 1), (2, 1, 4, 4)), make=_sq, nc=True):
    def gen(rng, dt):
        out = [Sample(make(rng, s, dt), name=str(s)) for s in shapes]
        if nc:
            out.append(Sample(noncontig(make(rng, (3, 3), dt)), name="noncontig"))
        return out
    return gen


def _z(shape, dt=F64):
    return np.zeros(shape, dt)


def _errs(*rows):
    return lambda: [ErrorSample(Sample(*args), err, msg) for args, err, msg in rows]


SING = np.array([[1.0, 2.0], [2.0, 4.0]])
SING_B = np.stack([np.eye(2), SING])
NPD = np.array([[1.0, 2.0], [2.0, 1.0]])
I64 = np.ones((2, 2), np.int64)


def _square_errors(fname):
    return [((_z((2, 3)),), RuntimeError, f"{fname}: A must be batches of square matrices, but they are 2 by 3"),
            ((_z((3,)),), RuntimeError, f"{fname}: The input tensor A must have at least 2 dimensions."),
            ((I64,), RuntimeError, f"{fname}: Expected a floating point or complex tensor as input. Got Long")]


def _solve_samples(rng, dt):
    return [Sample(_sq(rng, (3, 3), dt), _ge(rng, (3, 2), dt), name="matrix"),
            Sample(_sq(rng, (3, 3), dt), _ge(rng, (3,), dt), name="vector"),
            Sample(_sq(rng, (2, 3, 3), dt), _ge(rng, (2, 3), dt), name="batched_vector"),
            Sample(_sq(rng, (2, 3, 3), dt), _ge(rng, (3, 4), dt), name="broadcast_B"),
            Sample(_sq(rng, (3, 3), dt), _ge(rng, (2, 3, 2), dt), name="broadcast_A"),
            Sample(_sq(rng, (3, 3), dt), _ge(rng, (2, 3), dt), left=False, name="right"),
            Sample(_sq(rng, (3, 3), dt), NoGrad(_ge(rng, (3, 2), dt)), name="B_nograd")]


def _tri_samples(rng, dt):
    out = []
    for upper in (True, False):
        for left in (True, False):
            for unit in (False, True):
                b = _ge(rng, (2, 3, 2) if left else (2, 2, 3), dt)
                out.append(Sample(_sq(rng, (3, 3), dt), b, upper=upper, left=left, unitriangular=unit,
                                  name=f"u{int(upper)}l{int(left)}t{int(unit)}"))
    return out


def _rect_samples(shapes=((3, 3), (4, 3), (3, 4), (2, 4, 2), (2, 2, 5))):
    def gen(rng, dt):
        return [Sample(_ge(rng, s, dt), name=str(s)) for s in shapes]
    return gen


def _svd_inv(T, a, full):
    U, S, Vh = T.linalg.svd(a, full_matrices=full)
    k = S.shape[-1]
    return S, U[..., :k] @ Vh[..., :k, :], U[..., :k].abs()


def _eigh_inv(T, a, uplo):
    L, V = T.linalg.eigh(a + a.mT, UPLO=uplo)
    return L, V.abs()


def _chol(T, a, upper=False):
    return T.linalg.cholesky(a + a.mT, upper=upper)


OPS = [
    OpInfo("linalg.inv", lambda T, a: T.linalg.inv(a), _sq_samples(),
           errors=_errs(*_square_errors("linalg.inv"),
                        ((SING,), RuntimeError, "linalg.inv: The diagonal element 2 is zero, the inversion could not "
                                                "be completed because the input matrix is singular."),
                        ((SING_B,), RuntimeError, "linalg.inv: (Batch element 1): The diagonal element 2 is zero"))),
    OpInfo("linalg.inv_ex", lambda T, a: T.linalg.inv_ex(a), _sq_samples(((3, 3), (2, 3, 3)), nc=False)),
    OpInfo("linalg.det", lambda T, a: T.linalg.det(a), _sq_samples(),
           errors=_errs(*_square_errors("linalg.det"))),
    OpInfo("linalg.det_singular", lambda T, a: T.linalg.det(a),
           lambda rng, dt: [Sample(SING.astype(dt), name="rank1"),
                            Sample(np.array([[1.0, 2, 3], [0, 0, 0], [4, 5, 7]], dt), name="zero_row")],
           dtypes=("float64",), gradcheck=False),
    # rank 1 of 3: two singular values at rounding level; the second derivative goes through the SVD's
    # 1/(s_i^2 - s_j^2) and is nan or finite depending on the vector unit NumPy's LAPACK runs on (AVX2: nan)
    OpInfo("linalg.det_singular_rank1of3", lambda T, a: T.linalg.det(a),
           lambda rng, dt: [Sample(np.ones((3, 3), dt), name="rank1of3")],
           dtypes=("float64",), gradcheck=False, gradgrad=False),
    OpInfo("linalg.slogdet", lambda T, a: T.linalg.slogdet(a),
           lambda rng, dt: [Sample(_sq(rng, (3, 3), dt), name="pos"), Sample(-_sq(rng, (3, 3), dt), name="neg"),
                            Sample(_sq(rng, (2, 2, 2), dt), name="batch")],
           errors=_errs(*_square_errors("linalg.slogdet"))),
    OpInfo("linalg.solve", lambda T, a, b, **k: T.linalg.solve(a, b, **k), _solve_samples,
           errors=_errs(((_z((2, 3)), _z((2, 1))), RuntimeError, "linalg.solve: A must be batches of square"),
                        ((I64, I64), RuntimeError, "linalg.solve: Expected a floating point or complex tensor"),
                        ((SING, np.ones((2, 1))), RuntimeError,
                         "torch.linalg.solve: The solver failed because the input matrix is singular."),
                        ((SING_B, np.ones((2, 2, 1))), RuntimeError, "torch.linalg.solve: (Batch element 1): The "
                                                                     "solver failed"),
                        ((np.eye(2), np.ones((3, 1))), RuntimeError,
                         "linalg.solve: Incompatible shapes of A and B for the equation AX = B (2x2 and 3x1)"),
                        ((np.eye(2), np.ones((2, 1), np.float32)), RuntimeError,
                         "linalg.solve: Expected A and B to have the same dtype, but found A of type Double and B "
                         "of type Float instead"))),
    OpInfo("linalg.solve_ex", lambda T, a, b: T.linalg.solve_ex(a, b),
           lambda rng, dt: [Sample(_sq(rng, (2, 3, 3), dt), _ge(rng, (2, 3, 2), dt))]),
    OpInfo("linalg.solve_triangular", lambda T, a, b, **k: T.linalg.solve_triangular(a, b, **k), _tri_samples),
    OpInfo("linalg.solve_triangular_errors", lambda T, a, b: T.linalg.solve_triangular(a, b, upper=True),
           lambda rng, dt: [],
           errors=_errs(((_z((2, 3)), _z((2, 1))), RuntimeError, "linalg.solve_triangular: A must be batches"),
                        ((I64, I64), NotImplementedError, "\"triangular_solve_cpu\" not implemented for 'Long'"))),
    OpInfo("linalg.cholesky", _chol, _sq_samples(make=_pd)),
    OpInfo("linalg.cholesky_raw", lambda T, a: T.linalg.cholesky(a), lambda rng, dt: [Sample(_pd(rng, (3, 3), dt))],
           gradcheck=False,
           errors=_errs(*_square_errors("linalg.cholesky"),
                        ((NPD,), RuntimeError, "linalg.cholesky: The factorization could not be completed because "
                                               "the input is not positive-definite (the leading minor of order 2 is "
                                               "not positive-definite)."),
                        ((np.stack([np.eye(2), NPD]),), RuntimeError, "linalg.cholesky: (Batch element 1): The "
                                                                      "factorization"))),
    OpInfo("linalg.cholesky_upper", lambda T, a: _chol(T, a, True), _sq_samples(((3, 3), (2, 4, 4)), make=_pd,
                                                                                nc=False)),
    OpInfo("linalg.cholesky_ex", lambda T, a: T.linalg.cholesky_ex(a + a.mT),
           _sq_samples(((3, 3), (2, 2, 2)), make=_pd, nc=False)),
    OpInfo("linalg.cholesky_ex_npd", lambda T, a: T.linalg.cholesky_ex(a)[1],
           lambda rng, dt: [Sample(NoGrad(NPD.astype(dt)))], differentiable=False, outputs_int=True),
    OpInfo("linalg.eigh", lambda T, a: _eigh_inv(T, a, "L"), _sq_samples(((3, 3), (2, 4, 4), (1, 1)))),
    OpInfo("linalg.eigh_errors", lambda T, a, *u: T.linalg.eigh(a, *u), lambda rng, dt: [],
           errors=_errs(((np.eye(2), "X"), RuntimeError, "Expected UPLO argument to be 'L' or 'U', but got X"),((_z((2, 3)),), RuntimeError, "linalg.eigh: A must be batches of square matrices"),
                        ((I64,), NotImplementedError, "\"linalg_eigh_cpu\" not implemented for 'Long'"))),
    OpInfo("linalg.eigh_U", lambda T, a: _eigh_inv(T, a, "U"), _sq_samples(((3, 3),), nc=False)),
    OpInfo("linalg.eigvalsh", lambda T, a: T.linalg.eigvalsh(a + a.mT), _sq_samples(((3, 3), (2, 4, 4)))),
    OpInfo("linalg.svd", lambda T, a: _svd_inv(T, a, False), _rect_samples(),
           errors=_errs(((_z((3,)),), RuntimeError, "linalg.svd: The input tensor A must have at least 2 dimensions."),
                        ((I64,), RuntimeError, "linalg.svd: Expected a floating point or complex tensor as input."))),
    OpInfo("linalg.svd_full", lambda T, a: _svd_inv(T, a, True), _rect_samples()),
    OpInfo("linalg.svdvals", lambda T, a: T.linalg.svdvals(a), _rect_samples()),
    OpInfo("linalg.qr", lambda T, a, *m: T.linalg.qr(a, *m), _rect_samples(),
           errors=_errs(((_z((3,)),), RuntimeError, "linalg.qr: The input tensor A must have at least 2 dimensions."),
                        ((np.eye(2), "x"), RuntimeError, "qr received unrecognized mode 'x' but expected one of"))),
    OpInfo("linalg.qr_complete", lambda T, a: T.linalg.qr(a, mode="complete"), _rect_samples(((3, 3), (3, 5)))),
    OpInfo("linalg.qr_r", lambda T, a: T.linalg.qr(a, mode="r")[1], _rect_samples(((3, 3), (4, 3))),
           differentiable=False),
    OpInfo("linalg.pinv", lambda T, a: T.linalg.pinv(a), _rect_samples(),
           errors=_errs(((I64,), RuntimeError, "linalg.pinv(Long{[2, 2]}): expected a tensor with 2 or more "
                                               "dimensions of float, double, cfloat or cdouble types"))),
    OpInfo("linalg.matrix_exp", lambda T, a: T.linalg.matrix_exp(a),
           lambda rng, dt: [Sample(_ge(rng, (3, 3), dt), name="small"), Sample(3 * _ge(rng, (2, 3, 3), dt),
                                                                               name="scaled")],
           errors=_errs(*_square_errors("linalg.matrix_exp")[:1])),
    OpInfo("linalg.cross", lambda T, a, b: T.linalg.cross(a, b),
           lambda rng, dt: [Sample(_ge(rng, (4, 3), dt), _ge(rng, (4, 3), dt)),
                            Sample(_ge(rng, (2, 1, 3), dt), _ge(rng, (1, 4, 3), dt), name="bcast")]),
]


def _norm_rows():
    rows = []
    for o in ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        rows.append(OpInfo(f"linalg.matrix_norm_{o}", lambda T, a, o=o: T.linalg.matrix_norm(a, o),
                           _rect_samples(((3, 4), (2, 3, 3)))))
    rows.append(OpInfo("linalg.matrix_norm_dims", lambda T, a: T.linalg.matrix_norm(a, 1, dim=(0, 2), keepdim=True),
                       _rect_samples(((3, 2, 4),))))
    rows.append(OpInfo("linalg.matrix_norm_errors", lambda T, a, *o: T.linalg.matrix_norm(a, *o), lambda rng, dt: [],
                       errors=_errs(((_z((3,)),), RuntimeError, "linalg.matrix_norm: The input tensor A must have at "
                                                                "least 2 dimensions."),
                                    ((np.eye(2), 3), RuntimeError, "linalg.matrix_norm: Order 3 not supported."),
                                    ((I64,), RuntimeError, "linalg.matrix_norm: Expected a floating point"))))
    for o in (2, 1, 3, 0.5, float("inf")):
        rows.append(OpInfo(f"linalg.vector_norm_{o}", lambda T, a, o=o: T.linalg.vector_norm(a, o, dim=-1),
                           _rect_samples(((3, 4),))))
    rows.append(OpInfo("linalg.vector_norm", lambda T, a: T.linalg.vector_norm(a), _rect_samples(((2, 3, 4),)),
                       errors=_errs(((I64,), RuntimeError, "linalg.vector_norm: Expected a floating point"))))
    rows.append(OpInfo("linalg.norm", lambda T, a: T.linalg.norm(a), _rect_samples(((2, 3, 4), (3,)))))
    rows.append(OpInfo("linalg.norm_ord", lambda T, a: (T.linalg.norm(a, 1), T.linalg.norm(a, "fro"),
                                                         T.linalg.norm(a, dim=(0, 1))), _rect_samples(((3, 4),))))
    return rows


def _power_rows():
    return [OpInfo(f"linalg.matrix_power_{n}", lambda T, a, n=n: T.linalg.matrix_power(a, n),
                   lambda rng, dt: [Sample(_sq(rng, (3, 3), dt) / 3), Sample(_sq(rng, (2, 2, 2), dt) / 2)],
                   gradgrad=n != 0)
            for n in (0, 1, 2, 3, 5, 6, -1, -3)]


OPS += _norm_rows() + _power_rows() + [
    OpInfo("linalg.cond", lambda T, a: T.linalg.cond(a), _sq_samples(((3, 3), (2, 3, 3)), nc=False)),
    OpInfo("linalg.cond_fro", lambda T, a: T.linalg.cond(a, "fro"), _sq_samples(((3, 3),), nc=False),
           differentiable=False),
    OpInfo("linalg.matrix_rank", lambda T, a: T.linalg.matrix_rank(a),
           lambda rng, dt: [Sample(_ge(rng, (3, 4), dt)), Sample(SING.astype(dt)), Sample(SING_B.astype(dt))],
           differentiable=False),
    OpInfo("linalg.matrix_rank_hermitian", lambda T, a: T.linalg.matrix_rank(a, hermitian=True, atol=0.5),
           lambda rng, dt: [Sample(_pd(rng, (2, 3, 3), dt)), Sample(SING.astype(dt))], differentiable=False),
    OpInfo("linalg.multi_dot", lambda T, *ts: T.linalg.multi_dot(list(ts)),
           lambda rng, dt: [Sample(_ge(rng, (2, 3), dt), _ge(rng, (3, 4), dt), name="two"),
                            Sample(_ge(rng, (3,), dt), _ge(rng, (3, 5), dt), _ge(rng, (5, 2), dt),
                                   _ge(rng, (2,), dt), name="vec_ends"),
                            Sample(_ge(rng, (6, 2), dt), _ge(rng, (2, 5), dt), _ge(rng, (5, 1), dt),
                                   _ge(rng, (1, 4), dt), name="chain")],
           errors=_errs(((np.eye(2),), RuntimeError, "multi_dot(): expected at least 2 tensors but got 1"),
                        ((np.eye(2), np.ones((2, 2, 2))), RuntimeError,
                         "multi_dot(): the last tensor must be 1D or 2D but got 3D"))),
    OpInfo("linalg.tensorinv", lambda T, a: T.linalg.tensorinv(a, ind=1),
           lambda rng, dt: [Sample(_sq(rng, (4, 4), dt).reshape(4, 2, 2))], check_grad_fn=False),
    OpInfo("linalg.tensorsolve", lambda T, a, b: T.linalg.tensorsolve(a, b),
           lambda rng, dt: [Sample(_sq(rng, (6, 6), dt).reshape(2, 3, 6), _ge(rng, (2, 3), dt))],
           check_grad_fn=False),
    OpInfo("linalg.vander", lambda T, x, **k: T.linalg.vander(x, **k),
           lambda rng, dt: [Sample(_ge(rng, (4,), dt)), Sample(_ge(rng, (2, 3), dt), N=5, name="N")]),
    OpInfo("linalg.vecdot", lambda T, a, b: T.linalg.vecdot(a, b),
           lambda rng, dt: [Sample(_ge(rng, (3, 4), dt), _ge(rng, (4,), dt))]),
    OpInfo("linalg.diagonal", lambda T, a: T.linalg.diagonal(a, offset=1), _rect_samples(((2, 3, 4),))),
]


def _lu_solve(T, a, b, **k):
    LU, piv = T.linalg.lu_factor(a)
    return T.linalg.lu_solve(LU, piv, b, **k)


def _lu_solve_samples(rng, dt):
    return [Sample(_sq(rng, (3, 3), dt), _ge(rng, (3, 2) if lf else (2, 3), dt), left=lf, adjoint=adj,
                   name=f"l{int(lf)}a{int(adj)}")
            for lf in (True, False) for adj in (True, False)] + \
        [Sample(_sq(rng, (2, 3, 3), dt), _ge(rng, (3, 2), dt), name="broadcast")]


OPS += [
    OpInfo("linalg.lu_factor", lambda T, a, p=True: T.linalg.lu_factor(a, pivot=p), _rect_samples(((3, 3), (4, 3), (3, 4), (2, 3, 3))),
           errors=_errs(((np.eye(2), False), RuntimeError, "linalg.lu_factor: LU without pivoting is not implemented "
                                                           "on the CPU"),
                        ((np.zeros((2, 3, 3)),), RuntimeError,
                         "torch.linalg.lu_factor: (Batch element 0): U[1,1] is zero and using it on lu_solve would "
                         "result in a division by zero."))),
    OpInfo("linalg.lu_factor_ex", lambda T, a: T.linalg.lu_factor_ex(a), _rect_samples(((3, 3), (2, 4, 3)))),
    OpInfo("linalg.lu", lambda T, a: T.linalg.lu(a)[1:], _rect_samples(((3, 3), (4, 3), (3, 4), (2, 3, 3)))),
    OpInfo("linalg.lu_P", lambda T, a: T.linalg.lu(a)[0], _rect_samples(((3, 3), (4, 3), (3, 4))),
           differentiable=False),
    OpInfo("linalg.lu_solve", _lu_solve, _lu_solve_samples),
    OpInfo("linalg.lstsq", lambda T, a, b, **k: T.linalg.lstsq(a, b, **k),
           lambda rng, dt: [Sample(_ge(rng, (5, 3), dt), _ge(rng, (5, 2), dt), name="tall"),
                            Sample(_ge(rng, (2, 5, 3), dt), _ge(rng, (2, 5, 2), dt), driver="gelsd", name="gelsd"),
                            Sample(_ge(rng, (5, 3), dt), _ge(rng, (5, 2), dt), driver="gels", name="gels"),
                            Sample(_ge(rng, (3, 3), dt), _ge(rng, (3,), dt), name="vector")],
           ),
    OpInfo("linalg.householder_product", lambda T, a, t: T.linalg.householder_product(a, t),
           lambda rng, dt: [Sample(_ge(rng, (4, 3), dt), _ge(rng, (2,), dt)),
                            Sample(_ge(rng, (2, 3, 3), dt), _ge(rng, (2, 3), dt), name="batch")],
           errors=_errs(((np.ones((3, 4)), np.ones(2)), RuntimeError, "input.shape[-2] must be greater than or equal "
                                                                      "to input.shape[-1]"),
                        ((np.ones((4, 3)), np.ones(4)), RuntimeError, "input.shape[-1] must be greater than or equal "
                                                                      "to tau.shape[-1]"))),
]


def _sym(rng, shape, dt):
    a = rng.uniform(-1, 1, shape)
    return (a + np.swapaxes(a, -1, -2)).astype(dt)


def _ldl_solve(T, a, b):
    LD, piv = T.linalg.ldl_factor(a)
    return T.linalg.ldl_solve(LD, piv, b)


OPS += [
    OpInfo("linalg.ldl_factor", lambda T, a: T.linalg.ldl_factor(a),
           lambda rng, dt: [Sample(_sym(rng, (4, 4), dt), name="indefinite"), Sample(_pd(rng, (2, 3, 3), dt)),
                            Sample(np.array([[1.0, 2, 3], [2, 1, 4], [3, 4, 0.5]], dt), name="2x2_pivot")],
           differentiable=False,
           errors=_errs(((np.ones((2, 3)),), RuntimeError, "torch.linalg.ldl_factor_ex: A must be batches of square "
                                                           "matrices, but they are 2 by 3 matrices"),
                        ((I64,), RuntimeError, "torch.linalg.ldl_factor_ex: Expected a floating point or complex"))),
    OpInfo("linalg.ldl_factor_ex", lambda T, a: T.linalg.ldl_factor_ex(a),
           lambda rng, dt: [Sample(_sym(rng, (2, 4, 4), dt)), Sample(np.zeros((3, 3), dt), name="zero")],
           differentiable=False),
    OpInfo("linalg.ldl_solve", _ldl_solve,
           lambda rng, dt: [Sample(_sym(rng, (4, 4), dt) + 4 * np.eye(4, dtype=dt), _ge(rng, (4, 2), dt)),
                            Sample(_sym(rng, (2, 3, 3), dt), _ge(rng, (3, 1), dt), name="broadcast")],
           differentiable=False, atol=1e-4, rtol=1e-4),
]


def _empty(rng, dt):
    return [Sample(np.zeros(s, dt), name=str(s)) for s in ((0, 0), (2, 0, 0), (0, 3, 3))]


_EMPTY_OPS = {"inv": lambda T, a: T.linalg.inv(a), "det": lambda T, a: T.linalg.det(a),
              "slogdet": lambda T, a: T.linalg.slogdet(a), "cholesky": lambda T, a: T.linalg.cholesky(a),
              "eigh": lambda T, a: T.linalg.eigh(a), "svd": lambda T, a: T.linalg.svd(a),
              "qr": lambda T, a: T.linalg.qr(a), "pinv": lambda T, a: T.linalg.pinv(a),
              "lu_factor": lambda T, a: T.linalg.lu_factor(a), "lu": lambda T, a: T.linalg.lu(a)[1:],
              "matrix_exp": lambda T, a: T.linalg.matrix_exp(a), "cond": lambda T, a: T.linalg.cond(a),
              "matrix_norm": lambda T, a: T.linalg.matrix_norm(a), "ldl_factor": lambda T, a: T.linalg.ldl_factor(a)}

OPS += [OpInfo(f"linalg.{k}_empty", f, _empty, differentiable=k != "ldl_factor") for k, f in _EMPTY_OPS.items()]
OPS += [
    OpInfo("linalg.matrix_norm_keepdim", lambda T, a: (T.linalg.matrix_norm(a, "nuc", dim=(0, 2), keepdim=True),
                                                        T.linalg.matrix_norm(a, -2, keepdim=True)),
           _rect_samples(((3, 4, 2),))),
    OpInfo("linalg.vander_errors", lambda T, x, **k: T.linalg.vander(x, **k), lambda rng, dt: [],
           errors=_errs(((np.ones(1),), RuntimeError, "N must be greater than 1."))),
]
