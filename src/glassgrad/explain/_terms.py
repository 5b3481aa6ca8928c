"""The loss terms of a watched loss, for ``explain.attribute`` (used by the explain session).

find_terms(loss, frame, names) gives {name: tensor}: the variables named by ``--terms`` if found in the
backward caller's frame; else the summands of a chain of scalar ``AddBackward0`` nodes (_summands), named
after the script's variables that hold them (_frame_tensors) or after the variable below a chain of
one-input nodes (_unary_chain_name, e.g. ``mul(aux)``); else the whole loss as one term.
"""
import numpy as np

from ..autograd.traversal import tensor_at

__all__ = ["find_terms"]


def _frame_tensors(frame):
    """{(grad_fn, out_nr): name} and {id(tensor): name} for the tensors named in the frame (locals first)."""
    from .._tensor import Tensor
    by_edge, by_id = {}, {}
    if frame is None:
        return by_edge, by_id
    for scope in (frame.f_globals, frame.f_locals):
        for k, v in list(scope.items()):
            if isinstance(v, Tensor) and not k.startswith("__"):
                by_id[id(v)] = k
                if v._grad_fn is not None:
                    by_edge[(v._grad_fn, v._out_nr)] = k
    return by_edge, by_id


def _summands(loss, named=()):
    """The edges (node, nr) whose sum is `loss` when its grad_fn is a chain of AddBackward0 (alpha 1) over
    scalar values; None when it is not a sum."""
    fn = loss._grad_fn
    if fn is None or type(fn).__name__ != "AddBackward0":
        return None
    out = []

    def scalar_add(node):
        if type(node).__name__ != "AddBackward0" or getattr(node, "alpha", 1) != 1:
            return False
        a, b = getattr(node, "ashape", None), getattr(node, "bshape", None)
        return a is not None and int(np.prod(a)) == 1 and (b is None or int(np.prod(b)) == 1)

    if not scalar_add(fn):
        return None

    def rec(node, depth):
        shapes, dts = (node.ashape, node.bshape), (node.adt, node.bdt)
        for i, e in enumerate(node.next_functions):
            if e[0] is None:
                continue            # a constant summand (loss + 1.0) or one that needs no grad
            if depth < 64 and scalar_add(e[0]) and e not in named:   # a named sum stays one term
                rec(e[0], depth + 1)
            else:
                out.append((e, shapes[i], dts[i]))

    rec(fn, 0)
    return out if len(out) >= 2 else None


def _term_tensor(edge, shape, dtype):
    """A Tensor standing for a summand: its grad_fn is the summand's node (read by attribute, never run)."""
    return tensor_at(edge, shape, dtype)


def _unary_chain_name(edge, by_edge):
    """A name for a summand no variable holds: the variable below a chain of one-input nodes (0.5 * aux)."""
    node, nr = edge
    ops = []
    for _ in range(8):
        if node is None:
            return None
        name = by_edge.get((node, nr))
        if name is not None:
            return f"{'·'.join(ops)}({name})" if ops else name
        ins = [e for e in node.next_functions if e[0] is not None]
        if len(ins) != 1:
            return None
        ops.append(type(node).__name__.replace("Backward0", "").replace("Backward1", "").lower())
        node, nr = ins[0]
    return None


def find_terms(loss, frame, names=None):
    """({term name: tensor}, sentence saying how) for attributing `loss`."""
    by_edge, _ = _frame_tensors(frame)
    if names:
        found, missing = {}, []
        scopes = [frame.f_locals, frame.f_globals] if frame is not None else []
        for n in names:
            for sc in scopes:
                if n in sc:
                    found[n] = sc[n]
                    break
            else:
                missing.append(n)
        how = "named with --terms (" + ", ".join(names) + ")"
        if missing:
            how += "; not found in the scope of the backward call: " + ", ".join(missing)
        if found:
            return found, how
    parts = _summands(loss, by_edge)
    if parts:
        terms = {}
        for i, (edge, shape, dtype) in enumerate(parts):
            nm = by_edge.get(edge) or _unary_chain_name(edge, by_edge) or f"term{i} ({edge[0].name()})"
            base, k = nm, 2
            while nm in terms:
                nm, k = f"{base}#{k}", k + 1
            terms[nm] = _term_tensor(edge, shape, dtype)
        return terms, (f"found automatically: the loss is a sum (a chain of AddBackward0) of {len(terms)} "
                       "scalar terms, named after the script's variables where one holds the term")
    nm = by_edge.get((loss._grad_fn, loss._out_nr), "loss")
    return {nm: loss}, "the loss is not a sum of scalar terms: one term (name loss terms with --terms a,b)"
