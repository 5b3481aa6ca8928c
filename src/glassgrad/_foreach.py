"""torch._foreach_lerp_ and torch._foreach_copy_: the in-place list forms EMA code calls (ema-pytorch's
``use_foreach=True``), each the per-tensor in-place op over the lists, with torch's list checks; both return
the list written.  (torch's other ``_foreach_*`` functions are not here.)"""
import numbers

__all__ = ["_foreach_lerp_", "_foreach_copy_"]


def _check_lists(*lists):
    n = len(lists[0])
    if n == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in lists[1:]:
        if len(other) != n:
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and {len(other)}")


def _foreach_lerp_(self, tensors1, weight):
    """self[i].lerp_(tensors1[i], w): w one number, one of a list of numbers, or one of a list of tensors."""
    lists = [self, tensors1] + ([weight] if isinstance(weight, (list, tuple)) else [])
    if not isinstance(weight, (list, tuple, numbers.Number)) or isinstance(weight, bool):
        raise TypeError(f"_foreach_lerp_() received an invalid combination of arguments - got (list, list, "
                        f"{type(weight).__name__})")
    _check_lists(*lists)
    for i, t in enumerate(self):
        t.lerp_(tensors1[i], weight[i] if isinstance(weight, (list, tuple)) else weight)
    return list(self)


def _foreach_copy_(self, src, non_blocking=False):
    """self[i].copy_(src[i]) (broadcast and cast as copy_)."""
    _check_lists(self, src)
    for t, s in zip(self, src):
        t.copy_(s, non_blocking)
    return list(self)
