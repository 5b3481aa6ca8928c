"""torch's `native_*` entry points and the batch-norm statistics primitives, over the op families' kernels.

ops: native_batch_norm native_layer_norm native_group_norm (the norm kernels of ops/norm.py, with the saved
     statistics torch returns beside the output), native_dropout (NativeDropoutBackward0), native_channel_shuffle
     (torch gives it no derivative), norm_except_dim (torch's composite), batch_norm_update_stats, and
     SyncBatchNorm's primitives batch_norm_stats batch_norm_elemt batch_norm_gather_stats
     batch_norm_gather_stats_with_counts batch_norm_backward_reduce batch_norm_backward_elemt (torch has them
     on CUDA only; here they compute its formulas on any device, without a graph, as torch's CUDA kernels),
     conv_tbc (ConvTbcBackward0: a 1-d convolution in (time, batch, channel) layout).
"""
import numpy as np

from ._core import as_array, make, edge, grad, NotImplementedNode
from ..autograd.graph import Node
from . import norm as _norm, channel_shuffle as _cs
from .statistics import LinalgVectorNormBackward0
from .dropout import native_dropout, NativeDropoutBackward0  # noqa: F401  (torch.native_dropout lives with dropout)
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["native_batch_norm", "native_layer_norm", "native_group_norm", "native_dropout",
           "native_channel_shuffle", "norm_except_dim", "batch_norm_update_stats", "batch_norm_stats",
           "batch_norm_elemt", "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
           "batch_norm_backward_reduce", "batch_norm_backward_elemt", "conv_tbc"]


def _f(a, dt):
    return make(as_array(a).astype(dt))


def _axes(a):
    return (0,) + tuple(range(2, a.ndim))


# -- native_* norms: the output of ops/norm.py's kernels, with torch's saved statistics -----------------
def _stats_dtype(x, *params):
    """The dtype of the saved statistics: float32 for a float16 / bfloat16 input with float32 parameters (torch's
    mixed-dtype kernels), the input's dtype otherwise."""
    if x.dtype.itemsize == 2 and x.dtype.kind in "fV" and any(p is not None and p._data.dtype == np.float32
                                                             for p in params):
        return np.dtype(np.float32)
    return x.dtype


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd): the batch's mean and 1/sqrt(biased var + eps) when training, empty
    tensors otherwise."""
    x = input._data
    dt = _stats_dtype(x, weight, bias, running_mean, running_var)
    if training and x.ndim > 1 and x.size:
        mean, var = _norm._stats(x, _axes(x))
        stats = (_f(mean.reshape(-1), dt), _f(1.0 / np.sqrt(var.reshape(-1) + eps), dt))
    else:
        stats = (make(np.zeros(0, dt, like=x)), make(np.zeros(0, dt, like=x)))
    out = _norm._native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
    return (out,) + stats


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd), the statistics shaped as the input with the normalised dims kept as 1."""
    shape = tuple(_norm._shape_arg(normalized_shape, "native_layer_norm"))
    out = _norm._native_layer_norm(input, shape, weight, bias, eps)
    x = input._data
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    dt = _stats_dtype(x, weight, bias)
    mean, var = _norm._stats(x, axes) if x.size else (np.zeros(x.shape[:x.ndim - len(shape)] + (1,) * len(shape), like=x),) * 2
    return out, _f(mean, dt), _f(1.0 / np.sqrt(var + eps), dt)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd) with the statistics shaped (N, group).  (torch records its statistics on the
    output's node; here they carry no graph.)"""
    x = input._data
    if x.size != int(N) * int(C) * int(HxW):
        raise RuntimeError(f"Expected input to have {int(N) * int(C) * int(HxW)} elements, but got "
                           f"{x.size}")
    out = _norm._native_group_norm(input, weight, bias, group, eps)
    xr = x.reshape(int(N), int(group), -1)
    mean, var = _norm._stats(xr, (2,)) if xr.size else (np.zeros((int(N), int(group), 1), like=x),) * 2
    dt = _stats_dtype(x, weight, bias)
    return out, _f(mean[..., 0], dt), _f(1.0 / np.sqrt(var[..., 0] + eps), dt)


# -- native_channel_shuffle: channel_shuffle's values, no derivative (as torch) --------------------------
def native_channel_shuffle(input, groups):
    y = _cs.channel_shuffle(input.detach(), groups)
    if input._rg and grad.enabled:
        n = NotImplementedNode((edge(input),))
        n.what = "aten::native_channel_shuffle"
        return make(y._data, True, n)
    return y


# -- norm_except_dim: torch's composite (weight_norm's norm) ------------------------------------------------
class NormBackward0(LinalgVectorNormBackward0):   # at::norm(v, p) (no dim): the vector norm's backward
    __slots__ = ()


def norm_except_dim(v, pow=2, dim=0):
    nd = v.dim()
    if dim == -1:
        y = v.norm(pow)
        if type(y._grad_fn) is LinalgVectorNormBackward0:
            y._grad_fn.__class__ = NormBackward0
        return y
    if dim == 0:
        return v.contiguous().view(v.size(0), -1).norm(pow, 1).view([v.size(0)] + [1] * (nd - 1))
    if dim == nd - 1:
        return v.contiguous().view(-1, v.size(nd - 1)).norm(pow, 0).view([1] * (nd - 1) + [v.size(nd - 1)])
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


# -- batch-norm statistics (SyncBatchNorm's primitives) -------------------------------------------------------
def _no_grad_outputs(name, input, *arrs):
    """torch's outputs of a primitive without a derivative: they require grad (node NotImplemented) when input
    does."""
    if input._rg and grad.enabled:
        n = NotImplementedNode((edge(input),))
        n.what = f"aten::{name}"
        return tuple(make(a, True, n, i) for i, a in enumerate(arrs))
    return tuple(make(a) for a in arrs)


def _update(run, new):
    if run is not None:
        run._data[...] = new.astype(run._data.dtype)
        run._vc[0] += 1


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """(mean, biased var) of input over every dim but 1; the running stats move by `momentum` towards the mean
    and the unbiased variance, in place."""
    x = input._data
    mean, var = _norm._stats(x, _axes(x))
    mean, var = mean.reshape(-1), var.reshape(-1)
    n = x.size // x.shape[1] if x.shape[1] else 0
    m = float(momentum)
    if running_mean is not None:
        _update(running_mean, (1 - m) * running_mean._data + m * mean)
    if running_var is not None:
        _update(running_var, (1 - m) * running_var._data + m * var * n / max(n - 1, 1))
    return _no_grad_outputs("batch_norm_update_stats", input, mean.astype(x.dtype), var.astype(x.dtype))


def batch_norm_stats(input, eps):
    """(mean, invstd) over every dim but 1, invstd = 1 / sqrt(biased var + eps)."""
    x = input._data
    if x.ndim < 2:
        raise RuntimeError("batch_norm_stats expects input with at least 2 dimensions")
    mean, var = _norm._stats(x, _axes(x))
    dt = np.float32 if x.dtype.kind == "V" else x.dtype
    return make(mean.reshape(-1).astype(dt)), make((1.0 / np.sqrt(var.reshape(-1) + eps)).astype(dt))


def _b(v, nd):
    return v.reshape((1, -1) + (1,) * (nd - 2))


def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    """(input - mean) * invstd * weight + bias, per channel (dim 1)."""
    x = input._data
    y = (x - _b(mean._data, x.ndim)) * _b(invstd._data, x.ndim)
    if weight is not None:
        y = y * _b(weight._data, x.ndim)
    if bias is not None:
        y = y + _b(bias._data, x.ndim)
    return make(y.astype(x.dtype, copy=False))


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts):
    """The global (mean, invstd) from per-process rows of (mean, invstd, count); the running stats move by
    `momentum` (towards the unbiased variance)."""
    mu, inv = mean._data.astype(np.float64), invstd._data.astype(np.float64)
    c = (counts._data.astype(np.float64, copy=False) if hasattr(counts, "_data") else
         np.asarray(counts, np.float64, like=mu)).reshape(-1, 1)
    var = 1.0 / np.square(inv) - eps
    n = c.sum()
    gmean = (c * mu).sum(0) / n
    gvar = (c * (var + np.square(mu - gmean))).sum(0) / n
    m = float(momentum)
    if running_mean is not None:
        _update(running_mean, (1 - m) * running_mean._data + m * gmean)
    if running_var is not None:
        _update(running_var, (1 - m) * running_var._data + m * gvar * n / max(n - 1, 1))
    dt = mean._data.dtype
    return make(gmean.astype(dt)), make((1.0 / np.sqrt(gvar + eps)).astype(dt))


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count):
    counts = np.full(mean._data.shape[0], float(count), like=mean._data)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps,
                                               counts)


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g):
    """(sum_dy, sum_dy_xmu, grad_weight, grad_bias) per channel; those not asked for are None."""
    x, dy = input._data, grad_out._data
    ax = _axes(x)
    xmu = x - _b(mean._data, x.ndim)
    sum_dy = dy.sum(axis=ax, dtype=np.float64)
    sum_dy_xmu = (dy * xmu).sum(axis=ax, dtype=np.float64)
    dt = x.dtype
    mdt = mean._data.dtype
    out_in = (make(sum_dy.astype(mdt)), make(sum_dy_xmu.astype(mdt))) if input_g else (None, None)
    wdt = weight._data.dtype if weight is not None else dt
    gw = make((sum_dy_xmu * invstd._data).astype(wdt)) if weight_g else None
    gb = make(sum_dy.astype(wdt)) if bias_g else None
    return out_in + (gw, gb)


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
    """The input's gradient from the global sums: (dy - sum_dy / N - xmu * invstd^2 * sum_dy_xmu / N) * invstd *
    weight, with N the sum of `count`."""
    x, dy = input._data, grad_out._data
    nd = x.ndim
    n = float(as_array(count._data if hasattr(count, "_data") else count).sum())
    inv = _b(invstd._data, nd)
    xmu = x - _b(mean._data, nd)
    gx = (dy - _b(sum_dy._data, nd) / n - xmu * inv * inv * _b(sum_dy_xmu._data, nd) / n) * inv
    if weight is not None:
        gx = gx * _b(weight._data, nd)
    return make(gx.astype(x.dtype, copy=False))


# -- conv_tbc: a 1-d convolution over (time, batch, channel) input, weight (width, in, out) ------------------------
class ConvTbcBackward0(Node):    # y[t] = sum_k x_pad[t + k] @ w[k] + b; dx, dw: the convolution's adjoints, db = sum gy
    __slots__ = ("x", "w", "pad")

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            raise RuntimeError("double backward through conv_tbc is not supported by glassgrad")
        from .conv import conv_input_grad_arr, conv_weight_grad_arr     # (conv loads with nn.functional)
        x, w, p = self.x, self.w, (self.pad,)
        gy = g.transpose(1, 2, 0)
        wc = w.transpose(2, 1, 0)
        gx = conv_input_grad_arr(gy, wc, (x.shape[0],), (1,), p, (1,), 1).transpose(2, 0, 1)
        gw = conv_weight_grad_arr(x.transpose(1, 2, 0), gy, wc.shape, (1,), p, (1,), 1).transpose(2, 1, 0)
        return (np.ascontiguousarray(gx, dtype=x.dtype, like=gx), np.ascontiguousarray(gw, dtype=w.dtype, like=gw),
                g.sum(axis=(0, 1)).astype(g.dtype))


def conv_tbc(input, weight, bias, pad=0):
    if _acs.on:
        return _ac.lower(conv_tbc, input, weight, bias, pad)
    from .conv import conv_arr          # (conv loads with nn.functional)
    x, w, b = input._data, weight._data, bias._data
    if x.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if w.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if b.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if x.shape[2] != w.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if b.shape[0] != w.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    pad = int(pad)
    t_out = x.shape[0] + 2 * pad - w.shape[0] + 1
    if t_out < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {t_out}: [{t_out}, {x.shape[1]}, "
                           f"{w.shape[2]}]")
    y = conv_arr(x.transpose(1, 2, 0), w.transpose(2, 1, 0), (1,), (pad,), (1,), 1)
    y = (y + b.reshape(1, -1, 1)).transpose(2, 0, 1)
    y = np.ascontiguousarray(y, dtype=x.dtype, like=y)
    ins = (input, weight, bias)
    if grad.enabled and any(t._rg for t in ins):
        n = ConvTbcBackward0(tuple(edge(t) if t._rg else (None, 0) for t in ins))
        n.x, n.w, n.pad = x, w, pad
        return make(y, True, n)
    return make(y)
