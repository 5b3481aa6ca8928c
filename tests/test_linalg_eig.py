"""torch.linalg.eig / eigvals against torch: complex results, LinalgEigBackward0's gradients (real and complex
inputs, eigenvalues and phase-invariant functions of eigenvectors), gradcheck, the phase error, and errors."""
import numpy as np
import pytest
import torch

import glassgrad as gg


def _input(T, dt, shape=(2, 3, 3)):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    if dt.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return T.from_numpy(a.astype(dt)).requires_grad_(True)


def _np(t):
    return t.detach().resolve_conj().numpy()


@pytest.mark.parametrize("dt", ["float32", "float64", "complex64", "complex128"])
def test_eig_values_and_gradients_match_torch(dt):
    res = []
    for T in (torch, gg):
        A = _input(T, dt)
        L, V = T.linalg.eig(A)
        loss = (L.abs() ** 2).sum() + (V.abs() ** 3).sum() + (L * V.abs().sum(-2)).real.sum()
        gA, = T.autograd.grad(loss, A)
        g2, = T.autograd.grad(T.linalg.eigvals(A).real.sum(), A)
        res.append((str(L.dtype), str(V.dtype), L.grad_fn.name(), _np(L), np.abs(_np(V)), _np(gA), _np(g2)))
    tol = dict(rtol=2e-4, atol=2e-4) if dt in ("float32", "complex64") else dict(rtol=1e-9, atol=1e-9)
    assert res[1][:3] == res[0][:3]
    for a, b in zip(res[1][3:], res[0][3:]):
        np.testing.assert_allclose(a, b, **tol)


@pytest.mark.parametrize("dt", ["float64", "complex128"])
def test_gradcheck(dt):
    A = _input(gg, dt, (3, 3))
    assert gg.autograd.gradcheck(lambda X: gg.linalg.eigvals(X).abs(), (A,))
    assert gg.autograd.gradcheck(lambda X: gg.linalg.eig(X)[1].abs(), (A,))


def test_a_phase_dependent_loss_raises_as_torch():
    out = []
    for T in (torch, gg):
        A = T.tensor([[2.0 + 1j, 1.0], [0.5, 3.0 - 1j]], requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            T.autograd.grad(T.linalg.eig(A)[1].real.sum(), A)
        out.append(str(e.value))
    assert out[0] == out[1]


ERRORS = {"non_square": lambda T: T.linalg.eig(T.ones(2, 3)), "1d": lambda T: T.linalg.eig(T.ones(3)),
          "long": lambda T: T.linalg.eig(T.ones(2, 2, dtype=T.long)),
          "eigvals": lambda T: T.linalg.eigvals(T.ones(2, 3))}


@pytest.mark.parametrize("key", ERRORS)
def test_errors(key):
    out = []
    for T in (torch, gg):
        with pytest.raises(Exception) as e:
            ERRORS[key](T)
        out.append((type(e.value).__name__, str(e.value)))
    assert out[1] == out[0]


def test_small_cases_and_repr():
    for f in (lambda T: T.linalg.eig(T.tensor([[0.0, -1.0], [1.0, 0.0]])), lambda T: T.linalg.eig(T.eye(2)),
              lambda T: T.linalg.eigvals(T.zeros(0, 2, 2)).shape):
        assert repr(f(gg)) == repr(f(torch))
