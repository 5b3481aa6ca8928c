"""Pooling primitives (2-D and 3-D; the 1-D forms are unsqueeze -> 2-D -> squeeze like PyTorch).

ops: max_pool_with_indices (MaxPool{2,3}DWithIndicesBackward0), avg_pool (AvgPool{2,3}DBackward0),
     adaptive_avg_pool (AdaptiveAvgPool{2,3}DBackward0), adaptive_max_pool (AdaptiveMaxPool{2,3}DBackward0),
     max_unpool (MaxUnpool{2,3}DBackward0), fractional_max_pool2d (FractionalMaxPool2DBackward0).

Inputs arrive batched (N, C, *S) or unbatched (C, *S); arrays are handled as (N, C, *S).  Windows are
strided views (conv.windows); the backward loops over the kernel offsets with strided slice-adds.  Max
pooling is a running max over the kernel offsets' strided views of the padded input (no window copies,
no argmax over a short axis); when the windows tile the input (stride == kernel, no padding or
dilation: MaxPool2d(2)) its backward is one masked copy per offset, with no accumulation.  On a GPU
(float32 / float64) max pooling and its backward are one launch each (_cuda_kernels.conv), with the same values.  In
tensor mode (double backward) the gradients are built from differentiable ops: index_add_zeros for
the max pools, col2im for avg_pool, dense averaging matrices for adaptive_avg_pool.
"""
import numpy as np

from ..backend import contiguous
from .. import _cuda_kernels
from .._cuda_kernels import conv as _k_conv
from ._core import make, edge, save_in, grad, full_precision, attach_self as _attach
from ..autograd.graph import Node
from .conv import col2im, _convolution
from .namespaces import _UINT_OF, ARR
from .upsample import separable_matrices_apply
from .pad import constant_pad_nd
from .views import reshape, unsqueeze, squeeze
from .conversion import keep_format

__all__ = ["pool_out_size", "max_pool_with_indices", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool",
           "max_unpool", "fractional_max_pool2d"]


def pool_out_size(S, k, s, p, d, ceil_mode):
    o = (S + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= S + p:
        o -= 1
    return o


def _batched(a, nd):
    return a if a.ndim == nd + 2 else a[None]


def _flat_index_add(ns, shape, flat, g):
    """Zeros of `shape` (N, C, *S) with g (N, C, *O) added at the flat spatial indices `flat`."""
    N, C = shape[:2]
    P = int(np.prod(shape[2:]))
    if ns.is_tensor_mode:
        nI = np.arange(N, like=flat).reshape(N, 1, 1)
        cI = np.arange(C, like=flat).reshape(1, C, 1)
        gg = ns.reshape(g, (N, C, int(np.prod(g.shape[2:]))))
        r = ns.index_add_zeros((N, C, P), (nI, cI, flat.reshape(gg.shape)), gg)
        return ns.reshape(r, shape)
    out = np.zeros((N * C, P), g.dtype, like=g)
    rows = np.arange(N * C, like=g).reshape(-1, 1)
    np.add.at(out, (rows, flat.reshape(N * C, -1)), g.reshape(N * C, -1))
    return out.reshape(shape)


def _unbatch_wrap(ns, g, batched, fn):
    if batched:
        return fn(g)
    if ns.is_tensor_mode:
        return squeeze(fn(unsqueeze(g, 0)), 0)
    return fn(g[None])[0]


# -- max pool -----------------------------------------------------------------------------------------
class _MaxPoolNode(Node):
    __slots__ = ("kernel_size", "stride", "padding", "dilation", "ceil_mode", "kidx", "flat", "shape", "batched")
    _saved_names = ("self", "result1")

    def backward(self, ns, g):
        return (_attach(ns, _unbatch_wrap(ns, g, self.batched, lambda t: self._bw(ns, t)), self),)

    def _bw(self, ns, g):
        if ns.is_tensor_mode:
            return _flat_index_add(ns, self.shape, self.flat, g)
        K, s, p, d = self.kernel_size, self.stride, self.padding, self.dilation
        O = g.shape[2:]
        nd = len(K)
        S = self.shape[2:]
        if _fused(g):           # one launch: each input element adds the gradients of the windows that picked it
            return _k_conv.max_pool_backward(contiguous(g), contiguous(self.kidx), self.shape, K, s, p, d,
                                             _tiles(K, s, p, d, S, O))
        u = _UINT_OF.get(g.dtype)
        zero = np.zeros((), g.dtype, like=g)
        if _tiles(K, s, p, d, S, O):      # each input element is in at most one window: masked copies
            full = all(O[i] * K[i] == S[i] for i in range(nd))       # every element gets written
            out = (np.empty if full else np.zeros)(self.shape, g.dtype, like=g)
            for kk, k in enumerate(np.ndindex(*K)):
                m = self.kidx == kk
                dst = out[_offset_slice(k, s, d, O)]
                if u is None:
                    dst[...] = np.where(m, g, zero)
                else:
                    np.bitwise_and(g.view(u), np.negative(m.view(np.uint8), dtype=u), out=dst.view(u))
            return out
        ext = [max((O[i] - 1) * s[i] + d[i] * (K[i] - 1) + 1, S[i] + 2 * p[i]) for i in range(nd)]
        out = np.zeros(tuple(self.shape[:2]) + tuple(ext), g.dtype, like=g)
        for kk, k in enumerate(np.ndindex(*K)):
            m = self.kidx == kk
            out[_offset_slice(k, s, d, O)] += np.where(m, g, zero) if u is None else _masked(g, m, u)
        return out[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + S[i]) for i in range(nd))]


class MaxPool2DWithIndicesBackward0(_MaxPoolNode):
    __slots__ = ()


class MaxPool3DWithIndicesBackward0(_MaxPoolNode):
    __slots__ = ()


_MAXPOOL = {2: MaxPool2DWithIndicesBackward0, 3: MaxPool3DWithIndicesBackward0}


def _fused(a):
    return a.__class__ is not np.ndarray and a.dtype in (np.float32, np.float64) and _cuda_kernels.available()


def _lowest(dt):
    if dt.kind in "fV":
        return -np.inf
    if dt.kind == "b":
        return False
    return np.iinfo(dt).min


def _tiles(K, s, p, d, S, O):
    """True when the windows tile the input without overlap or padding (stride == kernel, e.g. MaxPool2d(2))."""
    return all(s[i] == K[i] and d[i] == 1 and p[i] == 0 and O[i] * K[i] <= S[i] for i in range(len(K)))


def _offset_slice(k, s, d, O):
    """The elements at kernel offset k of every window (window starts 0, s, 2s, ... of the padded input)."""
    return (slice(None), slice(None)) + tuple(slice(k[i] * d[i], k[i] * d[i] + s[i] * (O[i] - 1) + 1, s[i])
                                              for i in range(len(k)))


def _masked(g, m, u):
    """g where m else +0.0, as g's bits AND all-ones / all-zeros (exact for inf / NaN; far cheaper than
    np.where on random masks).  u: the unsigned type of g's width."""
    return np.bitwise_and(g.view(u), np.negative(m.view(np.uint8), dtype=u)).view(g.dtype)


def _running_max(ap, K, s, d, O):
    """Max and kernel offset index (int8 when it fits) of every window of ap (padded with the lowest value):
    one pass per kernel offset over strided views -- no window copies, no argmax over a short axis.  Ties
    keep the first offset (torch's scan order); a NaN window gives NaN at its last NaN (as torch)."""
    Kp = int(np.prod(K))
    offs = list(np.ndindex(*K))
    val = np.array(ap[_offset_slice(offs[0], s, d, O)], order="C", like=ap)
    kidx = np.zeros(val.shape, np.int8 if Kp < 128 else np.int64, like=ap)
    for kk in range(1, Kp):         # branch-free updates: masked copies with random masks are several x slower
        v = ap[_offset_slice(offs[kk], s, d, O)]
        np.maximum(kidx, np.multiply(v > val, kk, dtype=kidx.dtype), out=kidx)   # kk where v > val (kk grows)
        np.maximum(v, val, out=val)            # keeps val on ties (np.maximum returns its 2nd operand)
    if ap.dtype.kind in "fV" and np.isnan(val.sum()):   # rare: NaN windows
        for kk in range(Kp):
            nan = np.isnan(ap[_offset_slice(offs[kk], s, d, O)])
            np.copyto(kidx, kk, where=nan)
            np.copyto(val, np.nan, where=nan)
    return val, kidx


def _first_valid(kidx, K, s, p, d, S, O):
    """A window whose inputs all equal the padding value may have picked a padding position: torch's kernel
    reports the window's first position inside the input then."""
    first = np.zeros((), np.int64, like=kidx)       # per window: the offset of its first position inside the input
    for i in range(len(K)):
        k0 = np.maximum(0, -((np.arange(O[i], like=kidx) * s[i] - p[i]) // d[i]))
        first = np.add.outer(first * K[i], k0)
    bad = np.zeros(kidx.shape, bool, like=kidx)
    for kk, k in enumerate(np.ndindex(*K)):
        inside = np.ones((), bool, like=kidx)
        for i in range(len(K)):
            pos = np.arange(O[i], like=kidx) * s[i] - p[i] + k[i] * d[i]
            inside = np.logical_and.outer(inside, (pos >= 0) & (pos < S[i]))
        bad |= (kidx == kk) & ~inside
    return np.where(bad, first, kidx).astype(kidx.dtype)


def _max_pool_arrays(a, K, s, p, d, O, ext):
    """The array code of max_pool_with_indices on a batched array: (values, kernel offset indices, int64 flat
    indices into each input plane)."""
    nd = len(K)
    N, C = a.shape[:2]
    S = a.shape[2:]
    if a.size and all(O):
        pads = [(p[i], max(ext[i] - S[i] - p[i], 0)) for i in range(nd)]
        ap = a
        if any(q for pr in pads for q in pr):
            ap = np.full((N, C) + tuple(S[i] + sum(pads[i]) for i in range(nd)), _lowest(a.dtype), a.dtype, like=a)
            ap[(slice(None), slice(None)) + tuple(slice(pads[i][0], pads[i][0] + S[i]) for i in range(nd))] = a
        val, kidx = _running_max(ap, K, s, d, O)
        # (on a device, no sync for the test: the fix-up runs whenever there is padding)
        if ap is not a and (ap.__class__ is not np.ndarray or (val == _lowest(a.dtype)).any()):
            kidx = _first_valid(kidx, K, s, p, d, S, O)
    else:
        kidx = np.zeros((N, C) + tuple(O), np.int64, like=a)
        val = np.zeros((N, C) + tuple(O), a.dtype, like=a)
    # flat index = (flat index of the window start) + (flat offset of the kernel position kidx)
    start = np.zeros((), np.int64, like=a)
    koff = np.zeros((), np.int64, like=a)
    for i in range(nd):
        start = np.add.outer(start * S[i], np.arange(O[i], like=a) * s[i] - p[i])
        koff = np.add.outer(koff * S[i], np.arange(K[i], like=a) * d[i])
    flat = np.take(koff.reshape(-1), kidx)
    flat += start
    return val, kidx, flat


def max_pool_with_indices(x, K, s, p, d, ceil_mode):
    """Checked by the caller.  Returns (values, int64 indices into each input plane)."""
    a0 = x._data
    nd = len(K)
    a = _batched(a0, nd)
    S = a.shape[2:]
    O = [pool_out_size(S[i], K[i], s[i], p[i], d[i], ceil_mode) for i in range(nd)]
    ext = [(O[i] - 1) * s[i] + d[i] * (K[i] - 1) + 1 for i in range(nd)]
    if a.size and all(O) and _fused(a):         # one launch (the padding read as the lowest value, not built)
        pads = [(p[i], max(ext[i] - S[i] - p[i], 0)) for i in range(nd)]
        val, kidx, flat = _k_conv.max_pool(contiguous(a), K, s, p, d, O, any(q for pr in pads for q in pr))
    else:
        val, kidx, flat = _max_pool_arrays(a, K, s, p, d, O, ext)
    batched = a0.ndim == nd + 2
    if not batched:
        val, flat_out = val[0], flat[0]
    else:
        flat_out = flat
    idx_t = make(contiguous(flat_out))
    if x._rg and grad.enabled:
        n = _MAXPOOL[nd]((edge(x),))
        n.kernel_size, n.stride, n.padding, n.dilation, n.ceil_mode = K, s, p, d, ceil_mode
        n.kidx, n.flat, n.shape, n.batched = kidx, flat, a.shape, batched
        n._saved = (save_in(x), save_in(idx_t))
        return keep_format(x, (make(contiguous(val), True, n), idx_t))
    return keep_format(x, (make(contiguous(val)), idx_t))


# -- avg pool -----------------------------------------------------------------------------------------
def _avg_divisor(S, O, K, s, p, count_include_pad, divisor_override, like):
    """Per output position divisor (broadcast (*O)), on `like`'s device."""
    nd = len(K)
    if divisor_override:
        return None
    div = np.ones((), np.int64, like=like)
    for i in range(nd):
        start = np.arange(O[i], like=like) * s[i] - p[i]
        end = np.minimum(start + K[i], S[i] + p[i])
        pool = end - start
        cnt = np.minimum(end, S[i]) - np.maximum(start, 0)
        v = pool if count_include_pad else cnt
        div = np.multiply.outer(div, v)
    return div


class _AvgPoolNode(Node):
    __slots__ = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override",
                 "div", "shape", "batched")
    _saved_names = ("self",)

    def backward(self, ns, g):
        return (_attach(ns, _unbatch_wrap(ns, g, self.batched, lambda t: self._bw(ns, t)), self),)

    def _bw(self, ns, g):
        K, s, p = self.kernel_size, self.stride, self.padding
        nd = len(K)
        S = self.shape[2:]
        N, C = self.shape[:2]
        O = tuple(g.shape[2:])
        ones = (1,) * nd
        if self.divisor_override:
            gd = g / self.divisor_override
        else:
            gd = g / ns.const(self.div.astype(ns.data(g).dtype if ns.is_tensor_mode else g.dtype), g)
        if ns.is_tensor_mode:
            Kp = int(np.prod(K))
            cols = ns.expand(ns.reshape(gd, (N, C, 1, -1)), (N, C, Kp, int(np.prod(O))))
            cols = ns.reshape(cols, (N, C * Kp, int(np.prod(O))))
            ext = tuple((O[i] - 1) * s[i] + K[i] - 2 * p[i] for i in range(nd))
            if nd == 2:
                r = col2im(cols, ext, K, ones, p, s)
            else:
                r = _col2im3_t(cols, (N, C), ext, K, s, p)
            if ext != tuple(S):
                flat = []
                for i in reversed(range(nd)):
                    flat += [0, S[i] - ext[i]]
                r = constant_pad_nd(r, flat, 0)
            return r
        ext = [max((O[i] - 1) * s[i] + K[i], S[i] + 2 * p[i]) for i in range(nd)]
        out = np.zeros((N, C) + tuple(ext), gd.dtype, like=gd)
        for k in np.ndindex(*K):
            sl = (slice(None), slice(None)) + tuple(slice(k[i], k[i] + s[i] * (O[i] - 1) + 1, s[i]) for i in range(nd))
            out[sl] += gd
        return out[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + S[i]) for i in range(nd))]


def _col2im3_t(cols, NC, ext, K, s, p):
    """Tensor-mode 3-D col2im through a transposed convolution with a one-hot kernel per offset."""
    N, C = NC
    Kp = int(np.prod(K))
    O = [(ext[i] + 2 * p[i] - K[i]) // s[i] + 1 for i in range(3)]
    x = reshape(cols, (N, C * Kp) + tuple(O))
    w = np.zeros((C * Kp, 1) + tuple(K), cols._data.dtype, like=cols._data)
    for c in range(C):
        for kk, k in enumerate(np.ndindex(*K)):
            w[(c * Kp + kk, 0) + k] = 1
    return _convolution(x, make(w), None, tuple(s), tuple(p), (1, 1, 1), True, (0, 0, 0), C)


class AvgPool2DBackward0(_AvgPoolNode):
    __slots__ = ()


class AvgPool3DBackward0(_AvgPoolNode):
    __slots__ = ()


_AVGPOOL = {2: AvgPool2DBackward0, 3: AvgPool3DBackward0}


def avg_pool(x, K, s, p, ceil_mode, count_include_pad, divisor_override):
    a0 = x._data
    nd = len(K)
    if nd == 3:
        full_precision("avg_pool3d_out_frame", a0.dtype)
    a = _batched(a0, nd)
    N, C = a.shape[:2]
    S = a.shape[2:]
    O = [pool_out_size(S[i], K[i], s[i], p[i], 1, ceil_mode) for i in range(nd)]
    ext = [max((O[i] - 1) * s[i] + K[i], S[i] + 2 * p[i]) for i in range(nd)]
    isint = a.dtype.kind in "iub"
    acc = np.zeros((N, C) + tuple(O), np.float64 if isint else a.dtype, like=a)
    if a.size and all(O):
        ap = np.pad(a, [(0, 0), (0, 0)] + [(p[i], ext[i] - S[i] - p[i]) for i in range(nd)])
        for k in np.ndindex(*K):
            sl = (slice(None), slice(None)) + tuple(slice(k[i], k[i] + s[i] * (O[i] - 1) + 1, s[i]) for i in range(nd))
            acc += ap[sl]
    div = _avg_divisor(S, O, K, s, p, count_include_pad, divisor_override, a)
    if divisor_override:
        y = acc / divisor_override
    else:
        y = acc / div.astype(acc.dtype)
    y = np.trunc(y).astype(a.dtype) if isint else y.astype(a.dtype)
    batched = a0.ndim == nd + 2
    if not batched:
        y = y[0]
    if x._rg and grad.enabled:
        n = _AVGPOOL[nd]((edge(x),))
        n.kernel_size, n.stride, n.padding, n.ceil_mode = K, s, p, ceil_mode
        n.count_include_pad, n.divisor_override, n.div = count_include_pad, divisor_override, div
        n.shape, n.batched = a.shape, batched
        n._saved = (save_in(x),)
        return keep_format(x, make(y, True, n), (4,))
    return keep_format(x, make(y), (4,))


# -- adaptive pools -----------------------------------------------------------------------------------
def _adaptive_bounds(S, O, like=None):
    o = np.arange(O, like=like)
    start = (o * S) // O
    end = -((-(o + 1) * S) // O)
    return start, end


def _avg_matrix(S, O, dt, like):
    """(O, S): row j averages the inputs of window j (built on `like`'s device, no per-row writes)."""
    start, end = _adaptive_bounds(S, O, like)
    j = np.arange(S, like=like)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return np.where(inside, (1.0 / (end - start))[:, None], 0.0).astype(dt)


class _AdaptiveAvgNode(Node):
    __slots__ = ("self_sym_sizes", "mats", "batched")
    _saved_names = ("self",)

    def backward(self, ns, g):
        return (_attach(ns, separable_matrices_apply(ns, g, self.mats, True), self),)


class AdaptiveAvgPool2DBackward0(_AdaptiveAvgNode):
    __slots__ = ()


class AdaptiveAvgPool3DBackward0(_AdaptiveAvgNode):
    __slots__ = ()


_ADAVG = {2: AdaptiveAvgPool2DBackward0, 3: AdaptiveAvgPool3DBackward0}


def adaptive_avg_pool(x, O):
    a = x._data
    nd = len(O)
    S = a.shape[-nd:]
    mats = [_avg_matrix(S[i], O[i], a.dtype if a.dtype.kind in "fV" else np.float64, a) for i in range(nd)]
    y = separable_matrices_apply(ARR, a, mats, False).astype(a.dtype) if a.size else \
        np.zeros(a.shape[:-nd] + tuple(O), a.dtype, like=a)
    y = contiguous(y)
    if x._rg and grad.enabled:
        n = _ADAVG[nd]((edge(x),))
        n.self_sym_sizes, n.mats = a.shape, mats
        n._saved = (save_in(x),)
        return keep_format(x, make(y, True, n), (4,))
    return keep_format(x, make(y), (4,))


class _AdaptiveMaxNode(Node):
    __slots__ = ("flat", "shape", "batched")
    _saved_names = ("self", "result1")

    def backward(self, ns, g):
        return (_attach(ns, _unbatch_wrap(ns, g, self.batched, lambda t: _flat_index_add(ns, self.shape, self.flat, t)),
                        self),)


class AdaptiveMaxPool2DBackward0(_AdaptiveMaxNode):
    __slots__ = ()


class AdaptiveMaxPool3DBackward0(_AdaptiveMaxNode):
    __slots__ = ()


_ADMAX = {2: AdaptiveMaxPool2DBackward0, 3: AdaptiveMaxPool3DBackward0}


def adaptive_max_pool(x, O):
    a0 = x._data
    nd = len(O)
    a = _batched(a0, nd)
    N, C = a.shape[:2]
    S = a.shape[2:]
    idxs, kmax = [], []
    for i in range(nd):
        start, end = _adaptive_bounds(S[i], O[i])          # host: the window width km is a shape
        km = int((end - start).max()) if O[i] else 0
        start, end = _adaptive_bounds(S[i], O[i], a)
        ix = np.minimum(start[:, None] + np.arange(km, like=a)[None, :], end[:, None] - 1)
        idxs.append(ix)
        kmax.append(km)
    if a.size and all(O):
        sel = [slice(None), slice(None)]
        for i in range(nd):
            shp = [1] * (2 * nd)
            shp[2 * i], shp[2 * i + 1] = O[i], kmax[i]
            sel.append(idxs[i].reshape(shp))
        w = a[tuple(sel)]          # (N, C, O0, K0, O1, K1, ...)
        perm = (0, 1) + tuple(2 + 2 * i for i in range(nd)) + tuple(3 + 2 * i for i in range(nd))
        w = w.transpose(perm).reshape((N, C) + tuple(O) + (-1,))
        kidx = w.argmax(-1)
        val = np.take_along_axis(w, kidx[..., None], -1)[..., 0]
        kk = np.unravel_index(kidx, tuple(kmax))
        flat = np.zeros(kidx.shape, np.int64, like=a)
        for i in range(nd):
            shp = [1] * (nd + 2)
            shp[2 + i] = -1
            orow = np.arange(O[i], like=a).reshape(shp)
            flat = flat * S[i] + idxs[i][orow, kk[i]]
    else:
        val = np.zeros((N, C) + tuple(O), a.dtype, like=a)
        flat = np.zeros((N, C) + tuple(O), np.int64, like=a)
    batched = a0.ndim == nd + 2
    vo, fo = (val, flat) if batched else (val[0], flat[0])
    idx_t = make(contiguous(fo))
    if x._rg and grad.enabled:
        n = _ADMAX[nd]((edge(x),))
        n.flat, n.shape, n.batched = flat, a.shape, batched
        n._saved = (save_in(x), save_in(idx_t))
        return keep_format(x, (make(contiguous(vo), True, n), idx_t), (4,))
    return keep_format(x, (make(contiguous(vo)), idx_t), (4,))


# -- max_unpool -----------------------------------------------------------------------------------------
class _MaxUnpoolNode(Node):
    __slots__ = ("flat", "batched")
    _saved_names = ("indices",)

    def backward(self, ns, g):
        def bw(t):
            if ns.is_tensor_mode:
                N, C = t.shape[:2]
                tt = ns.reshape(t, (N, C, -1))
                nI = np.arange(N, like=self.flat).reshape(N, 1, 1)
                cI = np.arange(C, like=self.flat).reshape(1, C, 1)
                r = tt[(make(nI), make(cI), make(self.flat.reshape(N, C, -1)))]
                return ns.reshape(r, self.flat.shape)
            N, C = t.shape[:2]
            return np.take_along_axis(t.reshape(N, C, -1), self.flat.reshape(N, C, -1), -1).reshape(self.flat.shape)
        return (_unbatch_wrap(ns, g, self.batched, bw),)


class MaxUnpool2DBackward0(_MaxUnpoolNode):
    __slots__ = ()


class MaxUnpool3DBackward0(_MaxUnpoolNode):
    __slots__ = ()


_UNPOOL = {2: MaxUnpool2DBackward0, 3: MaxUnpool3DBackward0}


def max_unpool(x, indices, out_sz):
    a0 = x._data
    nd = len(out_sz)
    a = _batched(a0, nd)
    fl = _batched(indices._data, nd).astype(np.int64)
    N, C = a.shape[:2]
    P = int(np.prod(out_sz))
    if fl.size and (fl.min() < 0 or fl.max() >= P):
        bad = int(fl.max() if fl.max() >= P else fl.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, out_sz))}")
    out = np.zeros((N * C, P), a.dtype, like=a)
    out[np.arange(N * C, like=a)[:, None], fl.reshape(N * C, -1)] = a.reshape(N * C, -1)
    out = out.reshape((N, C) + tuple(out_sz))
    batched = a0.ndim == nd + 2
    if not batched:
        out = out[0]
    if x._rg and grad.enabled:
        n = _UNPOOL[nd]((edge(x),))
        n.flat, n.batched = fl, batched
        n._saved = (save_in(indices),)
        return keep_format(x, make(out, True, n), (4,))
    return keep_format(x, make(out), (4,))


# -- fractional max pool (2-D) -----------------------------------------------------------------------------
class FractionalMaxPool2DBackward0(_AdaptiveMaxNode):
    __slots__ = ()


def _intervals(sample, S, O, k):
    """PyTorch's generate_intervals, vectorised over planes: sample (N, C) -> starts (N, C, O)."""
    ft = sample.dtype.type
    seq = np.zeros(sample.shape + (O,), np.int64, like=sample)
    if O > 1:
        alpha = ft(S - k) / ft(O - 1)
        i = np.arange(O - 1, like=sample).astype(sample.dtype)
        seq[..., :O - 1] = (((i + sample[..., None]) * alpha).astype(sample.dtype).astype(np.int64)
                            - (sample * alpha).astype(sample.dtype).astype(np.int64)[..., None])
    if O > 0:
        seq[..., O - 1] = S - k
    return seq


def fractional_max_pool2d(x, K, O, samples):
    """Checked by the caller; samples (N, C, 2): [..., 0] places the columns, [..., 1] the rows."""
    a0 = x._data
    a = _batched(a0, 2)
    N, C, H, W = a.shape
    sm = samples._data.astype(a.dtype, copy=False)
    sw = _intervals(sm[..., 0], W, O[1], K[1])
    sh = _intervals(sm[..., 1], H, O[0], K[0])
    hI = sh[:, :, :, None, None, None] + np.arange(K[0], like=a).reshape(1, 1, 1, 1, -1, 1)
    wI = sw[:, :, None, :, None, None] + np.arange(K[1], like=a).reshape(1, 1, 1, 1, 1, -1)
    nI = np.arange(N, like=a).reshape(-1, 1, 1, 1, 1, 1)
    cI = np.arange(C, like=a).reshape(1, -1, 1, 1, 1, 1)
    w = a[nI, cI, hI, wI].reshape(N, C, O[0], O[1], -1)
    kidx = w.argmax(-1) if w.size else np.zeros((N, C, O[0], O[1]), np.int64, like=a)
    val = np.take_along_axis(w, kidx[..., None], -1)[..., 0] if w.size else np.zeros(kidx.shape, a.dtype, like=a)
    kh, kw = np.divmod(kidx, K[1])
    flat = (sh[:, :, :, None] + kh) * W + (sw[:, :, None, :] + kw)
    batched = a0.ndim == 4
    vo, fo = (val, flat) if batched else (val[0], flat[0])
    idx_t = make(contiguous(fo))
    if x._rg and grad.enabled:
        n = FractionalMaxPool2DBackward0((edge(x),))
        n.flat, n.shape, n.batched = flat, a.shape, batched
        n._saved = (save_in(x), save_in(idx_t))
        return make(contiguous(vo), True, n), idx_t
    return make(contiguous(vo)), idx_t
