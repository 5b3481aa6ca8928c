"""The reparameterised-gradient kernels of torch's gamma / Dirichlet samplers and the positive-definite check
(distributions/_sampler_grads.py, _dirichlet_grad.py, _linalg.py) are array code on the inputs' device; this
checks them against the scalar code they replaced (ATen's standard_gamma_grad_one / dirichlet_grad_one,
element by element with Python's math, kept below as the reference) on dense grids that cover every branch, and
against torch (the oracle) where the scalar code raised (math.log(0), pow overflow).

Tolerances: + - * / and sqrt are correctly rounded in both; NumPy's log / exp / pow (SIMD on x86 with AVX-512)
may differ from the C library's by 1 ulp, so values agree bit for bit on most elements and within a few ulp on
well-conditioned branches; where a branch cancels (the small-x series for tiny alpha, the saddle-point expansion
near the mean) that ulp is amplified, bounded here in relative terms."""
import math

import numpy as np
import pytest
import torch

from glassgrad.distributions._dirichlet_grad import _dirichlet_grad_arr
from glassgrad.distributions._linalg import _cholesky_ok_arr
from glassgrad.distributions._sampler_grads import _digamma, _standard_gamma_grad_arr

# --- the scalar reference (the code the array versions replaced) -------------------------------------------
_PSI_10 = 2.25175258906672110764
_PSI_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
          -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
          8.33333333333333333333E-2)


def digamma_one(x):
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
    cdf_alpha = (math.log(x) - digamma_one(alpha)) * (pow_x_alpha * s1) - pow_x_alpha * s2
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


def gamma_grad_one(alpha, x):
    if x < float(np.float32(0.8)):
        return _gamma_grad_small_x(alpha, x)
    if alpha > 8.0:
        return _gamma_grad_large_alpha(alpha, x)
    u, v = math.log(x / alpha), math.log(alpha)
    cv = [_GAMMA_UV[0][i] + u * (_GAMMA_UV[1][i] + u * _GAMMA_UV[2][i]) for i in range(8)]
    p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
    q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
    return math.exp(p / q)


def _grad_alpha_small(x, alpha, beta):
    factor = digamma_one(alpha) - digamma_one(alpha + beta) - math.log(x)
    numer = 1.0
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer *= (i - beta) * x / i
        denom = alpha + i
        series += numer / denom * (factor + 1 / denom)
    r = x * math.pow(1 - x, -beta) * series
    return 0.0 if math.isnan(r) else r


def _grad_beta_small(x, alpha, beta):
    factor = digamma_one(alpha + beta) - digamma_one(beta)
    numer, betas, dbetas, series = 1.0, 1.0, 0.0, factor / alpha
    for i in range(1, 9):
        numer *= -x / i
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series += numer / (alpha + i) * (dbetas + factor * betas)
    r = -math.pow(1 - x, 1 - beta) * series
    return 0.0 if math.isnan(r) else r


def _grad_alpha_mid(x, alpha, beta):
    total = alpha + beta
    mean = alpha / total
    std = math.sqrt(alpha * beta / (total + 1)) / total
    if mean - 0.1 * std <= x <= mean + 0.1 * std:
        bb = beta * beta
        poly = 47 * x * bb * bb + alpha * (
            (43 + 20 * (16 + 27 * beta) * x) * bb * beta + alpha * (
                3 * (59 + 180 * beta - 90 * x) * bb + alpha * (
                    (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (8 * (1 - x) * (135 * beta - 11)))))
        pre_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
        pre_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
        return pre_num / (1 - x) * poly / pre_den
    prefactor = -x / math.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    t1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    t1 = t1_num / (math.sqrt(2 * alpha / beta) * math.pow(total, 1.5) * axbx * axbx)
    t2 = 0.5 * math.log(alpha / (total * x))
    t3 = math.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    t4 = math.pow(beta * math.log(beta / (total * (1 - x))) + alpha * math.log(alpha / (total * x)), -1.5)
    return stirling * prefactor * (t1 + t2 * (t3 + (t4 if x < mean else -t4)))


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


def dirichlet_grad_one(x, alpha, total):
    beta = total - alpha
    boundary = total * x * (1 - x)
    if x <= 0.5 and boundary < 2.5:
        return _grad_alpha_small(x, alpha, beta)
    if x >= 0.5 and boundary < 0.75:
        return -_grad_beta_small(1 - x, beta, alpha)
    if alpha > 6 and beta > 6:
        return _grad_alpha_mid(x, alpha, beta)
    u = math.log(x)
    a = math.log(alpha) - u
    b = math.log(total) - a
    pow_u, pow_a = (1, u, u * u), (1, a, a * a)
    p = q = 0.0
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _C[0][i][j], _C[1][i][j]
            p += ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q += ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    approx = x * (digamma_one(total) - digamma_one(alpha)) / beta
    return p / q * approx


def _loop_cholesky_ok(a):
    """The per-matrix check the batched one replaced: np.linalg.cholesky raises LinAlgError for a failed matrix."""
    flat = a.reshape((-1,) + a.shape[-2:])
    ok = []
    for m in flat:
        try:
            np.linalg.cholesky(m)
            ok.append(True)
        except np.linalg.LinAlgError:
            ok.append(False)
    return np.array(ok, dtype=bool).reshape(a.shape[:-2])


def _scalar(fn, *arrays):
    """fn per element; NaN where the scalar code raises (a Python math domain / overflow error)."""
    out = []
    for v in zip(*[a.ravel().tolist() for a in arrays]):
        try:
            out.append(fn(*v))
        except (ValueError, OverflowError, ZeroDivisionError):
            out.append(math.nan)
    return np.array(out).reshape(arrays[0].shape)


# --- comparison helpers ------------------------------------------------------------------------------------
def _ulps(a, b):
    """|a - b| in units in the last place of float64 (0 where both are equal or both NaN)."""
    ai, bi = a.view(np.int64), b.view(np.int64)
    ai = np.where(ai < 0, np.int64(-2 ** 63) - ai, ai)
    bi = np.where(bi < 0, np.int64(-2 ** 63) - bi, bi)
    d = np.abs(ai - bi)
    d[(a == b) | (np.isnan(a) & np.isnan(b))] = 0
    return d


def _check_branch(name, got, ref, mask, max_ulp=None, rtol=None, min_identical=0.85):
    """On `mask` (elements of one branch where the scalar code ran): same NaN / inf, within `max_ulp` ulp (or
    relative `rtol`), and bit-identical on at least `min_identical` of them (the same formula, the same order)."""
    assert mask.sum() >= 50, f"{name}: the grid hardly reaches this branch ({mask.sum()} points)"
    g, r = got[mask], ref[mask]
    np.testing.assert_array_equal(np.isfinite(g), np.isfinite(r), err_msg=name)
    d = _ulps(g, r)
    if max_ulp is not None:
        assert d.max() <= max_ulp, f"{name}: {d.max()} ulp at {np.argmax(d)}: {g[np.argmax(d)]!r} vs {r[np.argmax(d)]!r}"
    if rtol is not None:
        fin = np.isfinite(r)
        np.testing.assert_allclose(g[fin], r[fin], rtol=rtol, atol=0, err_msg=name)
    assert (d == 0).mean() >= min_identical, f"{name}: only {(d == 0).mean():.3f} bit-identical"


def _check_torch(name, got, want, rtol=1e-12):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=name)
    fin = np.isfinite(want)
    np.testing.assert_array_equal(np.sign(got[~fin]), np.sign(want[~fin]), err_msg=name)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=0, err_msg=name)


F08 = float(np.float32(0.8))


# --- digamma -----------------------------------------------------------------------------------------------
def test_digamma_matches_scalar():
    pos = np.concatenate([np.geomspace(5e-324, 1e300, 4000), np.linspace(0.01, 30, 3000),
                          [1.0, 9.0, 10.0, np.nextafter(10.0, 0), 1e17, np.nextafter(1e17, 0), 1e18, np.inf]])
    with np.errstate(all="ignore"):                 # as inside the kernels that call it
        ref, got = _scalar(digamma_one, pos), _digamma(pos)
    assert _ulps(got, ref).max() <= 2 and (_ulps(got, ref) == 0).mean() > 0.95
    neg = -np.concatenate([np.geomspace(1e-6, 1e5, 1000), np.linspace(0.013, 20.013, 1000)])
    with np.errstate(all="ignore"):
        ref, got = _scalar(digamma_one, neg), _digamma(neg)
    # tan's ulp, amplified near digamma's zeros between the poles
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)
    special = np.array([0.0, -1.0, -7.0, -1e6, np.nan])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_digamma(special), [np.inf, np.inf, np.inf, np.inf, np.nan])


# --- _standard_gamma_grad -------------------------------------------------------------------------------------
def _gamma_grid():
    al = np.concatenate([np.geomspace(1e-4, 1e6, 160), [0.5, 1.0, 8.0, np.nextafter(8.0, 9.0), 10.0, 100.0]])
    xx = np.concatenate([np.geomspace(1e-300, 1e6, 240), [F08, np.nextafter(F08, 0), 0.5, 1.0]])
    a, x = (v.ravel() for v in np.meshgrid(al, xx))
    big = np.repeat(np.geomspace(8.5, 1e6, 60), 150)              # the band around x = alpha (both cases)
    near = big * np.tile(np.linspace(0.5, 1.6, 150), 60)
    return np.concatenate([a, big]), np.concatenate([x, near])


def test_standard_gamma_grad_matches_scalar():
    a, x = _gamma_grid()
    ref, got = _scalar(gamma_grad_one, a, x), _standard_gamma_grad_arr(a, x)
    ran = ~np.isnan(ref)
    small, large = x < F08, (x >= F08) & (a > 8)
    band = large & (x >= float(np.float32(0.9)) * a) & (x <= float(np.float32(1.1)) * a)
    _check_branch("small x", got, ref, ran & small, rtol=1e-10)
    _check_branch("large alpha, near", got, ref, ran & band, max_ulp=8)
    _check_branch("large alpha, far", got, ref, ran & large & ~band, max_ulp=64)
    _check_branch("rational", got, ref, ran & ~small & ~large, max_ulp=4)
    # where the scalar code raised, torch's kernel (C, no exceptions) is the oracle
    assert (~ran).sum() > 1000
    want = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    _check_torch("scalar raised", got[~ran], want[~ran])


def test_standard_gamma_grad_edges_match_torch():
    a = np.array([1e-300, 1e-3, 0.5, 1.0, 7.9, 8.0, 8.5, 100.0, 1e6, 1e12, 1e300])
    x = np.array([0.0, 5e-324, 1e-300, 1e-30, 0.5, F08, 1.0, 1e6, 1e12, 1e300, np.inf])
    A, X = np.meshgrid(a, x)
    want = torch._standard_gamma_grad(torch.tensor(A), torch.tensor(X)).numpy()
    _check_torch("edges", _standard_gamma_grad_arr(A, X), want)


def test_standard_gamma_grad_dtype_and_broadcast():
    a = np.array([[0.3], [2.0], [30.0]], np.float32)
    x = np.array([1e-3, 0.5, 0.9, 2.0, 40.0], np.float32)
    got = _standard_gamma_grad_arr(a, x)
    assert got.dtype == np.float32 and got.shape == (3, 5)
    ref = _scalar(gamma_grad_one, *np.broadcast_arrays(a.astype(np.float64), x.astype(np.float64)))
    np.testing.assert_array_equal(got, ref.astype(np.float32))
    want = torch._standard_gamma_grad(torch.tensor(a).expand(3, 5), torch.tensor(x).expand(3, 5)).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-7)
    z = _standard_gamma_grad_arr(np.array(2.0), np.array(1.5))
    assert z.shape == () and z == gamma_grad_one(2.0, 1.5)
    assert _standard_gamma_grad_arr(np.zeros((0, 3)), np.ones(3)).shape == (0, 3)


# --- _dirichlet_grad ------------------------------------------------------------------------------------------
def _dirichlet_grid():
    xs = np.concatenate([np.geomspace(1e-12, 0.5, 36), 1 - np.geomspace(1e-12, 0.5, 36), [0.25, 0.5, 0.75]])
    al = np.geomspace(1e-3, 1e4, 36)
    fr = np.array([0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1.5, 3, 10, 100, 1e4])      # beta / alpha
    x, a, f = (v.ravel() for v in np.meshgrid(xs, al, fr, indexing="ij"))
    a2, b2 = (v.ravel() for v in np.meshgrid(np.geomspace(6.5, 1e4, 25), np.geomspace(6.5, 1e4, 25)))
    t2 = a2 + b2                                                # alpha, beta > 6 around the mean (both cases)
    mean, std = a2 / t2, np.sqrt(a2 * b2 / (t2 + 1)) / t2
    x2 = (mean[:, None] + std[:, None] * np.linspace(-3, 3, 25)).clip(1e-9, 1 - 1e-9).ravel()
    return (np.concatenate([x, x2]), np.concatenate([a, np.repeat(a2, 25)]),
            np.concatenate([a * (1 + f), np.repeat(t2, 25)]))


def test_dirichlet_grad_matches_scalar():
    x, a, t = _dirichlet_grid()
    ref, got = _scalar(dirichlet_grad_one, x, a, t), _dirichlet_grad_arr(x, a, t)
    assert not np.isnan(ref).any()
    b, boundary = t - a, t * x * (1 - x)
    asmall = (x <= 0.5) & (boundary < 2.5)
    bsmall = ~asmall & (x >= 0.5) & (boundary < 0.75)
    mid = ~asmall & ~bsmall & (a > 6) & (b > 6)
    _check_branch("alpha small", got, ref, asmall, max_ulp=8)
    _check_branch("beta small", got, ref, bsmall, max_ulp=8)
    _check_branch("mid", got, ref, mid, rtol=1e-10)
    _check_branch("rational", got, ref, ~asmall & ~bsmall & ~mid, max_ulp=4)


def test_dirichlet_grad_edges_match_torch():
    xs = np.array([0.0, 5e-324, 1e-300, 1e-10, 0.5, 1 - 1e-16, np.nextafter(1.0, 0), 1.0])
    al = np.array([1e-3, 0.5, 1.0, 6.5, 100.0, 1e6])
    fr = np.array([1e-3, 1.0, 10.0, 1e6])
    x, a, f = np.meshgrid(xs, al, fr, indexing="ij")
    t = a * (1 + f)
    want = torch._dirichlet_grad(torch.tensor(x), torch.tensor(a), torch.tensor(t)).numpy()
    _check_torch("edges", _dirichlet_grad_arr(x, a, t), want, rtol=1e-11)


def test_dirichlet_grad_dtype_and_broadcast():
    x = np.array([[0.01], [0.4], [0.97]], np.float32)
    a = np.array([0.5, 3.0, 9.0, 40.0], np.float32)
    t = np.float32(60.0) + np.zeros(4, np.float32)
    got = _dirichlet_grad_arr(x, a, t)
    assert got.dtype == np.float32 and got.shape == (3, 4)
    ref = _scalar(dirichlet_grad_one, *np.broadcast_arrays(*(v.astype(np.float64) for v in (x, a, t))))
    np.testing.assert_array_equal(got, ref.astype(np.float32))


# --- the positive-definite check ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_cholesky_ok_matches_loop(n, dtype):
    rng = np.random.default_rng(n)
    mats = []
    for k in range(400):
        b = rng.standard_normal((n, n))
        b[:, :k % (n + 1)] *= k % 3 != 0                        # some rank-deficient (singular PSD)
        m = b @ b.T + [0, 1e-16, 1e-12, -1e-12, 1e-3, -1e-3, -1.0][k % 7] * np.eye(n)
        if k % 17 == 0:
            m[rng.integers(n), rng.integers(n)] = [np.nan, np.inf, -np.inf][k % 3]
        mats.append(m)
    a = np.stack(mats).astype(dtype).reshape(4, 100, n, n)
    want, got = _loop_cholesky_ok(a), _cholesky_ok_arr(a)
    assert got.dtype == bool and got.shape == (4, 100)
    np.testing.assert_array_equal(got, want)
    assert 0.1 < want.mean() < 0.95
    np.testing.assert_array_equal(_cholesky_ok_arr(a[0, 0]), want[0, 0])     # one matrix: a 0-d array
    assert isinstance(_cholesky_ok_arr(a[0, 0]), np.ndarray)


def test_cholesky_ok_empty_and_torch():
    assert _cholesky_ok_arr(np.zeros((0, 2, 2))).shape == (0,)
    np.testing.assert_array_equal(_cholesky_ok_arr(np.zeros((3, 0, 0))), [True] * 3)
    a = np.array([[[2.0, 0.3], [0.3, 1.0]], [[1.0, 2.0], [2.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]])
    info = torch.linalg.cholesky_ex(torch.tensor(a)).info.numpy()
    np.testing.assert_array_equal(_cholesky_ok_arr(a), info == 0)
