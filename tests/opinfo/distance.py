"""Op table rows: cdist, pdist, dist, renorm (ops/distance.py); std_mean, var_mean, logcumsumexp
(ops/stats_extra.py)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, Idx, NoGrad, arr, noncontig, functional

_PS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf"))


def _cdist_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    out = [Sample(A((4, 3)), A((5, 3)), p, name=f"p{p}") for p in _PS]
    out += [Sample(A((2, 1, 4, 3)), A((3, 5, 3)), name="batch_bcast"), Sample(noncontig(A((4, 3))), A((2, 3)), 1.0,
            name="noncontig"), Sample(A((0, 3)), A((2, 3)), name="empty"),
            Sample(A((4, 3)), A((5, 3)), compute_mode="use_mm_for_euclid_dist", name="mm_mode")]
    return out


def _cdist_mm_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    return [Sample(A((27, 3)), A((4, 3)), name="mm_large"), Sample(A((2, 4, 3)), A((26, 3)), name="mm_batch"),
            Sample(A((5, 3)), A((4, 3)), compute_mode="use_mm_for_euclid_dist", name="mm_mode")]


def _cdist_errors():
    x = np.zeros((3, 4), np.float32)
    return [ErrorSample(Sample(np.zeros(4, np.float32), x), RuntimeError, "cdist only supports at least 2D tensors, X1 got: 1D"),
            ErrorSample(Sample(x, np.zeros((3, 2), np.float32)), RuntimeError, "X1 and X2 must have the same number of columns. X1: 4 X2: 2"),
            ErrorSample(Sample(Idx(np.zeros((3, 4), np.int64)), x), RuntimeError, "cdist only supports floating-point dtypes, X1 got: Long"),
            ErrorSample(Sample(x, x, -1.0), RuntimeError, "cdist only supports non-negative p values"),
            ErrorSample(Sample(x, np.zeros((2, 4))), RuntimeError, "expected scalar type Float but found Double"),
            ErrorSample(Sample(np.zeros((30, 4)), x), RuntimeError, "expected m1 and m2 to have the same dtype, but got: double != float"),
            ErrorSample(Sample(np.zeros((2, 3, 4)), np.zeros((3, 3, 4))), RuntimeError, "The size of tensor a (2) must match")]


def _pdist_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    return ([Sample(A((5, 3)), p, name=f"p{p}") for p in _PS]
            + [Sample(noncontig(A((4, 3))), name="noncontig"), Sample(A((1, 3)), name="one_row")])


def _pdist_errors():
    return [ErrorSample(Sample(np.zeros((2, 3, 4))), RuntimeError, "pdist only supports 2D tensors, got: 3D"),
            ErrorSample(Sample(Idx(np.zeros((3, 4), np.int64))), RuntimeError, "pdist only supports floating-point dtypes"),
            ErrorSample(Sample(np.zeros((3, 4)), -1.0), RuntimeError, "pdist only supports non-negative p values")]


def _dist_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    return ([Sample(A((3, 4)), A((3, 4)), p, name=f"p{p}") for p in _PS if p != 0]
            + [Sample(A((2, 3, 4)), A((4,)), name="bcast"), Sample(A(()), A((3,)), 1.5, name="0d"),
               Sample(A((3, 4)), NoGrad(A((3, 4))), 0.0, name="p0")])


def _dist_errors():
    return [ErrorSample(Sample(Idx(np.ones(3, np.int64)), Idx(np.ones(3, np.int64))), RuntimeError,
                        "norm(): input dtype should be either floating point or complex. Got Long instead."),
            ErrorSample(Sample(np.ones(3), np.ones(2)), RuntimeError, "must match the size of tensor b (2)")]



def _renorm_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    return [Sample(A((3, 4)), p, d, m, name=f"p{p}_d{d}") for p, d, m in
            ((1.0, 0, 1.5), (2.0, 1, 1.0), (3.0, -1, 0.8), (float("inf"), 0, 1.0), (2.0, 0, 100.0))] + \
        [Sample(A((2, 3, 4)), 2.0, 1, 1.2, name="3d"), Sample(noncontig(A((4, 3))), 1.5, 0, 0.9, name="noncontig")]


def _renorm_errors():
    x = np.ones((3, 4), np.float32)
    return [ErrorSample(Sample(x, -1.0, 0, 1.0), RuntimeError, "renorm: non-positive-norm not supported"),
            ErrorSample(Sample(x, 2.0, 0, -1.0), RuntimeError, "renorm: expected maxnorm to be >= 0 but got -1"),
            ErrorSample(Sample(np.ones(3, np.float32), 2.0, 0, 1.0), RuntimeError, "renorm: input needs at least 2 dimensions"),
            ErrorSample(Sample(x, 2.0, 2, 1.0), IndexError, "Dimension out of range"),
            ErrorSample(Sample(Idx(np.ones((3, 3), np.int64)), 2.0, 0, 1.0), RuntimeError,
                        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long")]


def _var_mean_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    return [Sample(A((3, 4)), name="full"), Sample(A((3, 4)), 1, name="dim1"),
            Sample(A((2, 3, 4)), (0, 2), keepdim=True, name="dims_keepdim"),
            Sample(A((3, 4)), 0, correction=0, name="corr0"), Sample(A((3, 4)), False, name="unbiased_false"),
            Sample(A((3, 4)), -1, True, True, name="positional"), Sample(noncontig(A((4, 3))), 1, name="noncontig"),
            Sample(A((5,)), 0, correction=2, name="corr2")]


def _lcse_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt, -3, 3))
    return [Sample(A((3, 4)), 1, name="dim1"), Sample(A((3, 4)), 0, name="dim0"), Sample(A(()), 0, name="0d"),
            Sample(A((2, 3, 4)), -1, name="3d"), Sample(noncontig(A((4, 3))), 1, name="noncontig"),
            Sample(A((0, 3)), 1, name="empty")]


OPS = [
    OpInfo("cdist", lambda T, a, b, *r, **k: T.cdist(a, b, *r, **k), _cdist_samples, gradgrad=False,
           errors=_cdist_errors),
    OpInfo("cdist_mm", lambda T, a, b, *r, **k: T.cdist(a, b, *r, **k), _cdist_mm_samples, atol=1e-4, rtol=1e-4,
           variant_of="cdist"),
    OpInfo("pdist", lambda T, a, *r: T.pdist(a, *r), _pdist_samples, gradgrad=False, errors=_pdist_errors),
    OpInfo("nn.functional.pdist", functional("pdist"), _pdist_samples, gradgrad=False, variant_of="pdist"),
    OpInfo("dist", lambda T, a, b, *r: T.dist(a, b, *r), _dist_samples, errors=_dist_errors),
    OpInfo("Tensor.dist", lambda T, a, b, *r: a.dist(b, *r), _dist_samples, variant_of="dist"),
    OpInfo("renorm", lambda T, a, *r: T.renorm(a, *r), _renorm_samples, errors=_renorm_errors),
    OpInfo("Tensor.renorm", lambda T, a, *r: a.renorm(*r), _renorm_samples, variant_of="renorm"),
    OpInfo("Tensor.renorm_", lambda T, a, *r: (a * 1).renorm_(*r), _renorm_samples, variant_of="renorm"),
    OpInfo("std_mean", lambda T, a, *r, **k: T.std_mean(a, *r, **k), _var_mean_samples,
           errors=lambda: [ErrorSample(Sample(Idx(np.ones(3, np.int64))), RuntimeError,
                                       "std_mean only support floating point and complex dtypes")]),
    OpInfo("var_mean", lambda T, a, *r, **k: T.var_mean(a, *r, **k), _var_mean_samples,
           errors=lambda: [ErrorSample(Sample(Idx(np.ones(3, np.int64))), RuntimeError,
                                       "var_mean only support floating point and complex dtypes")]),
    OpInfo("logcumsumexp", lambda T, a, d: T.logcumsumexp(a, d), _lcse_samples,
           errors=lambda: [ErrorSample(Sample(Idx(np.ones(3, np.int64)), 0), NotImplementedError,
                                       "\"logcumsumexp_out_cpu\" not implemented for 'Long'"),
                           ErrorSample(Sample(np.ones(3), 1), IndexError, "Dimension out of range")]),
    OpInfo("Tensor.logcumsumexp", lambda T, a, d: a.logcumsumexp(d), _lcse_samples, variant_of="logcumsumexp"),
]
