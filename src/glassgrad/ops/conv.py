"""Convolution and im2col / col2im primitives (N-d: 1, 2 and 3 spatial dims).

ops: convolution (ConvolutionBackward0, plain and transposed), conv_nd (the entry of nn.functional's
     conv1d/2d/3d and conv_transpose1d/2d/3d: PyTorch's argument checks, then the same primitive),
     im2col (Im2ColBackward0, nn.functional.unfold), col2im (Col2ImBackward0, nn.functional.fold).
The array kernels of the framed layout are in ops/conv_framed.py.

Convolutions are GEMMs in the "framed" layout (see _Frame): the padded input, split into stride
phases, laid out channel-major, so that every kernel offset reads a contiguous slice -- one GEMM per
offset accumulating through BLAS (cblas gemm with beta=1) when the channel counts are large enough,
else one GEMM over im2col columns copied in long contiguous runs.  nn.functional.unfold / fold (im2col,
col2im) loop over the kernel offsets with strided slice-adds -- never over the batch or pixels.
Backward formulas are written in terms of the same primitives in tensor mode, so double backward
works (grad wrt input of a conv is a transposed conv, and so on).
"""
import numbers

import numpy as np

from ..backend import contiguous
from .. import _dtype, backend
from ._core import Tensor, make, edge, save_in, grad
from ..autograd.graph import Node
from ..autograd.saved_hooks import STACK as _SAVED_HOOKS
from .conv_framed import _frame, _to_grid, _conv_framed, _conv_input_grad_framed, _conv_weight_grad_framed
from .conv_framed import _bmm  # noqa: F401  (explain/_attribute_stack.py reads it as ops.conv._bmm)
from .pad import constant_pad_nd
from .conversion import in_format
from .. import _memory_format as _mf
from .._tensor import element_strides
from .views import unsqueeze, squeeze
from . import views as V
from .._autocast_state import state as _acs
from . import _autocast as _ac

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
    if xp.__class__ is np.ndarray:
        return _as_strided(xp, shape, strides, writeable=False)
    return backend.as_strided(xp, shape, strides)        # a device array: its own as_strided (no writeable flag)


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
        return np.zeros((N, Co) + tuple(O), dt, like=x)
    if _depthwise(w, g):            # one channel per group: K shifted multiply-adds, no GEMM
        xp = _pad(x, p)
        wf = w.reshape(Co, -1)
        y = np.zeros((N, Co) + tuple(O), dt, like=x)
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
    dt = np.result_type(gy.dtype, w.dtype)
    if gy.size and w.size and not _depthwise(w, g):
        return _conv_input_grad_framed(gy, w, S, s, p, d, g, dt, gyf)
    dst = np.zeros((N, C) + Sp, dt, like=gy)
    if gy.size and w.size:      # depthwise
        wf = w.reshape(Co, -1)
        for kk, _, sl in _offsets(K, s, d, O):
            dst[sl] += gy * _dw_bshape(wf[:, kk], nd)
    return dst[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + S[i]) for i in range(nd))]


def conv_weight_grad_arr(x, gy, wshape, s, p, d, g, gyf=None, xframe=None):
    """Adjoint of conv_arr in w: x (N, C, *S), gy (N, Cout, *O) -> wshape."""
    K = wshape[2:]
    O = gy.shape[2:]
    if x.size == 0 or gy.size == 0:
        return np.zeros(wshape, np.result_type(x.dtype, gy.dtype), like=x)
    if g > 1 and wshape[0] == g and wshape[1] == 1:
        nd = len(K)
        xp = _pad(x, p)
        gw = np.empty((g, int(np.prod(K))), np.result_type(x.dtype, gy.dtype), like=x)
        red = (0,) + tuple(range(2, 2 + nd))
        for kk, _, sl in _offsets(K, s, d, O):
            gw[:, kk] = (xp[sl] * gy).sum(axis=red)
        return gw.reshape(wshape)
    return _conv_weight_grad_framed(x, gy, wshape, s, p, d, g, np.result_type(x.dtype, gy.dtype), gyf, xframe)


# -- the differentiable primitive -------------------------------------------------------------------
def _weight_grad_t(x, gy, wshape, s, p, d, g):
    """Tensor-mode weight gradient, itself a convolution (stride and dilation swap roles)."""
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

    def backward(self, ns, gy):
        x, w = ns.unpack(self)
        s, p, d, g = self.stride, self.padding, self.dilation, self.groups
        nd = len(s)
        want = [nf[0] is not None for nf in self.next_functions]
        gx = gw = gb = None
        if want[2]:
            gb = ns.sum(gy, (0,) + tuple(range(2, 2 + nd)))
        if not ns.is_tensor_mode:
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


def conv_format(y, xd, wd):
    """The output array `y` of a 2-d / 3-d convolution laid out as torch's CPU kernels lay it out: in the
    channels-last format when the input's or the weight's strides suggest it, else contiguous."""
    for a in (xd, wd):
        shape, st = a.shape, element_strides(a)
        if a.ndim == 3:             # conv1d runs as a conv2d of (N, C, 1, W): its format is that one's
            shape, st = (shape[0], shape[1], 1, shape[2]), (st[0], st[1], st[2] * shape[2], st[2])
        f = _mf.suggest(shape, st)
        if f is not _mf.contiguous_format:
            return in_format(y, f) if y.ndim != 3 else in_format(y[:, :, None], f)[:, :, 0]
    return contiguous(y)


def _convolution(x, w, b, s, p, d, transposed, op, g):
    """No argument checks: the caller validated (s, p, d, op: tuples of ints, one per spatial dim)."""
    xd, wd = x._data, w._data
    if transposed:
        S = tuple((xd.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (wd.shape[2 + i] - 1) + op[i] + 1
                  for i in range(len(s)))
        y = conv_input_grad_arr(xd, wd, S, s, p, d, g)
    else:
        keep = [] if w._rg and grad.enabled and not _SAVED_HOOKS else None   # the framed input: not under hooks
        y = conv_arr(xd, wd, s, p, d, g, keep=keep)
    if b is not None:       # y is a fresh array: add the bias in place
        bb = b._data.reshape((1, -1) + (1,) * len(s))
        # (CuPy's flags have no `writeable`: its arrays always are)
        if (y.__class__ is not np.ndarray or y.flags.writeable) and y.base is None \
                and y.dtype == np.result_type(y.dtype, bb.dtype):
            y += bb
        else:
            y = y + bb
    if not (xd.flags.c_contiguous and wd.flags.c_contiguous) and xd.ndim == wd.ndim:
        y = conv_format(y, xd, wd)          # torch: channels-last when the input or the weight is
    elif not y.flags.c_contiguous:
        y = contiguous(y)
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


# -- the checked entry point: nn.functional.conv1d/2d/3d and conv_transpose1d/2d/3d ----------------------
def _int_list(v, name, fn, nd):
    if isinstance(v, Tensor):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        if not all(isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in v):
            raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not {type(v).__name__}")
        return [int(i) for i in v]
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return [int(v)] * nd
    raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not {type(v).__name__}")


def _expand(v, name, k):
    if len(v) == 1:
        return tuple(v) * k
    if len(v) != k:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {k} values to match the "
                           f"convolution dimensions, but got {name}={list(v)}")
    return tuple(v)


def _batchify(input, nd, fn):
    dim = input.dim()
    if dim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, but got input of "
                           f"size: {list(input.shape)}")
    return dim == nd + 2


def _check_arg_types(input, weight, groups, fn):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not isinstance(weight, Tensor):
        raise TypeError(f"{fn}(): argument 'weight' (position 2) must be Tensor, not {type(weight).__name__}")
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral):
        raise TypeError(f"{fn}(): argument 'groups' must be int, not {type(groups).__name__}")


def _padding_string(padding, transposed, fn):
    """(padding, same): 'valid' is 0, 'same' is 0 for now (computed once the kernel is known)."""
    if not isinstance(padding, str):
        return padding, False
    if transposed:
        raise TypeError(f"{fn}(): argument 'padding' must be tuple of ints, not str")
    if padding == "valid":
        return 0, False
    if padding == "same":
        return 0, True
    raise RuntimeError(f"Invalid padding string: '{padding}'")


def _geometry(stride, padding, dilation, output_padding, groups, k, fn, transposed):
    """stride, padding, dilation, output_padding as tuples of k ints, checked for sign."""
    s = _expand(_int_list(stride, "stride", fn, 1), "stride", k)
    p = _expand(_int_list(padding, "padding", fn, 1), "padding", k)
    d = _expand(_int_list(dilation, "dilation", fn, 1), "dilation", k)
    op = _expand(_int_list(output_padding, "output_padding", fn, 1), "output_padding", k) if transposed \
        else (0,) * k
    if any(v < 0 for v in p):
        raise RuntimeError("negative padding is not supported")
    if any(v < 0 for v in op):
        raise RuntimeError("negative output_padding is not supported")
    if any(v <= 0 for v in s):
        raise RuntimeError("non-positive stride is not supported")
    if any(v <= 0 for v in d):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    return s, p, d, op


def _check_channels(x, weight, bias, groups, transposed):
    """The weight's rank and groups, the input's channels and the bias's size, with PyTorch's messages."""
    xs, ws = list(x.shape), list(weight.shape)
    if weight.dim() != x.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight {ws}, "
                           f"but got {x.dim()}-dimensional input of size {xs} instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {ws} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{ws}] instead")
    if not transposed:
        if xs[1] != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {ws}, expected input{xs} to have "
                               f"{ws[1] * groups} channels, but got {xs[1]} channels instead")
        nout = ws[0]
        pre = f"Given weight of size {ws}"
    else:
        if xs[1] != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected input{xs} to have {ws[0]} "
                               f"channels, but got {xs[1]} channels instead")
        nout = ws[1] * groups
        pre = f"Given transposed=1, weight of size {ws}"
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != nout):
        raise RuntimeError(f"{pre}, expected bias to be 1-dimensional with {nout} elements, but got bias of size "
                           f"{list(bias.shape)} instead")


def _same_padding(x, ws, s, d, k):
    """padding='same': half the dilated kernel extent each side; an odd extent pads one more at the end
    (x is padded here).  Returns (x, p)."""
    if any(v != 1 for v in s):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    lo, extra = [], []
    for i in range(k):
        tot = d[i] * (ws[2 + i] - 1)
        lo.append(tot // 2)
        extra.append(tot - 2 * (tot // 2))
    if any(extra):
        flat = []
        for i in reversed(range(k)):
            flat += [0, extra[i]]
        x = constant_pad_nd(x, flat, 0)
    return x, tuple(lo)


def _check_sizes(xs, ws, s, p, d, op, k, transposed):
    """The kernel fits the padded input (plain), the output padding is below stride or dilation (transposed)."""
    if not transposed:
        padded = [xs[2 + i] + 2 * p[i] for i in range(k)]
        ks = [d[i] * (ws[2 + i] - 1) + 1 for i in range(k)]
        if any(padded[i] < ks[i] for i in range(k)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                               f"Kernel size: ({' x '.join(map(str, ks))}). Kernel size can't be greater than "
                               f"actual input size")
    elif any(op[i] >= s[i] and op[i] >= d[i] for i in range(k)):
        names = ["depth", "height", "width"][3 - max(k, 2):]
        o2, s2, d2 = ((0,) + op, (1,) + s, (1,) + d) if k == 1 else (op, s, d)
        parts = [f"output_padding_{n}: {v}" for n, v in zip(names, o2)] + \
                [f"stride_{n}: {v}" for n, v in zip(names, s2)] + [f"dilation_{n}: {v}" for n, v in zip(names, d2)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(parts))


def _check_dtypes(x, weight, bias):
    xd, wd = x._data.dtype, weight._data.dtype
    if xd != wd:
        raise RuntimeError(f"expected scalar type {_dtype.c_name(xd)} but found {_dtype.c_name(wd)}")
    if bias is not None and bias._data.dtype != xd:
        raise RuntimeError(f"Input type ({_dtype.cpp_name(xd)}) and bias type "
                           f"({_dtype.cpp_name(bias._data.dtype)}) should be the same")


def conv_nd(input, weight, bias, stride, padding, dilation, groups, nd, fn, transposed=False, output_padding=0):
    """nn.functional.conv{nd}d / conv_transpose{nd}d (fn: that name, for the messages): PyTorch's argument
    checks in PyTorch's order, an unbatched input given a batch dim of 1, then _convolution."""
    if _acs.on:
        return _ac.lower(conv_nd, input, weight, bias, stride, padding, dilation, groups, nd, fn, transposed,
                         output_padding)
    _check_arg_types(input, weight, groups, fn)
    batched = _batchify(input, nd, fn)
    x = input if batched else unsqueeze(input, 0)
    k = weight.dim() - 2
    padding, same = _padding_string(padding, transposed, fn)
    s, p, d, op = _geometry(stride, padding, dilation, output_padding, groups, k, fn, transposed)
    _check_channels(x, weight, bias, groups, transposed)
    if same:
        x, p = _same_padding(x, list(weight.shape), s, d, k)
    _check_sizes(list(x.shape), list(weight.shape), s, p, d, op, k, transposed)
    _check_dtypes(x, weight, bias)
    y = _convolution(x, weight, bias, s, p, d, transposed, op, int(groups))
    return y if batched else squeeze(y, 0)


# -- im2col / col2im (nn.functional.unfold / fold) -------------------------------------------------------------
class Im2ColBackward0(Node):
    __slots__ = ("self_sym_argsize_minus_2", "kernel_size", "dilation", "padding", "stride")

    def backward(self, ns, g):
        return (_col2im_any(ns, g, self.self_sym_argsize_minus_2, self.kernel_size, self.dilation,
                            self.padding, self.stride),)


class Col2ImBackward0(Node):
    __slots__ = ("kernel_size", "dilation", "padding", "stride")

    def backward(self, ns, g):
        return (_im2col_any(ns, g, self.kernel_size, self.dilation, self.padding, self.stride),)


def _unbatched(ns, g, fn):
    """Run fn on g with a batch dim added (and removed again)."""
    if ns.is_tensor_mode:
        return squeeze(fn(unsqueeze(g, 0)), 0)
    return fn(g[None])[0]


def _im2col_any(ns, g, K, d, p, s):
    if len(g.shape) == 3:
        return _unbatched(ns, g, lambda t: _im2col_any(ns, t, K, d, p, s))
    if ns.is_tensor_mode:
        return im2col(g, K, d, p, s)
    return im2col_arr(g, K, d, p, s)


def _col2im_any(ns, g, S, K, d, p, s):
    if len(g.shape) == 2:
        return _unbatched(ns, g, lambda t: _col2im_any(ns, t, S, K, d, p, s))
    if ns.is_tensor_mode:
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
    dst = np.zeros((N, C) + tuple(S[i] + 2 * p[i] for i in range(nd)), c.dtype, like=c)
    col2im_add(dst, c.reshape((N, C) + tuple(K) + tuple(O)), K, s, d, O)
    return contiguous(dst[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + S[i]) for i in range(nd))])


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


