"""Loss primitives with their own PyTorch grad_fn (NllLossBackward0, MseLossBackward0, ...).

Each takes tensors and a reduction string ('none' | 'mean' | 'sum'); argument parsing, legacy
size_average/reduce handling, warnings and the composite losses live in nn/functional/_loss.py.
Backward formulas are written once with F (arrays or Tensors), so they are differentiable again
where PyTorch's are; where PyTorch has no double backward the gradient carries a NotImplemented
node that raises PyTorch's error when differentiated.

ops: nll_loss_nd (NllLossBackward0 / NllLoss2DBackward0), mse_loss, smooth_l1_loss, huber_loss,
     binary_cross_entropy, binary_cross_entropy_with_logits, soft_margin_loss, multi_margin_loss,
     multilabel_margin_loss (ctc_loss is in loss_ctc.py)
"""
import numpy as np

from .. import _dtype
from ._core import make, edge, save_in, grad
from ..autograd.graph import Node

__all__ = ["nll_loss_nd", "mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "soft_margin_loss", "multi_margin_loss",
           "multilabel_margin_loss", "check_nondiff", "reduce_array", "NotImplementedNode"]


# -- shared helpers ---------------------------------------------------------------------------------
def reduce_array(L, reduction):
    """Apply a loss reduction to the elementwise loss array L (mean of nothing is nan, as PyTorch)."""
    if reduction == "none":
        return L
    s = L.sum(dtype=L.dtype)
    if reduction == "sum":
        return np.asarray(s)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(s / L.dtype.type(L.size))


def _scale(reduction, n):
    """What the incoming gradient is multiplied by: 1/numel for 'mean'."""
    if reduction == "mean":
        return 1.0 / n if n else float("nan")
    return 1.0


def check_nondiff(fname, argname, t):
    """PyTorch refuses, at the forward, an input it cannot differentiate that requires grad."""
    if t is not None and t._rg and grad.enabled:
        raise RuntimeError(f"The function '{fname}' is not differentiable with respect to argument "
                           f"'{argname}'. This input cannot have requires_grad True.")


def _clamp_min(F, a, v):
    if F.is_tensor_mode:
        from .binary import clamp_min
        return clamp_min(a, v)
    return np.maximum(a, a.dtype.type(v))


def _log_sigmoid(F, x):
    """log(sigmoid(x)), stable: min(x, 0) - log1p(exp(-|x|))."""
    if F.is_tensor_mode:
        from .binary import clamp_max
        from .unary import log1p
        return clamp_max(x, 0.0) - log1p(F.exp(-F.abs(x)))
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def _shape_of(F, t):
    return F.data(t).shape


class NotImplementedNode(Node):
    """Stands for a PyTorch backward that has no derivative (name: torch::autograd::NotImplemented)."""
    __slots__ = ("what",)

    def backward(self, F, g):
        raise RuntimeError(f"derivative for {self.what} is not implemented")


NotImplementedNode.__name__ = "NotImplemented"
NotImplementedNode.__qualname__ = "NotImplemented"


def _const_grad(F, coef, g, what, node):
    """coef * g where the result is not differentiable again (PyTorch: NotImplemented); the result
    depends on g and on the node's saved input, as PyTorch's."""
    if not F.is_tensor_mode:
        return coef * g
    y = coef * g._data
    if not grad.enabled:
        return make(y)
    x, = F.unpack(node)
    if not (g._rg or x._rg):
        return make(y)
    n = NotImplementedNode((edge(g), edge(x)))
    n.what = what
    return make(y, True, n)


def _cname(npdt):
    return _dtype.from_numpy_dtype(np.dtype(npdt)).name_c


def _check_weight_dtype(x, weight):
    if weight is not None and weight._data.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {_cname(x.dtype)} but found {_cname(weight._data.dtype)}")


def _check_float(x, kernel):
    if x.dtype.kind not in "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_cname(x.dtype)}'")


# -- nll_loss ---------------------------------------------------------------------------------------
class NllLossBackward0(Node):
    """dx[i, t_i] = coef_i * g_i (coef = -w[t_i], / total_weight for 'mean'; 0 where ignored)."""
    __slots__ = ("tgt", "coef", "shape", "dt", "bdim")
    _saved_names = ("self",)

    def _mask(self):
        M = np.zeros(self.shape, self.dt)
        if M.size:
            if self.bdim is None:
                M[self.tgt] = self.coef
            else:
                np.put_along_axis(M, np.expand_dims(self.tgt, 1), np.expand_dims(self.coef, 1), 1)
        return M

    def backward(self, F, g):
        M = self._mask()
        unsq = self.bdim is not None and len(_shape_of(F, g)) == len(self.shape) - 1
        if not F.is_tensor_mode:
            return (M * (np.expand_dims(g, 1) if unsq else g),)
        gd = g._data
        y = M * (np.expand_dims(gd, 1) if unsq else gd)
        x, = F.unpack(self)
        if not grad.enabled or not (g._rg or x._rg):
            return (make(y),)
        # PyTorch's double backward node: linear in g, zero derivative in self
        n = _NLL_BB[type(self)]((edge(g), edge(x)))
        n.M, n.unsq, n.gshape = M, unsq, gd.shape
        return (make(y, True, n),)


class NllLoss2DBackward0(NllLossBackward0):
    __slots__ = ()


class NllLossBackwardBackward0(Node):
    """grad_input = M * g: d/dg is the loss of the incoming gradient, d/dself is zero."""
    __slots__ = ("M", "unsq", "gshape")

    def backward(self, F, gg):
        if self.next_functions[0][0] is None:
            return (None, None)
        p = F.const(self.M, gg) * gg
        dg = F.sum(p, 1) if self.unsq else F.sum(p, tuple(range(len(self.M.shape))))
        return (F.reshape(dg, self.gshape), None)


class NllLoss2DBackwardBackward0(NllLossBackwardBackward0):
    __slots__ = ()


_NLL_BB = {NllLossBackward0: NllLossBackwardBackward0, NllLoss2DBackward0: NllLoss2DBackwardBackward0}


_TARGET_OK = (np.dtype(np.int64), np.dtype(np.uint8))


def _nll_core(input, target, weight, reduction, ignore_index, cls):
    """input (N, C, ...) with target (N, ...), or input (C,) with a 0-d target."""
    x = input._data
    t = target._data
    _check_float(x, "nll_loss_out_frame" if cls is NllLossBackward0 else "nll_loss2d_forward_out_frame")
    _check_weight_dtype(x, weight)
    if t.dtype not in _TARGET_OK:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_dtype.from_numpy_dtype(t.dtype).name_c}")
    C = x.shape[1] if x.ndim > 1 else x.shape[0]
    t = t.astype(np.int64, copy=False)
    ign = t == ignore_index
    bad = ~ign & ((t < 0) | (t >= C))
    if bad.any():
        raise IndexError(f"Target {t[bad].reshape(-1)[0]} is out of bounds.")
    ts = np.where(ign, 0, t)
    if weight is not None:
        w = weight._data.astype(x.dtype, copy=False)
        wt = np.where(ign, 0, w[ts]).astype(x.dtype)
    else:
        wt = (~ign).astype(x.dtype)
    if x.ndim == 1:
        picked = x[ts]
    else:
        picked = np.take_along_axis(x, np.expand_dims(ts, 1), 1)[:, 0] if x.size else \
            np.zeros(ts.shape, x.dtype)
    L = -(picked * wt)
    L = np.where(ign, x.dtype.type(0), L).astype(x.dtype)
    if reduction == "none":
        y = L
        coef = -wt
    elif reduction == "sum":
        y = np.asarray(L.sum(dtype=x.dtype))
        coef = -wt
    else:
        tw = wt.sum(dtype=x.dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            y = np.asarray(L.sum(dtype=x.dtype) / tw)
            coef = (-wt / tw) if tw != 0 else np.zeros_like(wt)
    if input._rg and grad.enabled:
        n = cls((edge(input),))
        n.tgt, n.coef, n.shape, n.dt = ts, coef.astype(x.dtype), x.shape, x.dtype
        n.bdim = None if x.ndim == 1 else 1
        n._saved = (save_in(input),)
        return make(y, True, n)
    return make(y)


def _shape_str(s):
    return "[" + ", ".join(str(v) for v in s) + "]"


def nll_loss_nd(input, target, weight=None, reduction="mean", ignore_index=-100):
    """torch._C._nn.nll_loss_nd: dispatches on input.dim() like PyTorch (1/2: nll_loss, 4: nll_loss2d,
    3 and > 4: reshaped to 4-d and viewed back)."""
    x = input._data
    t = target._data
    nd = x.ndim
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1 and t.ndim >= 1 and x.shape[0] != t.shape[0] or nd != 1 and t.ndim == 0:
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 0}).")
    C = x.shape[1] if nd > 1 else x.shape[0]
    if weight is not None and weight._data.size != C:
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no classes but got "
                           f"weight tensor of shape: {_shape_str(weight._data.shape)}")
    if nd <= 2:
        check_nondiff("nll_loss_forward", "weight", weight)
        if t.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if nd == 1:
            if t.ndim == 1 and t.shape[0] != 1:
                raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {t.shape[0]}")
            if t.ndim == 1:
                from .views import reshape
                out = _nll_core(input, reshape(target, ()), weight, reduction, ignore_index, NllLossBackward0)
                return out
        return _nll_core(input, target, weight, reduction, ignore_index, NllLossBackward0)
    check_nondiff("nll_loss2d_forward", "weight", weight)
    if nd == 4:
        if t.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {t.ndim}")
        if t.shape[1:] != x.shape[2:]:
            raise RuntimeError(f"size mismatch (got input: {_shape_str(x.shape)} , target: {_shape_str(t.shape)}")
        return _nll_core(input, target, weight, reduction, ignore_index, NllLoss2DBackward0)
    from .views import reshape
    n, c = x.shape[0], x.shape[1]
    out_size = (n,) + x.shape[2:]
    if t.shape[1:] != x.shape[2:]:
        raise RuntimeError(f"Expected target size {_shape_str(out_size)}, got {_shape_str(t.shape)}")
    if x.size:
        x4 = reshape(input, (n, c, 1, -1))
        t3 = reshape(target, (n, 1, -1))
    else:
        x4 = reshape(input, (n, c, 0, 0))
        t3 = reshape(target, (n, 0, 0))
    out = _nll_core(x4, t3, weight, reduction, ignore_index, NllLoss2DBackward0)
    if reduction == "none":
        return reshape(out, out_size)
    return out


# -- pointwise regression losses --------------------------------------------------------------------
class _Pointwise(Node):
    __slots__ = ("k", "param")
    _saved_names = ("self", "target")

    def backward(self, F, g):
        x, t = F.unpack(self)
        d = self._d(F, x - t, g * self.k if self.k != 1.0 else g)
        return (d if self.next_functions[0][0] is not None else None,
                -d if self.next_functions[1][0] is not None else None)


class MseLossBackward0(_Pointwise):
    __slots__ = ()

    def _d(self, F, diff, g):
        return 2 * diff * g


class SmoothL1LossBackward0(_Pointwise):
    __slots__ = ()

    def _d(self, F, diff, g):
        b = self.param
        c = np.abs(F.data(diff)) < b
        return F.where(F.const(c, diff), diff / b, F.sign(diff)) * g


class HuberLossBackward0(_Pointwise):
    __slots__ = ()

    def _d(self, F, diff, g):
        dl = self.param
        c = np.abs(F.data(diff)) <= dl
        return F.where(F.const(c, diff), diff, F.sign(diff) * dl) * g


def _loss_out(cls, input, target, reduction, L, **attrs):
    """Reduce the elementwise loss L; when input or target needs a gradient, attach a `cls` node that saves
    both, with the reduction's scale `k` and the given attributes."""
    y = reduce_array(L, reduction)
    if grad.enabled and (input._rg or target._rg):
        n = cls((edge(input), edge(target)))
        n.k = _scale(reduction, L.size)
        for name, value in attrs.items():
            setattr(n, name, value)
        n._saved = (save_in(input), save_in(target))
        return make(y, True, n)
    return make(y)


def _weighted_grad(F, node, g):
    """g times the reduction's scale and the node's elementwise weight (when it has one)."""
    gw = g * node.k if node.k != 1.0 else g
    if node.w is not None:
        gw = gw * F.const(node.w, g)
    return gw


def _same_dtype(input, target):
    x, t = input._data, target._data
    if x.dtype != t.dtype:
        rt = np.result_type(x.dtype, t.dtype)
        return x.astype(rt), t.astype(rt)
    return x, t


def mse_loss(input, target, reduction="mean"):
    x, t = _same_dtype(input, target)
    _check_float(x, "mse_cpu")
    d = x - t
    return _loss_out(MseLossBackward0, input, target, reduction, d * d, param=None)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    x, t = _same_dtype(input, target)
    z = np.abs(x - t)
    L = np.where(z < beta, 0.5 * z * z / beta if beta else z, z - 0.5 * beta).astype(z.dtype)
    return _loss_out(SmoothL1LossBackward0, input, target, reduction, L, param=beta)


def huber_loss(input, target, reduction="mean", delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    x, t = _same_dtype(input, target)
    z = np.abs(x - t)
    L = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)).astype(z.dtype)
    return _loss_out(HuberLossBackward0, input, target, reduction, L, param=delta)


# -- binary cross entropy ---------------------------------------------------------------------------
class BinaryCrossEntropyBackward0(Node):
    """dx = g w (x - t) / max(x (1 - x), 1e-12); dt = -g w logit(x)."""
    __slots__ = ("k", "w")
    _saved_names = ("self", "target")

    def backward(self, F, g):
        x, t = F.unpack(self)
        gw = _weighted_grad(F, self, g)
        gx = gt = None
        if self.next_functions[0][0] is not None:
            gx = gw * (x - t) / _clamp_min(F, (1 - x) * x, 1e-12)
        if self.next_functions[1][0] is not None:
            gt = gw * (F.log(1 - x) - F.log(x))
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

    def backward(self, F, g):
        x, t = F.unpack(self)
        gw = _weighted_grad(F, self, g)
        pw = None if self.pw is None else F.const(self.pw, g)
        gx = gt = None
        if self.next_functions[0][0] is not None:
            if pw is None:
                gx = (F.sigmoid(x) - t) * gw
            else:
                pt = pw * t
                gx = ((pt + 1 - t) * F.sigmoid(x) - pt) * gw
            gx = F.sum_to(gx, self.xshape)
        if self.next_functions[1][0] is not None:
            if pw is None:
                gt = -x * gw
            else:
                gt = (_log_sigmoid(F, -x) - _log_sigmoid(F, x) * pw) * gw
            gt = F.sum_to(gt, self.tshape)
        return (gx, gt)


def _check_broadcastable(a, b):
    from ._core import broadcast_error
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
    L = np.asarray(L, dt)
    return _loss_out(BinaryCrossEntropyWithLogitsBackward0, input, target, reduction, L, w=w, pw=pw,
                     xshape=x.shape, tshape=t.shape)


# -- margin losses ----------------------------------------------------------------------------------
class SoftMarginLossBackward0(Node):
    """loss = log1p(exp(-t x)); dx = -t z / (1 + z) g with z = exp(-t x)."""
    __slots__ = ("k",)
    _saved_names = ("self", "target")

    def backward(self, F, g):
        x, t = F.unpack(self)
        z = F.exp(-t * x)
        gk = g * self.k if self.k != 1.0 else g
        return (-t * z / (1 + z) * gk,)


def soft_margin_loss(input, target, reduction="mean"):
    check_nondiff("soft_margin_loss", "target", target)
    x, t = _same_dtype(input, target)
    with np.errstate(over="ignore"):
        L = np.log1p(np.exp(-t * x)).astype(x.dtype, copy=False)
    y = reduce_array(L, reduction)
    if input._rg and grad.enabled:
        n = SoftMarginLossBackward0((edge(input), (None, 0)))
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

    def backward(self, F, g):
        if self.bdim and len(_shape_of(F, g)) == 1:
            g = F.unsqueeze(g, 1)
        return (_const_grad(F, self.coef, g, "aten::multi_margin_loss_backward", self),)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, reduction="mean"):
    check_nondiff("multi_margin_loss", "weight", weight)
    x = input._data
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
    other = np.ones(x2.shape, bool)
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

    def backward(self, F, g):
        if self.bdim and len(_shape_of(F, g)) == 1:
            g = F.unsqueeze(g, 1)
        return (_const_grad(F, self.coef, g, "aten::multilabel_margin_loss_backward", self),)


def multilabel_margin_loss(input, target, reduction="mean"):
    x = input._data
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
    is_t = np.zeros((N, C), bool)
    rows = np.arange(N)
    is_t[np.nonzero(valid)[0], t2[valid]] = True
    nont = ~is_t
    L = np.zeros(N, x.dtype)
    d = np.zeros((N, C), x.dtype)
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
