"""The `*_copy` forms of the view ops and the `*_scatter` ops (torch's functionalization vocabulary).

ops: alias_copy as_strided_copy detach_copy diagonal_copy expand_copy narrow_copy permute_copy select_copy
     slice_copy split_copy split_with_sizes_copy squeeze_copy t_copy transpose_copy unbind_copy unfold_copy
     unsqueeze_copy view_copy; diagonal_scatter select_scatter slice_scatter as_strided_scatter;
     slice_inverse; detach detach_ fill fill_ zero_ (torch.* forms of the Tensor methods)

A `*_copy` op is its view op followed by a copy into fresh contiguous memory.  Its node is the view's
node under torch's name for the copy (`PermuteBackward0_copy`): each is declared below as a subclass of
the view's node with the same slots and backward, and the view op's node is re-labelled to it
(`_copied`), so the backward is the view's own.  A `*_scatter` op writes `src` into a copy of `input`
through the view's region: dinput = gy with that region zeroed, dsrc = the region of gy.
"""
import numpy as np

from .. import _args, backend
from .._tensor import _wrap_dim
from ._core import make, edge, grad, NO_EDGE, NotImplementedNode
from ..autograd.graph import Node
from . import views as V, slicing as S, strided as _st, creation as _cr
from .indexing import AliasBackward0
from .shape import DiagonalBackward0_copy

__all__ = ["alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy", "narrow_copy",
           "permute_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy",
           "t_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy",
           "diagonal_scatter", "select_scatter", "slice_scatter", "as_strided_scatter", "slice_inverse",
           "detach", "detach_", "fill", "fill_", "zero_"]


# -- the copy nodes: the view's node under torch's name for the copy ---------------------------------------
class AliasBackward0_copy(AliasBackward0):            # y = alias(x).clone(); dx = gy
    __slots__ = ()


class AsStridedBackward0_copy(_st._AsStridedAccum):   # y = as_strided(x).clone(); dx as as_strided's
    __slots__ = ()


class ExpandBackward0_copy(V.ExpandBackward0):        # y = x.expand(s).clone(); dx = gy summed to x's shape
    __slots__ = ()


class NarrowCopyBackward0(S.SliceBackward0):          # y = x.narrow(...).clone(); dx = gy in zeros
    __slots__ = ()


class PermuteBackward0_copy(V.PermuteBackward0):      # y = x.permute(p).clone(); dx = gy.permute(p^-1)
    __slots__ = ()


class SelectBackward0_copy(S.SelectBackward0):        # y = x.select(d, i).clone(); dx = gy in zeros
    __slots__ = ()


class SliceBackward0_copy(S.SliceBackward0):          # y = x[.., a:b:c].clone(); dx = gy in zeros
    __slots__ = ()


class SplitBackward0_copy(S.SplitBackward0):          # y_i = split(x)[i].clone(); dx = the pieces joined
    __slots__ = ()


class SplitWithSizesBackward0_copy(S.SplitWithSizesBackward0):
    __slots__ = ()


class SqueezeBackward0_copy(V.SqueezeBackward0):      # y = x.squeeze().clone(); dx = gy reshaped
    __slots__ = ()


class SqueezeBackward1_copy(V.SqueezeBackward1):      # squeeze(dim)
    __slots__ = ()


class SqueezeBackward2_copy(V.SqueezeBackward2):      # squeeze(dims)
    __slots__ = ()


class TBackward0_copy(V.TBackward0):                  # y = x.t().clone(); dx = gy.t()
    __slots__ = ()


class TransposeBackward0_copy(V.TransposeBackward0):  # y = x.transpose(a, b).clone(); dx = gy.transpose(a, b)
    __slots__ = ()


class UnbindBackward0_copy(S.UnbindBackward0):        # y_i = x.unbind(d)[i].clone(); dx = stack of gy_i
    __slots__ = ()


class UnfoldBackward0_copy(S.UnfoldBackward0):        # y = x.unfold(d, n, s).clone(); dx = windows summed
    __slots__ = ()


class UnsqueezeBackward0_copy(V.UnsqueezeBackward0):  # y = x.unsqueeze(d).clone(); dx = gy.squeeze(d)
    __slots__ = ()


class ViewBackward0_copy(V.ViewBackward0):            # y = x.view(s).clone(); dx = gy.reshape(x's shape)
    __slots__ = ()


_RELABEL = {n.__bases__[0]: n for n in (
    AliasBackward0_copy, AsStridedBackward0_copy, ExpandBackward0_copy, PermuteBackward0_copy,
    SelectBackward0_copy, SplitBackward0_copy, SplitWithSizesBackward0_copy, SqueezeBackward0_copy,
    SqueezeBackward1_copy, SqueezeBackward2_copy, TBackward0_copy, TransposeBackward0_copy, UnbindBackward0_copy,
    UnfoldBackward0_copy, UnsqueezeBackward0_copy, ViewBackward0_copy)}


def _fresh(a):
    return np.array(a, order="C", copy=True, like=a)


def _copied(y, cls=None):
    """The view y copied into fresh memory, its node re-labelled `cls` (default: the view node's copy)."""
    n = y._grad_fn
    if n is None:
        return make(_fresh(y._data))
    n.__class__ = _RELABEL[type(n)] if cls is None else cls
    return make(_fresh(y._data), True, n)


def _copied_many(ys):
    n = ys[0]._grad_fn if ys else None
    if n is None:
        return tuple(make(_fresh(y._data)) for y in ys)
    n.__class__ = _RELABEL[type(n)]
    return tuple(make(_fresh(y._data), True, n, i) for i, y in enumerate(ys))


# -- the *_copy ops ------------------------------------------------------------------------------------------
def alias_copy(input):
    return _copied(V._view_op(input, input._data.view(), AliasBackward0, lambda b: b))


def as_strided_copy(input, size, stride, storage_offset=None):
    return _copied(_st.as_strided(input, size, stride, storage_offset), AsStridedBackward0_copy)


def detach_copy(input):
    """torch's detach_copy: a copy that requires grad when input does, with a node that cannot backward."""
    if input._rg and grad.enabled:
        n = NotImplementedNode((edge(input),))
        n.what = "aten::detach_copy"
        return make(_fresh(input._data), True, n)
    return make(_fresh(input._data))


def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    y = S.diagonal(input, offset, dim1, dim2)
    if y._grad_fn is None:
        return make(_fresh(y._data))
    n = DiagonalBackward0_copy((edge(input),))
    n.fn, n.shape = y._grad_fn.args[0], input._data.shape
    return make(_fresh(y._data), True, n)


def expand_copy(input, size, *, implicit=False):
    return _copied(V.expand(input, size))


def narrow_copy(input, dim, start, length):
    return _copied(S.narrow(input, dim, start, length), NarrowCopyBackward0)


def permute_copy(input, dims):
    return _copied(V.permute(input, dims))


def select_copy(input, dim, index):
    return _copied(S.select(input, dim, index))


def slice_copy(input, dim=0, start=None, end=None, step=1):
    return _copied(_slice(input, dim, start, end, step, "slice_copy"), SliceBackward0_copy)


def split_copy(input, split_size, dim=0):
    split_size = _args.int_arg(split_size, "split_copy", "split_size", 2)
    return _copied_many(S.split(input, split_size, dim))


def split_with_sizes_copy(input, split_sizes, dim=0):
    split_sizes = list(_args.int_list(split_sizes, "split_with_sizes_copy", "split_sizes", 2))
    return _copied_many(S.split(input, split_sizes, dim))


def squeeze_copy(input, dim=None):
    return _copied(V.squeeze(input, dim))


def t_copy(input):
    return _copied(V.t(input))


def transpose_copy(input, dim0, dim1):
    return _copied(V.transpose(input, dim0, dim1))


def unbind_copy(input, dim=0):
    return _copied_many(S.unbind(input, dim))


def unfold_copy(input, dimension, size, step):
    return _copied(S.unfold(input, dimension, size, step))


def unsqueeze_copy(input, dim):
    return _copied(V.unsqueeze(input, dim))


def view_copy(input, size):
    y = V.view(input, size)
    if y._grad_fn is not None and not isinstance(y._grad_fn, V.ViewBackward0):   # a dtype view: no node
        return make(_fresh(y._data))
    return _copied(y)


# -- the *_scatter ops ---------------------------------------------------------------------------------------
def _slice(input, dim, start, end, step, name):
    step = _args.int_arg(step, name, "step", 5)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    nd = input._data.ndim
    if nd == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, nd)
    start = None if start is None else _args.int_arg(start, name, "start", 3)
    end = None if end is None else _args.int_arg(end, name, "end", 4)
    return S.slice_dim(input, d, start, end, step)


class _ScatterNode(Node):
    __slots__ = ("fn",)
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (ns.view_fill(g, self.fn, 0), ns.apply_view(g, self.fn))


class DiagonalScatterBackward0(_ScatterNode):   # y = x with diagonal(y) = src
    __slots__ = ()


class SelectScatterBackward0(_ScatterNode):     # y = x with y.select(d, i) = src
    __slots__ = ()


class SliceScatterBackward0(_ScatterNode):      # y = x with y[.., a:b:c] = src
    __slots__ = ()


class AsStridedScatterBackward0(_ScatterNode):  # y = x with y.as_strided(size, stride, off) = src
    __slots__ = ()
    stack_rule = None


def _scatter(input, src, region, fn, cls, out=None):
    """input with `src` written into the region `fn` selects (region: that view of input, for its shape),
    in a copy of input (or in `out`, input's values already there)."""
    if not hasattr(src, "_data"):
        raise TypeError(f"{cls.__name__[:-9].lower()}(): argument 'src' (position 2) must be Tensor, not "
                        f"{type(src).__name__}")
    if tuple(region._data.shape) != tuple(src._data.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._data.shape)}, slice size = {list(region._data.shape)}")
    out = _fresh(input._data) if out is None else out
    fn(out)[...] = src._data.astype(out.dtype, copy=False)
    if (input._rg or src._rg) and grad.enabled:
        n = cls((edge(input), edge(src)))
        n.fn = fn
        return make(out, True, n)
    return make(out)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    region = S.diagonal(input.detach(), offset, dim1, dim2)
    return _scatter(input, src, region, region._view_fn, DiagonalScatterBackward0)


def select_scatter(input, src, dim, index):
    region = S.select(input.detach(), dim, index)
    return _scatter(input, src, region, region._view_fn, SelectScatterBackward0)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    region = _slice(input.detach(), dim, start, end, step, "slice_scatter")
    return _scatter(input, src, region, region._view_fn, SliceScatterBackward0)


def _dense_order(a):
    """The axis order that puts a's memory order first, when a is dense (clone keeps such a layout)."""
    perm = tuple(sorted(range(a.ndim), key=lambda i: -a.strides[i]))
    return perm if a.transpose(perm).flags.c_contiguous else None


def _memory_order_fn(size, stride, off, perm):
    """as_strided on an array's positions counted in the memory order `perm` of its axes (b.transpose(perm)
    is C-contiguous for the output array, so the view writes through; a gradient array is read through a
    copy)."""
    def fn(b):
        flat = b.transpose(perm).reshape(-1)
        return backend.as_strided(flat[off:], size, tuple(st * flat.itemsize for st in stride))
    return fn


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """input (cloned with its layout kept, as torch's clone) with src written into the clone's as_strided
    view (storage positions in the clone's memory order)."""
    size, stride = _st._int_tuple(size, "size", 3), _st._int_tuple(stride, "stride", 4)
    off = 0 if storage_offset is None else _args.int_arg(storage_offset, "as_strided_scatter", "storage_offset", 5)
    a = input._data
    if input._rg and not a.flags.c_contiguous:
        raise RuntimeError("as_strided_scatter is currently only supported for contiguous inputs")
    _st.check_strided(size, stride, off, a.itemsize, a.size * a.itemsize)
    fn = _st._strided_fn(size, stride, off)
    perm = None if a.flags.c_contiguous else _dense_order(a)
    if perm is None:
        out = _fresh(a)
    else:                         # a dense, permuted layout: positions count in memory order
        inv = tuple(np.argsort(perm))
        out = np.array(a.transpose(perm), order="C", like=a).transpose(inv)
        fn = _memory_order_fn(size, stride, off, perm)
    return _scatter(input, src, make(fn(out)), fn, AsStridedScatterBackward0, out)


# -- slice_inverse: the base that `input` (a slice of it) was cut from, as a view of input's storage -------
class SliceInverseBackward0(Node):    # y = the base input was sliced from; dx = gy[.., a:b:c], dsrc = gy, 0 there
    __slots__ = ("fn",)

    def backward(self, ns, g):
        return (ns.apply_view(g, self.fn), ns.view_fill(g, self.fn, 0))


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The tensor `input` was sliced from, shaped and strided as `src`: input.as_strided(src's geometry)."""
    region = _slice(src.detach(), dim, start, end, step, "slice_inverse")
    was, grad.enabled = grad.enabled, False
    try:
        y = _st.as_strided(input, tuple(src.shape), src.stride(), src.storage_offset())
    finally:
        grad.enabled = was
    if (input._rg or src._rg) and grad.enabled:
        n = SliceInverseBackward0((edge(input) if input._rg else NO_EDGE, edge(src) if src._rg else NO_EDGE))
        n.fn = region._view_fn
        y._rg, y._grad_fn = True, n
    return y


# -- torch.* forms of Tensor methods ---------------------------------------------------------------------------
def detach(input):
    return input.detach()


def detach_(input):
    return input.detach_()


class FillBackward0(Node):          # y = full_like(x, number); dx = 0
    __slots__ = ()

    def backward(self, ns, g):
        return (ns.zeros_like(g),)


class FillBackward1(Node):          # y = full_like(x, v) with a 0-d tensor v; dx = 0, dv = sum(gy)
    __slots__ = ("dtype",)

    def backward(self, ns, g):
        return (ns.zeros_like(g), ns.cast(ns.sum(g, None), self.dtype))


def fill(input, value):
    """torch.fill: a new tensor like input filled with value (a number or a 0-d tensor)."""
    v = value if hasattr(value, "_data") else None
    if v is not None and v._data.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {v._data.ndim} "
                           f"dimensions.")
    out = np.empty(input._data.shape, input._data.dtype, like=input._data)
    out[...] = v._data if v is not None else _args.number_arg(value, "fill", "value", 2)
    if v is None:
        if input._rg and grad.enabled:
            return make(out, True, FillBackward0((edge(input),)))
        return make(out)
    if (input._rg or v._rg) and grad.enabled:
        n = FillBackward1((edge(input) if input._rg else NO_EDGE, edge(v) if v._rg else NO_EDGE))
        n.dtype = v._data.dtype
        return make(out, True, n)
    return make(out)


def fill_(input, value):
    return _cr.fill_(input, value)


def zero_(input):
    return _cr.zero_(input)

