"""glassgrad/_blas.py's optional MKL GEMM path (pip install glassgrad[mkl]): the same products as
np.matmul for every layout it accepts, NumPy's own result for those it does not, and Linear training that
still matches torch."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import _blas

HAVE_MKL = _blas._find_mkl() is not None
_skip = pytest.mark.skipif(not HAVE_MKL, reason="the optional mkl wheel is not installed (pip install "
                                                "glassgrad[mkl]; the test extra installs it on x86-64)")


def needs_mkl(fn):
    return _skip(pytest.mark.mkl(fn))


@pytest.fixture(autouse=True)
def _mkl_on(request, monkeypatch):
    """MKL on for the tests that need it (the suite runs with GLASSGRAD_BLAS=openblas, see conftest.py),
    and everything as before afterwards: no MKL GEMMs, OpenBLAS's thread count restored."""
    if request.node.get_closest_marker("mkl") is None or not HAVE_MKL:
        yield
        return
    ob = _blas._load()
    threads = ob.get_threads() if ob is not None and ob.get_threads is not None else None
    monkeypatch.setenv("GLASSGRAD_BLAS", "mkl")
    saved = list(_blas._mkl)
    _blas._mkl[:] = [None, False]
    assert _blas._load_mkl() is not None
    try:
        yield
    finally:
        _blas._mkl[:] = saved
        if threads is not None:
            ob.set_threads(threads)


def _layouts(a):
    yield "C", a
    yield "F", np.asfortranarray(a)
    yield "T-view", np.ascontiguousarray(a.T).T
    yield "strided", np.repeat(a, 2, axis=1)[:, ::2]            # not BLAS-readable: NumPy's path


@needs_mkl
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("mkn", [(1, 1, 1), (3, 4, 5), (20, 256, 64), (64, 1, 7), (7, 9, 1)])
def test_matmul_matches_numpy_for_every_layout(mkn, dt):
    m, k, n = mkn
    rng = np.random.default_rng(m * 100 + k)
    a = rng.standard_normal((m, k)).astype(dt)
    b = rng.standard_normal((k, n)).astype(dt)
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = dict(rtol=1e-5, atol=1e-5) if dt == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for la, A in _layouts(a):
        for lb, B in _layouts(b):
            got = _blas.matmul(A, B)
            assert got.dtype == dt and got.shape == (m, n) and got.flags.c_contiguous, (la, lb)
            np.testing.assert_allclose(got, want, **tol, err_msg=f"{la} @ {lb}")
            out = np.full((m, n), np.nan, dt)
            assert _blas.matmul(A, B, out=out) is out
            np.testing.assert_allclose(out, want, **tol, err_msg=f"{la} @ {lb} into out")


@needs_mkl
def test_matmul_leaves_other_cases_to_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_array_equal(_blas.matmul(a, b), np.matmul(a, b))                  # batched
    ai, bi = np.arange(6).reshape(2, 3), np.arange(6).reshape(3, 2)
    np.testing.assert_array_equal(_blas.matmul(ai, bi), ai @ bi)                          # integers
    assert _blas.matmul(np.zeros((0, 3), np.float32), np.zeros((3, 2), np.float32)).shape == (0, 2)
    sq = rng.standard_normal((3, 3)).astype(np.float32)
    want = sq @ sq
    np.testing.assert_allclose(_blas.matmul(sq, sq, out=sq), want, rtol=1e-6)           # out aliases an input


@needs_mkl
def test_linear_training_through_mkl_matches_torch():
    def run(T):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(30, 40), T.nn.ReLU(), T.nn.Linear(40, 5))
        opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x, y = T.randn(16, 30), T.randint(0, 5, (16,))
        losses = []
        for _ in range(10):
            opt.zero_grad()
            loss = T.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses
    np.testing.assert_allclose(run(glassgrad), run(torch), rtol=1e-5)


def test_glassgrad_blas_numpy_turns_the_binding_off():
    code = "from glassgrad import _blas; print(_blas.info(), _blas._load_mkl())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, GLASSGRAD_BLAS="numpy"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["None", "None"]


@needs_mkl
@pytest.mark.parametrize("n", [1, 7, 33, 70001])
def test_mkl_axpy_rounds_once_or_is_not_used(n):
    """Once MKL is loaded, optimizer updates use its axpy (one thread pool) -- only where it rounds like
    ATen's FMA.  MKL's saxpy on an AMD CPU rounds twice: the probe then leaves the update to NumPy."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    a = np.float32(-0.0137)
    want = (x.astype(np.float64) * np.float64(a) + y.astype(np.float64)).astype(np.float32)
    got = y.copy()
    if _blas.axpy(a, x, got):
        np.testing.assert_array_equal(got, want)
    else:
        assert not _blas._mkl[0].fused("saxpy") and (got == y).all()
