"""explain.graph: the drawing matches the graph (next_functions), torch's node names, shapes and
gradients; module clusters, collapsing, NaN marking, loss-term colours; watch() changes no .grad."""
import collections
import re
import importlib.util
import shutil
import time

import pytest
import torch

import glassgrad
from glassgrad import explain

from _explain_helpers import parse_dot, walk

LIBS = {"torch": torch, "glassgrad": glassgrad}


# -- models built the same way in both libraries ---------------------------------------------------------------
def mlp(T):
    nn = T.nn
    return nn.Sequential(nn.Linear(5, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 3), nn.Tanh()))


def make_residual(T, blocks, width=8):
    nn = T.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(width, width)
            self.act = nn.ReLU()

        def forward(self, x):
            return x + self.act(self.fc(x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Linear(4, width)
            self.blocks = nn.Sequential(*[Block() for _ in range(blocks)])
            self.head = nn.Linear(width, 3)

        def forward(self, x):
            return self.head(self.blocks(self.stem(x)))
    return Net()


def convnet(T):
    nn = T.nn
    return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(12, 5))


def small_resnet(T):
    nn = T.nn

    class Block(nn.Module):                       # conv-bn + skip, in-place ReLU
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(3)
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            return self.relu(self.bn(self.conv(x)) + x)
    return nn.Sequential(nn.Conv2d(2, 3, 1), Block(), Block(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(3, 2))


def resnet_loss(T, model):
    return model(T.randn(2, 2, 5, 5)).pow(2).sum()


def mlp_loss(T, model):
    x = T.randn(6, 5)
    return ((model(x) - 0.5) ** 2).mean()


def residual_loss(T, model):
    x = T.randn(6, 4)
    y = T.tensor([0, 1, 2, 0, 1, 2])
    return T.nn.functional.cross_entropy(model(x), y)


def conv_loss(T, model):
    x = T.randn(2, 2, 4, 4)
    return T.nn.functional.log_softmax(model(x), dim=1)[:, 0].sum() * -1.0


CASES = {
    "mlp": (mlp, mlp_loss),
    "residual": (lambda T: make_residual(T, 3), residual_loss),
    "conv": (convnet, conv_loss),
    "resnet": (small_resnet, resnet_loss),
}


def build(T, case, seed=0):
    make, lossf = CASES[case]
    T.manual_seed(seed)
    model = make(T)
    return model, lossf(T, model)


# -- helpers ---------------------------------------------------------------------------------------------------
def by_id(view):
    return {i.id: i for i in view.nodes}


# -- structure ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(CASES))
def test_dot_has_exactly_the_nodes_and_edges_of_next_functions(case):
    model, loss = build(glassgrad, case)
    view = explain.graph(loss, model)
    nodes, edges, _ = parse_dot(view.to_dot())
    ids = {i.node: i.id for i in view.nodes}
    order, wedges = walk(loss.grad_fn)
    assert set(nodes) == {ids[n] for n in order}
    assert len(nodes) == len(order)
    assert edges == collections.Counter({(ids[a], ids[b]): c for (a, b), c in wedges.items()})
    for n in order:
        assert nodes[ids[n]][0] == n.name()


def test_repeated_edges_and_missing_inputs():
    x = glassgrad.randn(3, requires_grad=True)
    c = glassgrad.randn(3)                      # no grad: a (None, 0) entry in next_functions
    y = (x * x * c).sum()
    view = explain.graph(y)
    _, edges, _ = parse_dot(view.to_dot())
    order, wedges = walk(y.grad_fn)
    ids = {i.node: i.id for i in view.nodes}
    assert edges == collections.Counter({(ids[a], ids[b]): k for (a, b), k in wedges.items()})
    assert 2 in edges.values()                  # x * x: two edges to the same AccumulateGrad
    assert len(view.edges) == sum(wedges.values())


@pytest.mark.parametrize("case", sorted(CASES))
def test_node_names_and_shapes_match_torch(case):
    tmodel, tloss = build(torch, case)
    gmodel, gloss = build(glassgrad, case)
    view = explain.graph(gloss, gmodel)
    torder, _ = walk(tloss.grad_fn)
    infos = view.nodes
    assert collections.Counter(n.name() for n in torder) == collections.Counter(i.name for i in infos)
    assert [n.name() for n in torder] == [i.name for i in infos]   # same walk order, node by node
    known = 0
    for tn, info in zip(torder, infos):
        tmeta = tn._input_metadata[0]
        if info.shape is not None:               # what is known before backward must be right
            known += 1
            assert list(info.shape) == list(tmeta.shape), info
            assert info.dtype == str(tmeta.dtype).replace("torch.", "")
    assert known >= len(infos) * 2 // 3
    tloss.backward()
    gloss.backward()
    infos = view.nodes
    for tn, info in zip(torder, infos):          # after a watched backward every node's shape is known
        assert list(info.shape) == list(tn._input_metadata[0].shape), info


@pytest.mark.parametrize("case", sorted(CASES))
def test_leaves_carry_parameter_names_and_shapes(case):
    model, loss = build(glassgrad, case)
    view = explain.graph(loss, model)
    params = dict(model.named_parameters())
    nodes, _, _ = parse_dot(view.to_dot())
    leaves = [i for i in view.nodes if i.is_leaf]
    assert sorted(i.param for i in leaves) == sorted(params)
    for i in leaves:
        assert i.node.variable is params[i.param]
        assert i.shape == tuple(params[i.param].shape)
        assert i.name == "torch::autograd::AccumulateGrad"
        assert i.param in nodes[i.id]
    # without a model the leaves have no names
    assert all(i.param is None for i in explain.graph(loss).nodes)


def test_several_roots_and_errors():
    x = glassgrad.randn(4, requires_grad=True)
    a, b = (x * 2).sum(), x.exp().mean()
    view = explain.graph({"first": a, "second": b})
    labels = {i.name: i.roots for i in view.nodes}
    assert labels["SumBackward0"] == ["first"] and labels["MeanBackward0"] == ["second"]
    assert len([i for i in view.nodes if i.is_leaf]) == 1       # the shared leaf appears once
    assert "output: first" in view.to_dot()
    with pytest.raises(ValueError, match="does not require grad"):
        explain.graph(glassgrad.ones(2).sum())
    with pytest.raises(TypeError):
        explain.graph(3.0)


def test_saved_tensors_on_request_match_torch():
    tmodel, tloss = build(torch, "mlp")
    gmodel, gloss = build(glassgrad, "mlp")
    view = explain.graph(gloss, gmodel, show_saved=True)
    torder, _ = walk(tloss.grad_fn)
    checked = 0
    for tn, info in zip(torder, view.nodes):
        for name, shape, dt in info.saved:
            t = getattr(tn, "_saved_" + name)
            if t is None:       # torch skips saving what no gradient needs (mat2 of the first layer)
                continue
            assert tuple(t.shape) == shape and str(t.dtype) == "torch." + dt
            checked += 1
    assert checked >= 5
    assert "saved mat1: (6, 4) float32" in view.to_dot()
    gloss.backward()                             # described before backward freed them
    assert "saved mat1: (6, 4) float32" in view.text()
    assert all(i.saved is None for i in explain.graph(gloss, grads=False).nodes)


# -- module clusters ----------------------------------------------------------------------------------------------
def traced(case="mlp", seed=0):
    glassgrad.manual_seed(seed)
    make, lossf = CASES[case]
    model = make(glassgrad)
    with explain.trace_modules(model) as trace:
        loss = lossf(glassgrad, model)
    return model, loss, trace


def test_module_clusters_nest_like_the_model():
    model, loss, trace = traced()
    view = explain.graph(loss, model, modules=trace)
    nodes, _, clusters = parse_dot(view.to_dot())
    names = {k: v[0] for k, v in nodes.items()}
    assert clusters["Sequential"][0] is None
    assert clusters["Linear (0)"][0] == "Sequential"
    assert clusters["Sequential (2)"][0] == "Sequential"
    assert clusters["Linear (2.0)"][0] == "Sequential (2)"
    assert clusters["Tanh (2.1)"][0] == "Sequential (2)"
    assert sorted(names[i] for i in clusters["Tanh (2.1)"][1]) == ["TanhBackward0"]
    inner = clusters["Linear (2.0)"][1]
    assert sorted(names[i] for i in inner) == ["AddmmBackward0", "TBackward0"] + \
        ["torch::autograd::AccumulateGrad"] * 2
    assert {nodes[i][1] for i in inner if names[i].endswith("AccumulateGrad")} == {"2.0.weight", "2.0.bias"}
    # the loss's own nodes are outside the model
    top = set(nodes) - set(clusters["Sequential"][1])
    assert sorted(names[i] for i in top) == ["MeanBackward0", "PowBackward0", "SubBackward0"]
    assert all(i.module is not None for i in view.nodes if i.id not in top)
    # the trace removed its hooks
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())


def test_shared_module_called_twice_gets_two_clusters():
    nn = glassgrad.nn
    glassgrad.manual_seed(0)
    lin = nn.Linear(3, 3)
    model = nn.Sequential(lin, nn.ReLU(), lin)
    with explain.trace_modules(model) as trace:
        loss = model(glassgrad.randn(2, 3)).sum()
    _, _, clusters = parse_dot(explain.graph(loss, model, modules=trace).to_dot())
    assert "Linear (0)" in clusters and "Linear (0) #2" in clusters
    assert len(clusters["Linear (0) #2"][1]) >= 2


def test_collapse_replaces_modules_by_boxes():
    model, loss, trace = traced()
    full = explain.graph(loss, model, modules=trace)
    view = full.collapse(1)
    nodes, edges, clusters = parse_dot(view.to_dot())
    boxes = {k: v for k, v in nodes.items() if k.startswith("m")}
    assert sorted(v[0] for v in boxes.values()) == ["Linear (0)", "ReLU (1)", "Sequential (2)"]
    assert "[5 nodes]" in boxes[[k for k, v in boxes.items() if v[0] == "Sequential (2)"][0]]
    assert set(clusters) == {"Sequential"}
    assert sorted(v[0] for k, v in nodes.items() if k.startswith("n")) == \
        ["MeanBackward0", "PowBackward0", "SubBackward0"]
    labels = {k: v[0] for k, v in nodes.items()}
    assert collections.Counter((labels[a], labels[b]) for a, b in edges) == collections.Counter({
        ("MeanBackward0", "PowBackward0"): 1, ("PowBackward0", "SubBackward0"): 1,
        ("SubBackward0", "Sequential (2)"): 1, ("Sequential (2)", "ReLU (1)"): 1, ("ReLU (1)", "Linear (0)"): 1})
    # max_depth= is the same thing; collapse(None) gives the full drawing back; the full view is unchanged
    assert explain.graph(loss, model, modules=trace, max_depth=1).to_dot() == view.to_dot()
    assert view.collapse(None).to_dot() == full.to_dot()
    assert len(full.nodes) == len(view.nodes) == 13
    whole, _, _ = parse_dot(full.collapse(0).to_dot())
    assert sorted(v[0] for v in whole.values()) == ["MeanBackward0", "PowBackward0", "Sequential", "SubBackward0"]
    assert "[Sequential (2): 5 nodes, collapsed]" in view.text()
    with pytest.raises(ValueError):
        full.collapse(-1)


# -- gradients --------------------------------------------------------------------------------------------------
def _intermediates(T, model, x):
    h1 = model[0](x)
    a = model[1](h1)
    h2 = model[2][0](a)
    out = model[2][1](h2)
    for t in (h1, a, h2, out):
        t.retain_grad()
    return (out ** 2).sum(), {"h1": h1, "a": a, "h2": h2, "out": out}


def test_edge_gradient_norms_equal_torch():
    res = {}
    for name, T in LIBS.items():
        T.manual_seed(1)
        model = mlp(T)
        loss, inter = _intermediates(T, model, T.randn(4, 5))
        view = explain.graph(loss, model) if T is glassgrad else None
        loss.backward()
        res[name] = (model, inter, view)
    tmodel, tint, _ = res["torch"]
    _, gint, view = res["glassgrad"]
    infos = by_id(view)
    edge_into = {}
    for e in view.edges:
        edge_into.setdefault(e.dst, []).append(e)

    def norm_into(tensor):
        node = tensor.grad_fn
        (e,) = edge_into[next(i for i, info in infos.items() if info.node is node)]
        return e.grad_norm
    for k in ("h1", "a", "h2", "out"):
        assert norm_into(gint[k]) == pytest.approx(float(tint[k].grad.norm()), rel=1e-5), k
    tparams = dict(tmodel.named_parameters())
    for e in view.edges:
        info = infos[e.dst]
        if info.param:
            assert e.grad_norm == pytest.approx(float(tparams[info.param].grad.norm()), rel=1e-5)
            assert info.grad_norm == pytest.approx(e.grad_norm, rel=1e-6)
    dot = view.to_dot()
    assert re.search(r'-> n\d+ \[label="%s"' % re.escape(f"{float(tint['h1'].grad.norm()):.3g}"), dot)
    assert "|grad| " in view.text()


def test_no_gradients_without_grads_or_before_backward():
    model, loss = build(glassgrad, "mlp")
    off = explain.graph(loss, model, grads=False)
    on = explain.graph(loss, model)
    assert all(e.grad_norm is None for e in on.edges)             # nothing flowed yet
    loss.backward()
    assert all(e.grad_norm is None for e in off.edges)
    assert all(e.grad_norm is not None for e in on.edges)
    assert off._handles == [] and on._handles
    on.unwatch()
    assert on._handles == [] and all(e.grad_norm is not None for e in on.edges)   # the record stays


@pytest.mark.parametrize("create_graph", [False, True])
def test_watch_leaves_every_grad_bit_identical(create_graph):
    def run(watch):
        glassgrad.manual_seed(3)
        model = make_residual(glassgrad, 6)
        x = glassgrad.randn(5, 4)
        if watch:
            with explain.trace_modules(model) as trace:
                out = model(x)
        else:
            out = model(x)
        loss = glassgrad.nn.functional.cross_entropy(out, glassgrad.tensor([0, 1, 2, 1, 0])) + (out ** 2).mean()
        if watch:
            view = explain.graph({"loss": loss, "out": out}, model, modules=trace, show_saved=True,
                                 grads=False).watch()
            view.to_dot()
        loss.backward(create_graph=create_graph)
        if watch:
            view.text()
            assert all(e.grad_norm is not None for e in view.edges)
        return {k: p.grad.detach().numpy().copy() for k, p in model.named_parameters()}
    plain, watched = run(False), run(True)
    assert plain.keys() == watched.keys()
    for k in plain:
        assert plain[k].tobytes() == watched[k].tobytes(), k


def test_nonfinite_gradients_are_marked():
    x = glassgrad.tensor([0.0, 1.0, 4.0], requires_grad=True)
    w = glassgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x.sqrt() * 3.0 + w * 2.0).sum()         # d sqrt(x)/dx at 0 is inf
    view = explain.graph(y)
    y.backward()
    marks = {i.name: (i.nonfinite, i.nan_origin) for i in view.nodes if not i.is_leaf}
    assert marks["SqrtBackward0"] == (True, True)                 # created there
    assert marks["MulBackward0"] == (False, False) and marks["SumBackward0"] == (False, False)
    leaves = {bool(i.node.variable is x): i for i in view.nodes if i.is_leaf}
    assert leaves[True].nonfinite and not leaves[True].nan_origin   # arrived from upstream
    assert not leaves[False].nonfinite
    bad = [e for e in view.edges if e.nonfinite]
    assert len(bad) == 1 and by_id(view)[bad[0].src].name == "SqrtBackward0"
    nodes, _, _ = parse_dot(view.to_dot())
    sqrt_id = next(i.id for i in view.nodes if i.name == "SqrtBackward0")
    assert "NaN/Inf created here" in nodes[sqrt_id]
    assert re.search(sqrt_id + r' \[label="[^\n]*fillcolor="#ff9c9c", color="#d00000"', view.to_dot())
    assert "!! NaN/Inf created here" in view.text()
    assert sum("NaN/Inf" in line for line in view.text().splitlines()) == 2


def test_edges_coloured_by_loss_term():
    glassgrad.manual_seed(0)
    nn = glassgrad.nn
    trunk, head_a, head_b = nn.Linear(4, 4), nn.Linear(4, 1), nn.Linear(4, 1)
    h = trunk(glassgrad.randn(3, 4)).relu()
    la, lb = head_a(h).sum(), head_b(h).mean()
    total = la + lb
    infos = by_id(explain.graph(total))
    owner = {}                                    # Addmm / T nodes -> the Linear whose parameter they use

    def mark(node, lin):                          # an AddmmBackward0 and its TBackward0
        owner[node] = lin
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt.name() == "TBackward0":
                assert nxt.next_functions[0][0].variable is lin.weight
                mark(nxt, lin)
    for lin, t in ((head_a, la), (head_b, lb)):
        mark(t.grad_fn.next_functions[0][0], lin)
    mark(h.grad_fn.next_functions[0][0], trunk)

    def key(e):
        s, d = infos[e.src].node, infos[e.dst].node
        return (s.name(), {head_a: "a", head_b: "b", trunk: "trunk"}.get(owner.get(s), ""), d.name())
    expect = {("AddBackward0", "", "SumBackward0"): ["a"], ("AddBackward0", "", "MeanBackward0"): ["b"],
              ("AddmmBackward0", "a", "ReluBackward0"): ["a"], ("AddmmBackward0", "b", "ReluBackward0"): ["b"],
              ("ReluBackward0", "", "AddmmBackward0"): ["a", "b"],
              ("TBackward0", "a", "torch::autograd::AccumulateGrad"): ["a"],
              ("TBackward0", "trunk", "torch::autograd::AccumulateGrad"): ["a", "b"]}
    for colors in ({"a": la, "b": lb},
                   {"a": explain._graph._reachable([la.grad_fn]), "b": explain._graph._reachable([lb.grad_fn])}):
        view = explain.graph(total, colors=colors, grads=False)
        got = {key(e): e.terms for e in view.edges}
        for k, v in expect.items():
            assert got[k] == v, k
        assert 'color="#1f77b4:#ff7f0e"' in view.to_dot() and "loss terms" in view.to_dot()


# -- text, size, rendering ------------------------------------------------------------------------------------------
def test_text_tree_shape():
    model, loss, trace = traced("residual")
    view = explain.graph(loss, model, modules=trace)
    text = view.text()
    lines = text.splitlines()
    assert lines[0].startswith("NllLossBackward0")                # the root, not indented
    assert lines[1].startswith("└─ LogSoftmaxBackward0")
    for name in {i.name for i in view.nodes}:
        assert name in text
    for pname, _ in model.named_parameters():
        assert pname in text
    # the residual skip: a node reached twice is printed once and referenced
    refs = re.findall(r"-> see \[#(\d+)\] (\S+)", text)
    assert refs
    for k, name in refs:
        assert sum(line.lstrip("│├└─ ").startswith(f"[#{k}] {name}") for line in lines) == 1
    assert sum(1 for line in lines if "-> see" not in line) == len(view.nodes)
    assert "@Linear (blocks.1.fc)" in text
    indent = [len(re.match(r"[│├└─ ]*", line).group(0)) for line in lines]
    assert max(indent) > 20 and indent[0] == 0
    assert all(ord(c) < 128 for c in view.text(ascii=True))


def test_fifty_block_residual_is_fast(tmp_path):
    t0 = time.perf_counter()
    glassgrad.manual_seed(0)
    model = make_residual(glassgrad, 50)
    with explain.trace_modules(model) as trace:
        loss = residual_loss(glassgrad, model)
    view = explain.graph(loss, model, modules=trace, show_saved=True)
    loss.backward()
    dot, text = view.to_dot(), view.text()
    small = view.collapse(1).to_dot()
    if shutil.which("dot") is not None and importlib.util.find_spec("graphviz") is not None:
        view.render(tmp_path / "fifty.svg")            # the drawing itself, when Graphviz is here
        assert (tmp_path / "fifty.svg").stat().st_size > 10_000
    elapsed = time.perf_counter() - t0
    assert elapsed < 10, elapsed
    nodes, edges, clusters = parse_dot(dot)
    order, wedges = walk(loss.grad_fn)
    assert len(nodes) == len(order) and sum(edges.values()) == sum(wedges.values())
    assert len(clusters) == 1 + 3 + 50 * 3                  # Net, stem/blocks/head, 50 x (Block, fc, act)
    assert len(text.splitlines()) >= len(order)
    assert len(parse_dot(small)[0]) < 10


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's 'dot' program is not installed")
def test_render_svg(tmp_path):
    pytest.importorskip("graphviz", reason="the graphviz Python package is not installed")
    model, loss, trace = traced()
    view = explain.graph(loss, model, modules=trace)
    loss.backward()
    p = view.render(tmp_path / "g.svg")
    svg = open(p).read()
    assert "<svg" in svg and "AddmmBackward0" in svg and "2.0.weight" in svg
    assert "<svg" in view._repr_svg_()
    view.render(tmp_path / "g.png")
    assert open(tmp_path / "g.png", "rb").read(4) == b"\x89PNG"


def test_render_dot_and_bad_suffix(tmp_path):
    model, loss = build(glassgrad, "mlp")
    view = explain.graph(loss, model)
    view.render(tmp_path / "g.dot")
    assert open(tmp_path / "g.dot").read() == view.to_dot()
    with pytest.raises(ValueError, match="unknown format"):
        view.render(tmp_path / "g.xyz")
    assert repr(view).startswith("<GraphView: ") and str(view) == view.text()


def test_missing_graphviz_gives_clear_errors(tmp_path, monkeypatch):
    from glassgrad.explain import _graph_render
    model, loss = build(glassgrad, "mlp")
    view = explain.graph(loss, model)
    monkeypatch.setitem(__import__("sys").modules, "graphviz", None)
    with pytest.raises(ImportError, match=r"glassgrad\[explain\]"):
        view.render(tmp_path / "g.png")
    view.render(tmp_path / "g.svg")                        # .svg: the built-in drawing
    assert "<svg" in open(tmp_path / "g.svg").read() and "<svg" in view._repr_svg_()
    monkeypatch.undo()
    pytest.importorskip("graphviz", reason="the graphviz Python package is not installed")
    monkeypatch.setattr(_graph_render.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="'dot' program"):
        view.render(tmp_path / "g.pdf")
    with pytest.raises(RuntimeError, match="'dot' program"):
        view.render(tmp_path / "g2.svg", engine="dot")
    assert 'class="glassgrad-graph"' in view._repr_svg_()
    assert "AddmmBackward0" in view.to_dot() and "AddmmBackward0" in view.text()   # no Graphviz needed


def _run_seed000(lib):
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "seeds", "seed000_textsnake.py")
    src = open(path).read().split("loss.backward()")[0].replace("print(", "(lambda *a, **k: None)(")
    if lib == "glassgrad":
        src = (src.replace("import torch.nn.functional as F", "import glassgrad.nn.functional as F")
               .replace("import torch.nn as nn", "import glassgrad.nn as nn")
               .replace("import torch\n", "import glassgrad as torch\n"))
    env = {"__name__": "seed000"}
    exec(compile(src, path, "exec"), env)
    return env


def test_seed000_textsnake_graph():
    t, g = _run_seed000("torch"), _run_seed000("glassgrad")
    terms = ("loss_tr", "loss_tcl", "loss_radii", "loss_sin", "loss_cos")
    view = explain.graph(g["loss"], g["head"], colors={k: g[k] for k in terms})
    torder, _ = walk(t["loss"].grad_fn)
    assert collections.Counter(n.name() for n in torder) == collections.Counter(i.name for i in view.nodes)
    g["loss"].backward()
    t["loss"].backward()
    infos = by_id(view)
    tparams = dict(t["head"].named_parameters())
    for e in view.edges:
        dst = infos[e.dst]
        if dst.param:                                         # every parameter is reached by all five terms
            assert e.terms == list(terms)
            assert e.grad_norm == pytest.approx(float(tparams[dst.param].grad.norm()), rel=1e-4)
        if infos[e.src].name == "SmoothL1LossBackward0":      # below a geometry loss: that term alone
            assert len(e.terms) == 1 and e.terms[0] in ("loss_radii", "loss_sin", "loss_cos")
    assert sum(len(e.terms) == 1 for e in view.edges) > 20


def test_module_clusters_with_inplace_relu_and_batchnorm():
    model, loss, trace = traced("resnet")
    nodes, _, clusters = parse_dot(explain.graph(loss, model, modules=trace).to_dot())
    for k in (1, 2):
        assert [nodes[i][0] for i in clusters[f"ReLU ({k}.relu)"][1]] == ["ReluBackward0"]
        assert clusters[f"ReLU ({k}.relu)"][0] == f"Block ({k})"
        bn = sorted(tuple(nodes[i][:2]) for i in clusters[f"BatchNorm2d ({k}.bn)"][1])
        assert bn == [("NativeBatchNormBackward0", "(2, 3, 5, 5) float32"),
                      ("torch::autograd::AccumulateGrad", f"{k}.bn.bias"),
                      ("torch::autograd::AccumulateGrad", f"{k}.bn.weight")]
        assert [nodes[i][0] for i in clusters[f"Block ({k})"][1] if i not in
                set().union(*(v[1] for c, v in clusters.items() if v[0] == f"Block ({k})"))] == ["AddBackward0"]
