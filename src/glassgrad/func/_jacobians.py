"""torch.func.jacrev, jacfwd, hessian on glassgrad's reverse-mode graph (see _transforms.py).

jacrev: one reverse pass per output element (a row of the Jacobian each); ``chunk_size`` is validated as
torch's and changes nothing numerically (there is no vmap to chunk).  jacfwd: forward mode by the double-vjp
trick: one reverse pass with cotangents that require grad builds g = J^T u once, then one reverse pass of g
per input element gives a column J e_j.  hessian: ``jacfwd(jacrev(func, argnums), argnums)`` as in torch.
"""
import functools

from .._tensor import Tensor
from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from ..ops.creation import zeros, zeros_like
from ..ops.shape import stack
from ._pytree import tree_flatten, tree_unflatten
from . import _transforms as _t
from ._randomness import check_randomness, watch_randomness

__all__ = ["jacrev", "jacfwd", "hessian"]


def _error_if_complex(name, tree, is_input):
    for idx, x in enumerate(tree_flatten(tree)[0]):
        if isinstance(x, Tensor) and x.dtype.is_complex:
            kind = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{name}: Expected all {kind} to be real but received complex tensor at flattened "
                               f"input idx: {idx}")


def _basis(t, k):
    e = zeros(t.numel(), dtype=t.dtype, device=t.device)
    e[k] = 1
    return e.view(t.shape)


def _assemble(per_out, flat_out, out_spec, in_spec, argnums):
    """per_out[o][i]: the Jacobian block of flat output o and flat input i -> torch's nested structure."""
    trees = [tree_unflatten(blocks, in_spec) for blocks in per_out]
    if isinstance(argnums, int):
        trees = [tr[0] for tr in trees]
    return tree_unflatten(trees, out_spec)


def _rev_block(o, x, gs_rows):
    if o.numel() == 0 or x.numel() == 0:
        return zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype, device=x.device)
    return stack(gs_rows).reshape(tuple(o.shape) + tuple(x.shape))


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        _error_if_complex("jacrev", args, True)
        new, argnums_w, fresh, in_spec, _ = _t._diff_args(args, argnums)
        out, aux = _t._split_aux(_t._call(func, new), has_aux, "vjp(f, *primals)")
        flat_out, out_spec = tree_flatten(out)
        _t._check_outputs(flat_out, "vjp(f, *primals)")
        keep = _t._keep_graph(flat_out, fresh)
        _error_if_complex("jacrev", flat_out, False)
        per_out = []
        for o in flat_out:
            rows = [_t._grads([o], fresh, [_basis(o, k)], keep) for k in range(o.numel())]
            per_out.append([_rev_block(o, x, [r[i] for r in rows]) for i, x in enumerate(fresh)])
        jac = _t._finish(_assemble(per_out, flat_out, out_spec, in_spec, argnums_w), keep)
        return (jac, _t._finish_aux(aux, keep)) if has_aux else jac
    return wrapper


def _columns(flat_out, fresh, keep):
    """For each flat input i and element j: the tangent of every flat output for e_j (zeros where none)."""
    live = [k for k, o in enumerate(flat_out) if o.requires_grad]
    with enable_grad():
        us = [zeros_like(flat_out[k]).requires_grad_() for k in live]
        gs = (_autograd_grad([flat_out[k] for k in live], fresh, us, retain_graph=True, create_graph=True,
                             allow_unused=True) if live else [None] * len(fresh))
    cols = []
    for g, x in zip(gs, fresh):
        per_j = []
        for j in range(x.numel()):
            col = [None] * len(flat_out)
            if g is not None and g.requires_grad:
                with enable_grad():
                    ts = _autograd_grad([g], us, [_basis(x, j)], retain_graph=True, create_graph=keep,
                                        allow_unused=True)
                for k, t in zip(live, ts):
                    col[k] = t
            per_j.append([zeros_like(o) if c is None else c for o, c in zip(flat_out, col)])
        cols.append(per_j)
    return cols


def _fwd_block(o, x, cols_i, k):
    if o.numel() == 0 or x.numel() == 0:
        return zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype, device=o.device)
    return stack([c[k] for c in cols_i], dim=-1).reshape(tuple(o.shape) + tuple(x.shape))


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    @functools.wraps(func)
    def wrapper(*args):
        _error_if_complex("jacfwd", args, True)
        check_randomness(randomness)
        new, argnums_w, fresh, in_spec, _ = _t._diff_args(args, argnums)
        with watch_randomness(randomness):
            res = _t._call(func, new)
        out, aux = _t._split_aux(res, has_aux, _t._JVP)
        flat_out, out_spec = tree_flatten(out)
        _t._check_outputs(flat_out, _t._JVP)
        keep = _t._keep_graph(flat_out, fresh)
        _error_if_complex("jacfwd", flat_out, False)
        cols = _columns(flat_out, fresh, keep)
        per_out = [[_fwd_block(o, x, cols[i], k) for i, x in enumerate(fresh)] for k, o in enumerate(flat_out)]
        jac = _t._finish(_assemble(per_out, flat_out, out_spec, in_spec, argnums_w), keep)
        return (jac, _t._finish_aux(aux, keep)) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    return jacfwd(jacrev(func, argnums), argnums)
