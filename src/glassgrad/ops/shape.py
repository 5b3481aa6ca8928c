"""Shape ops that copy (views live in views.py).

ops: cat stack (more in later sections: flip roll repeat repeat_interleave tile tril triu diag
     meshgrid diagflat rot90 diff ...)
"""
import warnings

import numpy as np

from .. import _args, _dtype, backend
from .._tensor import _wrap_dim, Size
from ._core import Tensor, make, edge, grad, broadcast_shape, _inplace, broadcast_error, as_array
from ..autograd.graph import Node
from .conversion import clone
from .. import _memory_format as _mf
from .creation import check_alloc
from .gather_scatter import index_select
from . import views as V
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["cat", "concat", "concatenate", "stack"]


class CatBackward0(Node):           # y = cat(xs, d); dx_i = gy narrowed to x_i's part
    __slots__ = ("dim", "sizes", "dts")

    def backward(self, ns, g):
        out, start = [], 0
        d = self.dim
        for size, dt in zip(self.sizes, self.dts):
            if size is None:          # a legacy empty 1-d input that was skipped
                out.append(None)
                continue
            key = (slice(None),) * d + (slice(start, start + size),)
            part = g[key]
            out.append(ns.cast(part, dt))
            start += size
        return tuple(out)


def cat(tensors, dim=0, *, out=None):
    if _acs.on:
        return _ac.promote(cat, tensors, dim, out=out)
    tensors = _args.tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    rt = tensors[0].dtype
    for t in tensors[1:]:
        rt = _dtype.promote_types(rt, t.dtype)
    # legacy: 1-d empty tensors are skipped
    parts = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
    if not parts:
        return make(np.zeros((0,), rt.np, like=tensors[0]._data))
    ref = parts[0]._data
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _wrap_dim(dim, ref.ndim)
    for i, t in enumerate(tensors):
        a = t._data
        if a.ndim == 1 and a.shape[0] == 0:
            continue
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if a.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {a.ndim}")
        for k in range(ref.ndim):
            if k != d and a.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {a.shape[k]} for tensor number {i} in the list.")
    y = np.concatenate([t._data.astype(rt.np, copy=False) for t in parts], axis=d)
    if grad.enabled and any(t._rg for t in tensors):
        n = CatBackward0(tuple(edge(t) for t in tensors))
        n.dim = d
        n.sizes = [None if (t._data.ndim == 1 and t._data.shape[0] == 0) else t._data.shape[d] for t in tensors]
        n.dts = [t._data.dtype for t in tensors]
        return make(y, True, n)
    return make(y)


concat = concatenate = cat


class StackBackward0(Node):         # y = stack(xs, d); dx_i = gy.select(d, i)
    __slots__ = ("dim", "dts")

    def backward(self, ns, g):
        d = self.dim
        return tuple(ns.cast(g[(slice(None),) * d + (i,)], dt) for i, dt in enumerate(self.dts))


def stack(tensors, dim=0, *, out=None):
    if _acs.on:
        return _ac.promote(stack, tensors, dim, out=out)
    tensors = _args.tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shp = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != shp:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shp)} at entry 0 and "
                               f"{list(t._data.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shp) + 1)
    rt = tensors[0].dtype
    for t in tensors[1:]:
        rt = _dtype.promote_types(rt, t.dtype)
    y = np.stack([t._data.astype(rt.np, copy=False) for t in tensors], axis=d)
    if grad.enabled and any(t._rg for t in tensors):
        n = StackBackward0(tuple(edge(t) for t in tensors))
        n.dim = d
        n.dts = [t._data.dtype for t in tensors]
        return make(y, True, n)
    return make(y)


# -- flip roll repeat tile tril triu diag trace meshgrid stacks atleast broadcast_tensors -------

__all__ += ["flip", "fliplr", "flipud", "roll", "repeat_interleave", "tile", "tril", "triu", "diag",
            "diag_embed", "trace", "meshgrid", "hstack", "vstack", "dstack", "column_stack", "atleast_1d",
            "atleast_2d", "atleast_3d", "broadcast_tensors", "broadcast_shapes"]


def _dims_arg(dims, ndim, name="dims"):
    if isinstance(dims, (int, np.integer)):
        dims = (dims,)
    out = []
    for d in dims:
        w = _wrap_dim(d, ndim)
        if w in out:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        out.append(w)
    return tuple(out)


def _unary(x, y, cls, **attrs):
    if x._rg and grad.enabled:
        n = cls((edge(x),))
        for k, v in attrs.items():
            setattr(n, k, v)
        return make(y, True, n)
    return make(y)


class FlipBackward0(Node):          # y = flip(x, d); dx = flip(gy, d)
    __slots__ = ("dims",)

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            return (flip(g, self.dims),)
        return (np.flip(g, self.dims).copy(),)


def flip(x, dims):
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip(): argument 'dims' must be tuple of ints, not {_args.type_name(dims)}")
    d = _dims_arg(_args.int_list(dims, "flip", "dims", 2), x._data.ndim)
    y = np.flip(x._data, d).copy(order="K") if d else x._data.copy(order="K")      # (torch keeps the layout)
    return _unary(x, y, FlipBackward0, dims=d)


def fliplr(x):
    if x._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(x, (1,))


def flipud(x):
    if x._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(x, (0,))


class RollBackward0(Node):          # y = roll(x, s, d); dx = roll(gy, -s, d)
    __slots__ = ("shifts", "dims")

    def backward(self, ns, g):
        neg = tuple(-s for s in self.shifts)
        if ns.is_tensor_mode:
            return (roll(g, neg, self.dims),)
        if self.dims is None:
            return (np.roll(g.reshape(-1), neg).reshape(g.shape),)
        return (np.roll(g, neg, self.dims),)


def roll(x, shifts, dims=None):
    sh = _args.int_list(shifts, "roll", "shifts", 2)
    if dims is None or (isinstance(dims, (tuple, list)) and len(dims) == 0):
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
        y = np.roll(x._data.reshape(-1), sh[0]).reshape(x._data.shape)
        return _unary(x, y, RollBackward0, shifts=sh, dims=None)
    dd = _args.int_list(dims, "roll", "dims", 3)
    if len(sh) != len(dd):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(dd)}")
    dd = tuple(_wrap_dim(d, x._data.ndim) for d in dd)
    y = np.roll(x._data, sh, dd) if x._data.ndim else x._data.copy()
    return _unary(x, y, RollBackward0, shifts=sh, dims=dd)


class RepeatBackward0(Node):        # y = x.repeat(r); dx = gy summed over the repeated copies
    __slots__ = ("reps", "in_shape")

    def backward(self, ns, g):
        reps = self.reps
        pad = (1,) * (len(reps) - len(self.in_shape)) + tuple(self.in_shape)
        inter = []
        for r, s in zip(reps, pad):
            inter += [r, s]
        g = ns.reshape(g, tuple(inter))
        g = ns.sum(g, tuple(range(0, 2 * len(reps), 2)))
        return (ns.reshape(g, tuple(self.in_shape)),)


def repeat(x, *sizes):
    reps = _args.sizes(sizes, "repeat", "repeats")
    if len(reps) < x._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                           "of tensor")
    if any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(reps)}: {list(reps)}")
    pad = (1,) * (len(reps) - x._data.ndim) + x._data.shape
    check_alloc([r * s for r, s in zip(reps, pad)], x._data.itemsize)
    y = np.tile(x._data, reps) if reps else x._data.copy()
    return _unary(x, np.ascontiguousarray(y, like=y), RepeatBackward0, reps=reps, in_shape=x._data.shape)


def tile(x, dims):
    dims = _args.int_list(dims, "tile", "dims", 2)
    if len(dims) < x._data.ndim:
        dims = (1,) * (x._data.ndim - len(dims)) + dims
    return repeat(x, dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:        # torch.repeat_interleave(repeats_tensor)
        r = input._data.reshape(-1).astype(np.int64)
        return make(np.repeat(np.arange(r.shape[0], dtype=np.int64, like=r), r))
    x = input
    if dim is None:
        x = V.flatten(x) if x._data.ndim != 1 else x
        d = 0
    else:
        d = _wrap_dim(dim, x._data.ndim)
    if isinstance(repeats, Tensor) and repeats._data.ndim > 0 and repeats._data.size != 1:
        r = repeats._data.astype(np.int64)
        if r.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if (r < 0).any():
            raise RuntimeError("repeats can not be negative")
        if r.shape[0] != x._data.shape[d]:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{r.shape[0]} and input.size({d}) = {x._data.shape[d]}")
        idx = make(np.repeat(np.arange(r.shape[0], dtype=np.int64, like=r), r))
        return index_select(x, d, idx)
    r = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    if r < 0:
        raise RuntimeError("Repeats must be non-negative")
    if x._data.ndim == 0:
        x = V.reshape(x, (1,))
    shp = x._data.shape
    e = V.expand(V.unsqueeze(x, d + 1), shp[:d + 1] + (r,) + shp[d + 1:])
    return V.view(clone(e, _mf.contiguous_format), shp[:d] + (shp[d] * r,) + shp[d + 1:])


def _tri_mask(shape, k, lower, like=None):
    m, n = shape[-2], shape[-1]
    return np.tri(m, n, k, dtype=bool, like=like) if lower else ~np.tri(m, n, k - 1, dtype=bool, like=like)


class TrilBackward0(Node):          # y = tril(x, k); dx = tril(gy, k)
    __slots__ = ("mask",)

    def backward(self, ns, g):
        return (ns.mask(ns.const(self.mask, g), g),)


class TriuBackward0(TrilBackward0):
    __slots__ = ()


def _tri(x, diagonal, lower):
    a = x._data
    if a.ndim < 2:
        raise RuntimeError(f"{'tril' if lower else 'triu'}: input tensor must have at least 2 dimensions")
    m = _tri_mask(a.shape, _args.int_arg(diagonal, "tril" if lower else "triu", "diagonal", 2), lower, a)
    y = np.where(m, a, np.zeros((), a.dtype, like=a))
    return _unary(x, y, TrilBackward0 if lower else TriuBackward0, mask=m)


def tril(input, diagonal=0, *, out=None):
    return _tri(input, diagonal, True)


def triu(input, diagonal=0, *, out=None):
    return _tri(input, diagonal, False)


def tril_(x, diagonal=0):
    return _inplace(tril, x, diagonal)


def triu_(x, diagonal=0):
    return _inplace(triu, x, diagonal)


def _diag_view_fn(offset, d1, d2):
    def fn(b):
        return _diag_at(b, offset, d1, d2) if backend.writeable(b) else np.diagonal(b, offset, d1, d2)
    return fn


def _diag_at(b, offset, d1, d2):
    m = np.moveaxis(b, (d1, d2), (-2, -1))
    start = (0, offset) if offset >= 0 else (-offset, 0)
    sub = m[..., start[0]:, start[1]:]
    k = max(min(sub.shape[-2], sub.shape[-1]), 0)
    st = sub.strides
    return backend.as_strided(sub, sub.shape[:-2] + (k,), st[:-2] + (st[-2] + st[-1],))


class DiagEmbedBackward0(Node):     # y = diag_embed(x); dx = diagonal(gy)
    __slots__ = ("fn",)

    def backward(self, ns, g):
        return (ns.apply_view(g, self.fn),)


class DiagonalBackward0_copy(Node):  # y = diagonal(x).clone(); dx = zeros with gy on the diagonal
    __slots__ = ("fn", "shape")

    def backward(self, ns, g):
        return (ns.view_scatter(self.shape, self.fn, g),)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    a = input._data
    nd = a.ndim + 1
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (a.shape[-1] if a.ndim else 1) + abs(int(offset))
    rest = list(a.shape[:-1]) if a.ndim else []
    shape = []
    it = iter(rest)
    for i in range(nd):
        shape.append(n if i in (d1, d2) else next(it))
    out = np.zeros(shape, a.dtype, like=a)
    fn = _diag_view_fn(int(offset), d1, d2)
    _write_diag(out, int(offset), d1, d2, a.reshape(-1) if a.ndim == 0 else a)
    return _unary(input, out, DiagEmbedBackward0, fn=fn)


def _write_diag(out, offset, d1, d2, vals):
    m = np.moveaxis(out, (d1, d2), (-2, -1))
    k = vals.shape[-1]
    i = np.arange(k, like=out)
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    m[..., r, c] = vals


def diag(input, diagonal=0, *, out=None):
    diagonal = _args.int_arg(diagonal, "diag", "diagonal", 2)
    a = input._data
    if a.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if a.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {a.ndim}D")
    fn = _diag_view_fn(diagonal, 0, 1)
    y = np.ascontiguousarray(fn(a), like=a)
    return _unary(input, y, DiagonalBackward0_copy, fn=fn, shape=a.shape)


class TraceBackward0(Node):         # y = trace(x); dx = gy * eye
    __slots__ = ("shape",)

    def backward(self, ns, g):
        e = np.eye(self.shape[0], self.shape[1], dtype=bool, like=backend.like(ns.data(g)))
        return (ns.mask(ns.const(e, g), ns.expand(ns.reshape(g, (1, 1)), self.shape)),)


def trace(input):
    if _acs.on:
        return _ac.fp32(trace, input)
    a = input._data
    if a.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {a.ndim}")
    if a.dtype == np.bool_:
        raise NotImplementedError('"trace" not implemented for \'Bool\'')
    y = as_array(np.trace(a), a.dtype if a.dtype.kind in "fVc" else np.int64)
    return _unary(input, y, TraceBackward0, shape=a.shape)


def _tensor_list(tensors, fn="broadcast_tensors"):
    """The tensors of f(*tensors) or f(tensors)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return _args.tensor_list(list(tensors), fn)


def meshgrid(*tensors, indexing=None):
    ts = _tensor_list(tensors, "meshgrid")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. "
                      "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not ts:
        return ()
    for t in ts:
        if t._data.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                               f"{t}")
    order = list(ts)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = tuple(t._data.size for t in order)
    outs = []
    for i, t in enumerate(order):
        vs = [1] * len(order)
        vs[i] = -1
        outs.append(V.expand(V.view(t, tuple(vs)), shape))
    if swap:
        outs[0], outs[1] = outs[1], outs[0]
    return tuple(outs)


def atleast_1d(*tensors):
    ts = _tensor_list(tensors, "atleast_1d")
    res = [V.reshape(t, (1,)) if t._data.ndim == 0 else t for t in ts]
    return res[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(res)


def atleast_2d(*tensors):
    ts = _tensor_list(tensors, "atleast_2d")
    res = []
    for t in ts:
        nd = t._data.ndim
        res.append(V.reshape(t, (1, 1)) if nd == 0 else V.unsqueeze(t, 0) if nd == 1 else t)
    return res[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(res)


def atleast_3d(*tensors):
    ts = _tensor_list(tensors, "atleast_3d")
    res = []
    for t in ts:
        nd = t._data.ndim
        if nd == 0:
            t = V.reshape(t, (1, 1, 1))
        elif nd == 1:
            t = V.unsqueeze(V.unsqueeze(t, 0), -1)
        elif nd == 2:
            t = V.unsqueeze(t, -1)
        res.append(t)
    return res[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(res)


def _nonempty(tensors, name):
    ts = _args.tensor_list(tensors, name)
    if not ts:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return ts


def hstack(tensors, *, out=None):
    ts = list(atleast_1d(_nonempty(tensors, "hstack")))
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1)


def vstack(tensors, *, out=None):
    return cat(list(atleast_2d(_nonempty(tensors, "vstack"))), 0)


row_stack = vstack


def dstack(tensors, *, out=None):
    return cat(list(atleast_3d(_nonempty(tensors, "dstack"))), 2)


def column_stack(tensors, *, out=None):
    ts = _nonempty(tensors, "column_stack")
    ts = [V.reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t for t in ts]
    return cat(ts, 1)


__all__ += ["row_stack"]


def broadcast_shapes(*shapes):
    out = ()
    for s in shapes:
        s = (s,) if _args.as_int(s) is not None else tuple(s)
        for v in s:
            if _args.as_int(v) is None:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {v}: only ints are dimension "
                                   "lengths")
            if v < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
        out = broadcast_shape(out, s)
    return Size(out)


def broadcast_tensors(*tensors):
    ts = _tensor_list(tensors, "broadcast_tensors")
    shape = ()
    for t in ts:
        try:
            shape = np.broadcast_shapes(shape, t._data.shape)
        except ValueError:
            raise broadcast_error(shape, t._data.shape) from None
    return tuple(t if t._data.shape == shape else V.expand(t, shape) for t in ts)


# -- diagflat / rot90 ----------------------------------------------------------------------------------
__all__ += ["diagflat", "rot90"]


def diagflat(input, offset=0):
    """torch.diagflat: the flattened input on the offset diagonal of a square matrix (diag_embed of a view)."""
    return diag_embed(V.reshape(input, -1), _args.int_arg(offset, "diagflat", "offset", 2))


class Rot90Backward0(Node):         # y = rot90(x, k, dims); dx = rot90(gy, -k, dims)
    __slots__ = ("k", "dims")

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            return (rot90(g, -self.k, self.dims),)
        return (np.ascontiguousarray(np.rot90(g, -self.k, self.dims), like=g),)


def rot90(input, k=1, dims=(0, 1)):
    """torch.rot90: k quarter turns from dims[0] towards dims[1] (flip then transpose, as torch's: odd k give
    a transposed, non-contiguous result)."""
    k = _args.int_arg(k, "rot90", "k", 2)
    dims = list(_args.int_list(dims, "rot90", "dims", 3))
    a = input._data
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if a.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {a.ndim}")
    d0, d1 = _wrap_dim(dims[0], a.ndim), _wrap_dim(dims[1], a.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    m = k % 4
    if m == 1:
        y = np.swapaxes(np.flip(a, d1).copy(), d0, d1)
    elif m == 2:
        y = np.flip(a, (d0, d1)).copy()
    elif m == 3:
        y = np.swapaxes(np.flip(a, d0).copy(), d0, d1)
    else:
        y = a.copy()
    return _unary(input, y, Rot90Backward0, k=k, dims=(d0, d1))


# -- diff --------------------------------------------------------------------------------------------------
__all__ += ["diff"]


def _diff_operand(t, a, dim):
    if t is None:
        return None
    if t.dim() != a.dim():
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i in range(a.dim()):
        if i != dim and t.shape[i] != a.shape[i]:
            raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input except "
                               f"along the differencing dimension; input.size({i}) = {a.shape[i]}, but got "
                               f"tensor.size({i}) = {t.shape[i]}")
    return t


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """torch.diff: the n-th forward difference along dim (after cat-ing prepend / append), as torch's graph:
    SubBackward0 of two SliceBackward0 (logical_xor for bool); n = 0 a copy (CopyBackwards)."""
    from .arithmetic import sub
    from .compare import logical_xor
    from .creation import empty_like
    n = _args.int_arg(n, "diff", "n", 2)
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.dim())
    pre, post = _diff_operand(prepend, input, d), _diff_operand(append, input, d)
    x = cat([t for t in (pre, input, post) if t is not None], d) if pre is not None or post is not None else input
    if n == 0:
        return empty_like(x).copy_(x)
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = logical_xor(hi, lo) if str(x.dtype) == "torch.bool" else sub(hi, lo)
    return x
