"""The optimizers' array kernels (optim/optimizer.py) and the BLAS binding behind them (glassgrad/_blas.py):
fused multiply-add rounding as ATen's, on the BLAS path, the blocked NumPy path and the plain path."""
import ctypes

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import _blas
from glassgrad.optim import optimizer as K

SIZES = [0, 1, 7, 33, 4 * K._BLOCK + 5]     # empty, tails of vector kernels, and the blocked path


def _fma_reference(a, b, c):
    """float32 a * b + c with one rounding: the product is exact in float64, the sum is rounded once more
    (double rounding can differ from a true FMA in rare ties; the arrays below are checked for them)."""
    return (a.astype(np.float64) * np.float64(b) + c.astype(np.float64)).astype(np.float32)


@pytest.mark.skipif(_blas.info() is None, reason="no BLAS with cblas_saxpy found next to NumPy (GLASSGRAD_BLAS "
                                                  "set, or a NumPy build without bundled OpenBLAS)")
@pytest.mark.parametrize("n", SIZES)
def test_blas_axpy_is_one_rounding_or_is_not_used(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    a = np.float32(-0.0137)
    want = _fma_reference(x, a, y)
    got = y.copy()
    if not _blas.axpy(a, x, got):                  # this BLAS rounds twice on this CPU: glassgrad uses NumPy
        assert not _blas._load().fused("saxpy")
        assert (got == y).all()
        return
    np.testing.assert_array_equal(got, want)
    if n > 100:
        assert not np.array_equal(want, y + a * x)  # the arrays are big enough to tell fused from unfused


def _numpy_axpy(fused):
    """A stand-in BLAS axpy with ctypes' calling convention, rounding once (fused) or twice."""
    def axpy(n, a, xp, incx, yp, incy):
        dt = np.float32 if fused[1] == "s" else np.float64
        ct = ctypes.c_float if dt == np.float32 else ctypes.c_double
        x = np.ctypeslib.as_array(ctypes.cast(xp, ctypes.POINTER(ct)), (n,))
        y = np.ctypeslib.as_array(ctypes.cast(yp, ctypes.POINTER(ct)), (n,))
        if fused[0]:
            y[:] = (x.astype(np.longdouble) * np.longdouble(a) + y).astype(dt)
        else:
            y[:] = y + (x * dt(a)).astype(dt)
    return axpy


@pytest.mark.parametrize("kind", ["s", "d"])
def test_the_axpy_probe_tells_one_rounding_from_two(kind):
    dt = np.float32 if kind == "s" else np.float64
    if np.finfo(np.longdouble).nmant < 62:
        assert not _blas._rounds_once(_numpy_axpy((True, kind)), dt)    # cannot tell: never trusted
        return
    assert _blas._rounds_once(_numpy_axpy((True, kind)), dt)
    assert not _blas._rounds_once(_numpy_axpy((False, kind)), dt)


@pytest.mark.parametrize("n", SIZES)
def test_numpy_fma_paths_agree_with_blas(n):
    rng = np.random.default_rng(n + 1)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    a = np.float32(0.3)
    np.testing.assert_array_equal(K._fma(x, a, y, y.dtype), _fma_reference(x, a, y))
    out = y.copy()
    K._fma(x, a, out, out.dtype, out=out)                 # in place, blocked when large
    np.testing.assert_array_equal(out, _fma_reference(x, a, y))


def test_axpy_refuses_what_it_cannot_do():
    y = np.zeros((4, 4), np.float32)
    assert not _blas.axpy(1.0, np.ones((4, 4), np.float64), y)          # dtype mix
    assert not _blas.axpy(1.0, np.ones((4, 4), np.float32).T[::2], y)   # size / layout
    assert not _blas.axpy(1.0, np.ones((4, 4), np.float32), y.T)        # non-contiguous target
    assert not _blas.axpy(1, np.ones(3, np.int64), np.zeros(3, np.int64))
    assert (y == 0).all()


def _run(T, opt_name, kw, n, steps=15):
    """Parameters updated with a fixed sequence of gradients: no GEMM, so every difference would come from
    the update's own rounding."""
    g = np.random.default_rng(0).standard_normal((steps, n)).astype(np.float32)
    p = T.nn.Parameter(T.tensor(np.random.default_rng(1).standard_normal(n).astype(np.float32)))
    opt = getattr(T.optim, opt_name)([p], **kw)
    for s in range(steps):
        p.grad = T.tensor(g[s])
        opt.step()
    return p.detach().numpy().copy()


SGD_CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True)),
]


@pytest.mark.parametrize("opt_name,kw", SGD_CASES)
@pytest.mark.parametrize("n", [33, 4 * K._BLOCK + 5])
def test_sgd_matches_torch(opt_name, kw, n):
    """torch's update kernels round per ISA (AVX-512 and AVX2 fuse, its plain kernels do not): within a few
    ulps of torch on any CPU.  glassgrad's own rounding is pinned down bit for bit below."""
    a, b = _run(glassgrad, opt_name, kw, n), _run(torch, opt_name, kw, n)
    np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


# beta1 <= 0.5 takes lerp's other arm (weight >= 0.5)
OTHER_CASES = [("Adam", dict(lr=0.01)), ("AdamW", dict(lr=0.01, amsgrad=True)), ("Adam", dict(lr=0.05, betas=(0.5, 0.9))),
               ("NAdam", dict(lr=0.01, betas=(0.3, 0.9)))]


@pytest.mark.parametrize("opt_name,kw", SGD_CASES + OTHER_CASES)
@pytest.mark.parametrize("n", [33, 4 * K._BLOCK + 5])
def test_updates_are_the_same_bits_on_every_path(opt_name, kw, n, monkeypatch):
    """An update's bits do not depend on the path -- the BLAS axpy, or NumPy's (blocked for long vectors,
    taken where no BLAS rounds once: GLASSGRAD_BLAS=numpy, OpenBLAS's Haswell kernels, MKL on AMD) -- so a
    run is reproducible whichever BLAS and CPU kernel a machine has, and both paths are torch's update."""
    blas = _run(glassgrad, opt_name, kw, n)
    np.testing.assert_array_equal(blas, _run(glassgrad, opt_name, kw, n))        # deterministic
    np.testing.assert_allclose(blas, _run(torch, opt_name, kw, n), rtol=2e-6, atol=1e-6)
    monkeypatch.setattr(_blas, "_axpy_fn", lambda x, y: None)                      # no BLAS that rounds once
    np.testing.assert_array_equal(blas, _run(glassgrad, opt_name, kw, n))


def test_a_refused_blas_axpy_leaves_the_operands_alone(monkeypatch):
    """lerp's weight >= 0.5 arm updates in place from `end`: a BLAS refusal must not have copied it over x
    first (Adam with beta1 = 0.5 took twice the step on the NumPy path)."""
    monkeypatch.setattr(_blas, "_axpy_fn", lambda x, y: None)
    x, end = np.zeros(5, np.float32), np.ones(5, np.float32)
    K.lerp(x, end, 0.75, out=x)
    np.testing.assert_array_equal(x, np.full(5, 0.75, np.float32))


@pytest.mark.parametrize("kw", [dict(lr=0.01), dict(lr=0.01, weight_decay=0.1, amsgrad=True)])
def test_adam_matches_torch_on_the_blocked_path(kw):
    n = 4 * K._BLOCK + 5
    a, b = _run(glassgrad, "Adam", kw, n), _run(torch, "Adam", kw, n)
    # torch's float32 sqrt is not always correctly rounded, and its plain kernels do not fuse: a few ulps
    np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)


def test_num_threads_api_matches_torch():
    for v, in [(0,), (-1,), (2.5,), ("2",), (True,)]:
        errs = []
        for T in (torch, glassgrad):
            with pytest.raises(RuntimeError) as e:
                T.set_num_threads(v)
            errs.append(str(e.value))
        assert errs[0] == errs[1]
    old = glassgrad.get_num_threads()
    try:
        glassgrad.set_num_threads(1)
        assert glassgrad.get_num_threads() == 1
        lib = _blas._load()
        if lib is not None and lib.get_threads is not None:
            assert lib.get_threads() == 1                     # the BLAS itself was told
    finally:
        glassgrad.set_num_threads(old)
    assert glassgrad.get_num_threads() == old
