"""Convolution and im2col / col2im primitives (N-d: 1, 2 and 3 spatial dims).

ops: convolution (ConvolutionBackward0, plain and transposed), im2col (Im2ColBackward0, F.unfold),
     col2im (Col2ImBackward0, F.fold).

Everything is a GEMM over im2col columns: the columns are a strided view of the (padded) input,
copied once into (groups, Cg*K, N*P) order and multiplied by the weight.  col2im (the adjoint)
loops over the kernel offsets (at most prod(K) iterations) with strided slice-adds -- never over
the batch or pixels.  Backward formulas are written in terms of the same primitives in tensor
mode, so double backward works (grad wrt input of a conv is a transposed conv, and so on).
"""
import numpy as np

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


def _gy_mat(gy, g):
    """(N, Cout, *O) -> (g, Og, N*P)."""
    N, Co = gy.shape[:2]
    P = int(np.prod(gy.shape[2:]))
    return gy.reshape(N, g, Co // g, P).transpose(1, 2, 0, 3).reshape(g, Co // g, N * P)


def _bmm(a, b):
    """Batched (g, m, k) @ (g, k, n) as one 2-D BLAS call per group (np.matmul on stacked, transposed
    operands can miss BLAS)."""
    if a.shape[0] == 1:
        return np.matmul(a[0], b[0])[None]
    out = np.empty((a.shape[0], a.shape[1], b.shape[2]), np.result_type(a.dtype, b.dtype))
    for i in range(a.shape[0]):
        np.matmul(a[i], b[i], out=out[i])
    return out


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


def conv_arr(x, w, s, p, d, g, O=None):
    """Plain convolution on arrays: x (N, C, *S), w (Cout, C/g, *K) -> (N, Cout, *O).  O (the first
    windows only) is given when this is the input gradient of a transposed conv with output_padding."""
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
    cols = _cols(x, K, s, p, d, O, g)
    y = _bmm(w.reshape(g, Co // g, -1), cols)
    return y.reshape((g, Co // g, N) + tuple(O)).swapaxes(0, 2).swapaxes(1, 2) \
        .reshape((N, Co) + tuple(O)).astype(dt, copy=False)


def conv_input_grad_arr(gy, w, S, s, p, d, g):
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
        cols = _bmm(w.reshape(g, Co // g, -1).transpose(0, 2, 1), _gy_mat(gy, g))   # (g, Cg*K, N*P)
        cols = cols.reshape((g, Cg) + tuple(K) + (N,) + tuple(O))
        perm = (2 + nd, 0, 1) + tuple(range(2, 2 + nd)) + tuple(range(3 + nd, 3 + 2 * nd))
        cols = cols.transpose(perm).reshape((N, C) + tuple(K) + tuple(O))
        col2im_add(dst, cols, K, s, d, O)
    return dst[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + S[i]) for i in range(nd))]


def conv_weight_grad_arr(x, gy, wshape, s, p, d, g):
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
    cols = _cols(x, K, s, p, d, O, g)
    return _bmm(_gy_mat(gy, g), cols.transpose(0, 2, 1)).reshape(wshape)


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
    __slots__ = ("stride", "padding", "dilation", "transposed", "output_padding", "groups", "bias_sym_sizes_opt")
    _saved_names = ("input", "weight")

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
                if want[0]:
                    gx = conv_input_grad_arr(gy, w, x.shape[2:], s, p, d, g)
                if want[1]:
                    gw = conv_weight_grad_arr(x, gy, w.shape, s, p, d, g)
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
        y = conv_arr(xd, wd, s, p, d, g)
    if b is not None:
        y = y + b._data.reshape((1, -1) + (1,) * len(s))
    if not y.flags.c_contiguous:
        y = np.ascontiguousarray(y)
    if grad.enabled and (x._rg or w._rg or (b is not None and b._rg)):
        n = ConvolutionBackward0((edge(x), edge(w), edge(b) if b is not None else (None, 0)))
        n.stride, n.padding, n.dilation, n.transposed, n.output_padding, n.groups = s, p, d, transposed, op, g
        n.bias_sym_sizes_opt = None if b is None else list(b._data.shape)
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
