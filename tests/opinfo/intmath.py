"""Op table rows: ops/intmath.py (gcd lcm ldexp frexp nextafter positive), ops/index_reduce.py (index_reduce,
fill_diagonal_) and ops/linalg_extra.py (chain_matmul frobenius_norm nuclear_norm addmv_)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, Idx, NoGrad, arr, noncontig, binary_samples

ND = dict(differentiable=False)


def _int_samples(rng, dt):
    a = Idx(rng.integers(-30, 30, (3, 4)))
    return [Sample(a, Idx(rng.integers(-30, 30, (3, 4))), name="same"), Sample(a, Idx(rng.integers(0, 9, (4,))), name="bcast"),
            Sample(Idx(np.array([0, 7, -2 ** 63])), Idx(np.array([0, 0, 0])), name="zeros"),
            Sample(Idx(np.array([12, 18], np.int32)), Idx(np.array([8, 4])), name="int32_int64"),
            Sample(Idx(np.array([12, 200], np.uint8)), Idx(np.array([8, 30], np.uint8)), name="uint8")]


def _int_errors(name):
    return lambda: [ErrorSample(Sample(np.ones(3), np.ones(3)), NotImplementedError, f"\"{name}_cpu\" not implemented for 'Double'"),
                    ErrorSample(Sample(Idx(np.ones(3, bool)), Idx(np.ones(3, bool))), NotImplementedError, "for 'Bool'"),
                    ErrorSample(Sample(Idx(np.ones(3, np.int64)), 3), TypeError,
                                f"{name}(): argument 'other' (position 2) must be Tensor, not int")]


def _ldexp_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    return [Sample(A((3, 4)), Idx(rng.integers(-3, 4, (3, 4))), name="int_exp"),
            Sample(A((3, 4)), Idx(rng.integers(-3, 4, (4,))), name="bcast"),
            Sample(A((3, 4)), A((3, 4)), name="float_exp"), Sample(noncontig(A((4, 3))), A(()), name="noncontig"),
            Sample(Idx(np.array([1, 2, 3])), Idx(np.array([1, -1, 2])), name="int_int")]


def _frexp_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt, -50, 50))
    return [Sample(A((3, 4)), name="2d"), Sample(A(()), name="0d"), Sample(A((0, 2)), name="empty"),
            Sample(NoGrad(np.array([0.0, np.inf, -np.inf, np.nan, 1e-40 if dt == np.float64 else 1e-39], dt)),
                   name="special")]


def _ir_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt, 0.5, 2.0) * np.where(rng.random(s) < 0.5, -1, 1).astype(dt))
    out = []
    for red in ("prod", "mean", "amax", "amin"):
        for inc in (True, False):
            out.append(Sample(A((4, 3)), 0, Idx(np.array([0, 2, 0, 3, 2])), A((5, 3)), red, include_self=inc,
                              name=f"{red}_{inc}"))
        out.append(Sample(A((3, 4)), 1, Idx(np.array([3, 3, 1], np.int32)), A((3, 3)), red, name=f"{red}_dim1"))
    out.append(Sample(np.array([[1.0, 0.0], [2.0, 3.0], [0.0, 4.0]], dt), 0, Idx(np.array([0, 1, 2])),
                      np.array([[0.0, 2.0], [1.0, 0.0], [3.0, 0.5]], dt), "prod", name="prod_zeros"))
    return out


def _ir_errors():
    s, src, i = np.zeros((3, 2)), np.ones((4, 2)), Idx(np.array([0, 2, 0, 2]))
    return [ErrorSample(Sample(s, 0, i, src, "sum"), RuntimeError,
                        "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got sum."),
            ErrorSample(Sample(s, 0, np.array([0.0, 1, 0, 1]), src, "prod"), RuntimeError,
                        "Expected dtype int32/int64 for index but got: Double"),
            ErrorSample(Sample(s, 0, Idx(np.array([0, 5, 0, 2])), src, "prod"), IndexError, "index out of range in self"),
            ErrorSample(Sample(s, 0, Idx(np.array([0, 1])), src, "prod"), RuntimeError,
                        "Number of indices (2) should be equal to source.size(dim): (4), for dim: 0"),
            ErrorSample(Sample(s, 0, Idx(np.zeros((2, 2), np.int64)), src, "prod"), IndexError,
                        "Index is supposed to be a vector, but got dim: 2"),
            ErrorSample(Sample(s, 0, i, np.ones((4, 3)), "prod"), RuntimeError,
                        "source tensor shape must match self tensor shape, excluding the specified dimension"),
            ErrorSample(Sample(s, 0, i, np.ones((4, 2), np.float32), "prod"), RuntimeError,
                        "self (Double) and source (Float) must have the same scalar type")]


def _fd_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    return [Sample(A((3, 4)), 2.5, name="wide"), Sample(A((7, 3)), -1.0, True, name="wrap"),
            Sample(A((7, 3)), 0.5, name="tall_nowrap"), Sample(A((3, 3, 3)), 4.0, name="cube")]


def _chain_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    return [Sample(A((2, 3)), name="one"), Sample(A((2, 3)), A((3, 4)), name="two"),
            Sample(A((2, 3)), A((3, 4)), A((4, 1)), name="three"), Sample(A((1, 3)), A((3, 3)), A((3, 2)), A((2, 5)), name="four")]


def _frob_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    return [Sample(A((3, 4)), (0, 1), name="both"), Sample(A((3, 4)), 0, name="int_dim"),
            Sample(A((2, 3, 4)), (0, 2), True, name="keepdim"), Sample(A((3, 4)), (), name="empty_dims")]


def _nuc_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    return [Sample(A((3, 4)), name="2d"), Sample(A((3, 3)), True, name="keepdim_positional"),
            Sample(A((2, 3, 4)), (0, 2), name="dims"), Sample(A((2, 3, 4)), (2, 1), True, name="dims_keepdim")]


def _inplace_samples(gen):
    """The samples whose first operand keeps the broadcast shape."""
    return lambda rng, dt: [s for s in gen(rng, dt) if s.name not in ("bcast_a", "bcast_both", "0d_a")]


def _lu_unpack_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    return [Sample(A((3, 3)), Idx(np.array([2, 2, 3], np.int32)), name="square"),
            Sample(A((2, 3, 4)), Idx(np.array([[3, 2, 3], [1, 3, 3]], np.int32)), name="wide_batch"),
            Sample(A((4, 2)), Idx(np.array([4, 3], np.int32)), name="tall"),
            Sample(A((3, 3)), Idx(np.array([3, 3, 3], np.int32)), True, False, name="no_pivots")]


def _ormqr_samples(rng, dt):
    def qr(shape):      # a valid geqrf output (reflectors below the diagonal, tau in [1, 2])
        a = arr(rng, shape, dt)
        k = min(shape[-2:])
        return a, rng.uniform(1.0, 2.0, shape[:-2] + (k,)).astype(dt)
    out = []
    for (ash, csh, left, tr) in (((4, 3), (4, 2), True, False), ((4, 3), (4, 2), True, True),
                                 ((4, 3), (2, 4), False, False), ((3, 3), (2, 3), False, True),
                                 ((2, 4, 3), (2, 4, 5), True, False), ((2, 4), (2, 3), True, False)):
        a, tau = qr(ash)
        out.append(Sample(a, tau, arr(rng, csh, dt), left, tr, name=f"{ash}_{csh}_{left}_{tr}"))
    return out


def _ormqr_errors():
    a, t, c = np.ones((4, 3)), np.ones(3), np.ones((4, 2))
    return [ErrorSample(Sample(np.ones(3), t, c), RuntimeError, "torch.ormqr: input must have at least 2 dimensions."),
            ErrorSample(Sample(a, np.ones(4), c), RuntimeError, "tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])"),
            ErrorSample(Sample(a, t, np.ones((3, 2))), RuntimeError, "other.shape[-2] must be equal to input.shape[-2]"),
            ErrorSample(Sample(a, t, np.ones((2, 3)), False), RuntimeError, "other.shape[-1] must be equal to input.shape[-2]"),
            ErrorSample(Sample(np.ones((2, 4, 3)), t, np.ones((2, 4, 2))), RuntimeError, "Expected tau to have one dimension less"),
            ErrorSample(Sample(np.ones((2, 4, 3)), np.ones((2, 3)), c), RuntimeError, "Expected other to have the same number of dimensions"),
            ErrorSample(Sample(a.astype(np.float32), t, c.astype(np.float32)), RuntimeError,
                        "Expected input and tau to have the same dtype, but input has dtypeFloat and tau has dtype Double")]


OPS = [
    OpInfo("gcd", lambda T, a, b: T.gcd(a, b), _int_samples, dtypes=("int64",), errors=_int_errors("gcd"), **ND),
    OpInfo("Tensor.gcd_", lambda T, a, b: a.clone().gcd_(b), _int_samples, dtypes=("int64",), variant_of="gcd", **ND),
    OpInfo("lcm", lambda T, a, b: T.lcm(a, b), _int_samples, dtypes=("int64",), errors=_int_errors("lcm"), **ND),
    OpInfo("Tensor.lcm_", lambda T, a, b: a.clone().lcm_(b), _int_samples, dtypes=("int64",), variant_of="lcm", **ND),
    # gradcheck off: torch's gradient for a negative integer exponent is 0 (an integer 2**other), not 2**other
    OpInfo("ldexp", lambda T, a, b: T.ldexp(a, b), _ldexp_samples, gradcheck=False,
           errors=lambda: [ErrorSample(Sample(np.ones(3), 2), TypeError, "ldexp(): argument 'other' (position 2) must be Tensor, not int")]),
    OpInfo("Tensor.ldexp_", lambda T, a, b: (a * 1).ldexp_(b), lambda rng, dt: _ldexp_samples(rng, dt)[:4],
           variant_of="ldexp", gradcheck=False,
           errors=lambda: [ErrorSample(Sample(Idx(np.array([1, 2])), Idx(np.array([1, 2]))), RuntimeError,
                                       "ldexp can't be cast to the desired output type Long")]),
    OpInfo("frexp", lambda T, a: T.frexp(a), _frexp_samples,
           errors=lambda: [ErrorSample(Sample(Idx(np.array([8, 3]))), RuntimeError, "torch.frexp() only supports floating-point dtypes")]),
    OpInfo("Tensor.frexp", lambda T, a: tuple(a.frexp()), _frexp_samples, variant_of="frexp"),
    OpInfo("nextafter", lambda T, a, b: T.nextafter(a, b), binary_samples(scalar=False), gradgrad=False, gradcheck=False,
           errors=lambda: [ErrorSample(Sample(Idx(np.array([1, 2])), Idx(np.array([2, 1]))), NotImplementedError,
                                       "\"nextafter_cpu\" not implemented for 'Long'")]),
    OpInfo("Tensor.nextafter_", lambda T, a, b: (a * 1).nextafter_(b), _inplace_samples(binary_samples(scalar=False)), gradgrad=False,
           gradcheck=False, variant_of="nextafter"),
    OpInfo("positive", lambda T, a: T.positive(a) * 1, lambda rng, dt: [Sample(arr(rng, (3, 4), dt), name="2d")],
           errors=lambda: [ErrorSample(Sample(Idx(np.array([True]))), RuntimeError, "The `+` operator, on a bool tensor is not supported.")]),
    OpInfo("Tensor.positive_is_self", lambda T, a: a.positive() is a, lambda rng, dt: [Sample(arr(rng, (3,), dt), name="is")],
           variant_of="positive", **ND),
    OpInfo("index_reduce", lambda T, a, d, i, s, r, **k: T.index_reduce(a, d, i, s, r, **k), _ir_samples,
           errors=_ir_errors),
    OpInfo("Tensor.index_reduce", lambda T, a, d, i, s, r, **k: a.index_reduce(d, i, s, r, **k), _ir_samples,
           variant_of="index_reduce"),
    OpInfo("Tensor.index_reduce_", lambda T, a, d, i, s, r, **k: (a * 1).index_reduce_(d, i, s, r, **k), _ir_samples,
           variant_of="index_reduce"),
    OpInfo("Tensor.fill_diagonal_", lambda T, a, *r: (a * 1).fill_diagonal_(*r), _fd_samples,
           errors=lambda: [ErrorSample(Sample(np.zeros(3), 2.0), RuntimeError, "dimensions must larger than 1"),
                           ErrorSample(Sample(np.zeros((3, 3, 2)), 2.0), RuntimeError, "all dimensions of input must be of equal length")]),
    OpInfo("chain_matmul", lambda T, *m: T.chain_matmul(*m), _chain_samples, atol=1e-4,
           errors=lambda: [ErrorSample(Sample(np.ones(3), np.ones((3, 4))), RuntimeError, "Tensor dimension is 1, expected 2 instead."),
                           ErrorSample(Sample(np.ones((2, 3)), np.ones((4, 1))), RuntimeError, "cannot be multiplied")]),
    OpInfo("frobenius_norm", lambda T, a, *r: T.frobenius_norm(a, *r), _frob_samples,
           errors=lambda: [ErrorSample(Sample(np.ones((2, 2))), TypeError, 'frobenius_norm() missing 1 required positional arguments: "dim"'),
                           ErrorSample(Sample(np.ones((2, 2, 2)), (0, 1, 2)), RuntimeError, "Expected at most 2 dimensions, but got 3"),
                           ErrorSample(Sample(Idx(np.ones((2, 2), np.int64)), (0, 1)), RuntimeError,
                                       "norm(): input dtype should be either floating point or complex. Got Long instead.")]),
    OpInfo("nuclear_norm", lambda T, a, *r: T.nuclear_norm(a, *r), _nuc_samples, atol=1e-4, grad_atol=1e-3,
           errors=lambda: [ErrorSample(Sample(np.ones(2)), RuntimeError, "The input tensor A must have at least 2 dimensions."),
                           ErrorSample(Sample(np.ones((2, 3)), (0,)), RuntimeError, "linalg.matrix_norm: dim must be a 2-tuple. Got 0")]),
    # gradcheck off: the harness pairs its cotangents with every float output, P (not differentiable) included
    OpInfo("lu_unpack", lambda T, LU, piv, *r: tuple(T.lu_unpack(LU, piv, *r)), _lu_unpack_samples, gradcheck=False,
           errors=lambda: [ErrorSample(Sample(np.ones((3, 3)), Idx(np.array([1, 2, 3]))), RuntimeError,
                                       "LU_pivots is expected to be a contiguous tensor of torch.int32 dtype"),
                           ErrorSample(Sample(np.ones((3, 3)), Idx(np.array([1, 5, 3], np.int32))), RuntimeError,
                                       "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive")]),
    # torch's backward fails on the empty L and U of unpack_data=False (triu of a 1-d tensor): values only
    OpInfo("lu_unpack_no_data", lambda T, LU, piv: tuple(T.lu_unpack(LU, piv, False)), lambda rng, dt: [
        Sample(NoGrad(arr(rng, (3, 3), dt)), Idx(np.array([1, 2, 3], np.int32)), name="no_data")], **ND),
    OpInfo("geqrf", lambda T, a: tuple(T.geqrf(a)), lambda rng, dt: [
        Sample(NoGrad(arr(rng, s, dt)), name=str(s)) for s in ((4, 3), (3, 4), (2, 3, 3), (0, 3))], atol=1e-5, rtol=1e-4, **ND,
           errors=lambda: [ErrorSample(Sample(np.ones(3)), RuntimeError, "torch.geqrf: input must have at least 2 dimensions."),
                           ErrorSample(Sample(Idx(np.ones((3, 3), np.int64))), NotImplementedError, "\"geqrf_cpu\" not implemented for 'Long'")]),
    OpInfo("Tensor.geqrf", lambda T, a: tuple(a.geqrf()), lambda rng, dt: [Sample(NoGrad(arr(rng, (4, 3), dt)), name="tall")],
           atol=1e-5, rtol=1e-4, variant_of="geqrf", **ND),
    OpInfo("ormqr", lambda T, a, t, c, *r: T.ormqr(a, t, c, *r), _ormqr_samples, atol=1e-4, grad_atol=1e-3,
           errors=_ormqr_errors),
    OpInfo("Tensor.ormqr", lambda T, a, t, c, *r: a.ormqr(t, c, *r), _ormqr_samples, atol=1e-4, grad_atol=1e-3,
           variant_of="ormqr"),
    OpInfo("addmv_", lambda T, a, m, v, **k: T.addmv_(a * 1, m, v, **k), lambda rng, dt: [
        Sample(arr(rng, (2,), dt), arr(rng, (2, 3), dt), arr(rng, (3,), dt), name="plain"),
        Sample(arr(rng, (2,), dt), arr(rng, (2, 3), dt), arr(rng, (3,), dt), beta=0.5, alpha=2.0, name="beta_alpha")]),
]
