"""F.linear_cross_entropy (torch 2.13): cross entropy of ``linear(input, linear_weight, linear_bias)``.

torch's ``options`` path runs a chunked custom op (its loss and gradients computed in the forward, a second
backward refused unless allow_retain_graph); glassgrad validates and resolves the options the same way and
computes the same loss and gradients in one piece (equal within float rounding), under the same node names."""
import math
import warnings

import numpy as np

from ..._dtype import int64
from ...autograd.function import Function
from ...ops._core import make
from ...backend import as_array, contiguous
from ._linear import linear
from ._loss import cross_entropy

__all__ = ["linear_cross_entropy"]


def _check(input, linear_weight, target, linear_bias, ignore_index):
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if len(out_features) > 0 and len(num_batches) == 0:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    return num_classes, out_features, in_features, logits_shape


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    num_classes, out_features, in_features, logits_shape = _check(input, linear_weight, target, linear_bias,
                                                                  ignore_index)
    ignore_index = ignore_index if ignore_index is not None else -100
    chunked = (reduction in {"mean", "sum", "none"} and label_smoothing == 0.0 and target.dtype == int64
               and not out_features)
    if options is not None and not chunked:
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in {'mean','sum','none'}, "
            "label_smoothing == 0, target.dtype == int64, out_features == (). Got "
            f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
            f"out_features={tuple(out_features)}, tracing=False, linear_bias.shape="
            f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
    if options is not None and chunked:
        options = options._adjust(num_batches=input.shape[0] if input.dim() == 2 else 1, in_features=in_features,
                                  num_classes=num_classes, dtype=input.dtype, device=input.device)
        return _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options)
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes), in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)


# -- the `options` path: torch's chunked custom ops, computed in one piece ------------------------------
def _chunk_arrays(x, W, target, b, weight, ignore_index, num_classes):
    """Shifted logits, softmax denominators and per-row weights (0 where ignored), as arrays."""
    t = target._data
    mask = t == ignore_index
    tc = np.where(mask, 0, t) if (ignore_index < 0 or ignore_index >= num_classes) else t
    logits = x @ W.T
    if b is not None:
        logits = logits + b
    logits = logits - logits.max(1, keepdims=True)
    denom = np.exp(logits).sum(1)
    wr = (~mask).astype(x.dtype) if weight is None else np.where(mask, 0, weight._data[tc]).astype(x.dtype)
    return logits, denom, wr, tc


def _chunk_grads(x, W, logits, denom, wr, tc, scale):
    """d loss / d (input, linear_weight, linear_bias) with per-row factors `scale` (N,)."""
    d = np.exp(logits) / denom[:, None] * (wr * scale)[:, None]
    d[np.arange(len(tc), like=d), tc] -= wr * scale
    return d @ W, d.T @ x, d.sum(0)


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default(Function):
    @staticmethod
    def forward(ctx, input, linear_weight, target, linear_bias, weight, reduction, ignore_index, allow_retain_graph):
        x, W = input._data, linear_weight._data
        b = None if linear_bias is None else linear_bias._data
        logits, denom, wr, tc = _chunk_arrays(x, W, target, b, weight, ignore_index, W.shape[0])
        total = (wr * (np.log(denom) - logits[np.arange(len(tc), like=x), tc])).sum()
        if reduction == "mean":
            den = wr.sum()
            total = total / den if den != 0 else np.array(np.nan, x.dtype, like=x)
            scale = np.full(len(tc), 1 / den if den != 0 else np.nan, x.dtype, like=x)
        else:
            scale = np.ones(len(tc), x.dtype, like=x)
        ctx.grads = _chunk_grads(x, W, logits, denom, wr, tc, scale)
        ctx.allow_retain_graph = allow_retain_graph
        ctx.with_bias = linear_bias is not None
        return make(as_array(total, x.dtype))

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.grads is None:
            raise RuntimeError("linear_cross_entropy chunked backward called twice; retain_graph=True / double "
                               "backward are not supported.")
        gi, gw, gb = ctx.grads
        if not ctx.allow_retain_graph:
            ctx.grads = None
        g = grad_output._data
        return (make(gi * g), make(gw * g), None, make(gb * g) if ctx.with_bias else None, None, None, None, None)


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default(Function):
    @staticmethod
    def forward(ctx, input, linear_weight, target, linear_bias, weight, ignore_index):
        x, W = input._data, linear_weight._data
        b = None if linear_bias is None else linear_bias._data
        logits, denom, wr, tc = _chunk_arrays(x, W, target, b, weight, ignore_index, W.shape[0])
        ctx.saved = (x, W, logits, denom, wr, tc)
        ctx.with_bias = linear_bias is not None
        return make(contiguous(wr * (np.log(denom) - logits[np.arange(len(tc), like=x), tc])))

    @staticmethod
    def backward(ctx, grad_output):
        gi, gw, gb = _chunk_grads(*ctx.saved, grad_output._data)
        return make(gi), make(gw), None, make(gb) if ctx.with_bias else None, None, None


def _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options):
    has_batches = input.dim() == 2
    if not has_batches:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    if reduction == "none":
        fn = GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default
        result = fn.apply(input, linear_weight, target, linear_bias, weight, ignore_index)
    else:
        fn = GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default
        result = fn.apply(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
                          options.allow_retain_graph)
    return result if has_batches else result.squeeze(0)
