"""A layered (Sugiyama) layout with nested clusters, in pure Python: no Graphviz needed.

    res = layered(ids, size, edges, cluster_of, parent_of, min_width)

1. ranks: cycles are broken by reversing the back edges of a depth-first walk, then each node is
   placed one rank below its lowest parent (longest path from the sources);
2. edges longer than one rank get a chain of dummy nodes (in the innermost cluster holding both
   ends), and a cluster gets a filler node on each rank of its span where it has none, so that
   every cluster is present, as one contiguous run, on every rank it spans;
3. crossing reduction: barycenter sweeps down and up; each rank is sorted by the clusters' keys
   first (one key per cluster for all ranks, so sibling clusters keep one left-to-right order),
   then by the node's barycenter; the order with the fewest crossings is kept;
4. coordinates, bottom-up over the cluster tree: a cluster's items (its own nodes, its child
   clusters as rectangles spanning their ranks) are packed left to right without overlap, each
   pulled toward the items it has edges to; rank heights and the gaps between ranks leave room
   for the clusters' labels and borders.

The result holds rectangles (x, y, w, h; top left) for nodes and clusters and a polyline per edge.
"""

GAP_X = 18          # between neighbours in a rank
GAP_Y = 44          # between ranks (edge labels live here)
PAD = 10            # inside a cluster's border
LABEL_H = 16        # a cluster's label band
MARGIN = 12
DUMMY_W = 8


class Layered:
    """``nodes`` {id: (x, y, w, h)}, ``clusters`` {cluster: (x, y, w, h)}, ``routes`` [points per edge]."""

    def __init__(self, nodes, clusters, routes, width, height, ranks, crossings):
        self.nodes, self.clusters, self.routes = nodes, clusters, routes
        self.width, self.height = width, height
        self.ranks, self.crossings = ranks, crossings


# -- 1. ranks ------------------------------------------------------------------------------------------
def _ranks(n, edges):
    """(rank per node, set of reversed edge indices)."""
    out = [[] for _ in range(n)]
    for k, (s, d) in enumerate(edges):
        out[s].append((d, k))
    state = [0] * n
    rev = set()
    for s0 in range(n):
        if state[s0]:
            continue
        state[s0] = 1
        stack = [(s0, iter(out[s0]))]
        while stack:
            v, it = stack[-1]
            for d, k in it:
                if state[d] == 1:
                    rev.add(k)
                elif state[d] == 0:
                    state[d] = 1
                    stack.append((d, iter(out[d])))
                    break
            else:
                state[v] = 2
                stack.pop()
    succ = [[] for _ in range(n)]
    indeg = [0] * n
    for k, (s, d) in enumerate(edges):
        if k in rev:
            s, d = d, s
        succ[s].append(d)
        indeg[d] += 1
    rank = [0] * n
    queue = [v for v in range(n) if indeg[v] == 0]
    head = 0
    while head < len(queue):
        v = queue[head]
        head += 1
        for d in succ[v]:
            rank[d] = max(rank[d], rank[v] + 1)
            indeg[d] -= 1
            if indeg[d] == 0:
                queue.append(d)
    return rank, rev


# -- the graph with dummies ----------------------------------------------------------------------------
class _G:
    """Working state: per node width / height / rank / cluster; per cluster parent and path."""

    def __init__(self, n, size, rank, cl_of, cparent):
        self.w = [size[v][0] for v in range(n)]
        self.h = [size[v][1] for v in range(n)]
        self.rank = list(rank)
        self.cl = list(cl_of)
        self.cparent = cparent
        self.cpath = []
        for c in range(len(cparent)):
            p = cparent[c]
            self.cpath.append((self.cpath[p] if p >= 0 else []) + [c])
        self.up = [[] for _ in range(n)]
        self.down = [[] for _ in range(n)]

    def add(self, w, h, rank, cl):
        self.w.append(w)
        self.h.append(h)
        self.rank.append(rank)
        self.cl.append(cl)
        self.up.append([])
        self.down.append([])
        return len(self.w) - 1

    def path(self, v):
        c = self.cl[v]
        return self.cpath[c] if c >= 0 else []

    def lca(self, a, b):
        pa, pb = self.path(a), self.path(b)
        c = -1
        for x, y in zip(pa, pb):
            if x != y:
                break
            c = x
        return c


def _expand(g, edges, rev):
    """Dummy chains for long edges (returns the chain per edge, top to bottom) and cluster fillers."""
    chains = []
    for k, (s, d) in enumerate(edges):
        a, b = (d, s) if k in rev else (s, d)
        chain = [a]
        lca = g.lca(a, b)
        for r in range(g.rank[a] + 1, g.rank[b]):
            chain.append(g.add(DUMMY_W, 0, r, lca))
        chain.append(b)
        for u, v in zip(chain, chain[1:]):
            g.down[u].append(v)
            g.up[v].append(u)
        chains.append(chain)
    nc = len(g.cparent)
    present = [set() for _ in range(nc)]
    for v in range(len(g.w)):
        for c in g.path(v):
            present[c].add(g.rank[v])
    g.span = []
    for c in range(nc):
        if not present[c]:
            g.span.append((0, 0))
            continue
        lo, hi = min(present[c]), max(present[c])
        g.span.append((lo, hi))
        for r in range(lo, hi + 1):
            if r not in present[c]:
                g.add(0, 0, r, c)
                for p in g.cpath[c]:
                    present[p].add(r)
    return chains


# -- 3. ordering ---------------------------------------------------------------------------------------
def _crossings(layers, pos, down):
    total = 0
    for r in range(len(layers) - 1):
        pairs = sorted((pos[u], pos[v]) for u in layers[r] for v in down[u])
        seq = [b for _, b in pairs]
        total += _inversions(seq)
    return total


def _inversions(seq):
    """Pairs i < j with seq[i] > seq[j] (merge sort)."""
    if len(seq) < 2:
        return 0
    work = list(seq)
    count = 0
    width = 1
    n = len(work)
    while width < n:
        out = []
        for lo in range(0, n, 2 * width):
            a, b = work[lo:lo + width], work[lo + width:lo + 2 * width]
            i = j = 0
            while i < len(a) and j < len(b):
                if b[j] < a[i]:
                    out.append(b[j])
                    count += len(a) - i
                    j += 1
                else:
                    out.append(a[i])
                    i += 1
            out.extend(a[i:])
            out.extend(b[j:])
        work = out
        width *= 2
    return count


def _normalize(layers, pos):
    for layer in layers:
        m = len(layer)
        for i, v in enumerate(layer):
            pos[v] = (i + 0.5) / m


def _cluster_keys(g, pos):
    """One key per cluster: the mean barycenter (over both neighbour ranks) of the nodes inside."""
    nc = len(g.cparent)
    tot, cnt = [0.0] * nc, [0] * nc
    for v in range(len(g.w)):
        path = g.path(v)
        if not path:
            continue
        nb = g.up[v] + g.down[v]
        b = sum(pos[u] for u in nb) / len(nb) if nb else pos[v]
        for c in path:
            tot[c] += b
            cnt[c] += 1
    return [(tot[c] / cnt[c] if cnt[c] else 0.5, c) for c in range(nc)]


def _order(g, layers, sweeps=14):
    pos = {}
    _normalize(layers, pos)
    best, best_c = None, None
    for it in range(sweeps):
        keys = _cluster_keys(g, pos)
        down_sweep = it % 2 == 0
        # every rank is sorted in every sweep (the first one too, by its own order), so that all ranks
        # follow the same cluster keys: sibling clusters then have one left-to-right order everywhere
        rng = range(len(layers)) if down_sweep else range(len(layers) - 1, -1, -1)
        for r in rng:
            layer = layers[r]
            sort_key = {}
            for v in layer:
                nb = g.up[v] if down_sweep else g.down[v]
                b = sum(pos[u] for u in nb) / len(nb) if nb else pos[v]
                sort_key[v] = [keys[c] for c in g.path(v)] + [(b, pos[v])]
            layer.sort(key=sort_key.__getitem__)
            m = len(layer)
            for i, v in enumerate(layer):
                pos[v] = (i + 0.5) / m
        c = _crossings(layers, pos, g.down)
        if best_c is None or c < best_c:
            best_c, best = c, [list(layer) for layer in layers]
        if best_c == 0:
            break
    return (best, best_c) if best is not None else (layers, 0)


# -- 4. coordinates ------------------------------------------------------------------------------------
def _item(g, v, depth):
    """The item directly inside the container at `depth` (-1: the top level) that holds node v:
    the node itself (>= 0) or a child cluster c (encoded ~c < 0)."""
    path = g.path(v)
    return ~path[depth + 1] if len(path) > depth + 1 else v


def _pack_one(items, cons, width, att_edges, rounds):
    """x per item: left to right without overlap (cons[q]: items left of q), pulled toward neighbours."""
    indeg = {it: 0 for it in items}
    right = {it: [] for it in items}
    for q, ps in cons.items():
        for p in ps:
            right[p].append(q)
            indeg[q] += 1
    topo = [it for it in items if indeg[it] == 0]
    head = 0
    while head < len(topo):
        p = topo[head]
        head += 1
        for q in right[p]:
            indeg[q] -= 1
            if indeg[q] == 0:
                topo.append(q)
    topo.extend(it for it in items if indeg[it] > 0)     # a cycle cannot happen; stay total anyway
    x = {}
    for it in topo:                      # packed to the left
        x[it] = max((x[p] + width[p] + GAP_X for p in cons.get(it, ()) if p in x), default=0.0)
    adj = {}
    for a, oa, b, ob in att_edges:
        adj.setdefault(a, []).append((oa, b, ob))
        adj.setdefault(b, []).append((ob, a, oa))
    inf = float("inf")
    for _ in range(rounds):              # each item moves toward its neighbours within the room it has
        for it in topo:
            nb = adj.get(it)
            if not nb:
                continue
            want = x[it] + sum(x[b] + ob - x[it] - oa for oa, b, ob in nb) / len(nb)
            lb = max((x[p] + width[p] + GAP_X for p in cons.get(it, ()) if p in x), default=-inf)
            ub = min((x[q] - GAP_X for q in right[it]), default=inf) - width[it]
            x[it] = min(max(want, lb), ub)
    lo = min(x.values(), default=0.0)
    return {it: v - lo for it, v in x.items()}


def _pack(items, cons, width, att_edges, rounds=10):
    """The mean of a left-packed and a right-packed placement: both keep the order without overlap, so
    their mean does too, and neither side's bias wins."""
    xl = _pack_one(items, cons, width, att_edges, rounds)
    mirror = {}
    for q, ps in cons.items():
        for p in ps:
            mirror.setdefault(p, []).append(q)
    xm = _pack_one(items[::-1], mirror, width, [(a, width[a] - oa, b, width[b] - ob) for a, oa, b, ob in att_edges],
                   rounds)
    xr = {it: -(xm[it] + width[it]) for it in items}
    lo = min(xr.values(), default=0.0)
    return {it: (xl[it] + xr[it] - lo) / 2 for it in items}


def _place_container(g, depth, cont, nodes, width, rel, sub, sub_clusters, cleft):
    """Place the items of one container (cluster `cont`, or -1 for the top level) holding `nodes` (in rank
    order, then left to right); returns (the width of its content, its items, their order constraints)."""
    items, cons = [], {}
    seen = set()
    prev, prev_rank = None, None
    for v in nodes:
        it = _item(g, v, depth)
        if g.rank[v] != prev_rank:
            prev, prev_rank = None, g.rank[v]
        if it == prev:
            continue
        if it not in seen:
            seen.add(it)
            items.append(it)
        if prev is not None:
            cons.setdefault(it, []).append(prev)
        prev = it
    inside = set(nodes)
    att = []
    for v in nodes:
        a = _item(g, v, depth)
        for u in g.down[v]:
            if u not in inside:
                continue
            b = _item(g, u, depth)
            if a != b:
                att.append((a, rel[v] if a < 0 else g.w[a] / 2, b, rel[u] if b < 0 else g.w[b] / 2))
    x = _pack(items, cons, width, att)
    for it in items:
        if it >= 0:
            rel[it] = x[it] + g.w[it] / 2
        else:
            c = ~it
            for v in sub[c]:
                rel[v] += x[it]
            for c2 in sub_clusters[c]:
                cleft[c2] += x[it]
    return max((x[it] + width[it] for it in items), default=0.0), items, cons


def _coordinates(g, layers, min_width):
    """x centre per node and (left, width) per cluster, bottom-up over the cluster tree."""
    nc = len(g.cparent)
    where = {v: (r, i) for r, layer in enumerate(layers) for i, v in enumerate(layer)}
    every = sorted(range(len(g.w)), key=where.__getitem__)
    sub_nodes = [[] for _ in range(nc)]
    for v in every:
        for c in g.path(v):
            sub_nodes[c].append(v)
    sub_clusters = [[] for _ in range(nc)]
    for c in range(nc):
        for p in g.cpath[c]:
            sub_clusters[p].append(c)
    rel = [0.0] * len(g.w)
    cleft = [0.0] * nc
    width = {v: g.w[v] for v in range(len(g.w))}
    cwidth = [0.0] * nc
    conts = []
    for c in sorted(range(nc), key=lambda c: -len(g.cpath[c])):
        depth = len(g.cpath[c]) - 1
        inner, items, cons = _place_container(g, depth, c, sub_nodes[c], width, rel, sub_nodes, sub_clusters, cleft)
        conts.append((c, items, cons))
        w = max(inner + 2 * PAD, min_width[c])
        off = (w - inner) / 2
        for v in sub_nodes[c]:
            rel[v] += off
        for c2 in sub_clusters[c]:
            if c2 != c:
                cleft[c2] += off
        cwidth[c] = w
        width[~c] = w
    top, items, cons = _place_container(g, -1, -1, every, width, rel, sub_nodes, sub_clusters, cleft)
    conts.append((-1, items, cons))
    xs, cleft = [r + MARGIN for r in rel], [left + MARGIN for left in cleft]
    total = top + 2 * MARGIN
    _refine(g, conts[::-1], xs, cleft, cwidth, width, total, sub_nodes, sub_clusters)
    return xs, cleft, cwidth, total


def _refine(g, conts, xs, cleft, cwidth, width, total, sub_nodes, sub_clusters, rounds=4):
    """Top-down: move each item within the slack its neighbours and its container leave, toward the mean
    position of everything it has edges to -- now inside and outside its container alike."""
    ext = {}
    for c in range(len(g.cparent)):
        inside = set(sub_nodes[c])
        ext[c] = [(v, u) for v in sub_nodes[c] for u in g.up[v] + g.down[v] if u not in inside]

    def left(it):
        return xs[it] - g.w[it] / 2 if it >= 0 else cleft[~it]
    for _ in range(rounds):
        for cont, items, cons in conts:
            lo, hi = (MARGIN, total - MARGIN) if cont < 0 else (cleft[cont] + PAD, cleft[cont] + cwidth[cont] - PAD)
            right = {}
            for q, ps in cons.items():
                for p in ps:
                    right.setdefault(p, []).append(q)
            for it in sorted(items, key=left):
                pairs = [(it, u) for u in g.up[it] + g.down[it]] if it >= 0 else ext[~it]
                if not pairs:
                    continue
                shift = sum(xs[u] - xs[v] for v, u in pairs) / len(pairs)
                lb = max([lo] + [left(p) + width[p] + GAP_X for p in cons.get(it, ())])
                ub = min([hi] + [left(q) - GAP_X for q in right.get(it, ())]) - width[it]
                if lb > ub:
                    continue
                delta = min(max(left(it) + shift, lb), ub) - left(it)
                if it >= 0:
                    xs[it] += delta
                    continue
                for v in sub_nodes[~it]:
                    xs[v] += delta
                for c2 in sub_clusters[~it]:
                    cleft[c2] += delta


def _vertical(g, layers):
    """y of each rank's top, rank heights, and each cluster's top / bottom."""
    nr = len(layers)
    height = [max((g.h[v] for v in layer), default=0) for layer in layers]
    nc = len(g.cparent)
    ds, de = [1] * nc, [1] * nc
    for c in sorted(range(nc), key=lambda c: -len(g.cpath[c])):
        p = g.cparent[c]
        if p >= 0:
            if g.span[p][0] == g.span[c][0]:
                ds[p] = max(ds[p], ds[c] + 1)
            if g.span[p][1] == g.span[c][1]:
                de[p] = max(de[p], de[c] + 1)
    top_need, bot_need = [0] * nr, [0] * nr
    for c in range(nc):
        top_need[g.span[c][0]] = max(top_need[g.span[c][0]], ds[c])
        bot_need[g.span[c][1]] = max(bot_need[g.span[c][1]], de[c])
    ytop = [0.0] * nr
    y = MARGIN + top_need[0] * (LABEL_H + PAD) if nr else MARGIN
    for r in range(nr):
        ytop[r] = y
        if r + 1 < nr:
            y += height[r] + GAP_Y + bot_need[r] * PAD + top_need[r + 1] * (LABEL_H + PAD)
    total = (ytop[-1] + height[-1] + bot_need[-1] * PAD + MARGIN) if nr else 2 * MARGIN
    ctop = [ytop[g.span[c][0]] - ds[c] * (LABEL_H + PAD) for c in range(nc)]
    cbot = [ytop[g.span[c][1]] + height[g.span[c][1]] + de[c] * PAD for c in range(nc)]
    return ytop, height, ctop, cbot, total


def _ports(g, chains, xs):
    """x of each edge's ends: the edges meeting a node side by side, ordered by where they come from."""
    ends = {}
    for k, chain in enumerate(chains):
        a, b = chain[0], chain[-1]
        ends.setdefault((a, 1), []).append((xs[chain[1]], k, 0))
        ends.setdefault((b, 0), []).append((xs[chain[-2]], k, 1))
    port = {}
    for (v, _), lst in ends.items():
        lst.sort()
        m = len(lst)
        span = min(g.w[v] * 0.6, (m - 1) * 9.0)
        for i, (_, k, end) in enumerate(lst):
            port[(k, end)] = xs[v] + (-span / 2 + i * span / (m - 1) if m > 1 else 0.0)
    return port


def _route(g, k, chain, xs, port, ytop, height, node_y):
    """Points of an edge from the bottom of its upper end to the top of its lower end."""
    a, b = chain[0], chain[-1]
    pts = [(port[(k, 0)], node_y[a] + g.h[a])]
    for d in chain[1:-1]:
        r = g.rank[d]
        pts.append((xs[d], ytop[r]))
        pts.append((xs[d], ytop[r] + height[r]))
    pts.append((port[(k, 1)], node_y[b]))
    return pts


def layered(ids, size, edges, cluster_of, parent_of, min_width):
    """Lay out nodes `ids` (size {id: (w, h)}) with `edges` [(src id, dst id)], drawn top to bottom.

    cluster_of {id: cluster or None}; parent_of {cluster: parent cluster or None} (every cluster that
    holds a node and all their ancestors); min_width {cluster: least width (its label)}.
    """
    index = {v: i for i, v in enumerate(ids)}
    def depth(c):
        k = 0
        while parent_of[c] is not None:
            c, k = parent_of[c], k + 1
        return k
    clusters = sorted(parent_of, key=depth)      # parents before children
    cindex = {c: i for i, c in enumerate(clusters)}
    cparent = [cindex[parent_of[c]] if parent_of[c] is not None else -1 for c in clusters]
    n = len(ids)
    e = [(index[s], index[d]) for s, d in edges]
    rank, rev = _ranks(n, e)
    g = _G(n, [size[v] for v in ids], rank, [cindex[cluster_of[v]] if cluster_of.get(v) is not None else -1
                                             for v in ids], cparent)
    chains = _expand(g, e, rev)
    nr = max(g.rank, default=-1) + 1
    layers = [[] for _ in range(nr)]
    for v in range(len(g.w)):
        layers[g.rank[v]].append(v)
    layers, crossings = _order(g, layers)
    xs, cleft, cwidth, total_w = _coordinates(g, layers, [min_width.get(c, 0) for c in clusters])
    ytop, height, ctop, cbot, total_h = _vertical(g, layers)
    node_y = [ytop[g.rank[v]] + (height[g.rank[v]] - g.h[v]) / 2 for v in range(len(g.w))]
    nodes = {ids[v]: (xs[v] - g.w[v] / 2, node_y[v], g.w[v], g.h[v]) for v in range(n)}
    crects = {c: (cleft[i], ctop[i], cwidth[i], cbot[i] - ctop[i]) for i, c in enumerate(clusters)}
    routes = []
    port = _ports(g, chains, xs)
    for k, chain in enumerate(chains):
        pts = _route(g, k, chain, xs, port, ytop, height, node_y)
        routes.append(pts[::-1] if k in rev else pts)
    return Layered(nodes, crects, routes, total_w, total_h, nr, crossings)
