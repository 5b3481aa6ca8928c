"""torch.func's module utilities and functionalize.

functional_call               a module called with a dict (or a sequence of dicts) of parameters and
                              buffers swapped in (nn.utils.stateless's machinery: tie_weights, strict)
stack_module_state            the parameters and buffers of same-class models stacked along a new dim 0
                              (model ensembling: ``vmap(functional_call-of-one-model)`` over them)
replace_all_batch_norm_modules_  BatchNorm modules stop tracking running statistics
functionalize                 torch's eager semantics of a functionalized function: f runs on copies of its
                              tensor arguments, so no op inside f mutates or aliases them; mutated
                              arguments get their new values copied back once at the end, and outputs never
                              alias the arguments.  glassgrad has no graph capture (make_fx), so this is all
                              functionalize changes here: the values are f's.
"""
import functools
from collections.abc import Sequence

import numpy as np

from .._tensor import Tensor
from ..ops.shape import stack
from ..nn.utils.stateless import _functional_call
from ._pytree import tree_flatten, tree_unflatten

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_", "functionalize"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        merged = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return _functional_call(module, merged, args, kwargs, tie_weights=tie_weights, strict=strict)


def _stacked_leaf(tensors, name):
    needs = [t.requires_grad for t in tensors]
    if any(needs) and not all(needs):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    return result.detach().requires_grad_() if all(needs) else result


def stack_module_state(models):
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """In place: running_mean / running_var / num_batches_tracked become None and track_running_stats False for
    every BatchNorm module in root (so a vmapped batch norm uses the statistics of each sample's batch)."""
    from ..nn.modules.batchnorm import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


_REMOVE_HELP = ("     remove='mutations': all inplace and out= operators will be removed from the program, and replaced "
                "with their out-of-place equivalents.\n"
                "     remove='mutations_and_views': In addition to the above, all aliasing operators {view} will be "
                "replaced with their non-aliasing counterparts, {view}_copy.\n")


def _aliases(t, arrays):
    return any(np.may_share_memory(t._data, a) for a in arrays)


def functionalize(func, *, remove="mutations"):
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           f"Valid options are:\n{_REMOVE_HELP}")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        flat, spec = tree_flatten((args, kwargs))
        copies = [x.clone() if isinstance(x, Tensor) else x for x in flat]
        versions = [c._version if isinstance(c, Tensor) else None for c in copies]
        a, kw = tree_unflatten(copies, spec)
        out = func(*a, **kw)
        for x, c, v in zip(flat, copies, versions):
            if isinstance(x, Tensor) and c._version != v:
                x.copy_(c)          # the input mutation, applied back once
        arrays = [c._data for c in copies if isinstance(c, Tensor)]
        flat_out, out_spec = tree_flatten(out)
        return tree_unflatten([o.clone() if isinstance(o, Tensor) and _aliases(o, arrays) else o
                               for o in flat_out], out_spec)
    return wrapped
