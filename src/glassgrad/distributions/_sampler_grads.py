"""The reparameterised gradients of torch's gamma and Dirichlet samplers (ATen's standard_gamma_grad_one and
dirichlet_grad_one, the approximations of Jankowiak & Obermeyer 2018 torch uses), in double precision:
d sample / d concentration, without differentiating through the sampler.  ATen's scalar kernels as array code
on the inputs' device: each branch runs on its own elements (by_branch), inner cases are np.where masks, and
loops run a fixed number of steps (with a mask where ATen's stops early)."""
import numpy as np

from . import _ops as T

_PSI_10 = 2.25175258906672110764
_PSI_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
          -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
          8.33333333333333333333E-2)


def _digamma(x):
    """Cephes digamma (the samplers' own copy in ATen) of a float64 array: the recurrence psi(x) = psi(x+1) - 1/x
    up to x >= 10 (at most 10 steps for x > 0, reflected x >= 1), then the asymptotic series."""
    pole = (x == 0) | ((x < 0) & (x == np.floor(x)))
    neg = x < 0
    extra = np.where(neg, -np.pi / np.tan(np.pi * x), 0.0)
    x = np.where(neg, 1 - x, x)
    x = np.where(pole, 10.0, x)                 # a pole's value is inf; keep its lane quiet
    result = np.zeros_like(x)
    for _ in range(10):
        step = x < 10
        result = np.where(step, result - 1 / x, result)
        x = np.where(step, x + 1, x)
    z = 1.0 / (x * x)
    poly = np.zeros_like(x)
    for c in _PSI_A:
        poly = poly * z + c
    y = np.where(x < 1.0e17, z * poly, 0.0)
    out = np.where(x == 10, result + _PSI_10 + extra, result + np.log(x) - (0.5 / x) - y + extra)
    return np.where(pole, np.inf, out)


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
        numer = numer * (-x / i)
        denom = denom + 1
        s1 = s1 + numer / denom
        s2 = s2 + numer / (denom * denom)
    pow_x_alpha = np.power(x, alpha)
    pdf = np.power(x, alpha - 1) * np.exp(-x)
    cdf_alpha = (np.log(x) - _digamma(alpha)) * (pow_x_alpha * s1) - pow_x_alpha * s2
    r = -cdf_alpha / pdf
    return np.where(np.isnan(r), 0.0, r)


_F09, _F11 = float(np.float32(0.9)), float(np.float32(1.1))


def _gamma_grad_large_alpha(alpha, x):
    """Rice saddle-point expansion for alpha > 8."""
    n1 = 1 + 24 * alpha * (1 + 12 * alpha)
    n2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x)
    near = n1 * n2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    denom = np.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = np.power(x - alpha - alpha * np.log(x / alpha), -1.5)
    term23 = np.where(x < alpha, term2 - term3, term2 + term3)
    term1 = np.log(x / alpha) * term23 - np.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    far = -stirling * (x * term1) / denom
    return np.where((_F09 * alpha <= x) & (x <= _F11 * alpha), near, far)


def _gamma_grad_rational(alpha, x):
    u, v = np.log(x / alpha), np.log(alpha)
    cv = [_GAMMA_UV[0][i] + u * (_GAMMA_UV[1][i] + u * _GAMMA_UV[2][i]) for i in range(8)]
    p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
    q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
    return np.exp(p / q)


def standard_gamma_grad(alpha, x):
    """torch._standard_gamma_grad(alpha, x), computed on the inputs' device."""
    return T.from_array(_standard_gamma_grad_arr(alpha.detach()._data, x.detach()._data))


def by_branch(shape, dtype, branches, *args):
    """ATen's per-element case split over flat float64 arrays `args`: `branches` is a list of (mask, fn) pairs,
    the first true mask choosing an element's branch; each fn runs on the elements of its own branch only (boolean
    indexing on the arrays' device), the others' results never computed.  The result has `shape`, `dtype`."""
    out = np.empty_like(args[0])
    taken = None
    with np.errstate(all="ignore"):         # the branches' own overflow / NaN handling is ATen's
        for mask, fn in branches:
            if mask is None:
                mask = ~taken
            elif taken is not None:
                mask = mask & ~taken
            out[mask] = fn(*[v[mask] for v in args])
            taken = mask if taken is None else taken | mask
    return out.reshape(shape).astype(dtype)


def _flat64(*arrays):
    """The arrays broadcast together, as flat float64 copies, and their shape."""
    b = np.broadcast_arrays(*arrays)
    return b[0].shape, [v.astype(np.float64).ravel() for v in b]


def _standard_gamma_grad_arr(alpha, x):
    shape, (a, s) = _flat64(alpha, x)
    return by_branch(shape, x.dtype, [(s < float(np.float32(0.8)), _gamma_grad_small_x),
                                      (a > 8.0, _gamma_grad_large_alpha), (None, _gamma_grad_rational)], a, s)
