"""Indexing: x[i] and nonzero.

ops: getitem (basic indexing as a chain of views, as PyTorch does; advanced indexing as
     IndexBackward0), nonzero
(x[i] = v, masked_*, take/put, index_put: ops/masked.py; gather, scatter, index_*: ops/gather_scatter.py)
"""
import warnings

import re

import numpy as np

from .. import backend
from ._core import Tensor, make, edge, grad, _ARRAYS
from ..autograd.graph import Node, guard
from . import views as V, slicing as SL

__all__ = ["nonzero", "index_put_zeros"]

_UINT8_WARNING = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead. "
                  "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/IndexingUtils.h:37.)")


def _is_basic(item):
    return item is None or item is Ellipsis or isinstance(item, (int, np.integer, slice)) and not isinstance(item, bool)


def _index_dims(it):
    """How many dims of the indexed tensor one index item consumes."""
    if it is None or it is Ellipsis:
        return 0
    if isinstance(it, Tensor) and it._data.dtype in (np.bool_, np.uint8):
        return it._data.ndim
    return 1


def _is_int_scalar(it):
    """A 0-d integer tensor other than uint8 (which torch reads as a mask), taken as a Python int."""
    return isinstance(it, Tensor) and it._data.ndim == 0 and it._data.dtype.kind in "iu" and \
        it._data.dtype != np.uint8


def normalize_index(index, ndim):
    """An index as a tuple, with torch's reading of what NumPy reads otherwise: a string is a TypeError
    (torch tries to make a tensor of it), and every Ellipsis of several stands for the dims the other
    items leave (x[..., 0, ...] is x[:, :, 0] for 3 dims; ellipses past the last dim add nothing)."""
    index = _legacy_sequence(index)
    if not isinstance(index, tuple):
        index = (index,)
    ellipses = scalars = 0
    for it in index:
        c = it.__class__
        if c is int or c is slice or it is None:            # the common items, checked first
            continue
        if _is_int_scalar(it):
            scalars += 1
            continue
        if it is Ellipsis:
            ellipses += 1
            continue
        bad = next((v for v in (it if isinstance(it, list) else (it,)) if isinstance(v, (str, bytes))), None)
        if bad is not None:
            raise TypeError(f"new(): invalid data type '{type(bad).__name__}'")
    if scalars:                 # torch selects by a 0-d integer tensor's value (a view)
        index = tuple(int(it._data) if _is_int_scalar(it) else it for it in index)
    if ellipses < 2:
        return index
    n_real = sum(_index_dims(it) for it in index)
    out, dim = [], 0
    for it in index:
        if it is Ellipsis:
            k = max(min(ndim - n_real, ndim - dim), 0)
            out.extend([slice(None)] * k)
            dim += k
        else:
            out.append(it)
            dim += _index_dims(it)
    return tuple(out)


def _expand_ellipsis(index, ndim):
    n_real = sum(1 for it in index if it is not None and it is not Ellipsis and not
                 (isinstance(it, Tensor) and it._data.dtype in (np.bool_, np.uint8)))
    n_real += sum(it._data.ndim - 1 for it in index if isinstance(it, Tensor) and it._data.dtype in (np.bool_, np.uint8))
    if sum(1 for it in index if it is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    out = []
    for it in index:
        if it is Ellipsis:
            out.extend([slice(None)] * max(ndim - n_real, 0))
        else:
            out.append(it)
    return out


def _basic_getitem(x, index, single=False):
    """Apply ints, slices and None one at a time, the way PyTorch does (Select/Slice/Unsqueeze nodes)."""
    nd = x._data.ndim
    n_real = sum(1 for it in index if it is not None and it is not Ellipsis)
    if n_real > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    index = _expand_ellipsis(index, nd)
    out = x
    dim = 0
    for it in index:
        if it is None:
            out = V.unsqueeze(out, dim)
            dim += 1
        elif isinstance(it, slice):
            size = out._data.shape[dim]
            start, stop, step = it.start, it.stop, it.step
            if step is not None and step <= 0:
                raise ValueError("step must be greater than zero")
            s, e, st = slice(start, stop, step).indices(size)
            if e < s:
                e = s
            if single or not (s == 0 and e == size and st == 1):   # x[:] alone is still a SliceBackward0
                out = SL.slice_dim(out, dim, s, e, st)
            dim += 1
        else:
            i = int(it)
            if dim >= out._data.ndim:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size 0")
            size = out._data.shape[dim]
            if i < -size or i >= size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            if i < 0:
                i += size
            # SL.select's view fn gives a NumPy scalar for a 0-d result; `(i, ...)` keeps a writable 0-d view
            fn = (lambda b, k=(slice(None),) * dim + (i, Ellipsis): b[k])
            out = V._view_op(out, fn(out._data), SL.SelectBackward0, fn, fn)
    if out is x:
        out = V._view_op(x, x._data.view(), AliasBackward0, lambda b: b)
    return out


class AliasBackward0(V._ViewNode):      # an index that keeps all of x (x[...]): y is a view of x; dx = gy
    __slots__ = ()
    stack_rule = "generic"    # the formula works on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (g,)


def _to_np_index(index, x):
    """Convert an index containing tensors/lists into a NumPy index; checks bounds."""
    out = []
    for it in index:
        if isinstance(it, Tensor):
            a = it._data
            if a.dtype == np.uint8:
                warnings.warn(_UINT8_WARNING, UserWarning, stacklevel=4)
                a = a.astype(bool)
            elif a.dtype.kind in "fV":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if a.__class__ is np.ndarray and x._data.__class__ is not np.ndarray and a.ndim:
                a = backend.to_device(a, x.device)      # a CPU index of a CUDA tensor: moved, as torch does
            out.append(a)
        elif isinstance(it, (list, tuple)):
            a = np.asarray(it, like=x._data)
            if a.dtype.kind in "fV":      # torch makes a long tensor of a list: floats are truncated
                a = a.astype(np.int64)
            out.append(a)
        elif isinstance(it, bool):
            out.append(it)
        else:
            out.append(it)
    return tuple(out)


def _check_adv(x, npidx):
    """Turn NumPy's IndexError into PyTorch's wording."""
    try:
        return x._data[npidx]
    except IndexError as e:
        msg = str(e)
        if "out of bounds" in msg:
            m = re.search(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)", msg)
            if m:
                raise IndexError(f"index {m.group(1)} is out of bounds for dimension {m.group(2)} with size "
                                 f"{m.group(3)}") from None
        if "boolean index did not match" in msg:
            m = re.search(r"axis (\d+); size of axis is (\d+) but size of corresponding boolean axis is (\d+)", msg)
            if m:
                raise IndexError(f"The shape of the mask [{m.group(3)}] at index {m.group(1)} does not match the "
                                 f"shape of the indexed tensor [{m.group(2)}] at index {m.group(1)}") from None
        raise IndexError(msg) from None


def _check_masks(npidx, shape):
    """PyTorch's message for a bool mask whose shape does not match the dims it indexes."""
    n_real = sum(1 if not isinstance(it, np.ndarray) else (it.ndim if it.dtype == np.bool_ else 1)
                 for it in npidx if it is not None and it is not Ellipsis)
    dim = 0
    for it in npidx:
        if it is None:
            continue
        if it is Ellipsis:
            dim += max(len(shape) - n_real, 0)
            continue
        if isinstance(it, np.ndarray) and it.dtype == np.bool_ and it.ndim:
            for k in range(it.ndim):
                if dim + k < len(shape) and it.shape[k] != shape[dim + k]:
                    raise IndexError(f"The shape of the mask {list(it.shape)} at index {k} does not match the shape "
                                     f"of the indexed tensor {list(shape)} at index {dim + k}")
            dim += it.ndim
        else:
            dim += 1


class IndexBackward0(Node):         # y = x[idx]; dx = zeros with gy added at idx (repeats accumulate)
    __slots__ = ("in_shape", "index", "dtype", "rows")   # rows: see _mask_rows (None: the general path)
    stack_rule = "generic"    # the formula works on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        # the row fast path on plain arrays only (not in tensor mode, nor explain's stacked namespace)
        if self.rows is not None and ns.plain:
            return (_scatter_rows(self.in_shape, self.rows, g),)
        return (ns.index_add_zeros(self.in_shape, self.index, g),)


def _mask_rows(npidx, shape):
    """For x[mask] with one bool mask over x's leading dims: the flat positions of its True entries
    (the rows of x viewed as (mask.size, ...) that the result takes, in order), else None.  Taking
    those rows is ~10x faster than NumPy's boolean indexing, and the backward can assign instead of
    accumulating (np.add.at), as the positions are distinct."""
    if len(npidx) != 1:
        return None
    m = npidx[0]
    if not isinstance(m, np.ndarray) or m.dtype != np.bool_ or not m.ndim or m.shape != shape[:m.ndim]:
        return None
    return np.flatnonzero(m)


def _scatter_rows(in_shape, rows, g):
    """Zeros of in_shape (viewed as (n, ...)) with g's rows written at the positions `rows`."""
    nd = len(in_shape) - (g.ndim - 1)
    lead = int(np.prod(in_shape[:nd]))
    out = np.zeros((lead,) + tuple(g.shape[1:]), g.dtype, like=g)
    if g.ndim > 1 and g.size and g.__class__ is np.ndarray:
        # one opaque record per row: a 1-d fancy assignment, not a row loop (host only: CuPy has no void dtype)
        rec = np.dtype((np.void, g.itemsize * (g.size // g.shape[0])))
        out.reshape(lead, -1).view(rec)[:, 0][rows] = np.ascontiguousarray(g).reshape(g.shape[0], -1).view(rec)[:, 0]
    else:
        out[rows] = g
    return out.reshape(in_shape)


_SEQ_WARNING = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor "
                "index, x[torch.tensor(seq)], which will result either in an error or a different result (Triggered "
                "internally at /__w/pytorch/pytorch/torch/csrc/autograd/python_variable_indexing.cpp:349.)")


def _legacy_sequence(index):
    """A list holding sequences, slices, None or Ellipsis is read as a tuple (NumPy's old rule), with a warning."""
    if isinstance(index, list) and len(index) < 32 and any(
            isinstance(it, (list, tuple, slice, Tensor)) or it is None or it is Ellipsis for it in index):
        warnings.warn(_SEQ_WARNING, UserWarning, stacklevel=4)
        return tuple(index)
    return index


def getitem(x, index):
    single = isinstance(index, slice)
    index = normalize_index(index, x._data.ndim)
    if all(_is_basic(it) for it in index):
        return _basic_getitem(x, index, single)
    npidx = _to_np_index(index, x)
    a = x._data
    rows = _mask_rows(npidx, a.shape)
    if rows is not None:
        m = npidx[0]
        y = np.take(a.reshape((m.size,) + a.shape[m.ndim:]), rows, axis=0)
    else:
        _check_masks(npidx, a.shape)
        y = _check_adv(x, npidx)
        if y.__class__ is not np.ndarray:
            if not isinstance(y, _ARRAYS):          # a NumPy scalar
                y = np.array(y)
            elif y.base is not None:                # a device array: advanced indexing copies (CuPy)
                y = y.copy()
        elif y.base is not None and np.shares_memory(y, a):
            y = np.array(y)
    if x._rg and grad.enabled:
        n = IndexBackward0((edge(x),))
        guard(n, *[t for t in index if isinstance(t, Tensor)])     # torch saves the index tensors
        n.in_shape = a.shape
        n.index = npidx
        n.dtype = a.dtype
        n.rows = rows
        return make(y, True, n)
    return make(y)


class _IndexPutZerosBackward(Node):
    __slots__ = ("index",)

    def backward(self, ns, g):
        idx = tuple(i._data if isinstance(i, Tensor) else i for i in self.index)
        return (g[idx] if ns.is_tensor_mode is False else getitem(g, self.index),)


def index_put_zeros(shape, index, g):
    """Differentiable: zeros of `shape` with tensor g added at `index` (used by double backward)."""
    idx = tuple(i._data if isinstance(i, Tensor) else i for i in (index if isinstance(index, tuple) else (index,)))
    out = np.zeros(shape, g._data.dtype, like=g._data)
    np.add.at(out, idx, g._data)
    if g._rg and grad.enabled:
        n = _IndexPutZerosBackward((edge(g),))
        n.index = tuple(make(np.asarray(i)) if isinstance(i, np.ndarray) else i for i in idx)
        return make(out, True, n)
    return make(out)


def nonzero(input, *, as_tuple=False, out=None):
    nz = np.nonzero(input._data) if input._data.ndim else ()
    if as_tuple:
        if input._data.ndim == 0:
            return (make(np.zeros(int(bool(input._data)), np.int64, like=input._data)),)
        return tuple(make(a.astype(np.int64)) for a in nz)
    if input._data.ndim == 0:
        return make(np.zeros((int(bool(input._data)), 0), np.int64, like=input._data))
    return make(np.stack(nz, axis=1).astype(np.int64) if nz else np.zeros((0, 0), np.int64, like=input._data))

