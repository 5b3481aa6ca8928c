"""CuPy kernels for the steps whose array code launches many small kernels on a GPU: the Philox words of every
random draw (about 80 elementwise launches as array code, one here), Adam / AdamW's update (a dozen, one here) and
(log-)softmax over the last dimension (five launches and two temporaries, one here: a block per row) and layer
norm's forward (about ten launches, one here: a block per row).

They are compiled on first use, on a real GPU only (never for the strict stand-in device or the CPU in normal
use), and do the same arithmetic, rounding step by rounding step, as the array code the other devices run
(``--fmad=false``: no contraction nvcc would add; the float32 fused multiply-adds the CPU path emulates through
float64 are written through double here too), so a GPU run gives the same numbers either way.
tests/strict/test_cuda_kernels.py compares each with its array code: on a GPU through CuPy, and on the strict
stand-in device through tests/strict/cuda_emu.py, which compiles the same CUDA C for the CPU (``_kit`` below is
where it plugs in).  ``GLASSGRAD_FUSED=0`` turns them off.
"""
import os

import numpy as np

from .. import backend

__all__ = ["available", "philox_words", "adam_step", "softmax_lastdim", "layer_norm"]

_cache = {}

# What builds and launches the kernels: CuPy on a real GPU; the tests put a CPU emulation of CuPy's kernel API
# here (tests/strict/cuda_emu.py) to run the same CUDA C on the strict stand-in device.
_kit = None


def _cp():
    return _kit if _kit is not None else backend._cupy


def available():
    if os.environ.get("GLASSGRAD_FUSED", "1") == "0":
        return False
    return _kit is not None or (backend._cupy is not None and not backend.STRICT)


def _kernel(name, build):
    cp = _cp()
    k = _cache.get((id(cp), name))
    if k is None:
        k = _cache[(id(cp), name)] = build(cp)
    return k


_PHILOX = r"""
extern "C" __global__ void glassgrad_philox(unsigned long long seed, unsigned long long ctr0,
                                            unsigned long long total, unsigned long long threads,
                                            unsigned int* out) {
    unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    unsigned long long ctr = ctr0 + t / threads;
    unsigned long long sub = t % threads;
    unsigned int c0 = (unsigned int)ctr, c1 = (unsigned int)(ctr >> 32);
    unsigned int c2 = (unsigned int)sub, c3 = (unsigned int)(sub >> 32);
    unsigned int k0 = (unsigned int)seed, k1 = (unsigned int)(seed >> 32);
    for (int r = 0; r < 10; ++r) {
        unsigned long long p0 = 0xD2511F53ull * c0, p1 = 0xCD9E8D57ull * c2;
        unsigned int n0 = (unsigned int)(p1 >> 32) ^ c1 ^ k0;
        unsigned int n2 = (unsigned int)(p0 >> 32) ^ c3 ^ k1;
        c1 = (unsigned int)p1;
        c3 = (unsigned int)p0;
        c0 = n0;
        c2 = n2;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[t] = c0;
    out[total + t] = c1;
    out[2 * total + t] = c2;
    out[3 * total + t] = c3;
}
"""


def philox_words(seed, ctr0, threads, calls):
    """_rng/philox._calls on the GPU: the four words of Philox4x32-10 at counter (ctr0 + j, thread i) under `seed`,
    four (calls, threads) uint64 arrays."""
    cp = _cp()
    k = _kernel("philox", lambda cp: cp.RawKernel(_PHILOX, "glassgrad_philox", options=("--fmad=false",)))
    total = threads * calls
    out = cp.empty((4, calls, threads), dtype=cp.uint32)
    if total:
        k(((total + 255) // 256,), (256,), (np.uint64(seed), np.uint64(ctr0), np.uint64(total), np.uint64(threads),
                                            out))
    return [out[i].astype(np.uint64) for i in range(4)]


# optim/adam.py's step for one parameter, in its rounding steps: m = lerp(m, g, w) (ATen's two-sided lerp),
# v = v * beta2 then addcmul(v, g, g, 1 - beta2), x += value * m / (sqrt(v) / bc2 + eps)
_ADAM_BODY = """
T d = g - m;
m = (w < (T)0.5) ? (T)((double)w * (double)d + (double)m) : (T)((double)(-d) * (double)((T)1 - w) + (double)g);
v = v * b2;
v = (T)((double)(omb2 * g) * (double)g + (double)v);
T den = sqrt(v);
den = den / bc2;
den = den + eps;
T t = m * value;
t = t / den;
x = x + t;
"""


def adam_step(g, w, b2, omb2, bc2, eps, value, x, m, v):
    """One Adam / AdamW update of parameter `x` and moments `m`, `v` in place (float32 / float64 device arrays;
    the scalars in their dtype)."""
    k = _kernel("adam", lambda cp: cp.ElementwiseKernel(
        "T g, T w, T b2, T omb2, T bc2, T eps, T value", "T x, T m, T v", _ADAM_BODY, "glassgrad_adam",
        options=("--fmad=false",)))
    k(g, w, b2, omb2, bc2, eps, value, x, m, v)


_SOFTMAX = r"""
extern "C" __global__ void glassgrad_softmax(const T* x, T* y, long long rows, long long n, int logmode) {
    long long r = blockIdx.x;
    if (r >= rows) return;
    const T* xr = x + r * n;
    T* yr = y + r * n;
    __shared__ T buf[256];
    int t = threadIdx.x;
    T m = (T)(-__int_as_float(0x7f800000));      /* -inf (NVRTC defines no INFINITY) */
    for (long long i = t; i < n; i += blockDim.x) {
        T v = xr[i];
        m = (v > m || v != v) ? v : m;              /* max, NaN winning as NumPy's maximum */
    }
    buf[t] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            T o = buf[t + s];
            if (o > buf[t] || o != o) buf[t] = o;
        }
        __syncthreads();
    }
    m = buf[0];
    __syncthreads();
    if (!isfinite(m)) m = 0;                        /* shifted by the finite max, as the array code */
    T sum = 0;
    for (long long i = t; i < n; i += blockDim.x) sum += exp(xr[i] - m);
    buf[t] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    sum = buf[0];
    T ls = log(sum);
    for (long long i = t; i < n; i += blockDim.x) {
        T z = xr[i] - m;
        yr[i] = logmode ? z - ls : exp(z) / sum;
    }
}
"""


def softmax_lastdim(a, log):
    """(log-)softmax of the C-contiguous float32 / float64 device array `a` over its last axis (ops/softmax's
    _softmax_arr, whose array code it replaces on a GPU: the same steps; the sums in a tree order)."""
    cp = _cp()
    t = "float" if a.dtype == np.float32 else "double"
    k = _kernel("softmax_" + t, lambda cp: cp.RawKernel("typedef " + t + " T;\n" + _SOFTMAX, "glassgrad_softmax"))
    n = a.shape[-1] if a.ndim else 1
    rows = a.size // n if n else 0
    y = cp.empty_like(a)
    if rows:
        k((rows,), (256,), (a, y, np.int64(rows), np.int64(n), np.int32(1 if log else 0)))
    return y


_BLOCK_SUM = r"""
__device__ TYPE NAME(TYPE v, TYPE* buf) {
    int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    TYPE r = buf[0];
    __syncthreads();
    return r;
}
"""


def block_sum(ctype, name):
    """CUDA C of ``__device__ ctype name(ctype v, ctype* buf)``: the sum of v over the block's threads, every
    thread receiving it (a shared-memory tree over `buf`, blockDim.x entries; blockDim.x a power of two)."""
    return _BLOCK_SUM.replace("TYPE", ctype).replace("NAME", name)


_LAYER_NORM = block_sum("double", "glassgrad_block_sum") + r"""

extern "C" __global__ void glassgrad_layer_norm(const T* x, const T* w, const T* b, T* y, T* mean_out,
                                                T* invstd_out, long long rows, long long n, double eps,
                                                int has_w, int has_b) {
    long long r = blockIdx.x;
    if (r >= rows) return;
    const T* xr = x + r * n;
    T* yr = y + r * n;
    __shared__ double buf[256];
    double s = 0;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) s += (double)xr[i];
    double mean = glassgrad_block_sum(s, buf) / (double)n;
    T mean_t = (T)mean;
    double q = 0;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
        T c = xr[i] - mean_t;
        T c2 = c * c;                                   /* the square in the input's dtype, summed in double */
        q += (double)c2;
    }
    double var = glassgrad_block_sum(q, buf) / (double)n;
    double invstd = 1.0 / sqrt(var + eps);
    T inv_t = (T)invstd;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
        T v = (xr[i] - mean_t) * inv_t;
        if (has_w) v = v * w[i];
        if (has_b) v = v + b[i];
        yr[i] = v;
    }
    if (threadIdx.x == 0) {
        mean_out[r] = mean_t;                           /* rounded to x's dtype, as the node keeps them */
        invstd_out[r] = inv_t;
    }
}
"""


def layer_norm(x, k, w, b, eps):
    """ops/norm's layer-norm forward over the last `k` axes of the C-contiguous float32 / float64 device array `x`
    (weight `w`, bias `b`: contiguous arrays of x's dtype, or None): (y, mean, invstd), mean and invstd in x's
    dtype (the array code's float64 statistics rounded, as its node keeps them) with the reduced axes kept -- the
    array code's steps (statistics accumulated in double, the square in x's dtype; the sums in a tree order)."""
    cp = _cp()
    t = "float" if x.dtype == np.float32 else "double"
    kern = _kernel("layer_norm_" + t, lambda cp: cp.RawKernel("typedef " + t + " T;\n" + _LAYER_NORM,
                                                               "glassgrad_layer_norm", options=("--fmad=false",)))
    n = 1
    for s in x.shape[x.ndim - k:]:
        n *= s
    rows = x.size // n
    y = cp.empty_like(x)
    mean = cp.empty(rows, dtype=x.dtype)
    invstd = cp.empty(rows, dtype=x.dtype)
    dummy = cp.empty(1, dtype=x.dtype)
    kern((rows,), (256,), (x, dummy if w is None else w, dummy if b is None else b, y, mean, invstd, np.int64(rows),
                           np.int64(n), np.float64(eps), np.int32(w is not None), np.int32(b is not None)))
    kept = x.shape[:x.ndim - k] + (1,) * k
    return y, mean.reshape(kept), invstd.reshape(kept)

