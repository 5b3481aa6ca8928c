"""Op table rows: torch's top-level spellings of torch.linalg (ops/linalg_legacy.py) and their Tensor methods.

Singular vectors and Q are unique only up to sign: the rows return sign-invariant functions of them, as
linalg_decomp.py's rows do.
"""
from .core import OpInfo, Sample
from .linalg_decomp import _errs, _ge, _pd, _rect_samples, _sq, _sq_samples, _square_errors, I64, _z


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
