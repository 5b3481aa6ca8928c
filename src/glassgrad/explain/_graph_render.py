"""Drawing a GraphView: the visible layout (clusters, collapsed boxes), DOT text, text tree, Graphviz.

The layout maps every graph node to what is drawn for it: itself, or -- when its module call
lies at or below ``max_depth`` -- the box of its ancestor call at that depth.  Edges inside a
box disappear; edges into / out of a box are merged per pair of drawn nodes.
"""
import shutil

_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
            "#7f7f7f", "#d62728")
_EXTRA = 'pip install "glassgrad[explain]"'


def _fmt_shape(shape):
    if shape is None:
        return "?"
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _fmt_norm(x):
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf"
    return f"{x:.3g}"


class _Layout:
    """What is drawn: ``items`` (drawn id -> NodeInfo or ModuleCall box), clusters, merged edges."""

    def __init__(self, view):
        md = view.max_depth if view.modules is not None else None
        node_call = view._node_call
        infos = view.nodes
        self.infos = infos
        self.vis = {}            # graph node -> drawn id
        self.items = {}          # drawn id -> NodeInfo | ModuleCall
        self.box_size = {}       # box id -> number of graph nodes inside
        self.home = {}           # drawn id -> ModuleCall cluster it is drawn in (None: top level)
        for info in infos:
            node = info.node
            call = node_call.get(node)
            if call is not None and md is not None and call.depth >= md:
                box = call
                while box.depth > md:
                    box = box.parent
                vid = f"m{box.index}"
                self.vis[node] = vid
                if vid not in self.items:
                    self.items[vid] = box
                    self.home[vid] = box.parent
                self.box_size[vid] = self.box_size.get(vid, 0) + 1
            else:
                self.vis[node] = info.id
                self.items[info.id] = info
                self.home[info.id] = call
        # clusters: every home call and its ancestors
        self.children = {}       # call -> [child calls] (None: top level)
        self.members = {}        # call -> [drawn ids]
        seen = set()
        for vid, call in self.home.items():
            self.members.setdefault(call, []).append(vid)
            c = call
            while c is not None and c not in seen:
                seen.add(c)
                self.children.setdefault(c.parent, []).append(c)
                c = c.parent
        for lst in self.children.values():
            lst.sort(key=lambda c: c.index)
        # edges
        self.edges = []          # [src id, dst id, [EdgeInfo...]]
        merged = {}
        for e, (src, _, dst, _) in zip(view.edges, view._edges):
            vs, vd = self.vis[src], self.vis[dst]
            if vs == vd:
                continue
            if vs[0] == "m" or vd[0] == "m":
                k = (vs, vd)
                if k in merged:
                    merged[k][2].append(e)
                    continue
                merged[k] = rec = [vs, vd, [e]]
                self.edges.append(rec)
            else:
                self.edges.append([vs, vd, [e]])
        self.roots = []
        for _, node, _ in view.roots:
            vid = self.vis[node]
            if vid not in self.roots:
                self.roots.append(vid)


# -- DOT ---------------------------------------------------------------------------------------------------
def _q(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(d):
    return "[" + ", ".join(f"{k}={_q(v)}" for k, v in d.items()) + "]"


def _node_lines(info):
    lines = [info.name]
    if info.roots:
        lines.append("output: " + ", ".join(info.roots) if info.roots != ["output"] else "output")
    if info.param:
        lines.append(info.param)
    shapes = info.shapes or [(info.shape, info.dtype)]
    if len(shapes) == 1:
        lines.append(f"{_fmt_shape(shapes[0][0])} {shapes[0][1] or ''}".rstrip())
    else:
        lines.append(" | ".join(f"{_fmt_shape(s)} {d or ''}".rstrip() for s, d in shapes))
    if info.is_leaf and info.grad_norm is not None:
        lines.append(f"|grad| {_fmt_norm(info.grad_norm)}")
    if info.nan_origin:
        lines.append("NaN/Inf created here")
    elif info.nonfinite:
        lines.append("NaN/Inf gradient")
    for name, shape, dt in info.saved or ():
        lines.append(f"saved {name}: {_fmt_shape(shape) + ' ' if shape is not None else ''}{dt}")
    return lines


def _node_attrs(info):
    a = {"label": "\n".join(_node_lines(info)), "tooltip": info.name}
    if info.nonfinite:
        a.update(fillcolor="#ff9c9c", color="#d00000", penwidth="3" if info.nan_origin else "2")
    elif info.roots:
        a["fillcolor"] = "#c9f0c9"
    elif info.is_leaf:
        a["fillcolor"] = "#cfe3ff" if info.param else "#e8e8e8"
    return a


def _box_attrs(call, size, nonfinite):
    a = {"label": f"{call.label}\n[{size} node{'s' if size != 1 else ''}]", "tooltip": call.label, "shape": "box3d",
         "fillcolor": "#fff2c6"}
    if nonfinite:
        a.update(fillcolor="#ff9c9c", color="#d00000", penwidth="2")
    return a


def _edge_attrs(view, edges):
    a = {}
    norms = [e.grad_norm for e in edges if e.grad_norm is not None]
    if len(edges) == 1:
        e = edges[0]
        if e.grad_norm is not None:
            a["label"] = _fmt_norm(e.grad_norm)
        a["tooltip"] = f"{_fmt_shape(e.shape)} {e.dtype or ''}".rstrip()
    else:
        a["label"] = f"{len(edges)} edges" + (f", max {_fmt_norm(max(norms))}" if norms else "")
    terms = []
    for e in edges:
        for t in e.terms or ():
            if t not in terms:
                terms.append(t)
    if terms:
        order = list(view._terms)
        a["color"] = ":".join(_PALETTE[order.index(t) % len(_PALETTE)] for t in terms)
    if any(e.nonfinite for e in edges):
        a.update(color="#d00000", fontcolor="#d00000", penwidth="2")
    return a


def to_dot(view):
    lay = _Layout(view)
    out = ["digraph glassgrad {",
           '  graph [rankdir="TB", fontname="Helvetica", fontsize="11", labeljust="l"];',
           '  node [shape="box", style="rounded,filled", fillcolor="#f4f4f4", fontname="Helvetica", '
           'fontsize="10"];',
           '  edge [fontname="Helvetica", fontsize="9", color="#555555"];']
    nonfinite_box = {}
    for info in lay.infos:
        vid = lay.vis[info.node]
        if vid[0] == "m" and info.nonfinite:
            nonfinite_box[vid] = True

    def emit_items(call, ind):
        for vid in lay.members.get(call, ()):
            item = lay.items[vid]
            if vid[0] == "m":
                attrs = _box_attrs(item, lay.box_size[vid], nonfinite_box.get(vid, False))
            else:
                attrs = _node_attrs(item)
            out.append(f"{ind}{vid} {_attrs(attrs)};")

    def emit_cluster(call, ind):
        out.append(f"{ind}subgraph cluster_c{call.index} {{")
        out.append(f"{ind}  label={_q(call.label)};")
        out.append(f'{ind}  style="rounded,filled"; fillcolor="{"#f7f7ff" if call.depth % 2 == 0 else "#ffffff"}"; '
                   f'color="#8888aa";')
        emit_items(call, ind + "  ")
        for child in lay.children.get(call, ()):
            emit_cluster(child, ind + "  ")
        out.append(f"{ind}}}")

    emit_items(None, "  ")
    # clusters iteratively would need an explicit stack; module nesting is shallow, recursion is fine
    for call in lay.children.get(None, ()):
        emit_cluster(call, "  ")
    for vs, vd, edges in lay.edges:
        a = _edge_attrs(view, edges)
        out.append(f"  {vs} -> {vd}" + (f" {_attrs(a)}" if a else "") + ";")
    if view._terms:
        out.append("  subgraph cluster_legend {")
        out.append('    label="loss terms"; style="dashed"; color="#aaaaaa";')
        for i, t in enumerate(view._terms):
            out.append(f"    legend{i} {_attrs({'label': t, 'shape': 'plaintext', 'style': '', 'fontcolor': _PALETTE[i % len(_PALETTE)]})};")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


# -- text tree ---------------------------------------------------------------------------------------------
def _text_label(lay, vid):
    item = lay.items[vid]
    if vid[0] == "m":
        return f"[{item.label}: {lay.box_size[vid]} node{'s' if lay.box_size[vid] != 1 else ''}, collapsed]"
    parts = [item.name]
    if item.param:
        parts.append(item.param)
    shapes = item.shapes or [(item.shape, item.dtype)]
    parts.append("  ".join(f"{_fmt_shape(s)} {d or ''}".rstrip() for s, d in shapes))
    if item.module:
        parts.append(f"@{item.module}")
    if item.roots:
        parts.append("<- " + ", ".join(item.roots))
    if item.nan_origin:
        parts.append("!! NaN/Inf created here")
    elif item.nonfinite:
        parts.append("!! NaN/Inf")
    return "  ".join(parts)


def _edge_note(edges):
    norms = [e.grad_norm for e in edges if e.grad_norm is not None]
    if not norms:
        return ""
    note = f"  |grad| {_fmt_norm(norms[0])}" if len(norms) == 1 else f"  |grad| max {_fmt_norm(max(norms))} ({len(edges)} edges)"
    if any(e.nonfinite for e in edges):
        note += " (non-finite)"
    return note


def to_text(view, ascii=False):
    lay = _Layout(view)
    tee, last, bar, gap = ("|- ", "`- ", "|  ", "   ") if ascii else ("├─ ", "└─ ", "│  ", "   ")
    out_edges = {}
    indeg = {}
    for vs, vd, edges in lay.edges:
        out_edges.setdefault(vs, []).append((vd, edges))
        indeg[vd] = indeg.get(vd, 0) + 1
    tags = {}
    printed = set()
    lines = []
    saved_of = {} if not view.show_saved else {i.id: i.saved for i in lay.infos}
    # explicit stack: (drawn id, prefix for this line, prefix for its children, edge note)
    stack = [(r, "", "", "") for r in reversed(lay.roots)]
    while stack:
        vid, pre, child_pre, note = stack.pop()
        if vid in printed:
            lines.append(f"{pre}-> see [#{tags[vid]}] {lay.items[vid].name if vid[0] == 'n' else lay.items[vid].label}"
                         f"{note}")
            continue
        printed.add(vid)
        tag = ""
        if indeg.get(vid, 0) > 1 or (vid in lay.roots and indeg.get(vid, 0) > 0):
            tags[vid] = len(tags) + 1
            tag = f"[#{tags[vid]}] "
        lines.append(f"{pre}{tag}{_text_label(lay, vid)}{note}")
        kids = out_edges.get(vid, [])
        sv = saved_of.get(vid)
        if sv:
            for name, shape, dt in sv:
                lines.append(f"{child_pre}{bar if kids else gap}(saved {name}: "
                             f"{_fmt_shape(shape) + ' ' if shape is not None else ''}{dt})")
        for k in range(len(kids) - 1, -1, -1):
            vd, edges = kids[k]
            is_last = k == len(kids) - 1
            stack.append((vd, child_pre + (last if is_last else tee), child_pre + (gap if is_last else bar),
                          _edge_note(edges)))
    return "\n".join(lines) + "\n"


# -- Graphviz, or the pure-Python drawing ------------------------------------------------------------------
_FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".jpg": "jpg", ".jpeg": "jpeg", ".ps": "ps"}
_ENGINES = (None, "dot", "python")


def have_dot():
    """Whether Graphviz can draw here: the graphviz Python package and the 'dot' program on PATH."""
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return shutil.which("dot") is not None


def _pipe(dot, fmt):
    try:
        import graphviz
    except ImportError:
        raise ImportError(f"explain.graph(...).render to {fmt!r} needs the 'graphviz' Python package and Graphviz's "
                          f"'dot' program: {_EXTRA}, and install Graphviz (apt install graphviz, "
                          "brew install graphviz or conda install graphviz); .svg is drawn without them") from None
    if shutil.which("dot") is None:
        raise RuntimeError(f"explain.graph(...).render to {fmt!r} needs Graphviz's 'dot' program, which is not on "
                           "PATH: install Graphviz (apt install graphviz, brew install graphviz or conda install "
                           "graphviz); .svg, .to_svg(), .to_dot() and .text() work without it")
    return graphviz.Source(dot).pipe(format=fmt)


def _check_engine(engine):
    if engine not in _ENGINES:
        raise ValueError(f"engine must be None (Graphviz when present, else the built-in layout), 'dot' or "
                         f"'python', got {engine!r}")


def to_svg(view, engine=None):
    """SVG text: Graphviz's drawing when it is here (or engine='dot'), else the built-in layered layout."""
    _check_engine(engine)
    if engine == "dot" or (engine is None and have_dot()):
        svg = _pipe(view.to_dot(), "svg").decode("utf-8")
        i = svg.find("<svg")
        return svg[i:] if i >= 0 else svg
    from ._graph_svg import to_svg as draw
    return draw(view)


def render(view, path, engine=None):
    import os
    _check_engine(engine)
    p = os.fspath(path)
    ext = os.path.splitext(p)[1].lower()
    if ext in (".dot", ".gv"):
        with open(p, "w", encoding="utf-8") as f:
            f.write(view.to_dot())
        return p
    fmt = _FORMATS.get(ext)
    if fmt is None:
        raise ValueError(f"render: unknown format {ext or '(no suffix)'!r} for {p!r}; use one of "
                         f"{', '.join(sorted(_FORMATS) + ['.dot', '.gv'])}")
    if fmt == "svg":
        data = to_svg(view, engine).encode("utf-8")
    elif engine == "python":
        raise ValueError(f"render: the built-in layout draws .svg only, not {ext!r}; Graphviz draws the others")
    else:
        data = _pipe(view.to_dot(), fmt)
    with open(p, "wb") as f:
        f.write(data)
    return p


def svg_or_none(view):
    """SVG text for Jupyter: Graphviz's drawing when it is here, else the built-in one."""
    return to_svg(view)
