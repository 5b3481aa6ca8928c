"""Padding primitives: constant_pad_nd (ConstantPadNdBackward0), reflection / replication pads
(ReflectionPad{1,2,3}DBackward0, ReplicationPad{1,2,3}DBackward0) and circular padding (composed of
slice copies like PyTorch, so its grad_fn is CopySlices).

`pad` is PyTorch's flat list: (last_lo, last_hi, second_last_lo, second_last_hi, ...).  Negative
entries crop.
"""
import numpy as np

from .conversion import keep_format
from .. import _dtype
from ._core import make, edge, grad, save_in, attach_self
from ..autograd.graph import Node
from .creation import zeros
from .masked import setitem

__all__ = ["constant_pad_nd", "reflection_pad", "replication_pad", "circular_pad"]


def _pairs(pad, ndim):
    """[(dim, lo, hi)] for the padded dims."""
    return [(ndim - 1 - i, int(pad[2 * i]), int(pad[2 * i + 1])) for i in range(len(pad) // 2)]


# -- constant ---------------------------------------------------------------------------------------
def _const_regions(shape, pairs):
    """(src slices into the input, dst slices into the output, output shape)."""
    src = [slice(None)] * len(shape)
    dst = [slice(None)] * len(shape)
    out = list(shape)
    for d, lo, hi in pairs:
        L = shape[d]
        n = L + lo + hi
        out[d] = n
        s0 = max(-lo, 0)
        s1 = L - max(-hi, 0)
        src[d] = slice(s0, max(s1, s0))
        dst[d] = slice(max(lo, 0), max(lo, 0) + max(s1 - s0, 0))
    return tuple(src), tuple(dst), tuple(out)


class ConstantPadNdBackward0(Node):
    __slots__ = ("pad", "src", "dst", "shape")

    def backward(self, ns, g):
        dst, src = self.dst, self.src
        inner = ns.apply_view(g, lambda a: a[dst])
        return (ns.view_scatter(self.shape, lambda a: a[src], inner),)


def constant_pad_nd(x, pad, value=0):
    a = x._data
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > a.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {a.ndim}")
    pairs = _pairs(pad, a.ndim)
    for d, lo, hi in pairs:
        if a.shape[d] + min(lo, 0) + min(hi, 0) < 0 or a.shape[d] + lo + hi < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    src, dst, oshape = _const_regions(a.shape, pairs)
    if a.dtype == np.bool_:
        v = bool(value)
    elif a.dtype.kind in "iu":
        v = int(value)
    else:
        v = value
    y = np.full(oshape, v, a.dtype, like=a)
    y[dst] = a[src]
    if x._rg and grad.enabled:
        n = ConstantPadNdBackward0((edge(x),))
        n.pad, n.src, n.dst, n.shape = list(pad), src, dst, a.shape
        return keep_format(x, make(y, True, n))
    return keep_format(x, make(y))


# -- reflect / replicate / circular: a gather with one index array per padded dim ---------------
def _index(L, lo, hi, mode, like=None):
    """The source positions along one padded dim (built on `like`'s device when given)."""
    i = np.arange(-lo, L + hi, like=like)
    if mode == "reflect":
        if L > 1:
            p = 2 * (L - 1)
            i = np.abs(i) % p
            i = np.where(i >= L, p - i, i)
        else:
            i = np.zeros_like(i)
    elif mode == "replicate":
        i = np.clip(i, 0, L - 1)
    else:       # circular: crop first, then wrap around the cropped extent (PyTorch's order)
        c0, c1 = max(-lo, 0), L - max(-hi, 0)
        lc = c1 - c0
        i = c0 + np.arange(-max(lo, 0), lc + max(hi, 0), like=like) % lc if lc > 0 else \
            np.zeros(max(L + lo + hi, 0), np.int64, like=like)
    return i.astype(np.int64)


def _gather_index(shape, pairs, mode, like=None):
    """A broadcasting index tuple selecting the padded result (index arrays on `like`'s device)."""
    nd = len(shape)
    pd = sorted(pairs)
    idx = [slice(None)] * nd
    k = len(pd)
    for j, (d, lo, hi) in enumerate(pd):
        ix = _index(shape[d], lo, hi, mode, like)
        idx[d] = ix.reshape((-1,) + (1,) * (k - 1 - j))
    return tuple(idx)


def _scatter_dim(g, axis, L, lo, hi, ix):
    """Adjoint of gathering `ix` along `axis`: the identity block plus the few border entries."""
    shape = list(g.shape)
    shape[axis] = L
    out = np.zeros(shape, g.dtype, like=g)
    Lo = g.shape[axis]
    j0, j1 = max(lo, 0), min(lo + L, Lo)
    pre = (slice(None),) * axis
    if j1 > j0:
        out[pre + (slice(j0 - lo, j1 - lo),)] = g[pre + (slice(j0, j1),)]
    for j in list(range(0, min(j0, Lo))) + list(range(max(j1, 0), Lo)):
        out[pre + (ix[j],)] += g[pre + (j,)]
    return out


class _PadGatherNode(Node):
    __slots__ = ("padding", "shape", "pairs", "mode", "index")
    _saved_names = ("self",)

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            return (attach_self(ns, ns.index_add_zeros(self.shape, self.index, g), self),)
        for d, lo, hi in self.pairs:
            g = _scatter_dim(g, d, self.shape[d], lo, hi, _index(self.shape[d], lo, hi, self.mode))
        return (g,)


class ReflectionPad1DBackward0(_PadGatherNode):
    __slots__ = ()


class ReflectionPad2DBackward0(_PadGatherNode):
    __slots__ = ()


class ReflectionPad3DBackward0(_PadGatherNode):
    __slots__ = ()


class ReplicationPad1DBackward0(_PadGatherNode):
    __slots__ = ()


class ReplicationPad2DBackward0(_PadGatherNode):
    __slots__ = ()


class ReplicationPad3DBackward0(_PadGatherNode):
    __slots__ = ()


_NODES = {("reflect", 1): ReflectionPad1DBackward0, ("reflect", 2): ReflectionPad2DBackward0,
          ("reflect", 3): ReflectionPad3DBackward0, ("replicate", 1): ReplicationPad1DBackward0,
          ("replicate", 2): ReplicationPad2DBackward0, ("replicate", 3): ReplicationPad3DBackward0}


def _gather_pad(x, pad, mode):
    a = x._data
    pairs = _pairs(pad, a.ndim)
    idx = _gather_index(a.shape, pairs, mode, a)
    y = a[idx]
    if x._rg and grad.enabled:
        n = _NODES[(mode, len(pairs))]((edge(x),))
        n.padding, n.shape, n.pairs, n.mode, n.index = list(pad), a.shape, pairs, mode, idx
        n._saved = (save_in(x),)
        return keep_format(x, make(y, True, n))
    return keep_format(x, make(y))


def _check_nonconst(x, pad):
    """PyTorch's shape check: every dim but a batch dim must be non-empty."""
    a = x._data
    k = len(pad) // 2
    first = 1 if a.ndim == k + 2 else 0
    if any(s == 0 for s in a.shape[first:]):
        dims = {1: "2D or 3D", 2: "3D or 4D", 3: "4D or 5D"}[k]
        raise RuntimeError(f"Expected {dims} (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(a.shape)}")


def reflection_pad(x, pad):
    a = x._data
    _check_nonconst(x, pad)
    for d, lo, hi in _pairs(pad, a.ndim):
        if lo >= a.shape[d] or hi >= a.shape[d]:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {d} of input {list(a.shape)}")
    return _gather_pad(x, pad, "reflect")


def replication_pad(x, pad):
    _check_nonconst(x, pad)
    return _gather_pad(x, pad, "replicate")


def circular_pad(x, pad):
    """PyTorch builds the result with slice copies: grad_fn CopySlices."""
    a = x._data
    pairs = _pairs(pad, a.ndim)
    for d, lo, hi in pairs:
        if lo > a.shape[d] or hi > a.shape[d]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if a.shape[d] + lo + hi < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    idx = _gather_index(a.shape, pairs, "circular", a)
    shape = list(a.shape)
    for d, lo, hi in pairs:
        shape[d] += lo + hi
    out = zeros(shape, dtype=_dtype.from_numpy_dtype(a.dtype), device=x.device)
    setitem(out, Ellipsis, x[tuple(i if isinstance(i, slice) else make(i) for i in idx)])
    return out
