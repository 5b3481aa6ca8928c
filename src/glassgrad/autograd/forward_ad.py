"""torch.autograd.forward_ad: dual_level, enter_dual_level / exit_dual_level, make_dual, unpack_dual.

Design: forward mode by the double-vjp trick, with no tangent rule per op.  glassgrad records only a
reverse-mode graph, and every backward formula is itself differentiable (double backward).  For
y = f(x) the vector-Jacobian product u -> J^T u is linear in u, so its own vjp against a tangent t gives the
Jacobian-vector product:  J t = d/du < J^T u, t >.  So:

  make_dual(x, t)   returns a tensor that records a graph (``x.view_as(x)`` when x requires grad, else an
                    alias of a fresh leaf ``x.detach().requires_grad_()``) and remembers t for the level;
  unpack_dual(y)    computes y's tangent lazily from the recorded graph: one reverse pass with a
                    zero cotangent u that requires grad (create_graph) gives g_i = J_i^T u for every dual
                    x_i, a second reverse pass of sum_i <g_i, t_i> with respect to u gives J t.  The graph is
                    kept (retain_graph), so y.backward() still works afterwards.

Limits, honestly:
  * tangents exist only through recorded graphs: ops run under ``no_grad`` / ``inference_mode`` record
    none, so their results have no tangent (torch's forward AD ignores no_grad).  Ops with no derivative
    (argmax, comparisons, integer results) give None, as in torch.
  * a backward formula that is not differentiable in its incoming gradient (a custom Function's
    ``once_differentiable`` backward, the few nodes whose double backward raises) makes unpack_dual raise
    that node's error instead of giving the tangent.
  * a dual tensor and everything computed from it report ``requires_grad=True`` (torch's report False
    when the primal does not require grad); ``unpack_dual(y).primal`` is ``y.detach()`` in that case and
    ``y`` itself when y also depends on tensors that really require grad.
  * the dual of a tensor that does not require grad is an alias (``_Alias``, a Function) of a fresh leaf
    sharing the primal's memory: in-place ops on it work and reach the primal, as torch's (a complex dual is
    the fresh leaf itself, where an in-place op raises autograd's leaf error).  An in-place op that overwrites
    a value an earlier op saved for its backward makes unpack_dual raise autograd's version error (torch's
    forward AD saves nothing for a backward, so it has no such error).  A tangent of
    another dtype than its primal is used in the primal's dtype (torch keeps the tangent's dtype).
  * each unpack_dual costs two reverse passes over y's graph (it is not cached); only one level exists
    at a time (torch: "Nested forward mode AD is not supported at the moment").
"""
from collections import namedtuple

from .._tensor import Tensor
from .grad_mode import enable_grad
from .function import Function
from . import traversal

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "double_vjp", "stand_in"]

_state = {"level": None, "duals": []}     # duals: _Dual records


class _Dual:
    """One make_dual: the tensor handed out, its tangent, the primal given, the tensor differentiated against
    (a fresh leaf, or the view of a primal that requires grad) and the dual's version when it was made."""
    __slots__ = ("dual", "tangent", "primal", "input", "fresh", "version")

    def __init__(self, dual, tangent, primal, input_, fresh):
        self.dual, self.tangent, self.primal, self.input, self.fresh = dual, tangent, primal, input_, fresh
        self.version = dual._version


class _Alias(Function):
    """An alias of a fresh leaf that is not itself a leaf: the dual shares the primal's memory and in-place ops
    on it are allowed and reach the primal, as torch's dual (a view) does."""

    @staticmethod
    def forward(ctx, t):
        return t.detach()

    @staticmethod
    def backward(ctx, grad):
        return grad


def stand_in(tensor):
    """(the tensor to differentiate against, the tensor to hand to the function) for a primal."""
    with enable_grad():
        if tensor.requires_grad:
            view = tensor.view_as(tensor)
            return view, view
        leaf = tensor.detach().requires_grad_()
        # glassgrad's Function marks only real floating outputs differentiable: a complex dual is the leaf
        return leaf, (leaf if tensor.dtype.is_complex else _Alias.apply(leaf))


class UnpackedDualTensor(namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """Namedtuple returned by unpack_dual containing the primal and tangent components of the dual tensor."""


def enter_dual_level():
    if _state["level"] is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _state["level"] = 0
    return 0


def exit_dual_level(*, level=None):
    if level is None:
        level = -1 if _state["level"] is None else _state["level"]
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _state["level"]:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    _state["level"] = None
    _state["duals"] = []


class dual_level:
    """Context manager (and decorator) for forward AD: every forward gradient lives inside it."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper


def _level(level):
    return _state["level"] if level is None else level


def _floating(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def make_dual(tensor, tangent, *, level=None):
    level = _level(level)
    if level is None or level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not _floating(tensor):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not _floating(tangent):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tangent.shape != tensor.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    input_, dual = stand_in(tensor)
    _state["duals"].append(_Dual(dual, tangent, tensor, input_, not tensor.requires_grad))
    return dual


def double_vjp(outputs, inputs, tangents, create_graph=False):
    """J t for each output by the double-vjp trick: (list of tangents or None, whether any output depends on
    the inputs).  `inputs` require grad; an output that needs no grad gets None."""
    from . import grad
    from ..ops.creation import zeros_like
    live = [i for i, o in enumerate(outputs) if isinstance(o, Tensor) and o.requires_grad and _floating(o)]
    result = [None] * len(outputs)
    if not live:
        return result, False
    with enable_grad():
        us = [zeros_like(outputs[i]).requires_grad_() for i in live]
        gs = grad([outputs[i] for i in live], inputs, us, retain_graph=True, create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, t in zip(gs, tangents) if g is not None and g.requires_grad]
        if not pairs:
            return result, any(g is not None for g in gs)
        ts = grad([p[0] for p in pairs], us, [p[1] for p in pairs], retain_graph=True, create_graph=create_graph,
                  allow_unused=True)
    for i, t in zip(live, ts):
        result[i] = t if t is not None else us[live.index(i)].detach()
    return result, True


def _only_duals(tensor, fresh_leaves):
    """True when every leaf that `tensor` reaches is a fresh dual leaf (nothing else really needs grad)."""
    for node in traversal.iter_nodes([tensor]):
        if traversal.is_accumulate_grad(node) and not any(node.variable is f for f in fresh_leaves):
            return False
    return True


def unpack_dual(tensor, *, level=None):
    level = _level(level)
    if level is None or level != _state["level"] or not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    duals = _state["duals"]
    for d in duals:
        if d.dual is tensor and d.dual._version == d.version:
            return UnpackedDualTensor(d.primal.view_as(d.primal), d.tangent)
    if not duals or not tensor.requires_grad:
        return UnpackedDualTensor(tensor, None)
    tangents, depends = double_vjp([tensor], [d.input for d in duals], [d.tangent for d in duals],
                                   create_graph=any(d.tangent.requires_grad for d in duals))
    if not depends:
        return UnpackedDualTensor(tensor, None)
    primal = tensor.detach() if _only_duals(tensor, [d.input for d in duals if d.fresh]) else tensor
    return UnpackedDualTensor(primal, tangents[0])
