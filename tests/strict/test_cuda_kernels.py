"""The fused CuPy kernels (_cuda_kernels.py) against the array code they replace.  On a real GPU they run on CuPy
(scripts/gpu_check.sh); on the strict stand-in device the same CUDA C runs under tests/strict/cuda_emu.py, a CPU
emulation of CuPy's kernel API (the host C++ compiler, cooperative threads per block), which checks the kernels'
logic -- indexing, bounds, reduction trees, barriers, rounding steps -- but not CUDA's math library or timing."""
import numpy as np
import pytest

import glassgrad as gg
from glassgrad import backend
from glassgrad._rng import philox
from glassgrad import _cuda_kernels

pytestmark = pytest.mark.usefixtures("fused_kernels")


@pytest.mark.parametrize("threads,calls,offset", [(256, 1, 0), (1024, 3, 8), (270336, 2, 4 * 2 ** 33)])
def test_philox_kernel_equals_array_code(threads, calls, offset):
    seed = 0x1234_5678_9ABC_DEF0
    arange = backend.device_arange(0)
    want = philox._calls(seed, offset, threads, calls, arange)
    got = _cuda_kernels.philox_words(seed, offset // 4, threads, calls)
    for a, b in zip(want, got):
        assert bool((a == b).all())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adam_kernel_equals_array_code(dtype, monkeypatch):
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(s).astype(dtype) for s in ((300, 7), (5,), (64, 64))]

    def run(fused):
        monkeypatch.setenv("GLASSGRAD_FUSED", "1" if fused else "0")
        ps = [gg.from_numpy(p.copy()).cuda().requires_grad_(True) for p in params]
        opt = gg.optim.AdamW(ps, lr=1e-2, weight_decay=0.1)
        for step in range(5):
            for i, p in enumerate(ps):
                p.grad = gg.from_numpy(np.random.default_rng(step * 10 + i).standard_normal(p.shape)
                                       .astype(dtype)).cuda()
            opt.step()
        return [p.detach().cpu().numpy() for p in ps], [opt.state[p]["exp_avg_sq"].cpu().numpy() for p in ps]

    (pa, va), (pb, vb) = run(False), run(True)
    for a, b in zip(pa + va, pb + vb):
        np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-6), (np.float64, 1e-13)])
@pytest.mark.parametrize("shape", [(4, 7), (3, 5, 1000), (2, 1), (6, 4096)])
def test_softmax_kernel_close_to_array_code(dtype, rtol, shape, monkeypatch):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    x.reshape(-1)[::97] = -np.inf                          # masked entries, as attention's
    for log in (False, True):
        fn = gg.log_softmax if log else gg.softmax
        monkeypatch.setenv("GLASSGRAD_FUSED", "0")
        want = fn(gg.from_numpy(x).cuda(), -1).cpu().numpy()
        monkeypatch.setenv("GLASSGRAD_FUSED", "1")
        got = fn(gg.from_numpy(x).cuda(), -1).cpu().numpy()
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-6), (np.float64, 1e-13)])
@pytest.mark.parametrize("shape,k,affine", [((4, 7), 1, True), ((3, 5, 300), 1, False), ((2, 6, 8, 64), 2, True)])
def test_layer_norm_kernel_close_to_array_code(dtype, rtol, shape, k, affine, monkeypatch):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    w = rng.standard_normal(shape[-k:]).astype(dtype) if affine else None
    b = rng.standard_normal(shape[-k:]).astype(dtype) if affine else None

    def run():
        xs = gg.from_numpy(x).cuda().requires_grad_(True)
        ws = None if w is None else gg.from_numpy(w).cuda().requires_grad_(True)
        bs = None if b is None else gg.from_numpy(b).cuda().requires_grad_(True)
        y = gg.nn.functional.layer_norm(xs, shape[-k:], ws, bs, 1e-5)
        y.backward(gg.ones_like(y))
        return [y.detach().cpu().numpy(), xs.grad.cpu().numpy()] + ([ws.grad.cpu().numpy()] if affine else [])

    monkeypatch.setenv("GLASSGRAD_FUSED", "0")
    want = run()
    monkeypatch.setenv("GLASSGRAD_FUSED", "1")
    for g, e in zip(run(), want):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * 10)
