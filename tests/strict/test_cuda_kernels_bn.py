"""Batch norm's fused CUDA kernels (src/glassgrad/_cuda_kernels/bn.py) against the array code they replace
(ops/norm.py), through the public ops on CUDA tensors: GLASSGRAD_FUSED=1 vs 0, on a GPU through CuPy, on the
strict stand-in device through tests/strict/cuda_emu.py.

Tolerances: the elementwise steps are the array code's, so what does not go through a per-channel sum is compared
bit for bit (eval mode's output and input gradient); the sums run in another order (a block's tree here, NumPy's
einsum / pairwise sums there; the kernels accumulate in double what the array code sums in x's dtype), so outputs
that depend on them are compared within a few float32 ulps of the values' scale (rtol 2e-5, atol 2e-6 * the
largest magnitude) or float64's (1e-12, 1e-13)."""
import numpy as np
import pytest

import glassgrad as gg
from glassgrad import _strict

pytestmark = pytest.mark.usefixtures("fused_kernels")

TOL = {np.float32: (2e-5, 2e-6), np.float64: (1e-12, 1e-13)}

# (N, C, *spatial): per channel n = N * P values; P = 1 (BatchNorm1d on (N, C)), P < the block (512) and not a
# divisor of it, P > the block (the walk wraps inside a thread's step), n > the block, n = 1 (torch.batch_norm
# allows it; the running variance becomes NaN)
SHAPES = [(4, 3, 5, 7), (700, 3), (6, 4, 9), (2, 3, 600), (3, 2, 20, 20), (1, 3), (1, 2, 1, 1), (2, 5, 1)]


def _close(got, want, dtype):
    rtol, atol = TOL[dtype]
    scale = float(np.max(np.abs(want))) if want.size and np.isfinite(want).all() else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * max(scale, 1.0))


def _inputs(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    c = shape[1]
    x = (rng.standard_normal(shape) * 3 + 2).astype(dtype)
    gy = rng.standard_normal(shape).astype(dtype)
    params = [rng.uniform(0.5, 1.5, c).astype(dtype), rng.standard_normal(c).astype(dtype),
              rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2.0, c).astype(dtype)]
    return x, gy, params


def _run(monkeypatch, fused, x, gy, params, training, affine=True, track=True, req=(True, True, True), layout=None):
    """batch_norm forward + backward on CUDA tensors: [y, running_mean, running_var, grads...] as host arrays, and
    the fused kernels' launches."""
    monkeypatch.setenv("GLASSGRAD_FUSED", "1" if fused else "0")
    xs = gg.from_numpy(x).cuda()
    if layout is not None:
        xs = layout(xs)
    xs.requires_grad_(req[0])
    w, b = ((gg.from_numpy(p).cuda().requires_grad_(r) for p, r in zip(params[:2], req[1:])) if affine
            else (None, None))
    rm, rv = (gg.from_numpy(p.copy()).cuda() for p in params[2:]) if track else (None, None)
    with _strict.counting() as cnt:
        y = gg.batch_norm(xs, w, b, rm, rv, training, 0.1, 1e-5, False)
        if any(r for r in req if r) and y.requires_grad:
            y.backward(gg.from_numpy(gy).cuda())
    out = [y.detach().cpu().numpy()]
    out += [t.cpu().numpy() for t in (rm, rv) if t is not None]
    out += [t.grad.cpu().numpy() for t in (xs, w, b) if t is not None and t.requires_grad]
    fused_launches = sum(k for (name, where), k in cnt.items() if name.startswith("glassgrad_bn"))
    return out, fused_launches


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_training_forward_backward_close_to_array_code(dtype, shape, monkeypatch):
    x, gy, params = _inputs(shape, dtype)
    want, k0 = _run(monkeypatch, False, x, gy, params, True)
    got, k1 = _run(monkeypatch, True, x, gy, params, True)
    assert (k0, k1) == (0, 2)                       # one launch forward, one backward
    assert len(got) == len(want) == 6
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        _close(g, w, dtype)
    n = x.size // shape[1]
    assert np.isnan(got[2]).all() == (n == 1)       # n = 1: the unbiased running variance is NaN, as torch's


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 3, 5, 7), (700, 3), (2, 3, 600), (1, 3)])
def test_eval_elementwise_exact_sums_close(dtype, shape, monkeypatch):
    x, gy, params = _inputs(shape, dtype, seed=1)
    want, _ = _run(monkeypatch, False, x, gy, params, False)
    got, k = _run(monkeypatch, True, x, gy, params, False)
    assert k == 2
    y, rm, rv, gx, gw, gb = got
    for g, w in zip((y, rm, rv, gx), want[:4]):     # elementwise: the same bits
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(rm, params[2])    # eval leaves the running statistics alone
    for g, w in zip((gw, gb), want[4:]):
        _close(g, w, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("training,affine,track", [(True, False, True), (True, True, False), (True, False, False),
                                                   (False, False, True)])     # (eval needs running statistics)
def test_without_affine_or_running_stats(dtype, training, affine, track, monkeypatch):
    x, gy, params = _inputs((5, 4, 6, 3), dtype, seed=2)
    want, _ = _run(monkeypatch, False, x, gy, params, training, affine, track)
    got, k = _run(monkeypatch, True, x, gy, params, training, affine, track)
    assert k == 2 and len(got) == len(want) == 1 + 2 * track + (3 if affine else 1)
    for g, w in zip(got, want):
        _close(g, w, dtype)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("req", [(True, False, False), (False, True, False), (False, False, True),
                                 (False, True, True)])
def test_gradients_asked_for_only(training, req, monkeypatch):
    x, gy, params = _inputs((3, 4, 5, 5), np.float32, seed=3)
    want, _ = _run(monkeypatch, False, x, gy, params, training, req=req)
    got, k = _run(monkeypatch, True, x, gy, params, training, req=req)
    assert k == 2 and len(got) == len(want) == 3 + sum(req)
    for g, w in zip(got, want):
        _close(g, w, np.float32)


def _channels_last(t):
    return t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)


@pytest.mark.parametrize("training", [True, False])
def test_channels_last_input_falls_back_to_array_code(training, monkeypatch):
    x, gy, params = _inputs((4, 3, 5, 6), np.float32, seed=4)
    want, _ = _run(monkeypatch, False, x, gy, params, training, layout=_channels_last)
    got, k = _run(monkeypatch, True, x, gy, params, training, layout=_channels_last)
    assert k == 0
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_non_contiguous_grad_output_falls_back_in_backward(monkeypatch):
    x, gy, params = _inputs((4, 3, 5, 6), np.float64, seed=5)
    res = []
    for fused in (False, True):
        monkeypatch.setenv("GLASSGRAD_FUSED", "1" if fused else "0")
        xs = gg.from_numpy(x).cuda().requires_grad_(True)
        w = gg.from_numpy(params[0]).cuda().requires_grad_(True)
        with _strict.counting() as cnt:
            y = gg.batch_norm(xs, w, None, None, None, True, 0.1, 1e-5, False)
            y.backward(_channels_last(gg.from_numpy(gy).cuda()))
        names = [name for (name, _), k in cnt.items() for _ in range(k) if name.startswith("glassgrad_bn")]
        assert names == (["glassgrad_bn_train"] if fused else [])
        res.append([y.detach().cpu().numpy(), xs.grad.cpu().numpy(), w.grad.cpu().numpy()])
    for g, w in zip(res[1], res[0]):
        _close(g, w, np.float64)


def test_batchnorm_modules_train_then_eval(monkeypatch):
    """nn.BatchNorm1d / 2d: a few training steps (running statistics carried between them), then eval."""
    rng = np.random.default_rng(6)
    xs = [(rng.standard_normal((8, 6, 4, 4)) * 2 + 1).astype(np.float32) for _ in range(3)]
    x1 = rng.standard_normal((16, 5, 7)).astype(np.float32)
    r = rng.standard_normal((8, 6, 4, 4)).astype(np.float32)        # (not y * y: its bias gradient sums to ~0)

    def run(fused):
        monkeypatch.setenv("GLASSGRAD_FUSED", "1" if fused else "0")
        gg.manual_seed(0)
        m2, m1 = gg.nn.BatchNorm2d(6).cuda(), gg.nn.BatchNorm1d(5, momentum=None).cuda()
        out = []
        for x in xs:
            y = m2(gg.from_numpy(x).cuda())
            (y * y * gg.from_numpy(r).cuda()).sum().backward()
            out.append(y.detach().cpu().numpy())
            out.append(m1(gg.from_numpy(x1).cuda()).detach().cpu().numpy())
        m2.eval()
        out += [m2(gg.from_numpy(xs[0]).cuda()).detach().cpu().numpy(), m2.weight.grad.cpu().numpy(),
                m2.bias.grad.cpu().numpy(), m2.running_mean.cpu().numpy(), m2.running_var.cpu().numpy(),
                m1.running_mean.cpu().numpy(), m1.running_var.cpu().numpy()]
        return out

    want, got = run(False), run(True)
    for g, w in zip(got, want):
        _close(g, w, np.float32)


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_through_batch_norm(use_input_stats, monkeypatch):
    """instance_norm is batch norm over the (1, N * C, ...) view, with repeated parameters and running stats."""
    x, gy, params = _inputs((3, 4, 6, 5), np.float32, seed=7)

    def run(fused):
        monkeypatch.setenv("GLASSGRAD_FUSED", "1" if fused else "0")
        xs = gg.from_numpy(x).cuda().requires_grad_(True)
        w, b = (gg.from_numpy(p).cuda().requires_grad_(True) for p in params[:2])
        rm, rv = (gg.from_numpy(p.copy()).cuda() for p in params[2:])
        with _strict.counting() as cnt:
            y = gg.nn.functional.instance_norm(xs, rm, rv, w, b, use_input_stats, 0.1, 1e-5)
            y.backward(gg.from_numpy(gy).cuda())
        k = sum(n for (name, _), n in cnt.items() if name.startswith("glassgrad_bn"))
        return [t.detach().cpu().numpy() for t in (y, rm, rv, xs.grad, w.grad, b.grad)], k

    (want, k0), (got, k1) = run(False), run(True)
    assert (k0, k1) == (0, 2)
    for g, w in zip(got, want):
        _close(g, w, np.float32)
