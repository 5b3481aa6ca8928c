"""The fused optimizer / loss kernels of _cuda_kernels/optloss.py against the array code they replace (on the
strict stand-in device through tests/strict/cuda_emu.py, on a GPU through CuPy): SGD's step bit for bit, the
negative log-likelihood (and cross entropy) forward and backward, and gradient-norm clipping."""
import itertools

import numpy as np
import pytest

import glassgrad as gg
from glassgrad import backend

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


# -- nll_loss / cross_entropy -----------------------------------------------------------------------------------
_RTOL = {np.float32: 1e-5, np.float64: 1e-13}

# (input shape, ignore_index): the target drawn in [0, C), some entries set to ignore_index
_NLL_CASES = [((5,), -100), ((1, 3), -100), ((7, 4), 2), ((300, 10), -100), ((600, 3), 0), ((4, 6, 5), -100),
              ((2, 3, 4, 5), 1), ((2, 5, 3, 2, 2), -100)]


def _nll_data(shape, ignore_index, dtype, weighted, seed=0):
    rng = np.random.default_rng(seed)
    C = shape[1] if len(shape) > 1 else shape[0]
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    t = rng.integers(0, C, tshape).astype(np.int64)
    if t.ndim:
        t.reshape(-1)[::3] = ignore_index
    w = (rng.random(C) + 0.25).astype(dtype) if weighted else None
    return x, t, w


def _nll_run(monkeypatch, fused, x, t, w, reduction, ignore_index, fn="nll", label_smoothing=0.0, gout=None):
    _set_fused(monkeypatch, fused)
    xs = gg.from_numpy(x).cuda().requires_grad_(True)
    ts = gg.from_numpy(t).cuda()
    ws = None if w is None else gg.from_numpy(w).cuda()
    F = gg.nn.functional
    if fn == "nll":
        y = F.nll_loss(xs, ts, ws, reduction=reduction, ignore_index=ignore_index)
    else:
        y = F.cross_entropy(xs, ts, ws, reduction=reduction, ignore_index=ignore_index,
                            label_smoothing=label_smoothing)
    if gout is None:
        y.sum().backward()
    else:
        y.backward(gg.from_numpy(gout.astype(x.dtype)).cuda())
    return y.detach().cpu().numpy(), xs.grad.cpu().numpy()


def _check(got, want, rtol, exact):
    for a, b in zip(want, got):
        assert a.dtype == b.dtype and a.shape == b.shape
        if exact:
            np.testing.assert_array_equal(b, a)
        else:
            np.testing.assert_allclose(b, a, rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape,ignore_index", _NLL_CASES)
def test_nll_kernels_close_to_array_code(dtype, reduction, weighted, shape, ignore_index, monkeypatch):
    x, t, w = _nll_data(shape, ignore_index, dtype, weighted)
    gout = None
    if reduction == "none" and t.ndim:
        gout = np.random.default_rng(5).standard_normal(t.shape)
    args = (x, t, w, reduction, ignore_index)
    want = _nll_run(monkeypatch, False, *args, gout=gout)
    got = _nll_run(monkeypatch, True, *args, gout=gout)
    # the losses' sums run in another order; the gradient's coefficients are exact but for a weighted mean's
    _check(got[:1], want[:1], _RTOL[dtype], reduction == "none")
    _check(got[1:], want[1:], _RTOL[dtype], not (weighted and reduction == "mean"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_cross_entropy_close_to_array_code(dtype, reduction, weighted, label_smoothing, monkeypatch):
    x, t, w = _nll_data((257, 11), -100, dtype, weighted, seed=3)
    args = (x, t, w, reduction, -100)
    want = _nll_run(monkeypatch, False, *args, fn="ce", label_smoothing=label_smoothing)
    got = _nll_run(monkeypatch, True, *args, fn="ce", label_smoothing=label_smoothing)
    # (log_softmax's fused kernel sums in another order too: the gradient's small entries, differences of larger
    # ones, are compared at the scale of the largest)
    for a, b in zip(want, got):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=_RTOL[dtype], atol=_RTOL[dtype] * np.abs(a).max())


def test_nll_kernel_special_values_uint8_target_and_all_ignored(monkeypatch):
    x, t, w = _nll_data((9, 4), -100, np.float32, True)
    x[0, :] = (np.inf, -np.inf, np.nan, 0.0)
    t[0] = 1
    w[3] = 0.0
    for tt, ww, ign in ((t, w, -100), (t.astype(np.uint8) % 4, None, 3), (np.full_like(t, 2), w, 2)):
        for reduction in ("none", "sum", "mean"):
            want = _nll_run(monkeypatch, False, x, tt, ww, reduction, ign)
            got = _nll_run(monkeypatch, True, x, tt, ww, reduction, ign)
            _check(got, want, 1e-5, False)
            for a, b in zip(want, got):
                assert (np.isnan(a) == np.isnan(b)).all()


def test_nll_kernel_out_of_range_target_and_noncontiguous_input(monkeypatch):
    x, t, _ = _nll_data((300, 5), -100, np.float64, False)
    t[[7, 200]] = (5, -1)
    msgs = []
    for fused in (False, True):
        _set_fused(monkeypatch, fused)
        with pytest.raises(IndexError) as e:
            gg.nn.functional.nll_loss(gg.from_numpy(x).cuda(), gg.from_numpy(t).cuda())
        msgs.append(str(e.value))
    assert msgs[1] == "Target 5 is out of bounds."            # torch's (the first bad target in order)
    assert msgs[0].startswith("Target ") and "5" in msgs[0]   # (the strict device formats a 0-d array's repr)
    x, t, w = _nll_data((6, 3, 4), -100, np.float32, True)
    x = np.ascontiguousarray(x.transpose(0, 2, 1))               # the input is its transpose: not contiguous
    want, got = [], []
    for fused, out in ((False, want), (True, got)):
        _set_fused(monkeypatch, fused)
        xs = gg.from_numpy(x).cuda().requires_grad_(True)
        y = gg.nn.functional.nll_loss(xs.transpose(1, 2), gg.from_numpy(t).cuda(), gg.from_numpy(w).cuda())
        y.backward()
        out += [y.detach().cpu().numpy(), xs.grad.cpu().numpy()]
    _check(got, want, 1e-5, False)


def test_nll_kernel_double_backward(monkeypatch):
    x, t, w = _nll_data((8, 5), -100, np.float64, True)
    outs = []
    for fused in (False, True):
        _set_fused(monkeypatch, fused)
        xs = gg.from_numpy(x).cuda().requires_grad_(True)
        gs = gg.from_numpy(np.linspace(0.5, 2, 8)).cuda().requires_grad_(True)
        y = gg.nn.functional.nll_loss(xs, gg.from_numpy(t).cuda(), gg.from_numpy(w).cuda(), reduction="none")
        dx, = gg.autograd.grad(y, xs, gs, create_graph=True)
        assert dx.grad_fn is not None and type(dx.grad_fn).__name__ == "NllLossBackwardBackward0"
        ddg, = gg.autograd.grad((dx * dx).sum(), gs)
        outs.append([dx.detach().cpu().numpy(), ddg.cpu().numpy()])
    _check(outs[1], outs[0], 0, True)


# -- gradient clipping ------------------------------------------------------------------------------------------
_CLIP_SHAPES = ((300, 7), (5,), (1,), (0, 3), (257, 1024), (64, 65))


def _clip_run(monkeypatch, fused, dtype, max_norm, scale=1.0, special=False):
    _set_fused(monkeypatch, fused)
    rng = np.random.default_rng(7)
    ps = [gg.from_numpy(rng.standard_normal(s).astype(dtype)).cuda().requires_grad_(True) for s in _CLIP_SHAPES]
    for p in ps:
        g = (rng.standard_normal(p.shape) * scale).astype(dtype)
        if special and g.size > 3:
            g.reshape(-1)[:2] = (np.inf, 1.0)
        p.grad = gg.from_numpy(g).cuda()
    total = gg.nn.utils.clip_grad_norm_(ps, max_norm)
    return total.cpu().numpy(), [p.grad.cpu().numpy() for p in ps], [p.grad._version for p in ps]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("max_norm,scale", [(0.25, 1.0), (1e6, 1.0), (1.0, 1e-4), (0.5, 1e20)])
def test_clip_grad_norm_kernels_close_to_array_code(dtype, max_norm, scale, monkeypatch):
    want = _clip_run(monkeypatch, False, dtype, max_norm, scale)
    got = _clip_run(monkeypatch, True, dtype, max_norm, scale)
    rtol = {np.float32: 1e-5, np.float64: 1e-13}[dtype]
    assert got[0].dtype == want[0].dtype and got[0].shape == ()
    np.testing.assert_allclose(got[0], want[0], rtol=rtol)
    for a, b in zip(want[1], got[1]):               # scaled by a coefficient computed from the total norm
        assert a.dtype == b.dtype
        np.testing.assert_allclose(b, a, rtol=rtol if max_norm < 1e6 else 0, atol=0)
    assert got[2] == want[2]


def test_clip_scale_kernel_bit_equal_given_the_total(monkeypatch):
    rng = np.random.default_rng(3)
    for dtype, tdtype in ((np.float32, np.float32), (np.float64, np.float32), (np.float32, np.float64)):
        for tn in (0.0, 0.3, 2.5, 7e4, np.inf, np.nan):
            out = []
            for fused in (False, True):
                _set_fused(monkeypatch, fused)
                ps = [gg.from_numpy(rng.standard_normal(s).astype(dtype)).cuda().requires_grad_(True)
                      for s in ((33, 9), (1,))]
                for p in ps:
                    p.grad = gg.from_numpy(np.linspace(-3, 3, p.numel()).reshape(p.shape).astype(dtype)).cuda()
                total = gg.from_numpy(np.array(tn, tdtype)).cuda()
                gg.nn.utils.clip_grads_with_norm_(ps, 1.7, total)
                out.append([p.grad.cpu().numpy() for p in ps])
            for a, b in zip(*out):
                np.testing.assert_array_equal(b, a)


def test_clip_grad_norm_kernels_nonfinite_and_mixed(monkeypatch):
    want = _clip_run(monkeypatch, False, np.float32, 1.0, special=True)
    got = _clip_run(monkeypatch, True, np.float32, 1.0, special=True)
    assert np.isinf(got[0]) and np.isinf(want[0])
    for a, b in zip(want[1], got[1]):
        np.testing.assert_array_equal(np.isnan(b), np.isnan(a))
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        _set_fused(monkeypatch, True)
        p = gg.from_numpy(np.ones(3, np.float32)).cuda().requires_grad_(True)
        p.grad = gg.from_numpy(np.array([1, np.nan, 2], np.float32)).cuda()
        gg.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    out = []
    for fused in (False, True):          # gradients of two dtypes, one not contiguous: the array code's path
        _set_fused(monkeypatch, fused)
        ps = [gg.from_numpy(np.ones(s, dt)).cuda().requires_grad_(True) for s, dt in (((4, 3), np.float32),
                                                                                      ((5,), np.float64))]
        ps[0].grad = gg.from_numpy(np.arange(12.0, dtype=np.float32).reshape(3, 4)).cuda().t()
        ps[1].grad = gg.from_numpy(np.linspace(0, 1, 5)).cuda()
        total = gg.nn.utils.clip_grad_norm_(ps, 2.0)
        out.append([total.cpu().numpy()] + [p.grad.cpu().numpy() for p in ps])
    for a, b in zip(*out):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(b, a)


# -- AccumulateGrad adopts a fresh device gradient (no copy), never one another party holds ---------------------
def _engine_cases():
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "test_autograd_engine.py")
    spec = importlib.util.spec_from_file_location("_engine_cases", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("case", ["add_two_leaves", "user_seed", "retain_grad", "tensor_hook",
                                  "autograd_grad_and_backward_inputs", "transpose_pair", "transpose_pair_reversed",
                                  "seed_view", "linear_twice"])
def test_device_first_grad_never_shares_memory_with_another_holder(case):
    import torch
    mod = _engine_cases()
    fn = mod._independent_grads_case if case in ("add_two_leaves", "user_seed", "retain_grad", "tensor_hook",
                                                 "autograd_grad_and_backward_inputs") else mod._independent_view_grads_case
    want = fn(torch, case)
    gg.set_default_device("cuda")
    try:
        got = fn(gg, case)
    finally:
        gg.set_default_device("cpu")
    assert got == want


@pytest.mark.skipif(not backend.STRICT, reason="counts launches on the strict device")
def test_device_leaf_adopts_a_fresh_gradient():
    from glassgrad import _strict
    lin = gg.nn.Linear(6, 4).cuda()
    x = gg.from_numpy(np.ones((3, 6), np.float32)).cuda()
    y = lin(x).pow(2).sum()
    with _strict.counting() as c:
        y.backward()
    # fresh gradient arrays (the weight's a transposed GEMM result) become the .grad without a copy
    assert not [k for k in c if k[1].startswith("autograd.engine:")]
    for p in lin.parameters():
        assert p.grad._data.flags.c_contiguous
    w0 = lin.weight.grad
    lin(x).sum().backward()
    assert lin.weight.grad is w0                    # accumulated in place


# -- (log-)softmax backward -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 7), (3, 5, 1000), (2, 1), (6, 4096), (37, 3), (9,)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_backward_kernel_close_to_array_code(dtype, shape, log, monkeypatch):
    from glassgrad._cuda_kernels import optloss
    monkeypatch.setattr(optloss, "SOFTMAX_BWD_GRID", 8)      # blocks walking several rows each
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    gy = rng.standard_normal(shape).astype(dtype)
    out = []
    for fused in (False, True):
        _set_fused(monkeypatch, fused)
        xs = gg.from_numpy(x).cuda().requires_grad_(True)
        y = (gg.log_softmax if log else gg.softmax)(xs, -1)
        y.backward(gg.from_numpy(gy).cuda())
        out.append(xs.grad.cpu().numpy())
    rtol = _RTOL[dtype]
    # entries that are differences of larger terms are compared at the scale of the largest
    np.testing.assert_allclose(out[1], out[0], rtol=rtol, atol=rtol * np.abs(out[0]).max())
    assert out[1].dtype == out[0].dtype


# -- AdamW: the decoupled decay inside the Adam kernel; decoupled decay elsewhere in place --------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,opts", [("AdamW", dict(weight_decay=0.1)), ("AdamW", dict(weight_decay=0.0)),
                                       ("AdamW", dict(weight_decay=0.3, maximize=True)),
                                       ("Adam", dict(weight_decay=0.2, decoupled_weight_decay=True)),
                                       ("Adam", dict(weight_decay=0.2)), ("AdamW", dict(weight_decay=0.1, amsgrad=True)),
                                       ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
                                       ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True))])
def test_adamw_kernel_equals_array_code(dtype, name, opts, monkeypatch):
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(s).astype(dtype) for s in _SHAPES]

    def run(fused):
        _set_fused(monkeypatch, fused)
        ps = [gg.from_numpy(p.copy()).cuda().requires_grad_(True) for p in params]
        opt = getattr(gg.optim, name)(ps, lr=1e-2, **opts)
        for step in range(4):
            for i, p in enumerate(ps):
                p.grad = gg.from_numpy(np.random.default_rng(step * 10 + i).standard_normal(p.shape)
                                       .astype(dtype)).cuda()
            opt.step()
        return [p.detach().cpu().numpy() for p in ps], [p._version for p in ps]

    (pa, va), (pb, vb) = run(False), run(True)
    for a, b in zip(pa, pb):
        np.testing.assert_array_equal(b, a)
    assert va == vb


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cpu_loss_beside_the_fused_kernels_stays_on_the_cpu(reduction):
    """A CPU tensor's nll_loss of a 1-d input keeps NumPy scalars in its node: the fused backward must not take them
    for device arrays (on a GPU machine every CPU nll_loss of a 1-d input failed in CuPy's kernel)."""
    x = gg.from_numpy(np.arange(5.0)).requires_grad_(True)
    gg.nn.functional.nll_loss(x, gg.tensor(2), reduction=reduction).backward()
    assert x.grad.tolist() == [0.0, 0.0, -1.0, 0.0, 0.0]
    lab = gg.from_numpy(np.arange(5.0)).requires_grad_(True)
    gg.nn.functional.cross_entropy(lab, gg.tensor(1), label_smoothing=0.1, reduction=reduction).backward()
    assert lab.grad.device.type == "cpu"
