"""The `glassgrad explain` report, opened in a real headless browser (Chromium).

`glassgrad explain examples/explain/two_losses.py --steps 2` writes the report once per module; Chromium then
(1) dumps the DOM it built from the file (`--dump-dom`), which html.parser checks for every section, the
graph (SVG with Graphviz node groups, or the text tree), the inline PNG plots and the attribution table, and
(2) takes a 1280x2400 screenshot, which is decoded (zlib + PNG filters, here in NumPy) and checked to be a
rendered page: the header band in the report's colour, enough distinct colours, ink on the page.
`scripts/ci_system_deps.sh` installs Chromium and Graphviz on a Debian CI image; without Chromium these
tests skip.
"""
import base64
import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import zlib
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "explain" / "two_losses.py"
SECTIONS = ["summary", "graph", "attribution", "flow", "nan", "why-no-grad"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
WIDTH, HEIGHT = 1280, 2400
HEADER_RGB = (0x18, 0x32, 0x4A)     # the report's header background (#18324a in its inline CSS)


def _find_chromium():
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


CHROMIUM = _find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="Chromium not installed (scripts/ci_system_deps.sh installs it)")

# Headless and offline: without the background-networking flags Chromium tries to reach the network.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio"]


def chromium(args, tmp, timeout=120):
    """Run headless Chromium with a fresh profile directory under tmp; returns the CompletedProcess."""
    profile = Path(tmp) / f"profile-{len(list(Path(tmp).glob('profile-*')))}"
    profile.mkdir()
    cmd = [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)


# ---------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("browser")


@pytest.fixture(scope="module")
def report(work):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    out = work / "report.html"
    r = subprocess.run([sys.executable, "-m", "glassgrad", "explain", str(EXAMPLE), "--steps", "2",
                        "--out", str(out)], cwd=work, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.is_file()
    return out


@pytest.fixture(scope="module")
def dom(report, work):
    r = chromium(["--dump-dom", report.as_uri()], work)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    text = r.stdout.decode("utf-8")
    assert "<html" in text[:200] and text.rstrip().endswith("</html>"), text[:300]
    return Dom(text)


@pytest.fixture(scope="module")
def shot_pixels(shot):
    return png_decode(shot.read_bytes())


@pytest.fixture(scope="module")
def shot(report, work):
    path = work / "shot.png"
    r = chromium([f"--screenshot={path}", f"--window-size={WIDTH},{HEIGHT}", report.as_uri()], work)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    assert path.is_file(), "Chromium wrote no screenshot"
    return path


# ------------------------------------------------------------------------------------------- DOM parsing
class Dom(HTMLParser):
    """What the tests need from the DOM Chromium built: per <section id>, its heading, its other text, the
    tags in it, its <img> sources, the class lists of its <g> elements (SVG), and its table rows."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.order, self.heading, self.body = [], {}, {}
        self.tags, self.imgs, self.gclasses, self.rows, self.nav = {}, {}, {}, {}, []
        self.cur = None
        self._in_h2 = False
        self._row = None
        self._cell = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and (a.get("href") or "").startswith("#"):
            self.nav.append(a["href"][1:])
        if tag == "section":
            self.cur = a.get("id")
            self.order.append(self.cur)
            for d in (self.heading, self.body):
                d[self.cur] = ""
            for d in (self.tags, self.imgs, self.gclasses, self.rows):
                d[self.cur] = [] if d is not self.tags else set()
            return
        if self.cur is None:
            return
        self.tags[self.cur].add(tag)
        if tag == "h2":
            self._in_h2 = True
        elif tag == "img":
            self.imgs[self.cur].append(a.get("src") or "")
        elif tag == "g":
            self.gclasses[self.cur].append((a.get("class") or "").split())
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "section":
            self.cur = None
        elif tag == "h2":
            self._in_h2 = False
        elif tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self.cur is not None:
                self.rows[self.cur].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self.cur is None:
            return
        if self._in_h2:
            self.heading[self.cur] += data
        else:
            self.body[self.cur] += data
        if self._cell is not None:
            self._cell.append(data)


# ------------------------------------------------------------------------------------------- PNG decoding
def png_decode(data):
    """Decode an 8-bit, non-interlaced greyscale / RGB / RGBA PNG to a (H, W, C) uint8 array: zlib plus the
    five PNG row filters (None, Sub, Up, Average, Paeth)."""
    assert data[:8] == PNG_MAGIC, "not a PNG"
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat.append(chunk)
        elif kind == b"IEND":
            break
    w, h, depth, ctype, _, _, interlace = ihdr
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {ctype}, interlace {interlace}")
    stride = w * channels
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8).reshape(h, stride + 1)
    out = np.zeros((h, stride), np.uint8)
    prev = np.zeros(stride, np.uint8)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:]
        if f == 0:
            cur = line.copy()
        elif f == 1:    # Sub: running sum along each channel, modulo 256
            cur = np.cumsum(line.reshape(w, channels), axis=0, dtype=np.uint8).reshape(stride)
        elif f == 2:    # Up
            cur = line + prev
        elif f in (3, 4):   # Average / Paeth depend on the decoded left neighbour: byte by byte
            ln, up, c = line.tolist(), prev.tolist(), [0] * stride
            for i in range(stride):
                a = c[i - channels] if i >= channels else 0
                b = up[i]
                if f == 3:
                    c[i] = (ln[i] + ((a + b) >> 1)) & 255
                    continue
                d = up[i - channels] if i >= channels else 0
                p = a + b - d
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - d)
                c[i] = (ln[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else d)) & 255
            cur = np.array(c, np.uint8)
        else:
            raise ValueError(f"bad PNG filter {f} in row {y}")
        out[y] = cur
        prev = cur
    return out.reshape(h, w, channels)


def png_size(data):
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


# ------------------------------------------------------------------------------------------------- tests
def test_every_section_present_and_not_empty(dom):
    assert dom.order == SECTIONS
    for sid in SECTIONS:
        assert dom.heading[sid].strip(), f"section {sid!r} has no heading"
        assert len(dom.body[sid].split()) >= 5, f"section {sid!r} is empty: {dom.body[sid]!r}"
    assert [s for s in dom.nav if s in SECTIONS] == SECTIONS     # the navigation bar links every section


def test_summary_reports_the_run(dom):
    body = " ".join(dom.body["summary"].split())
    assert "two_losses.py" in body
    assert "2 of 2" in body
    assert "TwoHead" in body


def test_graph_is_svg_with_nodes_or_text_tree(dom):
    names = ("AddBackward0", "NllLossBackward0", "MseLossBackward0")
    if shutil.which("dot") and importlib.util.find_spec("graphviz"):
        assert "svg" in dom.tags["graph"], "dot is installed but the graph is not an inline SVG"
        nodes = [c for c in dom.gclasses["graph"] if "node" in c]
        edges = [c for c in dom.gclasses["graph"] if "edge" in c]
        legend = 2                      # Graphviz draws the legend's two loss terms as nodes without edges
        assert len(nodes) >= 6 and len(edges) >= len(nodes) - 1 - legend, (len(nodes), len(edges))
    else:
        assert "pre" in dom.tags["graph"]
    for name in names:
        assert name in dom.body["graph"], name


def test_inline_images_are_pngs(dom):
    imgs = [src for sid in SECTIONS for src in dom.imgs[sid]]
    if importlib.util.find_spec("matplotlib"):
        assert len(dom.imgs["flow"]) >= 1, "matplotlib is installed but the flow section has no plot"
    prefix = "data:image/png;base64,"
    for src in imgs:
        assert src.startswith(prefix), src[:60]
        data = base64.b64decode(src[len(prefix):], validate=True)
        assert data[:8] == PNG_MAGIC
        w, h = png_size(data)
        assert 100 <= w <= 4000 and 100 <= h <= 4000, (w, h)
        px = png_decode(data)
        assert px.shape[:2] == (h, w) and px.std() > 0     # a plot, not a blank image


def test_attribution_table_names_both_terms(dom):
    rows = dom.rows["attribution"]
    header = rows[0]
    assert header[:3] == ["parameter", "term", "|grad|"], header
    terms = {r[1] for r in rows[1:] if len(r) > 2 and r[0] == "" and r[1]}
    assert "loss_cls" in terms, terms
    assert any("loss_reg" in t for t in terms), terms
    params = {r[0].split()[0] for r in rows[1:] if r and r[0]}
    assert {"body.0.weight", "cls.weight", "reg.weight", "unused.weight"} <= params, params
    # the classification head is reached only by loss_cls, the regression head only by the other term
    by_param, cur = {}, None
    for r in rows[1:]:
        if r[0]:
            cur = r[0].split()[0]
        elif cur is not None:
            by_param.setdefault(cur, {})[r[1]] = r[2]
    reg_term = next(t for t in terms if "loss_reg" in t)
    assert by_param["cls.weight"][reg_term] == "unreachable"
    assert by_param["reg.weight"]["loss_cls"] == "unreachable"
    assert float(by_param["body.0.weight"]["loss_cls"]) > 0 and float(by_param["body.0.weight"][reg_term]) > 0


def test_why_no_grad_names_the_unused_layer(dom):
    assert "unused.weight" in dom.body["why-no-grad"]
    assert "unused.bias" in dom.body["why-no-grad"]


def test_screenshot_is_a_rendered_page(shot, shot_pixels):
    assert png_size(shot.read_bytes()) == (WIDTH, HEIGHT)
    px = shot_pixels[..., :3]
    assert px.shape == (HEIGHT, WIDTH, 3)
    assert px.astype(np.float64).var() > 0
    colours = np.unique(px[::4, ::4].reshape(-1, 3), axis=0)
    assert len(colours) >= 20, len(colours)        # text antialiasing, tables, graph, plots
    # the CSS was applied: the header band across the top is the report's dark blue
    top = px[5:40, 600:700].reshape(-1, 3).astype(int)
    assert (np.abs(top - HEADER_RGB).max(axis=1) <= 2).mean() > 0.5
    # ink on the page: a good share of pixels darker than the light page/section backgrounds
    dark = (px.min(axis=2) < 128).mean()
    assert 0.005 < dark < 0.5, dark


def test_png_decoder_agrees_with_matplotlib(shot, shot_pixels):
    mpimg = pytest.importorskip("matplotlib.image", reason="matplotlib not installed (cross-check only)")
    ours = shot_pixels
    theirs = np.round(mpimg.imread(str(shot)) * 255).astype(np.uint8)
    assert ours.shape == theirs.shape
    assert np.array_equal(ours, theirs)
