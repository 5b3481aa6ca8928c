"""A GraphView drawn as SVG in pure Python (``_graph_layout``'s layered layout): no Graphviz needed.

The drawing carries what the DOT drawing carries -- the same node labels (PyTorch's node names,
output labels, parameter names, shapes and dtypes, leaf gradient norms, NaN/Inf marks, saved
tensors), the same fills, one rounded rectangle per module call cluster, collapsed modules as
boxes, edges labelled with gradient norms and coloured per loss term (several terms: parallel
strokes), non-finite gradients in red, and a legend of the loss terms.  Its groups follow
Graphviz's SVG: ``<g class="node">``, ``<g class="edge">``, ``<g class="cluster">``, each with a
``<title>`` (the hover text).
"""
from html import escape

from ._graph_layout import PAD, LABEL_H, layered
from ._graph_render import _Layout, _node_attrs, _box_attrs, _edge_attrs

__all__ = ["to_svg"]

FONT = "Helvetica,Arial,'Liberation Sans',sans-serif"
NODE_FS, EDGE_FS, CLUSTER_FS = 10, 9, 11
LINE_H = 12.5

# Helvetica's advance widths (em/1000) for ASCII 32..126; other characters count as 'M'-ish 0.8 em
_WIDTHS = [278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556,
           556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778,
           722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278,
           278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
           556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584]


def text_width(s, size):
    """Estimated width of `s` in Helvetica at `size` px, with a margin for wider fallback fonts."""
    em = 0
    for ch in s:
        o = ord(ch)
        em += _WIDTHS[o - 32] if 32 <= o < 127 else 800
    return em * size / 1000 * 1.08


def _e(s):
    return escape(str(s), quote=True)


def _f(v):
    return f"{v:.1f}".rstrip("0").rstrip(".")


# -- sizes --------------------------------------------------------------------------------------------
def _labels(lay):
    """drawn id -> (label lines, attrs) as the DOT drawing has them."""
    nonfinite_box = {}
    for info in lay.infos:
        vid = lay.vis[info.node]
        if vid[0] == "m" and info.nonfinite:
            nonfinite_box[vid] = True
    out = {}
    for vid, item in lay.items.items():
        if vid[0] == "m":
            a = _box_attrs(item, lay.box_size[vid], nonfinite_box.get(vid, False))
        else:
            a = _node_attrs(item)
        out[vid] = (a["label"].split("\n"), a)
    return out


def _node_size(lines, box3d):
    w = max(text_width(s, NODE_FS) for s in lines) + 16 + (4 if box3d else 0)
    return max(w, 40.0), len(lines) * LINE_H + 9 + (4 if box3d else 0)


# -- drawing ------------------------------------------------------------------------------------------
def _node_svg(vid, lines, a, rect):
    x, y, w, h = rect
    fill = a.get("fillcolor", "#f4f4f4")
    stroke = a.get("color", "#333333")
    sw = a.get("penwidth", "1")
    box3d = a.get("shape") == "box3d"
    out = [f'<g id="{_e(vid)}" class="node"><title>{_e(a.get("tooltip", lines[0]))}</title>']
    if box3d:
        out.append(f'<rect x="{_f(x + 4)}" y="{_f(y)}" width="{_f(w - 4)}" height="{_f(h - 4)}" fill="{fill}" '
                   f'stroke="{stroke}" stroke-width="{sw}"/>')
        x, y, w, h = x, y + 4, w - 4, h - 4
        out.append(f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" fill="{fill}" '
                   f'stroke="{stroke}" stroke-width="{sw}"/>')
    else:
        out.append(f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" rx="5" ry="5" fill="{fill}" '
                   f'stroke="{stroke}" stroke-width="{sw}"/>')
    cx = x + w / 2
    y0 = y + (h - len(lines) * LINE_H) / 2 + LINE_H - 3
    out.append(f'<text text-anchor="middle" font-family="{FONT}" font-size="{NODE_FS}" fill="#000000">')
    for i, s in enumerate(lines):
        weight = ' font-weight="bold"' if i == 0 else ""
        out.append(f'<tspan x="{_f(cx)}" y="{_f(y0 + i * LINE_H)}"{weight}>{_e(s)}</tspan>')
    out.append("</text></g>")
    return "".join(out)


def _path_d(pts, dx=0.0):
    """A smooth path through the points: vertical runs straight, the steps between ranks as S-curves."""
    x0, y0 = pts[0]
    d = [f"M{_f(x0 + dx)},{_f(y0)}"]
    for (xa, ya), (xb, yb) in zip(pts, pts[1:]):
        if abs(xa - xb) < 0.5:
            d.append(f"L{_f(xb + dx)},{_f(yb)}")
        else:
            my = (ya + yb) / 2
            d.append(f"C{_f(xa + dx)},{_f(my)} {_f(xb + dx)},{_f(my)} {_f(xb + dx)},{_f(yb)}")
    return "".join(d)


def _on_step(pts, t):
    """The point at parameter t of the path's first step (a straight run or an S-curve, as _path_d draws)."""
    (xa, ya), (xb, yb) = pts[0], pts[1]
    u = 1 - t
    cx = xa * (u ** 3 + 3 * u * u * t) + xb * (3 * u * t * t + t ** 3)
    return cx, ya + (yb - ya) * t if abs(xa - xb) < 0.5 else ya * u ** 3 + (ya + yb) / 2 * 3 * u * t + yb * t ** 3


def _label_spot(pts, label, pad, taken):
    """(x, baseline y) of an edge label beside the first step of its edge, at the first of a few places along
    it (either side) that overlaps no box in `taken` (nodes and the labels placed so far); the label's box
    is added to `taken`."""
    w, h = text_width(label, EDGE_FS) + 2, EDGE_FS + 2
    first = None
    for t in (0.5, 0.35, 0.65, 0.2, 0.8):
        x, y = _on_step(pts, t)
        for bx in (x + 4 + pad, x - 4 - pad - w):
            box = (bx, y - h / 2, w, h)
            first = first or box
            if not any(bx < ox + ow and ox < bx + w and box[1] < oy + oh and oy < box[1] + h
                       for ox, oy, ow, oh in taken):
                taken.append(box)
                return bx, y + 3
    taken.append(first)
    return first[0], first[1] + h / 2 + 3


def _edge_svg(k, src, dst, a, pts, taken):
    colors = a.get("color", "#555555").split(":")
    sw = float(a.get("penwidth", "1"))
    down = pts[-1][1] >= pts[-2][1]
    tip_x, tip_y = pts[-1]
    back = -7 if down else 7
    body = pts[:-1] + [(tip_x, tip_y + back)]
    out = [f'<g id="e{k}" class="edge"><title>{_e(src)}&#45;&gt;{_e(dst)}'
           f'{(" " + _e(a["tooltip"])) if a.get("tooltip") else ""}</title>']
    m = len(colors)
    for i, c in enumerate(colors):
        dx = (i - (m - 1) / 2) * (sw + 1.2) if m > 1 else 0.0
        out.append(f'<path d="{_path_d(body, dx)}" fill="none" stroke="{c}" stroke-width="{_f(sw)}"/>')
    head = colors[0] if m == 1 else "#444444"
    hw = 3.5 + (m - 1) * 1.2
    out.append(f'<polygon points="{_f(tip_x - hw)},{_f(tip_y + back)} {_f(tip_x + hw)},{_f(tip_y + back)} '
               f'{_f(tip_x)},{_f(tip_y)}" fill="{head}" stroke="{head}"/>')
    if a.get("label"):
        lx, ly = _label_spot(pts, a["label"], (m - 1) * 1.5, taken)
        out.append(f'<text x="{_f(lx)}" y="{_f(ly)}" font-family="{FONT}" font-size="{EDGE_FS}" '
                   f'fill="{a.get("fontcolor", "#333333")}" stroke="#ffffff" stroke-width="3" '
                   f'paint-order="stroke">{_e(a["label"])}</text>')
    out.append("</g>")
    return "".join(out)


def _cluster_svg(call, rect):
    x, y, w, h = rect
    fill = "#f7f7ff" if call.depth % 2 == 0 else "#ffffff"
    return (f'<g id="c{call.index}" class="cluster"><title>{_e(call.label)}</title>'
            f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" rx="6" ry="6" fill="{fill}" '
            f'stroke="#8888aa"/><text x="{_f(x + 7)}" y="{_f(y + LABEL_H - 2)}" font-family="{FONT}" '
            f'font-size="{CLUSTER_FS}" fill="#222244" stroke="{fill}" stroke-width="3" paint-order="stroke">{_e(call.label)}</text></g>')


def _legend_svg(terms, x, y):
    from ._graph_render import _PALETTE
    w = max(text_width(t, NODE_FS) for t in terms) + 44
    h = 24 + 16 * len(terms)
    out = [f'<g class="cluster legend"><title>loss terms</title><rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" '
           f'height="{_f(h)}" rx="6" ry="6" fill="#ffffff" stroke="#aaaaaa" stroke-dasharray="5,3"/>'
           f'<text x="{_f(x + 7)}" y="{_f(y + 15)}" font-family="{FONT}" font-size="{CLUSTER_FS}">loss terms</text>']
    for i, t in enumerate(terms):
        c = _PALETTE[i % len(_PALETTE)]
        yy = y + 30 + 16 * i
        out.append(f'<line x1="{_f(x + 8)}" y1="{_f(yy - 3)}" x2="{_f(x + 28)}" y2="{_f(yy - 3)}" stroke="{c}" '
                   f'stroke-width="2.5"/><text x="{_f(x + 34)}" y="{_f(yy)}" font-family="{FONT}" '
                   f'font-size="{NODE_FS}" fill="{c}">{_e(t)}</text>')
    out.append("</g>")
    return "".join(out), w, h


def to_svg(view):
    """The view as a standalone SVG document (text)."""
    lay = _Layout(view)
    labels = _labels(lay)
    ids = list(lay.items)
    size = {vid: _node_size(labels[vid][0], vid[0] == "m") for vid in ids}
    parent_of = {}
    for kids in lay.children.values():
        for call in kids:
            parent_of[call] = call.parent
    min_w = {c: text_width(c.label, CLUSTER_FS) + 2 * PAD + 6 for c in parent_of}
    res = layered(ids, size, [(vs, vd) for vs, vd, _ in lay.edges], lay.home, parent_of, min_w)
    width, height = res.width, res.height
    legend = ""
    if view._terms:
        legend, lw, lh = _legend_svg(list(view._terms), width, 12)
        width += lw + 12
        height = max(height, lh + 24)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}pt" height="{_f(height)}pt" '
             f'viewBox="0 0 {_f(width)} {_f(height)}" class="glassgrad-graph">',
             '<g id="graph0" class="graph"><title>glassgrad</title>',
             f'<rect x="0" y="0" width="{_f(width)}" height="{_f(height)}" fill="#ffffff"/>']
    for call in sorted(res.clusters, key=lambda c: (c.depth, c.index)):
        parts.append(_cluster_svg(call, res.clusters[call]))
    taken = list(res.nodes.values())          # edge labels keep off the nodes and off each other
    for k, (vs, vd, edges) in enumerate(lay.edges):
        parts.append(_edge_svg(k, vs, vd, _edge_attrs(view, edges), res.routes[k], taken))
    for vid in ids:
        lines, a = labels[vid]
        parts.append(_node_svg(vid, lines, a, res.nodes[vid]))
    if legend:
        parts.append(legend)
    parts.append("</g></svg>")
    return "\n".join(parts) + "\n"
