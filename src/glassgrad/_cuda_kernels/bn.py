"""Batch norm on a GPU in one launch each way (ops/norm's array code makes about 40 for a training forward and
25 for its backward): a block per channel of the C-contiguous (N, C, *spatial) input, viewed as (N, C, P).

- ``train_forward``: the corrected two-pass statistics of ops/norm._bn_train_stats (a quick mean m0 in x's dtype,
  then the sums of xc = x - m0 and xc * xc), the output y = xc * alpha + beta and the running-stat updates, in
  the array code's rounding steps; the channel sums are accumulated in double (in a per-thread then tree order)
  and rounded to x's dtype where the array code's sums are in it, so only the sums' rounding differs.
- ``eval_forward``: y = x * alpha + beta from the running statistics (elementwise: the same bits).
- ``backward``: the per-channel sums of g and g * xc, then the input / weight / bias gradients
  (ops/norm._bn_train_backward's steps in training; in eval the general path's dx = g * w * invstd).
"""
import numpy as np

from . import _cp, _kernel, available

__all__ = ["takes", "train_forward", "eval_forward", "backward"]

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def takes(x, arrays):
    """Whether these kernels take a batch norm of the device array x (N, C, ...): non-empty, C-contiguous, float32
    or float64, the other arrays (parameters, running statistics, gradient...; or None) contiguous and of its
    dtype -- and fused kernels available (a GPU)."""
    if x.__class__ is np.ndarray or not x.size or x.ndim < 2 or x.dtype not in _DTYPES or not x.flags.c_contiguous:
        return False
    for a in arrays:
        if a is not None and (a.dtype != x.dtype or not a.flags.c_contiguous):
            return False
    return available()

_THREADS = 512      # GG_BN_THREADS: a block per channel, so a large one

_COMMON = r"""
#define GG_BN_THREADS 512
#define GG_HAS_W 1
#define GG_HAS_B 2
#define GG_RM 4
#define GG_RV 8
#define GG_GX 16
#define GG_TRAIN 32

/* A thread's walk over channel c's elements j = threadIdx.x, + blockDim.x, ... (j < n = N * P) of the (N, C, P)
   view, at index i = (j / P * C + c) * P + j % P, advanced without a division per element (GG_BN_WALK first). */
#define GG_BN_WALK                                                                                          \
    long long n = N * P, dp_ = blockDim.x % P, step_ = (long long)(blockDim.x / P) * C * P + dp_, wrap_ = C * P - P;
#define GG_BN_FOR(i)                                                                                        \
    for (long long j_ = threadIdx.x, p_ = j_ % P, i = (j_ / P * C + c) * P + p_; j_ < n;                    \
         j_ += blockDim.x, p_ += dp_, i += step_ + (p_ >= P ? wrap_ : 0), p_ -= (p_ >= P ? P : 0))

/* the block's sums of a and b (every thread gets them): a shared-memory tree */
__device__ void gg_bn_sum2(double* a, double* b, double* bufa, double* bufb) {
    int t = threadIdx.x;
    bufa[t] = *a;
    bufb[t] = *b;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            bufa[t] += bufa[t + s];
            bufb[t] += bufb[t + s];
        }
        __syncthreads();
    }
    *a = bufa[0];
    *b = bufb[0];
    __syncthreads();
}
"""

_TRAIN = r"""
extern "C" __global__ void glassgrad_bn_train(const T* x, const T* w, const T* b, T* rm, T* rv, T* y, T* mean_out,
                                              T* invstd_out, long long N, long long C, long long P, double eps,
                                              double mom, double omm, int flags) {
    long long c = blockIdx.x;
    if (c >= C) return;
    __shared__ double bufa[GG_BN_THREADS];
    __shared__ double bufb[GG_BN_THREADS];
    GG_BN_WALK
    double s = 0, z = 0;
    GG_BN_FOR(i) s += (double)x[i];
    gg_bn_sum2(&s, &z, bufa, bufb);
    T m0 = (T)s * (T)(1.0 / (double)n);                 /* einsum's sum in x's dtype, times 1/n in it */
    double s1 = 0, s2 = 0;
    GG_BN_FOR(i) {
        T v = x[i] - m0;
        T v2 = v * v;
        s1 += (double)v;
        s2 += (double)v2;
    }
    gg_bn_sum2(&s1, &s2, bufa, bufb);
    double d = (double)(T)s1 * (1.0 / (double)n);
    double var = (double)(T)s2 * (1.0 / (double)n) - d * d;
    var = var < 0.0 ? 0.0 : var;                        /* np.maximum(var, 0): NaN stays */
    double mean = (double)m0 + d;
    T inv = (T)(1.0 / sqrt(var + eps));
    T alpha = (flags & GG_HAS_W) ? inv * w[c] : inv;
    T beta = (T)(-d * (double)alpha);
    if (flags & GG_HAS_B) beta = beta + b[c];
    GG_BN_FOR(i) {
        T v = x[i] - m0;
        v = v * alpha;
        y[i] = v + beta;
    }
    if (threadIdx.x == 0) {
        mean_out[c] = (T)mean;
        invstd_out[c] = inv;
        if (flags & GG_RM) rm[c] = (T)(mom * mean + omm * (double)rm[c]);
        if (flags & GG_RV) {
            double unb = n > 1 ? var * ((double)n / (double)(n - 1)) : __longlong_as_double(0x7ff8000000000000LL);
            rv[c] = (T)(mom * unb + omm * (double)rv[c]);
        }
    }
}
"""

_EVAL = r"""
extern "C" __global__ void glassgrad_bn_eval(const T* x, const T* w, const T* b, const T* rm, const T* rv, T* y,
                                             T* mean_out, T* invstd_out, long long N, long long C, long long P,
                                             double eps, int flags) {
    long long c = blockIdx.x;
    if (c >= C) return;
    GG_BN_WALK
    T mean = (T)(double)rm[c];
    T inv = (T)(1.0 / sqrt((double)rv[c] + eps));
    T alpha = (flags & GG_HAS_W) ? inv * w[c] : inv;
    T beta = -mean * alpha;
    if (flags & GG_HAS_B) beta = beta + b[c];
    GG_BN_FOR(i) {
        T v = x[i] * alpha;
        y[i] = v + beta;
    }
    if (threadIdx.x == 0) {
        mean_out[c] = mean;
        invstd_out[c] = inv;
    }
}
"""

_BACKWARD = r"""
extern "C" __global__ void glassgrad_bn_backward(const T* x, const T* g, const T* w, const T* mean, const T* invstd,
                                                 T* gx, T* gw, T* gb, long long N, long long C, long long P,
                                                 int flags) {
    long long c = blockIdx.x;
    if (c >= C) return;
    __shared__ double bufa[GG_BN_THREADS];
    __shared__ double bufb[GG_BN_THREADS];
    GG_BN_WALK
    T m = mean[c], it = invstd[c];
    int train = flags & GG_TRAIN;
    double sg = 0, sgx = 0;
    GG_BN_FOR(i) {
        T gv = g[i];
        T xc = x[i] - m;
        if (!train) xc = xc * it;                       /* eval: sum(g * ((x - mean) * invstd)) */
        T p = gv * xc;
        sg += (double)gv;
        sgx += (double)p;
    }
    gg_bn_sum2(&sg, &sgx, bufa, bufb);
    double inv = (double)it;
    double nd = (double)n;
    double sgx_t = (double)(T)sgx;                      /* einsum's sum in x's dtype */
    if (threadIdx.x == 0) {
        gw[c] = train ? (T)(sgx_t * inv) : (T)sgx;
        gb[c] = (T)sg;
    }
    if (!(flags & GG_GX)) return;
    if (train) {
        T k1 = (T)((-inv) * inv * sgx_t / nd);
        T k2 = (T)(-sg / nd);
        T a = (T)((flags & GG_HAS_W) ? inv * (double)w[c] : inv);
        GG_BN_FOR(i) {
            T v = x[i] - m;
            v = v * k1;
            v = v + k2;
            v = v + g[i];
            gx[i] = v * a;
        }
    } else {
        T wc = (flags & GG_HAS_W) ? w[c] : (T)0;
        GG_BN_FOR(i) {
            T v = g[i];
            if (flags & GG_HAS_W) v = v * wc;
            gx[i] = v * it;
        }
    }
}
"""

_SOURCES = {"train": ("glassgrad_bn_train", _TRAIN), "eval": ("glassgrad_bn_eval", _EVAL),
            "backward": ("glassgrad_bn_backward", _BACKWARD)}


def _get(which, dtype):
    t = "float" if dtype == np.float32 else "double"
    name, src = _SOURCES[which]
    return _kernel("bn_" + which + "_" + t, lambda cp: cp.RawKernel("typedef " + t + " T;\n" + _COMMON + src, name,
                                                                     options=("--fmad=false",)))


def _ncp(x):
    N, C = x.shape[0], x.shape[1]
    return N, C, x.size // (N * C)


def _flags(w, b, rm=None, rv=None):
    return (1 if w is not None else 0) | (2 if b is not None else 0) | (4 if rm is not None else 0) | \
        (8 if rv is not None else 0)


def train_forward(x, w, b, rm, rv, momentum, eps):
    """ops/norm's training forward of the non-empty C-contiguous float32 / float64 device array x (N, C, ...):
    (y, mean, invstd), mean and invstd (C,) in x's dtype; the running statistics rm / rv (contiguous, x's dtype,
    or None) updated in place with `momentum`. w, b: contiguous (C,) arrays of x's dtype, or None."""
    cp = _cp()
    N, C, P = _ncp(x)
    dummy = cp.empty(1, dtype=x.dtype)
    y, mean, invstd = cp.empty_like(x), cp.empty(C, dtype=x.dtype), cp.empty(C, dtype=x.dtype)
    m = float(momentum)
    args = [dummy if a is None else a for a in (w, b, rm, rv)]
    _get("train", x.dtype)((C,), (_THREADS,), (x, *args, y, mean, invstd, np.int64(N), np.int64(C), np.int64(P),
                                               np.float64(eps), np.float64(m), np.float64(1 - m),
                                               np.int32(_flags(w, b, rm, rv))))
    return y, mean, invstd


def eval_forward(x, w, b, rm, rv, eps):
    """The eval-mode forward from the running statistics rm / rv: (y, mean, invstd) as train_forward's."""
    cp = _cp()
    N, C, P = _ncp(x)
    dummy = cp.empty(1, dtype=x.dtype)
    y, mean, invstd = cp.empty_like(x), cp.empty(C, dtype=x.dtype), cp.empty(C, dtype=x.dtype)
    _get("eval", x.dtype)((C,), (_THREADS,), (x, dummy if w is None else w, dummy if b is None else b, rm, rv, y,
                                              mean, invstd, np.int64(N), np.int64(C), np.int64(P), np.float64(eps),
                                              np.int32(_flags(w, b))))
    return y, mean, invstd


def backward(x, g, w, mean, invstd, training, want):
    """The gradients (gx, gw, gb) of batch norm (None where `want` says so) for the C-contiguous device arrays x
    and g of one float dtype, the forward's per-channel mean / invstd (C contiguous values of it) and weight w
    (or None): in training, with the batch statistics' own gradient; in eval, with constant statistics."""
    cp = _cp()
    N, C, P = _ncp(x)
    gx = cp.empty_like(x) if want[0] else cp.empty(1, dtype=x.dtype)
    gw, gb = cp.empty(C, dtype=x.dtype), cp.empty(C, dtype=x.dtype)
    flags = _flags(w, None) | (16 if want[0] else 0) | (32 if training else 0)
    _get("backward", x.dtype)((C,), (_THREADS,), (x, g, cp.empty(1, dtype=x.dtype) if w is None else w, mean, invstd,
                                                  gx, gw, gb, np.int64(N), np.int64(C), np.int64(P),
                                                  np.int32(flags)))
    return gx if want[0] else None, gw if want[1] else None, gb if want[2] else None
