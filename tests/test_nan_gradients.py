"""NaN through values and gradients as torch: sign(NaN) is 0 (torch's (0 < x) - (x < 0)), so |x|' at NaN is 0;
piecewise-constant ops (sign, floor, ceil, trunc, round) and pow's x^0 give torch's zeros_like(grad) even for a
NaN or infinite gradient; smooth_l1 / huber pass a NaN difference through as torch's formulas do."""
import math

import numpy as np
import pytest
import torch

import glassgrad

NAN, INF = math.nan, math.inf
X = [NAN, -0.0, 0.0, 2.5, -3.0, INF, -INF]

CASES = {
    "sign": lambda T, x: x.sign(), "sgn": lambda T, x: x.sgn(), "abs": lambda T, x: x.abs(),
    "sign_times_x": lambda T, x: x.sign() * x, "l1_loss": lambda T, x: T.nn.functional.l1_loss(x, T.zeros_like(x)),
    "norm1": lambda T, x: x[:5].norm(1), "smooth_l1": lambda T, x: T.nn.functional.smooth_l1_loss(x, T.zeros_like(x)),
    "huber": lambda T, x: T.nn.functional.huber_loss(x, T.zeros_like(x), delta=0.5),
    "floor_nan_grad": lambda T, x: x.floor() * NAN, "ceil_inf_grad": lambda T, x: x.ceil() * INF,
    "trunc_nan_grad": lambda T, x: x.trunc() * NAN, "round_nan_grad": lambda T, x: x.round() * NAN,
    "sign_nan_grad": lambda T, x: x.sign() * NAN, "pow0_nan_grad": lambda T, x: x ** 0 * NAN,
    "pow_tensor_nan_grad": lambda T, x: T.pow(x, T.tensor([0.0, 1.0, 2.0, 0.0, 3.0, 0.0, 2.0])) * NAN,
    "copysign_nan_grad": lambda T, x: T.copysign(x, T.ones_like(x)) * NAN,
}


def _np(t):
    if isinstance(t, torch.Tensor) and t._is_zerotensor():      # torch's symbolic zero gradient (sgn's)
        return np.zeros(t.shape)
    return np.array(t.detach().tolist(), dtype=np.float64)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_nan_values_and_gradients_as_torch(name, dtype):
    res = []
    for T in (torch, glassgrad):
        x = T.tensor(X, dtype=getattr(T, dtype), requires_grad=True)
        y = CASES[name](T, x)
        y.sum().backward()
        res.append((_np(y), _np(x.grad)))
    (ty, tg), (gy, gg) = res
    np.testing.assert_array_equal(gy, ty, err_msg=f"{name} values")
    np.testing.assert_array_equal(gg, tg, err_msg=f"{name} gradient")
    assert np.array_equal(np.signbit(gy), np.signbit(ty)) or np.isnan(ty).any(), f"{name}: signed zeros"


def test_sign_of_nan_and_negative_zero_is_zero():
    for T in (torch, glassgrad):
        s = T.tensor([NAN, -0.0]).sign()
        assert s.tolist() == [0.0, 0.0] and not math.copysign(1.0, s[1].item()) < 0
