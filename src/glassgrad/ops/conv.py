"""Convolution and im2col / col2im primitives (N-d: 1, 2 and 3 spatial dims).

ops: convolution (ConvolutionBackward0, plain and transposed), im2col (Im2ColBackward0, F.unfold),
     col2im (Col2ImBackward0, F.fold).

Convolutions are GEMMs in the "framed" layout (see _Frame): the padded input, split into stride
phases, laid out channel-major, so that every kernel offset reads a contiguous slice -- one GEMM per
offset accumulating through BLAS (cblas gemm with beta=1) when the channel counts are large enough,
else one GEMM over im2col columns copied in long contiguous runs.  F.unfold / F.fold (im2col,
col2im) loop over the kernel offsets with strided slice-adds -- never over the batch or pixels.
Backward formulas are written in terms of the same primitives in tensor mode, so double backward
works (grad wrt input of a conv is a transposed conv, and so on).
"""
import functools

import numpy as np

from .. import _blas
from ._core import make, edge, save_in, grad
from ..autograd.graph import Node

__all__ = ["convolution", "im2col", "col2im"]

_as_strided = np.lib.stride_tricks.as_strided


# -- array helpers (shared by pool.py) -------------------------------------------------------------
def windows(xp, K, s, d, O):
    """Read-only view (N, C, *O, *K) of the windows of `xp` (N, C, *S): kernel K, stride s,
    dilation d, O windows per dim (all inside xp)."""
    st = xp.strides
    nd = len(K)
    shape = xp.shape[:2] + tuple(O) + tuple(K)
    strides = st[:2] + tuple(st[2 + i] * s[i] for i in range(nd)) + tuple(st[2 + i] * d[i] for i in range(nd))
    return _as_strided(xp, shape, strides, writeable=False)


def col2im_add(dst, cols, K, s, d, O):
    """dst (N, C, *S) += the windows in cols (N, C, *K, *O), overlapping windows summed."""
    if cols.size == 0:
        return dst
    nd = len(K)
    for k in np.ndindex(*K):
        sl = (slice(None), slice(None)) + tuple(
            slice(k[i] * d[i], k[i] * d[i] + s[i] * (O[i] - 1) + 1, s[i]) for i in range(nd))
        dst[sl] += cols[(slice(None), slice(None)) + k]
    return dst


def out_size(S, K, s, p, d):
    return [(S[i] + 2 * p[i] - d[i] * (K[i] - 1) - 1) // s[i] + 1 for i in range(len(K))]


def _pad(x, p):
    if any(p):
        return np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p])
    return x


def _cols(x, K, s, p, d, O, g):
    """Input columns in GEMM order (g, Cg*prod(K), N*prod(O))."""
    N, C = x.shape[:2]
    nd = len(K)
    w = windows(_pad(x, p), K, s, d, O).reshape((N, g, C // g) + tuple(O) + tuple(K))
    perm = (1, 2) + tuple(range(3 + nd, 3 + 2 * nd)) + (0,) + tuple(range(3, 3 + nd))
    return w.transpose(perm).reshape(g, (C // g) * int(np.prod(K)), N * int(np.prod(O)))


def _bmm(a, b):
    """Batched (g, m, k) @ (g, k, n) as one 2-D BLAS call per group (np.matmul on stacked, transposed
    operands can miss BLAS), through glassgrad._blas.matmul (MKL's GEMM when installed)."""
    mm = _blas.matmul
    if a.shape[0] == 1:
        return mm(a[0], b[0])[None]
    out = np.empty((a.shape[0], a.shape[1], b.shape[2]), np.result_type(a.dtype, b.dtype))
    for i in range(a.shape[0]):
        mm(a[i], b[i], out=out[i])
    return out


# -- BLAS gemm with accumulation (C += A @ B), which np.matmul cannot do ----------------------------
def _gemm_fn(dt):
    """cblas_{s,d}gemm from glassgrad._blas (MKL's when installed, else NumPy's OpenBLAS), or None."""
    return _blas.gemm_fn(dt)


def _gemm_acc(f, a, b, c, ta=False, beta=1.0, tb=False):
    """c = a @ b + beta * c (a / b transposed when ta / tb): 2-D arrays of one dtype with unit inner stride
    (row strides free); beta=0 ignores c's contents."""
    M, N = c.shape
    it = c.itemsize
    f(101, 112 if ta else 111, 112 if tb else 111, M, N, b.shape[1] if tb else b.shape[0], 1.0, a.ctypes.data,
      a.strides[0] // it, b.ctypes.data, b.strides[0] // it, beta, c.ctypes.data, c.strides[0] // it)


_COL_BLOCK = 1 << 22       # bytes of im2col columns built at a time by the weight gradient

# per-offset GEMMs straight on the framed input pay off once both channel counts (per group) reach this
_ACC_MIN_K = 16


# -- the framed layout: convolution as GEMMs over contiguous slices (any stride) --------------------------
# Stride s splits the padded input into prod(s) phases (the positions congruent to r mod s); within a phase,
# kernel offset k reads the phase's grid shifted by a constant.  Each phase is laid out channel-major as
# (C, N*prod(Q)) (Q: the phase grid, about padded size / s) and the output is computed at every grid
# position (those past the last valid output are junk and get cropped).  Then the columns of one kernel
# offset are one contiguous slice per channel row of one phase: im2col is a copy of long contiguous runs, or
# no copy at all (a GEMM per offset reading the slice in place), and col2im is a loop of slice-adds or GEMMs
# accumulating into shifted slices -- never a transpose of a column matrix or a strided scatter.
class _Frame:
    """Geometry of the framed layout of an input (N, C, *S) for kernel K, stride s, padding p, dilation d."""
    __slots__ = ("N", "S", "p", "s", "Q", "L", "slack", "taps", "phases", "used")

    def __init__(self, N, S, p, K, d, s):
        nd = len(K)
        self.N, self.S, self.p, self.s = N, tuple(S), tuple(p), tuple(s)
        # grid size: the right padding of one row shares the zeros of the next row's left padding (and the
        # bottom padding of one image the top padding of the next), so S + p positions suffice -- unless the
        # outputs need more (padding beyond the kernel's reach)
        self.Q = tuple(max(-(-(S[i] + p[i]) // s[i]), (S[i] + 2 * p[i] - d[i] * (K[i] - 1) - 1) // s[i] + 1)
                       for i in range(nd))
        fq = [1] * nd
        for i in range(nd - 2, -1, -1):
            fq[i] = fq[i + 1] * self.Q[i + 1]
        self.L = N * int(np.prod(self.Q))
        self.phases = int(np.prod(s))
        self.taps = []              # per kernel offset (C order): (phase, flat shift in the phase grid)
        for k in np.ndindex(*K):
            q = [d[i] * k[i] for i in range(nd)]
            self.taps.append((int(np.ravel_multi_index([q[i] % s[i] for i in range(nd)], s)),
                              sum((q[i] // s[i]) * fq[i] for i in range(nd))))
        self.slack = max(off for _, off in self.taps)
        self.used = {ph for ph, _ in self.taps}

    def _slices(self):
        """Per phase: (the input positions it holds, where they sit in the phase grid)."""
        for r in np.ndindex(*self.s):
            src, dst = [], []
            for i in range(len(self.s)):
                i0 = (r[i] - self.p[i]) % self.s[i]
                n = len(range(i0, self.S[i], self.s[i]))
                j0 = (i0 + self.p[i]) // self.s[i]
                src.append(slice(i0, self.S[i], self.s[i]))
                dst.append(slice(j0, j0 + n))
            yield (slice(None), slice(None)) + tuple(src), (slice(None), slice(None)) + tuple(dst)

    def _grid(self, buf):
        return buf[:, :, :self.L].reshape(buf.shape[:2] + (self.N,) + self.Q)

    def put(self, a, dt):
        """a (N, C, *S) -> (phases, C, L + slack): zero padding, a's phases at their grid positions."""
        buf = np.zeros((self.phases, a.shape[1], self.L + self.slack), dt)
        grid = self._grid(buf)
        for ph, (src, dst) in enumerate(self._slices()):
            if ph in self.used:
                grid[ph][dst] = a[src].swapaxes(0, 1)
        return buf

    def take(self, buf):
        """Inverse of put: (phases, C, >= L) -> (N, C, *S) (every input position is in one phase)."""
        out = np.empty((self.N, buf.shape[1]) + self.S, buf.dtype)
        grid = self._grid(buf)
        for ph, (src, dst) in enumerate(self._slices()):
            out[src] = grid[ph][dst].swapaxes(0, 1)
        return out

    def cols(self, buf, a, n, g):
        """Columns (g, Cg*prod(K), n) of grid positions a .. a+n-1 (one contiguous copy per kernel offset)."""
        C = buf.shape[1]
        c = np.empty((C, len(self.taps), n), buf.dtype)
        for kk, (ph, off) in enumerate(self.taps):
            c[:, kk] = buf[ph, :, a + off:a + off + n]
        return c.reshape(g, C // g * len(self.taps), n)


def _frame(N, S, p, K, d, s):
    """The (immutable) _Frame of a geometry, built once: its constructor is pure-Python bookkeeping."""
    return _frame_cached(int(N), tuple(S), tuple(p), tuple(K), tuple(d), tuple(s))


_frame_cached = functools.lru_cache(maxsize=256)(_Frame)


def _to_grid(a, Q, dt):
    """a (N, C, *O) -> (C, N*prod(Q)): zeros with a at the start of each grid (outputs and their gradients)."""
    N, C = a.shape[:2]
    buf = np.zeros((C, N * int(np.prod(Q))), dt)
    buf.reshape((C, N) + tuple(Q))[(slice(None), slice(None)) + tuple(slice(0, n) for n in a.shape[2:])] = \
        a.swapaxes(0, 1)
    return buf


def _from_grid(y, N, Q, O):
    """(C, N*prod(Q)) -> (N, C, *O) contiguous (the valid outputs)."""
    f = y.reshape((y.shape[0], N) + tuple(Q))[(slice(None), slice(None)) + tuple(slice(0, n) for n in O)]
    return np.ascontiguousarray(f.swapaxes(0, 1))


def _tap_weights(w):
    """(Co, Cg, *K) -> (prod(K), Co, Cg) contiguous: one (Co, Cg) matrix per kernel offset."""
    return np.ascontiguousarray(np.moveaxis(w.reshape(w.shape[0], w.shape[1], -1), 2, 0))


def _acc_gemm(Cg, Og, dt, w):
    return _gemm_fn(dt) if min(Cg, Og) >= _ACC_MIN_K and w.dtype == dt else None


def _conv_framed(x, w, s, p, d, g, dt, O, keep):
    N = x.shape[0]
    Co, Cg, K = w.shape[0], w.shape[1], w.shape[2:]
    Og = Co // g
    fr = _frame(N, x.shape[2:], p, K, d, s)
    buf = fr.put(x, dt)
    if keep is not None:
        keep.append(buf)
    L = fr.L
    f = _acc_gemm(Cg, Og, dt, w)
    if f is not None:       # y += W[:, :, k] @ (input phase shifted by k): no im2col copy
        wk = _tap_weights(w)
        y = np.empty((Co, L), dt)
        for kk, (ph, off) in enumerate(fr.taps):
            for j in range(g):
                _gemm_acc(f, wk[kk, j * Og:(j + 1) * Og], buf[ph, j * Cg:(j + 1) * Cg, off:off + L],
                          y[j * Og:(j + 1) * Og], beta=1.0 if kk else 0.0)
        return _from_grid(y, N, fr.Q, O)
    y = _bmm(w.reshape(g, Og, -1), fr.cols(buf, 0, L, g))
    return _from_grid(y.reshape(Co, L), N, fr.Q, O)


def _conv_input_grad_framed(gy, w, S, s, p, d, g, dt, gyf=None):
    N, Co = gy.shape[:2]
    K = w.shape[2:]
    Cg = w.shape[1]
    Og = Co // g
    fr = _frame(N, S, p, K, d, s)
    if gyf is None:
        gyf = _to_grid(gy, fr.Q, dt)
    L = fr.L
    dst = np.zeros((fr.phases, g * Cg, L + fr.slack), dt)
    f = _acc_gemm(Cg, Og, dt, w)
    if f is not None:       # dx (phase, shifted by k) += W[:, :, k]^T @ gy: no column buffer, no slice-adds
        wk = _tap_weights(w)
        for kk, (ph, off) in enumerate(fr.taps):
            for j in range(g):
                _gemm_acc(f, wk[kk, j * Og:(j + 1) * Og], gyf[j * Og:(j + 1) * Og],
                          dst[ph, j * Cg:(j + 1) * Cg, off:off + L], ta=True)
    else:
        cols = _bmm(w.reshape(g, Og, -1).transpose(0, 2, 1), gyf.reshape(g, Og, L)).reshape(g * Cg, -1, L)
        for kk, (ph, off) in enumerate(fr.taps):
            dst[ph, :, off:off + L] += cols[:, kk]
    return fr.take(dst)


def _conv_weight_grad_framed(x, gy, wshape, s, p, d, g, dt, gyf=None, buf=None):
    K = wshape[2:]
    Co = gy.shape[1]
    fr = _frame(x.shape[0], x.shape[2:], p, K, d, s)
    if buf is None or buf.dtype != dt or buf.shape[0] != fr.phases:
        buf = fr.put(x, dt)
    if gyf is None:
        gyf = _to_grid(gy, fr.Q, dt)
    L = fr.L
    Cg, Og = buf.shape[1] // g, Co // g
    f = _gemm_fn(dt) if min(Cg, Og) >= _ACC_MIN_K and gyf.dtype == dt else None
    if f is not None:       # dW[:, :, k] = gy @ (input phase shifted by k)^T: no im2col copy
        out = np.empty((len(fr.taps), Co, Cg), dt)
        for kk, (ph, off) in enumerate(fr.taps):
            for j in range(g):
                _gemm_acc(f, gyf[j * Og:(j + 1) * Og], buf[ph, j * Cg:(j + 1) * Cg, off:off + L],
                          out[kk, j * Og:(j + 1) * Og], beta=0.0, tb=True)
        return np.ascontiguousarray(np.moveaxis(out, 0, 2)).reshape(wshape)
    # cols @ gy^T (then a small transpose) runs ~1.7x faster in OpenBLAS than gy @ cols^T; the columns are
    # built and consumed in blocks of positions that stay in cache (all of them are prod(K) x the input)
    gyt = gyf.reshape(g, Co // g, L).transpose(0, 2, 1)
    B = max(1024, _COL_BLOCK // (buf.shape[1] // g * len(fr.taps) * buf.itemsize))
    gwt = None
    for a in range(0, L, B):
        e = min(L, a + B)
        part = _bmm(fr.cols(buf, a, e - a, g), gyt[:, a:e])
        gwt = part if gwt is None else gwt.__iadd__(part)
    return gwt.transpose(0, 2, 1).reshape(wshape)


def _offsets(K, s, d, O):
    """(kernel offset index, kernel offset, slice tuple of its window positions) for each offset."""
    nd = len(K)
    for kk, k in enumerate(np.ndindex(*K)):
        yield kk, k, (slice(None), slice(None)) + tuple(
            slice(k[i] * d[i], k[i] * d[i] + s[i] * (O[i] - 1) + 1, s[i]) for i in range(nd))


def _depthwise(w, g):
    return g > 1 and w.shape[0] == g and w.shape[1] == 1


def _dw_bshape(v, nd):
    return v.reshape((1, -1) + (1,) * nd)


def conv_arr(x, w, s, p, d, g, O=None, keep=None):
    """Plain convolution on arrays: x (N, C, *S), w (Cout, C/g, *K) -> (N, Cout, *O).  O (the first
    windows only) is given when this is the input gradient of a transposed conv with output_padding.
    A list `keep` receives the framed input (reused by the weight gradient)."""
    N = x.shape[0]
    Co = w.shape[0]
    K = w.shape[2:]
    if O is None:
        O = out_size(x.shape[2:], K, s, p, d)
    dt = np.result_type(x.dtype, w.dtype)
    if N == 0 or Co == 0 or 0 in O:
        return np.zeros((N, Co) + tuple(O), dt)
    if _depthwise(w, g):            # one channel per group: K shifted multiply-adds, no GEMM
        xp = _pad(x, p)
        wf = w.reshape(Co, -1)
        y = np.zeros((N, Co) + tuple(O), dt)
        for kk, _, sl in _offsets(K, s, d, O):
            y += xp[sl] * _dw_bshape(wf[:, kk], len(K))
        return y
    return _conv_framed(x, w, s, p, d, g, dt, O, keep)


def conv_input_grad_arr(gy, w, S, s, p, d, g, gyf=None):
    """Adjoint of conv_arr in x (= transposed convolution): gy (N, Cout, *O) -> (N, C, *S)."""
    N, Co = gy.shape[:2]
    O = gy.shape[2:]
    K = w.shape[2:]
    nd = len(K)
    Cg = w.shape[1]
    C = Cg * g
    Sp = tuple(S[i] + 2 * p[i] for i in range(nd))
    dst = np.zeros((N, C) + Sp, np.result_type(gy.dtype, w.dtype))
    if gy.size and w.size and _depthwise(w, g):
        wf = w.reshape(Co, -1)
        for kk, _, sl in _offsets(K, s, d, O):
            dst[sl] += gy * _dw_bshape(wf[:, kk], nd)
    elif gy.size and w.size:
        return _conv_input_grad_framed(gy, w, S, s, p, d, g, dst.dtype, gyf)
    return dst[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + S[i]) for i in range(nd))]


def conv_weight_grad_arr(x, gy, wshape, s, p, d, g, gyf=None, xframe=None):
    """Adjoint of conv_arr in w: x (N, C, *S), gy (N, Cout, *O) -> wshape."""
    K = wshape[2:]
    O = gy.shape[2:]
    if x.size == 0 or gy.size == 0:
        return np.zeros(wshape, np.result_type(x.dtype, gy.dtype))
    if g > 1 and wshape[0] == g and wshape[1] == 1:
        nd = len(K)
        xp = _pad(x, p)
        gw = np.empty((g, int(np.prod(K))), np.result_type(x.dtype, gy.dtype))
        red = (0,) + tuple(range(2, 2 + nd))
        for kk, _, sl in _offsets(K, s, d, O):
            gw[:, kk] = (xp[sl] * gy).sum(axis=red)
        return gw.reshape(wshape)
    return _conv_weight_grad_framed(x, gy, wshape, s, p, d, g, np.result_type(x.dtype, gy.dtype), gyf, xframe)


# -- the differentiable primitive -------------------------------------------------------------------
def _weight_grad_t(x, gy, wshape, s, p, d, g):
    """Tensor-mode weight gradient, itself a convolution (stride and dilation swap roles)."""
    from . import views as V
    N, C = x.shape[:2]
    Co = gy.shape[1]
    nd = len(wshape) - 2
    S, O = tuple(x.shape[2:]), tuple(gy.shape[2:])
    Cg, Og = C // g, Co // g
    sp = tuple(range(3, 3 + nd))
    xt = V.reshape(V.permute(V.reshape(x, (N, g, Cg) + S), (2, 1, 0) + sp), (Cg, g * N) + S)
    gt = V.reshape(V.permute(V.reshape(gy, (N, g, Og) + O), (1, 2, 0) + sp), (g * Og, N) + O)
    r = _convolution(xt, gt, None, d, p, s, False, (0,) * nd, g)      # (Cg, Co, *K')
    r = V.transpose(r, 0, 1)
    K = tuple(wshape[2:])
    if tuple(r.shape[2:]) != K:
        r = r[(slice(None), slice(None)) + tuple(slice(0, k) for k in K)]
    return r


class ConvolutionBackward0(Node):
    __slots__ = ("stride", "padding", "dilation", "transposed", "output_padding", "groups", "bias_sym_sizes_opt",
                 "xframe")
    stack_rule = "conv"       # a stacked rule of its own (Node.stack_rule)
    _saved_names = ("input", "weight")

    def _release(self):
        Node._release(self)
        self.xframe = None

    def backward(self, F, gy):
        x, w = F.unpack(self)
        s, p, d, g = self.stride, self.padding, self.dilation, self.groups
        nd = len(s)
        want = [nf[0] is not None for nf in self.next_functions]
        gx = gw = gb = None
        if want[2]:
            gb = F.sum(gy, (0,) + tuple(range(2, 2 + nd)))
        if not F.is_tensor_mode:
            if self.transposed:
                if want[0]:
                    gx = conv_arr(gy, w, s, p, d, g, x.shape[2:])
                if want[1]:
                    gw = conv_weight_grad_arr(gy, x, w.shape, s, p, d, g)
            else:
                gyf = None      # both gradients read gy in the same grid layout: build it once
                if want[0] and want[1] and x.dtype == w.dtype == gy.dtype and x.size and w.size and gy.size \
                        and not _depthwise(w, g):
                    fr = _frame(x.shape[0], x.shape[2:], p, w.shape[2:], d, s)
                    gyf = _to_grid(gy, fr.Q, gy.dtype)
                if want[0]:
                    gx = conv_input_grad_arr(gy, w, x.shape[2:], s, p, d, g, gyf)
                if want[1]:     # the forward's framed input, if it framed this very array
                    xf = self.xframe[1] if self.xframe is not None and self.xframe[0] is x else None
                    gw = conv_weight_grad_arr(x, gy, w.shape, s, p, d, g, gyf, xf)
            return (gx, gw, gb)
        if self.transposed:
            if want[0]:
                gx = _convolution(gy, w, None, s, p, d, False, (0,) * nd, g)
                if tuple(gx.shape[2:]) != tuple(x.shape[2:]):
                    gx = gx[(slice(None), slice(None)) + tuple(slice(0, n) for n in x.shape[2:])]
            if want[1]:
                gw = _weight_grad_t(gy, x, tuple(w.shape), s, p, d, g)
        else:
            if want[0]:
                S, O, K = x.shape[2:], gy.shape[2:], w.shape[2:]
                op = tuple(S[i] - ((O[i] - 1) * s[i] - 2 * p[i] + d[i] * (K[i] - 1) + 1) for i in range(nd))
                gx = _convolution(gy, w, None, s, p, d, True, op, g)
            if want[1]:
                gw = _weight_grad_t(x, gy, tuple(w.shape), s, p, d, g)
        return (gx, gw, gb)


def _convolution(x, w, b, s, p, d, transposed, op, g):
    """No argument checks: the caller validated (s, p, d, op: tuples of ints, one per spatial dim)."""
    xd, wd = x._data, w._data
    if transposed:
        S = tuple((xd.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (wd.shape[2 + i] - 1) + op[i] + 1
                  for i in range(len(s)))
        y = conv_input_grad_arr(xd, wd, S, s, p, d, g)
    else:
        keep = [] if w._rg and grad.enabled else None
        y = conv_arr(xd, wd, s, p, d, g, keep=keep)
    if b is not None:       # y is a fresh array: add the bias in place
        bb = b._data.reshape((1, -1) + (1,) * len(s))
        if y.flags.writeable and y.base is None and y.dtype == np.result_type(y.dtype, bb.dtype):
            y += bb
        else:
            y = y + bb
    if not y.flags.c_contiguous:
        y = np.ascontiguousarray(y)
    if grad.enabled and (x._rg or w._rg or (b is not None and b._rg)):
        n = ConvolutionBackward0((edge(x), edge(w), edge(b) if b is not None else (None, 0)))
        n.stride, n.padding, n.dilation, n.transposed, n.output_padding, n.groups = s, p, d, transposed, op, g
        n.bias_sym_sizes_opt = None if b is None else list(b._data.shape)
        n.xframe = (xd, keep[0]) if not transposed and keep else None
        n._saved = (save_in(x), save_in(w))
        return make(y, True, n)
    return make(y)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch.convolution (the arguments are lists with one entry per spatial dim)."""
    nd = weight._data.ndim - 2

    def tup(v):
        v = tuple(v) if isinstance(v, (list, tuple)) else (v,)
        return v * nd if len(v) == 1 else v
    return _convolution(input, weight, bias, tup(stride), tup(padding), tup(dilation), bool(transposed),
                        tup(output_padding), int(groups))


# -- im2col / col2im (F.unfold / F.fold) -------------------------------------------------------------
class Im2ColBackward0(Node):
    __slots__ = ("self_sym_argsize_minus_2", "kernel_size", "dilation", "padding", "stride")

    def backward(self, F, g):
        return (_col2im_any(F, g, self.self_sym_argsize_minus_2, self.kernel_size, self.dilation,
                            self.padding, self.stride),)


class Col2ImBackward0(Node):
    __slots__ = ("kernel_size", "dilation", "padding", "stride")

    def backward(self, F, g):
        return (_im2col_any(F, g, self.kernel_size, self.dilation, self.padding, self.stride),)


def _unbatched(F, g, fn):
    """Run fn on g with a batch dim added (and removed again)."""
    if F.is_tensor_mode:
        from .views import unsqueeze, squeeze
        return squeeze(fn(unsqueeze(g, 0)), 0)
    return fn(g[None])[0]


def _im2col_any(F, g, K, d, p, s):
    if len(g.shape) == 3:
        return _unbatched(F, g, lambda t: _im2col_any(F, t, K, d, p, s))
    if F.is_tensor_mode:
        return im2col(g, K, d, p, s)
    return im2col_arr(g, K, d, p, s)


def _col2im_any(F, g, S, K, d, p, s):
    if len(g.shape) == 2:
        return _unbatched(F, g, lambda t: _col2im_any(F, t, S, K, d, p, s))
    if F.is_tensor_mode:
        return col2im(g, S, K, d, p, s)
    return col2im_arr(g, S, K, d, p, s)


def im2col_arr(x, K, d, p, s):
    """(N, C, *S) -> (N, C*prod(K), L)."""
    N, C = x.shape[:2]
    nd = len(K)
    O = out_size(x.shape[2:], K, s, p, d)
    w = windows(_pad(x, p), K, s, d, O)
    perm = (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd))
    return w.transpose(perm).reshape(N, C * int(np.prod(K)), int(np.prod(O)))


def col2im_arr(c, S, K, d, p, s):
    """(N, C*prod(K), L) -> (N, C, *S), overlapping windows summed."""
    N = c.shape[0]
    nd = len(K)
    kp = int(np.prod(K))
    C = c.shape[1] // kp
    O = out_size(S, K, s, p, d)
    dst = np.zeros((N, C) + tuple(S[i] + 2 * p[i] for i in range(nd)), c.dtype)
    col2im_add(dst, c.reshape((N, C) + tuple(K) + tuple(O)), K, s, d, O)
    return np.ascontiguousarray(dst[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + S[i]) for i in range(nd))])


def im2col(x, kernel_size, dilation, padding, stride):
    """Checked by the caller; all parameters are tuples of ints.  x is batched (N, C, *S)."""
    a = x._data
    y = im2col_arr(a, kernel_size, dilation, padding, stride) if a.ndim == 4 else \
        im2col_arr(a[None], kernel_size, dilation, padding, stride)[0]
    if x._rg and grad.enabled:
        n = Im2ColBackward0((edge(x),))
        n.self_sym_argsize_minus_2 = tuple(x._data.shape[-2:])
        n.kernel_size, n.dilation, n.padding, n.stride = kernel_size, dilation, padding, stride
        return make(y, True, n)
    return make(y)


def col2im(x, output_size, kernel_size, dilation, padding, stride):
    a = x._data
    y = col2im_arr(a, output_size, kernel_size, dilation, padding, stride) if a.ndim == 3 else \
        col2im_arr(a[None], output_size, kernel_size, dilation, padding, stride)[0]
    if x._rg and grad.enabled:
        n = Col2ImBackward0((edge(x),))
        n.kernel_size, n.dilation, n.padding, n.stride = kernel_size, dilation, padding, stride
        return make(y, True, n)
    return make(y)


class _AttachBackward(Node):
    """y = r, recorded as depending on x too (with zero gradient): PyTorch's pooling backward nodes save
    `self`, so their gradient requires grad under create_graph even where it is linear in grad."""
    __slots__ = ()

    def backward(self, F, g):
        return (g, None)


def attach_self(F, r, node):
    if not F.is_tensor_mode:
        return r
    x = F.unpack_one(node, node._saved[0])
    if not (x._rg and grad.enabled):
        return r
    n = _AttachBackward((edge(r), edge(x)))
    return make(r._data, True, n)
