"""Reading the backward graph from outside the engine: the public traversal API explain/ uses.

A graph is its nodes (``tensor.grad_fn``, each ``node.next_functions`` a tuple of edges
``(node, input_nr)``, ``(None, 0)`` where no gradient flows) down to the AccumulateGrad node of
each leaf.  These functions read it without changing it; only `call_backward` and
`accumulate_grad` compute, and they do what the engine does for one node.

Walking:
  ``iter_nodes(roots)``              every node reachable from `roots` (each once, depth first)
  ``execution_order(roots)``         the same nodes in the order ``backward()`` runs them
  ``nodes_on_path(roots, targets)``  the nodes on some path from `roots` to one of `targets`
  ``dependency_counts(roots, within)``  how many edges lead into each node
Nodes:
  ``sequence_nr(node)``              creation order (PyTorch's ``node._sequence_nr()``)
  ``next_sequence_nr()``             the number the next node will get
  ``is_accumulate_grad(node)``       a leaf's node (its tensor is ``node.variable``)
  ``grad_accumulator(tensor)``       a leaf's AccumulateGrad, if it has been used in a graph
  ``gradient_edge(tensor)``          the edge a gradient for `tensor` arrives at
  ``tensor_at(edge, shape, dtype)``  a zero Tensor whose grad_fn / output_nr are that edge (to name it)
  ``saved_values(node)``             what a node saved for its backward, unchecked
  ``saved_names(node)``              the names of its ``node._saved_<name>`` attributes
  ``is_released(node)``              whether backward freed the saved tensors
Computing:
  ``call_backward(node, grads, ns)`` one node's backward formula on given gradients
  ``accumulate_grad(tensor, grad)``  add an array into ``tensor.grad`` as AccumulateGrad does
"""
import heapq

import numpy as np

from .._tensor import Tensor, _make
from . import graph as _graph
from .graph import AccumulateGrad, next_sequence_nr, edge
from .engine import needed_nodes, _call_node, _accumulate

__all__ = ["iter_nodes", "execution_order", "nodes_on_path", "dependency_counts", "sequence_nr",
           "next_sequence_nr", "is_accumulate_grad", "grad_accumulator", "gradient_edge", "saved_values",
           "saved_names", "is_released", "call_backward", "accumulate_grad", "tensor_at"]


def _start(roots):
    """Roots given as nodes, edges ``(node, nr)`` or tensors -> the list of root nodes."""
    nodes = []
    for r in roots:
        if isinstance(r, Tensor):
            r = gradient_edge(r)[0]
        elif isinstance(r, tuple):
            r = r[0]
        if r is not None:
            nodes.append(r)
    return nodes


# -- walking ----------------------------------------------------------------------------------------
def iter_nodes(roots):
    """Every node reachable from `roots` (nodes, edges or tensors), each once, depth first from the
    first root; AccumulateGrad nodes included.  Iterative: any depth is fine."""
    seen = set()
    stack = _start(roots)[::-1]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        yield node
        for nxt, _ in reversed(node.next_functions):
            if nxt is not None and nxt not in seen:
                stack.append(nxt)


def dependency_counts(roots, within=None):
    """How many edges lead into each node reachable from `roots` (only edges between nodes of
    `within`, when given): the number of gradients the engine waits for before it runs a node."""
    starts = _start(roots)
    deps = {}
    if within is not None:
        for node in list(starts) + [n for n in within if n not in starts]:
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt in within:
                    deps[nxt] = deps.get(nxt, 0) + 1
        return deps
    for node in iter_nodes(starts):
        for nxt, _ in node.next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
    return deps


def execution_order(roots):
    """The nodes reachable from `roots` in the order ``backward()`` from them runs them: a node once
    all its incoming edges have delivered, the highest sequence number first (PyTorch's order;
    AccumulateGrad nodes, 2**64 - 1, run as soon as they are ready; ties break as in the engine)."""
    starts = _start(roots)
    deps = dependency_counts(starts)
    for r in starts:                        # the edges of the engine's virtual root
        deps[r] = deps.get(r, 0) + 1
    order, ready = [], []
    edges = [(r, 0) for r in starts]
    while True:
        for nxt, _ in edges:
            if nxt is None:
                continue
            c = deps[nxt] - 1
            deps[nxt] = c
            if c == 0:
                heapq.heappush(ready, (-nxt._seq, nxt))
        if not ready:
            return order
        node = heapq.heappop(ready)[1]
        order.append(node)
        edges = node.next_functions


def nodes_on_path(roots, targets):
    """The set of nodes on some path from one of `roots` to a node in `targets` (both included)."""
    return needed_nodes(_start(roots), targets)


# -- nodes -----------------------------------------------------------------------------------------
def sequence_nr(node):
    """The node's creation number: later nodes have higher numbers, and the engine runs ready nodes
    highest first.  AccumulateGrad nodes all have 2**64 - 1, as in PyTorch."""
    return node._seq


def is_accumulate_grad(node):
    """Is `node` a leaf's AccumulateGrad?  (Its tensor is ``node.variable``.)"""
    return node.__class__ is AccumulateGrad


def grad_accumulator(tensor):
    """The AccumulateGrad node of a leaf that has been used in a graph (which that graph's edges lead
    to), or None."""
    ref = tensor._acc
    return ref() if ref is not None else None


def gradient_edge(tensor):
    """The edge ``(node, output_nr)`` at which a gradient for `tensor` arrives: its ``grad_fn`` and
    output number, or its AccumulateGrad for a leaf that requires grad (made now if it has none,
    as PyTorch's ``torch.autograd.graph.get_gradient_edge``), or ``(None, 0)``."""
    return edge(tensor)


def tensor_at(edge, shape, dtype):
    """A Tensor of zeros (NumPy `dtype`, `shape`) standing at graph edge ``(node, output_nr)``: its ``grad_fn`` is
    `node`, so it can name what flows there (its grad_fn is read by attribute, never run by this)."""
    node, nr = edge
    return _make(np.zeros(shape, dtype), True, node, nr)


def saved_values(node):
    """What `node` saved for its backward, one entry per saved tensor: ``(value, edge)`` -- a saved
    input gives the Tensor and the edge that produced it (``(grad_fn, output_nr)``, None for a leaf
    or a constant); a saved output gives its array and ``(node, output_nr)``; anything else
    ``(None, None)``.  Versions are not checked; ``()`` once the saved tensors were released."""
    saved = node._saved
    if not saved:
        return ()
    out = []
    for s in saved:
        if isinstance(s, tuple) and len(s) == 2 and isinstance(s[0], Tensor):
            t = s[0]
            fn = t.grad_fn
            out.append((t, (fn, t.output_nr) if fn is not None else None))
        elif isinstance(s, tuple) and len(s) == 4:
            out.append((s[0], (node, s[3])))
        else:
            out.append((None, None))
    return tuple(out)


def saved_names(node):
    """The names of what `node` saved, in order: ``node._saved_<name>`` gives each (checked, as in
    PyTorch: a tensor modified in place or freed raises its error).  Empty names are skipped."""
    return tuple(n for n in (getattr(type(node), "_saved_names", ()) or ()) if n)


def is_released(node):
    """Has backward (without ``retain_graph``) freed this node's saved tensors?  Its backward then
    raises PyTorch's 'Trying to backward through the graph a second time' error."""
    return node._saved is None


# -- computing ---------------------------------------------------------------------------------------
def call_backward(node, grads, ns=None):
    """Run `node`'s backward formula on `grads` (one per node output, None where none arrived) in the
    namespace `ns` (default: NumPy arrays in, arrays out; ``autograd.graph.TEN`` for Tensors) exactly as the
    engine does, anomaly mode included.  Returns one gradient per ``node.next_functions`` entry.
    No hook runs and nothing is released.  Raises the freed-graph error after a release."""
    if ns is None:
        ns = _graph.ARR             # plugged in by ops/namespaces.py: read at call time
    return _call_node(node, list(grads), ns)


def accumulate_grad(tensor, grad):
    """Add gradient array `grad` into leaf `tensor`'s ``.grad`` as its AccumulateGrad would (cast to its
    dtype, summed to its shape, a copy for a first ``.grad``), then run its post-accumulate hooks."""
    _accumulate(tensor, grad, False, _graph.ARR)
