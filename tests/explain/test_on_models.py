"""explain on the example models of the nn issue (tests/models/test_models.py): a ResNet with BatchNorm,
a small GPT with weight tying, an LSTM language model, a multi-level detector head with OHEM, an MLP
with dropout.  Each model is built with glassgrad (and, where the test compares, with torch from the
same seed) and runs one forward / backward; the explain tools must describe it correctly.

The models and their data come from tests/models/zoo.py (shared with tests/models/test_models.py);
here the losses are split so that each model gives a dict of natural loss terms whose sum is
the model's usual loss.
"""
import collections
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import explain

from _explain_helpers import parse_dot, walk

_MODELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "models")
if os.path.abspath(_MODELS_DIR) not in map(os.path.abspath, sys.path):
    sys.path.insert(0, os.path.abspath(_MODELS_DIR))
import zoo  # noqa: E402  (tests/models/zoo.py)


# -- the models (tests/models/zoo.py), each with a dict of natural loss terms ---------------------------------
def resnet(T):
    F = T.nn.functional
    model = zoo.build_resnet(T)
    model.train()
    x, y = zoo.resnet_batch(T)

    def terms():
        # the batch-mean cross-entropy as the sum of its two halves (BatchNorm still sees the whole batch)
        logits = model(x)
        return {"first_half": F.cross_entropy(logits[:4], y[:4], reduction="sum") / 8,
                "second_half": F.cross_entropy(logits[4:], y[4:], reduction="sum") / 8}
    return model, terms


def gpt(T):
    F = T.nn.functional
    V, S = zoo.GPT_V, zoo.GPT_S
    model = zoo.build_gpt(T)
    seq = zoo.gpt_batch(T)
    idx, tgt = seq[:, :-1], seq[:, 1:]
    n = 4 * S

    def terms():
        # the mean over all positions = (sum over the first half + sum over the second half) / n
        logits = model(idx)
        h = S // 2
        return {"first_positions": F.cross_entropy(logits[:, :h].reshape(-1, V), tgt[:, :h].reshape(-1),
                                                   reduction="sum") / n,
                "last_positions": F.cross_entropy(logits[:, h:].reshape(-1, V), tgt[:, h:].reshape(-1),
                                                  reduction="sum") / n}
    return model, terms


def lstm_lm(T):
    F = T.nn.functional
    model = zoo.build_lstm_lm(T)
    seq = zoo.lstm_batch(T)
    idx, tgt = seq[:, :-1], seq[:, 1:]
    n = 3 * 12

    def terms():
        logits, _ = model(idx)
        return {"first_steps": F.cross_entropy(logits[:, :6].reshape(-1, 20), tgt[:, :6].reshape(-1),
                                               reduction="sum") / n,
                "last_steps": F.cross_entropy(logits[:, 6:].reshape(-1, 20), tgt[:, 6:].reshape(-1),
                                              reduction="sum") / n}
    return model, terms


def detector(T):
    F = T.nn.functional
    model = zoo.build_detector(T)
    x, targets, radii = zoo.detector_batch(T)

    def terms():
        out = {}
        for lvl, ((c, r), t, rad) in enumerate(zip(model(x), targets, radii), 1):
            c = c.permute(0, 2, 3, 1).reshape(-1, 2)
            t = t.reshape(-1)
            mask = t > 0
            out[f"ohem_l{lvl}"] = zoo.ohem(T, c, t)
            out[f"smooth_l1_l{lvl}"] = F.smooth_l1_loss(r.reshape(-1)[mask], rad.reshape(-1)[mask])
        return out
    return model, terms


def dropout_mlp(T):
    F = T.nn.functional
    model = zoo.build_dropout_mlp(T)
    model.train()
    x, y = zoo.mlp_batch(T, 16)

    def terms():
        ce = F.cross_entropy(model(x), y, reduction="none")
        return {"class_0": ce[y == 0].sum() / 16, "classes_1_2": ce[y != 0].sum() / 16}
    return model, terms


MODELS = {"resnet": resnet, "gpt": gpt, "lstm_lm": lstm_lm, "detector": detector, "dropout_mlp": dropout_mlp}
N_TERMS = {"resnet": 2, "gpt": 2, "lstm_lm": 2, "detector": 4, "dropout_mlp": 2}
CASES = sorted(MODELS)


# -- helpers (independent of explain) --------------------------------------------------------------------------
def total(terms):
    tot = None
    for v in terms.values():
        tot = v if tot is None else tot + v
    return tot


def expected_layers(model):
    """(module name, [(param name, param)]) for every module that directly owns a parameter not seen before
    (named_parameters order, so a tied parameter counts once, under its first name)."""
    seen, out = set(), []
    for mname, mod in model.named_modules():
        ps = []
        for pname, p in mod.named_parameters(recurse=False):
            if id(p) not in seen:
                seen.add(id(p))
                ps.append((f"{mname}.{pname}" if mname else pname, p))
        if ps:
            out.append((mname or "(root)", ps))
    return out


def grads_of(model):
    return {n: (None if p.grad is None else np.array(p.grad.numpy(), copy=True))
            for n, p in model.named_parameters()}


def assert_bit_equal(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert (a[k] is None) == (b[k] is None), k
        if a[k] is not None:
            assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
            assert np.array_equal(a[k], b[k], equal_nan=True), k


# -- 1. the graph ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES)
def test_graph_of_model(case):
    model, terms_fn = MODELS[case](glassgrad)
    # the top-level children (the children of a ModuleList, which is never called itself) and how often
    # each is called, counted by our own forward hooks
    expected = []
    for name, child in model.named_children():
        if isinstance(child, glassgrad.nn.ModuleList):
            expected += [(f"{name}.{k}", c) for k, c in child.named_children()]
        else:
            expected.append((name, child))
    calls = collections.Counter()
    hooks = [c.register_forward_hook(lambda m, a, o, name=name: calls.update([name])) for name, c in expected]
    with explain.trace_modules(model) as trace:
        loss = total(terms_fn())
    for h in hooks:
        h.remove()
    labels = []
    for name, child in expected:
        assert calls[name] >= 1, name
        base = f"{type(child).__name__} ({name})"
        labels += [base] + [f"{base} #{k}" for k in range(2, calls[name] + 1)]
    if case == "detector":                     # the shared heads run once per level
        assert calls["cls"] == calls["reg"] == 2
    loss.backward(retain_graph=True)          # the gradients without the tool
    plain = grads_of(model)
    model.zero_grad(set_to_none=True)
    t0 = time.perf_counter()
    view = explain.graph(loss, model, modules=trace)
    dot = view.to_dot()
    text = view.text()
    elapsed = time.perf_counter() - t0
    assert elapsed < 10, f"graph + DOT + text took {elapsed:.1f} s"

    nodes, edges, clusters = parse_dot(dot)
    order, wedges = walk(loss.grad_fn)
    # the drawing has exactly the nodes and edges of the next_functions walk
    assert len(nodes) == len(order) == len(view.nodes)
    assert sum(edges.values()) == sum(wedges.values())
    ids = {i.node: i.id for i in view.nodes}
    assert set(ids) == set(order)
    assert edges == collections.Counter({(ids[a], ids[b]): k for (a, b), k in wedges.items()})
    assert all(nodes[ids[n]][0] == n.name() for n in order)
    assert len(text.splitlines()) >= len(order)

    # every parameter is a leaf labelled with its (first) name, shape shown; a tied parameter once
    leaf_names = collections.Counter(lines[1] for lines in nodes.values()
                                     if lines[0] == "torch::autograd::AccumulateGrad" and len(lines) > 1)
    pnames = [n for n, _ in model.named_parameters()]
    assert leaf_names == collections.Counter(pnames)
    leaves = {i.param: i for i in view.nodes if i.is_leaf}
    for n, p in model.named_parameters():
        assert leaves[n].node.variable is p and leaves[n].shape == tuple(p.shape)
    if case == "gpt":
        assert "wte.weight" in leaf_names and "lm_head.weight" not in leaf_names
        assert model.lm_head.weight is model.wte.weight

    # one cluster per call of a top-level child, inside the model's cluster
    top_label = type(model).__name__
    assert clusters[top_label][0] is None
    for label in labels:
        assert label in clusters, f"no cluster {label!r}; clusters: {sorted(clusters)}"
        assert clusters[label][0] == top_label
        assert clusters[label][1], f"cluster {label!r} is empty"
    # the trace removed its hooks
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())

    # a backward watched by the view: .grad bit-identical, and each leaf saw its parameter's whole gradient
    loss.backward()
    assert_bit_equal(grads_of(model), plain)
    infos = {i.param: i for i in view.nodes if i.is_leaf}
    for n, p in model.named_parameters():
        np.testing.assert_allclose(infos[n].grad_norm, np.linalg.norm(plain[n].astype(np.float64).ravel()),
                                   rtol=1e-10, err_msg=n)
        assert not infos[n].nonfinite

    # collapsing the top-level children gives fewer boxes, and the same full graph underneath
    small, _, _ = parse_dot(view.collapse(1).to_dot())
    assert len(small) < len(nodes)
    boxes = sorted(v[0] for k, v in small.items() if k.startswith("m"))
    assert boxes == sorted(labels)
    assert len(view.collapse(1).nodes) == len(order)


@pytest.mark.skipif(shutil.which("gc") is None, reason="Graphviz's 'gc' program is not installed")
@pytest.mark.parametrize("case", CASES)
def test_graphviz_reads_the_dot(case):
    """Graphviz's own parser (``gc`` counts nodes and edges without laying the graph out) accepts the DOT."""
    model, terms_fn = MODELS[case](glassgrad)
    with explain.trace_modules(model) as trace:
        loss = total(terms_fn())
    view = explain.graph(loss, model, modules=trace)
    order, wedges = walk(loss.grad_fn)
    for dot, n_nodes in ((view.to_dot(), len(order)), (view.collapse(1).to_dot(), None)):
        res = subprocess.run(["gc", "-n", "-e"], input=dot, capture_output=True, text=True, timeout=60)
        assert res.returncode == 0 and not res.stderr.strip(), res.stderr
        n, e = map(int, res.stdout.split()[:2])
        if n_nodes is not None:
            assert (n, e) == (n_nodes, sum(wedges.values()))


# -- 2. attribution ------------------------------------------------------------------------------------------
def _torch_parts(case):
    model, terms_fn = MODELS[case](torch)
    terms = terms_fn()
    params = [p for _, p in model.named_parameters()]
    out = {}
    for tn, v in terms.items():
        gs = torch.autograd.grad(v, params, retain_graph=True, allow_unused=True)
        for (pn, p), g in zip(model.named_parameters(), gs):
            out[(pn, tn)] = np.zeros(tuple(p.shape), np.float32) if g is None else g.numpy()
    return out


@pytest.mark.parametrize("case", CASES)
def test_attribution_of_model(case):
    model, terms_fn = MODELS[case](glassgrad)
    terms = terms_fn()
    assert len(terms) == N_TERMS[case]
    named = list(model.named_parameters())
    params = [p for _, p in named]
    # the user's .grad holds something already (half the parameters: a value, the others None)
    rng = np.random.default_rng(0)
    for i, p in enumerate(params):
        p.grad = glassgrad.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)) if i % 2 else None
    before = grads_of(model)

    att = explain.attribute(terms, model)

    assert_bit_equal(grads_of(model), before)                   # .grad untouched
    assert att.terms == list(terms)
    assert att.params == [n for n, _ in named]
    if case == "gpt":                                           # the tied weight once, under its first name
        assert att.params.count("wte.weight") == 1 and "lm_head.weight" not in att.params
        assert sum(p is model.wte.weight for p in params) == 1

    # each part is that term's own gradient (autograd.grad, zeros where the term does not reach)
    for tn, v in terms.items():
        gs = glassgrad.autograd.grad(v, params, retain_graph=True, allow_unused=True)
        for (pn, p), g in zip(named, gs):
            ref = np.zeros(tuple(p.shape), np.float32) if g is None else g.numpy()
            got = att.grads[(pn, tn)].numpy()
            assert got.shape == ref.shape and got.dtype == ref.dtype, (pn, tn)
            np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-6, err_msg=f"{pn} / {tn}")
            if g is None:
                assert not att.reachable[(pn, tn)] and not got.any(), (pn, tn)
    assert_bit_equal(grads_of(model), before)

    # the parts sum to the gradient of the summed loss
    for p in params:
        p.grad = None
    total(terms).backward()
    for pn, p in named:
        np.testing.assert_allclose(att.total(pn).numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=pn)

    # and to torch's per-term gradients of the same model (same seed, same data)
    ref = _torch_parts(case)
    for (pn, tn), a in ref.items():
        got = att.grads[(pn, tn)].numpy()
        scale = max(float(np.abs(a).max()), 1e-3)
        np.testing.assert_allclose(got, a, rtol=2e-3, atol=2e-4 * scale, err_msg=f"{pn} / {tn} vs torch")


def test_attribution_detector_terms_reach_what_they_should():
    """The detector's terms reach only their own branch: the level-1 terms never reach `down`, the
    classification (OHEM) terms never reach `reg`, the regression (smooth L1) terms never reach `cls`."""
    model, terms_fn = detector(glassgrad)
    att = explain.attribute(terms_fn(), model)
    for pn in att.params:
        for tn in att.terms:
            unreachable = (pn.startswith("down.") and tn.endswith("_l1")) or \
                (pn.startswith("reg.") and tn.startswith("ohem")) or \
                (pn.startswith("cls.") and tn.startswith("smooth"))
            assert att.reachable[(pn, tn)] is (not unreachable), (pn, tn)
            if unreachable:
                assert not att.grads[(pn, tn)].numpy().any()


# -- 5. gradient flow ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES)
def test_flow_of_model(case):
    model, terms_fn = MODELS[case](glassgrad)
    total(terms_fn()).backward()
    before = grads_of(model)
    fl = explain.flow(model)
    assert_bit_equal(grads_of(model), before)                   # flow only reads .grad

    layers = expected_layers(model)
    assert [s.name for s in fl.layers] == [n for n, _ in layers]     # one row per parameter-owning module
    if case == "gpt":      # lm_head owns only the tied weight, which is counted once, under wte
        assert "lm_head" not in [s.name for s in fl.layers]
    for s, (lname, ps) in zip(fl.layers, layers):
        gs = [p.grad.numpy().astype(np.float64) for _, p in ps]
        ws = [p.detach().numpy().astype(np.float64) for _, p in ps]
        assert [q.name for q in s.params] == [n for n, _ in ps]
        gnorm = np.sqrt(sum(np.sum(g * g) for g in gs))
        wnorm = np.sqrt(sum(np.sum(w * w) for w in ws))
        np.testing.assert_allclose(s.grad_norm, gnorm, rtol=1e-12)
        np.testing.assert_allclose(s.grad_mean, sum(g.sum() for g in gs) / sum(g.size for g in gs),
                                   rtol=1e-10, atol=1e-300)
        np.testing.assert_allclose(s.grad_max, max(np.abs(g).max() for g in gs), rtol=1e-12)
        np.testing.assert_allclose(s.weight_norm, wnorm, rtol=1e-12)
        np.testing.assert_allclose(s.ratio, gnorm / wnorm, rtol=1e-12)
        for q, g, w in zip(s.params, gs, ws):
            np.testing.assert_allclose(q.grad_norm, np.linalg.norm(g.ravel()), rtol=1e-12)
            np.testing.assert_allclose(q.grad_max, np.abs(g).max(), rtol=1e-12)
            np.testing.assert_allclose(q.weight_norm, np.linalg.norm(w.ravel()), rtol=1e-12)
            assert q.shape == g.shape and q.has_grad and q.finite
    norms = [s.grad_norm for s in fl.layers]
    np.testing.assert_allclose(fl.median, np.median(norms), rtol=1e-12)
    # healthy models: nothing flagged (every layer's norm is within 1e3 of the median, none below 1e-7)
    assert fl.flagged() == [], fl.table()
    assert all(1e-7 < n < 1e3 and fl.median / 1e3 < n < fl.median * 1e3 for n in norms)
    table = fl.table()
    assert "no layer flagged" in table
    assert all(s.name in table for s in fl.layers)


# -- 6. backward walkthrough ---------------------------------------------------------------------------------
def test_record_backward_of_dropout_mlp():
    model, terms_fn = dropout_mlp(glassgrad)
    loss = total(terms_fn())
    order, _ = walk(loss.grad_fn)
    loss.backward(retain_graph=True)
    plain = grads_of(model)
    model.zero_grad(set_to_none=True)
    with explain.record(model=model) as tape:
        loss.backward()
    # the engine ran every node of the graph exactly once, the loss's node first
    steps = tape.steps
    assert len(tape.runs) == 1 and len(steps) == len(order)
    assert collections.Counter(s._node for s in steps) == collections.Counter(order)
    assert steps[0]._node is loss.grad_fn
    assert [s.node for s in steps] == tape.nodes()
    acc = [s for s in steps if s.kind == "accumulate"]
    assert sorted(s.label for s in acc) == sorted(n for n, _ in model.named_parameters())
    # what the tape saw accumulate is the final .grad, and that is bit-identical to the run without the tape
    after = grads_of(model)
    assert_bit_equal(after, plain)
    for s in acc:
        np.testing.assert_array_equal(s.grads_in[0].value, after[s.label])
    story = tape.story()
    assert len(story.splitlines()) == 1 + len(order)
    assert "AccumulateGrad added" in story and "0.weight.grad" in story


# -- why_no_grad and nan_watch ---------------------------------------------------------------------------------
def _need(name):
    return getattr(explain, name)


def test_why_no_grad_frozen_embedding_of_lstm():
    why_no_grad = _need("why_no_grad")
    model, terms_fn = lstm_lm(glassgrad)
    model.emb.weight.requires_grad_(False)
    loss = total(terms_fn())
    loss.backward()
    assert model.emb.weight.grad is None
    r = why_no_grad(model.emb.weight, loss, model=model)
    assert r.cause == "requires_grad_false", repr(r)
    assert "emb.weight" in str(r) and "requires_grad" in str(r)
    # the other parameters did get gradients, and why_no_grad says so
    for n, p in model.named_parameters():
        if n != "emb.weight":
            assert p.grad is not None, n
            assert why_no_grad(p, loss, model=model).cause == "ok", n


@pytest.mark.parametrize("case", CASES)
def test_nan_watch_quiet_on_a_healthy_step(case):
    nan_watch = _need("nan_watch")

    def step(watch):
        model, terms_fn = MODELS[case](glassgrad)
        opt = glassgrad.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        if watch:
            with nan_watch():
                loss = total(terms_fn())
                opt.zero_grad()
                loss.backward()
                g = grads_of(model)
                opt.step()
        else:
            loss = total(terms_fn())
            opt.zero_grad()
            loss.backward()
            g = grads_of(model)
            opt.step()
        return loss.item(), g, {n: p.detach().numpy().copy() for n, p in model.named_parameters()}

    l0, g0, w0 = step(False)
    l1, g1, w1 = step(True)                   # raises nothing
    assert l0 == l1
    assert_bit_equal(g1, g0)                  # and changes nothing
    assert_bit_equal(w1, w0)
