"""The backward engine: dependency counts + a ready queue ordered like PyTorch's.

``run_backward`` is the one entry point for both ``Tensor.backward`` (accumulate into
``.grad``) and ``autograd.grad`` (capture the gradients of ``inputs``, touch no ``.grad``).

The phases, each a named function:

1. Targets (``_targets``, only for ``autograd.grad`` / ``backward(inputs=...)``): where each wanted
   gradient is captured, and the nodes on a path to them (``needed_nodes``).
2. Dependency counting (``_dependencies``): how many edges lead into each node (the needed ones).
3. Running (``_run``): pop ready nodes (all their incoming gradients summed) in decreasing sequence
   number -- the order PyTorch uses, so hooks fire and float sums add up in the same order -- run each
   (``_run_node``: hooks, capture, backward, post-hooks, release) and add what it returns into the
   children's buffers.  AccumulateGrad nodes all have sequence number UINT64_MAX as in PyTorch;
   ``heapq`` uses the same sift algorithm as libstdc++'s priority_queue, so ties among them break the
   same way.
4. Pruning (``_wanted``): with targets, a node whose children lead to none of them does not run.
5. Accumulating (``_accumulate_leaf`` / ``_accumulate``): an AccumulateGrad adds into ``.grad``,
   adopting the gradient array without a copy when nobody else holds it (``_Held``).

Hooks, in PyTorch's order: tensor hooks (a leaf's hooks are AccumulateGrad's tensor
pre-hooks), retain_grad, then Node pre-hooks; the gradient is captured for autograd.grad;
the backward runs; then Node post-hooks.  Hook results are checked with torch's messages.

Gradients flow as raw arrays; with ``create_graph=True`` they flow as Tensors, and each
backward runs through glassgrad's own differentiable ops (see ``ops/namespaces.py``).  Nothing
here recurses, so a 100,000-op chain is fine.
"""
import heapq
import itertools as _itertools

import numpy as _np

from . import graph as _graph
from .graph import AccumulateGrad, GraphRoot, check_guards, freed_error
from .grad_mode import state
from .anomaly import run_with_anomaly
from .. import backend as _backend
from .._dtype import _FROM_NP
from .._tensor import Tensor, _make, element_strides as _element_strides
from .. import _memory_format as _mf
from .._sparse_coo import COO as _COO, CSR as _CSR, steal as _steal
from .._sparse_tensor import make_sparse as _make_sparse

_heappush, _heappop = heapq.heappush, heapq.heappop


def _namespaces():
    """(ARR, TEN): the backward namespaces, which ops/namespaces.py plugs into autograd.graph (use_namespaces)."""
    return _graph.ARR, _graph.TEN


def run_backward(roots, grad_roots, keep_graph, create_graph, inputs=None, allow_unused=True,
                 accumulate=True):
    """Backpropagate from `roots` (edges ``(node, nr)``) seeded with `grad_roots`.

    If `inputs` is a sequence of Tensors, returns their gradients (a list, None where no
    gradient reached them) and -- if `accumulate` -- also accumulates into their ``.grad``
    (``backward(inputs=...)``); otherwise accumulates into every reachable leaf.
    """
    ARR, TEN = _namespaces()
    root = GraphRoot(tuple(roots), grad_roots)
    watch = state.watching     # explain.watch / nan_watch observer (explain/_watch.py), normally None
    if watch is not None:
        watch.on_backward_begin(root)
    run = _Backward(TEN if create_graph else ARR, keep_graph, create_graph, accumulate, watch)
    if inputs is not None:       # 1. targets: what autograd.grad captures, and the nodes that lead there
        run.captures, run.needed, run.results = _targets(root, inputs)
    deps = _dependencies(root, run.needed)           # 2. how many gradients each node waits for
    run.held = _Held(root.grads, watch is None)      # explain observing: never adopt an array
    prev_grad_mode = state.enabled
    state.enabled = bool(create_graph)
    errstate = _np.errstate(all="ignore")    # torch never warns about inf/nan in a backward
    errstate.__enter__()
    TASKS.append((next(_task_ids), inputs is None, deps, run.needed, accumulate))
    try:
        _run(root, deps, run)                        # 3. run the nodes (4. pruning, 5. accumulating)
    finally:
        TASKS.pop()
        state.enabled = prev_grad_mode
        errstate.__exit__(None, None, None)
        if watch is not None:
            watch.on_backward_end()
    return run.results


# the backward calls running now, innermost last: (graph task id, may a reentrant checkpoint run in it --
# torch's can_checkpoint(): not under autograd.grad or backward(inputs=...) --, the dependency counts, the
# needed nodes or None, False under autograd.grad); utils.checkpoint and graph.register_multi_grad_hook read them
TASKS = []
_task_ids = _itertools.count()


def current_graph_task_id():
    """torch._C._current_graph_task_id(): the id of the innermost running backward, -1 outside one."""
    return TASKS[-1][0] if TASKS else -1


def is_checkpoint_valid():
    """torch.autograd._is_checkpoint_valid(): False inside autograd.grad or backward(inputs=...)."""
    return TASKS[-1][1] if TASKS else True


def will_execute(node):
    """torch._C._will_engine_execute_node: will the running backward run `node` (reachable from its roots and,
    under autograd.grad / backward(inputs=...), on a path to an input)?"""
    if not TASKS:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    _, _, deps, needed, accumulate = TASKS[-1]
    if not accumulate and node.__class__ is AccumulateGrad and node in needed:
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                           "autograd.grad(). This is currently not supported.")
    return node in needed if needed is not None else node in deps


class _Backward:
    """What one backward call carries into its phases: the namespace `ns`, the targets of autograd.grad
    (`captures` -> `results`, `needed` nodes; None for a plain backward), its flags, explain's observer
    and the arrays held elsewhere (`held`)."""
    __slots__ = ("ns", "keep_graph", "create_graph", "accumulate", "watch", "anomaly", "captures", "needed",
                 "results", "held")

    def __init__(self, ns, keep_graph, create_graph, accumulate, watch):
        self.ns = ns
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.accumulate = accumulate
        self.watch = watch
        self.anomaly = state.anomaly
        self.captures = self.needed = self.results = None
        self.held = None


def _run(root, deps, run):
    """Phase 3: nodes in decreasing sequence number (PyTorch's order), each once all its incoming
    gradients arrived.  Each node runs (`_run_node`); what it hands on is added into its children's
    buffers (``old + g``), and a child whose count reaches zero is pushed on the ready heap."""
    needed = run.needed
    ns = run.ns
    keep_graph = run.keep_graph
    # no targets, capture, anomaly, watch or profiler: a node without hooks needs only its backward call and release
    plain = (needed is None and run.captures is None and not run.anomaly and run.watch is None
             and not state.profiling)
    buffers = {}
    ready = [(-root._seq, root)]
    while ready:
        node = _heappop(ready)[1]
        if node is root:
            out_grads = root.grads
        else:
            grads = buffers.pop(node, None)
            if grads is None:
                grads = [None] * node.n_outputs
            g0 = grads[0]
            if (plain and g0 is not None and node._hooks is None and node.n_outputs == 1
                    and node._saved is not None and node._guards is None and node.__class__ is not AccumulateGrad):
                out_grads = node.backward(ns, g0)       # the usual case of _run_node, inlined (hot loop)
                if not keep_graph:
                    node._release()
            else:
                out_grads = _run_node(node, grads, run)
        for (nxt, nr), g in zip(node.next_functions, out_grads):
            if nxt is None:
                continue
            if needed is not None and nxt not in needed:
                continue
            if g is not None:
                buf = buffers.get(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * nxt.n_outputs
                old = buf[nr]
                buf[nr] = g if old is None else old + g
            c = deps[nxt] - 1
            deps[nxt] = c
            if c == 0:
                _heappush(ready, (-nxt._seq, nxt))


def _run_node(node, grads, run):
    """Running one node: a leaf's tensor hooks, then the node's tensor hooks, retain_grad and pre-hooks
    (`_call_pre_hooks`), the capture for autograd.grad, the backward call, post-hooks, explain's
    observation point and the release of saved tensors (unless retain_graph).  Returns the gradients it
    hands to ``node.next_functions`` -- ``()`` when it hands on nothing (pruned, or an AccumulateGrad)."""
    ns = run.ns
    is_acc = node.__class__ is AccumulateGrad
    execute = run.needed is None or _wanted(node, is_acc, run)      # 4. pruning
    if is_acc:
        extra = node.variable._extra
        if extra is not None and grads[0] is not None:
            th = extra.get("hooks")     # a leaf's tensor hooks: AccumulateGrad's tensor pre-hooks
            if th:
                grads = [_run_tensor_hooks(th, grads[0], ns)]
                run.held.hold(grads[0])
    hooks = node._hooks
    if hooks is not None:
        grads = _call_pre_hooks(node, hooks, grads, ns, execute)
        run.held.hold_all(grads)
    if run.captures is not None:
        _capture(node, grads, run)
    if not execute:
        return ()
    if is_acc:
        _accumulate_leaf(node, grads, hooks, run)                      # 5. accumulating
        return ()
    if node._guards is not None and any(g is not None for g in grads):
        check_guards(node)                  # its index tensors unchanged since the forward (torch's version check)
    if node.n_outputs == 1:
        g0 = grads[0]
        if g0 is None:
            out_grads = (None,) * len(node.next_functions)    # no gradient reached this node
        elif run.anomaly or node._saved is None:
            out_grads = _call_node(node, grads, ns)
        else:
            out_grads = node.backward(ns, g0)                # the usual case, inlined
    else:
        for g in grads:
            if g is not None:
                out_grads = _call_node(node, grads, ns)
                break
        else:
            out_grads = (None,) * len(node.next_functions)
    if hooks is not None and hooks.post:
        out_grads = _call_post_hooks(node, hooks, out_grads, grads, ns)
    watch = run.watch
    if watch is not None:      # explain observation point: this node's gradients in and out
        watch.on_node(node, grads, out_grads)
    if not run.keep_graph:
        node._release()
    return out_grads


def _wanted(node, is_acc, run):
    """Phase 4, pruning (autograd.grad / backward(inputs=...)): does `node` run its backward?  Only when
    one of its children lies on a path to a target; an AccumulateGrad only when backward(inputs=...)
    accumulates into that leaf.  (Hooks and the capture still see the gradient of a node that does not.)"""
    needed = run.needed
    return (any(n is not None and n in needed for n, _ in node.next_functions)
            or (is_acc and (run.captures is None or (run.accumulate and (node, 0) in run.captures))))


def _capture(node, grads, run):
    """autograd.grad: the gradients arriving at a captured edge of `node` are the results."""
    captures, results = run.captures, run.results
    for nr in range(node.n_outputs):
        idxs = captures.get((node, nr))
        if idxs is not None:
            for i in idxs:
                results[i] = grads[nr]
                run.held.hold(grads[nr])


def _accumulate_leaf(node, grads, hooks, run):
    """Phase 5, accumulating: an AccumulateGrad adds its gradient into the leaf's ``.grad`` (adopting the
    array when nobody else holds it), then its post-hooks run."""
    g0 = grads[0]
    if g0 is not None:
        _accumulate(node.variable, g0, run.create_graph, run.ns, run.held.adopt(g0))
    if hooks is not None and hooks.post:
        _call_post_hooks(node, hooks, (), grads, run.ns)


def _dependencies(root, needed=None):
    """Phase 2: how many edges lead into each node reachable from `root` (restricted to `needed` nodes when
    given): a node runs once all of them have delivered their gradient."""
    deps = {}
    if needed is not None:
        for node in needed:
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt in needed:
                    deps[nxt] = deps.get(nxt, 0) + 1
        return deps
    stack = [root]
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            c = deps.get(nxt)
            if c is None:
                deps[nxt] = 1
                stack.append(nxt)
            else:
                deps[nxt] = c + 1
    return deps


def _targets(root, inputs):
    """Phase 1 (autograd.grad / backward(inputs=...)): where each input's gradient is captured -- the edge
    ``(node, nr)`` that produced it, or its AccumulateGrad -- and the nodes on a path from `root` to one of
    them.  Returns (captures: edge -> indices into results, needed nodes, results list)."""
    captures = {}
    for i, t in enumerate(inputs):
        if isinstance(t, tuple):            # a GradientEdge (graph.get_gradient_edge): (node, output_nr, token)
            captures.setdefault((t[0], t[1]), []).append(i)
            continue
        fn = t._grad_fn
        if fn is not None:
            key = (fn, t._out_nr)
        else:
            acc = t._acc() if t._acc is not None else None
            if acc is None:
                continue      # this leaf was never used in a graph
            key = (acc, 0)
        captures.setdefault(key, []).append(i)
    return captures, needed_nodes([root], {k[0] for k in captures}), [None] * len(inputs)


def needed_nodes(roots, targets):
    """Nodes on some path from one of the nodes `roots` to a node in `targets` (iterative post-order).
    Used by autograd.grad and by explain.attribute."""
    needed = set()
    done = set()
    stack = [(r, 0) for r in roots]
    while stack:
        node, i = stack.pop()
        nf = node.next_functions
        if i < len(nf):
            stack.append((node, i + 1))
            nxt = nf[i][0]
            if nxt is not None and nxt not in done:
                stack.append((nxt, 0))
            continue
        if node in done:
            continue
        done.add(node)
        if node in targets or any(n is not None and n in needed for n, _ in nf):
            needed.add(node)
    return needed


def _call_node(node, grads, ns):
    if state.anomaly:
        return run_with_anomaly(node, grads, ns)
    if node._saved is None:
        raise freed_error()
    if node.n_outputs == 1:
        return node.backward(ns, grads[0])
    return node.backward(ns, grads)


def _hook_name(fn):
    return getattr(fn, "__name__", "<unknown>")


def _check_one(fn, orig, r, ns):
    """PyTorch's checks on one value a hook returned (orig: the value it replaces)."""
    if r is None:
        return None
    if orig is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(r, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    o = ns.data(orig)
    if r._data.dtype != o.dtype:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the type of value (was "
                           f"torch.{_FROM_NP[o.dtype]._legacy} got torch.{_FROM_NP[r._data.dtype]._legacy})")
    if r._data.shape != o.shape:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the size of value")
    return ns.from_tensor(r)


def _check_tuple(fn, origs, r, ns):
    if not isinstance(r, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
    if len(r) != len(origs):
        raise RuntimeError(f"hook '{_hook_name(fn)}' has returned an incorrect number of values (got {len(r)}, "
                           f"but expected {len(origs)})")
    return [_check_one(fn, o, v, ns) for o, v in zip(origs, r)]


def _run_tensor_hooks(fns, g, ns):
    for fn in tuple(fns.values()):
        r = fn(ns.to_tensor(g))
        if r is not None:
            g = _check_one(fn, g, r, ns)
    return g


def _call_pre_hooks(node, hooks, grads, ns, execute=True):
    """Tensor hooks, then retain_grad, then (if the node runs) the node's pre-hooks -- torch's order."""
    grads = list(grads)
    for nr, fns in hooks.tensor_pre.items():
        if grads[nr] is not None:
            grads[nr] = _run_tensor_hooks(fns, grads[nr], ns)
    for nr, t in hooks.retain.items():
        g = grads[nr]
        if g is not None:
            _retain(t, g, ns)
    if hooks.pre and execute:
        for fn in tuple(hooks.pre.values()):
            r = fn(tuple(ns.to_tensor(g) for g in grads))
            if r is not None:
                grads = _check_tuple(fn, grads, r, ns)
    return grads


def _call_post_hooks(node, hooks, out_grads, grads, ns):
    for fn in tuple(hooks.post.values()):
        r = fn(tuple(ns.to_tensor(g) for g in out_grads), tuple(ns.to_tensor(g) for g in grads))
        if r is not None:
            out_grads = _check_tuple(fn, out_grads, r, ns)
    return out_grads


def _retain(t, g, ns):
    """retain_grad(): a non-leaf keeps (and accumulates) its gradient like a leaf."""
    if ns.is_tensor_mode:
        g = ns.to_tensor(g)
        t._grad = g if t._grad is None else t._grad + g
    else:
        wrap = _make_sparse if isinstance(g, _COO) else _make
        t._grad = wrap(g.copy()) if t._grad is None else wrap(t._grad._data + g)


class _Held:
    """Buffer adoption.  The gradient arrays some other party may still hold (the caller's seeds, hook
    inputs and results, captured results, arrays already given to a leaf) -- and the arrays owning their
    memory -- by id.  AccumulateGrad copies these; any other fresh array it may adopt as the leaf's first
    .grad without a copy (PyTorch steals them too).  With `adopting` False (explain is observing) it
    adopts nothing."""
    __slots__ = ("ids",)

    def __init__(self, seeds, adopting):
        self.ids = set() if adopting else None
        self.hold_all(seeds)

    def hold(self, g):
        """Mark gradient array `g` (and the array owning its memory) as held by someone else."""
        ids = self.ids
        if ids is not None and g is not None:
            ids.add(id(g))
            base = getattr(g, "base", None)
            if base is not None:
                ids.add(id(base))

    def hold_all(self, grads):
        for g in grads:
            self.hold(g)

    def adopt(self, g):
        """May a leaf adopt `g` as its .grad without a copy?  A plain array nobody else holds, owning its
        memory or viewing all of a fresh array (a weight's gradient arrives as the transpose of a fresh
        GEMM result, see addmm._mm_as).  If so, it is held from now on (by that leaf)."""
        ids = self.ids
        cls = g.__class__
        if ids is None or cls not in _backend._ARRAYS or id(g) in ids:     # (a host or a device array)
            return False
        base = g.base
        if not (base is None or (base.__class__ is cls and base.base is None and id(base) not in ids
                                 and base.nbytes == g.nbytes)):
            return False
        self.hold(g)
        return True


def _contract_layout(g, a):
    """A first .grad of a leaf whose array `a` is not C-contiguous (torch's gradient layout contract): a copy
    of `g` with a's strides when `a` is dense and non-overlapping (a channels-last weight), else C-ordered."""
    st = _element_strides(a)
    if not _mf.non_overlapping_and_dense(a.shape, st):
        return _np.array(g, copy=True, order="C", like=g)
    out = _mf.restrided(_np.empty(g.shape, g.dtype, like=g), st, _backend.as_strided)
    out[...] = g
    return out


def _accumulate(var, g, create_graph, ns, adopt=False):
    """AccumulateGrad: ``.grad += g``, then post-accumulate hooks (tensor hooks ran before).

    `adopt`: nobody else holds `g`, so a first .grad may take it without a copy when it owns its
    memory and has the leaf's dtype and shape."""
    extra = var._extra
    gdt = var._data.dtype if extra is None else extra.get("grad_dtype", var._data.dtype)   # Tensor.grad_dtype
    if create_graph:
        g = ns.to_tensor(g)
        if gdt is not None and g._data.dtype != gdt:
            g = g.to(_FROM_NP[gdt])
        if var._grad is None:
            var._grad = g
        else:
            var._grad = var._grad + g
    elif g.__class__ is _COO or g.__class__ is _CSR:    # a sparse gradient (of a sparse leaf): sparse .grad
        if g.dtype != var._data.dtype:
            g = g.astype(var._data.dtype)
        cur = var._grad
        var._grad = _make_sparse(_steal(g).copy()) if cur is None else (
            _make_sparse(cur._data + g) if cur.is_sparse else _make(cur._data + g))
    else:
        if gdt is not None and g.dtype != gdt:
            g = g.astype(gdt)
        if g.shape != var._data.shape:
            g = ns.sum_to(g, var._data.shape)
        if g.__class__ is not var._data.__class__:     # a CPU scalar's gradient from a CUDA op: torch's engine
            dev = _backend.device_of(var._data)          # moves it to the input's device
            if _backend.device_of(g) != dev:
                g = _backend.to_device(g, dev)
        cur = var._grad
        if cur is None:
            vd = var._data
            if vd.__class__ in _backend._ARRAYS and not vd.flags.c_contiguous:    # (not a sparse leaf)
                g = _contract_layout(g, vd)
            elif not (adopt and _backend.writeable(g) and g.flags.c_contiguous):
                g = g.copy()
            var._grad = _make(g)
        elif cur._grad_fn is None and cur._data.__class__ is not _COO and cur._data.__class__ is not _CSR:
            cur._data += g
            cur._vc[0] += 1
        else:       # (a sparse .grad plus a dense gradient is dense, as torch's)
            var._grad = _make(cur._data + g)
    if extra is not None:
        post = extra.get("post_acc_hooks")
        if post:
            for fn in tuple(post.values()):
                fn(var)
