"""Op table rows: quantile, nanquantile, cov, corrcoef (ops/stats_extra.py)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, NoGrad, Idx, TList, arr, noncontig
from .reduction import distinct

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_samples(nan=False):
    def f(rng, dt):
        def A(s):
            a = distinct(rng, s, dt)
            if nan and a.size > 3:
                a.reshape(-1)[[1, 4]] = np.nan
            return a
        out = [Sample(A((7,)), 0.3, name="full_float"), Sample(A((3, 5)), 0.75, 1, name="dim1"),
               Sample(A((3, 5)), np.array([0.05, 0.25, 0.6, 0.95], dt), 0, name="q_tensor_dim0"),
               Sample(A((3, 5)), NoGrad(np.array([0.0, 1.0], dt)), 1, name="q_ends"),
               Sample(A((2, 3, 4)), np.array([0.1, 0.9], dt), 1, True, name="q_tensor_keepdim"),
               Sample(A((3, 4)), 0.5, None, True, name="keepdim_nodim"),
               Sample(noncontig(A((4, 3))), NoGrad(np.array(0.4, dt)), -1, name="q0d_noncontig"),
               Sample(A(()), 0.2, name="0d"), Sample(A(()), 0.2, 0, name="0d_dim")]
        out += [Sample(A((3, 6)), np.array([0.15, 0.55, 0.85], dt), 1, interpolation=m, name=f"mode_{m}")
                for m in _MODES]
        return out
    return f


def _quantile_errors():
    x = np.zeros((3, 4), np.float32)
    return [ErrorSample(Sample(np.zeros(0, np.float32), 0.5), RuntimeError, "input tensor must be non-empty"),
            ErrorSample(Sample(Idx(np.arange(4)), 0.5), RuntimeError, "must be either float or double dtype"),
            ErrorSample(Sample(x, 1.5), RuntimeError, "q must be in the range [0, 1] but got 1.5"),
            ErrorSample(Sample(x, NoGrad(np.array([0.2, 1.5], np.float32))), RuntimeError,
                        "q values must be in the range [0, 1]"),
            ErrorSample(Sample(x, NoGrad(np.array([0.5]))), RuntimeError, "q tensor must be same dtype"),
            ErrorSample(Sample(x, NoGrad(np.zeros((1, 1), np.float32))), RuntimeError, "q must be a scalar or 1D"),
            ErrorSample(Sample(x, 0.5, interpolation="foo"), RuntimeError, "interpolation must be one of"),
            ErrorSample(Sample(x, 0.5, 2), IndexError, "Dimension out of range")]


def _cov_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    w = rng.uniform(0.2, 1.0, 5).astype(dt)
    return [Sample(A((3, 5)), name="2d"), Sample(A((6,)), name="1d"), Sample(A(()), name="0d"),
            Sample(noncontig(A((5, 4))), name="noncontig"), Sample(A((3, 5)), correction=0, name="corr0"),
            Sample(A((2, 5)), fweights=Idx(np.array([1, 2, 0, 3, 1])), name="fweights"),
            Sample(A((2, 5)), aweights=w, name="aweights"),
            Sample(A((3, 5)), correction=2, fweights=Idx(np.array([1, 2, 1, 3, 1])), aweights=w, name="both")]


def _cov_errors():
    x = np.ones((2, 5), np.float32)
    return [ErrorSample(Sample(np.zeros((2, 2, 2))), RuntimeError, "expected input to have two or fewer dimensions"),
            ErrorSample(Sample(Idx(np.ones((2, 2), bool))), RuntimeError, "bool dtype is not supported"),
            ErrorSample(Sample(x, fweights=np.ones(5, np.float32)), RuntimeError, "fweights to have integral dtype"),
            ErrorSample(Sample(x, fweights=Idx(-np.ones(5, np.int64))), RuntimeError, "fweights cannot be negative"),
            ErrorSample(Sample(x, fweights=Idx(np.ones(4, np.int64))), RuntimeError, "but got 4 != 5"),
            ErrorSample(Sample(x, fweights=Idx(np.ones((1, 5), np.int64))), RuntimeError, "one or fewer dimensions"),
            ErrorSample(Sample(x, aweights=Idx(np.ones(5, np.int64))), RuntimeError,
                        "aweights to have floating point dtype but got aweights with Long dtype"),
            ErrorSample(Sample(x, aweights=NoGrad(-np.ones(5, np.float32))), RuntimeError, "aweights cannot be negative"),
            ErrorSample(Sample(x, aweights=NoGrad(np.zeros(5, np.float32))), RuntimeError, "weights sum to zero")]


def _corr_samples(rng, dt):
    A = (lambda s: arr(rng, s, dt))
    return [Sample(A((3, 5)), name="2d"), Sample(A((6,)), name="1d"), Sample(noncontig(A((5, 4))), name="noncontig"),
            Sample(Idx(np.arange(8).reshape(2, 4) % 3), name="int")]


def _hdd_samples(rng, dt):
    x = arr(rng, (40, 2), dt)
    w = NoGrad(rng.random(40).astype(dt))
    return [Sample(NoGrad(x), 3, name="int"), Sample(NoGrad(x), [2, 4], name="list"),
            Sample(NoGrad(x), (2, 3), range=[-1.0, 1.0, -2.0, 2.0], name="range"),
            Sample(NoGrad(x), [2, 3], density=True, name="density"), Sample(NoGrad(x), [2, 3], weight=w, name="weight"),
            Sample(NoGrad(x), TList(np.array([-1.0, 0, 1], dt), np.array([-2.0, 0, 0.5, 2], dt)), name="tensors"),
            Sample(NoGrad(arr(rng, (4, 5, 3), dt)), 2, name="3d"), Sample(NoGrad(np.zeros((0, 2), dt)), 2, name="empty"),
            Sample(NoGrad(np.array([[0.0, 1.0], [1.0, 1.0], [0.5, 0.25]], dt)), 2, name="edges_inclusive")]


def _hdd_errors():
    x = np.zeros((5, 2), np.float32)
    return [ErrorSample(Sample(x[:, 0], 2), RuntimeError, "input tensor should have at least 2 dimensions"),
            ErrorSample(Sample(x, [2, 3, 4]), RuntimeError, "The size of bins must be equal to the innermost dimension"),
            ErrorSample(Sample(x, 2, range=[0.0, 1.0]), RuntimeError, "range should have 4 elements, but got 2"),
            ErrorSample(Sample(x, [2, 0]), RuntimeError, "bins must be > 0, but got 0 for dimension 1"),
            ErrorSample(Sample(Idx(np.ones((3, 2), np.int64)), 2), NotImplementedError, "\"histogramdd\" not implemented for 'Long'"),
            ErrorSample(Sample(x, 2, range=[1.0, -1.0, 0.0, 1.0]), RuntimeError, "min should not exceed max, but got min 1 max -1 for dimension 0"),
            ErrorSample(Sample(x, 2, weight=np.ones(4, np.float32)), RuntimeError, "if weight tensor is provided it should have the same shape"),
            ErrorSample(Sample(np.array([[np.nan, 1.0], [0.0, 0.5]], np.float32), 2), RuntimeError, "dimension 0's range [nan, nan] is not finite")]


OPS = [
    OpInfo("quantile", lambda T, a, *r, **k: T.quantile(a, *r, **k), _quantile_samples(), errors=_quantile_errors),
    OpInfo("Tensor.quantile", lambda T, a, *r, **k: a.quantile(*r, **k), _quantile_samples(),
           variant_of="quantile"),
    OpInfo("nanquantile", lambda T, a, *r, **k: T.nanquantile(a, *r, **k), _quantile_samples(True),
           errors=_quantile_errors),
    OpInfo("Tensor.nanquantile", lambda T, a, *r, **k: a.nanquantile(*r, **k), _quantile_samples(True),
           variant_of="nanquantile"),
    OpInfo("cov", lambda T, a, **k: T.cov(a, **k), _cov_samples, errors=_cov_errors),
    OpInfo("Tensor.cov", lambda T, a, **k: a.cov(**k), _cov_samples, variant_of="cov"),
    OpInfo("corrcoef", lambda T, a: T.corrcoef(a), _corr_samples,
           errors=lambda: [ErrorSample(Sample(np.zeros((2, 2, 2))), RuntimeError, "two or fewer dimensions")]),
    OpInfo("Tensor.corrcoef", lambda T, a: a.corrcoef(), _corr_samples, variant_of="corrcoef"),
    OpInfo("histogramdd", lambda T, a, b, **k: (lambda r: (r.hist, *r.bin_edges))(T.histogramdd(a, b, **k)), _hdd_samples,
           differentiable=False, errors=_hdd_errors),
]
