"""Optimizers, gradient clipping, lr schedulers and nn.utils on the device (issue 17): a small model moved with
.cuda() -- the strict stand-in device here (GLASSGRAD_STRICT_DEVICE=1), CuPy on a GPU -- takes three optimizer
steps, and its parameters and the optimizer's state_dict equal those of the same run on the CPU (float32
tolerance: the device path has no BLAS fast path and rounds float64 updates without long double); the
parameters and every non-scalar state tensor stay on the device."""
import numpy as np
import pytest

import glassgrad as gg
from glassgrad import nn, optim

RTOL, ATOL = 1e-4, 1e-5

CASES = [
    ("SGD", {}), ("SGD", dict(momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(momentum=0.9, dampening=0.1, maximize=True, foreach=True)),
    ("Adam", {}), ("Adam", dict(amsgrad=True, weight_decay=0.1)), ("Adam", dict(maximize=True, foreach=True)),
    ("Adam", dict(decoupled_weight_decay=True, weight_decay=0.1)), ("AdamW", dict(amsgrad=True)),
    ("RMSprop", {}), ("RMSprop", dict(momentum=0.9, centered=True, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
    ("Adadelta", dict(weight_decay=0.1)), ("Adadelta", dict(maximize=True)),
    ("Adamax", dict(weight_decay=0.1)), ("NAdam", {}), ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", {}), ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", dict(weight_decay=0.1, t0=1)), ("Rprop", {}), ("Rprop", dict(maximize=True)),
    ("LBFGS", dict(history_size=3, max_iter=4)), ("LBFGS", dict(line_search_fn="strong_wolfe")),
    ("Adafactor", {}), ("Adafactor", dict(weight_decay=0.1, maximize=True)), ("Muon", {}),
    ("Muon", dict(nesterov=False, weight_decay=0.1)),
]


def _model(device):
    gg.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2))
    x = gg.from_numpy(np.random.default_rng(1).standard_normal((6, 4)).astype(np.float32))
    return (m.cuda(), x.cuda()) if device == "cuda" else (m, x)


def _loss(m, x):
    return (m(x) ** 2).mean()


def _run(name, kw, device, steps=3, sched=None):
    m, x = _model(device)
    params = [p for p in m.parameters() if p.ndim == 2] if name == "Muon" else list(m.parameters())
    opt = getattr(optim, name)(params, **kw)
    s = sched(opt) if sched else None
    for _ in range(steps):
        def closure():
            opt.zero_grad()
            loss = _loss(m, x)
            loss.backward()
            return loss
        opt.step(closure)
        if s is not None:
            s.step()
    return m, opt


def _same(a, b, what, scalar_anywhere=False):
    """b (the device run's) equals a (the CPU run's); tensors with elements live on the device."""
    if isinstance(a, gg.Tensor):
        assert isinstance(b, gg.Tensor), what
        if b.ndim > 0 or not scalar_anywhere:
            assert b.device.type == "cuda", f"{what}: on {b.device}"
        assert a.dtype == b.dtype and a.shape == b.shape, what
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), rtol=RTOL, atol=ATOL, err_msg=what)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), what
        for i, (u, v) in enumerate(zip(a, b)):
            _same(u, v, f"{what}[{i}]", scalar_anywhere)
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), what
        for k in a:
            _same(a[k], b[k], f"{what}[{k!r}]", scalar_anywhere)
    elif isinstance(a, float):
        np.testing.assert_allclose(b, a, rtol=RTOL, atol=ATOL, err_msg=what)
    else:
        assert a == b, what


def _check_run(name, kw, **run_kw):
    cm, copt = _run(name, kw, "cpu", **run_kw)
    dm, dopt = _run(name, kw, "cuda", **run_kw)
    for (n, a), (_, b) in zip(cm.named_parameters(), dm.named_parameters()):
        _same(a, b, n)
    # scalar state (step counts, ...) is a CPU tensor in torch's non-capturable optimizers
    _same(copt.state_dict(), dopt.state_dict(), "state_dict", scalar_anywhere=True)
    x0 = _model("cpu")[0]
    assert not np.allclose(next(iter(x0.parameters())).detach().numpy(),
                           next(iter(dm.parameters())).detach().cpu().numpy())      # the steps moved it
    return cm, dm, copt, dopt


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{'-'.join(k) or 'default'}" for n, k in CASES])
def test_optimizer_steps_on_device_as_on_cpu(name, kw):
    _check_run(name, kw)


@pytest.mark.parametrize("sched", ["StepLR", "OneCycleLR", "CosineAnnealingWarmRestarts", "ReduceLROnPlateau",
                                   "CyclicLR"])
def test_lr_scheduler_on_device(sched):
    make = {"StepLR": lambda o: optim.lr_scheduler.StepLR(o, 1, 0.5),
            "OneCycleLR": lambda o: optim.lr_scheduler.OneCycleLR(o, 0.1, total_steps=5),
            "CosineAnnealingWarmRestarts": lambda o: optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 2),
            "ReduceLROnPlateau": None, "CyclicLR": lambda o: optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, 2)}[sched]
    if make is None:
        for device in ("cpu", "cuda"):
            m, x = _model(device)
            opt = optim.SGD(m.parameters(), lr=0.1)
            s = optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
            for _ in range(3):
                opt.zero_grad()
                loss = _loss(m, x)
                loss.backward()
                opt.step()
                s.step(-loss.detach())            # a device 0-d tensor as the metric: it worsens every step
            if device == "cpu":
                lrs = [g["lr"] for g in opt.param_groups]
        assert [g["lr"] for g in opt.param_groups] == lrs and lrs[0] < 0.1
        return
    kw = dict(momentum=0.9) if sched in ("OneCycleLR", "CyclicLR") else {}
    _check_run("SGD", kw, sched=make)
