"""``explain.graph``: the backward graph of a tensor as a picture, DOT text, a text tree.

    view = explain.graph(loss, model)      # hooks are registered now (grads=True) ...
    loss.backward()                        # ... so the gradients that flow are recorded
    print(view.text())                     # a tree for terminals
    view.render("graph.svg")               # .svg drawn by Graphviz's dot, or without it by the built-in
                                           # layered layout; .png / .pdf through Graphviz, .dot as text
    view                                   # inline SVG in Jupyter

Nodes carry PyTorch's node names (``node.name()``) and the shape and dtype of the gradient
the node receives (the metadata of its forward output, where it is known before backward:
the roots, saved tensors, leaves, traced module inputs/outputs; after a watched backward, the
gradients themselves).  Leaves carry the parameter names of ``model``.  With
``modules=explain.trace_modules(model)`` the nodes are grouped in nested clusters, one per
module call, and ``max_depth`` / ``collapse`` draws each module at that depth as one box.

Edge direction is the direction gradients flow: from a node to its ``next_functions``.
``.nodes`` and ``.edges`` describe the full (uncollapsed) graph for programs.

The watch hooks (node pre-hooks and post-hooks) only read the gradients and return None:
the engine computes exactly what it computes without them.
"""
import numpy as np

from .._tensor import Tensor
from ..backend import as_array
from ..autograd.graph import AccumulateGrad
from ..autograd.traversal import grad_accumulator, saved_names, saved_values
from ._graph_modules import trace_modules, ModuleTrace

__all__ = ["graph", "GraphView", "trace_modules", "NodeInfo", "EdgeInfo"]


def _dtype_name(dt):
    s = str(dt)
    return s[6:] if s.startswith("torch.") else s


def _arr(g):
    """The ndarray behind a gradient (an ndarray already, or a Tensor with create_graph)."""
    if g is None:
        return None
    d = getattr(g, "_data", None)
    return d if d is not None else as_array(g)


def _norm(a):
    if a.dtype.kind == "c":
        a = np.abs(a)
    if a.dtype.kind not in "fcV":
        a = a.astype(np.float64)
    return float(np.sqrt(np.sum(np.square(a, dtype=np.float64))))


def _finite(a):
    return a.dtype.kind not in "fcV" or bool(np.isfinite(a).all())


class NodeInfo:
    """One node of the backward graph, as the drawing shows it."""
    __slots__ = ("id", "name", "node", "is_leaf", "shape", "dtype", "shapes", "param", "module", "saved",
                 "roots", "grad_norm", "nonfinite", "nan_origin")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    def __repr__(self):
        extra = f" {self.param}" if self.param else ""
        return f"<NodeInfo {self.id} {self.name}{extra} {self.shape} {self.dtype}>"


class EdgeInfo:
    """One edge ``src -> dst`` (``dst`` is ``src.next_functions[index]``, output ``input_nr`` of dst)."""
    __slots__ = ("src", "dst", "index", "input_nr", "shape", "dtype", "grad_norm", "nonfinite", "terms")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    def __repr__(self):
        g = "" if self.grad_norm is None else f" |g|={self.grad_norm:.4g}"
        return f"<EdgeInfo {self.src}->{self.dst}{g}>"


def _roots_of(output):
    """[(label, tensor)] from a tensor, a list/tuple of tensors or a dict {name: tensor}."""
    if isinstance(output, Tensor):
        return [("output", output)]
    if isinstance(output, dict):
        items = [(str(k), v) for k, v in output.items()]
    elif isinstance(output, (list, tuple)):
        items = [(f"output[{i}]", v) for i, v in enumerate(output)]
    else:
        raise TypeError(f"explain.graph: expected a Tensor, a list or a dict of Tensors, got {type(output).__name__}")
    for k, v in items:
        if not isinstance(v, Tensor):
            raise TypeError(f"explain.graph: {k} is a {type(v).__name__}, not a Tensor")
    return items


def _root_node(t):
    fn = t.grad_fn
    if fn is not None:
        return fn, t.output_nr
    if t.requires_grad:
        acc = grad_accumulator(t)
        return (acc if acc is not None else AccumulateGrad(t)), 0
    return None, 0


def _reachable(starts):
    seen = set()
    stack = [n for n in starts if n is not None]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for nxt, _ in n.next_functions:
            if nxt is not None and nxt not in seen:
                stack.append(nxt)
    return seen


class GraphView:
    """The backward graph of one or more roots; see the module docstring."""

    def __init__(self, output, model=None, *, show_saved=False, grads=True, modules=None, max_depth=None,
                 colors=None):
        if modules is not None and not isinstance(modules, ModuleTrace):
            raise TypeError("explain.graph: modules= takes the object of `with explain.trace_modules(model)`")
        if model is None and modules is not None:
            model = modules.model
        self.model = model
        self.show_saved = bool(show_saved)
        self.grads = bool(grads)
        self.modules = modules
        self.max_depth = max_depth
        self._handles = []
        self._g_edge = {}       # (node, index) -> (norm, shape, dtype, finite)
        self._g_node = {}       # node -> (norm, all finite received, finite produced or None)
        self._g_meta = {}       # (node, nr) -> (shape, dtype) seen in a gradient
        self._build(_roots_of(output))
        self._set_colors(colors)
        if self.grads:
            self.watch()

    # -- construction ---------------------------------------------------------------------------------
    def _build(self, roots):
        order = []
        index = {}
        self.roots = []         # (label, node, nr, shape, dtype)
        meta = {}
        starts = []
        for label, t in roots:
            node, nr = _root_node(t)
            if node is None:
                continue
            self.roots.append((label, node, nr))
            meta.setdefault((node, nr), (tuple(t.shape), _dtype_name(t.dtype)))
            starts.append(node)
        if not starts:
            raise ValueError("explain.graph: the output does not require grad, so it has no backward graph "
                             "(was it computed under no_grad, or from tensors without requires_grad?)")
        # breadth-first from the roots: ids follow the order of the drawing
        queue = []
        for n in starts:
            if n not in index:
                index[n] = len(order)
                order.append(n)
                queue.append(n)
        head = 0
        edges = []
        while head < len(order):
            node = order[head]
            head += 1
            for i, (nxt, nr) in enumerate(node.next_functions):
                if nxt is None:
                    continue
                if nxt not in index:
                    index[nxt] = len(order)
                    order.append(nxt)
                edges.append((node, i, nxt, nr))
        self._order = order
        self._index = index
        self._edges = edges
        # what is known of each node output before backward
        for node in order:
            if node.__class__ is AccumulateGrad:
                v = node.variable
                meta.setdefault((node, 0), (tuple(v.shape), _dtype_name(v.dtype)))
                continue
            for value, edge in saved_values(node):
                if edge is None:
                    continue
                if isinstance(value, Tensor):        # a saved input: the output of the node before
                    meta.setdefault(edge, (tuple(value.shape), _dtype_name(value.dtype)))
                elif isinstance(value, np.ndarray):  # a saved output of this node
                    meta.setdefault(edge, (tuple(value.shape), str(value.dtype)))
        if self.modules is not None:
            for k, v in self.modules.meta.items():
                meta.setdefault(k, v)
        self._meta = meta
        # parameter names
        names = {}
        if self.model is not None:
            for pname, p in self.model.named_parameters():
                names.setdefault(id(p), pname)
        self._pnames = names
        self._node_call = self._assign_calls() if self.modules is not None else {}
        # saved tensors are freed by backward: describe them now
        self._saved_info = {n: self._saved_of(n) for n in order} if self.show_saved else {}

    def _assign_calls(self):
        """node -> ModuleCall for the nodes of this view (parameter leaves go to their owner's call)."""
        trace = self.modules
        nc = {}
        for node in self._order:
            c = trace.node_call.get(node)
            if c is not None:
                nc[node] = c
        by_name = {}
        for c in trace.calls:
            by_name.setdefault(c.name, []).append(c)
        parents = {}
        for src, _, dst, _ in self._edges:
            parents.setdefault(dst, []).append(src)
        for node in self._order:
            if node.__class__ is not AccumulateGrad:
                continue
            pname = self._pnames.get(id(node.variable))
            if pname is None:
                continue
            owner = pname.rsplit(".", 1)[0] if "." in pname else ""
            calls = by_name.get(owner)
            if not calls:
                continue
            users = {nc.get(p) for p in parents.get(node, ())}
            pick = None
            for c in calls:              # the owner's call that used it (directly or in a child)
                for u in users:
                    while u is not None and u is not c:
                        u = u.parent
                    if u is c:
                        pick = c
                        break
                if pick is not None:
                    break
            if pick is None:
                pick = next((c for c in calls if any(nc.get(n) is c for n in self._order)), None)
            if pick is not None:
                nc[node] = pick
        return nc

    def _set_colors(self, colors):
        """Per term: the nodes it reaches and the nodes above its loss (from which the loss is reached).

        The edge ``P -> C`` carries term T's gradient iff T reaches P, or C lies above T's loss
        (C is on the way from the output down to T's loss, T's loss node included).
        """
        self._terms = {}
        if not colors:
            return
        if not isinstance(colors, dict):
            raise TypeError("explain.graph: colors= takes a dict {term name: loss tensor or set of nodes}")
        parents = {}
        for src, _, dst, _ in self._edges:
            parents.setdefault(dst, []).append(src)
        for name, v in colors.items():
            if isinstance(v, Tensor):
                fn = v.grad_fn
                reach = _reachable([fn]) if fn is not None else set()
                tops = {fn} if fn is not None else set()
            else:
                reach = set()
                for n in v:
                    if isinstance(n, str):          # a NodeInfo id
                        k = int(n[1:]) if n[:1] == "n" and n[1:].isdigit() else -1
                        if 0 <= k < len(self._order):
                            reach.add(self._order[k])
                    elif isinstance(n, NodeInfo):
                        reach.add(n.node)
                    else:
                        reach.add(n)
                tops = {n for n in reach if not any(p in reach for p in parents.get(n, ()))}
            above = set()
            stack = [n for n in tops if n in self._index]
            while stack:
                n = stack.pop()
                if n in above:
                    continue
                above.add(n)
                stack.extend(p for p in parents.get(n, ()) if p not in above)
            self._terms[str(name)] = (reach, above)

    # -- gradients ------------------------------------------------------------------------------------
    def watch(self):
        """Register read-only hooks on every node so the next backward's gradients are recorded.

        Call before ``loss.backward()``; returns the view.  ``explain.graph(..., grads=True)``
        (the default) already did.  Each backward overwrites the previous record.
        """
        if self._handles:
            return self
        for node in self._order:
            self._handles.append(node.register_prehook(self._make_pre(node)))
            if node.__class__ is not AccumulateGrad:
                self._handles.append(node.register_hook(self._make_post(node)))
        self.grads = True
        return self

    def unwatch(self):
        """Remove the hooks ``watch`` registered (the recorded gradients stay)."""
        for h in self._handles:
            h.remove()
        self._handles = []
        return self

    def _make_pre(self, node):
        g_node, g_meta = self._g_node, self._g_meta

        def pre(grad_outputs):
            total = 0.0
            fin = True
            seen = False
            for nr, g in enumerate(grad_outputs):
                a = _arr(g)
                if a is None:
                    continue
                seen = True
                total += _norm(a) ** 2
                fin = fin and _finite(a)
                g_meta[(node, nr)] = (tuple(a.shape), str(a.dtype))
            if seen:
                g_node[node] = (float(np.sqrt(total)), fin, None)
            return None
        return pre

    def _make_post(self, node):
        g_node, g_edge = self._g_node, self._g_edge

        def post(grad_inputs, grad_outputs):
            fin = True
            for i, g in enumerate(grad_inputs):
                a = _arr(g)
                if a is None:
                    continue
                f = _finite(a)
                fin = fin and f
                g_edge[(node, i)] = (_norm(a), tuple(a.shape), str(a.dtype), f)
            prev = g_node.get(node)
            if prev is not None:
                g_node[node] = (prev[0], prev[1], fin)
            return None
        return post

    # -- the description for programs ----------------------------------------------------------------
    def _node_id(self, node):
        return f"n{self._index[node]}"

    def _shape_of(self, node, nr):
        m = self._g_meta.get((node, nr)) or self._meta.get((node, nr))
        return m if m is not None else (None, None)

    def _saved_of(self, node):
        out = []
        for name in saved_names(node):
            if not name:
                continue
            try:
                v = getattr(node, "_saved_" + name)
            except RuntimeError as e:
                msg = str(e)
                out.append((name, None, "freed" if "second time" in msg else "modified in place"))
                continue
            except AttributeError:
                continue
            if isinstance(v, Tensor):
                out.append((name, tuple(v.shape), _dtype_name(v.dtype)))
            elif v is None:
                out.append((name, None, "None"))
        return out

    def _info(self, node):
        n_out = getattr(node, "n_outputs", 1) or 1
        shapes = [self._shape_of(node, nr) for nr in range(n_out)]
        shape, dtype = shapes[0]
        g = self._g_node.get(node) if self.grads else None
        param = None
        if node.__class__ is AccumulateGrad:
            param = self._pnames.get(id(node.variable))
        call = self._node_call.get(node)
        roots = [lab for lab, n, _ in self.roots if n is node]
        nonfinite = bool(g is not None and (not g[1] or g[2] is False))
        origin = bool(g is not None and g[1] and g[2] is False)
        return NodeInfo(id=self._node_id(node), name=node.name(), node=node,
                        is_leaf=node.__class__ is AccumulateGrad, shape=shape, dtype=dtype, shapes=shapes,
                        param=param, module=call.label if call is not None else None,
                        saved=self._saved_info.get(node) if self.show_saved else None, roots=roots,
                        grad_norm=g[0] if g is not None else None, nonfinite=nonfinite, nan_origin=origin)

    @property
    def nodes(self):
        """A NodeInfo per node of the full graph, in breadth-first order from the roots."""
        return [self._info(n) for n in self._order]

    @property
    def edges(self):
        """An EdgeInfo per edge (``src.next_functions[index]``), in the same order as the walk."""
        out = []
        for src, i, dst, nr in self._edges:
            shape, dtype = self._shape_of(dst, nr)
            g = self._g_edge.get((src, i)) if self.grads else None
            if g is not None:
                shape, dtype = shape or g[1], dtype or g[2]
            terms = [t for t, (reach, above) in self._terms.items() if src in reach or dst in above]
            out.append(EdgeInfo(src=self._node_id(src), dst=self._node_id(dst), index=i, input_nr=nr,
                                shape=shape, dtype=dtype, grad_norm=g[0] if g is not None else None,
                                nonfinite=bool(g is not None and not g[3]), terms=terms))
        return out

    # -- views ----------------------------------------------------------------------------------------
    def collapse(self, depth):
        """A view of the same graph where every module call at `depth` is one box (None: expand all).

        The top model's call has depth 0, its children depth 1, and so on.  The recorded
        gradients are shared with this view.
        """
        if depth is not None and (not isinstance(depth, int) or depth < 0):
            raise ValueError(f"collapse: depth must be a non-negative int or None, got {depth!r}")
        v = object.__new__(GraphView)
        v.__dict__.update(self.__dict__)
        v.max_depth = depth
        return v

    def to_dot(self):
        """The graph as DOT text (Graphviz's language); needs nothing but NumPy."""
        from ._graph_render import to_dot
        return to_dot(self)

    def text(self, ascii=False):
        """A plain-text tree: each node once; a node reached again is a reference ``-> see [#k]``."""
        from ._graph_render import to_text
        return to_text(self, ascii=ascii)

    def render(self, path, engine=None):
        """Draw to `path`; the format comes from the suffix (.svg, .png, .pdf; .dot/.gv writes DOT).

        engine: None draws with Graphviz's ``dot`` when it is installed, else (.svg only) with the
        built-in layered layout; 'dot' or 'python' pick one.
        """
        from ._graph_render import render
        return render(self, path, engine)

    def to_svg(self, engine=None):
        """The drawing as SVG text (engine as in ``render``); works without Graphviz."""
        from ._graph_render import to_svg
        return to_svg(self, engine)

    def _repr_svg_(self):
        from ._graph_render import svg_or_none
        return svg_or_none(self)

    def __str__(self):
        return self.text()

    def __repr__(self):
        return (f"<GraphView: {len(self._order)} nodes, {len(self._edges)} edges, "
                f"{len(self.roots)} root{'s' if len(self.roots) != 1 else ''}>")


def graph(output, model=None, *, show_saved=False, grads=True, modules=None, max_depth=None, colors=None):
    """The backward graph of `output` (a Tensor, or a list/dict of Tensors: several roots).

    model:       names the leaves after ``model.named_parameters()``.
    show_saved:  list each node's saved tensors (``_saved_<name>``) with shape and dtype.
    grads:       register read-only hooks now, so that after ``backward()`` the edges carry the
                 norm of the gradient that flowed along them and non-finite ones are marked.
    modules:     the object of ``with explain.trace_modules(model) as trace`` -> nested clusters.
    max_depth:   draw each module call at this depth as one box (0 = the whole model).
    colors:      {term name: loss tensor or set of nodes}: colour each edge by the terms reaching it.
    """
    return GraphView(output, model, show_saved=show_saved, grads=grads, modules=modules, max_depth=max_depth,
                     colors=colors)
