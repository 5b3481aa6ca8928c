"""Shape functions PyTorch composes from other ops, and the few with nodes of their own: hsplit vsplit dsplit
(tensor_split: SliceBackward0), split_with_sizes, the unsafe splits (copies: UnsafeSplitBackward0 /
UnsafeSplitWithSizesBackward0), block_diag (BlockDiagBackward0), cartesian_prod and combinations (meshgrid,
masked_select, stack), tril_indices triu_indices, vander (torch's cumprod into a slice), and the trapezoid rule
(trapezoid trapz cumulative_trapezoid, torch's formulas and their C++-Scalar nodes).

ops: hsplit vsplit dsplit split_with_sizes unsafe_chunk unsafe_split unsafe_split_with_sizes block_diag
     cartesian_prod combinations tril_indices triu_indices vander trapezoid trapz cumulative_trapezoid gradient
"""

import numpy as np

from .. import _args, _dtype, backend
from .._device import as_device, default_device
from .._tensor import _wrap_dim
from ._core import make, edge, grad, Tensor, as_array
from .linalg_solve import _LaNode, wrap
from .slicing import split, chunk, tensor_split, _MultiViewNode, _slice_fn
from .shape import meshgrid, stack, cat
from .masked import masked_select
from .scans import cumsum
from .arithmetic import _div_scalar
from .special import MulBackward1
from .creation import zeros

__all__ = ["hsplit", "vsplit", "dsplit", "split_with_sizes", "unsafe_chunk", "unsafe_split",
           "unsafe_split_with_sizes", "block_diag", "cartesian_prod", "combinations", "tril_indices", "triu_indices",
           "vander", "trapezoid", "trapz", "cumulative_trapezoid", "gradient"]


# -- hsplit / vsplit / dsplit -----------------------------------------------------------------------------------
def _dir_split(name, x, arg, dim, need):
    nd = x._data.ndim
    if nd < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with "
                           f"{nd} dimensions!")
    if _args.as_int(arg) is not None:
        n = _args.int_arg(arg, name, "sections", 2)
        size = x._data.shape[dim]
        if n == 0 or size % n:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {size} is not divisible by the split_size {n}!")
    return tensor_split(x, arg, dim)


def hsplit(input, indices_or_sections):
    return _dir_split("hsplit", input, indices_or_sections, 0 if input._data.ndim == 1 else 1, 1)


def vsplit(input, indices_or_sections):
    return _dir_split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    return _dir_split("dsplit", input, indices_or_sections, 2, 3)


def _check_sizes(x, sizes, dim):
    d = _wrap_dim(dim, x._data.ndim)
    if not isinstance(sizes, (list, tuple)):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not "
                        f"{_args.type_name(sizes)}")
    secs = list(_args.int_list(sizes, "split_with_sizes", "split_sizes", 2))
    for v in secs:
        if v < 0:
            raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, but got "
                               f"split_sizes={secs}")
    return secs, d


def split_with_sizes(input, split_sizes, dim=0):
    secs, d = _check_sizes(input, split_sizes, dim)
    return split(input, secs, d)


# -- the unsafe splits: the same pieces as copies ---------------------------------------------------------------
class UnsafeSplitBackward0(_MultiViewNode):
    __slots__ = ()


class UnsafeSplitWithSizesBackward0(_MultiViewNode):
    __slots__ = ()


def _unsafe(pieces, x, cls, dim):
    """The pieces (views) as fresh tensors of one node `cls`."""
    d = _wrap_dim(dim, x._data.ndim) if x._data.ndim else 0
    arrs = [np.array(p._data, like=p._data) for p in pieces]
    if not (x._rg and grad.enabled):
        return tuple(make(a) for a in arrs)
    n = cls((edge(x),))
    n.in_shape, n.dtype = x._data.shape, x._data.dtype
    fns, start = [], 0
    for a in arrs:
        ln = a.shape[d] if a.ndim else 1
        fns.append(_slice_fn(d, slice(start, start + ln)))
        start += ln
    n.fns = fns
    return tuple(make(a, True, n, i) for i, a in enumerate(arrs))


def unsafe_split(input, split_size, dim=0):
    return _unsafe(split(input, split_size, dim), input, UnsafeSplitBackward0, dim)


def unsafe_chunk(input, chunks, dim=0):
    return _unsafe(chunk(input, chunks, dim), input, UnsafeSplitBackward0, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    secs, d = _check_sizes(input, split_sizes, dim)
    return _unsafe(split(input, secs, d), input, UnsafeSplitWithSizesBackward0, d)


# -- block_diag ----------------------------------------------------------------------------------------------------
class BlockDiagBackward0(_LaNode):
    __slots__ = ()

    def formula(self, g, *_):
        res = []
        for i, (shape, r0, c0) in enumerate(self.info):
            if not self.need(i):
                res.append(None)
                continue
            rows = 1 if len(shape) < 2 else shape[0]
            cols = 1 if len(shape) == 0 else shape[-1]
            res.append(g[r0:r0 + rows, c0:c0 + cols].reshape(shape))
        return tuple(res)


def _tensor_items(tensors):
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {_args.type_name(t)}")


def block_diag(*tensors):
    _tensor_items(tensors)
    for i, t in enumerate(tensors):
        if t._data.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. Input "
                               f"{i} has {t._data.ndim} dimensions")
    if not tensors:
        return make(np.zeros((1, 0), _dtype._default[0].np))
    dt = tensors[0]._data.dtype
    for t in tensors[1:]:
        dt = _dtype.promote_types(_dtype._FROM_NP[dt], _dtype._FROM_NP[t._data.dtype]).np
    mats = [t._data.reshape((1, -1) if t._data.ndim < 2 else t._data.shape) for t in tensors]
    out = np.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), dt, like=mats[0])
    info, r, c = [], 0, 0
    for t, m in zip(tensors, mats):
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        info.append((t._data.shape, r, c))
        r, c = r + m.shape[0], c + m.shape[1]
    return wrap((out,), BlockDiagBackward0, tuple(tensors), (), (), tuple(info))[0]


# -- cartesian_prod / combinations ---------------------------------------------------------------------------------
def _check_1d(t):
    if t._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")


def cartesian_prod(*tensors):
    _tensor_items(tensors)
    for t in tensors:
        _check_1d(t)
    if len(tensors) == 1:
        return tensors[0]
    if len({t._data.dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.flatten() for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    _check_1d(input)
    r = _args.int_arg(r, "combinations", "r", 2)
    _args.bool_arg(with_replacement, "combinations", "with_replacement", 3)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return make(np.empty(0, input._data.dtype, like=input._data))
    n = input._data.shape[0]
    # index tuples in lexicographic order whose indices never decrease (rise strictly without replacement)
    ix = np.meshgrid(*([np.arange(n, like=input._data)] * r), indexing="ij")
    mask = np.ones((n,) * r, bool, like=input._data)
    for a, b in zip(ix, ix[1:]):
        mask &= (a <= b) if with_replacement else (a < b)
    grids = meshgrid(*([input] * r), indexing="ij")
    return stack([masked_select(g, make(mask)) for g in grids], 1)


# -- tril_indices / triu_indices ------------------------------------------------------------------------------------
def _tri_indices(name, row, col, offset, dtype, lower, device=None):
    row = _args.int_arg(row, name, "row", 1)
    col = _args.int_arg(col, name, "col", 2)
    offset = _args.int_arg(offset, name, "offset", 3)
    dt = _dtype.int64 if dtype is None else _dtype.to_dtype(dtype)
    if dt.np.kind not in "iu":
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dtype.c_name(dt.np)}'")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dev = default_device() if device is None else as_device(device)
    ref = backend.anchor(dev)                   # made on the device it is asked for
    d = np.arange(col, like=ref)[None, :] - np.arange(row, like=ref)[:, None]
    r, c = np.nonzero(d <= offset if lower else d >= offset)        # row-major, as np.tril_indices
    return make(np.stack([r, c]).astype(dt.np).reshape(2, -1))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices("tril_indices", row, col, offset, dtype, True, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices("triu_indices", row, col, offset, dtype, False, device)


# -- vander --------------------------------------------------------------------------------------------------------
def vander(x, N=None, increasing=False):
    _args.bool_arg(increasing, "vander", "increasing", 3)
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0]
    if N is not None:
        n = _args.int_arg(N, "vander", "N", 2)
        if n < 0:
            raise RuntimeError("N must be non-negative.")
    dt = _dtype.promote_types(_dtype._FROM_NP[x._data.dtype], _dtype.int64)
    result = zeros(x._data.shape[0], n, dtype=dt)
    if n > 0:
        result.fill_(1)
        if n > 1:
            result[:, 1:].copy_(x.unsqueeze(1))
            result[:, 1:].copy_(result[:, 1:].cumprod(1))
    return result if increasing else result.flip([1])


# -- trapezoid / cumulative_trapezoid -------------------------------------------------------------------------------
def _floating(x):
    """An integer tensor in the default float dtype (what a C++ Scalar double does to it)."""
    return x if x._data.dtype.kind in "fcV" else x.to(_dtype._default[0])


def _mul_scalar(x, c):
    """x * c for a C++ Scalar c (MulBackward1)."""
    x = _floating(x)
    y = as_array(x._data * x._data.dtype.type(c))
    if x._rg and grad.enabled:
        n = MulBackward1((edge(x),))
        n.c = c
        return make(y, True, n)
    return make(y)


def _x_viewed(name, y, x, dim):
    if x._data.ndim == 1:
        if x._data.shape[0] != y._data.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y._data.ndim
        shape[dim] = x._data.shape[0]
        return x.view(shape)
    if x._data.ndim < y._data.ndim:
        return x.view((1,) * (y._data.ndim - x._data.ndim) + x._data.shape)
    return x


def _trap_dim(name, y, x, dim, zero_d=None):
    if x is not None and not isinstance(x, Tensor):
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"{_args.type_name(x)}), but expected one of:\n * (Tensor y, Tensor x, *, int dim = -1)\n"
                        " * (Tensor y, *, Number dx = 1, int dim = -1)\n")
    dim = _args.int_arg(dim, name, "dim")
    if y._data.ndim == 0:
        raise IndexError(zero_d or f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, y._data.ndim)


def _trap_args(name, y, x, dx, dim):
    if isinstance(x, Tensor):
        if y._data.dtype == np.bool_ or x._data.dtype == np.bool_:
            raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")
        return None
    if y._data.dtype == np.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return 1.0 if dx is None else float(_args.number_arg(dx, name, "dx"))


def trapezoid(y, x=None, *, dx=None, dim=-1):
    d = _trap_dim("trapezoid", y, x, dim)
    if y._data.shape[d] == 0:
        shape = y._data.shape[:d] + y._data.shape[d + 1:]
        return make(np.zeros(shape, y._data.dtype, like=y._data))
    c = _trap_args("trapezoid", y, x, dx, d)
    if c is not None:
        return _mul_scalar(y.sum(d) - _mul_scalar(y.select(d, 0) + y.select(d, -1), 0.5), c)
    xv = _x_viewed("trapezoid", y, x, d)
    dxt = xv.narrow(d, 1, xv.shape[d] - 1) - xv.narrow(d, 0, xv.shape[d] - 1)
    ys = y.narrow(d, 1, y.shape[d] - 1) + y.narrow(d, 0, y.shape[d] - 1)
    return _div_scalar(_floating((ys * dxt).sum(d)), 2.0)


def trapz(y, x=None, *, dx=None, dim=-1):
    _trap_dim("trapz", y, x, dim)
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    d = _trap_dim("cumulative_trapezoid", y, x, dim, "slice() cannot be applied to a 0-dim tensor.")
    c = _trap_args("cumulative_trapezoid", y, x, dx, d)
    n = y._data.shape[d]
    ys = y.narrow(d, 0, max(n - 1, 0)) + y.narrow(d, min(1, n), max(n - 1, 0))
    if c is not None:
        return cumsum(_mul_scalar(ys, c / 2.0), d)
    xv = _x_viewed("cumulative_trapezoid", y, x, d)
    m = xv.shape[d]
    dxt = xv.narrow(d, min(1, m), max(m - 1, 0)) - xv.narrow(d, 0, max(m - 1, 0))
    return _div_scalar(_floating(cumsum(ys * dxt, d)), 2.0)


# -- gradient (torch's gradient_helper / gradient_helper_float) ------------------------------------------------------
def _gradient_dims(x, spacing, dim, edge_order):
    nd = x._data.ndim
    if x._data.dtype == np.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = list(range(nd)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if isinstance(spacing, (list, tuple)):
        n = len(spacing)
        if dim is None and n != nd:
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                               f"to 'self.dim() = {nd}', since dim argument was not given, but got a list of length {n}")
        if dim is not None and n != len(dims):
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length {n} and a dim "
                               f"argument of length {len(dims)}.")
    edge_order = _args.int_arg(edge_order, "gradient", "edge_order")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = [_wrap_dim(d, nd) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    for d in dims:
        if x._data.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    return dims


def _sl(x, d, start, stop=None):
    n = x._data.shape[d]
    start = start + n if start < 0 else start
    stop = n if stop is None else (stop + n if stop < 0 else stop)
    return x.narrow(d, start, max(stop - start, 0))


def _gradient_float(x, h, d, edge_order):
    center = (_sl(x, d, 2) - _sl(x, d, 0, -2)) / h
    if edge_order == 1:
        pre = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / h
        app = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / h
    else:
        pre = (_sl(x, d, 0, 1) * -1.5 + _sl(x, d, 1, 2) * 2 - _sl(x, d, 2, 3) * 0.5) / h
        app = (_sl(x, d, -3, -2) * 0.5 + _sl(x, d, -2, -1) * -2 + _sl(x, d, -1) * 1.5) / h
    return cat([pre, center / 2, app], d)


def _gradient_coords(x, coords, d, edge_order):
    if coords.dim() != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got an element "
                           f"with {coords.dim()} dimensions!")
    shape = [1] * x.dim()
    shape[d] = -1
    dx = coords.diff(1, 0)
    dx1, dx2 = _sl(dx, 0, 0, -1), _sl(dx, 0, 1)
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _sl(x, d, 0, -2) + b * _sl(x, d, 1, -1) + c * _sl(x, d, 2)
    h0, h1, hl, hm = dx[0], dx[1] if dx.shape[0] > 1 else dx[0], dx[-1], dx[-2] if dx.shape[0] > 1 else dx[-1]
    if edge_order == 1:
        pre = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / h0
        app = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / hl
    else:
        pre = (-(2.0 * h0 + h1) / (h0 * (h0 + h1)) * _sl(x, d, 0, 1) + (h0 + h1) / (h0 * h1) * _sl(x, d, 1, 2)
               + (-h0) / (h1 * (h0 + h1)) * _sl(x, d, 2, 3))
        app = (hl / (hm * (hl + hm)) * _sl(x, d, -3, -2) + (-(hl + hm) / (hl * hm)) * _sl(x, d, -2, -1)
               + (2 * hl + hm) / (hl * (hl + hm)) * _sl(x, d, -1))
    return cat([pre, center, app], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    dims = _gradient_dims(input, spacing, dim, edge_order)
    if input._data.ndim == 0:
        return ()
    sp = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    out = []
    for d, h in zip(dims, sp):
        if isinstance(h, Tensor):
            out.append(_gradient_coords(input, h, d, edge_order))
        else:
            out.append(_gradient_float(input, float(_args.number_arg(h, "gradient", "spacing")), d, edge_order))
    return tuple(out)
