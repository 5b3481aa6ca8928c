"""explain's session (watching training steps in-process) and its HTML report.

The oracle is torch: the loss terms the session finds are checked against torch.autograd.grad of the
same terms on the same (seeded) model, and a watched run's parameters are bit-identical to an unwatched one.
"""
from html.parser import HTMLParser

import numpy as np
import pytest
import torch

import glassgrad as gg
from glassgrad.explain import _report
from glassgrad.explain._session import Session, StopScript
from glassgrad.explain._terms import find_terms
from glassgrad.explain._report import render_html


class Sections(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.ids, self.tags, self.cur = [], {}, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self.cur = dict(attrs).get("id")
            self.ids.append(self.cur)
        elif self.cur is not None:
            self.tags.setdefault(self.cur, []).append(tag)

    def handle_endtag(self, tag):
        if tag == "section":
            self.cur = None


def _net(T):
    T.manual_seed(0)
    nn = T.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
            self.a = nn.Linear(8, 2)
            self.b = nn.Linear(8, 1)

        def forward(self, x):
            h = self.body(x)
            return self.a(h), self.b(h)

    return Net()


def _data(T):
    g = np.random.default_rng(1)
    x = T.tensor(g.standard_normal((16, 4)).astype(np.float32))
    y = T.tensor(g.integers(0, 2, 16))
    z = T.tensor(g.standard_normal((16, 1)).astype(np.float32))
    return x, y, z


def _losses(T, model, x, y, z):
    F = T.nn.functional
    out_a, out_b = model(x)
    loss_a = F.cross_entropy(out_a, y)
    loss_b = F.mse_loss(out_b, z)
    loss_c = (out_b ** 2).mean()
    return loss_a, loss_b, loss_c


def _train(T, steps, session=None, manual=False):
    model = _net(T)
    x, y, z = _data(T)
    opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if not manual else None
    for _ in range(steps):
        loss_a, loss_b, loss_c = _losses(T, model, x, y, z)
        loss = loss_a + 0.5 * loss_b + loss_c
        if opt is not None:
            opt.zero_grad()
        else:
            model.zero_grad()
        loss.backward()
        if opt is not None:
            opt.step()
        else:
            with T.no_grad():
                for p in model.parameters():
                    p -= 0.1 * p.grad
    return model


# -- terms ------------------------------------------------------------------------------------------------
def test_find_terms_splits_the_sum_and_attribution_matches_torch():
    att_fn = pytest.importorskip("glassgrad.explain._attribute").attribute
    gm, tm = _net(gg), _net(torch)
    gl = _losses(gg, gm, *_data(gg))
    tl = _losses(torch, tm, *_data(torch))
    loss_a, loss_b, loss_c = gl
    loss = loss_a + 0.5 * loss_b + loss_c

    class Frame:           # what find_terms reads of the backward caller's frame
        f_locals = {"loss_a": loss_a, "loss_b": loss_b, "loss_c": loss_c, "loss": loss}
        f_globals = {}
    terms, how = find_terms(loss, Frame)
    assert list(terms) == ["loss_a", "mul(loss_b)", "loss_c"]
    assert "sum" in how
    att = att_fn(terms, gm)
    t_terms = {"loss_a": tl[0], "mul(loss_b)": 0.5 * tl[1], "loss_c": tl[2]}
    names = [n for n, _ in tm.named_parameters()]
    for tn, tt in t_terms.items():
        grads = torch.autograd.grad(tt, list(tm.parameters()), retain_graph=True, allow_unused=True)
        for pn, g in zip(names, grads):
            expect = np.zeros(att.grads[(pn, tn)].shape, np.float32) if g is None else g.numpy()
            np.testing.assert_allclose(att.grads[(pn, tn)].numpy(), expect, rtol=1e-5, atol=1e-6)
    # the head `a` is only reached by loss_a: exact zeros for the other terms
    assert not att.grads[("a.weight", "loss_c")].numpy().any()


def test_find_terms_named_sum_stays_one_term_and_non_sum_is_one_term():
    gm = _net(gg)
    loss_a, loss_b, loss_c = _losses(gg, gm, *_data(gg))
    main = loss_a + loss_b
    total = main + loss_c

    class Frame:
        f_locals = {"main": main, "loss_c": loss_c, "loss_a": loss_a, "loss_b": loss_b}
        f_globals = {}
    terms, _ = find_terms(total, Frame)
    assert list(terms) == ["main", "loss_c"]
    single = loss_a * 2

    class Frame2:
        f_locals = {"single": single}
        f_globals = {}
    terms, how = find_terms(single, Frame2)
    assert list(terms) == ["single"] and "not a sum" in how
    terms, how = find_terms(total, Frame, names=["loss_b", "nope"])
    assert list(terms) == ["loss_b"] and "nope" in how


# -- the session -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("manual", [False, True], ids=["optimizer", "manual_sgd"])
def test_watching_changes_nothing(manual):
    plain = _train(gg, 4, manual=manual)
    with Session(4, full=True, progress=False) as s:
        watched = _train(gg, 4, manual=manual)
    assert len(s.result().steps) == 4
    for (n, p), (_, q) in zip(plain.named_parameters(), watched.named_parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy()), n
    # and the same training in torch lands on the same parameters (float32 tolerance)
    ref = _train(torch, 4, manual=manual)
    for (n, p), (_, q) in zip(ref.named_parameters(), watched.named_parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=n)


def test_session_stops_after_n_steps_and_records_losses():
    sess = Session(2, progress=False)
    with pytest.raises(StopScript):
        with sess:
            _train(gg, 10)
    res = sess.result()
    assert res.stopped and len(res.steps) == 2
    ref = _train(torch, 0)
    x, y, z = _data(torch)
    la, lb, lc = _losses(torch, ref, x, y, z)
    assert res.steps[0].loss == pytest.approx(float(la + 0.5 * lb + lc), rel=1e-5)
    assert res.model_name == "Net"
    assert res.terms == ["loss_a", "mul(loss_b)", "loss_c"]
    assert [lay.name for lay in res.tracker.last.layers] == ["body.0", "a", "b"]
    # the wrappers are gone: a backward after the session is not watched
    _train(gg, 1)
    assert len(res.steps) == 2


def test_session_without_module_names_leaves_after_variables():
    gg.manual_seed(0)
    w1 = gg.randn(3, 4, requires_grad=True)
    w2 = gg.randn(4, 1, requires_grad=True)
    unused = gg.randn(2, requires_grad=True)   # noqa: F841 - not a leaf of the loss
    x = gg.randn(5, 3)
    with Session(2, full=True, progress=False) as s:
        for _ in range(2):
            loss = ((x @ w1).relu() @ w2).pow(2).mean()
            loss.backward()
            with gg.no_grad():
                w1 -= 0.01 * w1.grad
                w2 -= 0.01 * w2.grad
            w1.grad = None
            w2.grad = None
    res = s.result()
    assert res.model is None and len(res.steps) == 2
    assert sorted(lay.name for lay in res.tracker.last.layers) == ["w1", "w2"]


# -- the report ------------------------------------------------------------------------------------------
def _result(steps=2):
    sess = Session(steps, progress=False)
    try:
        with sess:
            _train(gg, 5)
    except StopScript:
        pass
    return sess.result()


def test_report_sections_graph_and_plots():
    html = render_html(_result())
    sec = Sections(html)
    assert sec.ids == ["summary", "graph", "attribution", "flow", "nan", "why-no-grad"]
    assert "svg" in sec.tags["graph"] or "pre" in sec.tags["graph"]
    assert "table" in sec.tags["attribution"] and "table" in sec.tags["flow"]
    assert "<link" not in html and "<script" not in html and "http://" not in html.replace("http://www.w3.org", "")
    pytest.importorskip("matplotlib")
    assert "img" in sec.tags["flow"] and "data:image/png;base64," in html


def test_report_fallbacks_without_dot_and_matplotlib(monkeypatch, tmp_path):
    res = _result()
    from glassgrad.explain import _graph_render
    monkeypatch.setattr(_graph_render.shutil, "which", lambda name: None)
    monkeypatch.setattr(_report, "_have_mpl", lambda: False)
    path = _report.write_report(res, tmp_path / "sub" / "r.html")
    html = open(path).read()
    sec = Sections(html)
    assert "svg" in sec.tags["graph"] and "pre" in sec.tags["graph"]   # the built-in drawing, and the text tree
    assert "drawn by glassgrad&#x27;s layered layout" in html
    assert "AddBackward0" in html
    assert "img" not in sec.tags["flow"] and "glassgrad[plot]" in html


def test_report_of_a_failed_run_has_an_error_section():
    res = _result(1)
    res.error, res.error_type, res.exit_code = "Traceback ...\nValueError: <boom>", "ValueError", 1
    html = render_html(res)
    sec = Sections(html)
    assert sec.ids[:2] == ["summary", "error"]
    assert "ValueError: &lt;boom&gt;" in html
