"""Autocast's cast policies (torch's AutocastCPU kernels), called by the ops on its CPU lists.

An op on the list starts with ``if _acs.on: return _ac.lower(op, args...)`` (``_acs`` is the leaf
``_autocast_state.state``): the ordinary path pays that one flag test.  While autocast is on, the policy
casts the op's eligible tensor arguments (floating, not float64, on the CPU; inside lists too) and runs
the op with autocast off, as torch's kernels run under an excluded Autocast key, so the ops it is made of
are not cast again:

* ``lower``   to autocast's dtype (mm, matmul, bmm, addmm, baddbmm, addbmm, linear, conv*, prelu,
              scaled_dot_product_attention, linalg.vecdot, ...);
* ``fp32``    to float32 (the losses, prod, cdist, ...);
* ``promote`` to the widest type among the arguments (cat, stack, index_copy), torch's ``prioritize``.

A tensor is cast when autocast is on for its device type (CUDA tensors exist with CuPy: CUDA autocast applies
these same CPU lists, which differ from torch's CUDA lists -- torch's CUDA autocast also lowers mv / addmv /
addr / the RNN cells and runs softmax, exp, sum, norm, ... in float32; those are not hooked).

The lower-precision cast of a float32 leaf that requires grad is cached until the outermost autocast
region exits (torch's cast cache: a weight used twice is cast once, one ToCopyBackward0).
"""
from .._autocast_state import state
from .._tensor import Tensor
from .. import _dtype

__all__ = ["lower", "fp32", "promote"]


def _device(x):
    """The device type whose autocast applies to tensor x (None: autocast is off there)."""
    dev = x.device.type
    return dev if state.enabled.get(dev) else None


def _cast_one(x, to):
    """x cast to `to` (None: the lower-precision dtype of x's device) when eligible: floating, not float64,
    on a device whose autocast is on."""
    dt = x.dtype
    if not dt.is_floating_point or dt is _dtype.float64:
        return x
    dev = _device(x)
    if dev is None:
        return x
    low = state.dtype[dev]
    to = low if to is None else to
    if dt is to:
        return x
    if state.cache_enabled and dt is _dtype.float32 and to is low and x._rg and x._grad_fn is None and x._base is None:
        hit = state.cache.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        y = x.to(to)
        state.cache[id(x)] = (x, y)
        return y
    return x.to(to)


def _cast(v, to):
    if isinstance(v, Tensor):
        return _cast_one(v, to)
    if isinstance(v, (list, tuple)) and any(isinstance(x, Tensor) for x in v):
        return type(v)(_cast(x, to) for x in v)
    return v


def _run(fn, to, args, kwargs):
    args = tuple(_cast(a, to) for a in args)
    kwargs = {k: _cast(v, to) for k, v in kwargs.items()}
    state.on = False
    try:
        return fn(*args, **kwargs)
    finally:
        state.on = True


def _off(fn, args, kwargs):
    state.on = False
    try:
        return fn(*args, **kwargs)
    finally:
        state.on = True


def lower(fn, *args, **kwargs):
    return _run(fn, None, args, kwargs)


def fp32(fn, *args, **kwargs):
    return _run(fn, _dtype.float32, args, kwargs)


def _tensors(vals):
    for v in vals:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)


def promote(fn, *args, **kwargs):
    ts = list(_tensors(list(args) + list(kwargs.values())))
    dev = _device(ts[0]) if ts else None
    if dev is None:
        return _off(fn, args, kwargs)
    low = cur = state.dtype[dev]
    for t in ts:
        nxt = t.dtype
        if not (nxt.is_floating_point and t.device.type == dev) or nxt is _dtype.float64:
            continue
        if cur is _dtype.float32 or nxt is _dtype.float32:
            cur = _dtype.float32
        elif not (cur is low and nxt is low):
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return _run(fn, cur, args, kwargs)
