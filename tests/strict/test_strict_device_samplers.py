"""torch's C++ samplers (_standard_gamma, _sample_dirichlet, poisson, binomial) on CUDA tensors: drawn on the
device from the CUDA generator (distributions/_device_samplers.py), never copied to the host, leaving the CPU
generator alone.  torch's CUDA kernels use per-element curand streams, so the values cannot be torch's; checked
here: placement, dtype / shape as on the CPU, seeding, generator checks, and the distributions themselves
(moments of ~100k samples against the theoretical ones for parameters covering every branch, and a two-sample
Kolmogorov-Smirnov test of the gamma sampler against the CPU sampler, which replays torch's CPU samples)."""
import math

import numpy as np
import pytest

import glassgrad as gg
from glassgrad import backend
from glassgrad.distributions import _samplers

pytestmark = pytest.mark.cuda_rng
D = gg.distributions
N = 100_000


def _no_copies():
    if not backend.STRICT:
        import contextlib
        return contextlib.nullcontext([])
    from glassgrad import _strict
    return _strict.recording()


def _t(v, dev, dt=gg.float32):
    return gg.tensor(v, dtype=dt, device=dev)


SAMPLERS = {
    "_standard_gamma": lambda d: _samplers.standard_gamma(_t([0.3, 1.0, 4.0, 0.0], d)),
    "_standard_gamma_f64": lambda d: _samplers.standard_gamma(_t([[0.3, 1.0], [40.0, 2.5]], d, gg.float64)),
    "Gamma": lambda d: D.Gamma(_t([0.5, 2.0, 30.0], d), _t([1.0, 2.0, 0.5], d)).rsample((5,)),
    "Chi2": lambda d: D.Chi2(_t([0.7, 3.0], d, gg.float64)).rsample((4,)),
    "StudentT": lambda d: D.StudentT(_t([3.0, 5.0, 9.0], d)).rsample((2,)),
    "Dirichlet": lambda d: D.Dirichlet(_t([0.7, 2.0, 3.0], d)).rsample((6,)),
    "Beta": lambda d: D.Beta(_t([0.7, 2.0], d, gg.float64), _t([3.0, 0.4], d, gg.float64)).rsample((3,)),
    "poisson": lambda d: gg.poisson(_t([[0.0, 0.5, 3.0], [9.9, 10.0, 1e6]], d)),
    "Poisson": lambda d: D.Poisson(_t([2.0, 40.0], d, gg.float64)).sample((3,)),
    "binomial": lambda d: gg.binomial(_t([20.0, 1000.0, 30.0, 500.0, 10.0, 10.0, 0.0], d),
                                      _t([0.2, 0.3, 0.9, 0.8, 0.0, 1.0, 0.4], d)),
    "Binomial": lambda d: D.Binomial(_t([5.0, 50.0], d, gg.float64), _t([0.4, 0.6], d, gg.float64)).sample((3,)),
    "NegativeBinomial": lambda d: D.NegativeBinomial(_t([3.0, 20.0], d), _t([0.3, 0.7], d)).sample((2,)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_on_the_device_seeded_and_the_cpu_generator_untouched(name):
    draw = SAMPLERS[name]
    gg.manual_seed(11)
    ref = draw("cpu")
    gg.manual_seed(11)
    cpu_state = gg.get_rng_state().clone()
    gen = gg.cuda.default_generators[0]
    offset = gen.get_offset()
    with _no_copies() as copies:
        x = draw("cuda")
    assert not copies
    assert x.device.type == "cuda" and x.dtype == ref.dtype and x.shape == ref.shape
    assert gg.equal(gg.get_rng_state(), cpu_state)              # the CPU stream did not move
    assert gen.get_offset() > offset                              # the CUDA one did
    gg.manual_seed(11)
    assert gg.equal(draw("cuda"), x)                              # same seed, same samples
    assert not gg.equal(draw("cuda"), x)                          # and the stream goes on


def test_generator_argument_of_poisson_and_binomial():
    r = gg.full((64,), 7.0, device="cuda")
    c, p = gg.full((64,), 40.0, device="cuda"), gg.full((64,), 0.3, device="cuda")
    g = gg.Generator(device="cuda").manual_seed(5)
    default_offset = gg.cuda.default_generators[0].get_offset()
    with _no_copies() as copies:
        a, b = gg.poisson(r, generator=g), gg.binomial(c, p, generator=g)
    assert not copies and a.device.type == b.device.type == "cuda"
    assert g.get_offset() > 0 and gg.cuda.default_generators[0].get_offset() == default_offset
    g.manual_seed(5)
    assert gg.equal(gg.poisson(r, generator=g), a) and gg.equal(gg.binomial(c, p, generator=g), b)
    for call in (lambda: gg.poisson(r, generator=gg.Generator()), lambda: gg.binomial(c, p, generator=gg.Generator())):
        with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
            call()
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        gg.poisson(gg.ones(3), generator=g)
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        gg.poisson(gg.tensor([1.0, float("nan")], device="cuda"))


def _host(x):
    return x.cpu().numpy().astype(np.float64)


def _check_moments(s, mean, var, what, z=5.0):
    """Sample mean and variance within `z` standard errors (the variance's from the sample's fourth moment)."""
    n = s.size
    m, v = s.mean(), s.var()
    assert abs(m - mean) <= z * math.sqrt(var / n) + 1e-12 * abs(mean), (what, m, mean)
    m4 = ((s - m) ** 4).mean()
    assert abs(v - var) <= z * math.sqrt(max(m4 - v * v, 0.0) / n) + 1e-12 * var, (what, v, var)


ALPHAS = [0.05, 0.3, 0.999, 1.0, 1.5, 7.0, 250.0, 1e5]


@pytest.mark.parametrize("dt", [gg.float32, gg.float64])
def test_gamma_moments_every_branch(dt):
    gg.manual_seed(1)
    alpha = gg.tensor(ALPHAS, dtype=dt, device="cuda").expand(N, len(ALPHAS))
    s = _host(_samplers.standard_gamma(alpha))
    for j, a in enumerate(ALPHAS):
        _check_moments(s[:, j], a, a, ("gamma", a))
    gg.manual_seed(2)
    x = _host(D.Gamma(gg.tensor([0.4, 9.0], dtype=dt, device="cuda"), gg.tensor([3.0, 0.5], dtype=dt,
                                                                                   device="cuda")).rsample((N,)))
    _check_moments(x[:, 0], 0.4 / 3, 0.4 / 9, "Gamma(0.4, 3)")
    _check_moments(x[:, 1], 18.0, 36.0, "Gamma(9, 0.5)")
    assert (s > 0).all() and (x > 0).all()


def test_gamma_zero_and_degenerate_alphas():
    a = gg.tensor([0.0, float("inf"), float("nan"), 1e-30], device="cuda")
    s = _samplers.standard_gamma(a).cpu()
    tiny = gg.finfo(gg.float32).tiny
    assert s[0].item() == tiny and s[1].item() == math.inf and math.isnan(s[2].item()) and s[3].item() == tiny


def _ks_critical(n, m):
    return 1.9495 * math.sqrt((n + m) / (n * m))             # two-sample KS, 99.9%


def _ks(a, b):
    a, b = np.sort(a), np.sort(b)
    allv = np.concatenate([a, b])
    return np.abs(np.searchsorted(a, allv, "right") / a.size - np.searchsorted(b, allv, "right") / b.size).max()


@pytest.mark.parametrize("alpha,dt", [(0.2, gg.float32), (0.7, gg.float64), (1.0, gg.float32), (3.5, gg.float64),
                                      (60.0, gg.float32)])
def test_gamma_matches_the_cpu_sampler_in_distribution(alpha, dt):
    n = 50_000
    gg.manual_seed(3)
    dev = _host(_samplers.standard_gamma(gg.full((n,), alpha, dtype=dt, device="cuda")))
    cpu = _host(_samplers.standard_gamma(gg.full((n,), alpha, dtype=dt)))
    assert _ks(dev, cpu) < _ks_critical(n, n)
    assert _ks(dev, dev[::-1] * 1.05) > _ks_critical(n, n) or alpha < 1      # the statistic can fail


def test_dirichlet_and_beta_moments():
    gg.manual_seed(4)
    c = np.array([0.3, 1.0, 5.0])
    x = _host(D.Dirichlet(gg.tensor(c, device="cuda")).rsample((N,)))
    a0 = c.sum()
    for i in range(3):
        _check_moments(x[:, i], c[i] / a0, c[i] * (a0 - c[i]) / (a0 * a0 * (a0 + 1)), ("dirichlet", i))
    assert np.allclose(x.sum(-1), 1.0, atol=1e-5) and (x > 0).all() and (x < 1).all()
    b = _host(D.Beta(gg.tensor(0.5, device="cuda", dtype=gg.float64),
                     gg.tensor(2.0, device="cuda", dtype=gg.float64)).rsample((N,)))
    _check_moments(b, 0.2, 0.5 * 2.0 / (2.5 * 2.5 * 3.5), "beta")


def test_chi2_and_student_t_moments():
    gg.manual_seed(5)
    ch = _host(D.Chi2(gg.tensor([3.0, 0.8], device="cuda", dtype=gg.float64)).rsample((N,)))
    _check_moments(ch[:, 0], 3.0, 6.0, "chi2(3)")
    _check_moments(ch[:, 1], 0.8, 1.6, "chi2(0.8)")
    t = _host(D.StudentT(gg.tensor(12.0, device="cuda", dtype=gg.float64)).rsample((N,)))
    _check_moments(t, 0.0, 12.0 / 10.0, "t(12)", z=6.0)


RATES = [0.0, 0.01, 0.5, 3.0, 9.99, 10.0, 27.5, 1e3, 1e9]


@pytest.mark.parametrize("dt", [gg.float32, gg.float64])
def test_poisson_moments_every_branch(dt):
    gg.manual_seed(6)
    r = gg.tensor(RATES, dtype=dt, device="cuda").expand(N, len(RATES))
    s = _host(gg.poisson(r))
    assert (s == np.floor(s)).all() and (s >= 0).all()
    assert (s[:, 0] == 0).all()
    for j, lam in enumerate(RATES[1:], 1):
        lam = float(np.float32(lam)) if dt is gg.float32 else lam
        if lam < 1e8:
            _check_moments(s[:, j], lam, lam, ("poisson", lam))
        else:           # float32 counts of ~1e9 are rounded to 64: the mean only, to its rounding
            assert abs(s[:, j].mean() - lam) <= 5 * math.sqrt(lam / N) + 64, (lam, s[:, j].mean())


BINOMIAL = [(20.0, 0.2), (10.0, 0.05), (1000.0, 0.3), (30.0, 0.9), (500.0, 0.8), (5e6, 0.5), (10.0, 0.0),
            (10.0, 1.0), (0.0, 0.4), (7.0, 0.5), (45.0, 0.6)]


@pytest.mark.parametrize("dt", [gg.float32, gg.float64])
def test_binomial_moments_every_branch(dt):
    gg.manual_seed(7)
    n = gg.tensor([c for c, _ in BINOMIAL], dtype=dt, device="cuda").expand(N, len(BINOMIAL))
    p = gg.tensor([q for _, q in BINOMIAL], dtype=dt, device="cuda").expand(N, len(BINOMIAL))
    s = _host(gg.binomial(n, p))
    assert (s == np.floor(s)).all() and (s >= 0).all()
    for j, (c, q) in enumerate(BINOMIAL):
        q = float(np.float32(q)) if dt is gg.float32 else q
        assert (s[:, j] <= c).all()
        if q in (0.0, 1.0) or c == 0:
            assert (s[:, j] == c * q).all(), (c, q)
        else:
            _check_moments(s[:, j], c * q, c * q * (1 - q), ("binomial", c, q))


def test_binomial_degenerate_parameters():
    s = gg.binomial(gg.tensor([float("inf"), 5.0, float("nan"), 0.0, 5.0], device="cuda"),
                    gg.tensor([0.5, float("nan"), 0.3, float("nan"), 1.0], device="cuda")).cpu()
    assert s[0].item() == math.inf and math.isnan(s[1].item()) and math.isnan(s[2].item())
    assert s[3].item() == 0.0 and s[4].item() == 5.0


def test_rsample_gradients_on_the_device():
    gg.manual_seed(8)
    c = gg.tensor([0.4, 2.0, 25.0], device="cuda", dtype=gg.float64, requires_grad=True)
    rate = gg.tensor([1.0, 2.0, 0.5], device="cuda", dtype=gg.float64)
    with _no_copies() as copies:
        x = D.Gamma(c, rate).rsample((200,))
        x.sum().backward()
    assert not copies and c.grad.device.type == "cuda"
    xc, cc = x.detach().cpu(), c.detach().cpu()
    want = (_samplers.standard_gamma_grad(cc.expand(200, 3), xc * rate.cpu()) / rate.cpu()).sum(0)
    assert np.allclose(c.grad.cpu().numpy(), want.numpy(), rtol=1e-10, atol=1e-12)

    w = gg.tensor([1.0, -2.0, 0.5], device="cuda", dtype=gg.float64)
    k = gg.tensor([0.7, 1.5, 4.0], device="cuda", dtype=gg.float64, requires_grad=True)
    with _no_copies() as copies:
        y = D.Dirichlet(k).rsample((100,))
        (y * w).sum().backward()
    assert not copies and k.grad.device.type == "cuda"
    yc, kc, wc = y.detach().cpu(), k.detach().cpu().expand(100, 3), w.cpu()
    from glassgrad.distributions._dirichlet_grad import dirichlet_grad
    g = dirichlet_grad(yc, kc, kc.sum(-1, True).expand_as(kc)) * (wc - (yc * wc).sum(-1, True))
    assert np.allclose(k.grad.cpu().numpy(), g.sum(0).numpy(), rtol=1e-10, atol=1e-12)


def _chi2_critical(df):
    """The 99.9% quantile of chi-square with `df` degrees of freedom (Wilson-Hilferty, z = 3.0902)."""
    h = 2.0 / (9.0 * df)
    return df * (1.0 - h + 3.0902 * math.sqrt(h)) ** 3


def _chi2_against(s, logpmf, support):
    """Pearson's statistic of the counts of integer samples `s` against the pmf (cells of expected count < 5
    pooled into their neighbours), and its degrees of freedom."""
    counts = np.bincount(s.astype(np.int64), minlength=support + 1)[:support + 1]
    expect = np.array([math.exp(logpmf(k)) for k in range(support + 1)]) * s.size
    stat, df, o, e = 0.0, -1, 0.0, 0.0
    for ok, ek in zip(counts, expect):
        o, e = o + ok, e + ek
        if e >= 5:
            stat, df, o, e = stat + (o - e) ** 2 / e, df + 1, 0.0, 0.0
    return stat + ((o - e) ** 2 / e if e > 0 else 0.0), df


@pytest.mark.parametrize("lam", [0.7, 4.0, 9.99, 10.0, 13.0, 60.0])
def test_poisson_pmf(lam):
    gg.manual_seed(9)
    s = _host(gg.poisson(gg.full((N,), lam, dtype=gg.float64, device="cuda")))
    stat, df = _chi2_against(s, lambda k: k * math.log(lam) - lam - math.lgamma(k + 1), int(lam * 3 + 30))
    assert stat < _chi2_critical(df), (stat, df)


@pytest.mark.parametrize("n,p", [(12.0, 0.3), (40.0, 0.2), (60.0, 0.5), (25.0, 0.85), (200.0, 0.93)])
def test_binomial_pmf(n, p):
    gg.manual_seed(10)
    s = _host(gg.binomial(gg.full((N,), n, dtype=gg.float64, device="cuda"),
                          gg.full((N,), p, dtype=gg.float64, device="cuda")))
    lg = math.lgamma(n + 1)
    stat, df = _chi2_against(s, lambda k: lg - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(p)
                             + (n - k) * math.log1p(-p), int(n))
    assert stat < _chi2_critical(df), (stat, df)
