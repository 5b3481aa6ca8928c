"""F.linear_cross_entropy (torch 2.13): cross entropy of ``linear(input, linear_weight, linear_bias)``.

torch's ``options`` path runs a chunked custom op; glassgrad validates and resolves the options the same
way and computes the same loss in one piece (equal within float rounding)."""
import math
import warnings

from ..._dtype import int64
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
        options._adjust(num_batches=input.shape[0] if input.dim() == 2 else 1, in_features=in_features,
                        num_classes=num_classes, dtype=input.dtype, device=input.device)
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes), in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)
