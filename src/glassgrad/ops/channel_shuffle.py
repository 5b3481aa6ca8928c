"""channel_shuffle (ChannelShuffleBackward0): (N, g, C/g, *) -> (N, C/g, g, *), as torch; its gradient is the
inverse shuffle (C/g groups), differentiable for double backward."""

from .conversion import keep_format
from ..backend import contiguous
from ._core import make, edge, grad
from ..autograd.graph import Node

__all__ = ["channel_shuffle"]


class ChannelShuffleBackward0(Node):
    __slots__ = ("groups",)

    def backward(self, ns, g):
        inv = (g.shape[1] // self.groups) if g.ndim > 1 else 1
        return (channel_shuffle(g, inv) if ns.is_tensor_mode else _shuffle(g, inv),)


def _shuffle(a, groups):
    n, c = a.shape[:2]
    rest = a.shape[2:]
    y = a.reshape((n, groups, c // groups) + rest).swapaxes(1, 2)
    return contiguous(y.reshape(a.shape))


def channel_shuffle(x, groups):
    a = x._data
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if a.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(a.shape)}")
    if a.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {a.shape[1]} channels and "
                           f"{groups} groups.")
    y = _shuffle(a, groups)
    if x._rg and grad.enabled:
        n = ChannelShuffleBackward0((edge(x),))
        n.groups = groups
        return keep_format(x, make(y, True, n), (4,))
    return keep_format(x, make(y), (4,))
