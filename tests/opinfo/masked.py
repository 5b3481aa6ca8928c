"""Op table rows: torch.masked's reductions and normalisations (glassgrad/masked/_ops.py), each with a
boolean mask (full shape and broadcast) that leaves every reduced slice at least two elements."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, Idx, arr


def _mask(rng, shape):
    """A random mask whose slices along any axis keep their first two elements (two in every reduction)."""
    m = rng.random(shape) > 0.5
    m[:2] = True
    if len(shape) >= 2:
        m[:, :2] = True
    return m


def _distinct(rng, shape, dt):
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) / 4.0 - 1.0).astype(dt)


def _red_samples(gen=arr, dims=True):
    def f(rng, dt):
        x, x3 = gen(rng, (4, 5), dt), gen(rng, (3, 4, 2), dt)
        out = [Sample(x, Idx(_mask(rng, (4, 5))), name="full")]
        if dims:
            out += [Sample(x, Idx(_mask(rng, (4, 5))), 1, name="dim1"),
                    Sample(x, Idx(_mask(rng, (4, 5))), 0, keepdim=True, name="dim0_keepdim"),
                    Sample(x3, Idx(_mask(rng, (3, 4, 2))), (0, 2), name="dims"),
                    Sample(x, Idx(np.array([True, True, False, True, False])), -1, name="mask_broadcast_row"),
                    Sample(x, Idx(np.array([[True], [True], [False], [True]])), 0, name="mask_broadcast_col")]
        return out
    return f


def _norm_samples(rng, dt):
    x = arr(rng, (4, 5), dt)
    return [Sample(x, Idx(_mask(rng, (4, 5))), o, 1, name=f"ord{o}") for o in (2.0, 1, 3.5)] + \
        [Sample(x, Idx(_mask(rng, (4, 5))), name="default")]


def _norm_inf_samples(rng, dt):
    x = _distinct(rng, (4, 5), dt)
    return [Sample(x, Idx(_mask(rng, (4, 5))), o, 1, name=f"ord{o}") for o in (float("inf"), float("-inf"))]


def _dim_samples(rng, dt):
    x = arr(rng, (4, 5), dt)
    return [Sample(x, Idx(_mask(rng, (4, 5))), 1, name="dim1"), Sample(x, Idx(_mask(rng, (4, 5))), 0, name="dim0"),
            Sample(x, Idx(np.array([True, False, True, True, False])), -1, name="mask_broadcast")]


def _pos_dim_samples(rng, dt):
    return [Sample(s.args[0] * 0.5 + np.asarray(1.25, dt), *s.args[1:], name=s.name) for s in _dim_samples(rng, dt)]


def _masked(name, **fixed):
    def op(T, a, m, *d, **k):
        return getattr(T.masked, name)(a, *d, mask=m, **fixed, **k)
    return op


def _errors(name, *lead, repeat="dim=1 appears multiple times in the list of dims"):
    x = np.ones((2, 3), np.float32)
    m = np.ones((2, 3), bool)
    return lambda: [
        ErrorSample(Sample(x, Idx(m), *lead, (1, 1)), RuntimeError, repeat),
        ErrorSample(Sample(x, Idx(m), *lead, 2), IndexError,
                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        ErrorSample(Sample(x, Idx(np.ones((1, 2, 3), bool)), *lead, 1), IndexError,
                    "_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)")]


OPS = [
    OpInfo("masked.sum", _masked("sum"), _red_samples(), errors=_errors("sum")),
    OpInfo("masked.prod", _masked("prod"), _red_samples()),
    OpInfo("masked.amax", _masked("amax"), _red_samples(gen=_distinct), errors=_errors("amax")),
    OpInfo("masked.amin", _masked("amin"), _red_samples(gen=_distinct)),
    OpInfo("masked.argmax", _masked("argmax"), lambda rng, dt: [s for s in _red_samples(gen=_distinct)(rng, dt)
                                                               if s.name != "dims"], differentiable=False),
    OpInfo("masked.argmin", _masked("argmin"), lambda rng, dt: [s for s in _red_samples(gen=_distinct)(rng, dt)
                                                               if s.name != "dims"], differentiable=False),
    OpInfo("masked.mean", _masked("mean"), _red_samples(), errors=_errors("mean", repeat="appears multiple times in the list of dims")),
    OpInfo("masked.median", _masked("median"), lambda rng, dt: [s for s in _red_samples(gen=_distinct)(rng, dt)
                                                               if s.name not in ("dims", "full")]),
    OpInfo("masked.logsumexp", _masked("logsumexp"), _red_samples()),
    OpInfo("masked.norm", _masked("norm"), _norm_samples),
    OpInfo("masked.norm_inf", _masked("norm"), _norm_inf_samples),
    OpInfo("masked.var", _masked("var"), _red_samples()),
    OpInfo("masked.var_correction", _masked("var", correction=0), _red_samples()),
    OpInfo("masked.std", _masked("std"), _red_samples()),
    OpInfo("masked.std_unbiased", _masked("std", unbiased=False), _red_samples()),
    OpInfo("masked.softmax", _masked("softmax"), _dim_samples),
    OpInfo("masked.log_softmax", _masked("log_softmax"), _dim_samples, gradcheck=False),   # -inf where masked out
    OpInfo("masked.softmin", _masked("softmin"), _dim_samples),
    OpInfo("masked.normalize", lambda T, a, m, d: T.masked.normalize(a, 2.0, d, mask=m), _dim_samples),
    OpInfo("masked.normalize_ord1", lambda T, a, m, d: T.masked.normalize(a, 1.0, d, mask=m, eps=1e-6),
           _pos_dim_samples),
    OpInfo("masked.cumsum", _masked("cumsum"), _dim_samples),
    OpInfo("masked.cumprod", _masked("cumprod"), _dim_samples),
    OpInfo("masked.logaddexp", lambda T, a, b, m, n: T.masked.logaddexp(a, b, input_mask=m, other_mask=n),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (3, 4), dt), Idx(_mask(rng, (3, 4))),
                                   Idx(np.ones((3, 4), bool)), name="masks")]),
]
