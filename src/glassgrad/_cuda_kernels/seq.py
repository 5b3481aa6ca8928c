"""Fused CuPy kernels for the sequence models' hot paths (GPT, LSTM LM) on a GPU: GELU forward / backward (one
elementwise kernel each, where the array code of ops/gelu.py makes 8-30 launches), layer norm's backward (a block per
row for the input gradient, one column kernel for the weight and bias gradients: ~13 launches as array code), the
embedding backward (an index_add in index order, one thread per output element: ~6 + 3 per repeat rank as array
code) and the LSTM cell's pointwise work of a time step, forward and backward (one kernel a step, where the array
code of ops/rnn.py makes 9 forward and ~7 backward; the recurrent GEMM stays cuBLAS).

Each does the array code's arithmetic in its rounding steps (``--fmad=false``: no contraction the array code does
not have), so the elementwise results are the array code's; the transcendental functions are CUDA's (``expf``,
``tanhf``, ``erf``), as CuPy's ufuncs and ``cupyx.scipy.special`` are on a GPU.  Reductions are in a tree order:
close to the array code's, not equal.  tests/strict/test_cuda_kernels_seq.py compares them with the array code.
"""
import numpy as np

from . import _cp, _kernel, block_sum

__all__ = ["gelu32", "gelu_tanh32", "gelu64", "gelu_backward", "layer_norm_backward", "embedding_backward",
           "lstm_forward_step", "lstm_backward_step"]

_OPTS = ("--fmad=false",)


def _f(v):
    """A float32 literal for CUDA C: the shortest repr that reads back as float32 v."""
    return repr(np.float32(v).item()) + "f"


def _d(v):
    """A double literal for CUDA C that reads back as the double v."""
    return repr(float(v))


# -- GELU --------------------------------------------------------------------------------------------
def _gelu32_body(scale, poly, pdf, need_d):
    """ops/gelu._gelu32_block's steps for one float32 element: y, and d when need_d."""
    lines = ["float a = fabsf(x);", f"float t = a * {_f(scale)};", "t = t + 1.0f;", "t = 1.0f / t;",
             f"float q = t * {_f(poly[0])};"]
    for c in poly[1:-1]:
        lines += [f"q = q + {_f(c)};", "q = q * t;"]
    lines += [f"q = q + {_f(poly[-1])};", "q = q * t;",
              "float e = a * a;", "e = e * -0.5f;", "e = expf(e);", "q = q * e;",
              "a = (a < 1e30f || a != a) ? a : 1e30f;",     # np.minimum(a, 1e30): NaN stays
              "t = a * q;", "float h = (x >= 0.0f) ? 1.0f : 0.0f;"]
    if need_d:
        lines += ["a = h - q;", "a = fabsf(a);", "e = e * x;", f"e = e * {_f(pdf)};"]
    lines += ["float v = x * h;", "y = v - t;"] + (["d = a + e;"] if need_d else [])
    return "\n".join(lines)


def gelu32(x, need_d, scale, poly, pdf):
    """ops/gelu._gelu32_block over the whole float32 device array x in one launch: y and d = gelu'(x) (or None);
    scale / poly / pdf: that function's float32 constants (_Q_SCALE, _Q_POLY, _PDF_C)."""
    body = _gelu32_body(scale, poly, pdf, need_d)
    if need_d:
        k = _kernel("gelu32_yd", lambda cp: cp.ElementwiseKernel("float32 x", "float32 y, float32 d", body,
                                                                 "glassgrad_gelu32_yd", options=_OPTS))
        return k(x)
    k = _kernel("gelu32_y", lambda cp: cp.ElementwiseKernel("float32 x", "float32 y", body, "glassgrad_gelu32_y",
                                                            options=_OPTS))
    return k(x), None


def gelu_tanh32(x, kc, kappa):
    """ops/gelu._gelu_tanh32 (0.5 x (1 + tanh(kappa (x + c x^3))) in float32 steps) of float32 device array x, the
    result in x's layout; kc = kappa * c."""
    body = (f"float u = x * x;\nu = u * {_f(kc)};\nu = u + {_f(kappa)};\nu = u * x;\nu = tanhf(u);\n"
            "u = u + 1.0f;\nu = u * x;\ny = u * 0.5f;")
    k = _kernel("gelu_tanh32", lambda cp: cp.ElementwiseKernel("float32 x", "float32 y", body,
                                                               "glassgrad_gelu_tanh32", options=_OPTS))
    return k(x, _cp().empty_like(x))


def gelu64(x, approximate, kappa, c, sqrt1_2):
    """ops/gelu's float64 forward of float64 device array x, in x's layout: x Phi(x) with Phi through erf
    (approximate "none"), or the tanh form."""
    if approximate == "tanh":
        body = (f"double a = 0.5 * x;\ndouble b = {_d(c)} * x;\nb = b * x;\nb = b * x;\nb = x + b;\n"
                f"b = {_d(kappa)} * b;\nb = tanh(b);\nb = 1.0 + b;\ny = a * b;")
    else:
        body = f"double u = x * {_d(sqrt1_2)};\nu = erf(u);\nu = 1.0 + u;\nu = 0.5 * u;\ny = x * u;"
    k = _kernel("gelu64_" + approximate, lambda cp: cp.ElementwiseKernel(
        "float64 x", "float64 y", body, "glassgrad_gelu64_" + approximate, options=_OPTS))
    return k(x, _cp().empty_like(x))


def gelu_backward(g, x, approximate, kappa, c, sqrt1_2, pdf):
    """GeluBackward0's array-mode gradient g * gelu'(x) in one launch: the tanh form for float32 / float64, the
    exact form for float64 (float32's exact derivative comes from the forward's gelu32).  g, x: C-contiguous
    device arrays of one dtype and shape."""
    if approximate == "tanh":
        body = (f"T x2 = x * x;\nT p = x2 * x;\np = p * (T){_d(c)};\np = x + p;\np = p * (T){_d(kappa)};\n"
                "T t = tanh(p);\n"
                "T a = t + (T)1;\na = a * (T)0.5;\n"
                "T b = x * (T)0.5;\nT tt = t * t;\ntt = (T)1 - tt;\nb = b * tt;\n"
                f"T k = x2 * (T){_d(3 * c)};\nk = k + (T)1;\nk = k * (T){_d(kappa)};\nb = b * k;\n"
                "a = a + b;\ngx = g * a;")
        name = "gelu_bwd_tanh"
    else:
        body = (f"double u = x * {_d(sqrt1_2)};\nu = erf(u);\nu = 1.0 + u;\nu = 0.5 * u;\n"
                f"double p = x * x;\np = p * -0.5;\np = exp(p);\np = p * {_d(pdf)};\n"
                "p = x * p;\nu = u + p;\ngx = g * u;")
        name = "gelu_bwd_erf64"
    ins = "T g, T x" if approximate == "tanh" else "float64 g, float64 x"
    outs = "T gx" if approximate == "tanh" else "float64 gx"
    k = _kernel(name, lambda cp: cp.ElementwiseKernel(ins, outs, body, "glassgrad_" + name, options=_OPTS))
    return k(g, x)


# -- layer norm backward -------------------------------------------------------------------------------
_LN_BACKWARD = block_sum("T", "glassgrad_tree_sum") + r"""

/* dx of one row per block: dxh = g * w, xh = (x - mean) * invstd,
   dx = invstd * ((dxh - sum(dxh) * inv_n) - xh * (sum(dxh * xh) * inv_n)), in x's dtype as ops/norm._dx_core */
extern "C" __global__ void glassgrad_ln_dx(const T* x, const T* g, const T* w, const T* mean, const T* invstd,
                                           T* dx, long long rows, long long n, T inv_n, int has_w) {
    __shared__ T buf[256];
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* xr = x + r * n;
        const T* gr = g + r * n;
        T m = mean[r], iv = invstd[r];
        T s1 = 0, s2 = 0;
        for (long long i = threadIdx.x; i < n; i += blockDim.x) {
            T dxh = has_w ? gr[i] * w[i] : gr[i];
            T xh = xr[i] - m;
            xh = xh * iv;
            s1 += dxh;
            T p = dxh * xh;
            s2 += p;
        }
        T a1 = glassgrad_tree_sum(s1, buf) * inv_n;
        T a2 = glassgrad_tree_sum(s2, buf) * inv_n;
        for (long long i = threadIdx.x; i < n; i += blockDim.x) {
            T dxh = has_w ? gr[i] * w[i] : gr[i];
            T xh = xr[i] - m;
            xh = xh * iv;
            T v = dxh - a1;
            T u = xh * a2;
            v = v - u;
            dx[r * n + i] = iv * v;
        }
    }
}

/* weight and bias gradients: column j sums g * xh and g over the rows (in double, a tree over threadIdx.y);
   a (32, 8) block per 32 columns */
extern "C" __global__ void glassgrad_ln_dwb(const T* x, const T* g, const T* mean, const T* invstd, T* gw, T* gb,
                                            long long rows, long long n, int want_w, int want_b) {
    __shared__ double bw[8][32];
    __shared__ double bb[8][32];
    int tx = threadIdx.x, ty = threadIdx.y;
    long long j = (long long)blockIdx.x * 32 + tx;
    double sw = 0, sb = 0;
    if (j < n) {
        for (long long r = ty; r < rows; r += 8) {
            T gv = g[r * n + j];
            T xh = x[r * n + j] - mean[r];
            xh = xh * invstd[r];
            T p = gv * xh;
            sw += (double)p;
            sb += (double)gv;
        }
    }
    bw[ty][tx] = sw;
    bb[ty][tx] = sb;
    __syncthreads();
    for (int s = 4; s > 0; s >>= 1) {
        if (ty < s) {
            bw[ty][tx] += bw[ty + s][tx];
            bb[ty][tx] += bb[ty + s][tx];
        }
        __syncthreads();
    }
    if (ty == 0 && j < n) {
        if (want_w) gw[j] = (T)bw[0][tx];
        if (want_b) gb[j] = (T)bb[0][tx];
    }
}
"""


def _ln_kernel(dtype, name):
    t = "float" if dtype == np.float32 else "double"
    return _kernel(name + "_" + t, lambda cp: cp.RawKernel("typedef " + t + " T;\n" + _LN_BACKWARD, name,
                                                          options=_OPTS))


def layer_norm_backward(x, g, w, mean, invstd, n, want):
    """NativeLayerNormBackward0's array-mode gradients over the last axes (n elements a row) of the C-contiguous
    float32 / float64 device arrays x and g (w: the contiguous weight of their dtype, or None; mean / invstd: the
    forward's per-row statistics in x's dtype, contiguous).  want: (input, weight, bias); returns (gx, gw, gb),
    gw / gb flat (n,) arrays, None where not wanted."""
    cp = _cp()
    rows = x.size // n
    gx = gw = gb = None
    if want[0]:
        gx = cp.empty_like(x)
        k = _ln_kernel(x.dtype, "glassgrad_ln_dx")
        k((min(rows, 65535),), (256,), (x, g, x if w is None else w, mean, invstd, gx, np.int64(rows), np.int64(n),
                                        x.dtype.type(1.0 / n), np.int32(w is not None)))
    if want[1] or want[2]:
        gw = cp.empty(n, x.dtype) if want[1] else None
        gb = cp.empty(n, x.dtype) if want[2] else None
        dummy = gw if gw is not None else gb
        k = _ln_kernel(x.dtype, "glassgrad_ln_dwb")
        k(((n + 31) // 32,), (32, 8), (x, g, mean, invstd, dummy if gw is None else gw, dummy if gb is None else gb,
                                       np.int64(rows), np.int64(n), np.int32(bool(want[1])), np.int32(bool(want[2]))))
    return gx, gw, gb


# -- embedding forward ---------------------------------------------------------------------------------
_EMBEDDING_FORWARD = r"""
/* y[r, c] = w[idx[r], c]; an index outside [0, rows) sets bad[0] (and its row of y to 0) -- the bounds check and
   the gather in one launch, the check read back by the host once */
extern "C" __global__ void glassgrad_embedding_forward(const T* w, const long long* idx, T* y, int* bad,
                                                       long long n, long long rows, long long d) {
    long long total = n * d;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        long long k = idx[e / d];
        if (k < 0 || k >= rows) {
            bad[0] = 1;
            y[e] = 0;
        } else {
            y[e] = w[k * d + e % d];
        }
    }
}
"""


def embedding_forward(w, idx):
    """w[idx] for the C-contiguous float32 / float64 device array w (rows, d), d > 0, and the C-contiguous int64
    device array idx (non-empty): (y of shape idx.shape + (d,), bad), bad a one-element int32 device array that is
    1 where an index lies outside [0, rows)."""
    cp = _cp()
    t = "float" if w.dtype == np.float32 else "double"
    k = _kernel("embedding_forward_" + t, lambda cp: cp.RawKernel(
        "typedef " + t + " T;\n" + _EMBEDDING_FORWARD, "glassgrad_embedding_forward", options=_OPTS))
    rows, d = w.shape
    y = cp.empty(idx.shape + (d,), w.dtype)
    bad = cp.zeros(1, cp.int32)
    total = idx.size * d
    k((min((total + 255) // 256, 65535),), (256,), (w, idx, y, bad, np.int64(idx.size), np.int64(rows), np.int64(d)))
    return y, bad


# -- embedding backward --------------------------------------------------------------------------------
_EMBEDDING_BACKWARD = r"""
/* out[r, c] = sum of g[k, c] over the k with idx[k] == r, in increasing k (np.add.at's order), from 0;
   order: the stable argsort of idx, so the k of row r are order[lo:hi], found by binary search.  Rows equal to
   pad are skipped; scale: each term times (T)(1.0 / count of r), as scale_grad_by_freq */
extern "C" __global__ void glassgrad_embedding_backward(const long long* idx, const long long* order, const T* g,
                                                        T* out, long long n, long long rows, long long d,
                                                        long long pad, int scale) {
    long long total = rows * d;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        long long r = e / d, c = e % d;
        long long lo = 0, hi = n;
        while (lo < hi) {                               /* first j with idx[order[j]] >= r */
            long long mid = lo + (hi - lo) / 2;
            if (idx[order[mid]] < r) lo = mid + 1; else hi = mid;
        }
        long long end = lo, top = n;
        while (end < top) {                             /* first j with idx[order[j]] > r */
            long long mid = end + (top - end) / 2;
            if (idx[order[mid]] <= r) end = mid + 1; else top = mid;
        }
        T acc = 0;
        if (r != pad) {
            T s = scale ? (T)(1.0 / (double)(end - lo)) : (T)1;
            for (long long j = lo; j < end; ++j) {
                T v = g[order[j] * d + c];
                if (scale) v = v * s;
                acc += v;
            }
        }
        out[e] = acc;
    }
}
"""


def embedding_backward(idx, g, rows, pad, scale):
    """EmbeddingBackward0's weight gradient: zeros (rows, d) with the rows of the C-contiguous float32 / float64
    device array g (n, d) added at the int64 indices idx (n,), 0 <= idx < rows, in index order (the array code's
    order: the same sums); rows equal to pad skipped (the array code masks them to zero); scale: each row of g
    divided by how often its index occurs (scale_grad_by_freq, the array code's (T)(1.0 / count) factor)."""
    cp = _cp()
    t = "float" if g.dtype == np.float32 else "double"
    k = _kernel("embedding_backward_" + t, lambda cp: cp.RawKernel(
        "typedef " + t + " T;\n" + _EMBEDDING_BACKWARD, "glassgrad_embedding_backward", options=_OPTS))
    n, d = g.shape
    out = cp.empty((rows, d), g.dtype)
    total = rows * d
    if total:
        order = cp.argsort(idx, kind="stable")
        k((min((total + 255) // 256, 65535),), (256,), (idx, order, g, out, np.int64(n), np.int64(rows), np.int64(d),
                                                         np.int64(pad), np.int32(bool(scale))))
    return out


# -- LSTM: one time step's pointwise work ----------------------------------------------------------------------
# Forward (ops/rnn._forward, after the step's recurrent GEMM): gate k's activation tanh(pre) * scale_k + shift_k
# (sigmoid through tanh of the halved pre-activation), c = f c' + i g, h = o tanh(c).  Backward (ops/rnn._backward,
# before the step's GEMM): the factors (1 - i) i g, (1 - f) f c', (1 - g g) i, (1 - o) o tanh(c) and
# o (1 - tanh(c)^2) in the order the array code computes them -- exact IEEE operations only, so its results are the
# array code's bit for bit.  One thread per (batch, unit).
_LSTM = r"""
/* acts (4, nt, B, H): the input projections of every step (without the bias), replaced by step t's activated
   gates; pre (B, 4, H): h_prev @ W_hh^T (the scaled weights); bias (4H,): the scaled bias, or unused;
   hs / cs (nt + 1, B, H): states, slot src read, slot dst written; tcs (nt, B, H): tanh(c) */
extern "C" __global__ void glassgrad_lstm_fwd(const T* pre, T* acts, const T* bias, T* hs, T* cs, T* tcs,
                                              long long nt, long long B, long long H, long long t, long long src,
                                              long long dst, int has_bias) {
    long long BH = B * H;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < BH;
         e += (long long)gridDim.x * blockDim.x) {
        long long b = e / H, h = e % H;
        T* a = acts + t * BH + e;
        long long gs = nt * BH;
        T v[4];
        for (int k = 0; k < 4; ++k) {
            T x = a[k * gs];
            if (has_bias) x = x + bias[k * H + h];          /* acts += bias */
            T p = pre[b * 4 * H + k * H + h] + x;          /* pre += at */
            p = tanh(p);
            p = p * (k == 2 ? (T)1 : (T)0.5);              /* a *= scale; a += shift */
            p = p + (k == 2 ? (T)0 : (T)0.5);
            a[k * gs] = p;
            v[k] = p;
        }
        T c = v[1] * cs[src * BH + e];
        T tmp = v[0] * v[2];
        c = c + tmp;
        T tc = tanh(c);
        cs[dst * BH + e] = c;
        tcs[t * BH + e] = tc;
        hs[dst * BH + e] = v[3] * tc;
    }
}

/* step t's gate gradients dgates[t] (B, 4H) and the carried dh / dc (B, H) in place; cs slot cp: c_prev;
   gout (nt, B, H): the output gradient, or unused */
extern "C" __global__ void glassgrad_lstm_bwd(const T* acts, const T* cs, const T* tcs, const T* gout, T* dh,
                                              T* dc, T* dgates, long long nt, long long B, long long H,
                                              long long t, long long cp, int has_gout) {
    long long BH = B * H;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < BH;
         e += (long long)gridDim.x * blockDim.x) {
        long long b = e / H, h = e % H;
        long long gs = nt * BH;
        const T* a = acts + t * BH + e;
        T i = a[0], f = a[gs], g = a[2 * gs], o = a[3 * gs];
        T tc = tcs[t * BH + e];
        T c_prev = cs[cp * BH + e];
        T d_h = dh[e];
        if (has_gout) d_h = d_h + gout[t * BH + e];
        T q = tc * tc;                                  /* dc_dh = o (1 - tanh(c)^2) */
        q = (T)1 - q;
        q = q * o;
        T tmp = d_h * q;
        T d_c = dc[e] + tmp;
        T fi = (T)1 - i; fi = fi * i; fi = fi * g;
        T ff = (T)1 - f; ff = ff * f; ff = ff * c_prev;
        T fg = g * g; fg = (T)1 - fg; fg = fg * i;
        T fo = (T)1 - o; fo = fo * o; fo = fo * tc;
        T* dg = dgates + t * B * 4 * H + b * 4 * H + h;
        dg[0] = d_c * fi;
        dg[H] = d_c * ff;
        dg[2 * H] = d_c * fg;
        dg[3 * H] = d_h * fo;
        dh[e] = d_h;
        dc[e] = d_c * f;
    }
}
"""


def _lstm_kernel(dtype, name):
    t = "float" if dtype == np.float32 else "double"
    return _kernel(name + "_" + t, lambda cp: cp.RawKernel("typedef " + t + " T;\n" + _LSTM, name,
                                                          options=_OPTS))


def _grid(n):
    return (max(1, min((n + 255) // 256, 65535)),), (256,)


def lstm_forward_step(pre, acts, bias, hs, cs, tcs, t, src, dst):
    """ops/rnn._forward's pointwise work of step t after its recurrent GEMM (all C-contiguous device arrays of one
    float dtype, shapes as in the kernel's comment; bias None when the layer has none)."""
    _, nt, B, H = acts.shape
    grid, block = _grid(B * H)
    _lstm_kernel(acts.dtype, "glassgrad_lstm_fwd")(grid, block, (
        pre, acts, acts if bias is None else bias, hs, cs, tcs, np.int64(nt), np.int64(B), np.int64(H), np.int64(t),
        np.int64(src), np.int64(dst), np.int32(bias is not None)))


def lstm_backward_step(acts, cs, tcs, gout, dh, dc, dgates, t, prev):
    """ops/rnn._backward's pointwise work of step t before its recurrent GEMM: dgates[t] from dh (+ gout[t]) and
    dc (c_prev: cs[prev]); dh and dc updated in place (all C-contiguous device arrays of one float dtype; gout (nt, B, H) or None)."""
    _, nt, B, H = acts.shape
    grid, block = _grid(B * H)
    _lstm_kernel(acts.dtype, "glassgrad_lstm_bwd")(grid, block, (
        acts, cs, tcs, acts if gout is None else gout, dh, dc, dgates, np.int64(nt), np.int64(B), np.int64(H),
        np.int64(t), np.int64(prev), np.int32(gout is not None)))
