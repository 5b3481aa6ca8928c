"""explain.attribute: per-loss gradient attribution, checked against torch.autograd.grad per term,
against glassgrad's own summed backward, and on the known answers of seeds 000 and 001."""
import os
import warnings

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import explain

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEEDS = os.path.join(ROOT, "examples", "seeds")
TERMS = ["tr", "tcl", "radii", "sin", "cos"]


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t._data) if isinstance(t, glassgrad.Tensor) else np.asarray(t)


def _close(a, b, rtol=1e-4, atol=1e-6):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _close_to_torch(a, ref, rtol=1e-4, atol=1e-6):
    """A float32 gradient against torch's: per element within rtol, give or take 1e-5 of the tensor's largest
    magnitude.  An element that is a sum of cancelling terms carries those terms' rounding, and torch rounds
    them differently per CPU (its AVX-512, AVX2 and plain kernels), so its own results differ there."""
    a, ref = _np(a), _np(ref)
    scale = float(np.abs(ref).max()) if ref.size else 0.0
    np.testing.assert_allclose(a, ref, rtol=rtol, atol=max(atol, 1e-5 * scale))


# -- seed 000: the TextSnake head and TextLoss, run by either library ----------------------------------
def _load_seed000(lib):
    path = os.path.join(SEEDS, "seed000_textsnake.py")
    src = open(path).read().split("# --- end of the post's code ---")[0]
    src = "\n".join(ln for ln in src.splitlines() if not ln.startswith("import torch"))
    ns = {"torch": lib, "nn": lib.nn, "F": lib.nn.functional}
    exec(compile(src, path, "exec"), ns)
    return ns


def _textsnake(lib, hw=12, seed=0):
    ns = _load_seed000(lib)
    lib.manual_seed(seed)
    head = ns["Head"]()
    features = lib.randn(2, 16, hw, hw)
    tr_mask = (lib.rand(2, hw, hw) > 0.6).byte()
    tcl_mask = tr_mask * (lib.rand(2, hw, hw) > 0.5).byte()
    train_mask = (lib.rand(2, hw, hw) > 0.1).byte()
    angle = lib.rand(2, hw, hw) * 6.2832
    radii_map = lib.rand(2, hw, hw) * 4 + 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # uint8 indexing is deprecated (the post's code)
        out = head(features)
        losses = ns["TextLoss"]()(out, tr_mask, tcl_mask, lib.sin(angle), lib.cos(angle), radii_map, train_mask)
    return head, dict(zip(TERMS, losses))


@pytest.fixture(scope="module")
def seed000():
    head, terms = _textsnake(glassgrad)
    return head, terms, explain.attribute(terms, head)


def test_seed000_channels_get_gradient_only_from_their_terms(seed000):
    _, _, att = seed000
    rows = {t: np.abs(att.grads[("predict.1.weight", t)]._data.reshape(7, 16)).sum(1) for t in TERMS}
    owner = {"tr": {0, 1}, "tcl": {2, 3}, "sin": {4, 5}, "cos": {4, 5}, "radii": {6}}
    for t in TERMS:
        for c in range(7):
            if c in owner[t]:
                assert rows[t][c] > 0, (t, c)
            else:
                assert rows[t][c] == 0.0, (t, c)      # exact zeros, not small numbers
        assert att.reachable[("predict.1.weight", t)]     # every term reaches the tensor; rows are zero
    for t1 in TERMS:                                    # disjoint channels: orthogonal terms
        for t2 in TERMS:
            if t1 != t2 and owner[t1].isdisjoint(owner[t2]):
                assert att.cosine("predict.1.weight", t1, t2) == 0.0


def test_seed000_parts_sum_to_summed_backward(seed000):
    head, terms, att = seed000
    assert all(p.grad is None for p in head.parameters())       # attribute left .grad alone
    sum(terms.values()).backward(retain_graph=True)
    for name, p in head.named_parameters():
        _close(att.total(name), p.grad, rtol=1e-5, atol=1e-7)
        parts = sum(att.grads[(name, t)]._data for t in TERMS)
        _close(parts, p.grad, rtol=1e-5, atol=1e-7)
    for p in head.parameters():
        p.grad = None


def test_seed000_matches_torch_autograd_grad_per_term(seed000):
    _, _, att = seed000
    thead, tterms = _textsnake(torch)
    names = [n for n, _ in thead.named_parameters()]
    assert names == att.params
    for t in TERMS:
        gs = torch.autograd.grad(tterms[t], list(thead.parameters()), retain_graph=True, allow_unused=True)
        for n, g in zip(names, gs):
            ref = np.zeros(att.grads[(n, t)].shape, np.float32) if g is None else g.numpy()
            _close_to_torch(att.grads[(n, t)], ref)


def test_seed000_stacks_the_shared_nodes(seed000):
    _, _, att = seed000
    assert att.stats["stacked"] > 0
    assert att.stats["fallback"] == {}
    loop = explain.attribute(seed000[1], seed000[0], _stack=False)
    assert loop.stats["stacked"] == 0
    for k in att.grads:
        _close(att.grads[k], loop.grads[k], rtol=1e-5, atol=1e-7)


def test_seed000_table_and_html(seed000):
    _, _, att = seed000
    txt = att.table()
    for w in ["predict.0.weight", "predict.1.bias", "[7, 16, 1, 1]", "share", "contrib", "cos tcl"] + TERMS:
        assert w in txt
    mod = att.table(by="module")
    assert "predict.0  (2 parameters)" in mod and "predict.1  (2 parameters)" in mod
    h = att.to_html()
    assert h.count("<tr") == 1 + 4 * (1 + len(TERMS))
    assert "<script" not in h and "http" not in h and "<link" not in h
    with pytest.raises(ValueError):
        att.table(by="layer")


# -- seed 001: loss1 + loss2 ---------------------------------------------------------------------------
def _retinanet(lib):
    lib.manual_seed(2809)
    model = lib.nn.Linear(10, 2)
    x = lib.randn(1, 10)
    target1 = lib.randn(1, 2)
    target2 = lib.empty(1, dtype=lib.long).random_(2)
    out = model(x)
    loss1 = lib.nn.MSELoss()(out, target1)
    loss2 = lib.nn.NLLLoss()(lib.nn.functional.log_softmax(out, 1), target2)
    return model, loss1, loss2


def test_seed001_attribution_equals_separate_backwards():
    model, loss1, loss2 = _retinanet(glassgrad)
    att = explain.attribute({"loss1": loss1, "loss2": loss2}, model)
    assert att.stats["stacked"] > 0
    sep = {}
    loss1.backward(retain_graph=True)
    sep["loss1"] = {n: p.grad._data.copy() for n, p in model.named_parameters()}
    model.zero_grad()
    loss2.backward()
    sep["loss2"] = {n: p.grad._data.copy() for n, p in model.named_parameters()}
    tmodel, t1, t2 = _retinanet(torch)
    for term, tl in (("loss1", t1), ("loss2", t2)):
        tg = torch.autograd.grad(tl, list(tmodel.parameters()), retain_graph=True)
        for (n, _), g in zip(model.named_parameters(), tg):
            _close(att.grads[(n, term)], sep[term][n], rtol=1e-6, atol=1e-8)
            _close_to_torch(att.grads[(n, term)], g, rtol=1e-5, atol=1e-7)


# -- .grad untouched, graph kept, accumulate=True ----------------------------------------------------------
def _mlp(lib, K=3, seed=1):
    lib.manual_seed(seed)
    nn = lib.nn
    trunk = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU())
    heads = nn.ModuleList([nn.Linear(16, 2) for _ in range(K)])
    model = nn.ModuleDict({"trunk": trunk, "heads": heads})
    x = lib.randn(5, 8)
    targets = [lib.randn(5, 2) for _ in range(K)]
    h = trunk(x)
    terms = {f"task{k}": ((heads[k](h) - targets[k]) ** 2).mean() for k in range(K)}
    return model, terms


def test_grad_untouched_and_graph_still_usable():
    model, terms = _mlp(glassgrad)
    p0 = next(iter(model.parameters()))
    p0.grad = glassgrad.full(p0.shape, 7.0)
    before = p0.grad._data.copy()
    explain.attribute(terms, model)
    assert np.array_equal(p0.grad._data, before)
    assert all(p.grad is None for p in list(model.parameters())[1:])
    # the user's own backward afterwards: bit-identical to a run without the tool
    sum(terms.values()).backward()
    with_tool = [p.grad._data.copy() for p in model.parameters()]
    model2, terms2 = _mlp(glassgrad)
    p02 = next(iter(model2.parameters()))
    p02.grad = glassgrad.full(p02.shape, 7.0)
    sum(terms2.values()).backward()
    for a, p in zip(with_tool, model2.parameters()):
        assert np.array_equal(a, p.grad._data)


def test_accumulate_equals_summed_backward():
    model, terms = _mlp(glassgrad)
    att = explain.attribute(terms, model, accumulate=True)
    got = {n: p.grad._data.copy() for n, p in model.named_parameters()}
    model2, terms2 = _mlp(glassgrad)
    sum(terms2.values()).backward()
    for n, p in model2.named_parameters():
        _close(got[n], p.grad, rtol=1e-5, atol=1e-7)
        _close(att.total(n), p.grad, rtol=1e-5, atol=1e-7)
    explain.attribute(terms, model, accumulate=True)        # a second call adds again, like backward
    for n, p in model.named_parameters():
        _close(p.grad, 2 * got[n], rtol=1e-5, atol=1e-7)


def test_mlp_heads_unreachable_and_matches_torch():
    K = 4
    model, terms = _mlp(glassgrad, K)
    att = explain.attribute(terms, model)
    tmodel, tterms = _mlp(torch, K)
    names = [n for n, _ in tmodel.named_parameters()]
    assert names == att.params
    for t, tl in tterms.items():
        gs = torch.autograd.grad(tl, list(tmodel.parameters()), retain_graph=True, allow_unused=True)
        for n, g in zip(names, gs):
            k = int(t[4:])
            if n.startswith("heads.") and n.split(".")[1] != str(k):
                assert g is None and not att.reachable[(n, t)]
                assert not att.grads[(n, t)]._data.any()
            else:
                assert att.reachable[(n, t)]
                _close_to_torch(att.grads[(n, t)], g)
    txt = att.table()
    assert txt.count("unreachable") == 2 * K * (K - 1)        # weight and bias of each other head
    assert att.stats["stacked"] > 0 and att.stats["fallback"] == {}
    with pytest.raises(KeyError):
        att.total("nope")


def test_conflicting_terms_have_negative_cosine():
    w = glassgrad.randn(6, requires_grad=True)
    x = glassgrad.randn(6)
    y = (w * x).sum()
    att = explain.attribute({"up": y, "down": -2 * y, "other": 0.01 * (w ** 2).sum()}, params={"w": w})
    assert att.cosine("w", "up", "down") == pytest.approx(-1.0, abs=1e-6)
    r = att.rows()[0]["terms"]
    assert r[0]["contrib"] < 0 < r[1]["contrib"]      # "up" pulls against the total
    assert sum(t["contrib"] for t in r) == pytest.approx(1.0)
    assert sum(t["share"] for t in r) == pytest.approx(1.0)
    assert "-1.000" in att.table()
    assert "class='neg'" in att.to_html()


def test_list_terms_constants_and_errors():
    w = glassgrad.randn(3, requires_grad=True)
    a = (w * 2).sum()
    att = explain.attribute([a, 0.0], params=[w])
    assert att.terms == ["term0", "term1"] and att.params == ["param0"]
    assert not att.reachable[("param0", "term1")]
    assert not att.grads[("param0", "term1")]._data.any()
    _close(att.grads[("param0", "term0")], np.full(3, 2.0, np.float32))
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        explain.attribute({"v": w * 2}, params=[w])
    with pytest.raises(TypeError):
        explain.attribute(3.0, params=[w])
    # a freed graph: the same error as a second backward
    b = (w.exp()).sum()
    b.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        explain.attribute({"b": b, "c": b * 2}, params=[w])


def test_non_leaf_params_and_default_leaves():
    def build(lib):
        lib.manual_seed(3)
        x = lib.randn(4, 3, requires_grad=True)
        h = lib.tanh(x @ lib.randn(3, 5))
        return x, h, [(h ** 2).sum(), h.sin().mean()]
    x, h, terms = build(glassgrad)
    att = explain.attribute(terms, params={"x": x, "h": h})
    tx, th, tterms = build(torch)
    for k, tl in enumerate(tterms):
        gx, gh = torch.autograd.grad(tl, [tx, th], retain_graph=True)
        _close_to_torch(att.grads[("x", f"term{k}")], gx)
        _close_to_torch(att.grads[("h", f"term{k}")], gh)
    assert explain.attribute(terms).params == ["leaf0"]       # no model, no params: the reached leaves


# -- every stacking rule against torch (and against the per-term loop) ------------------------------
# Each case returns tensors computed through the ops under test; every term reads all of them, so
# every node is reached by all three terms and must run stacked.
def _readouts(ys):
    return [sum(y.sum() for y in ys), sum((y * y).sum() * 0.5 for y in ys),
            sum(y.reshape(-1)[::2].sum() * 3 for y in ys)]


def _case_binary(T, x, w):
    h = x * w + w / (x.abs() + 1) - 0.5 * w[:1]
    return [h, (x - h).pow(w.abs()), 2.0 - h, (2.0 ** h) - h ** 2.5]


def _case_unary(T, x, w):
    h = x * w
    return [T.relu(h).sigmoid().tanh(), (h.abs() + 1).log().sqrt().exp(), -h.sin().cos(), h.reciprocal()]


def _case_views(T, x, w):
    h = (x * w).reshape(2, 3, 4)
    return [h.permute(2, 0, 1)[1:3], h.transpose(0, 2)[:, 1], h.unsqueeze(1).squeeze(1)[0, 2],
            h.narrow(2, 1, 2).expand(3, 2, 3, 2), h[:, 0].t(), h.view(6, 4).clone().to(T.float64)]


def _case_reduce(T, x, w):
    h = x * w
    return [h.sum(0), h.mean(1, keepdim=True), h.sum((0, 1)), h.mean(), h.sum()]


def _case_linear(T, x, w):
    W = w.reshape(4, 6)[:, :3]
    return [T.nn.functional.linear(x[:, :3], W, w.reshape(-1)[:4]), x[:, :4] @ w.reshape(4, 6)]


def _case_losses(T, x, w):
    F = T.nn.functional
    h = x * w
    tgt = T.zeros(6, 4) + 0.3
    cls = T.tensor([0, 3, 1, 1, 2, 0])
    return [F.mse_loss(h, tgt), F.smooth_l1_loss(h, tgt, reduction="sum"), F.huber_loss(h, tgt, reduction="none"),
            F.nll_loss(F.log_softmax(h, 1), cls), F.nll_loss(F.log_softmax(h, 0), cls, reduction="none"),
            F.cross_entropy(h, cls), F.softmax(h, 0), F.mse_loss(h, tgt, reduction="none")]


def _case_index(T, x, w):
    h = x * w
    idx = T.tensor([0, 2, 2, 5])
    return [h[h > 0], h[idx], h[idx, 1:3], h[:, T.tensor([1, 1, 3])]]


def _case_conv(T, x, w):
    F = T.nn.functional
    img = (x * w).reshape(2, 2, 3, 2)
    y = F.conv2d(img, w[:4].reshape(4, 1, 2, 2), bias=w[0], padding=1, groups=2)
    y2 = F.conv2d(img, w.reshape(24)[:16].reshape(2, 2, 2, 2), stride=(1, 2))
    y3 = F.conv1d(x.reshape(2, 3, 4), w.reshape(4, 3, 2)[:2], padding=1)
    yd = F.conv2d(img, w.reshape(24)[4:12].reshape(2, 1, 2, 2), padding=(0, 1), groups=2)     # depthwise
    return [y, y2, y3, yd]


CASES = {   # name: (builder, node classes that must have run stacked)
    "binary": (_case_binary, {"AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0", "PowBackward1",
                              "PowBackward0", "PowBackward2", "RsubBackward1", "AbsBackward0"}),
    "unary": (_case_unary, {"ReluBackward0", "SigmoidBackward0", "TanhBackward0", "LogBackward0", "SqrtBackward0",
                            "ExpBackward0", "NegBackward0", "SinBackward0", "CosBackward0", "ReciprocalBackward0"}),
    "views": (_case_views, {"ViewBackward0", "PermuteBackward0", "SliceBackward0", "TransposeBackward0",
                            "SelectBackward0", "UnsqueezeBackward0", "SqueezeBackward1",
                            "ExpandBackward0", "TBackward0", "CloneBackward0", "ToCopyBackward0"}),
    "reduce": (_case_reduce, {"SumBackward0", "SumBackward1", "MeanBackward0", "MeanBackward1"}),
    "linear": (_case_linear, {"AddmmBackward0", "MmBackward0", "TBackward0", "AliasBackward0"}),
    "losses": (_case_losses, {"MseLossBackward0", "SmoothL1LossBackward0", "HuberLossBackward0", "NllLossBackward0",
                              "LogSoftmaxBackward0", "SoftmaxBackward0"}),
    "index": (_case_index, {"IndexBackward0"}),
    "conv": (_case_conv, {"ConvolutionBackward0"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_stacked_rules_match_torch(case):
    build, must_stack = CASES[case]
    rng = np.random.default_rng(sorted(CASES).index(case))
    xd = rng.standard_normal((6, 4)).astype(np.float32)
    wd = rng.standard_normal((6, 4)).astype(np.float32)
    out = {}
    for lib in (glassgrad, torch):
        x = lib.tensor(xd, requires_grad=True)
        w = lib.tensor(wd, requires_grad=True)
        out[lib] = (x, w, _readouts(build(lib, x, w)))
    x, w, terms = out[glassgrad]
    att = explain.attribute(terms, params={"x": x, "w": w})
    loop = explain.attribute(terms, params={"x": x, "w": w}, _stack=False)
    assert att.stats["fallback"] == {}, att.stats
    assert must_stack <= set(att.stats["stacked_by"]), must_stack - set(att.stats["stacked_by"])
    assert att.stats["unlisted"] == {}, att.stats
    tx, tw, tterms = out[torch]
    for k, tl in enumerate(tterms):
        gx, gw = torch.autograd.grad(tl, [tx, tw], retain_graph=True, allow_unused=True)
        for name, g in (("x", gx), ("w", gw)):
            key = (name, f"term{k}")
            ref = np.zeros((6, 4), np.float32) if g is None else g.numpy()
            _close_to_torch(att.grads[key], ref, atol=1e-5)
            _close(att.grads[key], loop.grads[key], rtol=1e-5, atol=1e-6)


def test_unverified_node_falls_back_to_loop():
    x = glassgrad.randn(5, 3, requires_grad=True)
    s, _ = x.sort(0)                 # SortBackward0 is not on the whitelist
    att = explain.attribute([s[0].sum(), (s ** 2).sum()], params=[x])
    assert att.stats["unlisted"] == {"SortBackward0": 1}      # not whitelisted: looped without trying
    assert att.stats["fallback"] == {}
    tx = torch.tensor(x._data, requires_grad=True)
    ts, _ = tx.sort(0)
    for k, tl in enumerate([ts[0].sum(), (ts ** 2).sum()]):
        _close_to_torch(att.grads[("param0", f"term{k}")], torch.autograd.grad(tl, tx, retain_graph=True)[0])
