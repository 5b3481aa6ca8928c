"""The reparameterised gradients of torch's gamma and Dirichlet samplers (ATen's standard_gamma_grad_one and
dirichlet_grad_one, the approximations of Jankowiak & Obermeyer 2018 torch uses), element by element in
double precision: d sample / d concentration, without differentiating through the sampler."""
import math

import numpy as np

from . import _ops as T
from ..backend import host_apply

_PSI_10 = 2.25175258906672110764
_PSI_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
          -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
          8.33333333333333333333E-2)


def _digamma(x):
    """Cephes digamma (the samplers' own copy in ATen)."""
    if x == 0:
        return math.inf
    extra = 0.0
    if x < 0:
        if x == math.floor(x):
            return math.inf
        extra = -math.pi / math.tan(math.pi * x)
        x = 1 - x
    result = 0.0
    while x < 10:
        result -= 1 / x
        x += 1
    if x == 10:
        return result + _PSI_10 + extra
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        poly = 0.0
        for c in _PSI_A:
            poly = poly * z + c
        y = z * poly
    return result + math.log(x) - (0.5 / x) - y + extra


_GAMMA_UV = ((0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084),
             (0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
              -0.00058392623),
             (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326,
              0.00085092367, -1.5247877e-07))


def _gamma_grad_small_x(alpha, x):
    """Taylor series of the incomplete gamma for x < 0.8."""
    numer, denom = 1.0, alpha
    s1, s2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer *= -x / i
        denom += 1
        s1 += numer / denom
        s2 += numer / (denom * denom)
    pow_x_alpha = math.pow(x, alpha)
    pdf = math.pow(x, alpha - 1) * math.exp(-x)
    cdf_alpha = (math.log(x) - _digamma(alpha)) * (pow_x_alpha * s1) - pow_x_alpha * s2
    r = -cdf_alpha / pdf
    return 0.0 if math.isnan(r) else r


_F09, _F11 = float(np.float32(0.9)), float(np.float32(1.1))


def _gamma_grad_large_alpha(alpha, x):
    """Rice saddle-point expansion for alpha > 8."""
    if _F09 * alpha <= x <= _F11 * alpha:
        n1 = 1 + 24 * alpha * (1 + 12 * alpha)
        n2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x)
        return n1 * n2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    denom = math.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = math.pow(x - alpha - alpha * math.log(x / alpha), -1.5)
    term23 = term2 - term3 if x < alpha else term2 + term3
    term1 = math.log(x / alpha) * term23 - math.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    return -stirling * (x * term1) / denom


def _gamma_grad_one(alpha, x):
    if x < float(np.float32(0.8)):
        return _gamma_grad_small_x(alpha, x)
    if alpha > 8.0:
        return _gamma_grad_large_alpha(alpha, x)
    u, v = math.log(x / alpha), math.log(alpha)
    cv = [_GAMMA_UV[0][i] + u * (_GAMMA_UV[1][i] + u * _GAMMA_UV[2][i]) for i in range(8)]
    p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
    q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
    return math.exp(p / q)


def standard_gamma_grad(alpha, x):
    """torch._standard_gamma_grad(alpha, x)."""
    # a Python loop per element (ATen's scalar kernel): host only, so device arrays make an explicit round trip
    return T.from_array(host_apply(_standard_gamma_grad_arr, alpha.detach()._data, x.detach()._data))


def _standard_gamma_grad_arr(alpha, x):
    a, s = np.broadcast_arrays(alpha, x)
    out = [_gamma_grad_one(p, q) for p, q in zip(a.ravel().tolist(), s.ravel().tolist())]
    return np.array(out, dtype=x.dtype).reshape(a.shape)



