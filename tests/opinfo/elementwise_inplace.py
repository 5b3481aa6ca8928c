"""Op table rows: the in-place forms and aliases torch's Tensor has over ops that exist out of place
(_tensor_methods._IN_PLACE, ops/arithmetic.py float_power_, scans.py cumprod_, gather_scatter.py scatter_reduce_)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, unary_samples, arr

# name: (low, high) of the samples, inside the function's domain
_UNARY = {"absolute_": (-2, 2), "acos_": (-0.9, 0.9), "arccos_": (-0.9, 0.9), "arcsin_": (-0.9, 0.9),
          "asin_": (-0.9, 0.9), "acosh_": (1.1, 3), "arccosh": (1.1, 3), "arccosh_": (1.1, 3), "arcsinh": (-2, 2),
          "arcsinh_": (-2, 2), "asinh_": (-2, 2), "arctan_": (-2, 2), "atan_": (-2, 2), "arctanh": (-0.9, 0.9),
          "arctanh_": (-0.9, 0.9), "atanh_": (-0.9, 0.9), "cosh_": (-2, 2), "sinh_": (-2, 2), "tan_": (-1, 1),
          "erf_": (-2, 2), "erfc_": (-2, 2), "erfinv_": (-0.9, 0.9), "exp2_": (-2, 2), "expm1_": (-2, 2),
          "fix_": (-2, 2), "log10_": (0.1, 3), "log1p_": (-0.5, 2), "log2_": (0.1, 3), "logit_": (0.1, 0.9),
          "sgn_": (-2, 2), "deg2rad_": (-2, 2), "rad2deg_": (-2, 2)}


def _same(low=-2.0, high=2.0):
    def gen(rng, dt):
        return [Sample(arr(rng, (3, 4), dt, low, high), arr(rng, (3, 4), dt, low, high), name="same"),
                Sample(arr(rng, (3, 4), dt, low, high), arr(rng, (4,), dt, low, high), name="bcast_other")]
    return gen


def _cast_err(call):
    return lambda: [ErrorSample(Sample(np.arange(3)), RuntimeError, "result type Float can't be cast to the "
                                                                    "desired output type Long")]


# torch: "the derivative for 'inplace version of acosh' is not implemented" (AcoshBackward1, ...)
_NO_GRAD = {"acosh_": "acosh", "arccosh_": "acosh", "asinh_": "asinh", "arcsinh_": "asinh", "atanh_": "atanh",
            "arctanh_": "atanh"}


def _backward_err(what):
    return lambda: [ErrorSample(Sample(np.full(3, 0.5 if what != "acosh" else 1.5)), NotImplementedError,
                                f"the derivative for 'inplace version of {what}' is not implemented.")]


OPS = [OpInfo(f"Tensor.{n}", lambda T, a, n=n: getattr(a.clone(), n)(), unary_samples(lo, hi),
              differentiable=n not in _NO_GRAD, gradcheck=n not in ("fix_", "sgn_"), gradgrad=n not in ("fix_", "sgn_"))
       for n, (lo, hi) in _UNARY.items()]
OPS += [OpInfo(f"Tensor.{n}_backward", lambda T, a, n=n: getattr(a.requires_grad_() * 1, n)().sum().backward(),
               lambda rng, dt: [], errors=_backward_err(w)) for n, w in _NO_GRAD.items()]
OPS += [OpInfo(f"Tensor.{n}", lambda T, a, b, n=n: getattr(a.clone(), n)(b), _same(lo, hi), **kw)
        for n, lo, hi, kw in (("atan2_", -2, 2, {}), ("arctan2_", -2, 2, {}), ("copysign_", -2, 2, {"gradgrad": False}),
                              ("hypot_", 0.5, 2, {}), ("xlogy_", 0.5, 2, {}), ("divide_", 0.5, 2, {}),
                              ("multiply_", -2, 2, {}), ("subtract_", -2, 2, {}))]
OPS += [OpInfo(f"Tensor.{n}", lambda T, a, b, n=n: getattr(a.clone(), n)(b), _same(), differentiable=False)
        for n in ("greater_", "greater_equal_", "less_", "less_equal_", "not_equal_")]
OPS += [
    OpInfo("Tensor.deg2rad__int", lambda T, a: a.deg2rad_(), lambda rng, dt: [], errors=_cast_err(None)),
    OpInfo("Tensor.bitwise_shift_", lambda T, a, b: (a.clone().bitwise_left_shift_(b), a.clone().bitwise_right_shift_(b)),
           lambda rng, dt: [Sample(np.arange(12).reshape(3, 4), np.array([0, 1, 2, 3]))],
           dtypes=("int64",), differentiable=False),
    OpInfo("Tensor.negative_", lambda T, a: a.clone().negative_(), unary_samples()),
    OpInfo("Tensor.float_power_", lambda T, a, b: (a.clone().float_power_(b), a.clone().float_power_(2)),
           _same(0.5, 2), dtypes=("float64",)),
    OpInfo("Tensor.float_power__float32", lambda T, a: a.float().float_power_(2), lambda rng, dt: [],
           errors=lambda: [ErrorSample(Sample(np.ones(3)), RuntimeError, "the base given to float_power_ has dtype "
                                                                         "Float but the operation's result requires "
                                                                         "dtype Double")]),
    OpInfo("Tensor.cumprod_", lambda T, a: a.clone().cumprod_(1), lambda rng, dt: [Sample(arr(rng, (3, 4), dt))]),
    OpInfo("Tensor.scatter_reduce_", lambda T, a, b: a.clone().scatter_reduce_(0, T.tensor([0, 0, 2]), b, "sum"),
           lambda rng, dt: [Sample(arr(rng, (4,), dt), arr(rng, (3,), dt))]),
    OpInfo("Tensor.scatter_reduce__amax", lambda T, a, b: a.clone().scatter_reduce_(0, T.tensor([0, 1, 2]), b, "amax",
                                                                                     include_self=False),
           lambda rng, dt: [Sample(arr(rng, (4,), dt), arr(rng, (3,), dt))]),
    OpInfo("Tensor.swapaxes_", lambda T, a: (a.clone().swapaxes_(0, 1), a.clone().swapdims_(1, 0)),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt))]),
]
