"""torch.linalg on complex inputs against torch: values, dtypes (real eigenvalues, singular values and
log-determinants), grad_fn names and gradients of a real loss (conjugate transposes in the backward formulas,
the phase terms of svd and slogdet); gradcheck of the SVD in complex128."""
import numpy as np
import pytest
import torch

import glassgrad as gg


def _z(T, leaves, *s, seed=0, herm=False, pd=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(s) + 1j * rng.standard_normal(s)
    if herm:
        a = a + a.conj().swapaxes(-1, -2)
    if pd:
        a = a @ a.conj().swapaxes(-1, -2) + 3 * np.eye(s[-1])
    t = T.from_numpy(a).requires_grad_(True)
    leaves.append(t)
    return t


CASES = {
    "slogdet": lambda T, z: T.linalg.slogdet(z(3, 3))[1], "slogdet_sign": lambda T, z: T.linalg.slogdet(z(3, 3))[0],
    "slogdet_both": lambda T, z: (lambda s, l_: s * l_)(*T.linalg.slogdet(z(2, 3, 3))),
    "det": lambda T, z: T.linalg.det(z(3, 3)), "eigvalsh": lambda T, z: T.linalg.eigvalsh(z(3, 3, herm=True)),
    "eigh_vectors": lambda T, z: T.linalg.eigh(z(3, 3, herm=True))[1].abs(),
    "svdvals": lambda T, z: T.linalg.svdvals(z(3, 2)),
    "svd_U": lambda T, z: T.linalg.svd(z(3, 2), full_matrices=False)[0].abs(),
    "svd_Vh": lambda T, z: T.linalg.svd(z(2, 3), full_matrices=False)[2].abs(),
    "svd_product": lambda T, z: (lambda U, S, Vh: U @ Vh)(*T.linalg.svd(z(3, 3))),
    "qr_R": lambda T, z: T.linalg.qr(z(3, 3))[1], "qr_Q": lambda T, z: T.linalg.qr(z(3, 2))[0].abs(),
    "cholesky": lambda T, z: T.linalg.cholesky(z(3, 3, pd=True)),
    "cholesky_upper": lambda T, z: T.linalg.cholesky(z(3, 3, pd=True), upper=True),
    "pinv": lambda T, z: T.linalg.pinv(z(3, 2)), "pinv_wide": lambda T, z: T.linalg.pinv(z(2, 3)),
    "matrix_exp": lambda T, z: T.linalg.matrix_exp(z(3, 3)),
    "solve_triangular": lambda T, z: T.linalg.solve_triangular(z(3, 3).triu() + 3 * T.eye(3), z(3, 2, seed=1),
                                                               upper=True),
    "lu_factor": lambda T, z: T.linalg.lu_factor(z(3, 3))[0],
    "matrix_power": lambda T, z: T.linalg.matrix_power(z(3, 3), 3),
    "cholesky_solve": lambda T, z: T.cholesky_solve(z(3, 2, seed=1), T.linalg.cholesky(z(3, 3, pd=True))),
    "lstsq": lambda T, z: T.linalg.lstsq(z(4, 2), z(4, 1, seed=1)).solution,
    "vecdot": lambda T, z: T.linalg.vecdot(z(3), z(3, seed=1)),
    "vecdot_2d": lambda T, z: T.linalg.vecdot(z(2, 3), z(2, 3, seed=1)),
    "inv": lambda T, z: T.linalg.inv(z(3, 3)), "solve": lambda T, z: T.linalg.solve(z(3, 3), z(3, 2, seed=1)),
}


@pytest.mark.parametrize("key", CASES)
def test_matches_torch(key):
    res = []
    for T in (torch, gg):
        leaves = []
        y = CASES[key](T, lambda *s, **k: _z(T, leaves, *s, **k))
        ((y.abs() ** 2).sum() if y.is_complex() else y.sum()).backward()
        res.append((str(y.dtype), y.grad_fn.name(), y.detach().numpy(),
                    [x.grad.resolve_conj().numpy() for x in leaves]))
    assert res[1][:2] == res[0][:2]
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=1e-8, atol=1e-10)
    for a, b in zip(res[1][3], res[0][3]):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("shape", [(3, 2), (2, 3), (3, 3)])
def test_svd_gradcheck_complex128(shape):
    rng = np.random.default_rng(0)
    A = gg.from_numpy(rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).requires_grad_(True)
    assert gg.autograd.gradcheck(lambda X: gg.linalg.svdvals(X), (A,))
    assert gg.autograd.gradcheck(lambda X: gg.linalg.svd(X, full_matrices=False)[0].abs(), (A,))
    assert gg.autograd.gradcheck(lambda X: (lambda U, S, Vh: U @ Vh)(*gg.linalg.svd(X, full_matrices=False)), (A,))


def test_lu_solve_complex_matches_torch():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    b = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    for kw in ({}, {"adjoint": True}, {"left": False}):
        res = []
        for T in (torch, gg):
            A, B = T.from_numpy(a).requires_grad_(True), T.from_numpy(b).requires_grad_(True)
            LU, piv = T.linalg.lu_factor(A)
            X = T.linalg.lu_solve(LU, piv, B if kw.get("left", True) else B.mT, **kw)
            (X.abs() ** 2).sum().backward()
            res.append([t.detach().resolve_conj().numpy() for t in (X, A.grad, B.grad)])
        for x, y in zip(res[1], res[0]):
            np.testing.assert_allclose(x, y, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("f", [lambda T, a: T.linalg.ldl_factor(a + a.mH),
                               lambda T, a: T.linalg.householder_product(a, T.ones(2, dtype=T.cdouble))])
def test_complex_input_refused_where_glassgrad_computes_real_only(f):
    with pytest.raises(NotImplementedError, match="complex tensors are not supported by glassgrad"):
        f(gg, gg.ones(3, 3, dtype=gg.cdouble))
