"""Op table rows: reductions (ops/reduction.py, ops/statistics.py, ops/scans.py)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, arr, noncontig, away_from_zero


def distinct(rng, shape, dt, scale=0.25):
    """Values without ties (gaps >= 0.15 * scale / 0.25), so max/min/median/sort are differentiable."""
    n = int(np.prod(shape)) if shape else 1
    v = (rng.permutation(n) - n / 2) * scale + rng.uniform(-0.05, 0.05, n) * scale / 0.25
    return v.reshape(shape).astype(dt)


def red_samples(full=True, dims=True, gen=None, empty=True, zero_d=True):
    """The sample set of a reduction: full, one dim, negative dim, keepdim, tuple of dims, 0-d, empty,
    non-contiguous."""
    def f(rng, dt):
        A = (lambda s: gen(rng, s, dt)) if gen else (lambda s: arr(rng, s, dt))
        out = []
        if full:
            out += [Sample(A((3, 4)), name="full2d"), Sample(A((5,)), name="full1d")]
            if zero_d:
                out.append(Sample(A(()), name="full0d"))
            if empty:
                out.append(Sample(A((0, 3)), name="full_empty"))
            out.append(Sample(noncontig(A((4, 3))), name="full_noncontig"))
        if dims:
            out += [Sample(A((3, 4)), 1, name="dim1"), Sample(A((3, 4)), -2, name="dimneg"),
                    Sample(A((2, 3, 4)), 1, keepdim=True, name="keepdim"),
                    Sample(A((2, 3, 4)), (0, 2), name="dims_tuple"),
                    Sample(noncontig(A((4, 3))), 0, name="dim_noncontig")]
            if zero_d:
                out.append(Sample(A(()), 0, name="0d_dim"))
            if empty:
                out.append(Sample(A((0, 3)), 1, name="empty_dim"))
        return out
    return f


def one_dim_samples(gen=None, empty=True, zero_d=True):
    """Samples for ops with a single (int) dim."""
    def f(rng, dt):
        A = (lambda s: gen(rng, s, dt)) if gen else (lambda s: arr(rng, s, dt))
        out = [Sample(A((3, 4)), 1, name="dim1"), Sample(A((3, 4)), 0, name="dim0"),
               Sample(A((3, 4)), -1, name="dimneg"), Sample(A((2, 3, 4)), 1, keepdim=True, name="keepdim"),
               Sample(noncontig(A((4, 3))), 1, name="noncontig"), Sample(A((5,)), 0, name="1d")]
        if zero_d:
            out.append(Sample(A(()), 0, name="0d"))
        if empty:
            out.append(Sample(A((0, 3)), 1, name="empty"))
        return out
    return f


def _distinct(rng, s, dt):
    return distinct(rng, s, dt)


def _with_ties(rng, s, dt):
    return rng.integers(-2, 3, size=s).astype(dt)


def _with_nan(rng, s, dt):
    a = arr(rng, s, dt)
    if a.size > 2 and a.dtype.kind == "f":
        a.reshape(-1)[[0, a.size // 2]] = np.nan
    return a


def _distinct_nan(rng, s, dt):
    a = distinct(rng, s, dt)
    if a.size > 2:
        a.reshape(-1)[[1, a.size - 1]] = np.nan
    return a


def _positive(rng, s, dt):
    return arr(rng, s, dt, 0.5, 1.5)


def _with_zeros(rng, s, dt):
    a = arr(rng, s, dt, 0.5, 1.5)
    f = a.reshape(-1)
    if f.size >= 2:
        f[0] = 0
    if f.size >= 6:
        f[5] = 0
        f[-1] = 0
    return a


def _nz(rng, s, dt):
    return away_from_zero(arr(rng, s, dt))


def _ints(rng, s, dt):
    return arr(rng, s, dt, -3, 3)


def _dims_only(rng, dt, gen=None):
    return red_samples(full=False, gen=gen)(rng, dt)


def _E(*args, **kw):
    return Sample(*args, **kw)


I64 = ("int64",)

OPS = [
    # sum / mean / nansum / nanmean / prod
    OpInfo("sum_full", lambda T, a: T.sum(a), red_samples(dims=False)),
    OpInfo("sum_dim", lambda T, a, d, keepdim=False: T.sum(a, d, keepdim), red_samples(full=False)),
    OpInfo("sum_method_keepdim", lambda T, a: a.sum(-1, keepdim=True), red_samples(dims=False, zero_d=False)),
    OpInfo("sum_dtype", lambda T, a: a.sum(dtype=T.float64), red_samples(dims=False), dtypes=("float32",)),
    OpInfo("sum_int", lambda T, a, *d, **k: T.sum(a, *d, **k), red_samples(gen=_ints), dtypes=("int64", "int32", "bool"),
           differentiable=False),
    OpInfo("mean_full", lambda T, a: T.mean(a), red_samples(dims=False, empty=False)),
    OpInfo("mean_dim", lambda T, a, d, keepdim=False: a.mean(d, keepdim), red_samples(full=False, empty=False)),
    OpInfo("nansum", lambda T, a, *d, **k: T.nansum(a, *d, **k), red_samples(gen=_with_nan)),
    OpInfo("nanmean", lambda T, a, *d, **k: T.nanmean(a, *d, **k), red_samples(gen=_with_nan, empty=False)),
    OpInfo("prod", lambda T, a, *d, **k: T.prod(a, *d, **k),
           lambda rng, dt: [s for s in red_samples(gen=_positive)(rng, dt) if not isinstance(s.args[-1], tuple)]),
    OpInfo("prod_zeros", lambda T, a, *d, **k: a.prod(*d, **k),
           lambda rng, dt: [Sample(_with_zeros(rng, (3, 4), dt), name="full"),
                            Sample(_with_zeros(rng, (3, 4), dt), 1, name="dim1"),
                            Sample(_with_zeros(rng, (3, 4), dt), 0, keepdim=True, name="dim0"),
                            Sample(np.array([0., 0., 2.], dt), name="two_zeros"),
                            Sample(np.array([[0., 0., 2.], [1., 0., 3.]], dt), 1, name="two_zeros_dim")]),
    OpInfo("prod_int", lambda T, a, *d, **k: T.prod(a, *d, **k),
           lambda rng, dt: [s for s in red_samples(gen=_ints)(rng, dt) if not isinstance(s.args[-1], tuple)],
           dtypes=("int64", "int32", "bool"), differentiable=False),
    # max / min / amax / amin / aminmax / argmax / argmin
    OpInfo("max_full", lambda T, a: T.max(a), red_samples(dims=False, gen=_distinct, empty=False)),
    OpInfo("min_full", lambda T, a: a.min(), red_samples(dims=False, gen=_distinct, empty=False)),
    OpInfo("max_full_ties", lambda T, a: T.max(a), red_samples(dims=False, gen=_with_ties, empty=False),
           gradcheck=False),
    OpInfo("min_full_ties", lambda T, a: T.min(a), red_samples(dims=False, gen=_with_ties, empty=False),
           gradcheck=False),
    OpInfo("max_dim", lambda T, a, d, keepdim=False: T.max(a, d, keepdim), one_dim_samples(gen=_distinct)),
    OpInfo("min_dim", lambda T, a, d, keepdim=False: a.min(dim=d, keepdim=keepdim), one_dim_samples(gen=_distinct)),
    OpInfo("max_dim_ties", lambda T, a, d, keepdim=False: T.max(a, d, keepdim), one_dim_samples(gen=_with_ties),
           differentiable=False),
    OpInfo("max_dim_nan", lambda T, a, d, keepdim=False: T.max(a, d, keepdim), one_dim_samples(gen=_with_nan),
           differentiable=False),
    OpInfo("max_binary", lambda T, a, b: T.max(a, b),
           lambda rng, dt: [Sample(distinct(rng, (3, 4), dt), distinct(rng, (3, 4), dt) + 0.01)]),
    OpInfo("amax", lambda T, a, *d, **k: T.amax(a, *d, **k),
           lambda rng, dt: [s for s in red_samples(gen=_distinct)(rng, dt) if "empty" not in s.name]),
    OpInfo("amin", lambda T, a, *d, **k: a.amin(*d, **k),
           lambda rng, dt: [s for s in red_samples(gen=_distinct)(rng, dt) if "empty" not in s.name]),
    OpInfo("amax_ties", lambda T, a, *d, **k: T.amax(a, *d, **k),
           lambda rng, dt: [s for s in red_samples(gen=_with_ties)(rng, dt) if "empty" not in s.name],
           gradcheck=False),
    OpInfo("amin_ties", lambda T, a, *d, **k: T.amin(a, *d, **k),
           lambda rng, dt: [s for s in red_samples(gen=_with_ties)(rng, dt) if "empty" not in s.name],
           gradcheck=False),
    OpInfo("amax_nan", lambda T, a, *d: T.amax(a, *d),
           lambda rng, dt: [Sample(_with_nan(rng, (3, 4), dt)), Sample(_with_nan(rng, (3, 4), dt), 1)],
           gradcheck=False),   # PyTorch: NaN weights (nothing matches a NaN maximum)
    OpInfo("max_full_nan", lambda T, a: T.max(a), lambda rng, dt: [Sample(_with_nan(rng, (3, 4), dt))],
           gradcheck=False),
    OpInfo("aminmax", lambda T, a, **k: T.aminmax(a, **k),
           lambda rng, dt: [Sample(distinct(rng, (3, 4), dt), name="full"),
                            Sample(distinct(rng, (3, 4), dt), dim=1, name="dim"),
                            Sample(distinct(rng, (2, 3, 4), dt), dim=-1, keepdim=True, name="keepdim"),
                            Sample(distinct(rng, (), dt), name="0d")]),
    OpInfo("aminmax_ties", lambda T, a, **k: T.aminmax(a, **k),
           lambda rng, dt: [Sample(_with_ties(rng, (3, 4), dt), name="full"),
                            Sample(_with_ties(rng, (3, 4), dt), dim=0, name="dim")], gradcheck=False),
    OpInfo("argmax", lambda T, a, *d, **k: T.argmax(a, *d, **k),
           lambda rng, dt: [Sample(_with_ties(rng, (3, 4), dt), name="full"),
                            Sample(_with_ties(rng, (3, 4), dt), 1, name="dim"),
                            Sample(_with_ties(rng, (3, 4), dt), keepdim=True, name="full_keepdim"),
                            Sample(_with_ties(rng, (2, 3, 4), dt), -1, True, name="keepdim"),
                            Sample(_with_ties(rng, (), dt), name="0d"),
                            Sample(_with_nan(rng, (3, 4), dt), 1, name="nan"),
                            Sample(_with_ties(rng, (0, 3), dt), 1, name="empty")],
           differentiable=False, dtypes=("float32", "float64", "int64")),
    OpInfo("argmin", lambda T, a, *d, **k: a.argmin(*d, **k),
           lambda rng, dt: [Sample(_with_ties(rng, (3, 4), dt), name="full"),
                            Sample(_with_ties(rng, (3, 4), dt), 0, name="dim"),
                            Sample(_with_ties(rng, (2, 3, 4), dt), 2, True, name="keepdim")],
           differentiable=False, dtypes=("float32", "int64")),
    # var / std
    OpInfo("var", lambda T, a, *d, **k: T.var(a, *d, **k), red_samples(empty=False, zero_d=False)),
    OpInfo("var_correction", lambda T, a, d: a.var(d, correction=0),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), 1), Sample(arr(rng, (2, 3, 4), dt), (0, 2))]),
    OpInfo("var_unbiased", lambda T, a: T.var(a, unbiased=False), red_samples(dims=False, zero_d=False, empty=False)),
    OpInfo("std", lambda T, a, *d, **k: T.std(a, *d, **k), red_samples(empty=False, zero_d=False)),
    OpInfo("std_correction", lambda T, a, d: a.std(d, correction=2, keepdim=True),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), 1), Sample(arr(rng, (2, 3, 4), dt), (0, 2))]),
    OpInfo("std_unbiased", lambda T, a: a.std(unbiased=False), red_samples(dims=False, zero_d=False, empty=False)),
    OpInfo("std_constant", lambda T, a: a.std(1),
           lambda rng, dt: [Sample(np.ones((2, 3), dt))], gradcheck=False),
    # norm
    OpInfo("norm", lambda T, a: a.norm(), red_samples(dims=False, gen=_nz)),
    OpInfo("norm_dim", lambda T, a, d, keepdim=False: T.norm(a, dim=d, keepdim=keepdim),
           red_samples(full=False, gen=_nz, empty=False)),
    OpInfo("norm_fro_dims", lambda T, a: T.norm(a, p="fro", dim=(0, 1)),
           lambda rng, dt: [Sample(_nz(rng, (3, 4), dt)), Sample(_nz(rng, (2, 3, 4), dt))]),
    OpInfo("norm_p1", lambda T, a, *d: a.norm(1, *d), red_samples(gen=_nz, empty=False, dims=False)),
    OpInfo("norm_p1_dim", lambda T, a, d, keepdim=False: a.norm(1, d, keepdim),
           red_samples(gen=_nz, empty=False, full=False)),
    OpInfo("norm_inf", lambda T, a, *d, **k: a.norm(float("inf"), *d, **k),
           lambda rng, dt: [s for s in red_samples(gen=_distinct, empty=False)(rng, dt) if "noncontig" not in s.name]),
    OpInfo("norm_neginf", lambda T, a, *d, **k: T.norm(a, float("-inf"), *d, **k),
           lambda rng, dt: [s for s in red_samples(gen=_distinct, empty=False)(rng, dt) if "noncontig" not in s.name]),
    OpInfo("norm_p0", lambda T, a, *d, **k: a.norm(0, *d, **k), red_samples(gen=_with_ties, empty=False),
           gradcheck=False),
    OpInfo("norm_p3", lambda T, a, *d, **k: a.norm(3, *d, **k), red_samples(gen=_nz, empty=False)),
    OpInfo("norm_p_half", lambda T, a, *d, **k: a.norm(0.5, *d, **k), red_samples(gen=_nz, empty=False)),
    OpInfo("norm_p1_5", lambda T, a: a.norm(1.5, 1),
           lambda rng, dt: [Sample(_nz(rng, (3, 4), dt)), Sample(_nz(rng, (2, 5), dt))]),
    OpInfo("norm_zero_vector", lambda T, a, *d: a.norm(2, *d),
           lambda rng, dt: [Sample(np.zeros((3,), dt), name="full"),
                            Sample(np.array([[0., 0.], [1., 2.]], dt), 1, name="dim")],
           gradcheck=False),
    OpInfo("norm_dtype", lambda T, a: a.norm(dtype=T.float64), red_samples(dims=False, gen=_nz),
           dtypes=("float32",)),
    # logsumexp
    OpInfo("logsumexp", lambda T, a, d, keepdim=False: T.logsumexp(a, d, keepdim), red_samples(full=False)),
    OpInfo("logsumexp_int", lambda T, a: T.logsumexp(a, 1),
           lambda rng, dt: [Sample(_ints(rng, (3, 4), dt))], dtypes=I64, differentiable=False),
    # cumulative
    OpInfo("cumsum", lambda T, a, d, keepdim=None: T.cumsum(a, d), one_dim_samples()),
    OpInfo("cumsum_dtype", lambda T, a, d, keepdim=None: a.cumsum(d, dtype=T.float64), one_dim_samples(),
           dtypes=("float32",)),
    OpInfo("cumsum_int", lambda T, a, d, keepdim=None: T.cumsum(a, d), one_dim_samples(gen=_ints),
           dtypes=("int64", "int32", "bool"), differentiable=False),
    OpInfo("cumsum_", lambda T, a, d, keepdim=None: (a * 1).cumsum_(d), one_dim_samples()),
    OpInfo("cumprod", lambda T, a, d, keepdim=None: T.cumprod(a, d), one_dim_samples(gen=_nz)),
    OpInfo("cumprod_zeros", lambda T, a, d: a.cumprod(d),
           lambda rng, dt: [Sample(_with_zeros(rng, (3, 4), dt), 1), Sample(_with_zeros(rng, (3, 4), dt), 0),
                            Sample(np.array([1., 0., 3., 0., 2.], dt), 0)]),
    OpInfo("cummax", lambda T, a, d, keepdim=None: T.cummax(a, d), one_dim_samples(gen=_distinct)),
    OpInfo("cummin", lambda T, a, d, keepdim=None: a.cummin(d), one_dim_samples(gen=_distinct)),
    OpInfo("cummax_ties", lambda T, a, d, keepdim=None: T.cummax(a, d), one_dim_samples(gen=_with_ties),
           gradcheck=False),
    OpInfo("cummin_ties", lambda T, a, d, keepdim=None: T.cummin(a, d), one_dim_samples(gen=_with_ties),
           gradcheck=False),
    OpInfo("cummax_nan", lambda T, a, d, keepdim=None: T.cummax(a, d), one_dim_samples(gen=_with_nan),
           differentiable=False),
    # logic
    OpInfo("all", lambda T, a, *d, **k: T.all(a, *d, **k), red_samples(gen=_ints),
           dtypes=("bool", "float32", "int64", "uint8"), differentiable=False),
    OpInfo("any", lambda T, a, *d, **k: a.any(*d, **k), red_samples(gen=_ints),
           dtypes=("bool", "float32", "int64", "uint8"), differentiable=False),
    OpInfo("count_nonzero", lambda T, a, *d: T.count_nonzero(a, *d),
           lambda rng, dt: [s for s in red_samples(gen=_ints)(rng, dt) if not s.kwargs],
           dtypes=("bool", "float32", "int64"), differentiable=False),
    OpInfo("hash_tensor", lambda T, a, *d, **k: T.hash_tensor(a, *d, **k),
           lambda rng, dt: red_samples(gen=_ints, empty=False)(rng, dt) + [Sample(_ints(rng, (0, 3), dt), 1)],
           dtypes=("bool", "float32", "float64", "int64", "uint8"), differentiable=False,
           errors=lambda: [ErrorSample(Sample(np.zeros((0, 3))), RuntimeError, "Expected reduction dim to be specified"),
                           ErrorSample(Sample(np.zeros(2, np.complex64)), NotImplementedError,
                                       '"xor_sum_cpu" not implemented for \'ComplexFloat\''),
                           ErrorSample(Sample(np.zeros(2), mode=1), RuntimeError, "Unknown hash_tensor mode: 1")]),
    # median / nanmedian / mode / kthvalue
    OpInfo("median_full", lambda T, a: T.median(a),
           lambda rng, dt: [Sample(distinct(rng, (3, 4), dt), name="even"), Sample(distinct(rng, (5,), dt), name="odd"),
                            Sample(distinct(rng, (), dt), name="0d"), Sample(noncontig(distinct(rng, (3, 3), dt)))]),
    OpInfo("median_full_ties", lambda T, a: a.median(),
           lambda rng, dt: [Sample(np.array([1., 2., 2., 3.], dt)), Sample(_with_ties(rng, (3, 4), dt))],
           gradcheck=False),
    OpInfo("median_full_nan", lambda T, a: a.median(), lambda rng, dt: [Sample(_with_nan(rng, (3, 4), dt))],
           differentiable=False),
    OpInfo("median_full_empty", lambda T, a: a.median(), lambda rng, dt: [Sample(np.zeros((0, 2), dt))],
           differentiable=False),
    OpInfo("median_dim", lambda T, a, d, keepdim=False: T.median(a, d, keepdim), one_dim_samples(gen=_distinct)),
    OpInfo("median_dim_nan", lambda T, a, d, keepdim=False: a.median(d, keepdim),
           one_dim_samples(gen=_distinct_nan, empty=False), differentiable=False),
    OpInfo("nanmedian_full", lambda T, a: T.nanmedian(a),
           lambda rng, dt: [Sample(_distinct_nan(rng, (3, 4), dt)), Sample(distinct(rng, (5,), dt)),
                            Sample(np.array([1., np.nan, 2., 2.], dt), name="ties")], gradcheck=False),
    OpInfo("nanmedian_dim", lambda T, a, d, keepdim=False: T.nanmedian(a, d, keepdim),
           one_dim_samples(gen=_distinct_nan, empty=False)),
    OpInfo("nanmedian_all_nan", lambda T, a, d: T.nanmedian(a, d),
           lambda rng, dt: [Sample(np.array([[np.nan, np.nan], [1., np.nan]], dt), 1)], differentiable=False),
    OpInfo("mode", lambda T, a, *d, **k: T.mode(a, *d, **k),
           lambda rng, dt: [Sample(_with_ties(rng, (3, 6), dt), name="default"),
                            Sample(_with_ties(rng, (3, 6), dt), 0, name="dim0"),
                            Sample(_with_ties(rng, (2, 3, 5), dt), 1, True, name="keepdim"),
                            Sample(distinct(rng, (3, 4), dt), 1, name="all_unique"),
                            Sample(_with_ties(rng, (), dt), name="0d")], gradcheck=False),
    OpInfo("kthvalue", lambda T, a, k, d, keepdim=False: T.kthvalue(a, k, d, keepdim),
           lambda rng, dt: [Sample(distinct(rng, (3, 4), dt), 2, 1), Sample(distinct(rng, (3, 4), dt), 3, 0),
                            Sample(distinct(rng, (2, 3, 4), dt), 1, -1, keepdim=True),
                            Sample(distinct(rng, (5,), dt), 5, 0), Sample(distinct(rng, (), dt), 1, 0)]),
    OpInfo("kthvalue_ties", lambda T, a, k: a.kthvalue(k),
           lambda rng, dt: [Sample(np.array([3., 1., 3., 1., 5., 2.], dt), 2)], differentiable=False),
]


def _errs_max():
    return [ErrorSample(Sample(np.zeros((3, 4)), 2), IndexError,
                        "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
            ErrorSample(Sample(np.zeros((0, 3))), RuntimeError, "Expected reduction dim to be specified"),
            ErrorSample(Sample(np.zeros((0, 3)), 0), IndexError, "Expected reduction dim 0 to have non-zero size")]


OPS.append(OpInfo("max_errors", lambda T, a, *d: T.max(a, *d), lambda rng, dt: [Sample(distinct(rng, (3,), dt), 0)],
                  differentiable=False, errors=_errs_max))
OPS.append(OpInfo("reduction_errors", lambda T, f, a, *args: getattr(T, f)(a, *args),
                  lambda rng, dt: [Sample("sum", arr(rng, (3,), dt))], differentiable=False,
                  errors=lambda: [
                      ErrorSample(Sample("mean", np.arange(3)), RuntimeError, "mean(): could not infer output dtype"),
                      ErrorSample(Sample("var", np.arange(3)), RuntimeError, "std and var only support floating"),
                      ErrorSample(Sample("std", np.arange(3)), RuntimeError, "std and var only support floating"),
                      ErrorSample(Sample("norm", np.arange(3)), RuntimeError,
                                  "linalg.vector_norm: Expected a floating point"),
                      ErrorSample(Sample("nanmean", np.arange(3)), RuntimeError, "nanmean(): expected input"),
                      ErrorSample(Sample("amax", np.zeros((0, 3))), RuntimeError,
                                  "amax(): Expected reduction dim to be specified"),
                      ErrorSample(Sample("amin", np.zeros((0, 3)), 0), IndexError,
                                  "amin(): Expected reduction dim 0 to have non-zero size."),
                      ErrorSample(Sample("argmax", np.zeros((0, 3))), IndexError,
                                  "argmax(): Expected reduction dim to be specified"),
                      ErrorSample(Sample("aminmax", np.zeros((0, 3))), RuntimeError, "cannot compute aminmax"),
                      ErrorSample(Sample("kthvalue", np.zeros((3, 4)), 5, 1), RuntimeError,
                                  "kthvalue(): selected number k out of range for dimension 1"),
                      ErrorSample(Sample("kthvalue", np.zeros((3, 4)), 0, 1), RuntimeError,
                                  "selected number k out of range"),
                      ErrorSample(Sample("kthvalue", np.zeros((0, 4)), 1, 0), IndexError,
                                  "kthvalue(): Expected reduction dim 0 to have non-zero size."),
                      ErrorSample(Sample("mode", np.zeros((0, 4)), 0), IndexError, "mode(): Expected reduction dim"),
                      ErrorSample(Sample("median", np.zeros((0, 4)), 0), IndexError, "median(): Expected reduction"),
                      ErrorSample(Sample("cumsum", np.zeros((3, 4)), 2), IndexError, "Dimension out of range"),
                      ErrorSample(Sample("sum", np.zeros((3, 4)), (0, 0)), RuntimeError,
                                  "dim 0 appears multiple times in the list of dims"),
                      ErrorSample(Sample("norm", np.zeros((0, 4)), float("inf")), RuntimeError,
                                  "cannot compute the inf norm on an empty tensor"),
                      ErrorSample(Sample("norm", np.zeros((3, 4)), "abc"), RuntimeError,
                                  "linalg.matrix_norm: Order abc not supported."),
                  ]))


def _histc_samples(rng, dt):
    """histc: default 100 bins over the data's range, explicit ranges (values outside ignored, NaN ignored),
    values exactly on bin edges (the last bin includes its right edge), one distinct value (the range widened
    by 1 each way), 0-d, empty, non-contiguous."""
    edges = np.linspace(0, 1, 11).astype(dt)
    return [Sample(arr(rng, (3, 4), dt), name="default"),
            Sample(arr(rng, (50,), dt), 7, -1, 1, name="range"),
            Sample(arr(rng, (50,), dt), bins=13, name="data_range"),
            Sample(edges, 10, 0, 1, name="on_edges"),
            Sample(np.array([1.0, np.nan, 3.0, -5.0, 9.0], dt), 4, 0, 4, name="nan_and_outside"),
            Sample(np.full((4,), 1.5, dt), 3, name="one_value"),
            Sample(np.array(2.0, dt), 2, name="0d"),
            Sample(np.zeros((0,), dt), 3, name="empty"),
            Sample(noncontig(arr(rng, (4, 3), dt)), 5, name="noncontig")]


def _histc_errors():
    return [ErrorSample(Sample(np.arange(3)), NotImplementedError, "\"histogram_cpu\" not implemented for 'Long'"),
            ErrorSample(Sample(np.ones(3), 0), RuntimeError, "bins must be > 0, but got 0"),
            ErrorSample(Sample(np.ones(3), 3, 2, 1), RuntimeError, "torch.histc: max must be larger than min"),
            ErrorSample(Sample(np.ones(3), 3, 0, float("inf")), RuntimeError,
                        "torch.histc: range of [0, inf] is not finite"),
            ErrorSample(Sample(np.array([1.0, np.nan])), RuntimeError, "is not finite")]


# histc is not differentiable: its inputs require grad, its result must not (checked against torch)
OPS += [OpInfo("histc", lambda T, a, *args, **kw: T.histc(a, *args, **kw), _histc_samples, gradcheck=False,
               gradgrad=False, errors=_histc_errors),
        OpInfo("Tensor.histc", lambda T, a, *args, **kw: a.histc(*args, **kw), _histc_samples, gradcheck=False,
               gradgrad=False, variant_of="histc")]


def _bincount_samples(rng, dt):
    x = np.array([1, 1, 3, 0, 7, 3, 3], np.int64)
    return [Sample(x, name="counts"), Sample(x, minlength=10, name="minlength"),
            Sample(x, rng.uniform(0, 1, 7).astype(dt), name="weights"),
            Sample(x, weights=rng.uniform(0, 1, 7).astype(dt), minlength=3, name="weights_kw"),
            Sample(np.zeros(0, np.int64), minlength=2, name="empty"),
            Sample(np.array([2, 0], np.int32), name="int32")]


def _bincount_errors():
    return [ErrorSample(Sample(np.array([-1])), RuntimeError, "bincount only supports 1-d non-negative integral inputs."),
            ErrorSample(Sample(np.array([[1]])), RuntimeError, "bincount only supports 1-d non-negative integral"),
            ErrorSample(Sample(np.array([1.0])), NotImplementedError, "\"bincount_cpu\" not implemented for 'Double'"),
            ErrorSample(Sample(np.array([True])), NotImplementedError, "\"bincount_cpu\" not implemented for 'Bool'"),
            ErrorSample(Sample(np.array([1]), np.ones(2)), RuntimeError,
                        "weights should be 1-d and have the same length as input"),
            ErrorSample(Sample(np.array([1]), minlength=-1), RuntimeError, "minlength should be >= 0")]


# bincount is not differentiable (weights that require grad give a NotImplemented grad_fn: test_grad_mode.py)
OPS += [OpInfo("bincount", lambda T, a, *args, **kw: T.bincount(a, *args, **kw), _bincount_samples,
               differentiable=False, errors=_bincount_errors),
        OpInfo("Tensor.bincount", lambda T, a, *args, **kw: a.bincount(*args, **kw), _bincount_samples,
               differentiable=False, variant_of="bincount")]


def _histogram_samples(rng, dt):
    a = arr(rng, (200,), dt)
    return [Sample(a, 7, name="bins"), Sample(a.reshape(10, 20), 10, range=(-1.0, 1.0), name="range_2d"),
            Sample(a, 3, density=True, name="density"), Sample(a, 4, weight=rng.uniform(0, 1, 200).astype(dt),
                                                               name="weight"),
            Sample(a, np.array([-1, -0.25, 0, 0.5, 2], dt), name="edges"),
            Sample(np.linspace(0, 1, 11).astype(dt), 10, name="on_edges"),
            Sample(np.array([1, np.nan, 2.5, 3], dt), 3, range=(0.0, 4.0), name="nan"),
            Sample(np.full(4, 2, dt), 3, name="one_value"),
            Sample(np.zeros(0, dt), 3, name="empty"), Sample(noncontig(arr(rng, (4, 3), dt)), 5, name="noncontig")]


def _histogram_errors():
    return [ErrorSample(Sample(np.arange(3), 3), NotImplementedError, "\"histogramdd\" not implemented for 'Long'"),
            ErrorSample(Sample(np.ones(3), 0), RuntimeError, "torch.histogram(): bins must be > 0, but got 0 for "
                                                             "dimension 0"),
            ErrorSample(Sample(np.ones(3), 3, range=(3.0, 1.0)), RuntimeError,
                        "torch.histogramdd: min should not exceed max, but got min 3 max 1 for dimension 0"),
            ErrorSample(Sample(np.ones(3), 3, range=(0.0, float("inf"))), RuntimeError,
                        "torch.histogramdd: dimension 0's range [0, inf] is not finite"),
            ErrorSample(Sample(np.array([1.0, np.nan]), 3), RuntimeError, "range [nan, nan] is not finite"),
            ErrorSample(Sample(np.ones(5), 3, weight=np.ones(2)), RuntimeError,
                        "but got input with shape [5, 1] and weight with shape [2]"),
            ErrorSample(Sample(np.ones(2), 3, weight=np.ones(2, np.float32)), RuntimeError,
                        "input(double), and weight(float)"),
            ErrorSample(Sample(np.ones(2), np.array([0.0, 3.0], np.float32)), RuntimeError,
                        "input with dtype double and bins for dimension 0 with dtype float")]


# histogram is not differentiable: inputs that require grad give a NotImplemented grad_fn (as bincount)
OPS += [OpInfo("histogram", lambda T, a, *args, **kw: T.histogram(a, *args, **kw), _histogram_samples,
               differentiable=False, errors=_histogram_errors),
        OpInfo("Tensor.histogram", lambda T, a, *args, **kw: a.histogram(*args, **kw), _histogram_samples,
               differentiable=False, variant_of="histogram")]
