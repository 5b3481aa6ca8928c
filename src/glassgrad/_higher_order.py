"""torch.cond and torch.while_loop, eager.

A Python bool / int / float predicate runs the chosen branch directly, as torch does. A tensor predicate goes
through torch's argument checks (a one-element tensor; callables; operands a tuple / list of nested containers
of tensors), runs the chosen branch, and hands its tensor outputs through an identity autograd.Function named
as torch's node (``CondAutogradOpBackward``), so gradients reach the operands and any tensors the branch closes
over through the branch's own graph. while_loop runs ``body_fn`` while ``cond_fn`` holds, checking that each
step keeps the carried values' structure, shapes and dtypes; its outputs pass through ``WhileLoopAutogradOp``.

torch compiles these with dynamo: it traces both branches (an aliasing or mismatched untaken branch is an error
there, not here) and reports its tracing errors as ``UncapturedHigherOrderOpError`` (a RuntimeError); glassgrad
raises the same error (``torch._dynamo.exc.UncapturedHigherOrderOpError``) with torch's wording where it makes the
same check on the executed code.
"""
from ._tensor import Tensor
from .autograd.function import Function
from .autograd.grad_mode import is_grad_enabled
from .utils import _pytree as pytree

__all__ = ["cond", "while_loop"]


class _Identity(Function):
    @staticmethod
    def forward(ctx, *xs):
        return xs

    @staticmethod
    def backward(ctx, *grads):
        return grads


class CondAutogradOp(_Identity):
    pass


class WhileLoopAutogradOp(_Identity):
    pass


def _through(fn_cls, tree):
    """``tree``'s tensor leaves passed through the identity node ``fn_cls`` when one requires grad."""
    leaves, spec = pytree.tree_flatten(tree)
    pos = [i for i, v in enumerate(leaves) if isinstance(v, Tensor)]
    if not (is_grad_enabled() and any(leaves[i].requires_grad for i in pos)):
        return tree
    outs = fn_cls.apply(*[leaves[i] for i in pos])
    for i, o in zip(pos, outs):
        leaves[i] = o
    return spec.unflatten(leaves)


def _uncaptured(msg):
    from ._dynamo.exc import UncapturedHigherOrderOpError
    return UncapturedHigherOrderOpError(msg)


def _aliasing(op, outs, ins):
    ids = {id(t) for t in ins}
    for o in outs:
        if id(o) in ids:
            raise _uncaptured("This higher order operator doesn't work unless it is captured completely with "
                               "torch.compile. Got graph break/error:\n\nEncountered aliasing during higher order op "
                               f"tracing\n  Higher Order Operator: {op}\n  Explanation: Higher order ops do not support "
                               "aliasing.\n  Hint: Replace `return input` with `return input.clone()` to avoid "
                               "aliasing.")


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if pred else ``false_fn(*operands)``."""
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, (bool, Tensor)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or pytree.tree_any(lambda t: not isinstance(t, Tensor), operands):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of "
                           f"tensor leaves, but got {operands}.")
    out = (true_fn if bool(pred) else false_fn)(*operands)
    _aliasing("torch.cond", [t for t in pytree.tree_leaves(out) if isinstance(t, Tensor)],
              pytree.tree_leaves(operands))
    return _through(CondAutogradOp, out)


def _check_pred(pred):
    if isinstance(pred, bool) or (isinstance(pred, Tensor) and pred.numel() == 1 and pred.dim() == 0
                                  and str(pred.dtype) == "torch.bool"):
        return bool(pred)
    got = pred.shape if isinstance(pred, Tensor) else pred
    raise _uncaptured("This higher order operator doesn't work unless it is captured completely with torch.compile. "
                       "Got graph break/error:\n\ntorch.while_loop: unsupported cond_fn return type\n  Higher Order "
                       f"Operator: torch.while_loop\n  Explanation: Expected cond_fn to return a scalar tensor or a "
                       f"bool but got {got}.")


def _meta(v):
    return (tuple(v.shape), v.dtype) if isinstance(v, Tensor) else (None, type(v))


def _check_step(new, old):
    if len(new) != len(old):
        raise _uncaptured(f"Expected body_fn to return {len(old)} values (the carried inputs' structure) but got "
                           f"{len(new)}.")
    for k, (a, b) in enumerate(zip(new, old)):
        if isinstance(a, Tensor) != isinstance(b, Tensor) or not isinstance(a, (Tensor, int)):
            raise _uncaptured(f"Expected body_fn_output and carried_inputs to have same metadata but found:\npair[{k}] "
                               f"differ in type: {type(a).__name__} vs {type(b).__name__}")
        if isinstance(a, Tensor):
            for what, x, y in (("shape", a.shape, b.shape), ("dtype", a.dtype, b.dtype)):
                if x != y:
                    raise _uncaptured("Expected body_fn_output and carried_inputs to have same metadata but found:\n"
                                       f"pair[{k}] differ in '{what}: {x} vs {y}'")


def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` is true; the last carried values."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    flat, spec = pytree.tree_flatten(carried_inputs)
    bad = [v for v in flat if not isinstance(v, (Tensor, int))]
    if bad:
        raise AssertionError(f"{flat} can only be of (<class 'torch.Tensor'>, <class 'int'>, <class 'torch.SymInt'>) "
                             f"but got {tuple(type(v) for v in bad)}")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError("Expect carried_inputs to be a tuple of possibly nested dict/list/tuple that only"
                           f"consists of tensor or int leaves, but got {carried_inputs}.")
    carried, out = carried_inputs, None
    while _check_pred(cond_fn(*carried)):
        out = body_fn(*carried)
        new = pytree.tree_leaves(out)
        _check_step(new, flat)
        _aliasing("torch.while_loop", [t for t in new if isinstance(t, Tensor)], flat)
        flat, carried = new, pytree.tree_unflatten(new, spec)
    if out is None:                   # no step ran: the carried values (torch: in body_fn's traced structure)
        out = tuple(carried)
    return _through(WhileLoopAutogradOp, out)
