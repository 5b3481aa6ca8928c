"""Upsampling (nearest, nearest-exact, linear / bilinear / bicubic / trilinear) and pixel (un)shuffle primitives.

Every mode is separable: along each spatial dim the output is a gather (nearest) or a two-tap lerp
(linear) of the input, with PyTorch's source-index arithmetic (float32 for float32 inputs).  The
backward is the transpose of that linear map: a sorted segment sum (np.add.reduceat) in array mode
and a matmul with the (dense) interpolation matrix in tensor mode, so double backward works.
"""
import numpy as np

from .conversion import keep_format
from ..backend import contiguous
from ._core import make, edge, grad
from ..autograd.graph import Node

__all__ = ["upsample", "pixel_shuffle", "pixel_unshuffle", "separable_matrices_apply"]


# -- source indices (PyTorch's UpSample.h arithmetic) ------------------------------------------------
def _scale_value(scale, i, o, ft):
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(i) / ft(o)


def nearest_index(i, o, scale, exact, shortcuts=False, like=None):
    """Input index per output index (float32 arithmetic like PyTorch's nearest kernels).  PyTorch's
    backward kernel (not its forward) special-cases output == input and output == 2 * input.  The indices
    are built on `like`'s device."""
    dst = np.arange(o, like=like)
    if not exact:
        if shortcuts and o == i:
            return dst
        if shortcuts and o == 2 * i:
            return dst >> 1
        sc = _scale_value(scale, i, o, np.float32)
        src = np.floor(dst.astype(np.float32) * sc).astype(np.int64)
    else:
        sc = _scale_value(scale, i, o, np.float32)
        src = np.floor(((dst + 0.5) * np.float64(sc)).astype(np.float32)).astype(np.int64)
    return np.minimum(src, i - 1)


def _source_coords(i, o, scale, align_corners, ft, clamp_negative, like=None):
    """The (fractional) input coordinate of each output index for linear / cubic interpolation."""
    dst = np.arange(o, like=like)
    if align_corners:
        sc = ft(i - 1) / ft(o - 1) if o > 1 else ft(0)
        return (dst.astype(ft) * sc).astype(ft)
    sc = _scale_value(scale, i, o, ft)
    src = ((dst + 0.5) * np.float64(sc) - 0.5).astype(ft)
    if clamp_negative:
        src = np.where(src < 0, ft(0), src).astype(ft)
    return src


def linear_taps(i, o, scale, align_corners, dt, like=None):
    """(i0, i1, l0, l1) per output index for linear interpolation (opmath = dt)."""
    ft = np.float32 if dt == np.float32 else np.float64
    if o == i:          # PyTorch copies a dim whose size does not change, whatever the scale
        dst = np.arange(o, like=like)
        return dst, dst, np.ones(o, dt, like=like), np.zeros(o, dt, like=like)
    src = _source_coords(i, o, scale, align_corners, ft, True, like)
    i0 = np.minimum(src.astype(np.int64), i - 1)
    i1 = i0 + (i0 < i - 1)
    l1 = np.clip(src - i0.astype(ft), 0, 1).astype(ft)
    l0 = (ft(1) - l1).astype(ft)
    return i0, i1, l0.astype(dt), l1.astype(dt)


def cubic_taps(i, o, scale, align_corners, dt, like=None):
    """Four clamped indices and PyTorch's cubic-convolution weights (A = -0.75) per output index."""
    ft = np.float32 if dt == np.float32 else np.float64
    src = _source_coords(i, o, scale, align_corners, ft, False, like)
    i0 = np.minimum(np.floor(src).astype(np.int64), i - 1)
    t = np.clip(src - i0.astype(ft), 0, 1).astype(ft)
    A = ft(-0.75)

    def cc1(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def cc2(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    t2 = (ft(1) - t).astype(ft)
    ws = [cc2(t + ft(1)), cc1(t), cc1(t2), cc2(t2 + ft(1))]
    idx = [np.clip(i0 - 1 + j, 0, i - 1) for j in range(4)]
    return tuple(idx) + tuple(w.astype(dt) for w in ws)


def _bshape(v, axis, ndim):
    s = [1] * ndim
    s[axis] = -1
    return v.reshape(s)


def _segsum(g, idx, n, axis):
    """out[..., j, ...] = sum of g along axis where idx == j (idx non-decreasing)."""
    shape = list(g.shape)
    shape[axis] = n
    out = np.zeros(shape, g.dtype, like=g)
    if g.shape[axis] == 0 or g.size == 0:
        return out
    u, starts = np.unique(idx, return_index=True)
    pre = (slice(None),) * axis
    out[pre + (u,)] = np.add.reduceat(g, starts, axis=axis)
    return out


def _matrix(taps, n_in, dt):
    """Dense (out, in) matrix of one dim's linear map."""
    if taps[0] == "nearest":
        idx = taps[1]
        m = np.zeros((len(idx), n_in), dt, like=idx)
        m[np.arange(len(idx), like=idx), idx] = 1
        return m
    _, idx, wts = taps
    m = np.zeros((len(idx[0]), n_in), dt, like=idx[0])
    r = np.arange(len(idx[0]), like=idx[0])
    for i, w in zip(idx, wts):
        np.add.at(m, (r, i), w)
    return m


def separable_matrices_apply(ns, g, mats, transpose):
    """Apply per-dim dense matrices to the last len(mats) axes (g @ M or g @ M^T per axis)."""
    nd = len(mats)
    for j, m in enumerate(mats):
        axis = g.dim() - nd + j if ns.is_tensor_mode else g.ndim - nd + j
        mm = ns.const(m if transpose else contiguous(m.T), g)
        last = (g.dim() if ns.is_tensor_mode else g.ndim) - 1
        if axis != last:
            g = ns.transpose(ns.matmul(ns.transpose(g, axis, last), mm), axis, last)
        else:
            g = ns.matmul(g, mm)
    return g


class _UpsampleNode(Node):
    __slots__ = ("output_size", "scales", "align_corners", "input_shape", "taps")

    def backward(self, ns, g):
        shape = self.input_shape
        if ns.is_tensor_mode:
            mats = [_matrix(t, shape[2 + j], g._data.dtype) for j, t in enumerate(self.taps)]
            return (separable_matrices_apply(ns, g, mats, True),)
        for j, t in enumerate(self.taps):
            axis = 2 + j
            n = shape[axis]
            if t[0] == "nearest":
                g = _segsum(g, t[1], n, axis)
            else:
                _, idx, wts = t
                g = sum(_segsum(g * _bshape(w, axis, g.ndim), i, n, axis) for i, w in zip(idx, wts))
        return (g,)


class UpsampleNearest1DBackward0(_UpsampleNode):
    __slots__ = ()


class UpsampleNearest2DBackward0(_UpsampleNode):
    __slots__ = ()


class UpsampleNearest3DBackward0(_UpsampleNode):
    __slots__ = ()


class UpsampleNearestExact1DBackward0(_UpsampleNode):
    __slots__ = ()


class UpsampleNearestExact2DBackward0(_UpsampleNode):
    __slots__ = ()


class UpsampleNearestExact3DBackward0(_UpsampleNode):
    __slots__ = ()


class UpsampleLinear1DBackward0(_UpsampleNode):
    __slots__ = ()


class UpsampleBilinear2DBackward0(_UpsampleNode):
    __slots__ = ()


class UpsampleTrilinear3DBackward0(_UpsampleNode):
    __slots__ = ()


class UpsampleBicubic2DBackward0(_UpsampleNode):
    __slots__ = ()


# nearest modes: one node per number of spatial dims; the others: one node whatever the dims
_NODES = {"nearest": {1: UpsampleNearest1DBackward0, 2: UpsampleNearest2DBackward0, 3: UpsampleNearest3DBackward0},
          "nearest-exact": {1: UpsampleNearestExact1DBackward0, 2: UpsampleNearestExact2DBackward0,
                            3: UpsampleNearestExact3DBackward0},
          "linear": UpsampleLinear1DBackward0, "bilinear": UpsampleBilinear2DBackward0,
          "trilinear": UpsampleTrilinear3DBackward0, "bicubic": UpsampleBicubic2DBackward0}


def _node_cls(mode, nd):
    c = _NODES[mode]
    return c[nd] if isinstance(c, dict) else c


def upsample(x, output_size, scales, mode, align_corners=False):
    """x (N, C, *S) -> (N, C, *output_size); scales: per-dim scale factors or Nones."""
    a = x._data
    nd = a.ndim - 2
    taps, bw_taps = [], []
    y = a
    for j in range(nd):
        i, o = a.shape[2 + j], output_size[j]
        sc = scales[j] if scales is not None else None
        if mode in ("nearest", "nearest-exact"):
            # PyTorch's 2-D forward kernel and every backward kernel use the shortcuts; 1-D/3-D forwards do not
            taps.append(("nearest", nearest_index(i, o, sc, mode == "nearest-exact", nd == 2, a)))
            bw_taps.append(("nearest", nearest_index(i, o, sc, mode == "nearest-exact", True, a)))
        else:
            if mode == "bicubic":
                i0, i1, i2, i3, w0, w1, w2, w3 = cubic_taps(i, o, sc, align_corners, a.dtype.type, a)
                taps.append(("taps", (i0, i1, i2, i3), (w0, w1, w2, w3)))
            else:
                i0, i1, l0, l1 = linear_taps(i, o, sc, align_corners, a.dtype.type, a)
                taps.append(("taps", (i0, i1), (l0, l1)))
            bw_taps.append(taps[-1])
    if a.size:
        for j in reversed(range(nd)):       # the last dim first, like PyTorch's nested interpolation
            axis = 2 + j
            t = taps[j]
            if t[0] == "nearest":
                y = np.take(y, t[1], axis=axis)
            else:
                _, idx, wts = t
                acc = np.take(y, idx[0], axis=axis) * _bshape(wts[0], axis, y.ndim)
                for i, w in zip(idx[1:], wts[1:]):
                    acc += np.take(y, i, axis=axis) * _bshape(w, axis, y.ndim)
                y = acc.astype(a.dtype, copy=False)
    else:
        y = np.zeros(a.shape[:2] + tuple(output_size), a.dtype, like=a)
    y = contiguous(y)
    if x._rg and grad.enabled:
        n = _node_cls(mode, nd)((edge(x),))
        n.output_size, n.scales, n.align_corners, n.input_shape, n.taps = \
            list(output_size), scales, align_corners, a.shape, bw_taps
        return keep_format(x, make(y, True, n))
    return keep_format(x, make(y))


# -- pixel shuffle ------------------------------------------------------------------------------------
def _shuffle_arr(a, r):
    *lead, C, H, W = a.shape
    oc = C // (r * r)
    y = a.reshape(tuple(lead) + (oc, r, r, H, W))
    k = len(lead)
    y = y.transpose(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return y.reshape(tuple(lead) + (oc, H * r, W * r))


def _unshuffle_arr(a, r):
    *lead, C, H, W = a.shape
    k = len(lead)
    y = a.reshape(tuple(lead) + (C, H // r, r, W // r, r))
    y = y.transpose(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return y.reshape(tuple(lead) + (C * r * r, H // r, W // r))


def _inverse_shuffle(ns, g, r, tensor_fn, array_fn):
    """The gradient of a pixel (un)shuffle: the inverse rearrangement of g (differentiable in tensor mode)."""
    return (tensor_fn(g, r) if ns.is_tensor_mode else array_fn(g, r),)


class PixelShuffleBackward0(Node):
    __slots__ = ("upscale_factor",)

    def backward(self, ns, g):
        return _inverse_shuffle(ns, g, self.upscale_factor, pixel_unshuffle, _unshuffle_arr)


class PixelUnshuffleBackward0(Node):
    __slots__ = ("downscale_factor",)

    def backward(self, ns, g):
        return _inverse_shuffle(ns, g, self.downscale_factor, pixel_shuffle, _shuffle_arr)


def _check_shuffle(name, a, r, factor):
    if a.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with "
                           f"{a.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {factor}, but got {r}")


def _shuffle_out(x, y, node_cls, factor, r):
    """The (contiguous) result of pixel_(un)shuffle, with its Backward node when x needs a gradient."""
    y = contiguous(y)
    if x._rg and grad.enabled:
        n = node_cls((edge(x),))
        setattr(n, factor, r)
        return keep_format(x, make(y, True, n), (4,))
    return keep_format(x, make(y), (4,))


def pixel_shuffle(x, r):
    a = x._data
    _check_shuffle("pixel_shuffle", a, r, "upscale_factor")
    if a.shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={a.shape[-3]} is not divisible by {r * r}")
    return _shuffle_out(x, _shuffle_arr(a, r), PixelShuffleBackward0, "upscale_factor", r)


def pixel_unshuffle(x, r):
    a = x._data
    _check_shuffle("pixel_unshuffle", a, r, "downscale_factor")
    for dim, side in ((-2, "height"), (-1, "width")):
        if a.shape[dim] % r:
            raise RuntimeError(f"pixel_unshuffle expects {side} to be divisible by downscale_factor, but "
                               f"input.size({dim})={a.shape[dim]} is not divisible by {r}")
    return _shuffle_out(x, _unshuffle_arr(a, r), PixelUnshuffleBackward0, "downscale_factor", r)
