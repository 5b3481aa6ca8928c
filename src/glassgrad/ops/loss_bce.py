"""Binary cross entropy, on probabilities and on logits (PyTorch's BinaryCrossEntropyBackward0 and
BinaryCrossEntropyWithLogitsBackward0); the shared loss helpers are in ops/loss.py.

ops: binary_cross_entropy, binary_cross_entropy_with_logits
"""
import numpy as np

from ..autograd.graph import Node
from .loss import check_nondiff, _cname, _same_dtype, _loss_out
from ._core import broadcast_error, as_array
from .binary import clamp_min, clamp_max
from .unary import log1p

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits"]


def _clamp_min(ns, a, v):
    if ns.is_tensor_mode:
        return clamp_min(a, v)
    return np.maximum(a, a.dtype.type(v))


def _log_sigmoid(ns, x):
    """log(sigmoid(x)), stable: min(x, 0) - log1p(exp(-|x|))."""
    if ns.is_tensor_mode:
        return clamp_max(x, 0.0) - log1p(ns.exp(-ns.abs(x)))
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def _weighted_grad(ns, node, g):
    """g times the reduction's scale and the node's elementwise weight (when it has one)."""
    gw = g * node.k if node.k != 1.0 else g
    if node.w is not None:
        gw = gw * ns.const(node.w, g)
    return gw


class BinaryCrossEntropyBackward0(Node):
    """dx = g w (x - t) / max(x (1 - x), 1e-12); dt = -g w logit(x)."""
    __slots__ = ("k", "w")
    _saved_names = ("self", "target")

    def backward(self, ns, g):
        x, t = ns.unpack(self)
        gw = _weighted_grad(ns, self, g)
        gx = gt = None
        if self.next_functions[0][0] is not None:
            gx = gw * (x - t) / _clamp_min(ns, (1 - x) * x, 1e-12)
        if self.next_functions[1][0] is not None:
            gt = gw * (ns.log(1 - x) - ns.log(x))
        return (gx, gt)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    check_nondiff("binary_cross_entropy", "weight", weight)
    if target._data.dtype != input._data.dtype:
        raise RuntimeError(f"Found dtype {_cname(target._data.dtype)} but expected {_cname(input._data.dtype)}")
    x, t = _same_dtype(input, target)
    if not np.all((x >= 0) & (x <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not np.all((t >= 0) & (t <= 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore", invalid="ignore"):
        lx = np.maximum(np.log(x), x.dtype.type(-100))
        l1x = np.maximum(np.log1p(-x), x.dtype.type(-100))
        L = -(t * lx + (1 - t) * l1x)
    w = None
    if weight is not None:
        w = np.broadcast_to(weight._data.astype(x.dtype, copy=False), x.shape)
        L = L * w
    L = L.astype(x.dtype, copy=False)
    return _loss_out(BinaryCrossEntropyBackward0, input, target, reduction, L, w=w)


class BinaryCrossEntropyWithLogitsBackward0(Node):
    __slots__ = ("k", "w", "pw", "xshape", "tshape")
    _saved_names = ("self", "target")

    def backward(self, ns, g):
        x, t = ns.unpack(self)
        gw = _weighted_grad(ns, self, g)
        pw = None if self.pw is None else ns.const(self.pw, g)
        gx = gt = None
        if self.next_functions[0][0] is not None:
            if pw is None:
                gx = (ns.sigmoid(x) - t) * gw
            else:
                pt = pw * t
                gx = ((pt + 1 - t) * ns.sigmoid(x) - pt) * gw
            gx = ns.sum_to(gx, self.xshape)
        if self.next_functions[1][0] is not None:
            if pw is None:
                gt = -x * gw
            else:
                gt = (_log_sigmoid(ns, -x) - _log_sigmoid(ns, x) * pw) * gw
            gt = ns.sum_to(gt, self.tshape)
        return (gx, gt)


def _check_broadcastable(a, b):
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        raise broadcast_error(a, b) from None


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="mean"):
    check_nondiff("binary_cross_entropy_with_logits", "weight", weight)
    check_nondiff("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    x, t = _same_dtype(input, target)
    dt = x.dtype
    ls = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    pw = w = None
    if pos_weight is not None:
        pw = pos_weight._data.astype(dt, copy=False)
        _check_broadcastable(pw.shape, t.shape)
        ls = ls * ((pw - 1) * t + 1)
    L = (1 - t) * x - ls
    if weight is not None:
        w = weight._data.astype(dt, copy=False)
        _check_broadcastable(L.shape, w.shape)
        L = L * w
    L = as_array(L, dt)
    return _loss_out(BinaryCrossEntropyWithLogitsBackward0, input, target, reduction, L, w=w, pw=pw,
                     xshape=x.shape, tshape=t.shape)
