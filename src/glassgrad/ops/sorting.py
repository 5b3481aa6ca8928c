"""Sorting and selection: sort argsort msort topk unique unique_consecutive, and the named result tuples
(``torch.return_types.max(values=..., indices=...)``) shared with reduction.py.
"""
import numpy as np

from .. import _args, _dtype
from .._tensor import _wrap_dim
from ._core import make, edge, grad, ordered
from ..autograd.graph import Node

__all__ = ["sort", "argsort", "msort", "topk", "return_types", "unique", "unique_consecutive"]


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

    class ReturnType(tuple):
        __slots__ = ()
        n_fields = n_sequence_fields = len(fields)
        n_unnamed_fields = 0
        _fields = tuple(fields)

        def __new__(c, seq):
            seq = tuple(seq)
            if len(seq) != len(fields):
                raise TypeError(f"torch.return_types.{name}() takes a {len(fields)}-sequence "
                                f"({len(seq)}-sequence given)")
            return tuple.__new__(c, seq)

        def __repr__(self):
            body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
            return f"torch.return_types.{name}(\n{body})"

        __str__ = __repr__

        def __reduce__(self):
            return (_rebuild_return_type, (name, tuple(fields), tuple(self)))

    for i, f in enumerate(fields):
        setattr(ReturnType, f, property(lambda self, i=i: tuple.__getitem__(self, i)))
    cls = ReturnType
    cls.__name__ = cls.__qualname__ = name
    cls.__module__ = "torch.return_types"
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
def select_backward(ns, g, idx, in_shape, dim, keepdim=True):
    """Zeros of in_shape with g added at `idx` along `dim` (idx: int array shaped like g, or like g
    with `dim` kept).  Repeated indices accumulate."""
    if not in_shape:
        return ns.reshape(g, ())
    if not keepdim:
        g = ns.unsqueeze(g, dim)
        idx = np.expand_dims(idx, dim)
    if idx.__class__ is np.ndarray:
        grid = list(np.indices(idx.shape, sparse=True))
    else:       # np.indices has no like=: the same open grid, on idx's device
        grid = [np.arange(s, like=idx).reshape((1,) * i + (s,) + (1,) * (idx.ndim - i - 1))
                for i, s in enumerate(idx.shape)]
    grid[dim] = idx
    return ns.index_add_zeros(in_shape, tuple(grid), g)


class _SelectNode(Node):
    """values = x gathered at indices along dim; dx = scatter of gy back to those indices."""
    __slots__ = ("in_shape", "dim", "keepdim", "idx")

    @property
    def indices(self):              # grad_fn._saved_indices
        return make(self.idx)

    def backward(self, ns, g):
        return (select_backward(ns, g, self.idx, self.in_shape, self.dim, self.keepdim),)


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
_KEYED = frozenset(np.dtype(t) for t in (np.float32, np.float16, np.int32, np.int16, np.int8, np.uint16, np.uint8,
                                         np.bool_))
_LOW32 = np.int64(0xFFFFFFFF)


def _sort_keys(a, axis, descending):
    """int64 keys, (order-preserving 32-bit value << 32) | position along axis, all distinct, so that
    a plain (fast, unstable) sort of them is the stable sort of a, or None where values do not fit in
    32 bits or hold NaN.  NumPy's stable argsort of float32 is ~10x slower than sorting int64."""
    n = a.shape[axis]
    if a.dtype not in _KEYED or n >= 2 ** 31 or a.size == 0:
        return None
    if a.dtype.kind in "fV":
        if np.isnan(a).any():
            return None
        b = (a.astype(np.float32) + np.float32(0)).view(np.int32)     # (+0: -0.0 ties with 0.0, as in a sort)
        o = (b ^ ((b >> 31) & np.int32(0x7FFFFFFF))).astype(np.int64)  # float order as int order
    else:
        o = a.astype(np.int64)
    if descending:
        np.invert(o, out=o)                                           # -o - 1: reversed order, no overflow
    o <<= 32
    shape = [1] * a.ndim
    shape[axis] = n
    o |= np.arange(n, dtype=np.int64, like=a).reshape(shape)
    return o


def _argsort(a, axis, descending):
    if a.ndim == 0:
        return np.zeros((), np.int64, like=a)
    a = ordered(a)
    keys = _sort_keys(a, axis, descending)
    if keys is not None:
        keys.sort(axis=axis)
        return keys & _LOW32
    if not descending:
        return np.argsort(a, axis=axis, kind="stable").astype(np.int64)
    r = np.flip(a, axis)
    i = np.flip(np.argsort(r, axis=axis, kind="stable"), axis)
    return (a.shape[axis] - 1 - i).astype(np.int64)


def _take(a, idx, axis):
    if a.ndim == 0:
        return a.copy()
    return np.take_along_axis(a, idx, axis)


def _no_complex(a, what):
    if a.dtype.kind == "c":
        raise RuntimeError(f" {what} does not support complex dtypes on CPU")


def sort(input, dim=-1, descending=False, stable=None, *, out=None):
    if isinstance(dim, bool):            # sort(x, stable=..., ...) positional oddities
        dim, descending = -1, dim
    a = input._data
    _no_complex(a, "Sort")
    d = _wrap_dim(dim, a.ndim)
    idx = _argsort(a, d, descending)
    vals = _take(a, idx, d)
    # PyTorch names the node after the overload: SortBackward1 when `stable` is passed at all
    cls = SortBackward0 if stable is None else SortBackward1
    return named("sort", selected(cls, input, vals, idx, d), make(idx))


def argsort(input, dim=-1, descending=False, stable=False):
    a = input._data
    _no_complex(a, "Sort")
    d = _wrap_dim(dim, a.ndim)
    return make(_argsort(a, d, descending))


def msort(input, *, out=None):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    k = _args.int_arg(k, "topk", "k", 2)
    a = input._data
    _no_complex(a, "topk")
    d = _wrap_dim(dim, a.ndim)
    n = a.shape[d] if a.ndim else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    keys = _sort_keys(ordered(a), d, largest) if a.ndim else None
    if keys is not None:        # select the k first keys (a partition when k is small), sort only those
        if 0 < k < n // 4:
            keys = np.sort(np.take(np.partition(keys, k - 1, axis=d), np.arange(k, like=a), axis=d), axis=d)
        else:
            keys.sort(axis=d)
            keys = np.take(keys, np.arange(k, like=a), axis=d)
        idx = keys & _LOW32
    else:
        idx = _argsort(a, d, largest)
        if a.ndim:
            idx = np.ascontiguousarray(np.take(idx, np.arange(k, like=a), axis=d), like=a)
        elif k == 0:
            idx = np.zeros((0,), np.int64, like=a)
    vals = _take(a, idx, d) if (a.ndim or k) else a.reshape(1)[:0]
    return named("topk", selected(TopkBackward0, input, vals, idx, d), make(idx))


# -- unique / unique_consecutive: no derivative (torch's nodes raise NotImplementedError) --------------------
class Unique2Backward0(Node):
    __slots__ = ()
    what = "_unique2"

    def backward(self, ns, g):
        raise NotImplementedError(f"the derivative for '{self.what}' is not implemented.")


class UniqueDimBackward0(Unique2Backward0):
    __slots__ = ()
    what = "unique_dim"


class UniqueConsecutiveBackward0(Unique2Backward0):
    __slots__ = ()
    what = "unique_consecutive"


def _unique_result(x, vals, inv, counts, return_inverse, return_counts, cls):
    if x._rg and grad.enabled:
        out = make(vals, True, cls((edge(x),)))
    else:
        out = make(vals)
    extra = ((make(inv.astype(np.int64)),) if return_inverse else ()) + \
        ((make(counts.astype(np.int64)),) if return_counts else ())
    return (out,) + extra if extra else out


def _no_complex_unique(a, what):
    if a.dtype.kind == "c":
        raise NotImplementedError(f'"{what}" not implemented for \'{_dtype.c_name(a.dtype)}\'')


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique: the distinct values (sorted; NaNs each their own), with the inverse (input's shape, or the
    length along dim) and the counts when asked for."""
    a = input._data
    _no_complex_unique(a, "unique" if dim is None else "unique_dim")
    if dim is None:
        flat = ordered(a).reshape(-1)
        order = np.argsort(flat, kind="stable")
        sv = flat[order]
        new = np.ones(sv.shape, bool, like=a)
        new[1:] = (sv[1:] != sv[:-1])
        vals = sv[new].astype(a.dtype, copy=False)
        gid = np.cumsum(new) - 1
        inv = np.empty(flat.shape, np.int64, like=a)
        inv[order] = gid
        counts = np.bincount(gid, minlength=vals.size) if flat.size else np.zeros(0, np.int64, like=a)
        return _unique_result(input, vals, inv.reshape(a.shape), counts, return_inverse, return_counts, Unique2Backward0)
    d = _wrap_dim(dim, a.ndim)
    vals, inv, counts = np.unique(ordered(a), return_inverse=True, return_counts=True, axis=d)
    vals = vals.astype(a.dtype, copy=False)
    return _unique_result(input, vals, inv.reshape(-1), counts, return_inverse, return_counts, UniqueDimBackward0)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """torch.unique_consecutive: each run of equal consecutive values (slices along dim) kept once."""
    a = input._data
    _no_complex_unique(a, "unique" if dim is None else "unique_dim")
    d = None if dim is None else _wrap_dim(dim, a.ndim)
    m = a.reshape(-1) if d is None else np.moveaxis(a, d, 0)
    n = m.shape[0]
    new = np.ones(n, bool, like=a)
    if n > 1:
        diff = m[1:] != m[:-1]
        new[1:] = diff if diff.ndim == 1 else diff.reshape(n - 1, -1).any(1)
    gid = np.cumsum(new) - 1
    vals = m[new] if d is None else np.moveaxis(m[new], 0, d)
    counts = np.bincount(gid, minlength=int(new.sum())) if n else np.zeros(0, np.int64, like=a)
    inv = gid.reshape(a.shape) if d is None else gid
    return _unique_result(input, vals, inv, counts, return_inverse, return_counts, UniqueConsecutiveBackward0)
