"""Argument normalisation shared by the layer modules (PyTorch's ``torch.nn.modules.utils`` helpers)."""

__all__ = []


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
