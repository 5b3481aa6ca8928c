"""torch._dirichlet_grad(x, alpha, total): the scaled reparameterised gradient of a Beta(alpha, total - alpha)
draw, -(d/dalpha cdf) / pdf / (1 - x), by ATen's case split (small-x and near-1 Taylor series, a saddle-point
expansion for large parameters, a rational correction otherwise), in double precision on the inputs' device:
each branch runs on its own elements (_sampler_grads.by_branch), inner cases are np.where masks."""
import numpy as np

from . import _ops as T
from ._sampler_grads import _digamma, _flat64, by_branch


def _grad_alpha_small(x, alpha, beta):
    factor = _digamma(alpha) - _digamma(alpha + beta) - np.log(x)
    numer = 1.0
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    r = x * np.power(1 - x, -beta) * series
    return np.where(np.isnan(r), 0.0, r)


def _grad_beta_small(x, alpha, beta):
    factor = _digamma(alpha + beta) - _digamma(beta)
    numer, betas, dbetas, series = 1.0, 1.0, 0.0, factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    r = -np.power(1 - x, 1 - beta) * series
    return np.where(np.isnan(r), 0.0, r)


def _grad_alpha_mid(x, alpha, beta):
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    bb = beta * beta
    poly = 47 * x * bb * bb + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * bb * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * bb + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (8 * (1 - x) * (135 * beta - 11)))))
    pre_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    pre_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    near = pre_num / (1 - x) * poly / pre_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    t1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    t1 = t1_num / (np.sqrt(2 * alpha / beta) * np.power(total, 1.5) * axbx * axbx)
    t2 = 0.5 * np.log(alpha / (total * x))
    t3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    t4 = np.power(beta * np.log(beta / (total * (1 - x))) + alpha * np.log(alpha / (total * x)), -1.5)
    far = stirling * prefactor * (t1 + t2 * (t3 + np.where(x < mean, t4, -t4)))
    return np.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near, far)


_C = (((((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
         (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
         (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
        ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
         (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
         (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
        ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
         (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
         (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
       (((1, -0.02924021934, -0.04438342661, 0.007285809825),
         (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
         (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
        ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
         (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
         (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
        ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
         (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
         (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06)))))


def _grad_rational(x, alpha, total):
    beta = total - alpha
    u = np.log(x)
    a = np.log(alpha) - u
    b = np.log(total) - a
    pow_u, pow_a = (1, u, u * u), (1, a, a * a)
    p = q = 0.0
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _C[0][i][j], _C[1][i][j]
            p = p + ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q = q + ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    approx = x * (_digamma(total) - _digamma(alpha)) / beta
    return p / q * approx


def _dirichlet_grad_arr(x, alpha, total):
    shape, (xs, a, t) = _flat64(x, alpha, total)
    beta = t - a
    boundary = t * xs * (1 - xs)
    return by_branch(shape, x.dtype, [
        ((xs <= 0.5) & (boundary < 2.5), lambda x, a, t: _grad_alpha_small(x, a, t - a)),
        ((xs >= 0.5) & (boundary < 0.75), lambda x, a, t: -_grad_beta_small(1 - x, t - a, a)),
        ((a > 6) & (beta > 6), lambda x, a, t: _grad_alpha_mid(x, a, t - a)),
        (None, _grad_rational)], xs, a, t)


def dirichlet_grad(x, alpha, total):
    """torch._dirichlet_grad(x, alpha, total), computed on the inputs' device."""
    return T.from_array(_dirichlet_grad_arr(x.detach()._data, alpha.detach()._data, total.detach()._data))
