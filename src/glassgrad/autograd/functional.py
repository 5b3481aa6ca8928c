"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp.

Everything is built on ``autograd.grad`` and a few ops (a utility above ops, as in torch: the library
layer; ``import glassgrad`` binds it as ``autograd.functional``):
  vjp       one reverse pass with cotangent v;
  jvp       the double-backward trick: u -> (u^T J) is linear in u, so d/du <u^T J, v> = J v;
  jacobian  one reverse pass per output element (``vectorize`` and ``strategy`` change nothing
            numerically here, so they are accepted and give the same values);
  hessian   the jacobian of the gradient;
  vhp/hvp   a reverse pass through the gradient (the Hessian is symmetric, so both agree).
"""
from .grad_mode import enable_grad
from .._tensor import Tensor
from ..ops.creation import zeros, zeros_like, ones_like
from ..ops.shape import stack

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _tupled(x, what, fn):
    """(was_a_tuple, tuple_of_tensors), with PyTorch's TypeError for anything else."""
    if isinstance(x, Tensor):
        return False, (x,)
    if not isinstance(x, tuple):
        raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but the given "
                        f"{what} has type {type(x)}.")
    for i, e in enumerate(x):
        if not isinstance(e, Tensor):
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but the value "
                            f"at index {i} has type {type(e)}.")
    return True, x


def _fresh(inputs, create_graph):
    """Differentiable stand-ins for the user's inputs (their own graph is kept under create_graph)."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(True)
                 for t in inputs)


def _untuple(was_tuple, xs):
    return xs if was_tuple else xs[0]


def _finish(xs, create_graph):
    return tuple(x if create_graph else x.detach() for x in xs)


def _grads(outputs, inputs, cotangents, create_graph, strict, what):
    """autograd.grad with zeros for inputs that do not influence the outputs (or an error if strict)."""
    from . import grad      # autograd.grad
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if pairs:
        gs = grad([p[0] for p in pairs], inputs, [p[1] for p in pairs], retain_graph=True,
                  create_graph=create_graph, allow_unused=True)
    else:
        gs = (None,) * len(inputs)
    out = []
    for i, (g, x) in enumerate(zip(gs, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                                   f"This is not allowed in strict mode.")
            g = zeros_like(x)
        out.append(g)
    return tuple(out)


def _check_v(v, outputs, fn):
    was_tuple, v = _tupled(v, "v", fn)
    if len(v) != len(outputs):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(outputs)} but got {len(v)}.")
    for i, (a, b) in enumerate(zip(v, outputs)):
        if a.shape != b.shape:
            where = f"Entry {i} in v" if was_tuple else "v"
            raise RuntimeError(f"{where} has invalid size: should be {b.shape} but got {a.shape}.")
    return v


_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a single Tensor with a "
                  "single element.")
_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a single Tensor "
                 "with a single element.")


def _cotangent(v, like, fn, none_msg):
    """v checked against `like` (outputs or inputs); None means ones for a single one-element tensor."""
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(none_msg)
        return (ones_like(like[0]),)
    return _check_v(v, like, fn)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        was_tuple, xs = _tupled(inputs, "inputs", "vjp")
        xs = _fresh(xs, create_graph)
        out_tuple, outs = _tupled(func(*xs), "outputs of the user-provided function", "vjp")
        v = _cotangent(v, outs, "vjp", _V_NONE_OUTPUT)
        res = _grads(outs, xs, v, create_graph, strict, "vjp")
    return _untuple(out_tuple, _finish(outs, create_graph)), _untuple(was_tuple, _finish(res, create_graph))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        was_tuple, xs = _tupled(inputs, "inputs", "jvp")
        xs = _fresh(xs, create_graph)
        v = _cotangent(v, xs, "jvp", _V_NONE_INPUT)
        out_tuple, outs = _tupled(func(*xs), "outputs of the user-provided function", "jvp")
        us = tuple(zeros_like(o).requires_grad_(True) for o in outs)
        g = _grads(outs, xs, us, True, strict, "jvp")
        res = _grads(g, us, v, create_graph, strict, "jvp")
    return _untuple(out_tuple, _finish(outs, create_graph)), _untuple(out_tuple, _finish(res, create_graph))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode" and create_graph:
        raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` and "
                                  "`strategy=\"forward-mode\"` are not supported together (yet). Please either set "
                                  "`create_graph=False` or `strategy=\"reverse-mode\"`.")
    with enable_grad():
        was_tuple, xs = _tupled(inputs, "inputs", "jacobian")
        xs = _fresh(xs, create_graph)
        out_tuple, outs = _tupled(func(*xs), "outputs of the user-provided function", "jacobian")
        blocks = []
        for o in outs:
            flat = o.reshape(-1)
            rows = [[] for _ in xs]
            for k in range(flat.numel()):
                gs = _grads((flat[k],), xs, (ones_like(flat[k]),), create_graph, strict, "jacobian")
                for j, g in enumerate(gs):
                    rows[j].append(g)
            per_input = []
            for j, x in enumerate(xs):
                if rows[j]:
                    J = stack(rows[j]).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    J = zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype)
                per_input.append(J if create_graph else J.detach())
            blocks.append(_untuple(was_tuple, tuple(per_input)))
    return _untuple(out_tuple, tuple(blocks))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    was_tuple, xs = _tupled(inputs, "inputs", "hessian")

    def gradient(*ys):
        out = func(*ys)
        o = _single_scalar(out, "hessian")
        g = _grads((o,), ys, (ones_like(o),), True, strict, "hessian")
        return g if was_tuple else g[0]
    return jacobian(gradient, _untuple(was_tuple, xs), create_graph=create_graph, strict=strict)


def _single_scalar(out, fn):
    """The one-element Tensor a hessian/vhp/hvp function must return, with PyTorch's errors."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise RuntimeError(f"The function given to {fn} should return a single Tensor")
        out = out[0]
    _, (o,) = _tupled(out, "outputs of the user-provided function", fn)
    if o.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain a single element")
    return o


def _scalar_grad(func, inputs, v, create_graph, strict, fn):
    was_tuple, xs = _tupled(inputs, "inputs", fn)
    xs = _fresh(xs, create_graph)
    out = func(*xs)
    out_tuple = isinstance(out, tuple)
    outs = (_single_scalar(out, fn),)
    v = _cotangent(v, xs, fn, _V_NONE_INPUT)
    g = _grads(outs, xs, (ones_like(outs[0]),), True, strict, fn)
    res = _grads(g, xs, v, create_graph, strict, fn)
    return _untuple(out_tuple, _finish(outs, create_graph)), _untuple(was_tuple, _finish(res, create_graph))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        return _scalar_grad(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        return _scalar_grad(func, inputs, v, create_graph, strict, "hvp")
