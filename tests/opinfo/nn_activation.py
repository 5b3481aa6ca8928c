"""Op table rows: nn.functional activations, softmax family, normalize and distances
(nn/functional/_activation.py, ops/activation.py, ops/gelu.py).

In-place rows act on `a.clone()` (a leaf that requires grad cannot be written in place).
Samples keep a distance from every kink of the op (finite differences and second derivatives
are only meaningful away from them).
"""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, arr, noncontig


def away(a, points, eps=0.1):
    """Push values of `a` at least eps away from each kink in `points`."""
    a = a.copy()
    for p in points:
        d = a - p
        a = np.where(np.abs(d) < eps, np.where(d >= 0, p + eps, p - eps), a).astype(a.dtype)
    return a


def act_samples(low=-3.0, high=3.0, kinks=(0.0,)):
    """0-d, 1-d, 2-d, 3-d, empty and non-contiguous inputs, kept away from the kinks."""
    def gen(rng, dt):
        def A(shape):
            return away(arr(rng, shape, dt, low, high), kinks)
        return [Sample(A(()), name="0d"), Sample(A((7,)), name="1d"), Sample(A((3, 4)), name="2d"),
                Sample(A((2, 3, 4)), name="3d"), Sample(A((0, 3)), name="empty"),
                Sample(noncontig(A((4, 3))), name="noncontig")]
    return gen


def F(name, **fixed):
    """op(T, a, ...) = T.nn.functional.<name>(a, ..., **fixed)."""
    def op(T, *args, **kw):
        return getattr(T.nn.functional, name)(*args, **fixed, **kw)
    return op


def F_inplace(name, **fixed):
    """The functional form with inplace=True, on a clone."""
    def op(T, a, *args, **kw):
        return getattr(T.nn.functional, name)(a.clone(), *args, inplace=True, **fixed, **kw)
    return op


def F_(name, **fixed):
    """The trailing-underscore function (F.relu_, F.elu_, ...) on a clone."""
    def op(T, a, *args, **kw):
        return getattr(T.nn.functional, name)(a.clone(), *args, **fixed, **kw)
    return op


def _ints(kernel, **kw):
    msg = f"\"{kernel}\" not implemented for 'Long'"
    return lambda: [ErrorSample(Sample(np.array([-2, 0, 3, 1]), **kw), NotImplementedError, msg)]


# -- the rows ----------------------------------------------------------------------------------------
_K0 = (0.0,)
_HT = (-1.0, 1.0)
_H3 = (-3.0, 3.0)
_SH = (-0.5, 0.5)

OPS = []


def _rows(name, samples, inplace=None, underscore=None, **kw):
    """The functional form, and its inplace=True / trailing-underscore variants when given."""
    OPS.append(OpInfo(f"F.{name}", F(name), samples, **kw))
    kw.pop("errors", None)              # bad-input rows belong to the main form
    if inplace:
        OPS.append(OpInfo(f"F.{name}_inplace", F_inplace(name), samples, **kw))
    if underscore:
        OPS.append(OpInfo(f"F.{name}_", F_(name + "_"), samples, **kw))


_rows("relu", act_samples(kinks=_K0), inplace=True, underscore=True)
_rows("relu6", act_samples(-2, 8, (0.0, 6.0)), inplace=True)
_rows("leaky_relu", act_samples(kinks=_K0), inplace=True, underscore=True, errors=_ints("leaky_relu_cpu"))
OPS.append(OpInfo("F.leaky_relu_slope", F("leaky_relu", negative_slope=0.2), act_samples(kinks=_K0)))
OPS.append(OpInfo("F.leaky_relu_slope_inplace", F_inplace("leaky_relu", negative_slope=1.5), act_samples(kinks=_K0)))
_rows("elu", act_samples(kinks=_K0), inplace=True, underscore=True, errors=_ints("elu_cpu"))
OPS.append(OpInfo("F.elu_alpha", F("elu", alpha=0.5), act_samples(kinks=_K0)))
OPS.append(OpInfo("F.elu_alpha_inplace", F_inplace("elu", alpha=2.0), act_samples(kinks=_K0)))
_rows("selu", act_samples(kinks=_K0), inplace=True, underscore=True)
_rows("celu", act_samples(kinks=_K0), inplace=True, underscore=True,
      errors=lambda: [ErrorSample(Sample(np.ones(3), alpha=0.0), RuntimeError, "alpha cannot be 0 for CELU"),
                      ErrorSample(Sample(np.array([1, 2])), NotImplementedError, "\"elu_cpu\" not implemented")])
OPS.append(OpInfo("F.celu_alpha", F("celu", alpha=1.7), act_samples(kinks=_K0)))
OPS.append(OpInfo("F.celu_alpha_", F_("celu_", alpha=0.6), act_samples(kinks=_K0)))
_rows("gelu", act_samples(-4, 4, ()),
      errors=lambda: [ErrorSample(Sample(np.ones(3), approximate="foo"), RuntimeError,
                                  "approximate argument must be either none or tanh."),
                      ErrorSample(Sample(np.array([1, 2])), NotImplementedError,
                                  "\"GeluKernelImpl\" not implemented for 'Long'"),
                      ErrorSample(Sample(np.ones(3), "tanh"), TypeError,       # approximate is keyword-only
                                  "gelu() takes 1 positional argument but 2 were given")])
OPS.append(OpInfo("F.gelu_tanh", F("gelu", approximate="tanh"), act_samples(-4, 4, ())))
_rows("silu", act_samples(-5, 5, ()), inplace=True, errors=_ints("silu_cpu"))
_rows("mish", act_samples(-5, 5, ()), inplace=True, errors=_ints("mish_cpu"))
_rows("sigmoid", act_samples(-5, 5, ()))
_rows("tanh", act_samples(-3, 3, ()))
_rows("hardtanh", act_samples(-2, 2, _HT), inplace=True, underscore=True,
      errors=lambda: [ErrorSample(Sample(np.ones(3), 2.0, 1.0), ValueError, "min_val cannot be greater than max_val"),
                      ErrorSample(Sample(np.array([True, False])), RuntimeError,
                                  "Bool inputs not supported for hardtanh")])
OPS.append(OpInfo("F.hardtanh_range", F("hardtanh", min_val=-0.5, max_val=2.0),
                  act_samples(-2, 3, (-0.5, 2.0))))
OPS.append(OpInfo("F.hardtanh_int", F("hardtanh", min_val=-1.0, max_val=2.0),
                  lambda rng, dt: [Sample(arr(rng, (3, 4), "int64", -4, 4))], dtypes=("float32",),
                  differentiable=False))
# PyTorch has no second derivative for hardsigmoid (derivative for aten::hardsigmoid_backward is not implemented)
_rows("hardsigmoid", act_samples(-5, 5, _H3), inplace=True, gradgrad=False, errors=_ints("hardsigmoid_cpu"))
_rows("hardswish", act_samples(-5, 5, _H3), inplace=True, errors=_ints("hardswish_cpu"))
_rows("softplus", act_samples(-5, 25, ()), errors=_ints("softplus_cpu"))
OPS.append(OpInfo("F.softplus_beta", F("softplus", beta=2.0, threshold=3.0), act_samples(-3, 3, (1.5,))))
_rows("softsign", act_samples(kinks=_K0))
_rows("tanhshrink", act_samples())
_rows("logsigmoid", act_samples(-6, 6, ()), errors=_ints("log_sigmoid_cpu"))
_rows("softshrink", act_samples(-2, 2, _SH),
      errors=lambda: [ErrorSample(Sample(np.ones(3, np.float32), -0.5), RuntimeError,
                                  "lambda must be in range [0, 3.40282e+38] for input dtype Float, but found -0.5"),
                      ErrorSample(Sample(np.ones(3), -1.0), RuntimeError,
                                  "lambda must be in range [0, 1.79769e+308] for input dtype Double, but found -1"),
                      ErrorSample(Sample(np.array([1, 2])), NotImplementedError, "softshrink_check")])
OPS.append(OpInfo("F.softshrink_lambd", F("softshrink", lambd=1.2), act_samples(-2, 2, (-1.2, 1.2))))
_rows("hardshrink", act_samples(-2, 2, _SH), errors=_ints("hardshrink_cpu"))
OPS.append(OpInfo("F.hardshrink_lambd", F("hardshrink", lambd=1.2), act_samples(-2, 2, (-1.2, 1.2))))
OPS.append(OpInfo("F.threshold", F("threshold", threshold=0.5, value=-3.0), act_samples(-2, 2, (0.5,)),
                  errors=lambda: [ErrorSample(Sample(np.array([True])), NotImplementedError,
                                              "\"threshold_cpu\" not implemented for 'Bool'")]))
OPS.append(OpInfo("F.threshold_inplace", F_inplace("threshold", threshold=0.5, value=2.0), act_samples(-2, 2, (0.5,))))
OPS.append(OpInfo("F.threshold_", F_("threshold_", threshold=-0.5, value=0.25), act_samples(-2, 2, (-0.5,))))
OPS.append(OpInfo("F.threshold_int", F("threshold", threshold=1, value=7),
                  lambda rng, dt: [Sample(arr(rng, (3, 4), "int64", -4, 4))], dtypes=("float32",),
                  differentiable=False))
_rows("rrelu", act_samples(kinks=_K0), inplace=True, underscore=True, errors=lambda: [
    ErrorSample(Sample(np.ones(3), 0.5, 0.1), RuntimeError,
                "Lower bound should be less than or equal to the upper bound"),
    ErrorSample(Sample(np.array([1, -2])), NotImplementedError, "\"leaky_relu_cpu\" not implemented for 'Long'"),
    ErrorSample(Sample(np.array([1, -2]), training=True), NotImplementedError, "rrelu_with_noise_out_cpu")])


def _rrelu_train(inplace):
    def op(T, a, *args, **kw):
        T.manual_seed(1234)       # the noise comes from the generator: the same seed in both libraries
        x = a.clone() if inplace else a
        return T.nn.functional.rrelu(x, *args, training=True, inplace=inplace, **kw)
    return op


OPS.append(OpInfo("F.rrelu_training", _rrelu_train(False), act_samples(kinks=_K0)))
OPS.append(OpInfo("F.rrelu_training_inplace", _rrelu_train(True), act_samples(kinks=_K0)))
OPS.append(OpInfo("F.rrelu_training_bounds", lambda T, a: _rrelu_train(False)(T, a, 0.05, 0.9),
                  act_samples(kinks=_K0)))


# -- prelu --------------------------------------------------------------------------------------------
def _prelu_samples(rng, dt):
    def A(s):
        return away(arr(rng, s, dt), _K0)

    def W(n):
        return arr(rng, n, dt, 0.05, 0.6)
    return [Sample(A((3, 4)), W((1,)), name="shared"), Sample(A((3, 4)), W((4,)), name="channels"),
            Sample(A((2, 3, 4, 2)), W((3,)), name="nchw"), Sample(A(()), W(()), name="0d"),
            Sample(A(()), W((1,)), name="0d_w1"), Sample(A((5,)), W((1,)), name="1d"),
            Sample(A((0, 3)), W((3,)), name="empty"), Sample(noncontig(A((4, 3))), W((3,)), name="noncontig"),
            Sample(A((2, 3, 5)), W(()), name="scalar_w")]


def _prelu_errors():
    return [ErrorSample(Sample(np.ones((3, 4)), np.ones(3)), RuntimeError,
                        "Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 and channel "
                        "size = 4."),
            ErrorSample(Sample(np.ones((3, 4)), np.ones((4, 1))), RuntimeError,
                        "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"),
            ErrorSample(Sample(np.ones(3), np.ones(3)), RuntimeError, "channel size = 1."),
            ErrorSample(Sample(np.ones((3, 4), np.float32), np.ones(1)), RuntimeError,
                        "prelu: Type promoting not supported. Got Float and Double"),
            ErrorSample(Sample(np.array([1, 2]), np.array([1])), NotImplementedError,
                        "\"prelu_cpu\" not implemented for 'Long'")]


OPS.append(OpInfo("F.prelu", F("prelu"), _prelu_samples, errors=_prelu_errors))


# -- glu ----------------------------------------------------------------------------------------------
def _glu_samples(rng, dt):
    def A(s):
        return arr(rng, s, dt)
    return [Sample(A((3, 4)), name="last"), Sample(A((4, 3)), 0, name="dim0"), Sample(A((2, 6, 3)), 1, name="dim1"),
            Sample(A((6,)), name="1d"), Sample(A((0, 4)), name="empty"),
            Sample(noncontig(A((4, 6))), -1, name="noncontig"),
            Sample(A((2, 4)), -2, name="negdim")]


OPS.append(OpInfo("F.glu", F("glu"), _glu_samples, errors=lambda: [
    ErrorSample(Sample(np.ones((3, 3))), RuntimeError, "Halving dimension must be even, but dimension 1 is size 3"),
    ErrorSample(Sample(np.array(1.0)), RuntimeError, "glu does not support scalars because halving size must be even"),
    ErrorSample(Sample(np.ones((3, 4)), 2), IndexError,
                "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ErrorSample(Sample(np.array([1, 2])), NotImplementedError, "\"glu_cpu\" not implemented for 'Long'")]))


# -- softmax family ------------------------------------------------------------------------------------
def _sm_samples(rng, dt):
    def A(s):
        return arr(rng, s, dt)
    return [Sample(A((3, 4)), 1, name="dim1"), Sample(A((3, 4)), 0, name="dim0"), Sample(A((2, 3, 4)), -1, name="neg"),
            Sample(A(()), 0, name="0d"), Sample(A((5,)), 0, name="1d"), Sample(A((0, 3)), 1, name="empty"),
            Sample(noncontig(A((4, 3))), 1, name="noncontig")]


def _sm_errors(name):
    return lambda: [ErrorSample(Sample(np.ones((3, 4)), 2), IndexError, "Dimension out of range"),
                    ErrorSample(Sample(np.array([1, 2]), 0), NotImplementedError, "not implemented for 'Long'")]


for _n in ("softmax", "log_softmax", "softmin"):
    OPS.append(OpInfo(f"F.{_n}", F(_n), _sm_samples, errors=_sm_errors(_n)))
    OPS.append(OpInfo(f"F.{_n}_dtype", lambda T, a, d, _n=_n: getattr(T.nn.functional, _n)(a, d, dtype=T.float64),
                      _sm_samples, dtypes=("float32",)))


# -- normalize / cosine_similarity / pairwise_distance ---------------------------------------------------
def _norm_samples(rng, dt):
    def A(s):
        return arr(rng, s, dt)
    return [Sample(A((3, 4)), name="default"), Sample(A((3, 4)), p=1.0, dim=0, name="p1"),
            Sample(A((2, 3, 4)), p=3.0, dim=-1, name="p3"), Sample(A((5,)), dim=0, name="1d"),
            Sample(A((0, 3)), name="empty"), Sample(noncontig(A((4, 3))), name="noncontig"),
            Sample(A((3, 4)), eps=10.0, name="eps_clamps")]


OPS.append(OpInfo("F.normalize", F("normalize"), _norm_samples, errors=lambda: [
    ErrorSample(Sample(np.array([[1, 2]])), RuntimeError, "linalg.vector_norm: Expected a floating point")]))


def _cos_samples(rng, dt):
    def A(s):
        return arr(rng, s, dt)
    return [Sample(A((3, 4)), A((3, 4)), name="same"), Sample(A((3, 4)), A((4,)), name="bcast"),
            Sample(A((4, 3)), A((4, 3)), 0, name="dim0"), Sample(A((5,)), A((5,)), 0, name="1d"),
            Sample(A((2, 3, 4)), A((2, 1, 4)), -1, eps=1e-6, name="3d"), Sample(A((0, 3)), A((0, 3)), name="empty"),
            Sample(noncontig(A((4, 3))), A((4, 3)), name="noncontig")]


def _small_norm_samples(rng, dt):
    a = arr(rng, (3, 4), dt)
    a[1] *= 1e-9
    return [Sample(a, arr(rng, (3, 4), dt), name="tiny_row")]


OPS.append(OpInfo("F.cosine_similarity", F("cosine_similarity"), _cos_samples, errors=lambda: [
    ErrorSample(Sample(np.ones((3, 4)), np.ones(3)), RuntimeError,
                "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1"),
    ErrorSample(Sample(np.array([1, 2]), np.array([1, 2]), 0), RuntimeError,
                "expected common dtype to be floating point, yet common dtype is Long"),
    ErrorSample(Sample(np.ones(4), np.ones(4)), IndexError, "Dimension out of range")]))
# below eps the norm's value is clamped but its gradient is the unclamped norm's (as in PyTorch);
# finite differences of the clamped forward disagree there by design
OPS.append(OpInfo("F.cosine_similarity_tiny_norm", F("cosine_similarity"), _small_norm_samples,
                  dtypes=("float64",), gradcheck=False, grad_rtol=1e-6, grad_atol=1e-3))


def _pd_samples(rng, dt):
    def A(s):
        return arr(rng, s, dt)
    return [Sample(A((3, 4)), A((3, 4)), name="same"), Sample(A((3, 4)), A((4,)), name="bcast"),
            Sample(A((3, 4)), A((3, 4)), 1.0, name="p1"), Sample(A((3, 4)), A((3, 4)), p=3.0, name="p3"),
            Sample(A((2, 3, 4)), A((2, 3, 4)), keepdim=True, name="keepdim"), Sample(A((5,)), A((5,)), name="1d"),
            Sample(A(()), A(()), name="0d"), Sample(A((0, 4)), A((0, 4)), name="empty"),
            Sample(noncontig(A((4, 3))), A((4, 3)), eps=1e-3, name="noncontig")]


OPS.append(OpInfo("F.pairwise_distance", F("pairwise_distance"), _pd_samples, errors=lambda: [
    ErrorSample(Sample(np.ones((3, 4)), np.ones((3, 5))), RuntimeError,
                "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1")]))
OPS.append(OpInfo("F.pairwise_distance_inf", F("pairwise_distance", p=float("inf")),
                  lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (3, 4), dt))]))
OPS.append(OpInfo("Tensor.hardshrink", lambda T, a: a.hardshrink(1.2), act_samples(-2, 2, (-1.2, 1.2))))
