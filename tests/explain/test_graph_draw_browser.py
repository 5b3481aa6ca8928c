"""The `glassgrad explain` report on a machine without Graphviz, opened in headless Chromium.

`glassgrad explain examples/explain/two_losses.py` runs with a PATH that holds no `dot`, so the report's graph is
drawn by the built-in layered layout.  Chromium's DOM must hold an inline SVG with one node group per node
of the graph (counted in the text tree below it, independently), the model's cluster and edges in the two
loss terms' colours; a copy of the report with a small script measures, in Chromium's own rendering
(getBBox), that every node's text fits inside its box and that no two node boxes overlap; a screenshot
shows the node fills and the term colours.  Without Chromium these tests skip (as test_browser's do).
"""
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from test_browser import CHROMIUM, Dom, chromium, png_decode

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "explain" / "two_losses.py"
TERM_RGB = {"loss_cls": (0x1F, 0x77, 0xB4), "mul(loss_reg)": (0xFF, 0x7F, 0x0E)}
FILL_RGB = {"output": (0xC9, 0xF0, 0xC9), "module box": (0xFF, 0xF2, 0xC6)}
pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="Chromium not installed (scripts/ci_system_deps.sh installs it)")

MEASURE = """<script>
const out = {nodes: [], text_outside: [], overlaps: []};
const boxes = [];
for (const g of document.querySelectorAll("#graph svg g.node")) {
  const rects = [...g.querySelectorAll("rect")].map(r => r.getBoundingClientRect());
  const r = {l: Math.min(...rects.map(b => b.left)), t: Math.min(...rects.map(b => b.top)),
             r: Math.max(...rects.map(b => b.right)), b: Math.max(...rects.map(b => b.bottom))};
  const t = g.querySelector("text").getBoundingClientRect();
  out.nodes.push(g.id);
  if (t.left < r.l - 0.5 || t.right > r.r + 0.5 || t.top < r.t - 0.5 || t.bottom > r.b + 0.5)
    out.text_outside.push(g.id);
  for (const [id, o] of boxes)
    if (r.l < o.r - 0.5 && o.l < r.r - 0.5 && r.t < o.b - 0.5 && o.t < r.b - 0.5) out.overlaps.push([id, g.id]);
  boxes.push([g.id, r]);
}
const pre = document.createElement("pre"); pre.id = "measured"; pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("draw_browser")


@pytest.fixture(scope="module")
def report(work):
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable)          # no Graphviz `dot` on this PATH
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    out = work / "report.html"
    r = subprocess.run([sys.executable, "-m", "glassgrad", "explain", str(EXAMPLE), "--steps", "2",
                        "--out", str(out)], cwd=work, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


@pytest.fixture(scope="module")
def dom_text(report, work):
    r = chromium(["--dump-dom", report.as_uri()], work)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    return r.stdout.decode("utf-8")


def test_report_without_dot_has_the_drawing(dom_text):
    dom = Dom(dom_text)
    assert "svg" in dom.tags["graph"]
    assert "drawn by glassgrad's layered layout" in dom.body["graph"]
    nodes = [c for c in dom.gclasses["graph"] if "node" in c]
    clusters = [c for c in dom.gclasses["graph"] if "cluster" in c and "legend" not in c]
    edges = [c for c in dom.gclasses["graph"] if "edge" in c]
    # the text tree (in <details> below the drawing) prints each node once, others are '-> see' references
    tree = html.unescape(re.search(r'<details><summary>as text</summary><pre>(.*?)</pre>', dom_text, re.S).group(1))
    lines = [s for s in tree.splitlines() if s.strip() and "-> see" not in s and "(saved" not in s]
    assert len(nodes) == len(lines) >= 8
    assert len(clusters) == 1 and "TwoHead" in dom.body["graph"]
    assert len(edges) >= len(nodes) - 1
    for name in ("AddBackward0", "NllLossBackward0", "MseLossBackward0", "Linear (cls)", "Sequential (body)"):
        assert name in dom.body["graph"], name
    section = dom_text[dom_text.index('<section id="graph"'):dom_text.index('<section id="attribution"')]
    strokes = re.findall(r'<path [^>]*stroke="(#[0-9a-f]{6})"', section)
    assert strokes.count("#1f77b4") >= 3 and strokes.count("#ff7f0e") >= 3     # loss_cls / mul(loss_reg)


def test_text_fits_and_nodes_do_not_overlap_in_chromium(report, work):
    page = work / "measure.html"
    page.write_text(report.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    r = chromium(["--dump-dom", page.as_uri()], work)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    m = re.search(r'<pre id="measured">(.*?)</pre>', r.stdout.decode("utf-8"), re.S)
    assert m, "the measuring script did not run"
    got = json.loads(m.group(1).replace("&quot;", '"'))
    assert len(got["nodes"]) >= 8
    assert got["text_outside"] == [] and got["overlaps"] == []


def test_screenshot_shows_fills_and_term_colours(report, work):
    path = work / "shot.png"
    r = chromium([f"--screenshot={path}", "--window-size=1280,1600", report.as_uri()], work)
    assert r.returncode == 0 and path.is_file()
    px = png_decode(path.read_bytes())[..., :3].reshape(-1, 3).astype(int)
    for what, rgb in {**TERM_RGB, **FILL_RGB}.items():
        close = (np.abs(px - rgb).max(axis=1) <= 6).sum()
        assert close >= 40, (what, close)
