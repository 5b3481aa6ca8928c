"""Op table rows: sorting and selection (ops/sorting.py)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, noncontig
from .reduction import distinct


def _sort_samples(rng, dt):
    D = lambda s: distinct(rng, s, dt)  # noqa: E731
    return [Sample(D((3, 4)), name="default"), Sample(D((3, 4)), 0, name="dim0"),
            Sample(D((3, 4)), -1, True, name="descending"), Sample(D((2, 3, 4)), 1, name="3d"),
            Sample(noncontig(D((4, 3))), 0, True, name="noncontig"), Sample(D(()), name="0d"),
            Sample(D((0, 3)), 1, name="empty"), Sample(D((5,)), descending=True, name="1d_kw")]


def _kw(samples):
    """The same samples with dim/descending as keywords (the stable=True overload takes no positionals)."""
    out = []
    for s in samples:
        kw = dict(zip(("dim", "descending"), s.args[1:]))
        kw.update(s.kwargs)
        out.append(Sample(s.args[0], name=s.name, **kw))
    return out


def _ties(rng, s, dt):
    return rng.integers(-2, 3, size=s).astype(dt)


def _topk_samples(rng, dt):
    D = lambda s: distinct(rng, s, dt)  # noqa: E731
    return [Sample(D((3, 5)), 2, name="default"), Sample(D((3, 5)), 3, 0, name="dim0"),
            Sample(D((3, 5)), 2, -1, False, name="smallest"), Sample(D((2, 3, 4)), 4, 2, name="full_k"),
            Sample(D((6,)), 0, name="k0"), Sample(D(()), 1, name="0d"),
            Sample(noncontig(D((4, 3))), 2, 0, name="noncontig"), Sample(D((0, 3)), 2, 1, name="empty"),
            Sample(D((3, 5)), 2, largest=False, name="kw")]


OPS = [
    OpInfo("sort", lambda T, a, *args, **kw: T.sort(a, *args, **kw), _sort_samples),
    OpInfo("Tensor.sort", lambda T, a, *args, **kw: a.sort(*args, **kw), _sort_samples, variant_of="sort"),
    OpInfo("sort_stable", lambda T, a, **kw: T.sort(a, stable=True, **kw),
           lambda rng, dt: _kw(_sort_samples(rng, dt))),
    OpInfo("sort_stable_ties", lambda T, a, **kw: T.sort(a, stable=True, **kw),
           lambda rng, dt: [Sample(_ties(rng, (3, 8), dt)), Sample(_ties(rng, (3, 8), dt), dim=0, descending=True),
                            Sample(_ties(rng, (10,), dt), descending=True)],
           differentiable=False, dtypes=("float32", "int64", "bool")),
    OpInfo("sort_nan", lambda T, a, **kw: T.sort(a, stable=True, **kw),
           lambda rng, dt: [Sample(np.array([3., np.nan, 1., np.nan, 2.], dt)),
                            Sample(np.array([3., np.nan, 1., np.nan, 2.], dt), dim=0, descending=True)],
           differentiable=False),
    OpInfo("argsort", lambda T, a, *args, **kw: T.argsort(a, *args, **kw), _sort_samples, differentiable=False),
    OpInfo("argsort_stable_ties", lambda T, a, **kw: T.argsort(a, stable=True, **kw),
           lambda rng, dt: [Sample(_ties(rng, (3, 8), dt)), Sample(_ties(rng, (3, 8), dt), dim=0, descending=True)],
           differentiable=False, dtypes=("float32", "int64")),
    OpInfo("msort", lambda T, a: T.msort(a),
           lambda rng, dt: [Sample(distinct(rng, (4, 3), dt)), Sample(distinct(rng, (5,), dt)),
                            Sample(distinct(rng, (0, 2), dt))]),
    OpInfo("topk", lambda T, a, *args, **kw: T.topk(a, *args, **kw), _topk_samples),
    OpInfo("Tensor.topk", lambda T, a, *args, **kw: a.topk(*args, **kw), _topk_samples, variant_of="topk"),
    OpInfo("topk_values", lambda T, a, k: T.topk(a, k)[0] * 2,
           lambda rng, dt: [Sample(distinct(rng, (4, 6), dt), 3)]),
    OpInfo("topk_int", lambda T, a, k: T.topk(a, k),
           lambda rng, dt: [Sample(rng.permutation(12).reshape(3, 4).astype(dt), 2)],
           differentiable=False, dtypes=("int64", "int32")),
    OpInfo("sorting_errors", lambda T, f, a, *args: getattr(T, f)(a, *args),
           lambda rng, dt: [Sample("sort", distinct(rng, (3,), dt))], differentiable=False,
           errors=lambda: [
               ErrorSample(Sample("topk", np.zeros((3, 4)), 5), RuntimeError, "selected index k out of range"),
               ErrorSample(Sample("topk", np.zeros((3, 4)), -1), RuntimeError, "selected index k out of range"),
               ErrorSample(Sample("sort", np.zeros((3, 4)), 2), IndexError,
                           "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
               ErrorSample(Sample("argsort", np.zeros((3, 4)), -3), IndexError, "Dimension out of range"),
               ErrorSample(Sample("topk", np.zeros((3, 4)), 1, 3), IndexError, "Dimension out of range"),
           ]),
]


def _rep_samples(rng, dt):
    a = np.array([[3, 1, 2], [3, 1, 2], [0, 5, 5], [3, 1, 2]], dt)
    return [Sample(a), Sample(a.T.copy(), name="t"), Sample(np.array(4, dt), name="0d"), Sample(np.zeros((0,), dt))]


OPS += [
    OpInfo("unique", lambda T, a: (T.unique(a), T.unique(a, return_inverse=True, return_counts=True),
                                   T.unique(a, sorted=False, return_counts=True)), _rep_samples, differentiable=False),
    OpInfo("unique_dim", lambda T, a: (T.unique(a, dim=0, return_inverse=True, return_counts=True),
                                       a.unique(dim=-1, return_inverse=True)), lambda rng, dt: _rep_samples(rng, dt)[:2],
           differentiable=False),
    OpInfo("unique_consecutive", lambda T, a: (T.unique_consecutive(a, return_inverse=True, return_counts=True),
                                               T.unique_consecutive(a, dim=0), a.unique_consecutive(dim=1)),
           lambda rng, dt: _rep_samples(rng, dt)[:2], differentiable=False),
]
