"""Optimizers, gradient clipping, lr schedulers and nn.utils on the device (issue 17): a small model moved with
.cuda() -- the strict stand-in device here (GLASSGRAD_STRICT_DEVICE=1), CuPy on a GPU -- takes three optimizer
steps, and its parameters and the optimizer's state_dict equal those of the same run on the CPU (float32
tolerance: the device path has no BLAS fast path and rounds float64 updates without long double); the
parameters and every non-scalar state tensor stay on the device."""
import copy

import contextlib

import numpy as np
import pytest

import glassgrad as gg
from glassgrad import backend
from glassgrad import nn, optim

RTOL, ATOL = 1e-4, 1e-5

CASES = [
    ("SGD", {}), ("SGD", dict(momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(momentum=0.9, dampening=0.1, maximize=True, foreach=True)),
    ("Adam", {}), ("Adam", dict(amsgrad=True, weight_decay=0.1)), ("Adam", dict(maximize=True, foreach=True)),
    ("Adam", dict(decoupled_weight_decay=True, weight_decay=0.1)), ("Adam", dict(capturable=True)),
    ("AdamW", dict(fused=True)), ("SGD", dict(momentum=0.5, fused=True)), ("Adagrad", dict(fused=True)), ("AdamW", dict(amsgrad=True)),
    ("RMSprop", {}), ("RMSprop", dict(momentum=0.9, centered=True, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
    ("Adadelta", dict(weight_decay=0.1)), ("Adadelta", dict(maximize=True)),
    ("Adamax", dict(weight_decay=0.1)), ("NAdam", {}), ("NAdam", dict(capturable=True)), ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", {}), ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", dict(weight_decay=0.1, t0=1)), ("ASGD", dict(foreach=True, t0=2)), ("Rprop", {}), ("Rprop", dict(maximize=True)),
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
        with _no_copies(device) as copies:      # an optimizer step stays on the device: no array crosses
            opt.step(closure)
        assert not copies, f"{name}: an array of {copies[0][0]} copied between host and device:\n{copies[0][1]}"
        if s is not None:
            s.step()
    return m, opt


def _no_copies(device):
    if device != "cuda" or not backend.STRICT:
        return contextlib.nullcontext([])
    from glassgrad import _strict
    return _strict.recording(uploads=True)


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
    if name in ("ASGD", "LBFGS") or kw.get("capturable") or kw.get("fused"):   # these keep their scalar state on the device
        _same(copt.state_dict()["state"], dopt.state_dict()["state"], "scalar state")
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


# -- nn.utils ------------------------------------------------------------------------------------------------

def _t(shape, device, seed=0):
    t = gg.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))
    return t.cuda() if device == "cuda" else t


def _lin(device, *sizes):
    gg.manual_seed(0)
    m = nn.Linear(*sizes)
    return m.cuda() if device == "cuda" else m


def _grads_of(m, x):
    (m(x) ** 2).sum().backward()
    return [p.grad for p in m.parameters()]


def _clip_norm(device):
    out = []
    for nt in (2.0, 1.0, float("inf"), 0.0, 3.0, -float("inf")):
        m = _lin(device, 4, 3)
        _grads_of(m, _t((2, 4), device))
        out.append(nn.utils.clip_grad_norm_(m.parameters(), 0.5, nt))
        out += [p.grad for p in m.parameters()]
    m = _lin(device, 4, 3)
    grads = _grads_of(m, _t((2, 4), device))
    total = nn.utils.get_total_norm(grads, 2.0, error_if_nonfinite=True)
    nn.utils.clip_grads_with_norm_(m.parameters(), 0.1, total)
    return out + [total] + [p.grad for p in m.parameters()]


def _clip_value(device):
    m = _lin(device, 4, 3)
    _grads_of(m, _t((2, 4), device))
    nn.utils.clip_grad_value_(m.parameters(), 0.05)
    return [p.grad for p in m.parameters()]


def _vector(device):
    m = _lin(device, 4, 3)
    v = nn.utils.parameters_to_vector(m.parameters())
    nn.utils.vector_to_parameters(v * 2, m.parameters())
    return [v] + list(m.parameters())


def _weight_norms(device):
    x = _t((2, 4), device)
    with pytest.warns(FutureWarning):
        a = nn.utils.weight_norm(_lin(device, 4, 3))
    b = nn.utils.parametrizations.weight_norm(_lin(device, 4, 3), dim=1)
    out = [a(x), b(x)] + _grads_of(a, x) + _grads_of(b, x)
    nn.utils.remove_weight_norm(a)
    return out + [a.weight]


def _spectral_norms(device):
    x = _t((2, 4), device)
    a = nn.utils.spectral_norm(_lin(device, 4, 3))
    b = nn.utils.parametrizations.spectral_norm(_lin(device, 4, 3), n_power_iterations=2)
    out = [a(x), b(x), a.weight_u, b.parametrizations.weight[0]._u] + _grads_of(a, x) + _grads_of(b, x)
    a.eval()
    b.eval()
    out += [a(x), b(x)]
    nn.utils.remove_spectral_norm(a)
    return out + [a.weight]


def _orthogonal(device):
    out = []
    x = _t((2, 4), device)
    for n_in, n_out in ((4, 3), (4, 4), (3, 4)):       # wide, square, tall weights
        for mp in ("matrix_exp", "cayley", "householder"):
            m = nn.utils.parametrizations.orthogonal(_lin(device, n_in, n_out), orthogonal_map=mp)
            xi = _t((2, n_in), device)
            out += [m(xi), m.weight] + _grads_of(m, xi)
    m = nn.utils.parametrizations.orthogonal(_lin(device, 4, 3), orthogonal_map="householder",
                                             use_trivialization=False)
    return out + [m(x), m.weight]


def _packing(device):
    U = nn.utils.rnn
    x = _t((5, 3, 2), device)
    x.requires_grad_()
    p = U.pack_padded_sequence(x, gg.tensor([3, 5, 2]), enforce_sorted=False)
    assert p.is_cuda == (device == "cuda") and p.batch_sizes.device.type == "cpu"
    padded, lens = U.pad_packed_sequence(p, total_length=6)
    assert lens.device.type == "cpu"
    seqs = [_t((4, 2), device, 1), _t((2, 2), device, 2), _t((3, 2), device, 3)]
    q = U.pack_sequence(seqs, enforce_sorted=False)
    gg.manual_seed(0)
    lstm = nn.LSTM(2, 3)
    lstm = lstm.cuda() if device == "cuda" else lstm
    y, (h, c) = lstm(p)
    yp, _ = U.pad_packed_sequence(y, batch_first=True)
    (yp.sum() + h.sum()).backward()
    left = U.pad_sequence(seqs, batch_first=True, padding_side="left", padding_value=-1.0)
    right = U.pad_sequence(seqs)
    un = U.unpad_sequence(right.clone(), gg.tensor([4, 2, 3]))
    return ([p.data, p.sorted_indices, p.unsorted_indices, padded, q.data, y.data, yp, h, c, x.grad, left, right]
            + un + U.unpack_sequence(q) + [lens.cuda() if device == "cuda" else lens])


def _fusion(device):
    gg.manual_seed(0)
    conv, bn = nn.Conv2d(3, 4, 3).eval(), nn.BatchNorm2d(4).eval()
    lin, bn1 = nn.Linear(3, 4).eval(), nn.BatchNorm1d(4).eval()
    with gg.no_grad():
        for b in (bn, bn1):
            b.running_mean.uniform_(-1, 1)
            b.running_var.uniform_(0.5, 2)
    mods = [conv, bn, lin, bn1]
    if device == "cuda":
        mods = [m.cuda() for m in mods]
    fc = nn.utils.fusion.fuse_conv_bn_eval(mods[0], mods[1])
    fl = nn.utils.fusion.fuse_linear_bn_eval(mods[2], mods[3])
    return [fc.weight, fc.bias, fc(_t((1, 3, 5, 5), device)), fl.weight, fl.bias, fl(_t((2, 3), device))]


def _functional_call(device):
    m = _lin(device, 4, 3)
    w, b = _t((3, 4), device, 5), _t((3,), device, 6)
    w.requires_grad_()
    y = gg.func.functional_call(m, {"weight": w, "bias": b}, (_t((2, 4), device),))
    y.sum().backward()
    return [y, w.grad, m.weight]


def _prune(device):
    gg.manual_seed(0)
    m = _lin(device, 4, 3)
    P = nn.utils.prune
    P.l1_unstructured(m, "weight", 0.5)
    P.random_unstructured(m, "bias", 0.3)
    P.ln_structured(m, "weight", 0.5, 2, 0)
    out = [m.weight, m.weight_mask, m.bias_mask, m(_t((2, 4), device))]
    P.remove(m, "weight")
    m2 = _lin(device, 4, 3)
    P.global_unstructured([(m2, "weight"), (m2, "bias")], P.L1Unstructured, amount=0.4)
    return out + [m.weight, m2.weight, m2.bias]


class _Sym(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT

    def right_inverse(self, A):
        return A.triu()


def _parametrize(device):
    P = nn.utils.parametrize
    m = _lin(device, 3, 3)
    P.register_parametrization(m, "weight", _Sym())
    x = _t((2, 3), device)
    with P.cached():
        y = m(x) + m(x)
    y.sum().backward()
    out = [y, m.weight, m.parametrizations.weight.original.grad]
    m.weight = _t((3, 3), device, 4)
    out.append(m.parametrizations.weight.original)
    P.remove_parametrizations(m, "weight")
    s = nn.utils.skip_init(nn.Linear, 4, 3, device=device)
    assert s.weight.device.type == device
    return out + [m.weight]


UTILS = {"parametrize": _parametrize, "clip_grad_norm_": _clip_norm, "clip_grad_value_": _clip_value, "parameters_to_vector": _vector,
         "weight_norm": _weight_norms, "spectral_norm": _spectral_norms, "orthogonal": _orthogonal,
         "rnn_packing": _packing, "fusion": _fusion, "functional_call": _functional_call, "prune": _prune}


@pytest.mark.parametrize("name", UTILS)
def test_nn_utils_on_device_as_on_cpu(name):
    a = UTILS[name]("cpu")
    b = UTILS[name]("cuda")
    _same(a, b, name)


# -- state_dict loading, complex parameters, functional optimizers, SWA ---------------------------------------

def test_load_state_dict_moves_state_to_the_parameters_device():
    cm, copt = _run("Adam", dict(amsgrad=True), "cpu", steps=2)
    dm, _ = _model("cuda")
    dopt = optim.Adam(dm.parameters(), amsgrad=True)
    dopt.load_state_dict(copy.deepcopy(copt.state_dict()))       # (not sharing the CPU run's step tensors)
    st = dopt.state[next(iter(dm.parameters()))]
    assert st["exp_avg"].device.type == "cuda" and st["max_exp_avg_sq"].device.type == "cuda"
    assert st["step"].device.type == "cpu"                   # torch: a non-capturable step count stays there
    dm.load_state_dict(cm.state_dict())
    for m, opt, device in ((cm, copt, "cpu"), (dm, dopt, "cuda")):
        opt.zero_grad()
        _loss(m, _model(device)[1]).backward()
        opt.step()
    _same(list(cm.parameters()), list(dm.parameters()), "parameters after the loaded step")
    _same(copt.state_dict(), dopt.state_dict(), "state_dict", scalar_anywhere=True)


@pytest.mark.parametrize("name,kw", [("Adam", {}), ("SGD", dict(momentum=0.9)), ("RMSprop", dict(centered=True)),
                                     ("Adagrad", {}), ("NAdam", {}), ("Rprop", {})])
def test_complex_parameters_on_device(name, kw):
    res = []
    for device in ("cpu", "cuda"):
        rng = np.random.default_rng(3)
        z = gg.from_numpy((rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))).astype(np.complex64))
        z = z.cuda() if device == "cuda" else z
        z.requires_grad_()
        opt = getattr(optim, name)([z], lr=0.05, **kw)
        for _ in range(3):
            opt.zero_grad()
            (z * z.conj()).real.sum().backward()
            opt.step()
        res.append((z, opt.state_dict()))
    _same(res[0], res[1], name, scalar_anywhere=True)


def test_functional_optimizers_on_device():
    res = []
    for device in ("cpu", "cuda"):
        p, g = _t((3, 4), device, 1), _t((3, 4), device, 2)
        m, v, step = gg.zeros_like(p), gg.zeros_like(p), gg.tensor(0.0)
        optim.adam.adam([p], [g], [m], [v], [], [step], amsgrad=False, beta1=0.9, beta2=0.99, lr=0.1,
                        weight_decay=0.0, eps=1e-8, maximize=False)
        q, buf = _t((5,), device, 3), [None]
        optim.sgd.sgd([q], [_t((5,), device, 4)], buf, momentum=0.9, lr=0.1, dampening=0.0, weight_decay=0.0,
                      nesterov=False, maximize=False)
        res.append([p, m, v, q, buf[0]])
    _same(res[0], res[1], "functional")


def test_swa_on_device():
    res = []
    for device in ("cpu", "cuda"):
        gg.manual_seed(0)
        m = nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5), nn.Linear(5, 2))
        x = _t((6, 4), device)
        m = m.cuda() if device == "cuda" else m
        swa = optim.swa_utils.AveragedModel(m, device=device)
        ema = optim.swa_utils.AveragedModel(m, multi_avg_fn=optim.swa_utils.get_ema_multi_avg_fn(0.9),
                                            use_buffers=True)
        opt = optim.SGD(m.parameters(), lr=0.1)
        sched = optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=2)
        for _ in range(3):
            opt.zero_grad()
            _loss(m, x).backward()
            opt.step()
            swa.update_parameters(m)
            ema.update_parameters(m)
            sched.step()
        optim.swa_utils.update_bn([x, x * 2], swa)
        assert swa.n_averaged.device.type == device
        res.append([list(swa.parameters()), list(swa.buffers())[:-1], list(ema.parameters()), swa(x),
                    opt.param_groups[0]["lr"]])
    _same(res[0], res[1], "swa")


def test_total_norm_of_gradients_on_two_devices():
    """torch: the per-tensor norms meet on the first tensor's device; each gradient is scaled where it lives."""
    res = []
    for first in ("cpu", "cuda"):
        a, b = _t((3, 4), "cpu", 1), _t((5,), "cuda", 2)
        ps = [a, b] if first == "cpu" else [b, a]
        for p, g in zip(ps, (_t(tuple(q.shape), q.device.type, 7) for q in ps)):
            p.grad = g
        total = nn.utils.clip_grad_norm_(ps, 0.5)
        assert total.device.type == first and a.grad.device.type == "cpu" and b.grad.device.type == "cuda"
        res.append((float(total), a.grad.numpy(), b.grad.cpu().numpy()))
    ref = []
    for p in (_t((3, 4), "cpu", 1), _t((5,), "cpu", 2)):
        p.grad = _t(tuple(p.shape), "cpu", 7)
        ref.append(p)
    ref_total = float(nn.utils.clip_grad_norm_(ref, 0.5))
    for total, ga, gb in res:
        np.testing.assert_allclose(total, ref_total, rtol=RTOL)
        np.testing.assert_allclose(ga, ref[0].grad.numpy(), rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(gb, ref[1].grad.numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name,kw", [("Adam", dict(weight_decay=0.1)), ("SGD", dict(momentum=0.9, nesterov=True)),
                                     ("RMSprop", dict(momentum=0.5)), ("NAdam", {}), ("LBFGS", {})])
def test_float64_and_float16_steps_on_device(name, kw):
    """float64 updates on the device round twice where the CPU uses long double (CuPy has none), float16 ones
    go through float32 as on the CPU: equal within the dtype's tolerance."""
    for dtype, tol in ((gg.float64, 1e-10), (gg.float16, 2e-3)):
        if dtype is gg.float16 and name == "LBFGS":
            continue
        res = []
        for device in ("cpu", "cuda"):
            gg.manual_seed(0)
            m = nn.Linear(4, 3).to(dtype)
            x = _t((6, 4), "cpu").to(dtype)
            if device == "cuda":
                m, x = m.cuda(), x.cuda()
            opt = getattr(optim, name)(m.parameters(), lr=0.01, **kw)
            for _ in range(3):
                def closure():
                    opt.zero_grad()
                    loss = (m(x).float() ** 2).mean() if dtype is gg.float16 else (m(x) ** 2).mean()
                    loss.backward()
                    return loss
                opt.step(closure)
            assert m.weight.device.type == device and m.weight.dtype is dtype
            res.append([p.detach().cpu().double().numpy() for p in m.parameters()])
        for a, b in zip(*res):
            np.testing.assert_allclose(b, a, rtol=tol, atol=tol)


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.01, momentum=0.9)), ("Adam", dict(lr=1e-3)),
                                     ("AdamW", dict(lr=1e-3, weight_decay=0.1)), ("RMSprop", dict(lr=1e-3))])
def test_large_parameters_step_on_device_as_on_cpu(name, kw):
    """Parameters past the CPU kernels' block size (64K elements: blockwise runs host arrays in 16K-element
    slices) step in one piece on the device, equal to the CPU."""
    out = {}
    for device in ("cpu", "cuda"):
        gg.manual_seed(0)
        m = nn.Linear(300, 300).to(device)
        opt = getattr(optim, name)(m.parameters(), **kw)
        x = gg.randn(8, 300).to(device)
        for _ in range(2):
            opt.zero_grad()
            (m(x) ** 2).mean().backward()
            opt.step()
        assert m.weight.device.type == device
        out[device] = m.weight.detach().cpu().numpy()
    np.testing.assert_allclose(out["cuda"], out["cpu"], rtol=1e-6, atol=1e-7)
