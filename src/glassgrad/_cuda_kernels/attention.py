"""The fused attention kernel's softmax on a GPU (ops/attention.py's _sdpa_flash and its backward).

The scores there are held transposed, (batch * heads, S, L): a query's scores are a column.  One thread per
column does what the array code does in about a dozen launches -- scale, the additive mask (a bool or float mask
broadcast over batch / heads / rows, and the causal triangle, combined as the array code combines them), the
safe softmax (max, shift by the finite max, exp, the sum in key order, divide; columns entirely -inf give
zeros) -- in one, without building the mask.  The backward's softmax step, dS = P * (dP - sum(dP * P)), is one
more.  The same operations in the same order as the array code (the sums in key order, as NumPy reduces a
non-last axis); only exp may differ in its last bit between CUDA's and the host's.
"""
import numpy as np

from . import _kernel

__all__ = ["masked_softmax_t", "softmax_t_backward"]

_FORWARD = r"""
extern "C" __global__ void glassgrad_attn_softmax(T* att, const MS* mask, long long bh_n, long long S, long long L,
                                                  T scale, long long H, long long mb, long long mh, long long ml,
                                                  long long ms, int has_mask, int causal) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= bh_n * L) return;
    long long bh = idx / L, l = idx % L;
    long long b = bh / H, h = bh % H;
    T* col = att + bh * S * L + l;
    const MS* mcol = mask + b * mb + h * mh + l * ml;
    const T ninf = (T)(-__int_as_float(0x7f800000));
    T m = ninf;
    for (long long s = 0; s < S; ++s) {
        T v = col[s * L] * scale;
        if (has_mask || causal) {
            M add = 0;
            if (has_mask) add = MASKVAL(mcol[s * ms]);
            if (causal && s > l) add = has_mask ? (M)(add + (M)(-__int_as_float(0x7f800000)))
                                                : (M)(-__int_as_float(0x7f800000));
            v = (T)((W)v + (W)add);
        }
        col[s * L] = v;
        m = (v > m || v != v) ? v : m;               /* NumPy's max: NaN wins */
    }
    int dead = (m == ninf);
    if (!isfinite(m)) m = 0;
    T sum = 0;
    for (long long s = 0; s < S; ++s) {
        T e = exp(col[s * L] - m);
        col[s * L] = e;
        sum += e;
    }
    for (long long s = 0; s < S; ++s) col[s * L] = dead ? (T)0 : col[s * L] / sum;
}
"""

_BACKWARD = r"""
extern "C" __global__ void glassgrad_attn_softmax_bw(T* dst, const T* pt, long long bh_n, long long S,
                                                     long long L) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= bh_n * L) return;
    long long bh = idx / L, l = idx % L;
    T* d = dst + bh * S * L + l;
    const T* p = pt + bh * S * L + l;
    T t = 0;
    for (long long s = 0; s < S; ++s) t += d[s * L] * p[s * L];
    for (long long s = 0; s < S; ++s) d[s * L] = (d[s * L] - t) * p[s * L];
}
"""

_C = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


def _blocks(n):
    return ((n + 255) // 256,), (256,)


def masked_softmax_t(att, scale, mask, causal, heads):
    """In place on the C-contiguous (B * H, S, L) float32 / float64 device array `att` (the transposed scores):
    att * scale, plus `mask` -- None, or a 4-d bool / float array of att's dtype or float64 broadcastable to
    (B, H, L, S) -- plus the causal triangle (key s > query l masked) when `causal`, then the safe softmax over S.
    Returns att."""
    t = _C[att.dtype]
    is_bool = mask is not None and mask.dtype == np.bool_
    # M: the mask's values (a bool mask is 0 / -inf in att's dtype, as the array code builds it); W: the dtype
    # of att + mask (NumPy computes a float32 + float64 addition in float64)
    mtype = t if mask is None or is_bool else _C[mask.dtype]
    wide = "double" if "double" in (t, mtype) else "float"
    src = (f"typedef {t} T;\ntypedef {mtype} M;\ntypedef {wide} W;\ntypedef {'bool' if is_bool else 'M'} MS;\n"
           + ("#define MASKVAL(x) ((x) ? (M)0 : (M)(-__int_as_float(0x7f800000)))\n" if is_bool
              else "#define MASKVAL(x) ((M)(x))\n")
           + _FORWARD)
    if mask is None:
        mt, strides = att, (0, 0, 0, 0)
    else:
        mt = mask
        strides = tuple(0 if n == 1 else st // mask.itemsize for n, st in zip(mask.shape, mask.strides))
    k = _kernel(f"attn_softmax_{t}_{mtype}_{'b' if is_bool else 'f'}",
                lambda cp: cp.RawKernel(src, "glassgrad_attn_softmax", options=("--fmad=false",)))
    bh_n, S, L = att.shape
    if bh_n * L:
        grid, block = _blocks(bh_n * L)
        k(grid, block, (att, mt, np.int64(bh_n), np.int64(S), np.int64(L), att.dtype.type(scale),
                        np.int64(heads), *(np.int64(v) for v in strides), np.int32(mask is not None),
                        np.int32(bool(causal))))
    return att


def softmax_t_backward(dst, pt):
    """In place on the C-contiguous (B * H, S, L) device array `dst` (dP transposed): dst = (dst - sum_S(dst * pt))
    * pt, the safe softmax's backward on the transposed probabilities `pt` (same shape and dtype)."""
    t = _C[dst.dtype]
    k = _kernel("attn_softmax_bw_" + t, lambda cp: cp.RawKernel("typedef " + t + " T;\n" + _BACKWARD,
                                                                "glassgrad_attn_softmax_bw",
                                                                options=("--fmad=false",)))
    bh_n, S, L = dst.shape
    if bh_n * L:
        grid, block = _blocks(bh_n * L)
        k(grid, block, (dst, pt, np.int64(bh_n), np.int64(S), np.int64(L)))
    return dst

