"""Fused CuPy kernels for the optimizer steps and the losses of a training step on a GPU (see the package's
docstring for how they are built, switched off and tested):

  * sgd_step: optim/sgd.py's update of one parameter (maximize, weight decay, momentum with dampening, nesterov)
    in one ElementwiseKernel, in the array code's rounding steps (its fused multiply-adds through double), so the
    parameter and the momentum buffer are bit-equal to the array code's;
  * adamw_step: AdamW's decoupled weight decay (p *= 1 - lr * wd) and the package's Adam update in one kernel;
  * nll_forward / nll_backward: ops/loss.py's _nll_core (the target checked and clipped, the class weights picked,
    the loss, its sum / weighted mean and the gradient's coefficients: ~25 launches as array code) in one kernel of
    one block, and NllLossBackward0's gradient (the one-hot mask times the incoming gradient) in one;
  * grad_norms_total / scale_by_clip: nn/utils/clip_grad's 2-norms (a kernel per gradient for the partial
    sums of squares, one for all the norms and the total) and the clip (a kernel per gradient);
  * softmax_backward_lastdim: SoftmaxBackward0 / LogSoftmaxBackward0 over the last axis (cross entropy's
    backward; 4 launches as array code), a block per row.

Elementwise work is done in the array code's rounding steps (bit-equal); the sums run in a per-thread then tree
order (the array code's is NumPy's / CuPy's / BLAS's), in the array code's accumulation dtype.
"""
import numpy as np

from . import _ADAM_BODY, _cp, _kernel, block_sum

__all__ = ["sgd_step", "adamw_step", "nll_forward", "nll_backward", "grad_norms_total", "scale_by_clip", "softmax_backward_lastdim"]

_FMAD = ("--fmad=false",)

# -- SGD ------------------------------------------------------------------------------------------------------
# optim/sgd.py's step: d = -g if maximize; d = fma(x, wd, d) (add_alpha(g, p, wd)); the momentum buffer
# b = d on the first step, else b = b * mom then fma(d, 1 - dampening, b); u = nesterov ? fma(b, mom, d) : b;
# x = fma(u, -lr, x).  optimizer.py's _fma on a device: float32 through double (the product exact, one rounding
# to double, one to float), float64 product and sum rounded each (CuPy has no long double).
_SGD_HEAD = """
T d = (flags & 1) ? (T)(-g) : g;
if (flags & 2) d = (T)((double)x * (double)wd + (double)d);
"""
_SGD_MOMENTUM = """
T b;
if (flags & 8) {
    b = d;
} else {
    b = buf * mom;
    b = (T)((double)d * (double)omd + (double)b);
}
buf = b;
T u = (flags & 4) ? (T)((double)b * (double)mom + (double)d) : b;
x = (T)((double)u * (double)nlr + (double)x);
"""
_SGD_PLAIN = """
x = (T)((double)d * (double)nlr + (double)x);
"""


def sgd_step(g, x, buf, wd, mom, omd, nlr, maximize, nesterov, first):
    """One SGD update of parameter `x` (and momentum buffer `buf`, or None without momentum) in place, from
    gradient `g` (float32 / float64 device arrays of x's shape and dtype; the scalars in x's dtype, wd None
    without weight decay).  On the first momentum step `buf` is a fresh array the kernel fills."""
    flags = np.int32((1 if maximize else 0) | (2 if wd is not None else 0) | (4 if nesterov else 0)
                     | (8 if first else 0))
    zero = x.dtype.type(0)
    wd = zero if wd is None else wd
    if buf is None:
        k = _kernel("sgd", lambda cp: cp.ElementwiseKernel(
            "T g, T wd, T nlr, int32 flags", "T x", _SGD_HEAD + _SGD_PLAIN, "glassgrad_sgd", options=_FMAD))
        k(g, wd, nlr, flags, x)
    else:
        k = _kernel("sgd_momentum", lambda cp: cp.ElementwiseKernel(
            "T g, T wd, T mom, T omd, T nlr, int32 flags", "T x, T buf", _SGD_HEAD + _SGD_MOMENTUM,
            "glassgrad_sgd_momentum", options=_FMAD))
        k(g, wd, mom, omd, nlr, flags, x, buf)


# optim/_common.py's decay_param (x * (1 - lr * wd), rounded in x's dtype), then the package's Adam update
_ADAMW_BODY = "x = x * decay;\n" + _ADAM_BODY


def adamw_step(g, w, b2, omb2, bc2, eps, value, decay, x, m, v):
    """adam_step (the package's) after the decoupled weight decay x *= decay, in one kernel."""
    k = _kernel("adamw", lambda cp: cp.ElementwiseKernel(
        "T g, T w, T b2, T omb2, T bc2, T eps, T value, T decay", "T x, T m, T v", _ADAMW_BODY, "glassgrad_adamw",
        options=_FMAD))
    k(g, w, b2, omb2, bc2, eps, value, decay, x, m, v)


# -- negative log-likelihood ---------------------------------------------------------------------------------
# ops/loss.py's _nll_core for input x (N, C, S) (C-contiguous; a 1-d input is N = S = 1) and target t (N, S): one
# block; row r = n * S + s.  ts = ignored ? 0 : t; wt = ignored ? 0 : (weight ? w[ts] : 1); L = -(x[n, ts, s] * wt),
# 0 where ignored.  reduction 0 ('none'): out = L, coef = -wt; 1 ('sum'): out[0] = sum L, coef = -wt; 2 ('mean'):
# tw = sum wt, out[0] = sum L / tw, coef = tw != 0 ? -wt / tw : 0 -- the sums in x's dtype, per thread then in a
# tree.  bad[0]: the first row whose target is out of [0, C) and not ignore_index (rows if none): the caller raises.
_NLL = r"""
#define NLL_THREADS 256
extern "C" __global__ void glassgrad_nll(const T* x, const long long* t, const T* w, T* out, T* coef,
                                         long long* ts, long long* bad, long long rows, long long C, long long S,
                                         long long ignore, int has_w, int reduction) {
    __shared__ T sl[NLL_THREADS];
    __shared__ T sw[NLL_THREADS];
    __shared__ long long sb[NLL_THREADS];
    int tid = threadIdx.x;
    T accl = 0, accw = 0;
    long long first_bad = rows;
    for (long long r = tid; r < rows; r += NLL_THREADS) {
        long long tr = t[r];
        int ign = tr == ignore;
        if (!ign && (tr < 0 || tr >= C)) {
            if (r < first_bad) first_bad = r;
            continue;
        }
        long long k = ign ? 0 : tr;
        T wt = ign ? (T)0 : (has_w ? w[k] : (T)1);
        T L = 0;
        if (!ign) {
            T picked = x[((r / S) * C + k) * S + r % S];
            L = -(picked * wt);
        }
        ts[r] = k;
        accl += L;
        accw += wt;
        if (reduction == 0) {
            out[r] = L;
            coef[r] = -wt;
        } else if (reduction == 1) {
            coef[r] = -wt;
        } else {
            coef[r] = wt;                          /* -wt / tw once tw is known */
        }
    }
    sl[tid] = accl;
    sw[tid] = accw;
    sb[tid] = first_bad;
    __syncthreads();
    for (int s = NLL_THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sl[tid] += sl[tid + s];
            sw[tid] += sw[tid + s];
            if (sb[tid + s] < sb[tid]) sb[tid] = sb[tid + s];
        }
        __syncthreads();
    }
    T tw = sw[0];
    if (tid == 0) {
        bad[0] = sb[0];
        if (reduction == 1) out[0] = sl[0];
        if (reduction == 2) out[0] = sl[0] / tw;
    }
    if (reduction == 2) {
        for (long long r = tid; r < rows; r += NLL_THREADS) {
            T wt = coef[r];
            coef[r] = (tw != (T)0) ? (T)(-wt) / tw : (T)0;
        }
    }
}
"""

NLL_MAX_ROWS = 1 << 16          # one block walks the rows: more go to the array code (a grid of kernels)


def nll_forward(x, t, w, C, S, ignore_index, reduction):
    """_nll_core's forward on the C-contiguous float32 / float64 device array `x` (N, C, S rows laid out as
    (N, C, *spatial)), int64 target `t` (C-contiguous, its shape the loss's), class weights `w` (contiguous, x's
    dtype, or None).  Returns (y, coef, ts, bad): the loss (t's shape for 'none', else 0-d), the gradient's
    coefficients and the clipped targets (t's shape), and a 0-d int64 array holding the first out-of-range
    row (t.size if none)."""
    cp = _cp()
    tn = "float" if x.dtype == np.float32 else "double"
    k = _kernel("nll_" + tn, lambda cp: cp.RawKernel("typedef " + tn + " T;\n" + _NLL, "glassgrad_nll",
                                                      options=_FMAD))
    mode = {"none": 0, "sum": 1, "mean": 2}[reduction]
    rows = t.size
    out = cp.empty(t.shape if mode == 0 else (), dtype=x.dtype)
    coef = cp.empty(t.shape, dtype=x.dtype)
    ts = cp.empty(t.shape, dtype=np.int64)
    bad = cp.empty((), dtype=np.int64)
    k((1,), (256,), (x, t, x if w is None else w, out, coef, ts, bad, np.int64(rows), np.int64(C), np.int64(S),
                     np.int64(ignore_index), np.int32(w is not None), np.int32(mode)))
    return out, coef, ts, bad


# NllLossBackward0: dx[n, c, s] = (c == ts[r] ? coef[r] : 0) * g[unsq ? r : 0] -- the array code's mask times g.
_NLL_GRAD = """
long long s = i % nsp;
long long nc = i / nsp;
long long r = (nc / ncls) * nsp + s;
T m = (nc % ncls == ts[r]) ? coef[r] : (T)0;
dx = m * g[unsq ? r : 0];
"""


def nll_backward(ts, coef, g, shape, C, S, unsq):
    """NllLossBackward0's gradient of an input of `shape` (N, C, S as in nll_forward): float32 / float64 `coef`
    and `g` of one dtype, `g` the incoming gradient (t's shape when `unsq`, else one element)."""
    cp = _cp()
    k = _kernel("nll_grad", lambda cp: cp.ElementwiseKernel(
        "raw int64 ts, raw T coef, raw T g, int64 ncls, int64 nsp, int32 unsq", "T dx", _NLL_GRAD, "glassgrad_nll_grad",
        options=_FMAD))
    dx = cp.empty(shape, dtype=coef.dtype)
    if dx.size:
        k(ts, coef, g, np.int64(C), np.int64(S), np.int32(1 if unsq else 0), dx)
    return dx


# -- gradient-norm clipping ----------------------------------------------------------------------------------
# clip_grad's 2-norms: a grid of blocks per gradient sums squares (in its dtype: per thread, then a tree) into its
# row of `part` (P slots per gradient, the unused ones zeroed); then one block takes each row's sum, its sqrt (the
# gradient's norm, in its dtype), and the 2-norm of those norms -- the array code's sqrt(dot(a, a)) per gradient and
# sqrt(dot(norms, norms)) of the stacked norms.
_SQ_PARTIALS = block_sum("T", "glassgrad_tree_sum") + r"""
#define SQ_THREADS 256
extern "C" __global__ void glassgrad_sq_partials(const T* a, T* part, long long n, long long off, int nblocks,
                                                 int slots) {
    __shared__ T buf[SQ_THREADS];
    int tid = threadIdx.x;
    T acc = 0;
    for (long long i = (long long)blockIdx.x * SQ_THREADS + tid; i < n; i += (long long)nblocks * SQ_THREADS) {
        T v = a[i];
        acc += v * v;
    }
    T tot = glassgrad_tree_sum(acc, buf);          /* (launched with SQ_THREADS threads) */
    if (tid == 0) part[off + blockIdx.x] = tot;
    if (blockIdx.x == 0 && nblocks + tid < slots) part[off + nblocks + tid] = 0;
}
"""

_GRAD_NORMS = block_sum("T", "glassgrad_tree_sum") + r"""
#define GN_THREADS 256
extern "C" __global__ void glassgrad_grad_norms(const T* part, T* total, long long count, int slots) {
    __shared__ T buf[GN_THREADS];
    int tid = threadIdx.x;
    T acc = 0;
    for (long long k = tid; k < count; k += GN_THREADS) {
        T s = 0;
        for (int j = 0; j < slots; ++j) s += part[k * slots + j];
        T norm = sqrt(s);
        acc += norm * norm;
    }
    T tot = glassgrad_tree_sum(acc, buf);          /* (launched with GN_THREADS threads) */
    if (tid == 0) total[0] = sqrt(tot);
}
"""

_SQ_BLOCK_WORK = 2048           # elements per block before a gradient's sum of squares takes another block
_SQ_MAX_BLOCKS = 64             # (at most; P = the most any gradient takes: unused slots are zeroed)


def grad_norms_total(arrays):
    """The 2-norm of the 2-norms of the C-contiguous device arrays `arrays` (one float32 / float64 dtype): a 0-d
    array of that dtype."""
    cp = _cp()
    dt = arrays[0].dtype
    tn = "float" if dt == np.float32 else "double"
    kp = _kernel("sq_partials_" + tn, lambda cp: cp.RawKernel("typedef " + tn + " T;\n" + _SQ_PARTIALS,
                                                               "glassgrad_sq_partials", options=_FMAD))
    kn = _kernel("grad_norms_" + tn, lambda cp: cp.RawKernel("typedef " + tn + " T;\n" + _GRAD_NORMS,
                                                              "glassgrad_grad_norms", options=_FMAD))
    blocks = [max(1, min(_SQ_MAX_BLOCKS, -(-a.size // _SQ_BLOCK_WORK))) for a in arrays]
    slots = max(blocks)
    part = cp.empty(len(arrays) * slots, dtype=dt)
    for i, (a, nb) in enumerate(zip(arrays, blocks)):
        kp((nb,), (256,), (a, part, np.int64(a.size), np.int64(i * slots), np.int32(nb), np.int32(slots)))
    total = cp.empty((), dtype=dt)
    kn((1,), (256,), (part, total, np.int64(len(arrays)), np.int32(slots)))
    return total


# clip_grads_with_norm_: g *= (T)min(max_norm / (total + 1e-6), 1) -- the coefficient in the total's dtype, NaN
# propagating as NumPy's minimum, then cast to the gradient's
_CLIP = """
TN q = mx / (tn[0] + eps);
TN c = (q != q || q < (TN)1) ? q : (TN)1;
g = g * (T)c;
"""


def scale_by_clip(g, tn, max_norm, eps):
    """clip_grads_with_norm_'s in-place scaling of the float32 / float64 device array `g` by the 0-d total norm
    `tn` (float32 / float64; `max_norm` and `eps` NumPy scalars of its dtype)."""
    k = _kernel("clip", lambda cp: cp.ElementwiseKernel("raw TN tn, TN mx, TN eps", "T g", _CLIP, "glassgrad_clip",
                                                         options=_FMAD))
    k(tn.reshape(1), max_norm, eps, g)


# -- (log-)softmax's backward over the last axis ------------------------------------------------------------
# A block per row (rows strided by the grid): LogSoftmaxBackward0 dx = g - exp(y) * sum(g); SoftmaxBackward0
# dx = y * (g - sum(g * y)) -- the array code's steps, the sums in y's dtype, per thread then in a tree.
_SOFTMAX_BWD = r"""
#define SB_THREADS 256
extern "C" __global__ void glassgrad_softmax_bwd(const T* y, const T* g, T* dx, long long rows, long long n,
                                                 int logmode) {
    __shared__ T buf[SB_THREADS];
    int tid = threadIdx.x;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* yr = y + r * n;
        const T* gr = g + r * n;
        T* dr = dx + r * n;
        T acc = 0;
        for (long long j = tid; j < n; j += SB_THREADS) acc += logmode ? gr[j] : (T)(gr[j] * yr[j]);
        buf[tid] = acc;
        __syncthreads();
        for (int s = SB_THREADS / 2; s > 0; s >>= 1) {
            if (tid < s) buf[tid] += buf[tid + s];
            __syncthreads();
        }
        T sum = buf[0];
        __syncthreads();                            /* buf is reused by the next row */
        for (long long j = tid; j < n; j += SB_THREADS) {
            if (logmode) {
                T e = exp(yr[j]);
                e = e * sum;
                dr[j] = gr[j] - e;
            } else {
                T d = gr[j] - sum;
                dr[j] = yr[j] * d;
            }
        }
    }
}
"""


SOFTMAX_BWD_GRID = 65535       # blocks at most (each walks rows blockIdx.x, + gridDim.x, ...)


def softmax_backward_lastdim(y, g, log):
    """The gradient of (log-)softmax over the last axis from its result `y` and the incoming gradient `g`
    (C-contiguous float32 / float64 device arrays of one shape and dtype)."""
    cp = _cp()
    tn = "float" if y.dtype == np.float32 else "double"
    k = _kernel("softmax_bwd_" + tn, lambda cp: cp.RawKernel("typedef " + tn + " T;\n" + _SOFTMAX_BWD,
                                                              "glassgrad_softmax_bwd", options=_FMAD))
    n = y.shape[-1] if y.ndim else 1
    rows = y.size // n if n else 0
    dx = cp.empty_like(y)
    if rows:
        k((min(rows, SOFTMAX_BWD_GRID),), (256,), (y, g, dx, np.int64(rows), np.int64(n), np.int32(1 if log else 0)))
    return dx
