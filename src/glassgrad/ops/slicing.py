"""Views that take part of a tensor: results share memory with their input (see views.py).

ops: slice (basic indexing, `slice_dim`) narrow select diagonal unfold, and the multi-output views
     split chunk tensor_split unbind
"""
import numpy as np

from .. import _args, backend
from .._tensor import _wrap_dim
from ._core import edge, grad
from ..autograd.graph import Node
from .views import _ViewNode, _view_op, _make_view

__all__ = ["narrow", "select", "unfold", "diagonal", "split", "chunk", "unbind", "tensor_split"]


# -- slicing -----------------------------------------------------------------------------------
class SliceBackward0(_ViewNode):     # y = x[..., a:b:c, ...]; dx = zeros with gy written into the slice
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (ns.view_scatter(self.in_shape, self.args[0], g),)


class SelectBackward0(SliceBackward0):  # y = x.select(d, i)
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)


class NarrowBackward0(SliceBackward0):
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)


class DiagonalBackward0(SliceBackward0):
    __slots__ = ()
    stack_rule = None     # not verified for stacked gradients (explain.attribute calls it per term)


def _slice_fn(dim, sl):
    # the trailing Ellipsis keeps an integer index a (writable) 0-d view, not a NumPy scalar
    key = (slice(None),) * dim + (sl, Ellipsis)
    return lambda b: b[key]


def slice_dim(x, dim, start, stop, step=1):
    """x[..., start:stop:step] along `dim` (what basic indexing with a slice does)."""
    if step <= 0:
        raise ValueError("step must be greater than zero")
    fn = _slice_fn(dim, slice(start, stop, step))
    return _view_op(x, fn(x._data), SliceBackward0, fn, fn)


def narrow(x, dim, start, length):
    nd = x._data.ndim
    if nd == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, nd)
    size = x._data.shape[d]
    start = _args.int_arg(start, "narrow", "start", 3)
    length = _args.int_arg(length, "narrow", "length", 4)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    fn = _slice_fn(d, slice(start, start + length))
    return _view_op(x, fn(x._data), SliceBackward0, fn, fn)


def select(x, dim, index):
    nd = x._data.ndim
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, nd)
    size = x._data.shape[d]
    i = _args.int_arg(index, "select", "index", 2)
    if i < -size or i >= size:
        raise IndexError(f"select(): index {i} out of range for tensor of size {list(x._data.shape)} at "
                         f"dimension {d}")
    if i < 0:
        i += size
    fn = _slice_fn(d, i)
    return _view_op(x, fn(x._data), SelectBackward0, fn, fn)


def diagonal(x, offset=0, dim1=0, dim2=1):
    nd = x._data.ndim
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")

    def fn(b, o=offset, a1=d1, a2=d2):
        return _diag_view(b, o, a1, a2)
    return _view_op(x, fn(x._data), DiagonalBackward0, fn, fn)


def _diag_view(b, o, a1, a2):
    """A writable strided view of b's diagonal (np.diagonal's is read-only)."""
    bb = np.moveaxis(b, (a1, a2), (-2, -1))
    start = bb[..., :, o:] if o >= 0 else bb[..., -o:, :]
    m = max(0, min(start.shape[-2], start.shape[-1]))
    st = start.strides
    return backend.as_strided(start, start.shape[:-2] + (m,), st[:-2] + (st[-2] + st[-1],))


class UnfoldBackward0(_ViewNode):    # y = x.unfold(d, size, step); dx = overlapping windows summed
    __slots__ = ()

    def backward(self, ns, g):
        fn = self.args[0]
        n = 1
        for s in self.in_shape:
            n *= s
        idx = fn(np.arange(n, like=backend.like(ns.data(g))).reshape(self.in_shape)).reshape(-1)
        return (ns.reshape(ns.index_add_zeros((n,), (idx,), ns.reshape(g, (-1,))), self.in_shape),)


def unfold(x, dimension, size, step):
    from numpy.lib.stride_tricks import sliding_window_view
    nd = x._data.ndim
    d = _wrap_dim(dimension, nd) if nd else 0
    length = x._data.shape[d] if nd else 1
    size = _args.int_arg(size, "unfold", "size", 2)
    step = _args.int_arg(step, "unfold", "step", 3)
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")

    def fn(b, d=d, size=size, step=step):
        w = sliding_window_view(b, size, axis=d, writeable=True)
        key = (slice(None),) * d + (slice(None, None, step),)
        return w[key]
    if nd == 0:
        def fn(b, size=size):  # noqa: F811
            return b.reshape(1)
    return _view_op(x, fn(x._data), UnfoldBackward0, fn, fn)


# -- split / unbind (multi-output views) ------------------------------------------------------
class _MultiViewNode(Node):
    __slots__ = ("in_shape", "fns", "dtype")

    @property
    def n_outputs(self):
        return len(self.fns)

    def backward(self, ns, grads):
        if len(self.fns) == 1:      # the engine hands a single-output node its bare gradient
            grads = (grads,)
        shape = self.in_shape
        if ns.plain:     # the pieces are disjoint: write every gradient into one array (zeros where none came)
            present = [g is not None for g in grads]
            like = backend.like(grads[present.index(True)]) if any(present) else None
            out = (np.empty if all(present) else np.zeros)(shape, self.dtype, like=like)
            for g, fn, p in zip(grads, self.fns, present):
                if p:
                    fn(out)[...] = g
            return (out,)
        acc = None
        for g, fn in zip(grads, self.fns):
            if g is None:
                continue
            part = ns.view_scatter(shape, fn, g)
            acc = part if acc is None else acc + part
        if acc is None:
            acc = ns.zeros(shape, np.zeros(0, self.dtype))
        return (acc,)


class SplitBackward0(_MultiViewNode):
    __slots__ = ()


class SplitWithSizesBackward0(_MultiViewNode):
    __slots__ = ()


class UnbindBackward0(_MultiViewNode):
    __slots__ = ()


def _multi_view(x, fns, cls):
    arrs = [fn(x._data) for fn in fns]
    if x._rg and grad.enabled:
        n = cls((edge(x),))
        n.in_shape = x._data.shape
        n.fns = fns
        n.dtype = x._data.dtype
        outs = []
        for i, (a, fn) in enumerate(zip(arrs, fns)):
            o = _make_view(x, a, None, fn)
            o._rg = True
            o._grad_fn = n
            o._out_nr = i
            outs.append(o)
        return tuple(outs)
    return tuple(_make_view(x, a, None, fn) for a, fn in zip(arrs, fns))


def split(x, split_size_or_sections, dim=0):
    nd = x._data.ndim
    d = _wrap_dim(dim, nd)
    size = x._data.shape[d]
    if _args.as_int(split_size_or_sections) is not None:
        s = _args.int_arg(split_size_or_sections, "split", "split_size", 2)
        if s <= 0 and not (s == 0 and size == 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        bounds = [(i, min(i + s, size)) for i in range(0, size, s)] if s else [(0, 0)]
        cls = SplitBackward0
    else:
        secs = list(_args.int_list(split_size_or_sections, "split_with_sizes", "split_sizes", 2))
        if sum(secs) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                               f"at dimension {d}), but got split_sizes={secs}")
        bounds, start = [], 0
        for v in secs:
            bounds.append((start, start + v))
            start += v
        cls = SplitWithSizesBackward0
    fns = [_slice_fn(d, slice(a, b)) for a, b in bounds]
    return _multi_view(x, fns, cls)


def chunk(x, chunks, dim=0):
    chunks = _args.int_arg(chunks, "chunk", "chunks", 2)
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = _wrap_dim(dim, x._data.ndim)
    size = x._data.shape[d]
    each = -(-size // chunks) if size else 0
    if each == 0:
        return split(x, [0] * chunks if size == 0 else 1, d) if size == 0 else split(x, 1, d)
    return split(x, each, d)


def tensor_split(x, indices_or_sections, dim=0):
    d = _wrap_dim(dim, x._data.ndim)
    size = x._data.shape[d]
    if _args.as_int(indices_or_sections) is not None:
        n = _args.int_arg(indices_or_sections, "tensor_split", "sections", 2)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        secs = [q + 1] * r + [q] * (n - r)
    else:
        idx = list(_args.int_list(indices_or_sections, "tensor_split", "indices", 2))
        secs, prev = [], 0
        for i in idx + [size]:
            i = max(min(i, size), prev)
            secs.append(i - prev)
            prev = i
    out, start = [], 0
    for v in secs:                   # PyTorch: each piece is its own slice (SliceBackward0)
        out.append(slice_dim(x, d, start, start + v))
        start += v
    return tuple(out)


def unbind(x, dim=0):
    nd = x._data.ndim
    if nd == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, nd)
    return _multi_view(x, [_slice_fn(d, i) for i in range(x._data.shape[d])], UnbindBackward0)
