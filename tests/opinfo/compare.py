"""Op table rows: comparisons and logic (ops/compare.py).  Nothing here is differentiable."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, unary_samples, arr, noncontig

ND = dict(differentiable=False)
_B = np.array([True, False])


def _call(T, f, a, *args, dtype=None, **k):
    """T.f(a, ...) or, for "Tensor.f", a.f(...); dtype: a dtype's name."""
    if dtype is not None:
        k["dtype"] = getattr(T, dtype)
    fn = getattr(a, f[len("Tensor."):]) if f.startswith("Tensor.") else getattr(T, f)
    return fn(*args, **k) if f.startswith("Tensor.") else fn(a, *args, **k)
ALL_DT = ("float32", "float64", "int64", "int32", "bool")
INT_DT = ("int64", "int32", "int8", "uint8", "bool")


def _cmp_samples(rng, dt):
    """Binary samples with some equal elements (so eq/le/ge see ties), plus int and float scalars."""
    def A(s):
        return arr(rng, s, dt, -2, 2) if np.dtype(dt).kind != "f" else np.asarray(np.round(arr(rng, s, dt), 0))
    out = [Sample(A((3, 4)), A((3, 4)), name="same"), Sample(A((3, 4)), A((4,)), name="bcast_b"),
           Sample(A((4,)), A((3, 4)), name="bcast_a"), Sample(A((2, 1, 4)), A((3, 1)), name="bcast_both"),
           Sample(A(()), A((3,)), name="0d_a"), Sample(A((0, 4)), A((4,)), name="empty"),
           Sample(noncontig(A((4, 3))), A((4, 3)), name="noncontig"),
           Sample(A((3, 4)), 1, name="int_scalar"), Sample(A((3, 4)), 0.5, name="float_scalar")]
    return out


def _special(rng, dt):
    a = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 3.0], dt)
    return [Sample(a, name="special"), Sample(a.reshape(2, 4), name="2d"), Sample(np.array(np.nan, dt), name="0d"),
            Sample(np.zeros((0, 2), dt), name="empty")]


def _int_unary(rng, dt):
    return [Sample(arr(rng, (3, 4), dt, -3, 3)), Sample(arr(rng, (), dt, -3, 3))]


def _int_binary(rng, dt):
    def A(s):
        return arr(rng, s, dt, -8, 8)
    return [Sample(A((3, 4)), A((3, 4)), name="same"), Sample(A((3, 4)), A((4,)), name="bcast"),
            Sample(A(()), A((3,)), name="0d"), Sample(A((0, 3)), A((3,)), name="empty"),
            Sample(A((3, 4)), 5 if dt != np.bool_ else True, name="scalar")]


def _shift_samples(rng, dt):
    a = arr(rng, (3, 4), dt, -50, 50)
    return [Sample(a, rng.integers(0, 6, (3, 4)).astype(dt), name="same"),
            Sample(a, rng.integers(0, 6, (4,)).astype(dt), name="bcast"), Sample(a, 3, name="scalar"),
            Sample(arr(rng, (), dt, 0, 20), 2, name="0d")]


def _logical_samples(rng, dt):
    def A(s):
        return arr(rng, s, dt, -1, 1) if np.dtype(dt).kind != "f" else np.asarray(np.round(arr(rng, s, dt, -1, 1), 0))
    return [Sample(A((3, 4)), A((3, 4)), name="same"), Sample(A((3, 4)), A((4,)), name="bcast"),
            Sample(A(()), A((3,)), name="0d"), Sample(A((0, 4)), A((4,)), name="empty"),
            Sample(A((3, 4)), np.ones((3, 4), np.int64), name="mixed_dtype")]


def _close_samples(rng, dt):
    a = arr(rng, (3, 4), dt)
    b = a + np.asarray(rng.uniform(-2e-5, 2e-5, (3, 4)), dt)
    c = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], dt)
    return [Sample(a, b, name="near"), Sample(a, a + 1, name="far"), Sample(a, a.copy(), name="equal"),
            Sample(c, c.copy(), name="special"), Sample(c, c.copy(), equal_nan=True, name="equal_nan"),
            Sample(a, b, rtol=0.0, atol=1e-6, name="tols"), Sample(a, b[0], name="bcast")]


def _inplace_cmp(name):
    return lambda T, a, b: getattr(a.clone(), name + "_")(b)


def _inplace_samples(rng, dt):
    return [s for s in _cmp_samples(rng, dt) if s.name in ("same", "bcast_b", "noncontig", "int_scalar", "float_scalar")
            and not (np.dtype(dt).kind in "iub" and s.name == "float_scalar")]


OPS = []
for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    OPS.append(OpInfo(_n, lambda T, a, b, _n=_n: getattr(T, _n)(a, b), _cmp_samples, dtypes=ALL_DT[:4], **ND))
    OPS.append(OpInfo(f"Tensor.{_n}", lambda T, a, b, _n=_n: getattr(a, _n)(b), _cmp_samples, **ND))
    OPS.append(OpInfo(f"{_n}_", _inplace_cmp(_n), _inplace_samples, dtypes=("float32", "int64"), **ND))
for _n, _op in (("op_eq", "__eq__"), ("op_ne", "__ne__"), ("op_lt", "__lt__"), ("op_le", "__le__"),
                ("op_gt", "__gt__"), ("op_ge", "__ge__")):
    OPS.append(OpInfo(_n, lambda T, a, b, _op=_op: getattr(a, _op)(b), _cmp_samples, dtypes=("float32", "bool"), **ND))
for _n in ("greater", "greater_equal", "less", "less_equal", "not_equal"):
    OPS.append(OpInfo(_n, lambda T, a, b, _n=_n: getattr(T, _n)(a, b), _cmp_samples, **ND))
    OPS.append(OpInfo(f"Tensor.{_n}", lambda T, a, b, _n=_n: getattr(a, _n)(b), _cmp_samples, dtypes=("float32",), **ND))

for _n in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit"):
    OPS.append(OpInfo(_n, lambda T, a, _n=_n: getattr(T, _n)(a), _special, **ND))
    OPS.append(OpInfo(f"{_n}_int", lambda T, a, _n=_n: getattr(a, _n)(), _int_unary,
                      dtypes=("int64", "uint8", "bool"), **ND))

for _n in ("logical_and", "logical_or", "logical_xor"):
    OPS.append(OpInfo(_n, lambda T, a, b, _n=_n: getattr(T, _n)(a, b), _logical_samples, dtypes=ALL_DT, **ND))
    OPS.append(OpInfo(f"{_n}_", lambda T, a, b, _n=_n: getattr(a.clone(), _n + "_")(b),
                      lambda rng, dt: [s for s in _logical_samples(rng, dt) if s.name in ("same", "bcast")],
                      dtypes=ALL_DT, **ND))
OPS.append(OpInfo("logical_not", lambda T, a: T.logical_not(a), unary_samples(-1, 1), dtypes=ALL_DT, **ND))
OPS.append(OpInfo("logical_not_", lambda T, a: a.clone().logical_not_(), unary_samples(-1, 1), dtypes=ALL_DT, **ND))

for _n, _op in (("bitwise_and", "__and__"), ("bitwise_or", "__or__"), ("bitwise_xor", "__xor__")):
    OPS.append(OpInfo(_n, lambda T, a, b, _n=_n: getattr(T, _n)(a, b), _int_binary, dtypes=INT_DT, **ND))
    OPS.append(OpInfo(f"op{_op}", lambda T, a, b, _op=_op: getattr(a, _op)(b), _int_binary, dtypes=INT_DT, **ND))
    OPS.append(OpInfo(f"{_n}_", lambda T, a, b, _n=_n: getattr(a.clone(), _n + "_")(b),
                      lambda rng, dt: [s for s in _int_binary(rng, dt) if s.name in ("same", "bcast", "scalar")],
                      dtypes=INT_DT, **ND))
OPS.append(OpInfo("bitwise_not", lambda T, a: T.bitwise_not(a), _int_unary, dtypes=INT_DT, **ND))
OPS.append(OpInfo("op__invert__", lambda T, a: ~a, _int_unary, dtypes=INT_DT, **ND))
OPS.append(OpInfo("bitwise_not_", lambda T, a: a.clone().bitwise_not_(), _int_unary, dtypes=INT_DT, **ND))
OPS.append(OpInfo("bitwise_left_shift", lambda T, a, b: T.bitwise_left_shift(a, b), _shift_samples,
                  dtypes=("int64", "int32", "int8"), **ND))
OPS.append(OpInfo("bitwise_right_shift", lambda T, a, b: T.bitwise_right_shift(a, b), _shift_samples,
                  dtypes=("int64", "int32", "int8"), **ND))
OPS.append(OpInfo("op__lshift__", lambda T, a, b: a << b, _shift_samples, dtypes=("int64",), **ND))
OPS.append(OpInfo("op__rshift__", lambda T, a, b: a >> b, _shift_samples, dtypes=("int64",), **ND))
OPS.append(OpInfo("shift_overflow", lambda T, a, b: (T.bitwise_left_shift(a, b), T.bitwise_right_shift(a, b)),
                  lambda rng, dt: [Sample(np.array([-8, 8, 1, -1], dt), np.array([70, 64, 63, 100], dt))],
                  dtypes=("int64",), **ND))

OPS += [
    OpInfo("isclose", lambda T, a, b, **k: T.isclose(a, b, **k), _close_samples, **ND),
    OpInfo("Tensor.isclose", lambda T, a, b, **k: a.isclose(b, **k), _close_samples, dtypes=("float32",), **ND),
    OpInfo("isclose_int", lambda T, a, b: T.isclose(a, b),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt, -3, 3), arr(rng, (3, 4), dt, -3, 3))],
           dtypes=("int64", "bool"), **ND),
    OpInfo("allclose", lambda T, a, b, **k: T.allclose(a, b, **k), _close_samples, **ND),
    OpInfo("Tensor.allclose", lambda T, a, b, **k: a.allclose(b, **k), _close_samples, dtypes=("float32",), **ND),
    OpInfo("equal", lambda T, a, b: T.equal(a, b),
           lambda rng, dt: [Sample(np.arange(4).astype(dt), np.arange(4).astype(dt), name="same"),
                            Sample(np.arange(4).astype(dt), np.arange(1, 5).astype(dt), name="differ"),
                            Sample(np.arange(4).astype(dt), np.arange(3).astype(dt), name="shape"),
                            Sample(np.arange(4).astype(dt), np.arange(4).astype(dt)[None], name="bshape"),
                            Sample(np.array([np.nan], dt), np.array([np.nan], dt), name="nan")], **ND),
    OpInfo("Tensor.equal", lambda T, a, b: a.equal(b),
           lambda rng, dt: [Sample(np.arange(4).astype(dt), np.arange(4).astype(np.int64), name="mixed")], **ND),
    OpInfo("compare_errors", lambda T, f, a, *args: getattr(T, f)(a, *args),
           lambda rng, dt: [Sample("eq", arr(rng, (3,), dt), 1.0)], **ND,
           errors=lambda: [
               ErrorSample(Sample("eq", np.zeros(2), np.zeros(3)), RuntimeError,
                           "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
               ErrorSample(Sample("bitwise_and", np.zeros(2), np.zeros(2)), NotImplementedError,
                           "\"bitwise_and_cpu\" not implemented for 'Double'"),
               ErrorSample(Sample("bitwise_not", np.zeros(2, np.float32)), NotImplementedError,
                           "\"bitwise_not_cpu\" not implemented for 'Float'"),
               ErrorSample(Sample("bitwise_left_shift", np.zeros(2), 1), NotImplementedError,
                           "\"lshift_cpu\" not implemented for 'Double'"),
               ErrorSample(Sample("logical_and", np.zeros(2), 1), TypeError, "must be Tensor, not int"),
               ErrorSample(Sample("allclose", np.zeros(2, np.float32), np.zeros(2)), RuntimeError,
                           "Float did not match Double"),
               ErrorSample(Sample("isclose", np.zeros(2), np.zeros(2), -1.0), RuntimeError,
                           "rtol must be greater than or equal to zero, but got -1"),
               ErrorSample(Sample("allclose", np.zeros(2), np.zeros(3)), RuntimeError,
                           "The size of tensor a (2) must match the size of tensor b (3)"),
           ]),
    # bool operands that torch refuses (found by the torch.masked fuzz), and Tensor.flip's dims keyword
    OpInfo("bool_operand_errors", lambda T, f, a, *args, **k: _call(T, f, a, *args, **k),
           lambda rng, dt: [Sample("Tensor.flip", arr(rng, (2, 3), dt), dims=(0,), name="flip_dims_keyword"),
                            Sample("cumsum", np.array(True), 0, dtype="bool", name="cumsum_bool_0d")],
           **ND, errors=lambda: [
               ErrorSample(Sample("sub", _B, np.ones(2)), RuntimeError, "with a bool tensor is not supported"),
               ErrorSample(Sample("sub", np.ones(2), _B), RuntimeError, "with a bool tensor is not supported"),
               ErrorSample(Sample("sub", _B, 1.0), RuntimeError, "with a bool tensor is not supported"),
               ErrorSample(Sample("sub", np.ones(2), True), RuntimeError, "with a bool tensor is not supported"),
               ErrorSample(Sample("sub", _B, True), RuntimeError, "with two bool tensors is not supported"),
               ErrorSample(Sample("rsub", _B, 2), RuntimeError, "with a bool tensor is not supported"),
               ErrorSample(Sample("argmax", _B), RuntimeError, "argmax(): does not support bool input"),
               ErrorSample(Sample("argmin", _B, 0), RuntimeError, "argmin(): does not support bool input"),
               ErrorSample(Sample("cumsum", _B, 0, dtype="bool"), NotImplementedError,
                           "\"cumsum_out_cpu\" not implemented for 'Bool'"),
               ErrorSample(Sample("cumprod", _B, 0, dtype="bool"), NotImplementedError,
                           "\"cumprod_out_cpu\" not implemented for 'Bool'"),
               ErrorSample(Sample("Tensor.cumsum_", _B, 0), NotImplementedError, "not implemented for 'Bool'"),
               ErrorSample(Sample("flip", np.ones(2), 0), TypeError, "must be tuple of ints, not int"),
               ErrorSample(Sample("Tensor.flip", np.ones(2), 0, dims=(0,)), TypeError,
                           "got multiple values for argument 'dims'"),
           ]),
    OpInfo("inplace_cmp_errors", lambda T, a, b: a.lt_(b), lambda rng, dt: [Sample(arr(rng, (3,), dt), 0.0)],
           **ND, errors=lambda: [
               ErrorSample(Sample(np.zeros(2), np.zeros((2, 2))), RuntimeError,
                           "output with shape [2] doesn't match the broadcast shape [2, 2]")]),
]
