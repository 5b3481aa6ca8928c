"""Convolution as GEMMs over the "framed" layout (the array kernels behind ops/conv.py's conv_arr,
conv_input_grad_arr and conv_weight_grad_arr; no Tensors, no nodes).

kernels: _conv_framed (forward), _conv_input_grad_framed (its adjoint in x: the transposed conv),
         _conv_weight_grad_framed (its adjoint in w); the layout itself: _Frame / _frame (cached per
         geometry), _to_grid / _from_grid, _tap_weights;
BLAS helpers: _bmm (grouped GEMM through glassgrad._blas.matmul), _gemm_fn / _gemm_acc (C = A @ B + beta C).
On a GPU (float32 / float64) the framed input, its columns, the gridded output gradient and the col2im
slice-adds are one launch each (_cuda_kernels.conv), with the same values; the GEMMs stay.
"""
import functools

import numpy as np

from ..backend import contiguous
from .. import _blas, _cuda_kernels
from .._cuda_kernels import conv as _k_conv


def _bmm(a, b):
    """Batched (g, m, k) @ (g, k, n) as one 2-D BLAS call per group (np.matmul on stacked, transposed
    operands can miss BLAS), through glassgrad._blas.matmul (MKL's GEMM when installed)."""
    mm = _blas.matmul
    if a.shape[0] == 1:
        return mm(a[0], b[0])[None]
    out = np.empty((a.shape[0], a.shape[1], b.shape[2]), np.result_type(a.dtype, b.dtype), like=a)
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


def _fused(a, dt):
    """Whether the one-launch kernels of _cuda_kernels.conv run for the device array `a` of dtype dt (a GPU)."""
    return a.__class__ is not np.ndarray and a.dtype == dt and dt in _FUSED_DT and _cuda_kernels.available()


_FUSED_DT = (np.float32, np.float64)


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
        buf = np.zeros((self.phases, a.shape[1], self.L + self.slack), dt, like=a)
        grid = self._grid(buf)
        for ph, (src, dst) in enumerate(self._slices()):
            if ph in self.used:
                grid[ph][dst] = a[src].swapaxes(0, 1)
        return buf

    def take(self, buf):
        """Inverse of put: (phases, C, >= L) -> (N, C, *S) (every input position is in one phase)."""
        out = np.empty((self.N, buf.shape[1]) + self.S, buf.dtype, like=buf)
        grid = self._grid(buf)
        for ph, (src, dst) in enumerate(self._slices()):
            out[src] = grid[ph][dst].swapaxes(0, 1)
        return out

    def cols(self, buf, a, n, g):
        """Columns (g, Cg*prod(K), n) of grid positions a .. a+n-1 (one contiguous copy per kernel offset)."""
        C = buf.shape[1]
        c = np.empty((C, len(self.taps), n), buf.dtype, like=buf)
        for kk, (ph, off) in enumerate(self.taps):
            c[:, kk] = buf[ph, :, a + off:a + off + n]
        return c.reshape(g, C // g * len(self.taps), n)


def _frame(N, S, p, K, d, s):
    """The (immutable) _Frame of a geometry, built once: its constructor is pure-Python bookkeeping."""
    return _frame_cached(int(N), tuple(S), tuple(p), tuple(K), tuple(d), tuple(s))


_frame_cached = functools.lru_cache(maxsize=256)(_Frame)


def _to_grid(a, Q, dt):
    """a (N, C, *O) -> (C, N*prod(Q)): zeros with a at the start of each grid (outputs and their gradients)."""
    if _fused(a, dt):
        return _k_conv.to_grid(contiguous(a), Q)
    N, C = a.shape[:2]
    buf = np.zeros((C, N * int(np.prod(Q))), dt, like=a)
    buf.reshape((C, N) + tuple(Q))[(slice(None), slice(None)) + tuple(slice(0, n) for n in a.shape[2:])] = \
        a.swapaxes(0, 1)
    return buf


def _from_grid(y, N, Q, O):
    """(C, N*prod(Q)) -> (N, C, *O) contiguous (the valid outputs)."""
    f = y.reshape((y.shape[0], N) + tuple(Q))[(slice(None), slice(None)) + tuple(slice(0, n) for n in O)]
    return contiguous(f.swapaxes(0, 1))


def _tap_weights(w):
    """(Co, Cg, *K) -> (prod(K), Co, Cg) contiguous: one (Co, Cg) matrix per kernel offset."""
    return contiguous(np.moveaxis(w.reshape(w.shape[0], w.shape[1], -1), 2, 0))


def _acc_gemm(Cg, Og, dt, w):
    """The accumulating cblas GEMM (host pointers: NumPy arrays only; device arrays take the _bmm path)."""
    return _gemm_fn(dt) if min(Cg, Og) >= _ACC_MIN_K and w.dtype == dt and w.__class__ is np.ndarray else None


def _conv_framed(x, w, s, p, d, g, dt, O, keep):
    N = x.shape[0]
    Co, Cg, K = w.shape[0], w.shape[1], w.shape[2:]
    Og = Co // g
    fr = _frame(N, x.shape[2:], p, K, d, s)
    if _fused(x, dt):       # the columns in one launch (the framed input is not kept: the weight gradient does so too)
        cols = _k_conv.conv_cols(contiguous(x), fr.Q, K, s, p, d).reshape(g, -1, fr.L)
        return _from_grid(_bmm(w.reshape(g, Og, -1), cols).reshape(Co, fr.L), N, fr.Q, O)
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
    f = _acc_gemm(Cg, Og, dt, w)
    if f is None:
        cols = _bmm(w.reshape(g, Og, -1).transpose(0, 2, 1), gyf.reshape(g, Og, L)).reshape(g * Cg, -1, L)
        if _fused(cols, dt):        # col2im in one launch: each input element sums its columns
            return _k_conv.conv_col2im(cols, N, S, fr.Q, gy.shape[2:], K, s, p, d)
    dst = np.zeros((fr.phases, g * Cg, L + fr.slack), dt, like=gy)
    if f is not None:       # dx (phase, shifted by k) += W[:, :, k]^T @ gy: no column buffer, no slice-adds
        wk = _tap_weights(w)
        for kk, (ph, off) in enumerate(fr.taps):
            for j in range(g):
                _gemm_acc(f, wk[kk, j * Og:(j + 1) * Og], gyf[j * Og:(j + 1) * Og],
                          dst[ph, j * Cg:(j + 1) * Cg, off:off + L], ta=True)
    else:
        for kk, (ph, off) in enumerate(fr.taps):
            dst[ph, :, off:off + L] += cols[:, kk]
    return fr.take(dst)


def _conv_weight_grad_framed(x, gy, wshape, s, p, d, g, dt, gyf=None, buf=None):
    K = wshape[2:]
    Co = gy.shape[1]
    fr = _frame(x.shape[0], x.shape[2:], p, K, d, s)
    if _fused(x, dt) and gy.dtype == dt:     # all the columns in one launch, one GEMM per group
        if gyf is None:
            gyf = _to_grid(gy, fr.Q, dt)
        cols = _k_conv.conv_cols(contiguous(x), fr.Q, K, s, p, d).reshape(g, -1, fr.L)
        return _bmm(gyf.reshape(g, Co // g, fr.L), cols.transpose(0, 2, 1)).reshape(wshape)
    if buf is None or buf.dtype != dt or buf.shape[0] != fr.phases:
        buf = fr.put(x, dt)
    if gyf is None:
        gyf = _to_grid(gy, fr.Q, dt)
    L = fr.L
    Cg, Og = buf.shape[1] // g, Co // g
    f = _gemm_fn(dt) if min(Cg, Og) >= _ACC_MIN_K and gyf.dtype == dt and gyf.__class__ is np.ndarray else None
    if f is not None:       # dW[:, :, k] = gy @ (input phase shifted by k)^T: no im2col copy
        out = np.empty((len(fr.taps), Co, Cg), dt, like=gyf)
        for kk, (ph, off) in enumerate(fr.taps):
            for j in range(g):
                _gemm_acc(f, gyf[j * Og:(j + 1) * Og], buf[ph, j * Cg:(j + 1) * Cg, off:off + L],
                          out[kk, j * Og:(j + 1) * Og], beta=0.0, tb=True)
        return contiguous(np.moveaxis(out, 0, 2)).reshape(wshape)
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
