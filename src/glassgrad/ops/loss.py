"""Loss primitives with their own PyTorch grad_fn (NllLossBackward0, MseLossBackward0, ...), the
cross_entropy entry point, and the helpers every loss file shares.

Each takes tensors and a reduction string ('none' | 'mean' | 'sum'); argument parsing, legacy
size_average/reduce handling, warnings and the composite losses live in nn/functional/_loss.py.
Backward formulas are written once with ns (arrays or Tensors), so they are differentiable again
where PyTorch's are; where PyTorch has no double backward the gradient carries a NotImplemented
node that raises PyTorch's error when differentiated.

ops: nll_loss_nd (NllLossBackward0 / NllLoss2DBackward0), cross_entropy (log_softmax + nll_loss_nd, or
     for class-probability targets -sum(log_softmax * target), whose mean is DivBackward1),
     mse_loss, smooth_l1_loss, huber_loss
helpers: reduce_array, check_nondiff, NotImplementedNode / _const_grad, _loss_out, dtype checks
The other loss families: loss_bce.py (binary cross entropy), loss_margin.py (soft / multi / multilabel
margin), loss_ctc.py (ctc_loss).
"""
import numpy as np

from .. import _cuda_kernels, _dtype
from ..backend import on_device
from .._cuda_kernels import optloss as _k_optloss
from ._core import NotImplementedNode  # noqa: F401 (re-exported: its old home)
from ._core import make, edge, save_in, grad, as_array
from ..autograd.graph import Node, guard
from .softmax import log_softmax
from .arithmetic import _div_scalar
from .masked import masked_fill
from .views import reshape

__all__ = ["nll_loss_nd", "cross_entropy", "mse_loss", "smooth_l1_loss", "huber_loss", "check_nondiff",
           "reduce_array", "NotImplementedNode"]


# -- shared helpers ---------------------------------------------------------------------------------
def reduce_array(L, reduction):
    """Apply a loss reduction to the elementwise loss array L (mean of nothing is nan, as PyTorch)."""
    if reduction == "none":
        return L
    if L.dtype.kind == "V":         # bfloat16: summed in float32, rounded once
        return reduce_array(L.astype(np.float32), reduction).astype(L.dtype)
    s = L.sum(dtype=L.dtype)
    if reduction == "sum":
        return as_array(s)
    with np.errstate(invalid="ignore", divide="ignore"):
        return as_array(s / L.dtype.type(L.size))


def _acc(dt):
    """The accumulator dtype of a sum: float32 for bfloat16 (as torch), else the dtype itself."""
    return np.dtype(np.float32) if dt.kind == "V" else dt


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


def _shape_of(ns, t):
    return ns.data(t).shape


def _const_grad(ns, coef, g, what, node):
    """coef * g where the result is not differentiable again (PyTorch: NotImplemented); the result
    depends on g and on the node's saved input, as PyTorch's."""
    if not ns.is_tensor_mode:
        return coef * g
    y = coef * g._data
    if not grad.enabled:
        return make(y)
    x, = ns.unpack(node)
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
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_cname(x.dtype)}'")


# -- nll_loss ---------------------------------------------------------------------------------------
class NllLossBackward0(Node):
    """dx[i, t_i] = coef_i * g_i (coef = -w[t_i], / total_weight for 'mean'; 0 where ignored)."""
    __slots__ = ("tgt", "coef", "shape", "dt", "bdim")
    _saved_names = ("self",)
    stack_rule = "nll"        # explain.attribute's rule for stacked gradients (Node.stack_rule)

    def _mask(self):
        M = np.zeros(self.shape, self.dt, like=self.tgt)
        if M.size:
            if self.bdim is None:
                M[self.tgt] = self.coef
            else:
                np.put_along_axis(M, np.expand_dims(self.tgt, 1), np.expand_dims(self.coef, 1), 1)
        return M

    def _fused(self, g, unsq):
        """M * g in one kernel on a GPU (_cuda_kernels/optloss.py), or None."""
        c = self.coef
        if (not on_device(c) or g.__class__ is not c.__class__ or g.dtype != c.dtype or c.dtype not in _F3264
                or not unsq and g.size != 1 or not _cuda_kernels.available()):
            return None
        C = self.shape[1] if self.bdim is not None else self.shape[0]
        S = int(np.prod(self.shape[2:]))
        return _k_optloss.nll_backward(self.tgt.reshape(-1), c.reshape(-1), g.reshape(-1), self.shape, C, S, unsq)

    def backward(self, ns, g):
        unsq = self.bdim is not None and len(_shape_of(ns, g)) == len(self.shape) - 1
        gd = g._data if ns.is_tensor_mode else g
        y = self._fused(gd, unsq)
        M = None
        if y is None:
            M = self._mask()
            y = M * (np.expand_dims(gd, 1) if unsq else gd)
        if not ns.is_tensor_mode:
            return (y,)
        x, = ns.unpack(self)
        if not grad.enabled or not (g._rg or x._rg):
            return (make(y),)
        # PyTorch's double backward node: linear in g, zero derivative in self
        n = _NLL_BB[type(self)]((edge(g), edge(x)))
        n.M, n.unsq, n.gshape = self._mask() if M is None else M, unsq, gd.shape
        return (make(y, True, n),)


class NllLoss2DBackward0(NllLossBackward0):
    __slots__ = ()


class NllLossBackwardBackward0(Node):
    """grad_input = M * g: d/dg is the loss of the incoming gradient, d/dself is zero."""
    __slots__ = ("M", "unsq", "gshape")

    def backward(self, ns, gg):
        if self.next_functions[0][0] is None:
            return (None, None)
        p = ns.const(self.M, gg) * gg
        dg = ns.sum(p, 1) if self.unsq else ns.sum(p, tuple(range(len(self.M.shape))))
        return (ns.reshape(dg, self.gshape), None)


class NllLoss2DBackwardBackward0(NllLossBackwardBackward0):
    __slots__ = ()


_NLL_BB = {NllLossBackward0: NllLossBackwardBackward0, NllLoss2DBackward0: NllLoss2DBackwardBackward0}


_TARGET_OK = (np.dtype(np.int64), np.dtype(np.uint8))
_F3264 = (np.dtype(np.float32), np.dtype(np.float64))


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
    fused = _nll_fused(x, t, weight, C, reduction, ignore_index)
    if fused is not None:
        y, coef, ts = fused
    else:
        y, coef, ts = _nll_arrays(x, t, weight, C, reduction, ignore_index)
    if input._rg and grad.enabled:
        n = cls((edge(input),))
        guard(n, target)                    # torch saves the target
        n.tgt, n.coef, n.shape, n.dt = ts, coef, x.shape, x.dtype
        n.bdim = None if x.ndim == 1 else 1
        n._saved = (save_in(input),)
        return make(y, True, n)
    return make(y)


def _nll_fused(x, t, weight, C, reduction, ignore_index):
    """_nll_arrays in one kernel on a GPU (_cuda_kernels/optloss.py), or None where it does not apply."""
    w = None if weight is None else weight._data
    if (x.__class__ is np.ndarray or x.dtype not in _F3264 or not x.size or not x.flags.c_contiguous
            or not t.flags.c_contiguous or t.size > _k_optloss.NLL_MAX_ROWS or not -2 ** 63 <= ignore_index < 2 ** 63
            or t.__class__ is not x.__class__ or w is not None and (w.__class__ is not x.__class__
                                                                    or not w.flags.c_contiguous)
            or not _cuda_kernels.available()):
        return None
    S = x.size // (x.shape[0] * C) if x.ndim > 1 else 1
    y, coef, ts, bad = _k_optloss.nll_forward(x, t, w, C, S, ignore_index, reduction)
    b = int(bad)                            # (the array code's bad.any() syncs too)
    if b < t.size:
        raise IndexError(f"Target {int(t.reshape(-1)[b])} is out of bounds.")
    return y, coef, ts


def _nll_arrays(x, t, weight, C, reduction, ignore_index):
    """(loss, gradient coefficients, clipped targets) of _nll_core, as array code."""
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
            np.zeros(ts.shape, x.dtype, like=x)
    L = -(picked * wt)
    L = np.where(ign, x.dtype.type(0), L).astype(x.dtype)
    if reduction == "none":
        y = L
        coef = -wt
    elif reduction == "sum":
        y = as_array(L.sum(dtype=_acc(x.dtype))).astype(x.dtype)
        coef = -wt
    else:
        tw = wt.sum(dtype=_acc(x.dtype))
        with np.errstate(invalid="ignore", divide="ignore"):
            y = as_array(L.sum(dtype=_acc(x.dtype)) / tw).astype(x.dtype)
            tw = tw.astype(x.dtype)
            if x.__class__ is np.ndarray:
                coef = (-wt / tw) if tw != 0 else np.zeros_like(wt)
            else:       # on the device without a sync
                coef = np.where(tw != 0, -wt / tw, x.dtype.type(0))
    return y, coef.astype(x.dtype), ts


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


# -- cross_entropy ----------------------------------------------------------------------------------
def _class_weight_view(weight, ndim, class_dim):
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _check_smoothing(ls):
    if ls > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {ls}")


def cross_entropy(input, target, weight=None, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    """torch's cross_entropy once the reduction is a string (nn.functional.cross_entropy resolves the legacy
    size_average / reduce).  log_softmax over the class dim (0 for a 1-d input, else 1), then:
    class indices: nll_loss_nd (NllLossBackward0), mixed with the label-smoothing term when asked;
    class probabilities (target shaped as input): -sum(log_softmax * target), reduced."""
    class_dim = 0 if input.dim() <= 1 else 1
    if tuple(input.shape) == tuple(target.shape):
        return _cross_entropy_probs(input, target, weight, reduction, ignore_index, label_smoothing, class_dim)
    if label_smoothing > 0:
        _check_smoothing(label_smoothing)
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    lsm = log_softmax(input, class_dim)
    nll = nll_loss_nd(lsm, target, weight, reduction, ignore_index)
    if label_smoothing <= 0:
        return nll
    return _smoothed(nll, lsm, target, weight, reduction, ignore_index, label_smoothing, class_dim)


def _cross_entropy_probs(input, target, weight, reduction, ignore_index, label_smoothing, class_dim):
    """cross_entropy with class-probability targets: -(log_softmax * target [* weight]) summed over classes."""
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_dtype.from_numpy_dtype(target._data.dtype).name_c}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    _check_smoothing(label_smoothing)
    n_classes = input.shape[class_dim]
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: {_shape_str(weight.shape)}")
    lsm = log_softmax(input, class_dim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = lsm * target
    if weight is not None:
        prod = prod * _class_weight_view(weight, input.dim(), class_dim)
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "sum":
        return -prod.sum()
    if input.numel() == 0:
        return -(prod.sum() * float("nan"))   # torch: -(sum.fill_(nan)); glassgrad fill_ cuts the graph
    return _div_scalar(-prod.sum(), input.numel() / n_classes)


def _smoothed(nll, lsm, target, weight, reduction, ignore_index, label_smoothing, class_dim):
    """(1 - ls) * nll + ls / C * (the loss against the uniform distribution, ignored targets masked out)."""
    n_classes = lsm.shape[class_dim]
    ign = target._data == ignore_index
    if weight is not None:
        smooth = -(lsm * _class_weight_view(weight, lsm.dim(), class_dim)).sum(class_dim)
    else:
        smooth = -lsm.sum(class_dim)
    smooth = masked_fill(smooth, make(ign), 0.0)
    if reduction == "mean":
        if weight is not None:
            tw = weight._data[target._data[~ign].reshape(-1).astype(np.int64)].sum()
        else:
            tw = (~ign).sum()
        ret = smooth.sum() / make(as_array(tw, smooth._data.dtype if weight is not None else np.int64))
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return (1 - label_smoothing) * nll + ret * (label_smoothing / n_classes)


# -- pointwise regression losses --------------------------------------------------------------------
class _Pointwise(Node):
    __slots__ = ("k", "param")
    _saved_names = ("self", "target")

    def backward(self, ns, g):
        x, t = ns.unpack(self)
        d = self._d(ns, x - t, g * self.k if self.k != 1.0 else g)
        return (d if self.next_functions[0][0] is not None else None,
                -d if self.next_functions[1][0] is not None else None)


class MseLossBackward0(_Pointwise):
    __slots__ = ()
    stack_rule = "pointwise_loss"    # explain.attribute's rule for stacked gradients (Node.stack_rule)

    def _d(self, ns, diff, g):
        return 2 * diff * g


class SmoothL1LossBackward0(_Pointwise):
    __slots__ = ()
    stack_rule = "pointwise_loss"    # explain.attribute's rule for stacked gradients (Node.stack_rule)

    def _d(self, ns, diff, g):
        b = self.param
        c = ~(np.abs(ns.data(diff)) >= b)        # NaN: diff / b (NaN), as torch's x < -b ? -1 : x > b ? 1 : x / b
        return ns.where(ns.const(c, diff), diff / b, ns.sign(diff)) * g


class HuberLossBackward0(_Pointwise):
    __slots__ = ()
    stack_rule = "pointwise_loss"    # explain.attribute's rule for stacked gradients (Node.stack_rule)

    def _d(self, ns, diff, g):
        dl = self.param
        c = ~(np.abs(ns.data(diff)) > dl)         # NaN: diff (NaN), as torch's clamp-like formula
        return ns.where(ns.const(c, diff), diff, ns.sign(diff) * dl) * g


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
