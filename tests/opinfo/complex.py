"""Op table rows: complex tensors (ops/complex.py, and the real ops that take complex inputs).

Samples are complex64 / complex128 (real and imaginary parts drawn apart); gradients are PyTorch's conjugate
Wirtinger ones (test_ops.py's finite differences perturb the real and the imaginary part of each element).
Functions with a branch cut (log, sqrt, rsqrt, ...) get samples with a positive real part; those with a kink
at 0 (abs, angle, sgn) samples away from 0.  Mixed rows multiply a complex tensor by a real one.
"""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, arr, noncontig, TList

C = ("complex64", "complex128")
TOL = dict(atol=1e-5, rtol=1e-5, grad_atol=1e-4, grad_rtol=1e-4)


def _real_of(dt):
    return np.float32 if np.dtype(dt) == np.complex64 else np.float64


def _carr(rng, shape, dt, re=(-2.0, 2.0), im=(-2.0, 2.0)):
    return np.asarray(rng.uniform(*re, size=shape) + 1j * rng.uniform(*im, size=shape)).astype(dt)


def _unary(re=(-2.0, 2.0), im=(-2.0, 2.0)):
    def gen(rng, dt):
        def A(shape):
            return _carr(rng, shape, dt, re, im)
        return [Sample(A(()), name="0d"), Sample(A((5,)), name="1d"), Sample(A((3, 4)), name="2d"),
                Sample(A((0, 3)), name="empty"), Sample(noncontig(A((4, 3))), name="noncontig")]
    return gen


def _binary(rng, dt):
    def A(s):
        return _carr(rng, s, dt, (0.5, 2.0), (-1.5, 1.5))
    return [Sample(A((3, 4)), A((3, 4)), name="same"), Sample(A((3, 4)), A((4,)), name="bcast"),
            Sample(A(()), A((3,)), name="0d"), Sample(A((3, 4)), 1.5 - 0.5j, name="complex_scalar"),
            Sample(A((3, 4)), 2.5, name="float_scalar"), Sample(noncontig(A((4, 3))), A((4, 3)), name="noncontig")]


def _mixed(rng, dt):
    """A complex tensor with a real one (either side): the real input's gradient is the real part."""
    r = _real_of(dt)
    return [Sample(_carr(rng, (3, 4), dt), arr(rng, (3, 4), r, 0.5, 2.0), name="complex_real"),
            Sample(arr(rng, (4,), r, 0.5, 2.0), _carr(rng, (3, 4), dt), name="real_complex"),
            Sample(arr(rng, (3, 4), r), 0.5 + 2j, name="real_complex_scalar")]


def _two_real(rng, dt):
    return [Sample(arr(rng, (3, 4), dt, 0.3, 2.0), arr(rng, (3, 4), dt, -3.0, 3.0), name="same"),
            Sample(arr(rng, (4,), dt, 0.5, 2.0), arr(rng, (3, 4), dt, -3.0, 3.0), name="bcast"),
            Sample(arr(rng, (), dt), arr(rng, (), dt), name="0d")]


def _pairs(rng, dt):
    return [Sample(arr(rng, (3, 2), dt), name="2d"), Sample(arr(rng, (2, 3, 2), dt), name="3d")]


def _nonempty(rng, dt):
    """torch's ViewAsRealBackward0 refuses the (0, 3, 2) cotangent NumPy gives for an empty result."""
    return [s for s in _unary()(rng, dt) if s.name != "empty"]


def _same(rng, dt):
    return [s for s in _binary(rng, dt) if s.name == "same"]


def _mat(rng, dt):
    return [Sample(_carr(rng, (3, 4), dt), _carr(rng, (4, 2), dt), name="mm")]


def _bmat(rng, dt):
    return [Sample(_carr(rng, (2, 3, 4), dt), _carr(rng, (2, 4, 2), dt), name="bmm")]


OPS = []
_HOLO = [("exp", None), ("sin", None), ("cos", None), ("tan", (-1.0, 1.0)), ("sinh", None), ("cosh", None),
         ("tanh", (-1.0, 1.0)), ("sigmoid", (-1.0, 1.0)), ("neg", None), ("square", None), ("expm1", None),
         ("exp2", None), ("asin", (-0.8, 0.8)), ("atan", (-0.8, 0.8)), ("asinh", (-0.8, 0.8))]
for _n, _im in _HOLO:
    OPS.append(OpInfo(f"complex.{_n}", (lambda n: lambda T, a: getattr(T, n)(a))(_n),
                      _unary(im=_im or (-2.0, 2.0)), dtypes=C, **TOL))
for _n in ("log", "sqrt", "rsqrt", "reciprocal", "log2", "log10", "log1p", "acosh", "atanh"):   # right half-plane
    OPS.append(OpInfo(f"complex.{_n}", (lambda n: lambda T, a: getattr(T, n)(a))(_n),
                      _unary(re=(0.3, 2.0) if _n != "acosh" else (1.2, 2.0), im=(-1.5, 1.5) if _n != "atanh" else (-0.6, 0.6)),
                      dtypes=C, **TOL))
for _n in ("abs", "angle", "sgn"):           # not holomorphic; kink at 0
    OPS.append(OpInfo(f"complex.{_n}", (lambda n: lambda T, a: getattr(T, n)(a))(_n), _unary(re=(0.3, 2.0)),
                      dtypes=C, **TOL))
OPS += [
    OpInfo("complex.real", lambda T, a: T.real(a), _unary(), dtypes=C, **TOL),
    OpInfo("complex.imag", lambda T, a: T.imag(a), _unary(), dtypes=C, **TOL),
    OpInfo("Tensor.real", lambda T, a: a.real * 2, _unary(), dtypes=C, variant_of="real", **TOL),
    OpInfo("complex.conj", lambda T, a: T.conj(a), _unary(), dtypes=C, **TOL),
    OpInfo("complex.conj_physical", lambda T, a: T.conj_physical(a), _unary(), dtypes=C, **TOL),
    OpInfo("complex.resolve_conj", lambda T, a: a.conj().resolve_conj(), _unary(), dtypes=C, **TOL),
    OpInfo("complex.view_as_real", lambda T, a: T.view_as_real(a), _nonempty, dtypes=C, **TOL,
           errors=lambda: [ErrorSample(Sample(np.ones(3)), RuntimeError, "only supported for complex tensors")]),
    OpInfo("complex.view_as_complex", lambda T, a: T.view_as_complex(a), _pairs, **TOL, errors=lambda: [
        ErrorSample(Sample(np.ones(3)), RuntimeError, "Tensor must have a last dimension of size 2"),
        ErrorSample(Sample(np.ones((2, 2), np.int64)), RuntimeError, "view_as_complex is only supported for half"),
        ErrorSample(Sample(np.ones(())), RuntimeError, "Input tensor must have one or more dimensions")]),
    OpInfo("complex.view_as_real_copy", lambda T, a: T.view_as_real_copy(a), _nonempty, dtypes=C, **TOL,
           errors=lambda: [ErrorSample(Sample(np.ones(3)), RuntimeError, "only supported for complex tensors")]),
    OpInfo("complex.view_as_complex_copy", lambda T, a: T.view_as_complex_copy(a), _pairs, differentiable=False,
           **TOL, errors=lambda: [
               ErrorSample(Sample(np.ones(3)), RuntimeError, "Tensor must have a last dimension of size 2"),
               ErrorSample(Sample(np.ones((2, 2), np.int64)), RuntimeError, "view_as_complex is only supported")]),
    OpInfo("complex.polar", lambda T, a, b: T.polar(a, b), _two_real, **TOL, errors=lambda: [
        ErrorSample(Sample(np.ones(2, np.int64), np.ones(2, np.int64)), RuntimeError,
                    "Expected both inputs to be Half, Float or Double tensors but got Long and Long")]),
    OpInfo("complex.complex", lambda T, a, b: T.complex(a, b), _two_real, **TOL, errors=lambda: [
        ErrorSample(Sample(np.ones(2, np.float32), np.ones(2)), RuntimeError,
                    "Expected object of scalar type Float but got scalar type Double for second argument")]),
    OpInfo("complex.add", lambda T, a, b: T.add(a, b), _binary, dtypes=C, **TOL),
    OpInfo("complex.sub", lambda T, a, b: a - b, _binary, dtypes=C, **TOL),
    OpInfo("complex.mul", lambda T, a, b: a * b, _binary, dtypes=C, **TOL),
    OpInfo("complex.div", lambda T, a, b: a / b, _binary, dtypes=C, **TOL),
    OpInfo("complex.mul_mixed", lambda T, a, b: a * b, _mixed, dtypes=C, **TOL),
    OpInfo("complex.div_mixed", lambda T, a, b: a / b, _mixed, dtypes=C, **TOL),
    OpInfo("complex.pow_scalar", lambda T, a: a ** 3, _unary(), dtypes=C, **TOL),
    OpInfo("complex.pow_complex_scalar", lambda T, a: a ** (0.5 + 1j), _unary(re=(0.3, 2.0)), dtypes=C, **TOL),
    OpInfo("complex.mm", lambda T, a, b: T.mm(a, b), _mat, dtypes=C, **TOL),
    OpInfo("complex.matmul", lambda T, a, b: a @ b, _mat, dtypes=C, **TOL),
    OpInfo("complex.bmm", lambda T, a, b: T.bmm(a, b), _bmat, dtypes=C, **TOL),
    OpInfo("complex.sum", lambda T, a: a.sum(), _unary(), dtypes=C, **TOL),
    OpInfo("complex.sum_dim", lambda T, a: a.sum(-1), _unary(), dtypes=C, **TOL),
    OpInfo("complex.mean", lambda T, a: a.mean(), _unary(), dtypes=C, **TOL),
    OpInfo("complex.prod", lambda T, a: a.prod(), _unary(), dtypes=C, **TOL),
    OpInfo("complex.cat", lambda T, a, b: T.cat(a + b, 0), lambda rng, dt: [Sample(
        TList(_carr(rng, (2, 3), dt), _carr(rng, (1, 3), dt)), TList(_carr(rng, (2, 3), dt)), name="cat")],
        dtypes=C, check_grad_fn=False, **TOL),
    OpInfo("complex.stack_index", lambda T, a, b: T.stack([a, b])[1:, ::2].reshape(-1).t(), _same, dtypes=C,
           **TOL),
    OpInfo("complex.lt", lambda T, a, b: a < b, _binary, dtypes=(), errors=lambda: [
        ErrorSample(Sample(np.ones(2, np.complex64), np.ones(2, np.complex64)), NotImplementedError,
                    '"lt_cpu" not implemented for \'ComplexFloat\'')]),
    OpInfo("complex.eq", lambda T, a, b: a == b, _binary, dtypes=C, differentiable=False),
    OpInfo("complex.isclose", lambda T, a, b: T.isclose(a, b), _same, dtypes=C, differentiable=False),
    OpInfo("complex.isfinite", lambda T, a: T.isfinite(a), _unary(), dtypes=C, differentiable=False),
    OpInfo("complex.max", lambda T, a: a.max(), _unary(), dtypes=(), errors=lambda: [
        ErrorSample(Sample(np.ones(2, np.complex64)), NotImplementedError, '"max_all" not implemented for')]),
    OpInfo("complex.sort", lambda T, a: a.sort(), _unary(), dtypes=(), errors=lambda: [
        ErrorSample(Sample(np.ones(2, np.complex64)), RuntimeError, "Sort does not support complex dtypes on CPU")]),
    OpInfo("complex.argmax", lambda T, a: a.argmax(), _unary(), dtypes=(), errors=lambda: [
        ErrorSample(Sample(np.ones(2, np.complex64)), RuntimeError, "argmax(): does not support complex input")]),
    OpInfo("complex.clamp", lambda T, a: a.clamp(0, 1), _unary(), dtypes=(), errors=lambda: [
        ErrorSample(Sample(np.ones(2, np.complex64)), NotImplementedError, "clamp is not supported for complex types")]),
    OpInfo("complex.floor", lambda T, a: a.floor(), _unary(), dtypes=(), errors=lambda: [
        ErrorSample(Sample(np.ones(2, np.complex64)), NotImplementedError, "floor is not supported for complex inputs")]),
]


def _square(rng, dt):
    return [Sample(arr(rng, (3, 3), dt), name="3x3"), Sample(arr(rng, (2, 4, 4), dt), name="batched")]


def _csquare(rng, dt):
    return [Sample(_carr(rng, (3, 3), dt), name="3x3"), Sample(_carr(rng, (2, 2, 2), dt), name="batched")]


OPS += [
    OpInfo("linalg.eigvals", lambda T, a: T.linalg.eigvals(a), _square, **TOL),
    OpInfo("linalg.eigvals_complex", lambda T, a: T.linalg.eigvals(a), _csquare, dtypes=C, **TOL),
    OpInfo("linalg.eig", lambda T, a: T.linalg.eig(a)[0], _square, **TOL),
    OpInfo("linalg.eig_vectors", lambda T, a: T.linalg.eig(a)[1].abs(), _square, **TOL),     # phase-invariant
    OpInfo("linalg.eig_vectors_complex", lambda T, a: T.linalg.eig(a)[1].abs(), _csquare, dtypes=C, **TOL,
           errors=lambda: [ErrorSample(Sample(np.ones((2, 3))), RuntimeError,
                                       "linalg.eig: A must be batches of square matrices, but they are 2 by 3")]),
]
