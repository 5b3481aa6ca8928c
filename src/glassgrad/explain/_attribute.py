"""Per-loss attribution: split every parameter's gradient by the loss term it came from.

    att = explain.attribute({"tr": loss_tr, "tcl": loss_tcl}, model)
    print(att.table())                # per parameter: each term's gradient norm, share, cosines
    att.grads["predict.1.weight", "tr"]

How: ONE walk of the backward graph from all the terms' roots together (dependency counts over
the union of their graphs, nodes run in PyTorch's order, like ``autograd/engine.py``).  Each node
carries a small dict ``{term: gradient}`` of only the terms that reach it.  Where a node's class is
known to be safe (see ``_attribute_stack.py``) the K terms' gradients are stacked along a new
leading axis and its backward runs once ("stacked cotangent"); otherwise it runs once per term.

Nothing in the user's graph is changed: saved tensors stay (their own ``backward`` still works),
``.grad`` is untouched unless ``accumulate=True``, and no hook of theirs runs (tensor hooks,
``retain_grad`` and node hooks would see a single term's gradient).
"""
import heapq
import itertools

import numpy as np

from .._tensor import Tensor
from ..autograd.graph import AccumulateGrad
from ..autograd.grad_mode import state
from ..autograd.traversal import (accumulate_grad, call_backward, dependency_counts, grad_accumulator,
                                  is_released, nodes_on_path, sequence_nr)
from ..ops.namespaces import ARR
from ._attribute_stack import StackNS, stacked_call, rule_for

__all__ = ["attribute", "Attribution"]


# -- gradient slots: one per (node, output nr) ------------------------------------------------------
class _Slot:
    """The gradients waiting at one output of a node: a stacked block (terms, array (K, ...)) while
    everything came stacked for the same terms, else a dict {term: array}."""
    __slots__ = ("terms", "arr", "d")

    def __init__(self):
        self.terms = None
        self.arr = None
        self.d = None

    def _to_dict(self):
        if self.arr is not None:
            self.d = {t: self.arr[i] for i, t in enumerate(self.terms)}
            self.arr = self.terms = None
        elif self.d is None:
            self.d = {}

    def add_stacked(self, terms, arr):
        if self.d is None and self.arr is None:
            self.terms, self.arr = terms, arr
        elif self.arr is not None and self.terms == terms and self.arr.shape == arr.shape:
            self.arr = self.arr + arr
        else:
            self._to_dict()
            d = self.d
            for i, t in enumerate(terms):
                old = d.get(t)
                d[t] = arr[i] if old is None else old + arr[i]

    def add(self, t, g):
        self._to_dict()
        old = self.d.get(t)
        self.d[t] = g if old is None else old + g

    def keys(self):
        return self.terms if self.arr is not None else tuple(self.d) if self.d else ()

    def get(self, t):
        if self.arr is not None:
            return self.arr[self.terms.index(t)] if t in self.terms else None
        return None if self.d is None else self.d.get(t)

    def shape(self):
        if self.arr is not None:
            return self.arr.shape[1:]
        if self.d:
            return next(iter(self.d.values())).shape
        return None


class _Root:
    """The virtual root: one edge per term."""
    __slots__ = ("next_functions",)

    def __init__(self, edges):
        self.next_functions = edges


# -- the traversal -------------------------------------------------------------------------------------
def _traverse(root_edges, seeds, captures, stack_ok=True):
    """Backpropagate term k's seed from root_edges[k] through the union of the graphs.

    captures: {(node, nr)} whose per-term gradients are wanted.  Returns
    ({(node, nr): {term: array}}, {node: reach bitmask}, stats)."""
    walk = _Walk(root_edges, captures, stack_ok)
    prev = state.enabled
    state.enabled = False
    err = np.errstate(all="ignore")
    err.__enter__()
    try:
        walk.run(seeds)
    finally:
        state.enabled = prev
        err.__exit__(None, None, None)
    return walk.out, walk.reach, walk.stats


class _Walk:
    """One walk of the union of the terms' graphs: the nodes on a path to a capture, each run once all
    its incoming gradients arrived, in PyTorch's order (the public traversal API gives the graph)."""

    def __init__(self, root_edges, captures, stack_ok):
        self.captures = captures
        self.stack_ok = stack_ok
        targets = {n for n, _ in captures}
        self.needed = nodes_on_path([e[0] for e in root_edges if e[0] is not None], targets)
        self.root_edges = root_edges
        self.root = _Root(tuple(e if e[0] in self.needed else (None, 0) for e in root_edges))
        self.deps = dependency_counts([self.root], within=self.needed)
        self.slots = {}          # node -> [Slot per output nr]
        self.reach = {}          # node -> bitmask of the terms whose graph reaches it
        self.out = {}
        self.stats = {"nodes": 0, "stacked": 0, "looped": 0, "fallback": {}, "unlisted": {}, "stacked_by": {}}
        self.ns_cache = {}
        self.counter = itertools.count()
        self.ready = []

    def run(self, seeds):
        root_edges, needed, reach = self.root_edges, self.needed, self.reach
        # the root hands each term its seed
        for k, e in enumerate(root_edges):
            if e[0] is not None and e[0] in needed:
                reach[e[0]] = reach.get(e[0], 0) | (1 << k)
        n = len(root_edges)
        self.give(self.root, {k: [seeds[k] if j == k else None for j in range(n)] for k in range(n)}, None, None)
        ready = self.ready
        while ready:
            self.run_node(heapq.heappop(ready)[2])

    def child_shape(self, nxt, nr):
        if nxt.__class__ is AccumulateGrad:
            return nxt.variable._data.shape
        sl = self.slots.get(nxt)
        return None if sl is None or sl[nr] is None else sl[nr].shape()

    def give(self, node, outs_per_term, stacked, terms):
        """Add what `node` hands on (per term, or one stacked block for `terms`) into its children's slots;
        a child whose count reaches zero is ready."""
        needed, reach, slots, deps = self.needed, self.reach, self.slots, self.deps
        mask = reach.get(node, 0)
        for i, (nxt, nr) in enumerate(node.next_functions):
            if nxt is None or nxt not in needed:
                continue
            reach[nxt] = reach.get(nxt, 0) | mask
            sl = slots.get(nxt)
            if sl is None:
                sl = slots[nxt] = [None] * nxt.n_outputs
            s = sl[nr]
            if stacked is not None:
                g = stacked[i]
                if g is not None:
                    if s is None:
                        s = sl[nr] = _Slot()
                    s.add_stacked(terms, g)
            else:
                for t, gs in outs_per_term.items():
                    g = gs[i]
                    if g is not None:
                        if s is None:
                            s = sl[nr] = _Slot()
                        s.add(t, g)
            c = deps[nxt] - 1
            deps[nxt] = c
            if c == 0:
                heapq.heappush(self.ready, (-sequence_nr(nxt), next(self.counter), nxt))

    def run_node(self, node):
        """Capture what arrived at `node`, then run its backward for the terms that reached it: once on
        their stacked gradients where its rule allows, else once per term."""
        stats = self.stats
        stats["nodes"] += 1
        sl = self.slots.pop(node, None) or [None] * node.n_outputs
        for nr in range(node.n_outputs):
            if (node, nr) in self.captures:
                s = sl[nr]
                self.out[(node, nr)] = {t: s.get(t) for t in s.keys()} if s is not None else {}
        if node.__class__ is AccumulateGrad:
            return
        if not any(n is not None and n in self.needed for n, _ in node.next_functions):
            return
        terms = sorted({t for s in sl if s is not None for t in s.keys()})
        if not terms:
            self.give(node, {}, None, None)
            return
        stacked = self.stacked(node, sl, terms)
        if stacked is not None:
            self.give(node, None, stacked, tuple(terms))
            return
        per = {}
        for t in terms:
            grads = [None if s is None else s.get(t) for s in sl]
            if all(g is None for g in grads):
                continue
            per[t] = call_backward(node, grads, ARR)
        stats["looped"] += 1
        self.give(node, per, None, None)

    def stacked(self, node, sl, terms):
        """`node`'s input gradients for all `terms` from one stacked call, or None (and why, in stats)."""
        if not (self.stack_ok and len(terms) > 1 and not state.anomaly and not is_released(node)):
            return None
        stats = self.stats
        nm = type(node).__name__
        if node.n_outputs != 1 or rule_for(node) is None:       # not on the whitelist: one call per term
            stats["unlisted"][nm] = stats["unlisted"].get(nm, 0) + 1
            return None
        stacked = _try_stacked(node, sl[0], tuple(terms), self.ns_cache, self.child_shape)
        if stacked is None:              # a whitelisted node whose stacked call failed its checks
            stats["fallback"][nm] = stats["fallback"].get(nm, 0) + 1
            return None
        stats["stacked"] += 1
        sb = stats["stacked_by"]
        sb[nm] = sb.get(nm, 0) + 1
        return stacked


def _try_stacked(node, slot, terms, ns_cache, child_shape):
    if slot.arr is not None and slot.terms == terms:
        g = slot.arr
    else:
        parts = [slot.get(t) for t in terms]
        if any(p is None for p in parts):
            return None
        if len({p.shape for p in parts}) != 1 or len({p.dtype for p in parts}) != 1:
            return None
        g = np.stack(parts)
    K = len(terms)
    ns = ns_cache.get(K)
    if ns is None:
        ns = ns_cache[K] = StackNS(K)
    return stacked_call(node, ns, g, g.shape[1:], child_shape)


# -- the public function ----------------------------------------------------------------------------------
def _param_items(model, params):
    if params is not None:
        if isinstance(params, dict):
            return list(params.items())
        return [(f"param{i}", p) for i, p in enumerate(params)]
    if model is not None:
        return list(model.named_parameters())
    return None


def attribute(terms, model=None, *, params=None, accumulate=False, _stack=True):
    """Split each parameter's gradient by loss term, in one traversal of the graph.

    terms: {name: scalar loss} (or a list: names "term0", "term1", ...).  Parameters come from
    ``model.named_parameters()`` or `params` (a dict name -> tensor, or a list); with neither, every
    leaf that requires grad and is reached is used ("leaf0", ...).  The user's ``.grad`` is left
    untouched unless ``accumulate=True``: then the total is added to it, as ``sum(terms).backward()``
    would (their hooks do not run).
    """
    names, values = _named_terms(terms)
    edge_of = _Edges()
    root_edges, seeds = _roots(names, values, edge_of)
    items = _param_items(model, params)
    if items is None:
        items = _reached_leaves(root_edges)
    pnames = [n for n, _ in items]
    ptensors = [p for _, p in items]
    keys = []
    for p in ptensors:
        if not isinstance(p, Tensor):
            raise TypeError(f"attribute(): parameters must be Tensors, not {type(p).__name__}")
        keys.append(edge_of(p))
    out, reach, stats = _traverse(root_edges, seeds, {k for k in keys if k is not None}, stack_ok=_stack)
    grads, reachable, arrays = _param_grads(names, pnames, ptensors, keys, out, reach)
    att = Attribution(names, pnames, grads, reachable, arrays, stats)
    if accumulate:
        for pn, p, key in zip(pnames, ptensors, keys):
            if key is None or key[0].__class__ is not AccumulateGrad:
                continue
            if any(reachable[(pn, tn)] and (k in out.get(key, {})) for k, tn in enumerate(names)):
                accumulate_grad(p, att._total_array(pn))
    return att


def _named_terms(terms):
    """The loss terms' names and tensors."""
    if isinstance(terms, dict):
        names = [str(k) for k in terms]
        values = list(terms.values())
    elif isinstance(terms, (list, tuple)):
        names = [f"term{i}" for i in range(len(terms))]
        values = list(terms)
    elif isinstance(terms, Tensor):
        names, values = ["term0"], [terms]
    else:
        raise TypeError(f"attribute(): terms must be a dict of name -> loss or a list, not {type(terms).__name__}")
    if not names:
        raise ValueError("attribute(): no loss terms given")
    return names, values


class _Edges:
    """The edge a tensor's gradient arrives at: ``(grad_fn, output_nr)``, or its leaf's AccumulateGrad
    (a temporary one for a leaf never used in a graph, so that nothing is attached to it), or None."""

    def __init__(self):
        self.temp_acc = {}

    def acc_of(self, t):
        a = grad_accumulator(t)
        if a is None:
            a = self.temp_acc.get(id(t))
            if a is None:
                a = self.temp_acc[id(t)] = AccumulateGrad(t)
        return a

    def __call__(self, t):
        if t._grad_fn is not None:
            return (t._grad_fn, t._out_nr)
        if t._rg:
            return (self.acc_of(t), 0)
        return None


def _roots(names, values, edge_of):
    """One root edge and seed (ones) per term; ``(None, 0)`` and None for a constant term."""
    root_edges, seeds = [], []
    for nm, v in zip(names, values):
        if not isinstance(v, Tensor) or not v._rg:
            root_edges.append((None, 0))       # a constant term (0.0, or computed without grad): reaches nothing
            seeds.append(None)
            continue
        if v._data.size != 1:
            raise RuntimeError(f"grad can be implicitly created only for scalar outputs (term '{nm}' has shape "
                               f"{list(v._data.shape)})")
        root_edges.append(edge_of(v))
        seeds.append(np.ones(v._data.shape, v._data.dtype, like=v._data))
    return root_edges, seeds


def _shared(g):
    """Whether `g` may share its elements (a broadcast view): NumPy marks those read-only; device arrays have
    no such flag, so any non-contiguous one counts."""
    if g.__class__ is np.ndarray:
        return not g.flags.writeable
    return not (g.flags.c_contiguous or g.flags.f_contiguous)


def _param_grads(names, pnames, ptensors, keys, out, reach):
    """Per (parameter, term): its gradient as a Tensor of the parameter's dtype and shape (zeros where the
    term gave none), whether the term's graph reaches it, and the arrays behind the Tensors."""
    grads, reachable, arrays = {}, {}, {}
    handed = set()      # arrays already given to a parameter (one array may reach two edges)
    for pn, p, key in zip(pnames, ptensors, keys):
        got = out.get(key, {}) if key is not None else {}
        mask = reach.get(key[0], 0) if key is not None else 0
        for k, tn in enumerate(names):
            g = got.get(k)
            reachable[(pn, tn)] = bool(mask >> k & 1)
            if g is None:
                a = np.zeros(p._data.shape, p._data.dtype, like=p._data)
            else:
                if g.dtype != p._data.dtype:
                    g = g.astype(p._data.dtype)
                if g.shape != p._data.shape:
                    g = ARR.sum_to(g, p._data.shape)
                # the traversal's own arrays: copy only read-only (broadcast) views and repeats
                a = g.copy() if _shared(g) or id(g) in handed else g
                handed.add(id(a))
            arrays[(pn, tn)] = a
            grads[(pn, tn)] = ARR.to_tensor(a)
    return grads, reachable, arrays


def _reached_leaves(root_edges):
    seen, leaves = set(), []
    stack = [n for n, _ in root_edges if n is not None]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.__class__ is AccumulateGrad:
            leaves.append(n.variable)
        stack.extend(m for m, _ in n.next_functions if m is not None)
    return [(f"leaf{i}", t) for i, t in enumerate(leaves)]


from ._attribute_view import Attribution  # noqa: E402
