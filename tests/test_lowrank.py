"""torch.svd_lowrank / torch.pca_lowrank against torch: the same seed gives the same factors (float64 to 1e-12;
each singular-vector pair up to one common sign, which LAPACK builds choose differently), reconstruction
quality, gradients through the composed ops, sparse input, and torch's errors."""
import warnings

import numpy as np
import pytest
import torch

import glassgrad as gg


def _data(shape, seed=0, rank=None):
    rs = np.random.RandomState(seed)
    if rank is None:
        return rs.randn(*shape)
    *b, m, n = shape
    return rs.randn(*b, m, rank) @ rs.randn(*b, rank, n)


def _run(fn, a, seed=3, **kw):
    torch.manual_seed(seed)
    t = getattr(torch, fn)(torch.tensor(a), **kw)
    gg.manual_seed(seed)
    g = getattr(gg, fn)(gg.tensor(a), **kw)
    return t, g


def _same_factors(t, g, tol=1e-10):
    """S equal; U and V equal column by column up to one sign shared by the pair (u_i, v_i) -- for the
    nonzero singular values (a zero one's vectors are any null-space vectors)."""
    assert type(g) is tuple and len(g) == 3
    (tu, ts, tv), (gu, gs, gv) = [x.detach().numpy() for x in t], [x.detach().numpy() for x in g]
    assert gu.shape == tu.shape and gs.shape == ts.shape and gv.shape == tv.shape
    assert g[0].dtype == gg.float64 if t[0].dtype == torch.float64 else g[0].dtype == gg.float32
    np.testing.assert_allclose(gs, ts, rtol=tol, atol=tol)
    keep = ts > 1e-8 * ts.max(axis=-1, keepdims=True)
    assert keep.any(axis=-1).all()
    keep = np.all(keep, axis=tuple(range(keep.ndim - 1)))
    gu, tu, gv, tv = gu[..., keep], tu[..., keep], gv[..., keep], tv[..., keep]
    sign = np.sign(np.sum(gu * tu, axis=-2, keepdims=True))
    np.testing.assert_allclose(gu * sign, tu, atol=tol)
    np.testing.assert_allclose(gv * sign, tv, atol=tol)


@pytest.mark.parametrize("shape", [(8, 5), (5, 8), (3, 7, 6), (2, 4, 9)])
@pytest.mark.parametrize("q,niter", [(3, 2), (4, 0), (2, 5)])
def test_svd_lowrank_same_seed(shape, q, niter):
    a = _data(shape)
    t, g = _run("svd_lowrank", a, q=q, niter=niter)
    _same_factors(t, g)


@pytest.mark.parametrize("shape", [(8, 5), (5, 8), (3, 7, 6)])
@pytest.mark.parametrize("center", [True, False])
def test_pca_lowrank_same_seed(shape, center):
    a = _data(shape, seed=1)
    t, g = _run("pca_lowrank", a, q=3, center=center)
    _same_factors(t, g)
    t, g = _run("pca_lowrank", a)           # q = min(6, m, n)
    _same_factors(t, g)


def test_svd_lowrank_with_mean():
    a, mean = _data((9, 6)), _data((1, 6), seed=2)
    torch.manual_seed(0)
    t = torch.svd_lowrank(torch.tensor(a), q=4, M=torch.tensor(mean))
    gg.manual_seed(0)
    g = gg.svd_lowrank(gg.tensor(a), q=4, M=gg.tensor(mean))
    _same_factors(t, g)


def test_float32_and_reconstruction():
    a = _data((12, 10), rank=3).astype(np.float32)
    t, g = _run("svd_lowrank", a, q=5)
    assert g[1].dtype == gg.float32
    np.testing.assert_allclose(g[1].numpy(), t[1].numpy(), rtol=1e-4, atol=1e-4)
    u, s, v = (x.numpy().astype(np.float64) for x in g)
    np.testing.assert_allclose(u @ np.diag(s) @ v.T, a, atol=1e-4)          # a rank-3 matrix, found exactly
    np.testing.assert_allclose(u.T @ u, np.eye(5), atol=1e-5)


def test_complex():
    rs = np.random.RandomState(4)
    a = rs.randn(7, 5) + 1j * rs.randn(7, 5)
    t, g = _run("svd_lowrank", a, q=3)
    np.testing.assert_allclose(g[1].numpy(), t[1].numpy(), rtol=1e-10)
    assert g[0].dtype == gg.complex128 and g[1].dtype == gg.float64


@pytest.mark.parametrize("fn", ["svd_lowrank", "pca_lowrank"])
def test_gradients(fn):
    a = _data((7, 5), seed=5)
    w = np.random.RandomState(6).randn(7, 5)
    grads = []
    for lib in (torch, gg):
        lib.manual_seed(1)
        x = lib.tensor(a, requires_grad=True)
        u, s, v = getattr(lib, fn)(x, q=3)
        loss = s.sum() + ((u * s.unsqueeze(-2)) @ v.mT * lib.tensor(w)).sum()   # sign-invariant
        loss.backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("fn", ["svd_lowrank", "pca_lowrank"])
@pytest.mark.parametrize("shape", [(7, 5), (5, 7)])
def test_sparse_input(fn, shape):
    a = _data(shape, seed=7)
    a[a < 0.3] = 0
    torch.manual_seed(2)
    with warnings.catch_warnings():    # both warn once (sparse invariant checks) when pca makes its mean
        warnings.simplefilter("ignore")
        t = getattr(torch, fn)(torch.tensor(a).to_sparse(), q=3)
    gg.manual_seed(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = getattr(gg, fn)(gg.tensor(a).to_sparse(), q=3)
    _same_factors(t, g)
    assert not any(x.is_sparse for x in g)


ERRORS = [
    ("pca_lowrank", {"q": 5}, ValueError, "q(=5) must be non-negative integer and not greater than min(m, n)=4"),
    ("pca_lowrank", {"q": -1}, ValueError, "q(=-1) must be non-negative integer"),
    ("pca_lowrank", {"niter": -1}, ValueError, "niter(=-1) must be non-negative integer"),
]


@pytest.mark.parametrize("fn,kw,exc,msg", ERRORS)
def test_errors(fn, kw, exc, msg):
    a = _data((6, 4))
    for lib in (torch, gg):
        with pytest.raises(exc) as e:
            getattr(lib, fn)(lib.tensor(a), **kw)
        assert msg in str(e.value)


def test_integer_input_error():
    for lib in (torch, gg):
        with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
            lib.svd_lowrank(lib.tensor(_data((6, 4))).long())
