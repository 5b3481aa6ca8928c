"""CuPy kernels for convolution and max pooling on a GPU (ops/conv_framed.py's framed layout, ops/pool.py's max pool).

As array code a convolution builds its GEMM operands with a launch per kernel offset and per stride phase (the
framed input, the im2col columns, the col2im slice-adds) and max pooling makes three launches per kernel offset;
here each of those steps is one launch:

- ``conv_cols``: the columns (C, prod(K), L) of the framed layout (``_Frame.cols(_Frame.put(x))``) read straight
  from the input, a thread per column element (a copy: bit for bit the array code's columns, junk included);
- ``to_grid``: ops/conv_framed's ``_to_grid`` (the output gradient at the start of each grid, zeros elsewhere);
- ``conv_col2im``: the input gradient from the columns W^T @ gy, a thread per input element summing the columns
  that map to it in kernel-offset order, as the array code's slice-adds do (the same sums: bit for bit);
- ``max_pool`` / ``max_pool_backward``: ops/pool's running max with its offset indices and flat indices (ties
  keep the first offset, a NaN window its last NaN, a window that picked padding its first position inside the
  input), and its backward, a thread per input element adding the gradients of the windows that picked it in
  kernel-offset order (the array code's order: bit for bit).

Geometry goes in as scalars, spatial dims padded to three at the front (size 1, kernel 1, stride 1).
"""
import numpy as np

from . import _cp, _kernel

__all__ = ["conv_cols", "to_grid", "conv_col2im", "max_pool", "max_pool_backward"]

_THREADS = 256
_INT_INDEX = 1 << 30         # sizes below it index in int (see _get)

_GEO = "int S0, int S1, int S2, int Q0, int Q1, int Q2, int K0, int K1, int K2, int s0, int s1, int s2, " \
       "int p0, int p1, int p2, int d0, int d1, int d2"

_COMMON = r"""
#define GRID_LOOP(t, total) \
    for (IX t = (IX)blockIdx.x * blockDim.x + threadIdx.x; t < (total); \
         t += (IX)gridDim.x * blockDim.x)

/* the offset of the input element i + p - k d in window units along one dim, or -1 when no window has it there */
__device__ __forceinline__ int glassgrad_win(int i, int p, int k, int d, int s, int O) {
    int t = i + p - k * d;
    if (t < 0 || t % s) return -1;
    t /= s;
    return t < O ? t : -1;
}
"""

_COLS = _COMMON + r"""
extern "C" __global__ void glassgrad_conv_cols(const T* x, T* out, long long N_, long long C_, long long L_, GEO) {
    IX N = (IX)N_, C = (IX)C_, L = (IX)L_;
    IX Kp = (IX)K0 * K1 * K2;
    IX Qp = (IX)Q0 * Q1 * Q2;
    GRID_LOOP(t, C * Kp * L) {
        IX f = t % L;
        IX r = t / L;
        int kk = (int)(r % Kp);
        IX c = r / Kp;
        int k2 = kk % K2, k1 = (kk / K2) % K1, k0 = kk / (K2 * K1);
        int q0 = d0 * k0, q1 = d1 * k1, q2 = d2 * k2;
        /* the tap reads its phase (q % s) of the framed input shifted by q / s grid positions (flat) */
        IX F = f + ((IX)(q0 / s0) * Q1 + q1 / s1) * Q2 + q2 / s2;
        IX n = F / Qp;
        IX g = F % Qp;
        T v = (T)0;
        if (n < N) {
            int g2 = (int)(g % Q2);
            g /= Q2;
            int g1 = (int)(g % Q1);
            int g0 = (int)(g / Q1);
            int i0 = g0 * s0 + q0 % s0 - p0, i1 = g1 * s1 + q1 % s1 - p1, i2 = g2 * s2 + q2 % s2 - p2;
            if (i0 >= 0 && i0 < S0 && i1 >= 0 && i1 < S1 && i2 >= 0 && i2 < S2)
                v = x[(((n * C + c) * S0 + i0) * S1 + i1) * S2 + i2];
        }
        out[t] = v;
    }
}
"""

_TO_GRID = _COMMON + r"""
extern "C" __global__ void glassgrad_to_grid(const T* a, T* out, long long N_, long long C_, int O0, int O1, int O2,
                                             int Q0, int Q1, int Q2) {
    IX N = (IX)N_, C = (IX)C_;
    IX Qp = (IX)Q0 * Q1 * Q2;
    IX L = N * Qp;
    GRID_LOOP(t, C * L) {
        IX c = t / L;
        IX f = t % L;
        IX n = f / Qp;
        IX g = f % Qp;
        int j2 = (int)(g % Q2);
        g /= Q2;
        int j1 = (int)(g % Q1);
        int j0 = (int)(g / Q1);
        T v = (T)0;
        if (j0 < O0 && j1 < O1 && j2 < O2) v = a[(((n * C + c) * O0 + j0) * O1 + j1) * O2 + j2];
        out[t] = v;
    }
}
"""

_COL2IM = _COMMON + r"""
extern "C" __global__ void glassgrad_conv_col2im(const T* cols, T* out, long long N_, long long C_, long long L_,
                                                 int O0, int O1, int O2, GEO) {
    IX N = (IX)N_, C = (IX)C_, L = (IX)L_;
    int Kp = K0 * K1 * K2;
    GRID_LOOP(t, N * C * S0 * S1 * S2) {
        IX r = t;
        int i2 = (int)(r % S2);
        r /= S2;
        int i1 = (int)(r % S1);
        r /= S1;
        int i0 = (int)(r % S0);
        r /= S0;
        IX c = r % C;
        IX n = r / C;
        const T* cc = cols + c * Kp * L + n * ((IX)Q0 * Q1 * Q2);
        T acc = (T)0;
        for (int kk = 0; kk < Kp; ++kk) {      /* the array code's order: one slice-add per kernel offset */
            int k2 = kk % K2, k1 = (kk / K2) % K1, k0 = kk / (K2 * K1);
            int j0 = glassgrad_win(i0, p0, k0, d0, s0, O0);
            int j1 = glassgrad_win(i1, p1, k1, d1, s1, O1);
            int j2 = glassgrad_win(i2, p2, k2, d2, s2, O2);
            if (j0 < 0 || j1 < 0 || j2 < 0) continue;
            acc += cc[kk * L + ((IX)j0 * Q1 + j1) * Q2 + j2];
        }
        out[t] = acc;
    }
}
"""

_POOL = _COMMON + r"""
extern "C" __global__ void glassgrad_max_pool(const T* x, T* val, I* kidx, long long* flat, long long planes_,
                                              int O0, int O1, int O2, int has_pad, GEO) {
    IX planes = (IX)planes_;
    int Kp = K0 * K1 * K2;
    IX Op = (IX)O0 * O1 * O2;
    IX Sp = (IX)S0 * S1 * S2;
    T lowest = -GG_INF;
    GRID_LOOP(t, planes * Op) {
        IX r = t % Op;
        const T* xp = x + (t / Op) * Sp;
        int o2 = (int)(r % O2);
        r /= O2;
        int o1 = (int)(r % O1);
        int o0 = (int)(r / O1);
        int b0 = o0 * s0 - p0, b1 = o1 * s1 - p1, b2 = o2 * s2 - p2;
        T m = lowest;
        int best = 0, last_nan = -1;
        for (int kk = 0; kk < Kp; ++kk) {      /* the running max over the offsets: ties keep the first */
            int k2 = kk % K2, k1 = (kk / K2) % K1, k0 = kk / (K2 * K1);
            int i0 = b0 + k0 * d0, i1 = b1 + k1 * d1, i2 = b2 + k2 * d2;
            T v = lowest;
            if (i0 >= 0 && i0 < S0 && i1 >= 0 && i1 < S1 && i2 >= 0 && i2 < S2)
                v = xp[((IX)i0 * S1 + i1) * S2 + i2];
            if (v != v) last_nan = kk;
            if (kk == 0) m = v;
            else if (v > m) { m = v; best = kk; }
        }
        if (last_nan >= 0) {                    /* a NaN window: NaN, at its last NaN */
            best = last_nan;
            m = GG_NAN;                         /* NumPy's nan (the array code writes np.nan) */
        }
        int k2 = best % K2, k1 = (best / K2) % K1, k0 = best / (K2 * K1);
        int i0 = b0 + k0 * d0, i1 = b1 + k1 * d1, i2 = b2 + k2 * d2;
        if (has_pad && !(i0 >= 0 && i0 < S0 && i1 >= 0 && i1 < S1 && i2 >= 0 && i2 < S2)) {
            /* picked padding (every input of the window is the lowest value): its first position inside */
            k0 = -b0 > 0 ? (-b0 + d0 - 1) / d0 : 0;
            k1 = -b1 > 0 ? (-b1 + d1 - 1) / d1 : 0;
            k2 = -b2 > 0 ? (-b2 + d2 - 1) / d2 : 0;
            best = (k0 * K1 + k1) * K2 + k2;
            i0 = b0 + k0 * d0;
            i1 = b1 + k1 * d1;
            i2 = b2 + k2 * d2;
        }
        val[t] = m;
        kidx[t] = (I)best;
        flat[t] = ((IX)i0 * S1 + i1) * S2 + i2;
    }
}
"""

_POOL_BW = _COMMON + r"""
extern "C" __global__ void glassgrad_max_pool_bw(const T* g, const I* kidx, T* out, long long planes_,
                                                 int O0, int O1, int O2, int tiles, GEO) {
    IX planes = (IX)planes_;
    int Kp = K0 * K1 * K2;
    IX Op = (IX)O0 * O1 * O2;
    IX Sp = (IX)S0 * S1 * S2;
    GRID_LOOP(t, planes * Sp) {
        IX r = t % Sp;
        IX base = (t / Sp) * Op;
        int i2 = (int)(r % S2);
        r /= S2;
        int i1 = (int)(r % S1);
        int i0 = (int)(r / S1);
        T acc = (T)0;
        for (int kk = 0; kk < Kp; ++kk) {      /* the windows that picked this element, in offset order */
            int k2 = kk % K2, k1 = (kk / K2) % K1, k0 = kk / (K2 * K1);
            int j0 = glassgrad_win(i0, p0, k0, d0, s0, O0);
            int j1 = glassgrad_win(i1, p1, k1, d1, s1, O1);
            int j2 = glassgrad_win(i2, p2, k2, d2, s2, O2);
            if (j0 < 0 || j1 < 0 || j2 < 0) continue;
            IX w = base + ((IX)j0 * O1 + j1) * O2 + j2;
            if ((int)kidx[w] == kk) acc = tiles ? g[w] : acc + g[w];     /* tiles: a masked copy, no add */
        }
        out[t] = acc;
    }
}
"""


def _ctype(dt):
    return "float" if dt == np.float32 else "double"


# +inf and NumPy's NaN in T (NVRTC has no INFINITY / NAN)
_CONSTS = {"float": "#define GG_INF __int_as_float(0x7f800000)\n#define GG_NAN __int_as_float(0x7fc00000)\n",
           "double": "#define GG_INF __longlong_as_double(0x7ff0000000000000LL)\n"
                     "#define GG_NAN __longlong_as_double(0x7ff8000000000000LL)\n"}


def _get(name, source, entry, dt, sizes, idx=None):
    """The kernel for element type dt (and offset-index type idx), its index arithmetic in 32 bits when every size
    involved (`sizes`: element counts) stays below 2^30, else in 64 (2^30: the grid loop's last step and the framed
    columns' shifted positions, below twice the sizes, stay in an int)."""
    t = _ctype(dt)
    ix = "int" if max(sizes) < _INT_INDEX else "long long"
    head = "typedef " + t + " T;\ntypedef " + ix + " IX;\n" + _CONSTS[t] + ("" if idx is None else
                                                                               "typedef " + idx + " I;\n")
    key = "_".join([name, t, ix, idx or ""]).replace(" ", "")
    return _kernel(key, lambda cp: cp.RawKernel(head + source.replace("GEO", _GEO), entry,
                                                options=("--fmad=false",)))


def _blocks(total):
    return (int(min((total + _THREADS - 1) // _THREADS, 1 << 30)),)


def _three(v, fill):
    v = tuple(int(a) for a in v)
    return (fill,) * (3 - len(v)) + v


def _geo(S, Q, K, s, p, d):
    return tuple(np.int32(v) for v in _three(S, 1) + _three(Q, 1) + _three(K, 1) + _three(s, 1) + _three(p, 0)
                 + _three(d, 1))


def conv_cols(x, Q, K, s, p, d):
    """The framed columns (C, prod(K), N*prod(Q)) of the C-contiguous float32 / float64 device array x (N, C, *S):
    ``_Frame.cols(_Frame.put(x), 0, L, 1)`` reshaped, in one launch."""
    cp = _cp()
    N, C = x.shape[:2]
    L = N * int(np.prod(Q))
    Kp = int(np.prod(K))
    out = cp.empty((C, Kp, L), dtype=x.dtype)
    if out.size:
        _get("conv_cols", _COLS, "glassgrad_conv_cols", x.dtype, (x.size, out.size))(
            _blocks(out.size), (_THREADS,),
            (x, out, np.int64(N), np.int64(C), np.int64(L)) + _geo(x.shape[2:], Q, K, s, p, d))
    return out


def to_grid(a, Q):
    """ops/conv_framed's _to_grid of the C-contiguous float32 / float64 device array a (N, C, *O): (C, N*prod(Q))."""
    cp = _cp()
    N, C = a.shape[:2]
    Qp = int(np.prod(Q))
    out = cp.empty((C, N * Qp), dtype=a.dtype)
    if out.size:
        _get("to_grid", _TO_GRID, "glassgrad_to_grid", a.dtype, (a.size, out.size))(
            _blocks(out.size), (_THREADS,),
            (a, out, np.int64(N), np.int64(C)) + tuple(np.int32(v) for v in _three(a.shape[2:], 1) + _three(Q, 1)))
    return out


def conv_col2im(cols, N, S, Q, O, K, s, p, d):
    """The input gradient (N, C, *S) from the C-contiguous columns (C, prod(K), N*prod(Q)) (W^T @ the gridded output
    gradient, O its valid outputs): each element the sum of its columns in kernel-offset order, as the slice-adds of
    ops/conv_framed's _conv_input_grad_framed."""
    cp = _cp()
    C = cols.shape[0]
    out = cp.empty((N, C) + tuple(S), dtype=cols.dtype)
    if out.size:
        _get("conv_col2im", _COL2IM, "glassgrad_conv_col2im", cols.dtype, (cols.size, out.size))(
            _blocks(out.size), (_THREADS,),
            (cols, out, np.int64(N), np.int64(C), np.int64(cols.shape[2]))
            + tuple(np.int32(v) for v in _three(O, 1)) + _geo(S, Q, K, s, p, d))
    return out


def _idx_type(dt):
    return "signed char" if dt == np.int8 else "long long"


def max_pool(a, K, s, p, d, O, has_pad):
    """ops/pool's max pool of the C-contiguous float32 / float64 device array a (N, C, *S) (padding and ceil mode's
    extra windows read as -inf; O > 0 windows per dim): (values, kernel offset indices -- int8 when prod(K) < 128,
    as _running_max's --, flat input indices int64), all (N, C, *O)."""
    cp = _cp()
    Kp = int(np.prod(K))
    idt = np.int8 if Kp < 128 else np.int64
    shape = tuple(a.shape[:2]) + tuple(O)
    val = cp.empty(shape, dtype=a.dtype)
    kidx = cp.empty(shape, dtype=idt)
    flat = cp.empty(shape, dtype=np.int64)
    if val.size:
        _get("max_pool", _POOL, "glassgrad_max_pool", a.dtype, (a.size, val.size), _idx_type(idt))(
            _blocks(val.size), (_THREADS,),
            (a, val, kidx, flat, np.int64(a.shape[0] * a.shape[1])) + tuple(np.int32(v) for v in _three(O, 1))
            + (np.int32(bool(has_pad)),) + _geo(a.shape[2:], (1,), K, s, p, d))
    return val, kidx, flat


def max_pool_backward(g, kidx, shape, K, s, p, d, tiles):
    """The input gradient (shape: (N, C, *S)) of max_pool from the C-contiguous output gradient g and offset indices
    kidx (N, C, *O): ops/pool's _MaxPoolNode._bw (tiles: its masked-copy form, for windows that tile the input)."""
    cp = _cp()
    out = cp.empty(tuple(shape), dtype=g.dtype)
    if out.size:
        _get("max_pool_bw", _POOL_BW, "glassgrad_max_pool_bw", g.dtype, (g.size, out.size),
             _idx_type(kidx.dtype))(
            _blocks(out.size), (_THREADS,),
            (g, kidx, out, np.int64(shape[0] * shape[1])) + tuple(np.int32(v) for v in _three(g.shape[2:], 1))
            + (np.int32(bool(tiles)),) + _geo(shape[2:], (1,), K, s, p, d))
    return out
