"""explain.graph drawn without Graphviz: the built-in layered layout (_graph_layout) as SVG (_graph_svg).

Graphviz is hidden in every test (``shutil.which`` sees no ``dot``).  The SVG is read with ElementTree and
compared with the DOT text of the same view (read by the strict ``parse_dot``): the same nodes with the same
label lines, the same clusters, the same edges with the same colours and labels.  Its geometry is checked
too: no two nodes overlap, each node lies inside the rectangles of its clusters and outside all others,
sibling clusters are disjoint, every edge runs from its source's bottom edge to its destination's top.
"""
import collections
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import glassgrad
from glassgrad import explain
from glassgrad.explain import _graph_render
from glassgrad.explain._graph_layout import layered

from _explain_helpers import parse_dot
from test_graph import traced, make_residual, residual_loss, _run_seed000

ROOT = Path(__file__).resolve().parents[2]
NS = "{http://www.w3.org/2000/svg}"
labels = []      # (text, x, baseline y) of the edge labels of the last SVG read
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")


@pytest.fixture(autouse=True)
def no_dot(monkeypatch):
    monkeypatch.setattr(_graph_render.shutil, "which", lambda name: None)


# -- reading the SVG ----------------------------------------------------------------------------------------------
def _box(g):
    rs = [[float(r.get(k)) for k in ("x", "y", "width", "height")] for r in g.findall(NS + "rect")]
    x0, y0 = min(r[0] for r in rs), min(r[1] for r in rs)
    return x0, y0, max(r[0] + r[2] for r in rs) - x0, max(r[1] + r[3] for r in rs) - y0


def read_svg(text):
    """({node id: (title, box, label lines)}, {cluster label: box}, [(src, dst, strokes, label, start, tip)])."""
    root = ET.fromstring(text)
    nodes, clusters, edges = {}, {}, []
    labels.clear()
    for g in root.iter(NS + "g"):
        cls = (g.get("class") or "").split()
        title = g.find(NS + "title").text
        if "node" in cls:
            nodes[g.get("id")] = (title, _box(g), [t.text for t in g.iter(NS + "tspan")])
        elif "cluster" in cls and "legend" not in cls:
            assert title not in clusters
            clusters[title] = _box(g)
        elif "edge" in cls:
            src, dst = title.split()[0].split("->")
            paths = g.findall(NS + "path")
            start = tuple(float(v) for v in re.match(r"M([-\d.]+),([-\d.]+)", paths[0].get("d")).groups())
            pts = g.find(NS + "polygon").get("points").split()
            tip = tuple(float(v) for v in pts[-1].split(","))
            label = g.find(NS + "text")
            edges.append((src, dst, [p.get("stroke") for p in paths], label.text if label is not None else None,
                          start, tip))
            if label is not None:
                labels.append((label.text, float(label.get("x")), float(label.get("y"))))
    return nodes, clusters, edges


def dot_edges(dot):
    """[(src, dst, colours, label)] of the DOT text."""
    out = []
    for line in dot.splitlines():
        m = re.match(r"\s*(\w+) -> (\w+)(?: \[(.*)\])?;$", line)
        if m:
            attrs = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
            out.append((m.group(1), m.group(2), attrs.get("color", "#555555").split(":"), attrs.get("label")))
    return out


def _overlap(a, b, tol=0.5):
    return a[0] + a[2] > b[0] + tol and b[0] + b[2] > a[0] + tol and a[1] + a[3] > b[1] + tol and b[1] + b[3] > a[1] + tol


def _inside(a, b, tol=0.5):
    return a[0] >= b[0] - tol and a[1] >= b[1] - tol and a[0] + a[2] <= b[0] + b[2] + tol and a[1] + a[3] <= b[1] + b[3] + tol


def check_drawing(view):
    """The SVG carries what the DOT carries, and its geometry is clean; returns what read_svg read."""
    svg = view.to_svg()
    assert 'class="glassgrad-graph"' in svg             # the built-in drawing, not Graphviz's
    nodes, clusters, edges = read_svg(svg)
    dnodes, dedges, dclusters = parse_dot(view.to_dot())
    dnodes = {k: v for k, v in dnodes.items() if not k.startswith("legend")}      # the legend is drawn apart
    dclusters.pop("loss terms", None)
    assert set(nodes) == set(dnodes)
    for nid, (title, _, lines) in nodes.items():
        assert lines == dnodes[nid], nid
        assert title == dnodes[nid][0]
    assert set(clusters) == set(dclusters)
    assert collections.Counter((s, d) for s, d, *_ in edges) == dedges
    assert sorted((s, d, c, lab) for s, d, c, lab, *_ in edges) == sorted(
        (s, d, c, None if lab is None else lab) for s, d, c, lab in dot_edges(view.to_dot()))
    # geometry
    ids = sorted(nodes, key=lambda k: nodes[k][1][0])
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            if nodes[b][1][0] >= nodes[a][1][0] + nodes[a][1][2]:
                break
            assert not _overlap(nodes[a][1], nodes[b][1]), (a, b)
    for label, (parent, members) in dclusters.items():
        box = clusters[label]
        for nid in nodes:
            if nid in members:
                assert _inside(nodes[nid][1], box), (nid, label)
            else:
                assert not _overlap(nodes[nid][1], box), (nid, label)
        if parent is not None:
            assert _inside(box, clusters[parent]), (label, parent)
        for other, (p2, _) in dclusters.items():
            if other != label and p2 == parent:
                assert not _overlap(box, clusters[other]), (label, other)
    for s, d, _, _, start, tip in edges:
        sb, db = nodes[s][1], nodes[d][1]
        assert start[1] == pytest.approx(sb[1] + sb[3], abs=0.2) and sb[0] <= start[0] <= sb[0] + sb[2]
        assert tip[1] == pytest.approx(db[1], abs=0.2) and db[0] <= tip[0] <= db[0] + db[2]
    return nodes, clusters, edges


# -- tests -----------------------------------------------------------------------------------------------------
def test_clusters_colours_and_gradient_norms_without_graphviz(tmp_path):
    model, loss, trace = traced()
    view = explain.graph(loss, model, modules=trace, colors={"loss": loss})
    loss.backward()
    nodes, clusters, edges = check_drawing(view)
    assert {"Sequential", "Linear (0)", "Sequential (2)", "Linear (2.0)"} <= set(clusters)
    assert all(e[2] == [PALETTE[0]] for e in edges)                   # one term reaches every edge
    assert sum(e[3] is not None for e in edges) == len(edges)         # each edge carries |grad| after backward
    leaves = [n for n in nodes.values() if n[0] == "torch::autograd::AccumulateGrad"]
    assert len(leaves) == len(list(model.parameters())) and all(any("|grad|" in s for s in n[2]) for n in leaves)
    p = view.render(tmp_path / "g.svg")                                 # render writes the same drawing
    assert open(p).read() == view.to_svg() == view._repr_svg_()
    assert "loss terms" in view.to_svg()
    # the edge labels (9 px text; width estimated generously) keep off the nodes and off each other
    read_svg(view.to_svg())
    boxes = [(x, y - 9, 6 * len(t), 11) for t, x, y in labels]
    assert len(boxes) == len(edges)
    for i, b in enumerate(boxes):
        assert not any(_overlap(b, n[1]) for n in nodes.values()), labels[i]
        assert not any(_overlap(b, c) for c in boxes[i + 1:]), labels[i]


def test_two_terms_draw_two_strokes():
    glassgrad.manual_seed(0)
    nn = glassgrad.nn
    trunk, head_a, head_b = nn.Linear(4, 4), nn.Linear(4, 1), nn.Linear(4, 1)
    h = trunk(glassgrad.randn(3, 4)).relu()
    la, lb = head_a(h).sum(), head_b(h).mean()
    view = explain.graph(la + lb, colors={"a": la, "b": lb})
    _, _, edges = check_drawing(view)
    strokes = collections.Counter(tuple(e[2]) for e in edges)
    assert strokes[(PALETTE[0],)] and strokes[(PALETTE[1],)] and strokes[(PALETTE[0], PALETTE[1])]


def test_nan_marks_and_collapsed_boxes():
    x = glassgrad.tensor([0.0, 1.0, 4.0], requires_grad=True)
    y = (x.sqrt() * 3.0).sum()
    view = explain.graph(y)
    y.backward()
    svg = view.to_svg()
    nodes, _, edges = check_drawing(view)
    sqrt = next(k for k, n in nodes.items() if n[0] == "SqrtBackward0")
    assert "NaN/Inf created here" in nodes[sqrt][2]
    g = next(g for g in ET.fromstring(svg).iter(NS + "g") if g.get("id") == sqrt)
    assert g.find(NS + "rect").get("fill") == "#ff9c9c" and g.find(NS + "rect").get("stroke") == "#d00000"
    assert [e[2] for e in edges if e[0] == sqrt] == [["#d00000"]]
    model, loss, trace = traced()
    nodes, clusters, _ = check_drawing(explain.graph(loss, model, modules=trace, max_depth=1))
    assert set(clusters) == {"Sequential"}
    assert sorted(n[0] for k, n in nodes.items() if k.startswith("m")) == ["Linear (0)", "ReLU (1)", "Sequential (2)"]


def test_engine_choice_and_errors(tmp_path):
    model, loss, _ = traced()
    view = explain.graph(loss, model)
    with pytest.raises(ValueError, match="engine must be"):
        view.render(tmp_path / "g.svg", engine="neato")
    with pytest.raises(ValueError, match="draws .svg only"):
        view.render(tmp_path / "g.png", engine="python")
    with pytest.raises(RuntimeError, match="'dot' program"):
        view.to_svg(engine="dot")
    assert view.to_svg(engine="python") == view.to_svg()


def test_fifty_block_residual_layout_is_fast_and_clean():
    glassgrad.manual_seed(0)
    model = make_residual(glassgrad, 50)
    with explain.trace_modules(model) as trace:
        loss = residual_loss(glassgrad, model)
    view = explain.graph(loss, model, modules=trace, show_saved=True)
    loss.backward()
    t0 = time.perf_counter()
    svg = view.to_svg()
    elapsed = time.perf_counter() - t0
    assert elapsed < 5, elapsed
    assert svg.count('class="node"') == len(view.nodes) > 300
    check_drawing(view)


def test_seed000_graph_without_graphviz():
    g = _run_seed000("glassgrad")
    terms = ("loss_tr", "loss_tcl", "loss_radii", "loss_sin", "loss_cos")
    view = explain.graph(g["loss"], g["head"], colors={k: g[k] for k in terms})
    g["loss"].backward()
    _, _, edges = check_drawing(view)
    assert {c for e in edges for c in e[2]} >= set(PALETTE)


def test_layout_breaks_cycles_and_keeps_clusters_apart():
    # a cycle (not possible in a backward graph, but the layout must not loop) and two clusters side by side
    size = {k: (40, 20) for k in "abcdef"}
    res = layered(list("abcdef"), size, [("a", "b"), ("b", "c"), ("c", "a"), ("a", "d"), ("d", "e"), ("a", "f")],
                  {"d": "L", "e": "L", "f": "R"}, {"L": None, "R": None}, {"L": 30, "R": 200})
    assert len(res.routes) == 6 and res.ranks >= 3
    rects = list(res.nodes.values())
    assert not any(_overlap(p, q) for i, p in enumerate(rects) for q in rects[i + 1:])
    assert not _overlap(res.clusters["L"], res.clusters["R"])
    assert res.clusters["R"][2] >= 200                                  # wide enough for its label
    assert _inside(res.nodes["d"], res.clusters["L"]) and _inside(res.nodes["f"], res.clusters["R"])


def test_demo_report_draws_the_graph_without_dot(tmp_path):
    """`make demo` on a fresh machine (no Graphviz): the report still has the drawing, not the text tree only."""
    pytest.importorskip("sklearn", reason="the demo needs scikit-learn (the demo extra)")
    pytest.importorskip("tqdm", reason="the demo needs tqdm (the demo extra)")
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable)                      # no `dot` here
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    p = subprocess.run([sys.executable, "-m", "glassgrad", "demo", "--epochs", "1", "--out", str(tmp_path / "demo")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    text = (tmp_path / "demo" / "report.html").read_text()
    graph = text[text.index('<section id="graph"'):text.index('<section id="attribution"')]
    svg = graph[graph.index("<svg"):graph.index("</svg>") + 6]
    assert 'class="glassgrad-graph"' in svg and "drawn by glassgrad&#x27;s layered layout" in graph
    nodes, clusters, edges = read_svg(svg)
    assert {"DigitNet"} <= set(clusters) and len(nodes) >= 10 and len(edges) >= len(nodes) - 1
    assert {"Conv2d (conv1)", "Linear (digit)", "Linear (even)"} <= {n[0] for n in nodes.values()}
    assert {"#1f77b4", "#ff7f0e"} <= {c for e in edges for c in e[2]}     # loss_digit, loss_even
