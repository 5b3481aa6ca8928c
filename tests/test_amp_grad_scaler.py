"""GradScaler('cpu') against torch's, step by step: the scale, the unscaled gradients, skipped steps when a
gradient holds inf / NaN, growth and backoff, state_dict / load_state_dict, pickling, disabled pass-through
and torch's errors."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import glassgrad

BOTH = (torch, glassgrad)


def _model(T):
    T.manual_seed(0)
    return T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 2))


def _loop(T, steps, inject, opt_name="SGD", dtype=None, **kw):
    """A small training loop (bf16: gradients one bf16 ulp apart from torch's are within tolerance); `inject`: {step: value written into a gradient before scaler.step}."""
    model = _model(T)
    opt = getattr(T.optim, opt_name)(model.parameters(), lr=0.05)
    scaler = T.amp.GradScaler("cpu", **kw)
    x = T.linspace(-1, 1, 15).reshape(5, 3)
    y = T.linspace(0, 1, 10).reshape(5, 2)
    trace = []
    for i in range(steps):
        opt.zero_grad()
        if dtype is None:
            loss = ((model(x) - y) ** 2).mean()
        else:
            with T.autocast("cpu", dtype=getattr(T, dtype)):
                loss = T.nn.functional.mse_loss(model(x), y)
        scaled = scaler.scale(loss)
        scaled.backward()
        if i in inject:
            model[0].weight.grad[0, 0] = inject[i]
        if i % 2:
            scaler.unscale_(opt)
            T.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        trace.append((scaled.dtype, scaled.item(), scaler.get_scale(), scaler._get_growth_tracker(),
                      [p.detach().clone() for p in model.parameters()],
                      [None if p.grad is None else p.grad.clone() for p in model.parameters()]))
    return trace, scaler


@pytest.mark.parametrize("dtype, opt_name", [(None, "SGD"), (None, "Adam"), ("bfloat16", "SGD")])
def test_training_loop_with_injected_inf_as_torch(opt_name, dtype):
    inject = {1: float("inf"), 4: float("nan"), 5: float("-inf")}
    kw = dict(init_scale=2.0 ** 10, growth_interval=2)
    want, ws = _loop(torch, 9, inject, opt_name, dtype, **kw)
    got, gs = _loop(glassgrad, 9, inject, opt_name, dtype, **kw)
    for (wd, wl, wsc, wt, wp, wg), (gd, gl, gsc, gt, gp, gg) in zip(want, got):
        assert str(gd) == str(wd) and (gsc, gt) == (wsc, wt)
        np.testing.assert_allclose(gl, wl, rtol=2e-2 if dtype else 1e-5)
        for a, b in zip(gp, wp):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3 if dtype else 1e-5, atol=1e-4 if dtype else 1e-6)
        for a, b in zip(gg, wg):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-2 if dtype else 1e-4, atol=1e-4 if dtype else 1e-6)
    assert gs.state_dict() == ws.state_dict()


def test_growth_backoff_and_overflowing_growth_as_torch():
    def f(T):
        s = T.amp.GradScaler("cpu", init_scale=3.0e38, growth_factor=4.0, backoff_factor=0.25, growth_interval=1)
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=0.1)
        out = []
        for bad in (False, False, True, False):
            s.scale(p.sum()).backward()
            p.grad = T.tensor([float("inf") if bad else 1.0, 2.0])
            s.step(opt)
            s.update()
            out.append((s.get_scale(), s._get_growth_tracker(), p.tolist()))
        return out
    assert f(glassgrad) == f(torch)


def _outcome(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = f()
        except Exception as e:     # noqa: BLE001  (compared with torch's)
            r = (type(e).__name__, str(e))
    return str(r), [(x.category.__name__, str(x.message)) for x in w]


def _prepared(T, stage):
    p = T.nn.Parameter(T.ones(2))
    opt = T.optim.SGD([p], lr=0.1)
    s = T.amp.GradScaler("cpu")
    if stage >= 1:
        s.scale(p.sum()).backward()
    if stage >= 2:
        s.unscale_(opt)
    if stage >= 3:
        s.step(opt)
    return s, opt, p


@pytest.mark.parametrize("case", [
    lambda T: _prepared(T, 0)[0].unscale_(_prepared(T, 0)[1]),
    lambda T: _prepared(T, 0)[0].step(_prepared(T, 0)[1]),
    lambda T: _prepared(T, 0)[0].update(),
    lambda T: (lambda s, o, p: s.unscale_(o))(*_prepared(T, 2)),
    lambda T: (lambda s, o, p: s.unscale_(o))(*_prepared(T, 3)),
    lambda T: (lambda s, o, p: s.step(o))(*_prepared(T, 3)),
    lambda T: (lambda s, o, p: s.step(o, closure=lambda: 0))(*_prepared(T, 1)),
    lambda T: (lambda s, o, p: (s.update(), s.get_scale()))(*_prepared(T, 1)),
    lambda T: (lambda s, o, p: pickle.dumps(s))(*_prepared(T, 2)),
    lambda T: (lambda s, o, p: (s.update(0.5), s.get_scale(), s.update(T.tensor(4.0)), s.get_scale()))(*_prepared(T, 3)),
    lambda T: (lambda s, o, p: s.update(T.tensor([1.0, 2.0])))(*_prepared(T, 3)),
    lambda T: (lambda s, o, p: s.update(T.tensor(2.0, requires_grad=True)))(*_prepared(T, 3)),
    lambda T: T.amp.GradScaler("cpu", growth_factor=1.0),
    lambda T: T.amp.GradScaler("cpu", backoff_factor=1.0),
    lambda T: T.amp.GradScaler("cpu").load_state_dict({}),
    lambda T: T.amp.GradScaler("cpu").scale(3),
    lambda T: T.amp.GradScaler("cpu").scale([T.ones(2), (T.ones(1), [T.full((2,), 2.0)])]),
    lambda T: T.amp.GradScaler("cpu").state_dict(),
    lambda T: (T.amp.GradScaler().is_enabled(), T.amp.GradScaler().state_dict(), T.amp.GradScaler().get_scale()),
])
def test_scaler_errors_and_values_as_torch(case):
    assert _outcome(lambda: case(glassgrad)) == _outcome(lambda: case(torch))


def test_unscale_refuses_fp16_grads_and_disabled_passes_through_as_torch():
    def f(T):
        p = T.nn.Parameter(T.ones(2, dtype=T.float16))
        opt = T.optim.SGD([p], lr=0.5)
        s = T.amp.GradScaler("cpu")
        s.scale(p.float().sum()).backward()
        return _outcome(lambda: s.unscale_(opt))
    assert f(glassgrad) == f(torch)

    def g(T):
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=0.5)
        s = T.amp.GradScaler("cpu", enabled=False)
        loss = s.scale(p.sum() * 3)
        loss.backward()
        s.unscale_(opt)
        s.step(opt)
        s.update()
        return loss.item(), p.tolist(), s.get_scale(), s.state_dict(), s.is_enabled()
    assert g(glassgrad) == g(torch)


def test_state_dict_round_trip_and_pickle_as_torch():
    def f(T):
        _, s = _loop(T, 3, {1: float("inf")}, init_scale=256.0, growth_interval=1)
        sd = s.state_dict()
        t = T.amp.GradScaler("cpu")
        t.load_state_dict(sd)
        u = pickle.loads(pickle.dumps(s))
        t.scale(T.ones(()))
        return sd, t.state_dict(), u.state_dict(), t.get_scale(), t._get_growth_tracker(), \
            (s.get_growth_factor(), s.get_backoff_factor(), s.get_growth_interval())
    assert f(glassgrad) == f(torch)


def test_two_optimizers_one_scaler_as_torch():
    """torch's recipe for several optimizers: each step skips on its own infs; update backs off on any."""
    def f(T):
        T.manual_seed(0)
        a, b = T.nn.Linear(3, 2), T.nn.Linear(2, 1)
        oa, ob = T.optim.SGD(a.parameters(), lr=0.1), T.optim.Adam(b.parameters(), lr=0.1)
        s = T.amp.GradScaler("cpu", init_scale=16.0, growth_interval=1)
        x = T.linspace(-1, 1, 6).reshape(2, 3)
        out = []
        for i in range(4):
            oa.zero_grad()
            ob.zero_grad()
            loss = b(a(x)).pow(2).mean()
            s.scale(loss).backward()
            if i == 1:
                b.bias.grad.fill_(float("nan"))
            s.unscale_(oa)
            s.step(oa)
            s.step(ob)
            s.update()
            out.append((s.get_scale(), [round(v, 5) for p in (*a.parameters(), *b.parameters())
                                        for v in p.flatten().tolist()]))
        return out
    assert f(glassgrad) == f(torch)
