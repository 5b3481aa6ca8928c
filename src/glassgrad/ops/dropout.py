"""Dropout: the random masks of dropout, feature dropout and alpha dropout (composites, as in PyTorch).

ops: dropout, feature_dropout, alpha_dropout, feature_alpha_dropout, each with its in-place form
     (dropout_, ...); the shared body is _dropout_impl, which nn.functional's dropout family calls.
"""
import math

import numpy as np

from ._core import as_array, make, edge, grad
from ..autograd.graph import Node
from .creation import empty, empty_like, zeros
from .random import dropout_mask, draws_on_device

# the torch-namespace functions (torch.dropout, torch.feature_dropout_, ...); nn.functional wraps them
__all__ = ["dropout", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_",
           "feature_alpha_dropout", "feature_alpha_dropout_"]


# dropout: PyTorch's CPU kernel draws the mask as empty_like(x).bernoulli_(1 - p) ((N, C, 1, ...) for
# feature dropout), divides it by 1 - p in x's dtype and multiplies (MulBackward0; the alpha forms add a
# shift: AddBackward0).  The same steps on glassgrad's bit-exact generator give the same mask.
_ALPHA = 1.7580993408473766


def _bernoulli_like(x, q):
    """``empty_like(x).bernoulli_(q)``: empty_like keeps x's memory layout and bernoulli_ fills memory in
    order, so a transposed input gets its mask drawn in its storage order."""
    a = x._data
    if a.ndim < 2 or a.flags.c_contiguous:
        return empty_like(x).bernoulli_(q)
    st = [abs(s) for s in a.strides]
    perm = sorted(range(a.ndim), key=lambda i: (-st[i], i))
    n = empty(tuple(a.shape[i] for i in perm), dtype=x.dtype, device=x.device).bernoulli_(q)
    return n.permute(*[perm.index(i) for i in range(a.ndim)])


def _dropout_impl(input, p, train, feature, alpha, inplace):
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input._data.size == 0:
        return input
    if p == 1:
        z = zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(z) if inplace else input.mul(z)
    if not (feature or alpha or inplace) and draws_on_device(input):
        return native_dropout(input, p, True)[0]        # torch's fused CUDA kernel (NativeDropoutBackward0)
    if feature:
        if input._data.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = input._data.shape[:2] + (1,) * (input._data.ndim - 2)
        noise = empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    else:
        noise = _bernoulli_like(input, 1 - p)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
        noise.mul_(a)
        return (input.mul_(noise) if inplace else input.mul(noise)).add_(b)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input.mul(noise)


def _dropout_variant(name, feature, alpha, inplace):
    """torch.<name>(input, p, train): _dropout_impl with the variant's feature / alpha / inplace flags."""
    def variant(input, p, train):
        return _dropout_impl(input, p, train, feature, alpha, inplace)
    variant.__name__ = variant.__qualname__ = name
    return variant


dropout = _dropout_variant("dropout", False, False, False)
dropout_ = _dropout_variant("dropout_", False, False, True)
feature_dropout = _dropout_variant("feature_dropout", True, False, False)
feature_dropout_ = _dropout_variant("feature_dropout_", True, False, True)
alpha_dropout = _dropout_variant("alpha_dropout", False, True, False)
alpha_dropout_ = _dropout_variant("alpha_dropout_", False, True, True)
feature_alpha_dropout = _dropout_variant("feature_alpha_dropout", True, True, False)
feature_alpha_dropout_ = _dropout_variant("feature_alpha_dropout_", True, True, True)


# -- native_dropout ------------------------------------------------------------------------------------------
class NativeDropoutBackward0(Node):    # y = x * mask * scale; dx = gy * (mask * scale)
    __slots__ = ("factor",)
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (g * ns.const(self.factor, g),)


def native_dropout(input, p, train):
    """(output, mask): mask drawn as torch's CPU kernel draws it (bernoulli_(1 - p) in memory order), output =
    input * mask / (1 - p); not training: a copy and an all-True mask."""
    p = float(p)
    x = input._data
    if train is None or train:
        if not 0 <= p <= 1:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
        if not draws_on_device(input) or p in (0, 1) or not x.size:
            mask = _bernoulli_like(input, 1 - p)._data.astype(bool)
        else:
            mask = dropout_mask(input, 1 - p)       # CUDA: the fused kernel's layout of the Philox stream
        scale = 0.0 if p == 1 else 1.0 / (1 - p)
    else:
        mask, scale = np.ones(x.shape, bool, like=x), 1.0
    y = (x * mask).astype(x.dtype, copy=False) * as_array(scale, x.dtype)
    m = make(np.ascontiguousarray(mask, like=mask))
    if input._rg and grad.enabled:
        n = NativeDropoutBackward0((edge(input),))
        n.factor = mask.astype(x.dtype) * as_array(scale, x.dtype)
        return make(y, True, n), m
    return make(y), m
