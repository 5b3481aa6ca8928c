"""Argument normalisation shared by the layer modules (PyTorch's ``torch.nn.modules.utils`` helpers)."""

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n):
    """A parser that turns a scalar into an n-tuple of it and a list / tuple into a tuple."""
    def parse(x):
        if isinstance(x, (list, tuple)):
            return tuple(x)
        return (x,) * n
    return parse


_single = _ntuple(1)
_pair = _ntuple(2)
_triple = _ntuple(3)
_quadruple = _ntuple(4)


def _reverse_repeat_tuple(t, n):
    """(a, b) with n=2 -> (b, b, a, a): F.pad's last-dim-first order from a per-dim padding tuple."""
    return tuple(x for x in reversed(t) for _ in range(n))


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip `prefix` (e.g. DDP's "module.") from the keys of `state_dict` in place, and from its `_metadata`."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    meta = getattr(state_dict, "_metadata", None)
    if meta is not None:
        for key in list(meta.keys()):
            if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
                meta[key[len(prefix):]] = meta.pop(key)
