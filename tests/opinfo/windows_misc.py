"""Op table rows: the window functions (ops/windows.py) and the Tensor predicates / storage methods
(ops/tensor_misc.py)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, Idx, NoGrad, arr, noncontig

ND = dict(differentiable=False)


def _with_dtype(name):
    def op(T, *a, **k):
        if "dtype" in k:
            k["dtype"] = getattr(T, k["dtype"])
        return getattr(T, name)(*a, **k)
    return op


def _window_samples(extra=()):
    def f(rng, dt):
        out = [Sample(n, dtype=str(np.dtype(dt)), name=f"n{n}") for n in (0, 1, 2, 5, 16)]
        out += [Sample(7, False, dtype=str(np.dtype(dt)), name="symmetric"), Sample(6, True, name="default_dtype")]
        out += [Sample(*a, dtype=str(np.dtype(dt)), name=f"params{i}") for i, a in enumerate(extra)]
        return out
    return f


def _window_errors(name):
    return lambda: [ErrorSample(Sample(-1), RuntimeError, f"{name} requires non-negative window_length, got window_length=-1"),
                    ErrorSample(Sample(4, dtype="int64"), RuntimeError, f"{name} expects floating point dtypes, got: TensorOptions(dtype=long int"),
                    ErrorSample(Sample(3.5), TypeError, f"{name}(): argument 'window_length' (position 1) must be int, not float")]


def _window(name, extra=()):
    return OpInfo(name, _with_dtype(name), _window_samples(extra), errors=_window_errors(name), atol=2e-6, **ND)


def _geometry(t):
    return tuple(t.shape), t.stride(), str(t.dtype)


def _resize_op(T, a, *shape):
    a = a.clone()
    k = min(a.numel(), int(np.prod(shape)))
    r = a.resize_(*shape)
    return r is a, tuple(r.shape), r.stride(), r.reshape(-1)[:k]


def _resize_samples(rng, dt):
    A = (lambda s: NoGrad(arr(rng, s, dt)))
    return [Sample(A((4,)), 2, 2, name="same_numel"), Sample(A((2, 3)), 4, name="shrink"),
            Sample(A((2, 3)), 3, 3, name="grow"), Sample(A((2, 3)), (3, 2), name="tuple"),
            Sample(A((2, 3)), 2, 3, name="unchanged")]


def _misc_samples(rng, dt):
    return [Sample(NoGrad(arr(rng, s, dt)), name=str(s)) for s in ((), (1,), (1, 1))] + \
        [Sample(NoGrad(np.zeros((), dt)), name="zero"), Sample(NoGrad(np.array([np.nan], dt)), name="nan")]


def _apply(T, a):
    b = a.clone()
    return b.apply_(lambda v: v * 2.5 + 1), b


def _map(T, a, b):
    c = a.clone()
    return c.map_(b, lambda x, y: x * y - 1), c


def _map2(T, a, b, c):
    d = a.clone()
    return d.map2_(b, c, lambda x, y, z: x + y * z), d


def _dim_order_samples(rng, dt):
    return [Sample((2, 3, 4), (12, 4, 1), name="contig"), Sample((2, 3, 4), (1, 2, 6), name="fortran"),
            Sample((2, 3, 5, 7), (105, 1, 21, 3), name="channels_last"), Sample((1, 2, 3), (6, 3, 1), name="singleton"),
            Sample((3,), (1,), name="1d"), Sample((), (), name="0d")]


def _dim_order(check):
    return lambda T, size, stride: T.empty_strided(size, stride).dim_order(ambiguity_check=check)


OPS = [
    _window("hann_window"), _window("hamming_window", ((8, True, 0.6, 0.3), (5, False, 0.5))),
    _window("bartlett_window"), _window("blackman_window"), _window("kaiser_window", ((9, True, 5.0), (6, False, 0.5))),
    OpInfo("hann_window_requires_grad", lambda T, n: T.hann_window(n, requires_grad=True).requires_grad,
           lambda rng, dt: [Sample(4, name="rg")], **ND),
    OpInfo("is_nonzero", lambda T, a: T.is_nonzero(a), _misc_samples, **ND,
           errors=lambda: [ErrorSample(Sample(np.ones(2)), RuntimeError, "Boolean value of Tensor with more than one value is ambiguous"),
                           ErrorSample(Sample(np.ones(0)), RuntimeError, "Boolean value of Tensor with no values is ambiguous")]),
    OpInfo("Tensor.is_nonzero", lambda T, a: a.is_nonzero(), _misc_samples, variant_of="is_nonzero", **ND),
    OpInfo("is_same_size", lambda T, a, b: (T.is_same_size(a, b), a.is_same_size(b)), lambda rng, dt: [
        Sample(NoGrad(np.ones((2, 3), dt)), NoGrad(np.ones((2, 3), dt)), name="same"),
        Sample(NoGrad(np.ones((2, 3), dt)), NoGrad(np.ones((3, 2), dt)), name="transposed"),
        Sample(NoGrad(np.ones((), dt)), NoGrad(np.ones((1,), dt)), name="0d_1d")], **ND),
    OpInfo("is_signed", lambda T, a: (T.is_signed(a), a.is_signed()), lambda rng, dt: [
        Sample(NoGrad(np.ones(2, dt)), name="float"), Sample(Idx(np.ones(2, np.uint8)), name="uint8"),
        Sample(Idx(np.ones(2, bool)), name="bool"), Sample(Idx(np.ones(2, np.int16)), name="int16")], **ND),
    OpInfo("Tensor.new_empty_strided", lambda T, a, *r, **k: _geometry(a.new_empty_strided(*r, **{
        key: (getattr(T, v) if key == "dtype" else v) for key, v in k.items()})), lambda rng, dt: [
        Sample(NoGrad(np.ones(2, dt)), (2, 3), (1, 2), name="strided"),
        Sample(NoGrad(np.ones(2, dt)), (2, 3), (3, 1), dtype="int32", name="dtype")], **ND),
    OpInfo("Tensor.dim_order", _dim_order(False), _dim_order_samples, **ND),
    OpInfo("Tensor.dim_order_checked", _dim_order(True), lambda rng, dt: _dim_order_samples(rng, dt)[:3], **ND,
           errors=lambda: [ErrorSample(Sample((1, 2, 3), (6, 3, 1)), RuntimeError, "The tensor does not have unique dim order")]),
    OpInfo("Tensor.apply_", _apply, lambda rng, dt: [Sample(NoGrad(arr(rng, (2, 3), dt)), name="float"),
                                                     Sample(Idx(np.array([1, 2, -3])), name="int_truncates")], **ND),
    OpInfo("Tensor.map_", _map, lambda rng, dt: [
        Sample(NoGrad(arr(rng, (2, 3), dt)), NoGrad(arr(rng, (2, 3), dt)), name="same"),
        Sample(NoGrad(arr(rng, (2, 3), dt)), NoGrad(arr(rng, (3,), dt)), name="bcast")], **ND,
           errors=lambda: [ErrorSample(Sample(NoGrad(np.ones(2, np.float32)), Idx(np.ones(2, np.int64))), TypeError,
                                       "map_: expected torch.FloatTensor for 'other' (got torch.LongTensor)")]),
    OpInfo("Tensor.map2_", _map2, lambda rng, dt: [
        Sample(NoGrad(arr(rng, (2, 3), dt)), NoGrad(arr(rng, (2, 3), dt)), NoGrad(arr(rng, (3,), dt)), name="bcast")], **ND),
    OpInfo("Tensor.resize_", lambda T, a, *s: _resize_op(T, a, *s), _resize_samples, **ND),
    OpInfo("resize_as_", lambda T, a, b: tuple(T.resize_as_(a.clone(), b).shape), lambda rng, dt: [
        Sample(NoGrad(arr(rng, (2, 3), dt)), NoGrad(arr(rng, (3, 2), dt)), name="transposed")], **ND),
    OpInfo("as_strided_", lambda T, a, *r: T.as_strided_(a * 1, *r), lambda rng, dt: [
        Sample(arr(rng, (6,), dt), (2, 2), (1, 2), 1, name="offset"), Sample(arr(rng, (3, 4), dt), (3,), (5,), name="diag")],
           gradgrad=False),
    OpInfo("Tensor.as_strided_", lambda T, a, *r: (a * 1).as_strided_(*r), lambda rng, dt: [
        Sample(arr(rng, (6,), dt), (2, 2), (1, 2), 1, name="offset")], gradgrad=False, variant_of="as_strided_"),
    OpInfo("Tensor.resize", lambda T, a, *s: a.resize(*s), lambda rng, dt: [
        Sample(arr(rng, (2, 3), dt), 3, 2, name="contig"), Sample(noncontig(arr(rng, (4, 3), dt)), 12, name="noncontig")],
           errors=lambda: [ErrorSample(Sample(np.ones((2, 3)), 4), RuntimeError, "autograd's resize can only change the shape"),
                           ErrorSample(Sample(np.ones((2, 3)), (6,)), RuntimeError, "requested resize to (6,) ((6,) elements")]),
    OpInfo("Tensor.resize_as", lambda T, a, b: a.resize_as(b), lambda rng, dt: [
        Sample(arr(rng, (2, 3), dt), NoGrad(np.ones(6, dt)), name="flat")]),
    OpInfo("nonzero_static", lambda T, a, **k: (T.nonzero_static(a, **k), a.nonzero_static(**k)), lambda rng, dt: [
        Sample(NoGrad(np.array([[0.0, 1.0], [2.0, 0.0]], dt)), size=3, name="padded"),
        Sample(NoGrad(np.array([[0.0, 1.0], [2.0, 0.0]], dt)), size=1, fill_value=7, name="truncated"),
        Sample(NoGrad(np.array(3.0, dt)), size=2, name="0d")], **ND,
           errors=lambda: [ErrorSample(Sample(np.ones(2), size=-1), RuntimeError, "'size' must be an non-negative integer")]),
    OpInfo("Tensor.const_data_ptr", lambda T, a: a.const_data_ptr() == a.data_ptr(), lambda rng, dt: [
        Sample(NoGrad(np.ones(2, dt)), name="ptr")], **ND),
    OpInfo("Tensor.prelu", lambda T, a, w: a.prelu(w), lambda rng, dt: [
        Sample(arr(rng, (2, 3), dt), np.array([0.25], dt), name="one"), Sample(arr(rng, (2, 3, 4), dt), arr(rng, (3,), dt), name="channels")],
           errors=lambda: [ErrorSample(Sample(np.ones((2, 3)), np.ones(2)), RuntimeError, "Mismatch of parameter numbers and input channel size")]),
]
