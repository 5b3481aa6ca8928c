"""The fused optimizer / loss kernels of _cuda_kernels/optloss.py against the array code they replace (on the
strict stand-in device through tests/strict/cuda_emu.py, on a GPU through CuPy): SGD's step bit for bit, the
negative log-likelihood (and cross entropy) forward and backward, and gradient-norm clipping."""
import itertools

import numpy as np
import pytest

import glassgrad as gg

pytestmark = pytest.mark.usefixtures("fused_kernels")

_SHAPES = ((300, 7), (5,), (1,), (64, 65))


def _set_fused(monkeypatch, fused):
    monkeypatch.setenv("GLASSGRAD_FUSED", "1" if fused else "0")


# -- SGD --------------------------------------------------------------------------------------------------------
_SGD_OPTIONS = [dict(momentum=m, dampening=d, nesterov=n, weight_decay=w, maximize=x)
                for m, d, n, w, x in itertools.product((0.0, 0.9, 1.0), (0.0, 0.3), (False, True), (0.0, 1e-2, 1.0),
                                                       (False, True))
                if not (n and (m <= 0 or d != 0))]


def _sgd_run(monkeypatch, fused, dtype, opts, lr=0.1, steps=4):
    _set_fused(monkeypatch, fused)
    rng = np.random.default_rng(0)
    ps = [gg.from_numpy(rng.standard_normal(s).astype(dtype)).cuda().requires_grad_(True) for s in _SHAPES]
    opt = gg.optim.SGD(ps, lr=lr, **opts)
    vcs = []
    for step in range(steps):
        for i, p in enumerate(ps):
            g = np.random.default_rng(step * 10 + i).standard_normal(p.shape).astype(dtype)
            if step == 2 and i == 0:
                g[0, :3] = (np.inf, -np.inf, np.nan)            # non-finite gradients propagate the same way
            p.grad = gg.from_numpy(g).cuda()
        opt.step()
        vcs.append([p._version for p in ps] + [opt.state[p]["momentum_buffer"]._version for p in ps
                                               if "momentum_buffer" in opt.state[p]])
    bufs = [opt.state[p]["momentum_buffer"].cpu().numpy() for p in ps if "momentum_buffer" in opt.state[p]]
    return [p.detach().cpu().numpy() for p in ps] + bufs, vcs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opts", _SGD_OPTIONS, ids=lambda o: "-".join(f"{k[:3]}{v}" for k, v in o.items()))
def test_sgd_kernel_equals_array_code(dtype, opts, monkeypatch):
    (want, wvc), (got, gvc) = _sgd_run(monkeypatch, False, dtype, opts), _sgd_run(monkeypatch, True, dtype, opts)
    assert len(got) == len(want) == len(_SHAPES) * (2 if opts["momentum"] else 1)
    for a, b in zip(want, got):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(b, a)
        assert (np.signbit(a) == np.signbit(b)).all()
    assert gvc == wvc


def test_sgd_kernel_fused_optimizer_flag_and_tensor_lr(monkeypatch):
    opts = dict(momentum=0.5, dampening=0.1, weight_decay=0.3)
    for fused_flag in (True, None):
        want = _sgd_run(monkeypatch, False, np.float32, dict(opts, fused=fused_flag), lr=gg.tensor(0.05))
        got = _sgd_run(monkeypatch, True, np.float32, dict(opts, fused=fused_flag), lr=gg.tensor(0.05))
        for a, b in zip(want[0], got[0]):
            np.testing.assert_array_equal(b, a)
        assert got[1] == want[1]
