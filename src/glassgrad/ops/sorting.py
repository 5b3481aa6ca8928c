"""Sorting and selection: sort argsort msort topk, and the named result tuples
(``torch.return_types.max(values=..., indices=...)``) shared with reduction.py.
"""
import numpy as np

from .._tensor import _wrap_dim
from ._core import Tensor, make, edge, grad
from ..autograd.graph import Node

__all__ = ["sort", "argsort", "msort", "topk", "return_types"]


# -- named result tuples ---------------------------------------------------------------------------
class _ReturnTypes:
    """The namespace ``torch.return_types``: one tuple class per op, made on first use."""

    def __getattr__(self, name):
        raise AttributeError(f"module 'torch.return_types' has no attribute '{name}'")


return_types = _ReturnTypes()


def _structseq(name, fields):
    cls = return_types.__dict__.get(name)
    if cls is not None:
        return cls

    def __new__(c, seq):
        seq = tuple(seq)
        if len(seq) != len(fields):
            raise TypeError(f"torch.return_types.{name}() takes a {len(fields)}-sequence "
                            f"({len(seq)}-sequence given)")
        return tuple.__new__(c, seq)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    def __reduce__(self):
        return (_rebuild_return_type, (name, tuple(fields), tuple(self)))

    ns = {"__slots__": (), "__new__": __new__, "__repr__": __repr__, "__str__": __repr__,
          "__reduce__": __reduce__, "n_fields": len(fields), "n_sequence_fields": len(fields),
          "n_unnamed_fields": 0, "_fields": tuple(fields), "__module__": "torch.return_types"}
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
    cls = type(name, (tuple,), ns)
    cls.__qualname__ = name
    return_types.__dict__[name] = cls
    return cls


def _rebuild_return_type(name, fields, values):
    return _structseq(name, fields)(values)


def named(name, a, b, fields=("values", "indices")):
    return _structseq(name, fields)((a, b))


for _n in ("max", "min", "sort", "topk", "median", "nanmedian", "mode", "kthvalue", "cummax", "cummin"):
    _structseq(_n, ("values", "indices"))
_structseq("aminmax", ("min", "max"))


# -- the shared backward: the gradient goes back to the selected positions ------------------------
def select_backward(F, g, idx, in_shape, dim, keepdim=True):
    """Zeros of in_shape with g added at `idx` along `dim` (idx: int array shaped like g, or like g
    with `dim` kept).  Repeated indices accumulate."""
    if not in_shape:
        return F.reshape(g, ())
    if not keepdim:
        g = F.unsqueeze(g, dim)
        idx = np.expand_dims(idx, dim)
    grid = list(np.indices(idx.shape, sparse=True))
    grid[dim] = idx
    return F.index_add_zeros(in_shape, tuple(grid), g)


class _SelectNode(Node):
    """values = x gathered at indices along dim; dx = scatter of gy back to those indices."""
    __slots__ = ("in_shape", "dim", "keepdim", "idx")

    @property
    def indices(self):              # grad_fn._saved_indices
        return make(self.idx)

    def backward(self, F, g):
        return (select_backward(F, g, self.idx, self.in_shape, self.dim, self.keepdim),)


def selected(cls, x, values, idx, dim, keepdim=True):
    """Wrap `values` (an array gathered from x) as a differentiable output of node class `cls`."""
    if x._rg and grad.enabled:
        n = cls((edge(x),))
        n.in_shape = x._data.shape
        n.dim = dim
        n.keepdim = keepdim
        n.idx = idx
        return make(values, True, n)
    return make(values)


class SortBackward0(_SelectNode):
    __slots__ = ()


class SortBackward1(_SelectNode):
    __slots__ = ()


class TopkBackward0(_SelectNode):
    __slots__ = ()


# -- sort ------------------------------------------------------------------------------------------------
def _argsort(a, axis, descending):
    if a.ndim == 0:
        return np.zeros((), np.int64)
    if not descending:
        return np.argsort(a, axis=axis, kind="stable").astype(np.int64)
    r = np.flip(a, axis)
    i = np.flip(np.argsort(r, axis=axis, kind="stable"), axis)
    return (a.shape[axis] - 1 - i).astype(np.int64)


def _take(a, idx, axis):
    if a.ndim == 0:
        return a.copy()
    return np.take_along_axis(a, idx, axis)


def sort(input, dim=-1, descending=False, stable=None, *, out=None):
    if isinstance(dim, bool):            # sort(x, stable=..., ...) positional oddities
        dim, descending = -1, dim
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    idx = _argsort(a, d, descending)
    vals = _take(a, idx, d)
    # PyTorch names the node after the overload: SortBackward1 when `stable` is passed at all
    cls = SortBackward0 if stable is None else SortBackward1
    return named("sort", selected(cls, input, vals, idx, d), make(idx))


def argsort(input, dim=-1, descending=False, stable=False):
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    return make(_argsort(a, d, descending))


def msort(input, *, out=None):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    n = a.shape[d] if a.ndim else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    idx = _argsort(a, d, largest)
    if a.ndim:
        idx = np.ascontiguousarray(np.take(idx, np.arange(k), axis=d))
    elif k == 0:
        idx = np.zeros((0,), np.int64)
    vals = _take(a, idx, d) if (a.ndim or k) else a.reshape(1)[:0]
    return named("topk", selected(TopkBackward0, input, vals, idx, d), make(idx))
