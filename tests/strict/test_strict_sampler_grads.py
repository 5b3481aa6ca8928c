"""torch's sampler gradients (_standard_gamma_grad, _dirichlet_grad: distributions/_sampler_grads.py,
_dirichlet_grad.py) and the positive-definite check of distribution arguments (distributions/_linalg.py's
cholesky_ok, behind constraints.positive_definite) compute on the `cuda` device -- the strict stand-in here
(GLASSGRAD_STRICT_DEVICE=1), CuPy on a GPU -- with the CPU's values, results on the device, and no copy of a
device array to the host."""
import numpy as np
import pytest

import glassgrad as gg
from glassgrad import _strict
from glassgrad.distributions import constraints
from glassgrad.distributions._dirichlet_grad import dirichlet_grad
from glassgrad.distributions._sampler_grads import standard_gamma_grad

D = gg.distributions


def _same(cpu, dev, rtol=1e-12):
    assert dev.device.type == "cuda", dev.device
    assert dev.dtype == cpu.dtype and dev.shape == cpu.shape
    np.testing.assert_allclose(dev.cpu().numpy(), cpu.numpy(), rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", [gg.float64, gg.float32])
def test_standard_gamma_grad_on_device(dtype):
    alpha = gg.tensor([[1e-3], [0.5], [2.0], [9.0], [300.0]], dtype=dtype)
    x = gg.tensor([1e-30, 0.1, 0.79, 1.0, 8.5, 250.0, 320.0], dtype=dtype)
    ac, xc = alpha.cuda(), x.cuda()
    with _strict.recording() as copies:
        g = standard_gamma_grad(ac, xc)
    assert not copies, copies
    _same(standard_gamma_grad(alpha, x), g)


@pytest.mark.parametrize("dtype", [gg.float64, gg.float32])
def test_dirichlet_grad_on_device(dtype):
    x = gg.tensor([[1e-8], [0.05], [0.3], [0.5], [0.6], [0.98]], dtype=dtype)
    alpha = gg.tensor([0.4, 2.0, 7.0, 50.0], dtype=dtype)
    total = alpha + gg.tensor([0.3, 3.0, 8.0, 60.0], dtype=dtype)
    xc, ac, tc = x.cuda(), alpha.cuda(), total.cuda()
    with _strict.recording() as copies:
        g = dirichlet_grad(xc, ac, tc)
    assert not copies, copies
    _same(dirichlet_grad(x, alpha, total), g)


@pytest.mark.parametrize("name", ["Gamma", "Dirichlet", "Beta"])
def test_rsample_backward_on_device(name):
    """The samplers' backward (the gradient kernels) stays on the device; the draw itself is torch's CPU
    generator replayed on the host, an explicit copy outside the recorded block."""
    def run(dev):
        conc = gg.tensor([0.3, 2.0, 20.0], dtype=gg.float64, device=dev, requires_grad=True)
        other = gg.tensor([1.5, 0.7, 4.0], dtype=gg.float64, device=dev, requires_grad=True)
        dist = {"Gamma": lambda: D.Gamma(conc, other), "Dirichlet": lambda: D.Dirichlet(conc),
                "Beta": lambda: D.Beta(conc, other)}[name]()
        gg.manual_seed(3)
        y = dist.rsample((6,))
        w = gg.arange(y.numel(), dtype=gg.float64, device=dev).reshape(y.shape)
        with _strict.recording() as copies:
            (y * w).sum().backward()
        assert not copies, copies
        return (conc.grad,) if name == "Dirichlet" else (conc.grad, other.grad)
    for a, b in zip(run("cpu"), run("cuda")):
        _same(a, b, rtol=1e-11)


def _matrices():
    m = np.array([[[2.0, 0.3], [0.3, 1.0]], [[1.0, 2.0], [2.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]],
                  [[4.0, -1.0], [-1.0, 3.0]], [[-1.0, 0.0], [0.0, 1.0]]])
    return gg.tensor(m, dtype=gg.float64)


def test_positive_definite_check_on_device():
    a = _matrices()
    want = constraints.positive_definite.check(a)
    assert want.tolist() == [True, False, False, True, False]
    ac = a.cuda()
    with _strict.recording() as copies:
        got = constraints.positive_definite.check(ac)
        one = constraints.positive_definite.check(ac[0])
        none = constraints.positive_definite.check(ac[4])
    assert not copies, copies
    assert got.device.type == "cuda" and got.dtype == gg.bool and got.tolist() == want.tolist()
    assert one.device.type == "cuda" and one.shape == () and one.item() and not none.item()


@pytest.mark.parametrize("kw", ["covariance_matrix", "precision_matrix"])
def test_distribution_validation_on_device(kw):
    good, bad = _matrices()[0].cuda(), _matrices()[1].cuda()
    with _strict.recording() as copies:
        D.MultivariateNormal(gg.zeros(2, dtype=gg.float64, device="cuda"), validate_args=True, **{kw: good})
        D.Wishart(gg.tensor(4.0, dtype=gg.float64, device="cuda"), validate_args=True, **{kw: good})
    assert not copies, copies
    with pytest.raises(ValueError, match=f"Expected parameter {kw}"):
        D.MultivariateNormal(gg.zeros(2, dtype=gg.float64, device="cuda"), validate_args=True, **{kw: bad})
    with pytest.raises(ValueError, match=f"Expected parameter {kw}"):
        D.Wishart(gg.tensor(4.0, dtype=gg.float64, device="cuda"), validate_args=True, **{kw: bad})
