"""View ops: results share memory with their input, as in PyTorch.

ops: view reshape view_as reshape_as flatten unflatten permute movedim moveaxis transpose
     swapaxes swapdims t T mT expand expand_as broadcast_to squeeze unsqueeze
     squeeze_ unsqueeze_ t_ transpose_ ravel sum_to_size
     (views that take part of a tensor -- slice narrow select diagonal unfold split chunk unbind
     tensor_split: ops/slicing.py; as_strided: ops/strided.py; CopySlices and ViewFromBase, the graph
     rewrite for in-place writes through a view: autograd/inplace.py)

Each view records ``_base`` (the tensor that owns the memory) and ``_view_fn`` (a function
that takes an array shaped like the base and returns the same view of it), so an in-place
write through the view can route gradients through the base (CopySlices).
"""
import math

import numpy as np

from .. import _args, backend
from .._tensor import Size, _wrap_dim
from ._core import make, edge, grad, check_inplace, sum_to
from ..autograd.graph import Node
from .conversion import view_dtype, clone
from .. import _memory_format as _mf
from .reduction import _dims

__all__ = ["view", "reshape", "view_as", "reshape_as", "flatten", "unflatten", "permute", "movedim",
           "moveaxis", "transpose", "swapaxes", "swapdims", "t", "expand", "expand_as", "broadcast_to",
           "squeeze", "unsqueeze", "ravel", "sum_to_size"]


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
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (ns.reshape(g, self.in_shape),)


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)


class CloneBackward0(Node):          # y = x.clone(); dx = gy
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (g,)


def _device_view(a, shape):
    """`a` (a device array) viewed with `shape`; AttributeError (as NumPy's shape setter) when its strides do
    not allow a view.  CuPy's reshape views when it can and copies otherwise: the copy is told by its memory."""
    arr = a.reshape(shape)
    if a.size and backend.data_ptr(arr) != backend.data_ptr(a):
        raise AttributeError("not a view")
    return arr


def view(x, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) and hasattr(shape[0], "is_floating_point"):
        return view_dtype(x, shape[0])
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) and not isinstance(shape[0], (tuple, list, Size)):
        return view_dtype(x, shape[0])
    shape = _infer_shape(_shape_arg(shape), x._data.size)
    a = x._data
    try:
        if a.__class__ is np.ndarray:
            arr = a.view()
            arr.shape = shape        # raises instead of copying when strides do not allow a view
        else:
            arr = _device_view(a, shape)
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    return _view_op(x, arr, ViewBackward0, lambda b, s=shape: b.reshape(s))


def reshape(x, *shape):
    shape = _infer_shape(_shape_arg(shape, "reshape", "shape"), x._data.size)
    a = x._data
    try:
        if a.__class__ is np.ndarray:
            arr = a.view()
            arr.shape = shape
        else:
            arr = _device_view(a, shape)
    except AttributeError:
        # not expressible as a view: copy (PyTorch: clone + _unsafe_view)
        c = clone(x, _mf.contiguous_format)
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
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (ns.permute(g, tuple(np.argsort(self.args[0]))),)


class TransposeBackward0(_ViewNode):  # y = x.transpose(a, b); dx = gy.transpose(a, b)
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (ns.transpose(g, *self.args),)


class TBackward0(_ViewNode):
    __slots__ = ()
    stack_rule = "t"

    def backward(self, ns, g):
        return (ns.transpose(g, 0, 1) if g.ndim == 2 else g,)


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


# -- expand ---------------------------------------------------------------------------------
class ExpandBackward0(_ViewNode):    # y = x.expand(s); dx = sum of gy over expanded dims
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (ns.sum_to(g, self.in_shape),)


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
    return _view_op(x, _expand_arr(x._data, target), ExpandBackward0, lambda b, s=target: _expand_arr(b, s))


def _expand_arr(a, target):
    arr = np.broadcast_to(a, target)
    # NumPy's strides are torch's but for new dims of size 1, and its result is read-only even where no two
    # elements overlap (they do exactly when the expansion made more elements)
    if a.__class__ is np.ndarray and arr.size and (arr.size == a.size or 1 in target[:len(target) - a.ndim]):
        return _expand_strided(a, arr, target)
    return arr


def _expand_strided(a, arr, target):
    """expand's result with torch's strides: a dimension whose size changes gets stride 0, a new dimension of
    size 1 the stride a contiguous tensor would have there; writable (as torch's) when no two elements share
    memory, e.g. ``arange(n).expand(1, -1)``."""
    lead = len(target) - a.ndim
    strides = [0] * len(target)
    for i in range(len(target) - 1, -1, -1):
        if i >= lead:
            strides[i] = 0 if a.shape[i - lead] != target[i] else a.strides[i - lead]
        else:
            strides[i] = 0 if target[i] != 1 or i + 1 == len(target) else target[i + 1] * strides[i + 1]
    shared = any(st == 0 and n > 1 for n, st in zip(target, strides))
    writable = not shared and a.flags.writeable
    return np.lib.stride_tricks.as_strided(a if writable else arr, target, strides, writeable=writable)


def expand_as(x, other):
    return expand(x, _args.tensor_arg(other, "expand_as", "other", 1)._data.shape)


def broadcast_to(x, size):
    return expand(x, tuple(size))


class SumToSizeBackward(_ViewNode):  # y = x.sum_to_size(s); dx = gy.expand(x.shape)
    __slots__ = ()

    def backward(self, ns, g):
        return (ns.expand(g, self.in_shape),)


class SumBackward1(SumToSizeBackward):  # PyTorch's name for the node of sum_to_size
    __slots__ = ()


def sum_to_size(x, *size):
    size = _shape_arg(size, "sum_to_size")
    if len(size) > x._data.ndim or any(s != 1 and s != c for s, c in zip(size[::-1], x._data.shape[::-1])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(x._data.shape)}}}.")
    arr = sum_to(x._data, tuple(size))
    if arr is x._data:
        return x
    if x._rg and grad.enabled:
        n = SumBackward1((edge(x),))
        n.in_shape = x._data.shape
        n.args = ()
        return make(arr, True, n)
    return make(arr)


# -- squeeze / unsqueeze -----------------------------------------------------------------------
class SqueezeBackward0(_ViewNode):   # y = x.squeeze(); dx = gy.reshape(x.shape)
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (ns.reshape(g, self.in_shape),)


class SqueezeBackward1(SqueezeBackward0):
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)


class SqueezeBackward2(SqueezeBackward0):
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)


class UnsqueezeBackward0(_ViewNode):  # y = x.unsqueeze(d); dx = gy.squeeze(d)
    __slots__ = ()
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (ns.reshape(g, self.in_shape),)


def squeeze(x, dim=None):
    shp = x._data.shape
    nd = len(shp)
    if dim is None:
        cls = SqueezeBackward0
        new = tuple(s for s in shp if s != 1)
    else:
        if isinstance(dim, (tuple, list)):
            cls = SqueezeBackward2
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


# -- in-place metadata changes -------------------------------------------------------------------
# x.squeeze_() and kin: the node of the out-of-place view under PyTorch's name for the in-place form
class SqueezeBackward3(SqueezeBackward0):       # squeeze_()
    __slots__ = ()
    stack_rule = None     # not verified for stacked gradients (explain.attribute calls it per term)


class SqueezeBackward4(SqueezeBackward1):       # squeeze_(dim)
    __slots__ = ()
    stack_rule = None     # not verified for stacked gradients (explain.attribute calls it per term)


class SqueezeBackward5(SqueezeBackward2):       # squeeze_(dims)
    __slots__ = ()
    stack_rule = None     # not verified for stacked gradients (explain.attribute calls it per term)


class UnsqueezeBackward1(UnsqueezeBackward0):
    __slots__ = ()
    stack_rule = None     # not verified for stacked gradients (explain.attribute calls it per term)


class TBackward1(TBackward0):
    __slots__ = ()
    stack_rule = None     # not verified for stacked gradients (explain.attribute calls it per term)


class TransposeBackward1(TransposeBackward0):
    __slots__ = ()
    stack_rule = None     # not verified for stacked gradients (explain.attribute calls it per term)


def _inplace_meta(x, y, cls):
    """x.<view op>_(): x itself becomes the view `y`, whose node becomes `cls` (a subclass of its own class
    under PyTorch's name for the in-place op, e.g. TBackward1)."""
    check_inplace(x)
    x._data = y._data
    fn = y._grad_fn
    if fn is not None:
        fn.__class__ = cls
    x._grad_fn = fn
    x._rg = y._rg
    x._vc[0] += 1
    return x


def squeeze_(x, dim=None):
    cls = SqueezeBackward3 if dim is None else (SqueezeBackward4 if isinstance(dim, int) else SqueezeBackward5)
    return _inplace_meta(x, squeeze(x, dim), cls)


def unsqueeze_(x, dim):
    return _inplace_meta(x, unsqueeze(x, dim), UnsqueezeBackward1)


def t_(x):
    return _inplace_meta(x, t(x), TBackward1)


def transpose_(x, dim0, dim1):
    return _inplace_meta(x, transpose(x, dim0, dim1), TransposeBackward1)

