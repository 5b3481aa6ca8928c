"""nn.functional: loss functions (PyTorch 2.13 semantics).

Losses with their own PyTorch backward node call the primitives of ops/loss.py (nll_loss_nd,
cross_entropy, mse / smooth_l1 / huber), ops/loss_bce.py, ops/loss_margin.py and ops/loss_ctc.py; the others
are composites of glassgrad ops written as PyTorch writes them, so grad_fn names (the last op) agree.
"""
import math
import warnings

import numpy as np

from ..._tensor import Tensor, _make
from ...backend import as_array, to_device, to_host
from ...autograd.grad_mode import no_grad
from ...ops import loss as _L, loss_bce as _BCE, loss_margin as _M
from ...ops.loss_ctc import ctc_loss_per_sample
from ...ops import (arithmetic as _A, unary as _U, binary as _B, ternary as _T, masked as _Mk, creation as _C,
                    views as _V, shape as _S, reduction as _R)
from ._activation import pairwise_distance
from ..._autocast_state import state as _acs
from ...ops import _autocast as _ac

__all__ = ["cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss",
           "margin_ranking_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "hinge_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss", "multilabel_soft_margin_loss",
           "soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss", "ctc_loss"]


# -- reduction arguments (torch.nn._reduction) ------------------------------------------------------
def _legacy_get_string(size_average, reduce, emit_warning=True, stacklevel=3):
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      UserWarning, stacklevel=stacklevel)
    return ret


def _get_enum(reduction):
    """Validate a reduction string; returns 'none' | 'mean' | 'sum'."""
    if reduction in ("none", "mean", "sum"):
        return reduction
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      UserWarning, stacklevel=3)
        return "mean"
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    return _get_enum(reduction)


def _apply(out, reduction):
    if reduction == "mean":
        return out.mean()
    if reduction == "sum":
        return out.sum()
    return out


def _size_warning(input, target, stacklevel=3):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size "
                      f"({input.size()}). This will likely lead to incorrect results due to broadcasting. "
                      f"Please ensure they have the same size.", UserWarning, stacklevel=stacklevel)


def _pointwise_args(input, target, size_average, reduce, reduction):
    """input and target broadcast together, and the reduction string (legacy size_average / reduce applied),
    after PyTorch's warnings; for the losses called as loss(input, target, size_average, reduce, reduction)."""
    _size_warning(input, target, stacklevel=4)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce, stacklevel=4)
    x, t = _S.broadcast_tensors(input, target)
    return x, t, reduction


# -- cross entropy / nll ----------------------------------------------------------------------------
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    if _acs.on:
        return _ac.fp32(nll_loss, input, target, weight, size_average, ignore_index, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    return _L.nll_loss_nd(input, target, weight, reduction, ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    if _acs.on:
        return _ac.fp32(cross_entropy, input, target, weight, size_average, ignore_index, reduce, reduction,
                        label_smoothing)
    reduction = _reduction(size_average, reduce, reduction)
    return _L.cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing)


# -- regression losses ------------------------------------------------------------------------------
def _weighted(err, weight, input, reduction, plain_mean=False):
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    w = err * weight
    if reduction == "none":
        return w
    if reduction == "sum":
        return _R.sum(w)
    if reduction == "mean":
        return w.mean() if plain_mean else _R.sum(w) / _R.sum(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def _l1(x, t, reduction):
    return _apply(_U.abs(x - t), _get_enum(reduction))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _acs.on:
        return _ac.fp32(mse_loss, input, target, size_average, reduce, reduction, weight)
    x, t, reduction = _pointwise_args(input, target, size_average, reduce, reduction)
    if weight is not None:
        return _weighted(_A.pow(x - t, 2), weight, input, reduction)
    return _L.mse_loss(x, t, _get_enum(reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _acs.on:
        return _ac.fp32(l1_loss, input, target, size_average, reduce, reduction, weight)
    x, t, reduction = _pointwise_args(input, target, size_average, reduce, reduction)
    if weight is not None:
        return _weighted(_U.abs(x - t), weight, input, reduction)
    return _l1(x, t, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    if _acs.on:
        return _ac.fp32(smooth_l1_loss, input, target, size_average, reduce, reduction, beta)
    x, t, reduction = _pointwise_args(input, target, size_average, reduce, reduction)
    if beta == 0.0:
        return _l1(x, t, reduction)
    return _L.smooth_l1_loss(x, t, _get_enum(reduction), beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if _acs.on:
        return _ac.fp32(huber_loss, input, target, reduction, delta, weight)
    _size_warning(input, target)
    x, t = _S.broadcast_tensors(input, target)
    if weight is None:
        return _L.huber_loss(x, t, _get_enum(reduction), delta)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    return _weighted(_L.huber_loss(x, t, "none", delta), weight, input, reduction, True)


# -- binary / probabilistic losses ------------------------------------------------------------------
def _broadcast_shapes_msg(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        pass
    n = max(len(s) for s in shapes)
    res = [1] * n
    for s in shapes:
        for i in range(-1, -len(s) - 1, -1):
            if res[i] == 1 or s[i] == 1 or res[i] == s[i]:
                res[i] = max(res[i], s[i])
    for k, s in enumerate(shapes):
        for i in range(-1, -len(s) - 1, -1):
            if s[i] != 1 and s[i] != res[i]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[i]} at {i}! Mismatching "
                                   f"argument at index {k} had torch.Size({list(s)}); but expected shape should be "
                                   f"broadcastable to {list(res)}")
    raise RuntimeError("shapes cannot be broadcast")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if _acs.on:
        return _ac.fp32(binary_cross_entropy, input, target, weight, size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        new = _broadcast_shapes_msg(tuple(target.shape), tuple(weight.shape))
        weight = weight.expand(new)
    return _BCE.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    if _acs.on:
        return _ac.fp32(binary_cross_entropy_with_logits, input, target, weight, size_average, reduce, reduction,
                        pos_weight)
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return _BCE.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if _acs.on:
        return _ac.fp32(kl_div, input, target, size_average, reduce, reduction, log_target)
    if size_average is not None or reduce is not None:
        red = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          UserWarning, stacklevel=2)
        red = "sum" if reduction == "batchmean" else _get_enum(reduction)
    if log_target:
        out = _U.exp(target) * (target - input)
    else:
        out = _B.xlogy(target, target) - target * input
    reduced = _apply(out, red)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    if _acs.on:
        return _ac.fp32(poisson_nll_loss, input, target, log_input, full, size_average, eps, reduce, reduction)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = _U.exp(input) - target * input
    else:
        loss = input - target * _U.log(input + eps)
    if full:
        st = target * _U.log(target) - target + 0.5 * _U.log(2 * math.pi * target)
        loss = loss + _Mk.masked_fill(st, target <= 1, 0)
    return _apply(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _C.ones_like(input)
    elif bool(np.any(var._data < 0)):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape)[:-1] == tuple(var.shape):
            var = _V.unsqueeze(var, -1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (_U.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply(loss, reduction)


# -- margin / embedding losses ----------------------------------------------------------------------
def _pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return pairwise_distance(x1, x2, p, eps, keepdim)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    if _acs.on:
        return _ac.fp32(cosine_embedding_loss, input1, input2, target, margin, size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1 and not (input1.dim() == 2 and input2.dim() == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{_L._shape_str(input1.shape)} and {_L._shape_str(input2.shape)}.")
    if td == 0 and not (input1.dim() == 1 and input2.dim() == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{_L._shape_str(input1.shape)} and {_L._shape_str(input2.shape)}.")
    eps = 1e-12
    prod_sum = (input1 * input2).sum(td)
    m1 = (input1 * input1).sum(td) + eps
    m2 = (input2 * input2).sum(td) + eps
    cos = prod_sum / _U.sqrt(m1 * m2)
    zeros = _C.zeros_like(cos)
    pos = 1 - cos
    neg = _B.clamp_min(cos - margin, 0)
    out = _T.where(target == 1, pos, zeros) + _T.where(target == -1, neg, zeros)
    return _apply(out, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    if _acs.on:
        return _ac.fp32(margin_ranking_loss, input1, input2, target, margin, size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _apply(_B.clamp_min(-target * (input1 - input2) + margin, 0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    if _acs.on:
        return _ac.fp32(hinge_embedding_loss, input, target, margin, size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    zeros = _C.zeros_like(input)
    mc = _B.clamp_min(margin - input, 0)
    out = _T.where(target != 1, mc, zeros) + _T.where(target != -1, input, zeros)
    return _apply(out, reduction)


def _triplet_dims(a, p, n):
    if not (a.dim() == p.dim() == n.dim()):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a.dim()}D, positive {p.dim()}D, and negative "
                           f"{n.dim()}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    if _acs.on:
        return _ac.fp32(triplet_margin_loss, anchor, positive, negative, margin, p, eps, swap, size_average, reduce,
                        reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _triplet_dims(anchor, positive, negative)
    dp = _pairwise_distance(anchor, positive, p, eps)
    dn = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        dn = _B.minimum(dn, _pairwise_distance(positive, negative, p, eps))
    return _apply(_B.clamp_min(margin + dp - dn, 0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _triplet_dims(anchor, positive, negative)
    dist = distance_function if distance_function is not None else _pairwise_distance
    dp = dist(anchor, positive)
    dn = dist(anchor, negative)
    if swap:
        dn = _B.minimum(dn, dist(positive, negative))
    return _apply(_B.clamp_min(margin + dp - dn, 0), reduction)


def _logsigmoid(x):
    from . import _activation
    f = getattr(_activation, "logsigmoid", None)
    if f is not None:
        return f(x)
    return _B.clamp_max(x, 0) - _U.log1p(_U.exp(-_U.abs(x)))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    loss = -(target * _logsigmoid(input) + (1 - target) * _logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    C = input.size(class_dim)
    loss = loss.sum(dim=class_dim) / C
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if _acs.on:
        return _ac.fp32(soft_margin_loss, input, target, size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    return _M.soft_margin_loss(input, target, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    if _acs.on:
        return _ac.fp32(multi_margin_loss, input, target, p, margin, weight, size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _M.multi_margin_loss(input, target, p, margin, weight, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if _acs.on:
        return _ac.fp32(multilabel_margin_loss, input, target, size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    return _M.multilabel_margin_loss(input, target, reduction)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    if _acs.on:
        return _ac.fp32(ctc_loss, log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)
    reduction = _get_enum(reduction)
    for v in (input_lengths, target_lengths):
        if not isinstance(v, (Tensor, tuple, list)):
            raise TypeError(f"ctc_loss() received an invalid combination of arguments - got "
                            f"({type(v).__name__} lengths), but expected tuple of ints or Tensor lengths")
    batched = log_probs.dim() == 3
    lp, tg = log_probs, targets
    il, tl = input_lengths, target_lengths
    if not batched:
        lp = _V.unsqueeze(log_probs, 1)
        tg = _V.unsqueeze(targets, 0)
        # the lengths drive the per-sample loops: read on the host (an explicit copy of a device tensor's few ints)
        il = [int(v) for v in np.asarray(to_host(il._data) if isinstance(il, Tensor) else il).reshape(-1)]
        tl = [int(v) for v in np.asarray(to_host(tl._data) if isinstance(tl, Tensor) else tl).reshape(-1)]
    res = ctc_loss_per_sample(lp, tg, il, tl, blank, zero_infinity)
    if zero_infinity:
        res = _T.where(res == float("inf"), _make(np.zeros((), res._data.dtype, like=res._data)), res)
    if reduction == "mean":
        # (lengths may be a CPU tensor beside device log-probs, as torch allows: moved to the loss's device)
        tlv = to_device(tl._data, res.device) if isinstance(tl, Tensor) else \
            np.asarray(list(tl) if not isinstance(tl, int) else [tl], like=res._data)
        tlt = _B.clamp_min(_make(as_array(tlv, res._data.dtype).reshape(-1)), 1)
        return (res / tlt).mean()
    if reduction == "sum":
        return res.sum()
    return res if batched else _V.squeeze(res, 0)
