"""torch.utils.swap_tensors: two Tensor objects exchange everything they are (class, __dict__, slots and the
tensor itself: data, autograd state, version counter, grad, hooks) while each keeps its identity.

torch refuses when the autograd graph holds a reference to either tensor (its C++ use_count), since the graph
would then see the other tensor's contents.  glassgrad's graph holds a tensor in the same places, and they are
counted here the same way: the tensor itself, its AccumulateGrad node, a view whose base it is, and each graph
node that saved it for backward.  Python references elsewhere do not count, as in torch.  A leaf counted twice
only because of its AccumulateGrad is swapped, and that node is poisoned: running backward through it raises.
Where glassgrad's graph saves a tensor torch's does not (a Linear's weight when its input needs no gradient: see
the saved-tensor notes of docs/architecture.md), that reference counts too, so such a swap is refused here
where torch would swap and poison.
"""
import copyreg
import gc
import weakref

from .._tensor import Tensor

_TENSOR_SLOTS = frozenset(copyreg._slotnames(Tensor))

_POISONED = ("Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen when you try to "
             "run backward on a tensor that was swapped. For a module m with "
             "`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change the device or "
             "dtype of the module (e.g. `m.cpu()` or `m.half()`) between running forward and backward. To resolve "
             "this, please only change the device/dtype before running forward (or after both forward and backward).")


def _saved_by_a_node(entry):
    """Whether tuple `entry` ((tensor, version), how graph.save_in saves an input) is held in a node's saved
    tuple."""
    from ..autograd.graph import Node
    for holder in gc.get_referrers(entry):
        if type(holder) is tuple and any(isinstance(n, Node) and n._saved is holder for n in gc.get_referrers(holder)):
            return True
    return False


def use_count(t):
    """How many holders the autograd machinery has for `t` (torch's Tensor._use_count): itself, its
    AccumulateGrad, the views whose base it is, and the graph nodes that saved it."""
    n = 1 + (t._acc is not None and t._acc() is not None)
    for r in gc.get_referrers(t):
        if isinstance(r, Tensor) and r._base is t:
            n += 1
        elif type(r) is tuple and len(r) == 2 and r[0] is t and type(r[1]) is int and _saved_by_a_node(r):
            n += 1
    return n


def _check_use_count(t, name):
    if not isinstance(t, Tensor):
        raise AttributeError(f"'{type(t).__name__}' object has no attribute '_use_count'")
    count = use_count(t)
    msg = (f"Expected use_count of {name} to be 1 or 2 with an AccumulateGrad node but got {count} make sure you are "
           "not holding references to the tensor in other places.")
    if count > 1:
        if count == 2 and t.is_leaf:
            from ..autograd.graph import get_gradient_edge
            acc = get_gradient_edge(t).node
            if use_count(t) != 2:
                raise RuntimeError(msg)

            def poisoned(grad_outputs):
                raise RuntimeError(_POISONED)
            acc.register_prehook(poisoned)
        else:
            raise RuntimeError(msg)


def _slots(obj):
    return set(copyreg._slotnames(type(obj))) - _TENSOR_SLOTS


def swap_tensors(t1, t2):
    """Swap the contents of Tensor objects `t1` and `t2` in place: afterwards `t1` is what `t2` was (type,
    attributes, data, requires_grad, grad, ...) and the other way round, each object keeping its identity."""
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    s1, s2 = _slots(t1), _slots(t2)
    if s1 != s2:
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    _check_use_count(t1, "t1")
    _check_use_count(t2, "t2")
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    for slot in sorted(s1 | _TENSOR_SLOTS):
        have1, have2 = hasattr(t1, slot), hasattr(t2, slot)
        v1, v2 = getattr(t1, slot, None), getattr(t2, slot, None)
        if have2:
            setattr(t1, slot, v2)
        elif have1:
            delattr(t1, slot)
        if have1:
            setattr(t2, slot, v1)
        elif have2:
            delattr(t2, slot)
