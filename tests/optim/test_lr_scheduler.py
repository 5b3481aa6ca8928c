"""glassgrad.optim.lr_scheduler vs torch.optim.lr_scheduler: lr (and momentum) sequences, state, warnings."""
import copy
import warnings
from collections import Counter

import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)
S = "lr_scheduler"


def _opt(T, name="SGD", two_groups=True, **kw):
    p1 = T.ones(3, requires_grad=True)
    p2 = T.ones(2, requires_grad=True)
    kw.setdefault("lr", 0.1)
    if name == "SGD":
        kw.setdefault("momentum", 0.9)
    groups = [{"params": [p1]}, {"params": [p2], "lr": 0.03}] if two_groups else [p1]
    opt = getattr(T.optim, name)(groups, **kw)
    for p in (p1, p2):
        p.grad = T.ones_like(p)
    return opt


def _seq(make, steps=60, opt_name="SGD", opt_kw=None, metrics=None, two_groups=True):
    """lr / momentum / betas after construction and after every optimizer.step(); scheduler.step()."""
    out = []
    for T in LIBS:
        opt = _opt(T, opt_name, two_groups, **(opt_kw or {}))
        sched = make(T, opt)
        rec = []
        for i in range(steps):
            rec.append((list(sched.get_last_lr()),
                        [g["lr"] for g in opt.param_groups],
                        [g.get("momentum") for g in opt.param_groups],
                        [g.get("betas") for g in opt.param_groups]))
            opt.step()
            if metrics is not None:
                sched.step(metrics[i])
            else:
                sched.step()
        out.append((rec, sched, opt))
    return out


def _close(a, b):
    if isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, float):
        assert isinstance(b, float), (a, b)
        assert a == b, (a, b)  # same recurrences in the same order: bit-identical floats
    else:
        assert a == b, (a, b)


CASES = {
    "LambdaLR": lambda T, o: getattr(T.optim, S).LambdaLR(o, lambda e: 0.95 ** e),
    "LambdaLR_list": lambda T, o: getattr(T.optim, S).LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.9 ** e]),
    "MultiplicativeLR": lambda T, o: getattr(T.optim, S).MultiplicativeLR(o, lambda e: 0.97),
    "StepLR": lambda T, o: getattr(T.optim, S).StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda T, o: getattr(T.optim, S).MultiStepLR(o, milestones=[5, 20, 20, 41], gamma=0.3),
    "ConstantLR": lambda T, o: getattr(T.optim, S).ConstantLR(o, factor=0.25, total_iters=9),
    "LinearLR": lambda T, o: getattr(T.optim, S).LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=13),
    "ExponentialLR": lambda T, o: getattr(T.optim, S).ExponentialLR(o, gamma=0.93),
    "PolynomialLR": lambda T, o: getattr(T.optim, S).PolynomialLR(o, total_iters=40, power=2.0),
    "CosineAnnealingLR": lambda T, o: getattr(T.optim, S).CosineAnnealingLR(o, T_max=15, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda T, o: getattr(T.optim, S).CosineAnnealingWarmRestarts(
        o, T_0=5, T_mult=2, eta_min=0.002),
    "CosineAnnealingWarmRestarts_mult1": lambda T, o: getattr(T.optim, S).CosineAnnealingWarmRestarts(o, T_0=7),
    "OneCycleLR_cos": lambda T, o: getattr(T.optim, S).OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=61),
    "OneCycleLR_linear_three_phase": lambda T, o: getattr(T.optim, S).OneCycleLR(
        o, max_lr=0.4, epochs=6, steps_per_epoch=11, anneal_strategy="linear", three_phase=True, pct_start=0.25),
    "OneCycleLR_no_momentum": lambda T, o: getattr(T.optim, S).OneCycleLR(
        o, max_lr=0.4, total_steps=70, cycle_momentum=False, div_factor=10.0, final_div_factor=100.0),
    "CyclicLR_triangular": lambda T, o: getattr(T.optim, S).CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=6),
    "CyclicLR_triangular2": lambda T, o: getattr(T.optim, S).CyclicLR(
        o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=4, step_size_down=7, mode="triangular2"),
    "CyclicLR_exp_range": lambda T, o: getattr(T.optim, S).CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.97, base_momentum=0.7),
    "CyclicLR_scale_fn": lambda T, o: getattr(T.optim, S).CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=5, scale_fn=lambda x: 0.5 ** x, scale_mode="iterations",
        cycle_momentum=False),
    "SequentialLR": lambda T, o: getattr(T.optim, S).SequentialLR(
        o, [getattr(T.optim, S).LinearLR(o, start_factor=0.1, total_iters=10),
            getattr(T.optim, S).CosineAnnealingLR(o, T_max=20),
            getattr(T.optim, S).ExponentialLR(o, gamma=0.9)], milestones=[10, 30]),
    "ChainedScheduler": lambda T, o: getattr(T.optim, S).ChainedScheduler(
        [getattr(T.optim, S).ConstantLR(o, factor=0.5, total_iters=4),
         getattr(T.optim, S).ExponentialLR(o, gamma=0.95),
         getattr(T.optim, S).StepLR(o, step_size=9, gamma=0.7)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_lr_sequence(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (rt, st, ot), (rg, sg, og) = _seq(CASES[name])
    _close(rt, rg)
    assert getattr(st, "last_epoch", None) == getattr(sg, "last_epoch", None)
    assert [sorted(g) for g in ot.param_groups] == [sorted(g) for g in og.param_groups]
    _compare_sched_state(st.state_dict(), sg.state_dict())


def _compare_sched_state(a, b):
    """Same keys; same values wherever they are plain data (functions and partials are skipped)."""
    assert sorted(a) == sorted(b)
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, dict) and not isinstance(x, Counter):
            _compare_sched_state(x, y)
        elif isinstance(x, list) and x and isinstance(x[0], dict):
            for u, v in zip(x, y):
                _compare_sched_state(u, v)
        elif isinstance(x, (int, float, str, bool, type(None), Counter)) or (
                isinstance(x, (list, tuple)) and all(isinstance(e, (int, float, type(None))) for e in x)):
            assert x == y, k


@pytest.mark.parametrize("name", ["OneCycleLR_cos", "CyclicLR_exp_range"])
def test_cycle_momentum_with_betas(name):
    (rt, _, _), (rg, _, _) = _seq(CASES[name], opt_name="Adam")
    _close(rt, rg)
    assert rt[3][3][0][0] != 0.9  # beta1 really cycles


@pytest.mark.parametrize("kw", [dict(), dict(mode="max", patience=2, factor=0.5),
                                dict(threshold_mode="abs", threshold=0.05, patience=1, cooldown=3, min_lr=[0.01, 0.02]),
                                dict(mode="max", threshold_mode="abs", patience=0, min_lr=0.005, eps=1e-3)])
def test_reduce_lr_on_plateau(kw):
    rng = np.random.default_rng(3)
    metrics = list(np.cumsum(rng.standard_normal(60)) * 0.1 + 5.0)
    (rt, st, _), (rg, sg, _) = _seq(lambda T, o: getattr(T.optim, S).ReduceLROnPlateau(o, **kw), metrics=metrics)
    _close(rt, rg)
    for k in ("best", "num_bad_epochs", "cooldown_counter", "last_epoch", "min_lrs"):
        assert getattr(st, k) == getattr(sg, k), k
    _compare_sched_state(st.state_dict(), sg.state_dict())


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "OneCycleLR_cos", "CyclicLR_triangular2",
                                  "LambdaLR", "SequentialLR", "ChainedScheduler", "CosineAnnealingWarmRestarts"])
def test_state_dict_round_trip(name):
    """Save optimizer + scheduler state at step 20, restore into fresh objects, continue: same lrs as torch."""
    seqs = []
    for T in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = _opt(T)
            sched = CASES[name](T, opt)
            for _ in range(20):
                opt.step()
                sched.step()
            osd, ssd = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())
            opt2 = _opt(T)
            sched2 = CASES[name](T, opt2)
            sched2.load_state_dict(ssd)
            opt2.load_state_dict(osd)
            lrs = []
            for _ in range(25):
                opt2.step()
                sched2.step()
                lrs.append(([g["lr"] for g in opt2.param_groups], list(sched2.get_last_lr())))
        seqs.append(lrs)
    _close(seqs[0], seqs[1])


def _warns(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [(x.category.__name__, str(x.message)) for x in w]


def test_step_order_warning():
    msgs = []
    for T in LIBS:
        opt = _opt(T)
        sched = getattr(T.optim, S).StepLR(opt, step_size=3)
        msgs.append(_warns(sched.step))
    assert msgs[0] == msgs[1] and len(msgs[0]) == 1 and msgs[0][0][0] == "UserWarning"

    msgs = []
    for T in LIBS:
        opt = _opt(T)
        sched = getattr(T.optim, S).StepLR(opt, step_size=3)
        opt.step()
        msgs.append(_warns(sched.step) + _warns(sched.get_lr) + _warns(lambda: sched.step(5)))
    assert msgs[0] == msgs[1] and len(msgs[0]) == 2


def test_epoch_argument_closed_form():
    res = []
    for T in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = []
            for name in ("StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR", "ConstantLR",
                         "PolynomialLR", "CosineAnnealingWarmRestarts"):
                opt = _opt(T)
                sched = CASES[name](T, opt)
                opt.step()
                for e in (3, 11, 7, 25):
                    sched.step(e)
                    out.append(list(sched.get_last_lr()))
        res.append(out)
    _close(res[0], res[1])


def test_initial_lr_and_base_lrs():
    res = []
    for T in LIBS:
        opt = _opt(T)
        sched = getattr(T.optim, S).ExponentialLR(opt, gamma=0.5)
        res.append(([g["initial_lr"] for g in opt.param_groups], sched.base_lrs, sched._step_count, sched.last_epoch))
    assert res[0] == res[1]


@pytest.mark.parametrize("case", [
    lambda T, o: getattr(T.optim, S).StepLR(o, 3, last_epoch=4),
    lambda T, o: getattr(T.optim, S).StepLR(object(), 3),
    lambda T, o: getattr(T.optim, S).ConstantLR(o, factor=1.5),
    lambda T, o: getattr(T.optim, S).LinearLR(o, start_factor=0.0),
    lambda T, o: getattr(T.optim, S).LambdaLR(o, [lambda e: 1.0]),
    lambda T, o: getattr(T.optim, S).MultiplicativeLR(o, [1.0, 2.0]),
    lambda T, o: getattr(T.optim, S).CosineAnnealingWarmRestarts(o, T_0=0),
    lambda T, o: getattr(T.optim, S).CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda T, o: getattr(T.optim, S).OneCycleLR(o, max_lr=0.1),
    lambda T, o: getattr(T.optim, S).OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1),
    lambda T, o: getattr(T.optim, S).OneCycleLR(o, max_lr=0.1, total_steps=10, anneal_strategy="exp"),
    lambda T, o: getattr(T.optim, S).OneCycleLR(o, max_lr=[0.1], total_steps=10),
    lambda T, o: (lambda s: [s.step() for _ in range(3)])(getattr(T.optim, S).OneCycleLR(o, max_lr=0.1, total_steps=2)),
    lambda T, o: getattr(T.optim, S).CyclicLR(o, 0.01, 0.1, mode="foo"),
    lambda T, o: getattr(T.optim, S).CyclicLR(T.optim.Adagrad([T.ones(1, requires_grad=True)]), 0.01, 0.1),
    lambda T, o: getattr(T.optim, S).ReduceLROnPlateau(o, factor=1.0),
    lambda T, o: getattr(T.optim, S).ReduceLROnPlateau(o, mode="avg"),
    lambda T, o: getattr(T.optim, S).ReduceLROnPlateau(o, threshold_mode="x"),
    lambda T, o: getattr(T.optim, S).ReduceLROnPlateau(o, min_lr=[0.1]),
    lambda T, o: getattr(T.optim, S).SequentialLR(o, [], milestones=[]),
    lambda T, o: getattr(T.optim, S).SequentialLR(o, [getattr(T.optim, S).StepLR(o, 2)], milestones=[3]),
    lambda T, o: getattr(T.optim, S).SequentialLR(o, [getattr(T.optim, S).ReduceLROnPlateau(o)], milestones=[]),
    lambda T, o: getattr(T.optim, S).ChainedScheduler([]),
])
def test_errors(case):
    res = []
    for T in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                case(T, _opt(T))
                res.append(None)
            except Exception as e:  # noqa: BLE001
                res.append((type(e).__name__, str(e)))
    assert res[0] is not None
    assert res[0] == res[1]


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05), dict(swa_lr=[0.01, 0.2], anneal_epochs=7, anneal_strategy="linear"),
                                dict(swa_lr=0.02, anneal_epochs=0)])
def test_swalr(kw):
    def make(T, o):
        return T.optim.swa_utils.SWALR(o, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (rt, st, _), (rg, sg, _) = _seq(make, steps=20)
    _close(rt, rg)
    _compare_sched_state(st.state_dict(), sg.state_dict())


def test_swalr_errors():
    for case in (lambda T, o: T.optim.swa_utils.SWALR(o, 0.1, anneal_strategy="exp"),
                 lambda T, o: T.optim.swa_utils.SWALR(o, 0.1, anneal_epochs=-1),
                 lambda T, o: T.optim.swa_utils.SWALR(o, [0.1])):
        test_errors(case)


def test_user_defined_scheduler():
    def make(T, o):
        class Warmup(T.optim.lr_scheduler.LRScheduler):
            def __init__(self, optimizer, warmup=5, last_epoch=-1):
                self.warmup = warmup
                super().__init__(optimizer, last_epoch)

            def get_lr(self):
                return [base * min(1.0, (self.last_epoch + 1) / self.warmup) for base in self.base_lrs]
        return Warmup(o)
    (rt, st, _), (rg, sg, _) = _seq(make, steps=12)
    _close(rt, rg)
    _compare_sched_state(st.state_dict(), sg.state_dict())
    assert _warns(lambda: st.step(20)) == _warns(lambda: sg.step(20))
    assert st.get_last_lr() == sg.get_last_lr()
