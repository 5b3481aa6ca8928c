"""View ops: results share memory with their input, as in PyTorch.

ops: view reshape view_as reshape_as flatten unflatten permute movedim moveaxis transpose
     swapaxes swapdims t T mT expand expand_as broadcast_to squeeze unsqueeze narrow select
     slice (basic indexing) unfold diagonal split chunk unbind tensor_split (as_strided: ops/strided.py)
     squeeze_ unsqueeze_ t_ transpose_ ravel sum_to_size; CopySlices and ViewFromBase
     (the graph rewrite for in-place writes through a view).

Each view records ``_base`` (the tensor that owns the memory) and ``_view_fn`` (a function
that takes an array shaped like the base and returns the same view of it), so an in-place
write through the view can route gradients through the base (CopySlices).
"""
import math

import numpy as np

from .. import _args
from .._tensor import Size, _wrap_dim
from ._core import make, edge, grad, check_inplace
from ..autograd.graph import Node

__all__ = ["view", "reshape", "view_as", "reshape_as", "flatten", "unflatten", "permute", "movedim",
           "moveaxis", "transpose", "swapaxes", "swapdims", "t", "expand", "expand_as", "broadcast_to",
           "squeeze", "unsqueeze", "narrow", "select", "unfold", "diagonal", "split", "chunk",
           "unbind", "tensor_split", "ravel", "sum_to_size", "adjoint"]


def _make_view(x, arr, node, view_fn):
    """Wrap `arr` (a NumPy view of x's array) as a view Tensor of x's base."""
    out = make(arr, node is not None, node)
    base = x._base
    if base is None:
        base = x
    out._base = base
    out._vc = base._vc
    out._vbase_fn = base._grad_fn
    xf = x._view_fn
    out._view_fn = view_fn if xf is None else (lambda a, f=xf, g=view_fn: g(f(a)))
    return out


def _view_op(x, arr, cls, view_fn, *attrs):
    """Common tail of a view op: node creation when x needs grad."""
    if x._rg and grad.enabled:
        n = cls((edge(x),))
        n.in_shape = x._data.shape
        n.args = attrs
        return _make_view(x, arr, n, view_fn)
    return _make_view(x, arr, None, view_fn)


class _ViewNode(Node):
    __slots__ = ("in_shape", "args")


def _shape_arg(shape, fn="view", arg="size"):
    """f(*shape) / f(shape): torch's int[] parsing (TypeError for anything but ints)."""
    return _args.sizes(shape, fn, arg)


def _infer_shape(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


# -- view / reshape ------------------------------------------------------------------------
class ViewBackward0(_ViewNode):      # y = x.view(shape); dx = gy.reshape(x.shape)
    __slots__ = ()

    def backward(self, F, g):
        return (F.reshape(g, self.in_shape),)


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


class CloneBackward0(Node):          # y = x.clone(); dx = gy
    __slots__ = ()

    def backward(self, F, g):
        return (g,)


def view(x, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) and hasattr(shape[0], "is_floating_point"):
        from .conversion import view_dtype
        return view_dtype(x, shape[0])
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) and not isinstance(shape[0], (tuple, list, Size)):
        from .conversion import view_dtype
        return view_dtype(x, shape[0])
    shape = _infer_shape(_shape_arg(shape), x._data.size)
    a = x._data
    try:
        arr = a.view()
        arr.shape = shape        # raises instead of copying when strides do not allow a view
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    return _view_op(x, arr, ViewBackward0, lambda b, s=shape: b.reshape(s))


def reshape(x, *shape):
    shape = _infer_shape(_shape_arg(shape, "reshape", "shape"), x._data.size)
    a = x._data
    arr = a.view()
    try:
        arr.shape = shape
    except AttributeError:
        # not expressible as a view: copy (PyTorch: clone + _unsafe_view)
        from .conversion import clone
        c = clone(x)
        arr = c._data.reshape(shape)
        if c._rg and grad.enabled:
            n = UnsafeViewBackward0((edge(c),))
            n.in_shape = a.shape
            n.args = ()
            return make(arr, True, n)
        return make(arr)
    return _view_op(x, arr, ViewBackward0, lambda b, s=shape: b.reshape(s))


def view_as(x, other):
    return view(x, _args.tensor_arg(other, "view_as", "other", 1)._data.shape)


def reshape_as(x, other):
    return reshape(x, _args.tensor_arg(other, "reshape_as", "other", 1)._data.shape)


def flatten(x, start_dim=0, end_dim=-1):
    nd = x._data.ndim
    if nd == 0:
        return reshape(x, (1,))
    s = _wrap_dim(start_dim, nd)
    e = _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return x
    shp = x._data.shape
    n = 1
    for d in shp[s:e + 1]:
        n *= d
    return reshape(x, shp[:s] + (n,) + shp[e + 1:])


def ravel(x):
    return reshape(x, (-1,))


def unflatten(x, dim, sizes):
    d = _wrap_dim(dim, x._data.ndim)
    shp = x._data.shape
    sizes = tuple(sizes)
    if -1 in sizes:
        known = 1
        for s in sizes:
            if s != -1:
                known *= s
        sizes = tuple(shp[d] // known if s == -1 else s for s in sizes)
    n = 1
    for s in sizes:
        n *= s
    if n != shp[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
                           f"{dim} ({shp[d]}) in the input tensor")
    return view(x, shp[:d] + sizes + shp[d + 1:])


# -- permutations ----------------------------------------------------------------------------
class PermuteBackward0(_ViewNode):   # y = x.permute(p); dx = gy.permute(argsort(p))
    __slots__ = ()

    def backward(self, F, g):
        return (F.permute(g, tuple(np.argsort(self.args[0]))),)


class TransposeBackward0(_ViewNode):  # y = x.transpose(a, b); dx = gy.transpose(a, b)
    __slots__ = ()

    def backward(self, F, g):
        return (F.transpose(g, *self.args),)


class TBackward0(_ViewNode):
    __slots__ = ()

    def backward(self, F, g):
        return (F.transpose(g, 0, 1) if g.ndim == 2 else g,)


def permute(x, *dims):
    dims = _shape_arg(dims, "permute", "dims")
    nd = x._data.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
                           f"to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view_op(x, x._data.transpose(dims), PermuteBackward0, lambda b, p=dims: b.transpose(p), dims)


def movedim(x, source, destination):
    nd = x._data.ndim
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
                           f"contain the same number of dims as destination ({list(dst)} dims)")
    src = [_wrap_dim(d, nd) for d in src]
    dst = [_wrap_dim(d, nd) for d in dst]
    order = [d for d in range(nd) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(x, tuple(order))


moveaxis = movedim


def transpose(x, dim0, dim1):
    nd = x._data.ndim
    d0 = _wrap_dim(dim0, nd)
    d1 = _wrap_dim(dim1, nd)
    if nd == 0:
        return _view_op(x, x._data.view(), TransposeBackward0, lambda b: b, 0, 0)
    return _view_op(x, x._data.swapaxes(d0, d1), TransposeBackward0, lambda b, p=(d0, d1): b.swapaxes(*p),
                    d0, d1)


swapaxes = swapdims = transpose


def t(x):
    nd = x._data.ndim
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    arr = x._data.T
    return _view_op(x, arr, TBackward0, lambda b: b.T)


def T(x):
    return permute(x, tuple(range(x._data.ndim - 1, -1, -1)))


def mT(x):
    if x._data.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {x._data.ndim}-D tensor.")
    return transpose(x, -2, -1)


def adjoint(x):
    return mT(x)


# -- expand ---------------------------------------------------------------------------------
class ExpandBackward0(_ViewNode):    # y = x.expand(s); dx = sum of gy over expanded dims
    __slots__ = ()

    def backward(self, F, g):
        return (F.sum_to(g, self.in_shape),)


def expand(x, *sizes):
    sizes = _shape_arg(sizes, "expand")
    shp = x._data.shape
    nd = len(shp)
    if len(sizes) < nd:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(shp)}}}, size={list(sizes)}): the number of sizes "
                           f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({nd})")
    lead = len(sizes) - nd
    target = list(sizes)
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                   "non-existing dimension 0")
            continue
        cur = shp[i - lead]
        if s == -1:
            target[i] = cur
        elif cur != 1 and s != cur:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                               f"Tensor sizes: {list(shp)}")
    target = tuple(target)
    if min(target, default=0) < 0 or math.prod(target) >= 2 ** 63:     # torch's unsigned numel overflows
        raise RuntimeError("numel: integer multiplication overflow")
    arr = np.broadcast_to(x._data, target)
    return _view_op(x, arr, ExpandBackward0, lambda b, s=target: np.broadcast_to(b, s))


def expand_as(x, other):
    return expand(x, _args.tensor_arg(other, "expand_as", "other", 1)._data.shape)


def broadcast_to(x, size):
    return expand(x, tuple(size))


class SumToSizeBackward(_ViewNode):  # y = x.sum_to_size(s); dx = gy.expand(x.shape)
    __slots__ = ()

    def backward(self, F, g):
        return (F.expand(g, self.in_shape),)


def sum_to_size(x, *size):
    from ._core import sum_to
    size = _shape_arg(size, "sum_to_size")
    if len(size) > x._data.ndim or any(s != 1 and s != c for s, c in zip(size[::-1], x._data.shape[::-1])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(x._data.shape)}}}.")
    arr = sum_to(x._data, tuple(size))
    if arr is x._data:
        return x
    if x._rg and grad.enabled:
        n = SumToSizeBackward((edge(x),))
        n.in_shape = x._data.shape
        n.args = ()
        n.__class__ = _SumBackward1
        return make(arr, True, n)
    return make(arr)


class _SumBackward1(SumToSizeBackward):
    __slots__ = ()


_SumBackward1.__name__ = "SumBackward1"


# -- squeeze / unsqueeze -----------------------------------------------------------------------
class SqueezeBackward0(_ViewNode):   # y = x.squeeze(); dx = gy.reshape(x.shape)
    __slots__ = ()

    def backward(self, F, g):
        return (F.reshape(g, self.in_shape),)


class SqueezeBackward1(SqueezeBackward0):
    __slots__ = ()


class SqueezeBackward2(SqueezeBackward0):
    __slots__ = ()


class UnsqueezeBackward0(_ViewNode):  # y = x.unsqueeze(d); dx = gy.squeeze(d)
    __slots__ = ()

    def backward(self, F, g):
        return (F.reshape(g, self.in_shape),)


def squeeze(x, dim=None):
    shp = x._data.shape
    nd = len(shp)
    if dim is None:
        cls = SqueezeBackward0
        new = tuple(s for s in shp if s != 1)
    else:
        if isinstance(dim, (tuple, list)):
            cls = SqueezeBackward2
            from .reduction import _dims
            dims = set(_dims(dim, nd)) if dim else set()
        else:
            cls = SqueezeBackward1
            dims = {_wrap_dim(dim, nd)}
        new = tuple(s for i, s in enumerate(shp) if not (i in dims and s == 1))
    return _view_op(x, x._data.reshape(new), cls, lambda b, s=new: b.reshape(s))


def unsqueeze(x, dim):
    nd = x._data.ndim
    d = _wrap_dim(dim, nd + 1)
    shp = x._data.shape
    new = shp[:d] + (1,) + shp[d:]
    return _view_op(x, x._data.reshape(new), UnsqueezeBackward0, lambda b, s=new: b.reshape(s), d)


# -- slicing -----------------------------------------------------------------------------------
class SliceBackward0(_ViewNode):     # y = x[..., a:b:c, ...]; dx = zeros with gy written into the slice
    __slots__ = ()

    def backward(self, F, g):
        return (F.view_scatter(self.in_shape, self.args[0], g),)


class SelectBackward0(SliceBackward0):  # y = x.select(d, i)
    __slots__ = ()


class NarrowBackward0(SliceBackward0):
    __slots__ = ()


class DiagonalBackward0(SliceBackward0):
    __slots__ = ()


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
    from numpy.lib.stride_tricks import as_strided as _as
    bb = np.moveaxis(b, (a1, a2), (-2, -1))
    start = bb[..., :, o:] if o >= 0 else bb[..., -o:, :]
    m = max(0, min(start.shape[-2], start.shape[-1]))
    st = start.strides
    return _as(start, start.shape[:-2] + (m,), st[:-2] + (st[-2] + st[-1],), writeable=True)


class UnfoldBackward0(_ViewNode):    # y = x.unfold(d, size, step); dx = overlapping windows summed
    __slots__ = ()

    def backward(self, F, g):
        fn = self.args[0]
        n = 1
        for s in self.in_shape:
            n *= s
        idx = fn(np.arange(n).reshape(self.in_shape))
        if F.is_tensor_mode:
            from .indexing import index_put_zeros
            from ._core import make as _mk
            return (F.reshape(index_put_zeros((n,), (_mk(idx.reshape(-1)),), F.reshape(g, (-1,))),
                              self.in_shape),)
        out = np.zeros(n, g.dtype)
        np.add.at(out, idx.reshape(-1), g.reshape(-1))
        return (out.reshape(self.in_shape),)


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

    def backward(self, F, grads):
        if len(self.fns) == 1:      # the engine hands a single-output node its bare gradient
            grads = (grads,)
        shape = self.in_shape
        if F.plain:     # the pieces are disjoint: write every gradient into one array (zeros where none came)
            present = [g is not None for g in grads]
            out = (np.empty if all(present) else np.zeros)(shape, self.dtype)
            for g, fn, p in zip(grads, self.fns, present):
                if p:
                    fn(out)[...] = g
            return (out,)
        acc = None
        for g, fn in zip(grads, self.fns):
            if g is None:
                continue
            part = F.view_scatter(shape, fn, g)
            acc = part if acc is None else acc + part
        if acc is None:
            acc = F.zeros(shape, np.zeros(0, self.dtype))
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


# -- in-place metadata changes -------------------------------------------------------------------
_RENAMED = {}


def _inplace_meta(x, y, name):
    """x.<view op>_(): x itself becomes the view `y` (PyTorch names the node `name`, e.g. TBackward1)."""
    check_inplace(x)
    x._data = y._data
    fn = y._grad_fn
    if fn is not None:
        cls = _RENAMED.get((type(fn), name))
        if cls is None:
            cls = _RENAMED[(type(fn), name)] = type(name, (type(fn),), {"__slots__": ()})
        fn.__class__ = cls
    x._grad_fn = fn
    x._rg = y._rg
    x._vc[0] += 1
    return x


def squeeze_(x, dim=None):
    name = "SqueezeBackward3" if dim is None else (
        "SqueezeBackward4" if isinstance(dim, int) else "SqueezeBackward5")
    return _inplace_meta(x, squeeze(x, dim), name)


def unsqueeze_(x, dim):
    return _inplace_meta(x, unsqueeze(x, dim), "UnsqueezeBackward1")


def t_(x):
    return _inplace_meta(x, t(x), "TBackward1")


def transpose_(x, dim0, dim1):
    return _inplace_meta(x, transpose(x, dim0, dim1), "TransposeBackward1")


def view_as_real(x):
    raise RuntimeError("view_as_real is only supported for complex tensors")
