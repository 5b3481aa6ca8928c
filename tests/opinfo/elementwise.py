"""Op table rows: element-wise arithmetic and math (ops/arithmetic.py, unary.py, binary.py, ternary.py,
softmax.py)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, unary_samples, binary_samples, arr, noncontig, away_from_zero

OPS = [
    OpInfo("add", lambda T, a, b: T.add(a, b), binary_samples()),
    OpInfo("add_alpha", lambda T, a, b: T.add(a, b, alpha=2), binary_samples(scalar=False)),
    OpInfo("sub", lambda T, a, b: a - b, binary_samples()),
    OpInfo("rsub", lambda T, a: 2.5 - a, unary_samples()),
    OpInfo("mul", lambda T, a, b: a * b, binary_samples()),
    OpInfo("div", lambda T, a, b: a / b, binary_samples(b_low=0.5, b_high=2.0)),
    OpInfo("rdiv", lambda T, a: 2.0 / a, unary_samples(low=0.5, high=2.0)),
    OpInfo("neg", lambda T, a: -a, unary_samples()),
    OpInfo("exp", lambda T, a: T.exp(a), unary_samples()),
    OpInfo("log", lambda T, a: T.log(a), unary_samples(low=0.1, high=3.0)),
    OpInfo("sqrt", lambda T, a: T.sqrt(a), unary_samples(low=0.1, high=3.0)),
    OpInfo("pow_scalar", lambda T, a: a ** 3, unary_samples()),
    OpInfo("pow_tensor", lambda T, a, b: T.pow(a, b), binary_samples(low=0.5, high=2.0, scalar=False)),
    OpInfo("rpow", lambda T, a: 2.0 ** a, unary_samples()),
    # a number to an integer tensor's power: torch's integer pow (negative exponents: 0, or +-1 for a base of
    # +-1), the base wrapped into the tensor's dtype ((-3) ** uint8), no pow of bools
    OpInfo("rpow_int", lambda T, base, a: base ** a,
           lambda rng, dt: [Sample(b, np.array([-3, -2, -1, 0, 1, 2, 5]), name=f"base{b}") for b in (2, 1, -1, 0, -3)]
           + [Sample(-3, np.arange(5, dtype=np.uint8), name="uint8_wraps"), Sample(300, np.arange(4, dtype=np.uint8)),
              Sample(2, np.array([True, False]), name="bool_exponent"), Sample(2.5, np.array([1, 2]), name="float_base")],
           dtypes=("int64",), differentiable=False,
           errors=lambda: [ErrorSample(Sample(True, np.array([True, False])), NotImplementedError,
                                       "\"pow\" not implemented for 'Bool'")]),
    OpInfo("where", lambda T, c, a, b: T.where(c > 0, a, b),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (3, 4), dt), arr(rng, (4,), dt))]),
]


def _int_err(name, call):
    """In-place float op on an integer tensor: PyTorch refuses the cast."""
    return lambda: [ErrorSample(Sample(np.arange(3)), RuntimeError, "result type Float can't be cast to the "
                                                                    "desired output type Long")]


def _ip(fn):
    """The in-place method applied to a clone (so the leaf can require grad)."""
    def op(T, a, *args, **kw):
        return getattr(a.clone(), fn)(*args, **kw)
    return op


# name, torch function, domain (low, high), kink at 0?
_UNARY = [
    ("abs", (-2, 2), 0), ("absolute", (-2, 2), 0), ("sign", (-2, 2), 0), ("sgn", (-2, 2), 0),
    ("exp2", (-2, 2), None), ("expm1", (-2, 2), None), ("log2", (0.1, 3), None), ("log10", (0.1, 3), None),
    ("log1p", (-0.8, 3), None), ("rsqrt", (0.2, 3), None), ("sin", (-3, 3), None), ("cos", (-3, 3), None),
    ("tan", (-1.2, 1.2), None), ("asin", (-0.9, 0.9), None), ("acos", (-0.9, 0.9), None),
    ("atan", (-3, 3), None), ("arcsin", (-0.9, 0.9), None), ("arccos", (-0.9, 0.9), None),
    ("arctan", (-3, 3), None), ("sinh", (-2, 2), None), ("cosh", (-2, 2), None), ("tanh", (-2, 2), None),
    ("asinh", (-3, 3), None), ("acosh", (1.2, 4), None), ("atanh", (-0.9, 0.9), None),
    ("sigmoid", (-4, 4), None), ("logit", (0.1, 0.9), None), ("erf", (-2, 2), None), ("erfc", (-2, 2), None),
    ("erfinv", (-0.9, 0.9), None), ("reciprocal", (0.3, 3), None), ("square", (-2, 2), None),
    ("floor", (-3, 3), None), ("ceil", (-3, 3), None), ("round", (-3, 3), None), ("trunc", (-3, 3), None),
    ("fix", (-3, 3), None), ("frac", (-3, 3), None), ("relu", (-2, 2), 0), ("deg2rad", (-180, 180), None),
    ("rad2deg", (-3, 3), None), ("nan_to_num", (-2, 2), None), ("negative", (-2, 2), None),
]
_INPLACE = ["abs", "sign", "rsqrt", "sin", "cos", "tanh", "sigmoid", "reciprocal", "square", "floor", "ceil",
            "round", "trunc", "frac", "relu", "exp", "log", "sqrt", "nan_to_num", "neg"]
_FLOAT_ONLY = {"rsqrt", "sin", "cos", "tanh", "sigmoid", "reciprocal", "exp", "log", "sqrt"}
_DOM = {n: (lo, hi, k) for n, (lo, hi), k in _UNARY}
_DOM.update(exp=(-2, 2, None), log=(0.1, 3, None), sqrt=(0.1, 3, None), neg=(-2, 2, None))


def _frac_safe(lo, hi):
    """Samples kept away from integers (kinks of floor, ceil, round, frac)."""
    base = unary_samples(lo, hi)

    def gen(rng, dt):
        out = base(rng, dt)
        for s in out:
            a = s.args[0]
            fr = a - np.round(a)
            s.args = (np.where(np.abs(fr) < 0.1, a + 0.25, a).astype(a.dtype),)
        return out
    return gen


for _n, (_lo, _hi), _k in _UNARY:
    _g = _frac_safe(_lo, _hi) if _n in ("floor", "ceil", "round", "trunc", "fix", "frac") else \
        unary_samples(_lo, _hi, kink=_k)
    OPS.append(OpInfo(_n, (lambda n: lambda T, a: getattr(T, n)(a))(_n), _g))
    OPS.append(OpInfo(f"Tensor.{_n}", (lambda n: lambda T, a: getattr(a, n)())(_n), _g, variant_of=_n))
for _n in _INPLACE:
    _lo, _hi, _k = _DOM[_n]
    _g = _frac_safe(_lo, _hi) if _n in ("floor", "ceil", "round", "trunc", "frac") else unary_samples(_lo, _hi, kink=_k)
    OPS.append(OpInfo(f"{_n}_", _ip(f"{_n}_"), _g, errors=_int_err(_n, None) if _n in _FLOAT_ONLY else
                      (lambda: [])))


def _int_samples(rng, dt):
    return [Sample(np.arange(-2, 3).astype(dt), name="ints"), Sample(np.array(3, dt), name="0d")]


# integer inputs: float functions compute in the default dtype, the others keep the integer dtype
for _n, _r, _k in _UNARY:
    if _n != "frac":
        OPS.append(OpInfo(f"{_n}_int", (lambda n: lambda T, a: getattr(T, n)(a))(_n), _int_samples,
                          dtypes=("int64", "int32", "uint8"), differentiable=False))
_BOOL_ERR = {"abs": NotImplementedError, "floor": NotImplementedError, "round": NotImplementedError,
             "relu": RuntimeError}
for _n, _e in _BOOL_ERR.items():
    OPS.append(OpInfo(f"{_n}_bool", (lambda n: lambda T, a: getattr(T, n)(a))(_n),
                      lambda rng, dt: [], dtypes=("bool",),
                      differentiable=False, errors=(lambda e: lambda: [ErrorSample(Sample(np.array([True])), e, "")])(_e)))
OPS.append(OpInfo("sign_bool", lambda T, a: T.sign(a), lambda rng, dt: [Sample(np.array([True, False]))],
                  dtypes=("bool",), differentiable=False))
OPS.append(OpInfo("frac_int", lambda T, a: T.frac(a), lambda rng, dt: [], dtypes=("int64",), differentiable=False,
                  errors=lambda: [ErrorSample(Sample(np.arange(3)), NotImplementedError, "not implemented for 'Long'")]))


def _bin(name, call, gen, **kw):
    OPS.append(OpInfo(name, call, gen, **kw))


def _pos(lo=0.5, hi=2.0):
    return binary_samples(low=lo, high=hi, scalar=False)


def _distinct(gen, gap=0.05):
    """Binary samples with a and b kept apart (ties and kinks of min/max/clamp)."""
    def g(rng, dt):
        out = gen(rng, dt)
        for s in out:
            a, b = s.args[0], s.args[1]
            if isinstance(b, np.ndarray):
                d = a - b
                s.args = (np.where(np.abs(d) < gap, a + 2 * gap, a).astype(a.dtype), b)
        return out
    return g


def _tie_samples(rng, dt):
    a = np.array([1.0, 2.0, -1.0, 0.5], dt)
    return [Sample(a, a.copy(), name="ties"), Sample(a, np.array([1.0, 1.0, 1.0, 1.0], dt), name="some_ties")]


_bin("atan2", lambda T, a, b: T.atan2(a, b), binary_samples(b_low=0.5, b_high=2.0, scalar=False))
_bin("arctan2", lambda T, a, b: T.arctan2(a, b), binary_samples(b_low=0.5, b_high=2.0, scalar=False))
_bin("Tensor.atan2", lambda T, a, b: a.atan2(b), binary_samples(b_low=0.5, b_high=2.0, scalar=False))
_bin("hypot", lambda T, a, b: T.hypot(a, b), _pos())
_bin("logaddexp", lambda T, a, b: T.logaddexp(a, b), binary_samples(scalar=False),
     errors=lambda: [ErrorSample(Sample(np.arange(3), np.arange(3)), NotImplementedError, "not implemented for"),
                     ErrorSample(Sample(np.ones(3), 2.0), TypeError, "must be Tensor")])
_bin("heaviside", lambda T, a, b: T.heaviside(a, b),
     lambda rng, dt: [Sample(np.array([-1.5, 0.0, 2.0, 0.0], dt), np.array([0.5, 0.25, 3.0, 7.0], dt)),
                      Sample(np.array([[0.0, -2.0], [1.0, 0.0]], dt), np.array(0.5, dt), name="scalar_values")],
     differentiable=False,
     errors=lambda: [ErrorSample(Sample(np.arange(3), np.ones(3)), RuntimeError, "different dtypes")])
_bin("Tensor.heaviside_int", lambda T, a, b: a.heaviside(b),
     lambda rng, dt: [Sample(np.array([-1, 0, 2]), np.array(7))], differentiable=False, dtypes=("float64",))
_bin("logaddexp2", lambda T, a, b: T.logaddexp2(a, b), binary_samples(scalar=False))
_bin("Tensor.logaddexp2", lambda T, a, b: a.logaddexp2(b), binary_samples(scalar=False))
_bin("minimum", lambda T, a, b: T.minimum(a, b), _distinct(binary_samples(scalar=False)),
     errors=lambda: [ErrorSample(Sample(np.ones(3), 2.0), TypeError, "must be Tensor")])
_bin("maximum", lambda T, a, b: T.maximum(a, b), _distinct(binary_samples(scalar=False)))
_bin("maximum_ties", lambda T, a, b: T.maximum(a, b), _tie_samples, gradcheck=False, dtypes=("float64",))
_bin("minimum_ties", lambda T, a, b: T.minimum(a, b), _tie_samples, gradcheck=False, dtypes=("float64",))
_bin("fmin", lambda T, a, b: T.fmin(a, b), _distinct(binary_samples(scalar=False)))
_bin("fmax", lambda T, a, b: T.fmax(a, b), _distinct(binary_samples(scalar=False)))
_bin("fmax_ties", lambda T, a, b: T.fmax(a, b), _tie_samples, gradcheck=False, dtypes=("float64",))
_bin("xlogy", lambda T, a, b: T.xlogy(a, b), binary_samples(b_low=0.3, b_high=3.0))
_bin("xlogy_scalar_self", lambda T, b: T.xlogy(2.0, b), unary_samples(0.3, 3.0))
_bin("copysign", lambda T, a, b: T.copysign(a, b),
     lambda rng, dt: [Sample(away_from_zero(s.args[0]), *s.args[1:], name=s.name)
                      for s in binary_samples()(rng, dt)])
_bin("remainder", lambda T, a, b: T.remainder(a, b), binary_samples(b_low=0.7, b_high=1.3), gradcheck=False)
_bin("fmod", lambda T, a, b: T.fmod(a, b), binary_samples(b_low=0.7, b_high=1.3), gradcheck=False)
_bin("remainder_", _ip("remainder_"), binary_samples(b_low=0.7, b_high=1.3, scalar=False)[0:0] if False else
     (lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (3, 4), dt, 0.7, 1.3))]), gradcheck=False)
_bin("fmod_", _ip("fmod_"), lambda rng, dt: [Sample(arr(rng, (3, 4), dt), 1.3)], gradcheck=False)
_bin("remainder_int", lambda T, a, b: T.remainder(a, b),
     lambda rng, dt: [Sample(np.arange(-5, 5), np.array([3, -3] * 5)), Sample(np.arange(-5, 5), 3)],
     dtypes=("int64",), differentiable=False,
     errors=lambda: [ErrorSample(Sample(np.arange(3), np.zeros(3, np.int64)), RuntimeError, "ZeroDivisionError")])
_bin("floor_divide", lambda T, a, b: T.floor_divide(a, b), binary_samples(b_low=0.5, b_high=2.0),
     differentiable=False)
_bin("floor_divide_", lambda T, a, b: a.clone().floor_divide_(b),
     lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (4,), dt, 0.5, 2.0))], differentiable=False)
_bin("true_divide_", _ip("true_divide_"), lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (4,), dt, 0.5, 2))])
_bin("float_power", lambda T, a, b: T.float_power(a, b), binary_samples(low=0.5, high=2.0))
_bin("float_power_int", lambda T, a: T.float_power(a, 2), lambda rng, dt: [Sample(np.arange(4))],
     dtypes=("int64",), differentiable=False)
_bin("multiply", lambda T, a, b: T.multiply(a, b), binary_samples())
_bin("subtract", lambda T, a, b: T.subtract(a, b), binary_samples())
_bin("divide", lambda T, a, b: T.divide(a, b), binary_samples(b_low=0.5, b_high=2.0))


def _clamp_samples(rng, dt):
    def A(s):
        a = arr(rng, s, dt, -2, 2)
        return np.where(np.abs(np.abs(a) - 1) < 0.05, a * 1.2, a).astype(dt)
    return [Sample(A((3, 4)), -1.0, 1.0), Sample(A(()), -1.0, 1.0, name="0d"), Sample(A((0, 3)), -1.0, 1.0),
            Sample(noncontig(A((4, 3))), None, 1.0), Sample(A((5,)), -1.0, None), Sample(A((5,)), 1.0, -1.0)]


def _clamp_t_samples(rng, dt):
    a = arr(rng, (3, 4), dt, -2, 2)
    lo = np.full((4,), -1.0, dt)
    hi = np.array(1.0, dt)
    a = np.where(np.abs(np.abs(a) - 1) < 0.05, a * 1.2, a).astype(dt)
    return [Sample(a, lo, hi), Sample(a, lo, None), Sample(a, None, hi), Sample(a, hi, lo, name="min>max")]


_bin("clamp", lambda T, a, lo, hi: T.clamp(a, lo, hi), _clamp_samples,
     errors=lambda: [ErrorSample(Sample(np.ones(3), None, None), RuntimeError, "At least one of 'min' or 'max'")])
_bin("clip", lambda T, a, lo, hi: T.clip(a, lo, hi), _clamp_samples)
_bin("Tensor.clamp", lambda T, a, lo, hi: a.clamp(lo, hi), _clamp_samples)
_bin("clamp_", lambda T, a, lo, hi: a.clone().clamp_(lo, hi), _clamp_samples,
     errors=lambda: [ErrorSample(Sample(np.arange(3), 0.5, None), RuntimeError, "result type Float can't be cast")])
_bin("clip_", lambda T, a, lo, hi: a.clone().clip_(lo, hi), _clamp_samples)
_bin("clamp_tensor", lambda T, a, lo, hi: T.clamp(a, lo, hi), _clamp_t_samples)
_bin("clamp_boundary", lambda T, a: T.clamp(a, -1.0, 1.0), lambda rng, dt: [Sample(np.array([-1.0, 0.0, 1.0, 2.0], dt))],
     gradcheck=False)
_bin("clamp_min", lambda T, a, b: T.clamp_min(a, b), _distinct(binary_samples(scalar=False)))
_bin("clamp_max", lambda T, a, b: T.clamp_max(a, b), _distinct(binary_samples(scalar=False)))
_bin("clamp_min_scalar", lambda T, a: T.clamp_min(a, 0.5), unary_samples(kink=None))
_bin("clamp_max_scalar", lambda T, a: a.clamp_max(0.5), unary_samples())
_bin("clamp_min_", lambda T, a: a.clone().clamp_min_(0.5), unary_samples())
_bin("clamp_max_", lambda T, a: a.clone().clamp_max_(0.5), unary_samples())
_bin("round_decimals", lambda T, a: T.round(a, decimals=2), unary_samples(), gradcheck=False)
_bin("round_neg_decimals", lambda T, a: T.round(a, decimals=-1), unary_samples(-200, 200), gradcheck=False)
_bin("logit_eps", lambda T, a: T.logit(a, eps=0.2), unary_samples(0.05, 0.95), gradcheck=False)
_bin("nan_to_num_special", lambda T, a: T.nan_to_num(a, nan=1.5, posinf=9.0),
     lambda rng, dt: [Sample(np.array([np.nan, np.inf, -np.inf, 0.5], dt))], gradcheck=False)
_bin("relu_kink", lambda T, a: T.relu(a), lambda rng, dt: [Sample(np.array([-1.0, 0.0, 2.0], dt))], gradcheck=False)
_bin("abs_kink", lambda T, a: T.abs(a), lambda rng, dt: [Sample(np.array([-1.0, 0.0, 2.0], dt))], gradcheck=False)


def _lerp_samples(rng, dt):
    return [Sample(arr(rng, (3, 4), dt), arr(rng, (3, 4), dt), 0.3), Sample(arr(rng, (3, 4), dt), arr(rng, (4,), dt), 0.7),
            Sample(arr(rng, (3, 4), dt), arr(rng, (3, 4), dt), arr(rng, (4,), dt, 0, 1)),
            Sample(arr(rng, (), dt), arr(rng, (3,), dt), arr(rng, (3,), dt, 0, 1)),
            Sample(arr(rng, (0, 3), dt), arr(rng, (3,), dt), 0.5)]


_bin("lerp", lambda T, a, b, w: T.lerp(a, b, w), _lerp_samples)
_bin("lerp_", lambda T, a, b, w: a.clone().lerp_(b, w), lambda rng, dt: _lerp_samples(rng, dt)[:3])


def _addc_samples(rng, dt):
    return [Sample(arr(rng, (3, 4), dt), arr(rng, (3, 4), dt), arr(rng, (4,), dt, 0.5, 2)),
            Sample(arr(rng, (4,), dt), arr(rng, (3, 1), dt), arr(rng, (3, 4), dt, 0.5, 2)),
            Sample(arr(rng, (), dt), arr(rng, (), dt), arr(rng, (), dt, 0.5, 2)),
            Sample(arr(rng, (0, 4), dt), arr(rng, (4,), dt), arr(rng, (4,), dt, 0.5, 2))]


_bin("addcmul", lambda T, a, b, c: T.addcmul(a, b, c, value=0.5), _addc_samples)
_bin("addcdiv", lambda T, a, b, c: T.addcdiv(a, b, c, value=2), _addc_samples)
_bin("addcmul_", lambda T, a, b, c: a.clone().addcmul_(b, c), lambda rng, dt: _addc_samples(rng, dt)[:1])
_bin("addcdiv_", lambda T, a, b, c: a.clone().addcdiv_(b, c, value=-1), lambda rng, dt: _addc_samples(rng, dt)[:1])


def _sm_samples(rng, dt):
    return [Sample(arr(rng, (3, 4), dt), 1), Sample(arr(rng, (3, 4), dt), 0), Sample(arr(rng, (2, 3, 4), dt), -2),
            Sample(arr(rng, (), dt), 0, name="0d"), Sample(arr(rng, (0, 4), dt), 1, name="empty"),
            Sample(noncontig(arr(rng, (4, 3), dt, -30, 30)), 1, name="noncontig_large")]


_bin("softmax", lambda T, a, d: T.softmax(a, d), _sm_samples,
     errors=lambda: [ErrorSample(Sample(np.ones((2, 3)), 2), IndexError, "Dimension out of range")])
_bin("log_softmax", lambda T, a, d: T.log_softmax(a, d), _sm_samples)
_bin("Tensor.softmax", lambda T, a, d: a.softmax(d), _sm_samples)
_bin("Tensor.log_softmax", lambda T, a, d: a.log_softmax(d), _sm_samples)
_bin("softmax_dtype", lambda T, a, d: T.softmax(a, d, dtype=T.float64), lambda rng, dt: _sm_samples(rng, dt)[:3],
     dtypes=("float32",))
_bin("log_softmax_dtype", lambda T, a, d: T.log_softmax(a, d, dtype=T.float64),
     lambda rng, dt: _sm_samples(rng, dt)[:3], dtypes=("float32",))
