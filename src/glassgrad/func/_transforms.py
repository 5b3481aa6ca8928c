"""torch.func's differentiation transforms: grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian.

How they work (no functorch levels or wrapper tensors): each call makes differentiable stand-ins for the
differentiated arguments (``x.detach().requires_grad_()``, or ``x.view_as(x)`` when x already requires grad so
that an outer transform or ordinary autograd still sees through it), runs the function under enable_grad
(torch's transforms ignore an outer no_grad) and asks ``autograd.grad`` for the gradients.  Reverse mode is
one backward pass per cotangent (jacrev: one per output element, ``chunk_size`` only validated); forward
mode (jvp, linearize, jacfwd) is the double-vjp trick of ``autograd.forward_ad.double_vjp`` (one reverse pass
with a cotangent that requires grad, then one per tangent).

Nesting (grad of grad, jacfwd of jacrev, vmap of grad, ...) works because every glassgrad backward is itself
differentiable: while a transform runs its function, ``_DEPTH`` is above zero, and every transform called
inside keeps its graph (create_graph) so the outer one can differentiate its result.  At the outermost
level (with grad mode on), results keep their graph when the function's outputs reach a tensor that requires
grad other than the stand-ins (an argument that requires grad, or a closed-over parameter: a gradient
penalty ``grad(lambda x: D(x).sum())(x)`` backpropagates into D's parameters, as in torch); otherwise they are
detached.  Limit: a backward formula that is not differentiable (``once_differentiable``) breaks forward
mode and nesting.
"""
import functools

from .._tensor import Tensor
from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd.forward_ad import double_vjp, stand_in as _fw_stand_in
from ..autograd import traversal
from ..ops.creation import zeros_like
from ._pytree import tree_flatten, tree_unflatten, tree_map

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize"]

_DEPTH = [0]      # how many transforms are running their function right now


def _call(fn, args, kwargs=None):
    _DEPTH[0] += 1
    try:
        with enable_grad():
            return fn(*args, **(kwargs or {}))
    finally:
        _DEPTH[0] -= 1


def _reaches_outside(outputs, fresh):
    """Whether the outputs' graph reaches a leaf other than the stand-ins (an argument or a closed-over tensor
    that requires grad: ordinary autograd wants the results differentiable)."""
    roots = [o for o in outputs if isinstance(o, Tensor) and o.requires_grad]
    ids = {id(f) for f in fresh}
    return bool(roots) and any(traversal.is_accumulate_grad(n) and id(n.variable) not in ids
                               for n in traversal.iter_nodes(roots))


def _keep_graph(outputs, fresh, extra=()):
    """Whether results must stay differentiable: inside another transform, or for ordinary autograd (the
    outputs reach a tensor that requires grad, or `extra` (cotangents, tangents) requires grad)."""
    if _DEPTH[0] > 0:
        return True
    if not is_grad_enabled():
        return False
    return any(isinstance(t, Tensor) and t.requires_grad for t in extra) or _reaches_outside(outputs, fresh)


def _stand_in(x):
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    with enable_grad():
        return x.view_as(x) if x.requires_grad else x.detach().requires_grad_()


def _finish(tree, keep):
    return tree if keep else tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, tree)


def _finish_aux(aux, keep):
    """has_aux's second output: tensors only (torch's check), detached at the outermost level."""
    for x in tree_flatten(aux)[0]:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return _finish(aux, keep)


# -- argnums ---------------------------------------------------------------------------------------
def _wrap_argnum(argnum, n):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < n:
        return argnum
    if -n <= argnum < 0:
        return argnum + n
    raise RuntimeError(f"Got argnum={argnum}, but only {n} positional inputs")


def _argnums(argnums, n):
    if isinstance(argnums, bool) or not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, n)
    wrapped = tuple(_wrap_argnum(a, n) for a in argnums)
    if not wrapped:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {wrapped}")
    return wrapped


def _diff_args(args, argnums):
    """(new args with stand-ins at argnums, the selected trees of stand-ins, their flat leaves, spec,
    the original flat leaves)."""
    argnums = _argnums(argnums, len(args))
    picked = (args[argnums],) if isinstance(argnums, int) else tuple(args[i] for i in argnums)
    flat, spec = tree_flatten(picked)
    fresh = [_stand_in(x) for x in flat]
    trees = tree_unflatten(fresh, spec)
    idx = (argnums,) if isinstance(argnums, int) else argnums
    new = tuple(trees[idx.index(i)] if i in idx else a for i, a in enumerate(args))
    return new, argnums, fresh, spec, flat


def _grads(outputs, inputs, cotangents, keep):
    """autograd.grad with zeros for unused inputs (outputs that need no grad contribute nothing)."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return [zeros_like(x) for x in inputs]
    with enable_grad():
        gs = _autograd_grad([p[0] for p in pairs], inputs, [p[1] for p in pairs], retain_graph=True,
                            create_graph=keep, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(gs, inputs)]


def _shape_like_argnums(flat_grads, spec, argnums):
    trees = tree_unflatten(flat_grads, spec)
    return trees[0] if isinstance(argnums, int) else trees


# -- grad / grad_and_value -------------------------------------------------------------------------
def _split_aux(out, has_aux, who):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{who}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return out


def _grad_and_value(func, argnums, has_aux, args, kwargs):
    new, argnums, fresh, spec, _ = _diff_args(args, argnums)
    out, aux = _split_aux(_call(func, new, kwargs), has_aux, "grad_and_value(f)(*args)")
    if not isinstance(out, Tensor):
        raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
    if out.dim() != 0:
        raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                           f"{out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
    keep = _keep_graph([out], fresh)
    gs = _grads([out], fresh, [None], keep)
    g = _finish(_shape_like_argnums(gs, spec, argnums), keep)
    value = _finish(out, keep)
    return (g, (value, _finish_aux(aux, keep))) if has_aux else (g, value)


def grad_and_value(func, argnums=0, has_aux=False):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


# -- vjp -------------------------------------------------------------------------------------------
def _check_outputs(flat, who):
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{who}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")
    if who.startswith("vjp"):       # reverse mode needs floating outputs (torch's check)
        for o in flat:
            if not (o.is_floating_point() or o.is_complex()):
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                                   f"Tensor with dtype {o.dtype}")


def vjp(func, *primals, has_aux=False):
    flat_in, in_spec = tree_flatten(primals)
    fresh = [_stand_in(x) for x in flat_in]
    out, aux = _split_aux(_call(func, tree_unflatten(fresh, in_spec)), has_aux, "vjp(f, *primals)")
    flat_out, out_spec = tree_flatten(out)
    _check_outputs(flat_out, "vjp(f, *primals)")
    keep = _keep_graph(flat_out, fresh)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        flat_c, c_spec = tree_flatten(cotangents)
        if c_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {c_spec.pprint()}, primal output: {out_spec.pprint()}")
        cg = (keep or _keep_graph(flat_out, fresh, flat_c)) if create_graph is None else create_graph
        for o, c in zip(flat_out, flat_c):
            if o.shape != c.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] has "
                                   f"a shape of {o.shape}.")
        gs = _grads(flat_out, fresh, flat_c, cg)
        return _finish(tree_unflatten(gs, in_spec), cg)

    result = (_finish(out, keep), vjp_fn)
    return result + (_finish_aux(aux, keep),) if has_aux else result


# -- forward mode ----------------------------------------------------------------------------------
def _only_tensors(flat, argname):
    if not flat:
        raise RuntimeError(f"{_JVP}: Expected {argname} to contain at least one Tensor.")
    for x in flat:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{_JVP}: Expected {argname} to only contain Tensors, got {type(x)}")


_JVP = "jvp(f, primals, tangents)"


def _check_jvp_args(primals, tangents):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
                           "if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{p_spec} and tangents with structure {t_spec}")
    _only_tensors(flat_p, "primals")
    _only_tensors(flat_t, "tangents")
    for p, t in zip(flat_p, flat_t):
        if p.shape != t.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the "
                               f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} while "
                               f"the given forward gradient is of size {list(t.shape)}.")
    return flat_p, p_spec, flat_t


def _tangents_out(flat_out, fresh, flat_t, keep, strict=False):
    if strict:      # torch's strict: an output independent of the inputs is an error
        for o in flat_out:
            if not double_vjp([o], fresh, flat_t)[1]:
                raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                                   "inputs. This is not allowed with strict=True.")
    ts, _ = double_vjp(flat_out, fresh, flat_t, create_graph=keep)
    return [zeros_like(o) if t is None else t for o, t in zip(flat_out, ts)]


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    flat_p, p_spec, flat_t = _check_jvp_args(primals, tangents)
    fresh, given = zip(*[_fw_stand_in(x) for x in flat_p])      # in-place ops on the primals work, as torch's
    out, aux = _split_aux(_call(func, tree_unflatten(list(given), p_spec)), has_aux, _JVP)
    flat_out, out_spec = tree_flatten(out)
    _check_outputs(flat_out, _JVP)
    keep = _keep_graph(flat_out, fresh, flat_t)
    ts = _tangents_out(flat_out, fresh, flat_t, keep, strict)
    result = (_finish(out, keep), _finish(tree_unflatten(ts, out_spec), keep))
    return result + (_finish_aux(aux, keep),) if has_aux else result


def linearize(func, *primals):
    """(f(*primals), jvp_fn): jvp_fn(*tangents) reuses one recorded graph (the first reverse pass of the
    double-vjp is kept, each call is one more reverse pass)."""
    flat_p, p_spec = tree_flatten(primals)
    fresh = [_stand_in(x) for x in flat_p]
    out = _call(func, tree_unflatten(fresh, p_spec))
    flat_out, out_spec = tree_flatten(out)
    _check_outputs(flat_out, "linearize(func, *primals)")
    keep = _keep_graph(flat_out, fresh)

    def jvp_fn(*tangents):
        flat_t, t_spec = tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(f"Expected the tangents {t_spec} to have the same argument structure as the "
                               f"primals {p_spec}")
        for i, (p, t) in enumerate(zip(flat_p, flat_t)):
            if not isinstance(t, Tensor) or p.shape != t.shape:
                raise RuntimeError(f"tangent:{i} with shape {getattr(t, 'shape', None)} in flattened pytree "
                                   f"doesn't match the shape {p.shape} of the corresponding primal.")
        cg = keep or _keep_graph(flat_out, fresh, flat_t)
        return _finish(tree_unflatten(_tangents_out(flat_out, fresh, flat_t, cg), out_spec), cg)

    return _finish(out, keep), jvp_fn
