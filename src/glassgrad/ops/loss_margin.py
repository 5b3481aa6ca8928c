"""Margin losses (PyTorch's SoftMarginLossBackward0, MultiMarginLossBackward0,
MultilabelMarginLossBackward0); the shared loss helpers are in ops/loss.py.

ops: soft_margin_loss (log1p(exp(-t x))), multi_margin_loss (hinge over the classes other than the
     target), multilabel_margin_loss (hinge over the classes outside each row's target list)
"""
import numpy as np

from ._core import make, edge, save_in, grad, full_precision
from ..autograd.graph import Node
from .loss import check_nondiff, reduce_array, _scale, _shape_of, _const_grad, _check_weight_dtype, _same_dtype
from .loss import _shape_str

__all__ = ["soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss"]


class SoftMarginLossBackward0(Node):
    """loss = log1p(exp(-t x)); dx = -t z / (1 + z) g with z = exp(-t x)."""
    __slots__ = ("k",)
    _saved_names = ("self", "target")

    def backward(self, ns, g):
        x, t = ns.unpack(self)
        z = ns.exp(-t * x)
        gk = g * self.k if self.k != 1.0 else g
        return (-t * z / (1 + z) * gk,)


def soft_margin_loss(input, target, reduction="mean"):
    check_nondiff("soft_margin_loss", "target", target)
    x, t = _same_dtype(input, target)
    with np.errstate(over="ignore"):
        L = np.log1p(np.exp(-t * x)).astype(x.dtype, copy=False)
    y = reduce_array(L, reduction)
    if input._rg and grad.enabled:
        n = SoftMarginLossBackward0((edge(input),))     # target: no edge, as torch's
        n.k = _scale(reduction, L.size)
        n._saved = (save_in(input), save_in(target))
        return make(y, True, n)
    return make(y)


def _check_vector_or_matrix(x):
    if x.ndim > 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{_shape_str(x.shape)}")


class MultiMarginLossBackward0(Node):
    __slots__ = ("coef", "bdim")
    _saved_names = ("self",)

    def backward(self, ns, g):
        if self.bdim and len(_shape_of(ns, g)) == 1:
            g = ns.unsqueeze(g, 1)
        return (_const_grad(ns, self.coef, g, "aten::multi_margin_loss_backward", self),)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, reduction="mean"):
    check_nondiff("multi_margin_loss", "weight", weight)
    x = input._data
    full_precision("multi_margin_loss_cpu_kernel", x.dtype)
    t = target._data
    nd = x.ndim
    _check_vector_or_matrix(x)
    x2 = x.reshape(1, -1) if nd <= 1 else x
    N, C = x2.shape
    t1 = t.reshape(-1)
    if t.ndim > 1 or t1.size != N:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of "
                           f"input samples (batch size). Expected target size [{N}], but got "
                           f"{_shape_str(t.shape)}. Input has shape {_shape_str(x.shape)}.")
    if t1.size and (t1.min() < 0 or t1.max() >= C):
        raise RuntimeError("target out of range")
    if weight is not None and weight._data.size != C and weight._data.ndim:
        raise RuntimeError("inconsistent weight size, expected [" + str(C) + "] but got "
                           + _shape_str(weight._data.shape))
    _check_weight_dtype(x, weight)
    t1 = t1.astype(np.int64)
    xy = np.take_along_axis(x2, t1[:, None], 1)
    z = margin - xy + x2
    other = np.ones(x2.shape, bool, like=x2)
    if N:
        np.put_along_axis(other, t1[:, None], False, 1)
    pos = (z > 0) & other
    h = np.where(pos, z if p == 1 else z * z, 0)
    wt = None
    if weight is not None:
        wt = weight._data.astype(x.dtype, copy=False).reshape(-1)[t1][:, None]
        h = h * wt
    L = (h.sum(1) / C).astype(x.dtype)
    if nd <= 1:
        L = L.reshape(())
    y = reduce_array(L, reduction)
    if input._rg and grad.enabled:
        d = np.where(pos, 1.0 if p == 1 else 2 * z, 0).astype(x.dtype)
        if wt is not None:
            d = d * wt
        d = d / C
        if N:
            np.put_along_axis(d, t1[:, None], -d.sum(1, keepdims=True), 1)
        d = (d * _scale(reduction, L.size)).astype(x.dtype)
        n = MultiMarginLossBackward0((edge(input),))
        n.coef = d.reshape(x.shape)
        n.bdim = nd == 2 and reduction == "none"
        n._saved = (save_in(input),)
        return make(y, True, n)
    return make(y)


class MultilabelMarginLossBackward0(MultiMarginLossBackward0):
    __slots__ = ()

    def backward(self, ns, g):
        if self.bdim and len(_shape_of(ns, g)) == 1:
            g = ns.unsqueeze(g, 1)
        return (_const_grad(ns, self.coef, g, "aten::multilabel_margin_loss_backward", self),)


def multilabel_margin_loss(input, target, reduction="mean"):
    x = input._data
    full_precision("multilabel_margin_loss_forward_out_frame", x.dtype)
    t = target._data
    nd = x.ndim
    _check_vector_or_matrix(x)
    if t.shape != x.shape and not (nd <= 1 and t.ndim <= 1 and t.size == x.size):
        raise RuntimeError(f"inconsistent target size: {_shape_str(t.shape)} for input of size: "
                           f"{_shape_str(x.shape)}")
    x2 = x.reshape(1, -1) if nd <= 1 else x
    t2 = t.reshape(x2.shape).astype(np.int64)
    N, C = x2.shape
    # the target list of a row is its prefix before the first -1
    valid = np.cumprod(t2 != -1, axis=1).astype(bool)
    if np.any((t2 < -1) | (t2 >= C)):
        raise RuntimeError("argument #2 'target' is out of range")
    is_t = np.zeros((N, C), bool, like=x2)
    rows = np.arange(N, like=x2)
    is_t[np.nonzero(valid)[0], t2[valid]] = True
    nont = ~is_t
    L = np.zeros(N, x.dtype, like=x2)
    d = np.zeros((N, C), x.dtype, like=x2)
    # one target slot at a time, vectorised over the batch: O(N C) memory
    for j in range(int(valid.sum(1).max()) if N else 0):
        v = valid[:, j]
        c = np.where(v, t2[:, j], 0)
        z = 1 - np.take_along_axis(x2, c[:, None], 1) + x2
        act = (z > 0) & nont & v[:, None]
        L += np.where(act, z, 0).sum(1).astype(x.dtype)
        d += act
        d[rows, c] -= act.sum(1)
    L = (L / C).astype(x.dtype)
    if nd <= 1:
        L = L.reshape(())
    y = reduce_array(L, reduction)
    if input._rg and grad.enabled:
        d = d / C * _scale(reduction, L.size)
        n = MultilabelMarginLossBackward0((edge(input),))
        n.coef = d.astype(x.dtype).reshape(x.shape)
        n.bdim = nd == 2 and reduction == "none"
        n._saved = (save_in(input),)
        return make(y, True, n)
    return make(y)
