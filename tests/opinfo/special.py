"""Op table rows: the gamma family, the Bessel functions and torch.special (ops/special*.py).

Domain-restricted ops get samples inside their domain (away from the poles of lgamma / digamma /
polygamma at 0, -1, -2, ...; mvlgamma above (p - 1) / 2).  Edge values (poles, infinities, nan, large
arguments) are separate non-differentiable rows.  Tolerances: float32 results of the series (digamma's
recurrence, zeta's sums) are compared at rtol 1e-5 (PyTorch computes some of them in float32 arithmetic).
"""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, arr, noncontig


def _pos(low=0.3, high=5.0, neg=False):
    """Unary samples in [low, high); with `neg`, also negative non-integers (between the poles)."""
    def gen(rng, dt):
        def A(shape):
            return arr(rng, shape, dt, low, high)
        out = [Sample(A(()), name="0d"), Sample(A((5,)), name="1d"), Sample(A((0, 3)), name="empty"),
               Sample(noncontig(A((4, 3))), name="noncontig")]
        if neg:
            out.append(Sample(np.array([-2.5, -1.3, -0.6, -3.7, 0.4], dt), name="negative"))
        return out
    return gen


def _edge(rng, dt):
    a = np.array([0.0, -0.0, -1.0, -2.0, 1.0, 2.0, 0.5, -2.5, 10.0, 1e-30, 1e10, -1e10, np.inf, -np.inf, np.nan,
                  35.0, 171.5], dt)
    return [Sample(a, name="edge")]


def _ip(fn):
    """The in-place method applied to a clone (so the leaf can require grad)."""
    def op(T, a, *args, **kw):
        return getattr(a.clone(), fn)(*args, **kw)
    return op


def _int_samples(rng, dt):
    return [Sample(np.arange(1, 6).astype(dt), name="ints")]


def _cast_error():
    return [ErrorSample(Sample(np.arange(1, 4)), RuntimeError, "can't be cast to the desired output type Long")]


TOL = dict(atol=1e-5, rtol=1e-5)
OPS = []

# name, torch call, sample generator (for the functional, method and in-place forms)
_UNARY = [
    ("lgamma", _pos(0.2, 6.0, neg=True)), ("digamma", _pos(0.2, 6.0, neg=True)),
    ("i0", _pos(-5.0, 5.0)), ("sinc", _pos(-3.0, 3.0)),
]
for _n, _g in _UNARY:
    OPS.append(OpInfo(_n, (lambda n: lambda T, a: getattr(T, n)(a))(_n), _g, **TOL))
    OPS.append(OpInfo(f"Tensor.{_n}", (lambda n: lambda T, a: getattr(a, n)())(_n), _g, variant_of=_n, **TOL))
    OPS.append(OpInfo(f"{_n}_", _ip(f"{_n}_"), _g, errors=_cast_error, **TOL))
    OPS.append(OpInfo(f"{_n}_int", (lambda n: lambda T, a: getattr(T, n)(a))(_n), _int_samples,
                      dtypes=("int64", "uint8"), differentiable=False))
    OPS.append(OpInfo(f"{_n}_edge", (lambda n: lambda T, a: getattr(T, n)(a))(_n), _edge, differentiable=False,
                      **TOL))

OPS.append(OpInfo("sinc_zero", lambda T, a: T.sinc(a),
                  lambda rng, dt: [Sample(np.array([0.0, 1.0, -2.0, 0.25], dt), name="zero")], **TOL))


def _poly_samples(n):
    base = _pos(0.3, 5.0)

    def gen(rng, dt):
        out = base(rng, dt)
        for s in out:
            s.args = (n,) + s.args
        return out
    return gen


def _poly_errors():
    a = np.array([1.0, 2.0])
    return [ErrorSample(Sample(-1, a), RuntimeError, "does not support negative n"),
            ErrorSample(Sample(1.0, a), TypeError, "must be int, not float")]


for _k in (0, 1, 2, 3):
    OPS.append(OpInfo(f"polygamma_{_k}", lambda T, n, a: T.polygamma(n, a), _poly_samples(_k),
                      errors=_poly_errors if _k == 0 else (lambda: []), **TOL))
OPS.append(OpInfo("Tensor.polygamma", lambda T, n, a: a.polygamma(n), _poly_samples(2), variant_of="polygamma", **TOL))
OPS.append(OpInfo("polygamma_", lambda T, n, a: a.clone().polygamma_(n), _poly_samples(1), **TOL))
OPS.append(OpInfo("polygamma_edge", lambda T, a: T.stack([T.polygamma(k, a) for k in (1, 2, 3, 6)]), _edge,
                  differentiable=False, **TOL))


def _mv_samples(rng, dt):
    return [Sample(arr(rng, (5,), dt, 1.2, 5.0), 1, name="p1"), Sample(arr(rng, (3, 2), dt, 1.2, 5.0), 3, name="p3"),
            Sample(arr(rng, (), dt, 1.2, 5.0), 2, name="0d")]


def _mv_errors():
    a = np.array([2.5, 3.0])
    return [ErrorSample(Sample(a, 0), RuntimeError, "p has to be greater than or equal to 1"),
            ErrorSample(Sample(a, 1.5), TypeError, "must be int, not float")]


OPS += [
    OpInfo("mvlgamma", lambda T, a, p: T.mvlgamma(a, p), _mv_samples, errors=_mv_errors, **TOL),
    OpInfo("Tensor.mvlgamma", lambda T, a, p: a.mvlgamma(p), _mv_samples, variant_of="mvlgamma", **TOL),
    OpInfo("mvlgamma_", lambda T, a, p: a.clone().mvlgamma_(p), _mv_samples, **TOL),
    OpInfo("mvlgamma_int", lambda T, a: T.mvlgamma(a, 2), _int_samples, dtypes=("int64",), differentiable=False),
]


# -- torch.special ---------------------------------------------------------------------------------------
def _sp(name):
    return lambda T, *a, **k: getattr(T.special, name)(*a, **k)


_SPECIAL_UNARY = [
    # torch.special name, domain
    ("gammaln", (0.2, 6.0)), ("digamma", (0.2, 6.0)), ("psi", (0.2, 6.0)), ("i0", (-5.0, 5.0)),
    ("i0e", (-12.0, 12.0)), ("i1", (-12.0, 12.0)), ("i1e", (-12.0, 12.0)), ("sinc", (-3.0, 3.0)),
    ("entr", (0.1, 3.0)), ("erfcx", (-3.0, 10.0)), ("ndtr", (-4.0, 4.0)), ("ndtri", (0.02, 0.98)),
    ("log_ndtr", (-8.0, 4.0)), ("expit", (-4.0, 4.0)), ("logit", (0.1, 0.9)), ("erf", (-2.0, 2.0)),
    ("erfc", (-2.0, 2.0)), ("erfinv", (-0.9, 0.9)), ("exp2", (-2.0, 2.0)), ("expm1", (-2.0, 2.0)),
    ("log1p", (-0.8, 3.0)), ("round", (0.1, 0.4)),
]
for _n, (_lo, _hi) in _SPECIAL_UNARY:
    OPS.append(OpInfo(f"special.{_n}", _sp(_n), _pos(_lo, _hi), **TOL))


def _special_edge(rng, dt):
    a = np.array([0.0, -0.0, -1.0, 1.0, 0.5, -2.5, 8.0, -8.0, 9.0, 30.0, -30.0, 1e-30, 1e10, -1e10, np.inf, -np.inf,
                  np.nan, 0.999, 1e-20, 60.0, -40.0], dt)
    return [Sample(a, name="edge")]


for _n in ("i0e", "i1", "i1e", "entr", "erfcx", "ndtr", "ndtri", "log_ndtr"):
    OPS.append(OpInfo(f"special.{_n}_edge", _sp(_n), _special_edge, differentiable=False, **TOL))
    OPS.append(OpInfo(f"special.{_n}_int", _sp(_n), _int_samples, dtypes=("int64",), differentiable=False))

OPS += [
    OpInfo("special.polygamma", _sp("polygamma"), _poly_samples(1), **TOL),
    OpInfo("special.multigammaln", _sp("multigammaln"), _mv_samples, **TOL),
    OpInfo("special.softmax", lambda T, a: T.special.softmax(a, -1), _pos(-2.0, 2.0), **TOL),
    OpInfo("special.log_softmax", lambda T, a: T.special.log_softmax(a, 0, dtype=T.float64), _pos(-2.0, 2.0),
           **TOL),
    OpInfo("special.logsumexp", lambda T, a: T.special.logsumexp(a, 0), _pos(-2.0, 2.0), **TOL),
    OpInfo("special.round_decimals", lambda T, a: T.special.round(a, decimals=1), _pos(0.11, 0.14), **TOL),
]


def _two(low_a, high_a, low_b, high_b, scalars=True):
    """Two-operand samples: same shape, broadcasting, a number on either side (with `scalars`)."""
    def gen(rng, dt):
        def A(s):
            return arr(rng, s, dt, low_a, high_a)

        def B(s):
            return arr(rng, s, dt, low_b, high_b)
        out = [Sample(A((3, 4)), B((3, 4)), name="same"), Sample(A((3, 1)), B((4,)), name="bcast"),
               Sample(A(()), B((3,)), name="0d_a"), Sample(A((0, 2)), B((2,)), name="empty")]
        if scalars:
            out += [Sample(float(np.round(A(()), 2)), B((5,)), name="scalar_a"),
                    Sample(A((5,)), float(np.round(B(()), 2)), name="scalar_b")]
        return out
    return gen


def _no_grad_a(gen):
    """The samples of gen with the first operand not requiring grad (zeta: no derivative in x)."""
    from .core import NoGrad

    def g(rng, dt):
        out = gen(rng, dt)
        for s in out:
            if isinstance(s.args[0], np.ndarray):
                s.args = (NoGrad(s.args[0]),) + s.args[1:]
        return out
    return g


def _ints_two(rng, dt):
    return [Sample(np.arange(1, 5).astype(dt), np.arange(2, 6).astype(dt), name="ints")]


OPS += [
    OpInfo("special.xlog1py", _sp("xlog1py"), _two(-2.0, 2.0, -0.8, 3.0), **TOL),
    OpInfo("special.xlog1py_zero", _sp("xlog1py"),
           lambda rng, dt: [Sample(np.array([0.0, 0.0, 1.0, 2.0], dt), np.array([-1.0, 2.0, np.nan, -1.0], dt))],
           differentiable=False, **TOL),
    OpInfo("special.xlog1py_int", _sp("xlog1py"), _ints_two, dtypes=("int64",), differentiable=False),
    OpInfo("special.zeta", _sp("zeta"), _no_grad_a(_two(1.5, 5.0, 0.5, 4.0)), **TOL),
    OpInfo("special.zeta_edge", _sp("zeta"),
           lambda rng, dt: [Sample(np.array([1.0, 0.5, 2.0, 3.0, 2.5, 2.0, 4.0, np.inf, 2.0, np.nan], dt),
                                   np.array([1.0, 1.0, 0.0, -2.0, -1.5, -1.5, np.inf, 2.0, 1e-8, 1.0], dt))],
           differentiable=False, **TOL),
    OpInfo("special.zeta_int", _sp("zeta"), _ints_two, dtypes=("int64",), differentiable=False),
    OpInfo("special.gammainc", _sp("gammainc"), _no_grad_a(_two(0.5, 5.0, 0.1, 6.0, False)), **TOL,
           errors=lambda: [ErrorSample(Sample(np.array([1.0]), 2.0), TypeError, "special_gammainc(): argument 'other'")]),
    OpInfo("special.gammaincc", _sp("gammaincc"), _no_grad_a(_two(0.5, 5.0, 0.1, 6.0, False)), **TOL),
    OpInfo("igamma", lambda T, a, b: T.igamma(a, b), _no_grad_a(_two(0.5, 30.0, 0.1, 40.0, False)), **TOL),
    OpInfo("Tensor.igammac", lambda T, a, b: a.igammac(b), _no_grad_a(_two(0.5, 30.0, 0.1, 40.0, False)),
           variant_of="igammac", **TOL),
    OpInfo("igamma_edge", lambda T, a, b: T.stack([T.igamma(a, b), T.igammac(a, b)]),
           lambda rng, dt: [Sample(np.array([0.0, 0.0, 1.0, -1.0, 1.0, np.inf, np.inf, 2.0, 1e-3, 100.0, 250.0], dt),
                                   np.array([1.0, 0.0, 0.0, 1.0, -1.0, 1.0, np.inf, np.inf, 1e-3, 101.0, 240.0], dt))],
           differentiable=False, **TOL),
    OpInfo("igamma_int", lambda T, a, b: T.igamma(a, b), lambda rng, dt: [], dtypes=("int64",),
           differentiable=False, errors=lambda: [ErrorSample(Sample(np.arange(1, 3), np.arange(1, 3)),
                                                             NotImplementedError, "not implemented for 'Long'")]),
]


# -- no derivative in torch (results never require grad): the Bessel / Airy functions, the polynomials --------
_BESSEL = [
    # name, domain (float32 tolerance 1e-4: PyTorch's float32 arithmetic near the zeros)
    ("bessel_j0", (-20.0, 20.0)), ("bessel_j1", (-20.0, 20.0)), ("bessel_y0", (0.1, 20.0)), ("bessel_y1", (0.1, 20.0)),
    ("modified_bessel_i0", (-10.0, 10.0)), ("modified_bessel_i1", (-10.0, 10.0)), ("modified_bessel_k0", (0.1, 10.0)),
    ("modified_bessel_k1", (0.1, 10.0)), ("scaled_modified_bessel_k0", (0.1, 10.0)),
    ("scaled_modified_bessel_k1", (0.1, 10.0)), ("spherical_bessel_j0", (-10.0, 10.0)), ("airy_ai", (-10.0, 10.0)),
]
LOOSE = dict(atol=1e-4, rtol=1e-4)
for _n, (_lo, _hi) in _BESSEL:
    OPS.append(OpInfo(f"special.{_n}", _sp(_n), _pos(_lo, _hi), differentiable=False, **LOOSE))
    OPS.append(OpInfo(f"special.{_n}_edge", _sp(_n), _special_edge, differentiable=False, **LOOSE))
OPS.append(OpInfo("special.bessel_j0_int", _sp("bessel_j0"), _int_samples, dtypes=("int64",), differentiable=False))


def _poly(low, high, nmax):
    """(x, n) samples: n a number (several degrees, the trigonometric forms above 6 / 8 included), an integer
    tensor, a float tensor (truncated), negative; x a number with n a tensor."""
    def gen(rng, dt):
        x = arr(rng, (7,), dt, low, high)
        ends = np.array([low, high, 0.0, 1.0, -1.0, 0.5], dt).clip(low, high)
        out = [Sample(NoGradArr(x), k, name=f"n{k}") for k in (0, 1, 2, 5, nmax)]
        out += [Sample(NoGradArr(x), Idx(np.array([0, 1, 3, 4, nmax, -1, 2])), name="n_tensor"),
                Sample(NoGradArr(x), NoGradArr(np.array([0.0, 1.5, 3.7, 2.0, -1.0, 6.9, 4.0], dt)), name="n_float"),
                Sample(NoGradArr(ends), 4, name="ends"), Sample(0.25, Idx(np.arange(0, 7)), name="x_number")]
        return out
    return gen


from .core import NoGrad as NoGradArr, Idx  # noqa: E402

_POLYS = [("chebyshev_polynomial_t", -1.0, 1.0, 12), ("chebyshev_polynomial_u", -1.0, 1.0, 12),
          ("chebyshev_polynomial_v", -1.0, 1.0, 12), ("chebyshev_polynomial_w", -1.0, 1.0, 12),
          ("shifted_chebyshev_polynomial_t", 0.0, 1.0, 9), ("shifted_chebyshev_polynomial_u", 0.0, 1.0, 9),
          ("shifted_chebyshev_polynomial_v", 0.0, 1.0, 9), ("shifted_chebyshev_polynomial_w", 0.0, 1.0, 9),
          ("hermite_polynomial_h", -1.5, 1.5, 6), ("hermite_polynomial_he", -1.5, 1.5, 6),
          ("laguerre_polynomial_l", -2.0, 4.0, 8), ("legendre_polynomial_p", -1.0, 1.0, 10)]
for _n, _lo, _hi, _nmax in _POLYS:
    OPS.append(OpInfo(f"special.{_n}", _sp(_n), _poly(_lo, _hi, _nmax), differentiable=False, **LOOSE))
OPS.append(OpInfo("special.chebyshev_polynomial_t_int", _sp("chebyshev_polynomial_t"),
                  lambda rng, dt: [Sample(np.arange(-2, 3).astype(dt), 3)], dtypes=("int64",), differentiable=False))
OPS.append(OpInfo("special.hermite_polynomial_h_limit", _sp("hermite_polynomial_h"),
                  lambda rng, dt: [Sample(NoGradArr(np.array([0.1, -0.2], dt)), 600)], differentiable=False))
