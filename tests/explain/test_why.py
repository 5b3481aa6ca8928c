"""explain.watch / explain.why_no_grad: one scenario per cause, written once and run on torch and glassgrad.

torch (the oracle) confirms that the scenario really leaves ``.grad`` None (or set, for "ok"); glassgrad's
``why_no_grad`` must name the cause and the line of this file where it happened (marked ``# <- name``).
"""
import warnings

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import explain
from glassgrad.autograd.grad_mode import state

from _explain_helpers import line_marker

mark = line_marker(__file__)     # mark(name) -> "this_file.py:LINE" of the line ending "# <- name"


# -- scenarios: f(T) -> (tensor asked about, output, model, optimizer) ------------------------------------
def s_ok(T):
    w = T.randn(3, requires_grad=True)
    loss = (w * 2).sum()
    loss.backward()
    return w, loss, None, None


def s_non_leaf(T):
    w = T.randn(3, requires_grad=True)
    a = w * 3  # <- non_leaf
    loss = (a * 2).sum()
    loss.backward()
    return a, loss, None, None


def s_requires_grad_false(T):
    w = T.randn(3, requires_grad=True)
    x = T.randn(3)  # <- requires_grad_false
    loss = (x * w).sum()
    loss.backward()
    return x, loss, None, None


def s_not_on_path(T):
    w = T.randn(3, requires_grad=True)
    u = T.randn(3, requires_grad=True)
    loss = (w * 2).sum()  # <- not_on_path
    loss.backward()
    return u, loss, None, None


def s_detach(T):
    w = T.randn(3, requires_grad=True)
    x = T.randn(3)
    h = (w * 2).detach()  # <- detach
    loss = (h * x).sum() + x.sum()
    return w, loss, None, None


def s_data(T):
    w = T.randn(3, requires_grad=True)
    h = w.data  # <- data
    loss = (h * 2).sum()
    return w, loss, None, None


def s_item(T):
    w = T.randn(3, requires_grad=True)
    x = T.randn(3, requires_grad=True)
    s = (w ** 2).sum().item()  # <- item
    loss = (x * s).sum()
    return w, loss, None, None


def s_numpy(T):
    w = T.randn(3, requires_grad=True)
    x = T.randn(3, requires_grad=True)
    a = (w * 2).detach().numpy()  # <- numpy
    loss = (x * T.from_numpy(a)).sum()
    return w, loss, None, None


def s_tolist(T):
    w = T.randn(3, requires_grad=True)
    x = T.randn(3, requires_grad=True)
    vals = (w * 2).tolist()  # <- tolist
    loss = (x * T.tensor(vals)).sum()
    return w, loss, None, None


def s_rewrap(T):
    w = T.randn(3, requires_grad=True)
    x = T.randn(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = T.tensor(w * 2)  # <- rewrap
    loss = (x * c).sum()
    return w, loss, None, None


def s_long(T):
    w = T.randn(3, requires_grad=True)
    x = T.randn(3, requires_grad=True)
    k = (w * 10).long()  # <- long
    loss = (x * k).sum()
    return w, loss, None, None


def s_int(T):
    w = T.randn((), requires_grad=True)
    x = T.randn(3, requires_grad=True)
    k = int(w * 10)  # <- int
    loss = (x * k).sum()
    return w, loss, None, None


def s_no_grad(T):
    w = T.randn(3, requires_grad=True)
    x = T.randn(3, requires_grad=True)
    with T.no_grad():
        h = w.exp()  # <- no_grad
    loss = (x * h).sum()
    return w, loss, None, None


def _model(T):
    T.manual_seed(0)
    return T.nn.Sequential(T.nn.Linear(4, 3), T.nn.Tanh(), T.nn.Linear(3, 2))


def s_zero_grad_module(T):
    m = _model(T)
    loss = m(T.ones(5, 4)).pow(2).sum()
    loss.backward()
    m.zero_grad()  # <- zero_grad_module
    return m[0].weight, loss, m, None


def s_zero_grad_optim(T):
    m = _model(T)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    loss = m(T.ones(5, 4)).pow(2).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()  # <- zero_grad_optim
    return m[2].bias, loss, m, opt


def s_stale_recreated(T):
    m = _model(T)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    m = T.nn.Sequential(T.nn.Linear(4, 3), T.nn.Tanh(), T.nn.Linear(3, 2))  # <- stale_recreated
    loss = m(T.ones(5, 4)).pow(2).sum()
    loss.backward()
    return opt.param_groups[0]["params"][0], loss, m, opt


def s_stale_replaced(T):
    m = _model(T)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    m[2].weight = T.nn.Parameter(T.zeros(2, 3))  # <- stale_replaced
    loss = m(T.ones(5, 4)).pow(2).sum()
    loss.backward()
    return opt.param_groups[0]["params"][2], loss, m, opt


# (scenario, expected cause, marker of the expected line or None, text the sentence must contain)
CASES = [
    (s_ok, "ok", None, "has a gradient"),
    (s_non_leaf, "non_leaf", "non_leaf", "retain_grad"),
    (s_requires_grad_false, "requires_grad_false", "requires_grad_false", "requires_grad=False"),
    (s_not_on_path, "not_on_path", "not_on_path", "not used"),
    (s_detach, "detached", "detach", "`.detach()`"),
    (s_data, "detached", "data", "`.data`"),
    (s_item, "detached", "item", "`.item()`"),
    (s_numpy, "detached", "numpy", "`.detach()`"),
    (s_tolist, "detached", "tolist", "`.tolist()`"),
    (s_rewrap, "detached", "rewrap", "torch.tensor(...)"),
    (s_long, "integer_cast", "long", "torch.int64"),
    (s_int, "integer_cast", "int", "`int()`"),
    (s_no_grad, "no_grad", "no_grad", "no_grad()"),
    (s_zero_grad_module, "zero_grad_reset", "zero_grad_module", "`0.weight`"),
    (s_zero_grad_optim, "zero_grad_reset", "zero_grad_optim", "SGD.zero_grad()"),
    (s_stale_recreated, "stale_parameter", "stale_recreated", "`0.weight`"),
    (s_stale_replaced, "stale_parameter", "stale_replaced", "`2.weight`"),
]


@pytest.mark.parametrize("scenario,cause,marker,text", CASES, ids=[c[0].__name__[2:] for c in CASES])
def test_cause_and_line(scenario, cause, marker, text):
    # the oracle: torch leaves .grad None in every scenario but "ok"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        t_ref = scenario(torch)[0]
        assert (t_ref.grad is not None) == (cause == "ok")
    glassgrad.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with explain.watch():
            t, out, model, opt = scenario(glassgrad)
    r = explain.why_no_grad(t, out, model=model, optimizer=opt)
    assert isinstance(r, explain.Reason)
    assert r.cause == cause, str(r)
    assert r.line == (mark(marker) if marker else None), str(r)
    assert text in str(r)
    if r.line:
        assert r.line in str(r)


def test_stale_parameter_model_side():
    """Asking about the model's own parameter that the optimizer does not hold."""
    with explain.watch():
        t, out, model, opt = s_stale_recreated(glassgrad)
    r = explain.why_no_grad(model[0].weight, out, model=model, optimizer=opt)
    assert r.cause == "stale_parameter" and r.line == mark("stale_recreated")
    assert "does not hold" in str(r)


def test_without_watch_suggests_it():
    glassgrad.manual_seed(0)
    w = glassgrad.randn(3, requires_grad=True)
    x = glassgrad.randn(3)
    with explain.watch():
        pass        # an empty watch: no event, no line
    explain._watch.HUB.last = None
    loss = ((w * 2).detach() * x).sum()
    r = explain.why_no_grad(w, loss)
    assert r.cause == "not_on_path" and r.line is None
    assert "explain.watch()" in str(r)


def test_watch_is_off_outside_and_nests():
    assert state.watching is None
    with explain.watch() as a:
        with explain.watch() as b:
            w = glassgrad.randn(2, requires_grad=True)
            w.detach()
        assert state.watching is not None
        w.detach()
    assert state.watching is None
    assert [e.kind for e in a.events] == [".detach()", ".detach()"]
    assert [e.kind for e in b.events] == [".detach()"]


def test_library_internal_cuts_are_not_logged():
    """A loss's own .item() calls or an optimizer's no_grad ops are not the user's cuts."""
    m = _model(glassgrad)
    opt = glassgrad.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    with explain.watch() as log:
        loss = m(glassgrad.ones(5, 4)).pow(2).sum()
        loss.backward()
        opt.step()
    assert [e.kind for e in log.events] == ["backward"]


def test_events_bounded():
    w = glassgrad.randn(2, requires_grad=True)
    with explain.watch(maxlen=5) as log:
        for _ in range(20):
            w.detach()
    assert len(log.events) == 5


def _train(T, seed, steps=3):
    T.manual_seed(seed)
    m = T.nn.Sequential(T.nn.Linear(4, 8), T.nn.ReLU(), T.nn.Linear(8, 2))
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    x = T.randn(6, 4)
    for _ in range(steps):
        opt.zero_grad()
        out = m(x)
        loss = out.pow(2).mean() + out.detach().sum() * 0
        loss.backward()
        loss.item()
        opt.step()
    return [p.grad._data.copy() if hasattr(p.grad, "_data") else p.grad.numpy().copy() for p in m.parameters()]


def test_grads_bit_identical_with_watch():
    plain = _train(glassgrad, 1)
    with explain.watch():
        watched = _train(glassgrad, 1)
    for a, b in zip(plain, watched):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    ref = _train(torch, 1)      # and the scenario itself agrees with torch
    for a, b in zip(plain, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_reason_compares_to_cause_string():
    w = glassgrad.randn(2, requires_grad=True)
    (w * 2).sum().backward()
    r = explain.why_no_grad(w)
    assert r == "ok" and r.cause == "ok" and "ok" in repr(r)


@pytest.fixture(autouse=True)
def _no_leftover_watch():
    yield
    assert state.watching is None
    assert not explain._watch._WARNED       # no observer of the watch failed silently
