"""torch.func.vmap (and torch.vmap): a batched path where every op has a batching rule, else a per-sample loop.

``vmap(f, in_dims, out_dims)(*args)`` checks its arguments as torch does (the same exception types and
messages), then:

1. the batched path (``_try_batched``, rules in ``_batched.py``): f runs once, each mapped argument handed to
   it as a ``Batched`` (the batched tensor with its batch at dim 0 behind a sample's shape); its methods and
   operators compute on the whole batch (elementwise ops, products, reductions, shape ops).  Anything
   without a rule raises before it writes anything, and then
2. the per-sample loop: sample b of every mapped input (``x.select(in_dim, b)``: a view, so gradients flow
   back to the batched input and in-place writes reach it, as torch's BatchedTensor), f called once per
   sample with ordinary tensors, each output leaf stacked at its out_dim (``torch.stack``: differentiable).
   Every op glassgrad has works here, at the cost of one Python call per sample.

``last_path[0]`` says which ran ("batched" or "loop").  torch.* functions, nn modules, nested transforms
(grad inside vmap, vmap inside vmap) and Tensor-on-the-left operators take the loop.  Nesting works.

Departures from torch, honestly: ``chunk_size`` is validated and changes nothing; out_dims=None for an
output is accepted when every sample returned the same tensor object or equal values, and torch's "can not
return a BatchedTensor" error is raised only when samples differ; on the loop, ``.item()`` and
data-dependent Python control flow work per sample (torch raises for them); a batch of size 0 calls f once
on a zero sample of the per-sample shape to learn the output's shape; a function with Python side effects
sees them once per sample on the loop, plus once for an abandoned batched attempt.  randomness= (see
_randomness.py): 'same' gives torch's values (each sample starts from the generator state torch's single
draw starts from; the batched path draws once); 'different' draws sample after sample on the loop (the
batched path is abandoned when f draws), which is not torch's batched stream.
"""
import functools

from .._tensor import Tensor
from ..ops.creation import zeros
from ..ops.shape import stack
from ..ops import random as _random
from ._pytree import tree_flatten, tree_unflatten, broadcast_prefix
from ._randomness import check_randomness, watch_randomness
from ._batched import Batched, NotBatchable

last_path = [None]      # which path the latest vmap call took: "batched" or "loop"

__all__ = ["vmap"]


def _get_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def _check_out_dims(out_dims, func):
    if isinstance(out_dims, int):
        return
    for x in tree_flatten(out_dims)[0]:
        if x is not None and not isinstance(x, int):
            raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                             "python collection of ints representing where in the outputs the vmapped dimension "
                             "should appear.")


def _process_inputs(in_dims, args, func):
    """torch's _process_batched_inputs: (batch size, flat in_dims, flat args, spec)."""
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         "to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_in_dims = broadcast_prefix(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    head = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): "
    for i, (arg, d) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(d, int) and d is not None:
            raise ValueError(head + f"Got in_dim={d} for an input but in_dim must be either an integer dimension "
                             "or None.")
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(head + f"Got in_dim={d} for an input but the input is of type {type(arg)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the respective in_dim")
        if d is not None and (d < -arg.dim() or d >= arg.dim()):
            raise ValueError(head + f"Got in_dim={d} for some input, but that input is a Tensor of dimensionality "
                             f"{arg.dim()} so expected in_dim to satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        if d is not None and d < 0:
            flat_in_dims[i] = d % arg.dim()
    sizes = [a.size(d) for a, d in zip(flat_args, flat_in_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], flat_in_dims, flat_args, spec


def _sample(flat_args, flat_in_dims, spec, b):
    if b is None:           # a zero sample (batch of size 0)
        return tree_unflatten([a if d is None else zeros(a.shape[:d] + a.shape[d + 1:], dtype=a.dtype,
                                                         device=a.device)
                               for a, d in zip(flat_args, flat_in_dims)], spec)
    return tree_unflatten([a if d is None else a.select(d, b) for a, d in zip(flat_args, flat_in_dims)], spec)


def _run_samples(func, flat_args, flat_in_dims, spec, batch, randomness, kwargs):
    """f on every sample -> list of (flat outputs, output spec)."""
    gen = _random.default_generator
    start = gen.get_state() if randomness == "same" else None
    results = []
    for b in (range(batch) if batch else [None]):
        if start is not None:
            gen.set_state(start)
        with watch_randomness(randomness):
            out = func(*_sample(flat_args, flat_in_dims, spec, b), **kwargs)
        results.append(tree_flatten(out))
    if any(r[1] != results[0][1] for r in results):
        raise RuntimeError(f"vmap({_get_name(func)}, ...): `{_get_name(func)}` returned outputs of different "
                           "structures for different samples")
    return results


def _flat_out_dims(out_dims, output, spec, func):
    def incompatible():
        raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                         f"with the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but "
                         f"outputs has structure {spec}.")
    if isinstance(output, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        incompatible()
    flat = broadcast_prefix(out_dims, spec)
    if flat is None:
        incompatible()
    return flat


def _same(outs):
    first = outs[0]
    for o in outs[1:]:
        if o is first:
            continue
        if not isinstance(o, Tensor) or o.shape != first.shape or not bool((o == first).all()):
            return False
    return True


def _combine(func, per_sample, k, out_dim, batch):
    name = _get_name(func)
    outs = [r[0][k] for r in per_sample]
    if out_dim is None:
        if isinstance(outs[0], Tensor) and batch and not _same(outs):
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
        return outs[0]
    if not isinstance(outs[0], Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(outs[0])}. Did you "
                         "mean to set out_dims= to None for output?")
    if not batch:           # one zero sample ran: keep its shape, with a batch of 0
        return stack(outs, dim=out_dim).narrow(out_dim, 0, 0)
    return stack(outs, dim=out_dim)


def _batched_outputs(func, out, out_dims, batch):
    flat, out_spec = tree_flatten(out)
    res = []
    for o, d in zip(flat, _flat_out_dims(out_dims, out, out_spec, func)):
        if isinstance(o, Batched):
            if d is None:
                raise NotBatchable("out_dims=None for a batched output")
            res.append(o._t.movedim(0, d))
        elif isinstance(o, Tensor) and d is not None:
            res.append(stack([o] * batch, dim=d))      # an unbatched output, as the loop gives it
        elif d is None:
            res.append(o)
        else:
            raise NotBatchable("a non-Tensor output")
    return tree_unflatten(res, out_spec)


def _try_batched(func, flat_args, flat_in_dims, spec, batch, out_dims, randomness, kwargs):
    """f once on Batched arguments (_batched.py); None when anything lacks a batching rule."""
    if not batch:
        return None
    gen = _random.default_generator
    start = gen.get_state()
    try:
        args = tree_unflatten([a if d is None else Batched(a.movedim(d, 0))
                               for a, d in zip(flat_args, flat_in_dims)], spec)
        with watch_randomness(randomness):
            out = func(*args, **kwargs)
        if randomness == "different" and not bool((gen.get_state() == start).all()):
            raise NotBatchable("random draws differ per sample")
        return (_batched_outputs(func, out, out_dims, batch),)
    except Exception:       # no rule, or an error the loop will raise as torch does
        gen.set_state(start)
        return None


def _vmap_impl(func, in_dims, out_dims, randomness, args, kwargs):
    _check_out_dims(out_dims, func)
    batch, flat_in_dims, flat_args, spec = _process_inputs(in_dims, args, func)
    done = _try_batched(func, flat_args, flat_in_dims, spec, batch, out_dims, randomness, kwargs)
    last_path[0] = "loop" if done is None else "batched"
    if done is not None:
        return done[0]
    per_sample = _run_samples(func, flat_args, flat_in_dims, spec, batch, randomness, kwargs)
    flat0, out_spec = per_sample[0]
    output0 = tree_unflatten(flat0, out_spec)
    flat_dims = _flat_out_dims(out_dims, output0, out_spec, func)
    return tree_unflatten([_combine(func, per_sample, k, d, batch) for k, d in enumerate(flat_dims)], out_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """torch.func.vmap: f mapped over a dimension of its inputs (batching rules, else a per-sample loop; see the
    module doc)."""
    check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_impl(func, in_dims, out_dims, randomness, args, kwargs)
    return wrapped
