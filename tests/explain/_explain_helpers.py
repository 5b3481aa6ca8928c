"""Helpers shared by the tests of glassgrad.explain, written independently of explain itself:
a walk over ``next_functions``, a strict reader of the DOT that explain writes, and line markers
(``# <- name`` comments) in a test file."""
import collections
import os
import re


def walk(root):
    """Breadth-first walk over next_functions: (nodes in order, edge multiset (src, dst) by identity)."""
    order, seen, edges = [root], {root}, collections.Counter()
    i = 0
    while i < len(order):
        n = order[i]
        i += 1
        for nxt, _ in n.next_functions:
            if nxt is None:
                continue
            edges[(n, nxt)] += 1
            if nxt not in seen:
                seen.add(nxt)
                order.append(nxt)
    return order, edges


_ID = r"[A-Za-z_][A-Za-z_0-9]*"
_QS = r'"(?:[^"\\]|\\.)*"'
_VAL = rf"(?:{_QS}|[A-Za-z_0-9.#:+-]+)"
_ATTRS = rf"\[\s*(?:{_ID}\s*=\s*{_VAL}\s*[,;]?\s*)*\]"
_STMTS = [re.compile(p) for p in (
    rf"^digraph {_ID} \{{$",
    rf"^(?:graph|node|edge) {_ATTRS};$",
    rf"^subgraph {_ID} \{{$",
    rf"^(?:{_ID}\s*=\s*{_VAL}\s*;\s*)+$",                       # label="..."; style=...; inside a cluster
    rf"^({_ID})(?: {_ATTRS})?;$",                                # node statement
    rf"^({_ID}) -> ({_ID})(?: {_ATTRS})?;$",                     # edge statement
    r"^\}$")]


def parse_dot(text):
    """A strict reader of the DOT subset explain writes: every line must be a statement, braces balance.
    Returns ({node id: label lines}, edge Counter, {cluster label: (parent label, [node ids inside])})."""
    nodes, edges, clusters, stack = {}, collections.Counter(), {}, []
    lines = [s.strip() for s in text.splitlines() if s.strip()]
    assert _STMTS[0].match(lines[0]), lines[0]
    depth = 1
    for s in lines[1:]:
        kind = next((k for k, p in enumerate(_STMTS) if p.match(s)), None)
        assert kind is not None, f"not a DOT statement: {s!r}"
        if kind == 2:
            depth += 1
            stack.append([None, []])
        elif kind == 3 and stack and stack[-1][0] is None:
            m = re.search(rf'label=({_QS})', s)
            if m:
                stack[-1][0] = m.group(1)[1:-1]
        elif kind == 4:
            nid = _STMTS[4].match(s).group(1)
            m = re.search(rf'label=({_QS})', s)
            label = m.group(1)[1:-1].encode().decode("unicode_escape") if m else nid
            assert nid not in nodes, f"node {nid} declared twice"
            nodes[nid] = label.split("\n")
            if stack:
                stack[-1][1].append(nid)
        elif kind == 5:
            m = _STMTS[5].match(s)
            edges[(m.group(1), m.group(2))] += 1
        elif kind == 6:
            depth -= 1
            assert depth >= 0, "unbalanced braces"
            if stack:
                label, ids = stack.pop()
                clusters[label] = (stack[-1][0] if stack else None, ids)
                if stack:
                    stack[-1][1].extend(ids)
    assert depth == 0, "unbalanced braces"
    assert not stack
    for a, b in edges:
        assert a in nodes and b in nodes, f"edge {a} -> {b} to an undeclared node"
    return nodes, edges, clusters


def line_marker(path):
    """mark(name) -> 'FILE:LINE', the line of the file at `path` that ends with '# <- name' (exactly one)."""
    here = os.path.basename(path)
    with open(path) as f:
        src = f.read().splitlines()

    def mark(name):
        hits = [i + 1 for i, s in enumerate(src) if s.rstrip().endswith(f"# <- {name}")]
        assert len(hits) == 1, name
        return f"{here}:{hits[0]}"
    return mark
