"""torch.lobpcg against torch: the same seed gives the same eigenpairs (float64 to 1e-10; vectors up to sign),
for both methods, largest / smallest, B, iK, X, n, batches, sparse A, float32, ortho parameters; the tracker
sees torch's states; gradients through LOBPCGAutogradFunction; torch's errors."""
import numpy as np
import pytest
import torch

import glassgrad as gg

RS = np.random.RandomState(0)
_M = RS.randn(15, 15)
A = _M @ _M.T + np.diag(np.arange(15.0))
_N = RS.randn(15, 15)
B = _N @ _N.T + 15 * np.eye(15)
X0 = RS.randn(15, 3)
IK = np.diag(1 / np.arange(1, 16.0))


def _run(lib, a=A, seed=0, **kw):
    lib.manual_seed(seed)
    k = {n: lib.tensor(v) if isinstance(v, np.ndarray) else v for n, v in kw.items()}
    return lib.lobpcg(lib.tensor(a), **k)


def _same(t, g, tol=1e-10):
    (te, tx), (ge, gx) = t, g
    assert str(ge.dtype) == str(te.dtype) and tuple(gx.shape) == tuple(tx.shape)
    np.testing.assert_allclose(ge.numpy(), te.numpy(), rtol=tol, atol=tol)
    tx, gx = tx.numpy(), gx.numpy()
    sign = np.sign(np.sum(tx * gx, axis=-2, keepdims=True))
    np.testing.assert_allclose(gx * sign, tx, atol=tol * 100)


CASES = [dict(k=2), dict(k=3, largest=False), dict(k=2, method="basic"), dict(k=1, method="basic", largest=False),
         dict(k=2, n=4), dict(k=2, niter=2), dict(k=2, B=B), dict(k=2, B=B, method="basic", largest=False),
         dict(X=X0), dict(k=2, iK=IK, method="basic"), dict(k=2, ortho_bparams={"ortho_use_drop": True}),
         dict(k=2, ortho_iparams={"ortho_i_max": 1, "ortho_j_max": 1}, ortho_fparams={"ortho_tol": 1e-3}),
         dict(k=2, tol=1e-4)]


@pytest.mark.parametrize("kw", CASES, ids=[str(i) for i in range(len(CASES))])
def test_same_seed_same_eigenpairs(kw):
    _same(_run(torch, **kw), _run(gg, **kw))


def test_eigenvalues_are_right():
    e, x = _run(gg, k=3)
    np.testing.assert_allclose(e.numpy(), np.linalg.eigvalsh(A)[::-1][:3], rtol=1e-10)
    np.testing.assert_allclose(A @ x.numpy(), x.numpy() * e.numpy(), atol=1e-6)


def test_batched_float32_sparse():
    a2 = np.stack([A, A + np.eye(15)])
    _same(_run(torch, a2, k=2), _run(gg, a2, k=2))
    torch.manual_seed(1)
    t = torch.lobpcg(torch.tensor(A, dtype=torch.float32), k=2)
    gg.manual_seed(1)
    g = gg.lobpcg(gg.tensor(A, dtype=gg.float32), k=2)
    assert g[0].dtype == gg.float32
    np.testing.assert_allclose(g[0].numpy(), t[0].numpy(), rtol=1e-5)
    torch.manual_seed(2)
    t = torch.lobpcg(torch.tensor(A).to_sparse(), k=2)
    gg.manual_seed(2)
    g = gg.lobpcg(gg.tensor(A).to_sparse(), k=2)
    _same(t, g)


def test_tracker_sees_torchs_states():
    seen = []
    for lib in (torch, gg):
        states = []
        _run(lib, k=2, tracker=lambda w: states.append((w.ivars["istep"], w.ivars["converged_count"],
                                                         sorted(w.fvars), float(w.E[0]))))
        seen.append(states)
    assert [s[:3] for s in seen[1]] == [s[:3] for s in seen[0]]
    np.testing.assert_allclose([s[3] for s in seen[1]], [s[3] for s in seen[0]], rtol=1e-10)


@pytest.mark.parametrize("kw,tol", [(dict(k=2), 1e-8), (dict(k=3, largest=False), 1e-8),
                                    (dict(k=4, n=4), 1e-5)])   # a degree-4 characteristic polynomial of A
def test_gradients(kw, tol):
    grads = []
    for lib in (torch, gg):
        lib.manual_seed(0)
        a = lib.tensor(A, requires_grad=True)
        e, x = lib.lobpcg(a, **kw)
        assert type(e.grad_fn).__name__ == "LOBPCGAutogradFunctionBackward"
        (e * lib.arange(1.0, e.numel() + 1)).sum().add((x ** 2).sum()).backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=tol, atol=tol * 1e-2)


ERRORS = [
    (lambda T: T.lobpcg(T.tensor(A[:5, :5]), k=2), ValueError,
     "LOBPCG algorithm is not applicable when the number of A rows (=5) is smaller than 3 x the number of requested "
     "eigenpairs (=2)"),
    (lambda T: T.lobpcg(T.tensor(A[:5]), k=1), AssertionError, "A must be square, got shape torch.Size([5, 15])"),
    (lambda T: T.lobpcg(T.tensor(A), B=T.tensor(B[:5, :5]), k=1), AssertionError, "A and B must have same shape"),
    (lambda T: T.lobpcg(T.tensor(A), X=T.tensor(X0[:4]), k=1), AssertionError,
     "X shape mismatch: got torch.Size([4, 3]), expected (15, 3)"),
    (lambda T: T.lobpcg(T.tensor(A).half(), k=1), KeyError, "torch.float16"),
    (lambda T: T.lobpcg(T.tensor(A, requires_grad=True), k=1, B=T.tensor(B))[0].sum().backward(), ValueError,
     "lobpcg.backward does not support backward with B != I yet."),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, exc, msg = ERRORS[i]
    for lib in (torch, gg):
        lib.manual_seed(0)
        with pytest.raises(exc) as e:
            fn(lib)
        assert msg in str(e.value), (lib.__name__, str(e.value))
