"""Normalisation and embedding primitives (the nodes PyTorch shows for nn layers).

ops: batch_norm (NativeBatchNormBackward0), layer_norm (NativeLayerNormBackward0),
     group_norm (NativeGroupNormBackward0), embedding (EmbeddingBackward0),
     embedding_bag (EmbeddingBagBackward0), embedding_renorm_, one_hot;
     composites as in PyTorch: instance_norm, rms_norm, dropout / feature_dropout / alpha_dropout /
     feature_alpha_dropout (+ in-place forms)

All three norms share one core: x is normalised over some axes,
    xhat = (x - mean) * invstd,   invstd = 1 / sqrt(var + eps)   (biased variance)
and with dxhat = gy * weight the input gradient is
    dx = invstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
(or dx = dxhat * invstd when the statistics are constants: batch norm in eval mode).
In array mode the forward's mean / invstd are reused; in tensor mode (create_graph) they are
recomputed from the saved input with differentiable ops, so second derivatives are exact.
"""
import math

import numpy as np

from ._core import make, edge, save_in, grad, check_inplace
from ..autograd.graph import Node, freed_error
from .gather_scatter import _index_select, _index_add_zeros

# the torch-namespace functions (torch.batch_norm, torch.dropout, ...); nn.functional wraps them
__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "embedding", "embedding_renorm_",
           "dropout", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_",
           "feature_alpha_dropout", "feature_alpha_dropout_"]


def _stats(a, axes):
    """Mean and biased variance of array `a` over `axes` (kept), accumulated in float64 (float32 inputs
    keep float32 temporaries: no full-size float64 copy)."""
    if a.dtype != np.float32:
        a = a.astype(np.float64, copy=False)
    mean = a.mean(axis=axes, keepdims=True, dtype=np.float64)
    xc = a - mean.astype(a.dtype)
    var = np.square(xc).mean(axis=axes, keepdims=True, dtype=np.float64)
    return mean, var


def _t_stats(F, x, axes, n, eps):
    """Differentiable mean / invstd of Tensor x over axes (tensor-mode backward)."""
    mean = F.sum(x, axes, True) * (1.0 / n)
    xc = x - mean
    var = F.sum(xc * xc, axes, True) * (1.0 / n)
    return mean, 1.0 / F.sqrt(var + eps)


def _dx_core(F, x, dxh, axes, n, mean, invstd):
    """Input gradient of xhat = (x - mean) * invstd with batch statistics over axes."""
    xh = (x - mean) * invstd
    inv_n = 1.0 / n
    return invstd * (dxh - F.sum(dxh, axes, True) * inv_n - xh * (F.sum(dxh * xh, axes, True) * inv_n))


def _unpack(F, node):
    saved = node._saved
    if saved is None:
        raise freed_error()
    return tuple(None if s is None else F.unpack_one(node, s) for s in saved)


def _saved_prop(i):
    """grad_fn._saved_<name> for an entry that may be None (no weight, no running stats)."""
    def get(self):
        saved = self._saved
        if saved is None:
            raise freed_error()
        s = saved[i]
        from ._ns import TEN
        return None if s is None else TEN.unpack_one(self, s)
    return property(get)


def _result_props(flat):
    """_saved_result1 / _saved_result2: the mean and invstd the forward computed (torch's shapes: (C,) for
    batch norm, (N, G) for group norm, the kept-dims shape for layer norm)."""
    def f(name):
        def get(self):
            a = np.asarray(getattr(self, name))
            return make(a.reshape(a.shape[:flat] if flat else -1).copy() if flat is not None else a.copy())
        return property(get)
    return f("mean"), f("invstd")


def _want(node, i):
    return node.next_functions[i][0] is not None


def _C(F, arr, like):
    return F.const(arr, like) if F.is_tensor_mode else arr


def _float_kernel(input, kernel):
    """torch's normalisation kernels exist for floating dtypes only."""
    if input._data.dtype.kind != "f":
        from .. import _dtype
        name = _dtype.from_numpy_dtype(input._data.dtype).name_c
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def _check_param_dtypes(input, *ts):
    """PyTorch's CPU mixed-dtype checks: parameters must share the input's dtype (a half / bfloat16 input may
    take float32 parameters)."""
    from .. import _dtype
    dt = input._data.dtype
    ps = [t._data.dtype for t in ts if t is not None]
    if not ps:
        return
    if ps[0] != dt:
        if any(p != np.float32 for p in ps):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if dt != np.float16:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for p in ps[1:]:
        if p != dt:
            raise RuntimeError(f"expected scalar type {_dtype._FROM_NP[dt].name_c} but found "
                               f"{_dtype._FROM_NP[p].name_c}")


# -- batch norm ------------------------------------------------------------------------------------
# Array-mode fast paths for float32 / float64 inputs viewed as (N, C, P): per-channel sums are einsum
# contractions (one pass, no temporaries) and the per-element work is a few in-place sweeps.
def _bn_train_stats(x3):
    """(centred copy xc = x - m0, mean, biased var) per channel, by the corrected two-pass algorithm:
    m0 is a quick mean, mean = m0 + mean(xc) and var = mean(xc^2) - mean(xc)^2 (in float64 per channel)."""
    n = x3.shape[0] * x3.shape[2]
    m0 = np.einsum("ncp->c", x3) * (1.0 / n)
    xc = x3 - m0.reshape(1, -1, 1)
    d = np.einsum("ncp->c", xc).astype(np.float64) * (1.0 / n)
    var = np.einsum("ncp,ncp->c", xc, xc).astype(np.float64) * (1.0 / n) - d * d
    return xc, m0.astype(np.float64) + d, np.maximum(var, 0.0), d


def _bn_train_backward(x3, g3, w, mean, invstd, n, want):
    """Input / weight / bias gradients of training batch norm: with xc = x - mean and the sums
    sg = sum(g), sgx = sum(g * xc) per channel,  dx = A * (g - sg / n - xc * invstd^2 * sgx / n),  A = w * invstd."""
    dt = x3.dtype
    xc = x3 - mean.reshape(1, -1, 1).astype(dt)
    sg = g3.sum(axis=2).sum(axis=0, dtype=np.float64)
    sgx = np.einsum("ncp,ncp->c", g3, xc).astype(np.float64)
    inv = invstd.reshape(-1).astype(np.float64)
    gx = None
    if want[0]:         # in place in the centred copy: ((xc * b + c) + g) * A, no further temporaries
        col = (1, -1, 1)
        xc *= (-inv * inv * sgx / n).astype(dt).reshape(col)
        xc += (-sg / n).astype(dt).reshape(col)
        xc += g3
        xc *= (inv if w is None else inv * w.reshape(-1)).astype(dt).reshape(col)
        gx = xc
    gw = (sgx * inv).astype(dt) if want[1] else None
    gb = sg.astype(dt) if want[2] else None
    return gx, gw, gb


class NativeBatchNormBackward0(Node):
    __slots__ = ("mean", "invstd", "axes", "bshape", "n", "eps", "training", "has_w", "has_rs")
    _saved_names = ("input", "weight", "running_mean", "running_var")
    _saved_weight, _saved_running_mean, _saved_running_var = _saved_prop(1), _saved_prop(2), _saved_prop(3)
    _saved_result1, _saved_result2 = _result_props(0)

    def backward(self, F, g):
        saved = _unpack(F, self)
        x = saved[0]
        w = saved[1] if self.has_w else None
        axes, bshape = self.axes, self.bshape
        if F.is_tensor_mode:
            if self.training:
                mean, invstd = _t_stats(F, x, axes, self.n, self.eps)
            else:
                rm, rv = saved[2], saved[3]
                mean = F.const(np.asarray(rm._data, np.float64).reshape(bshape).astype(x._data.dtype), g)
                invstd = F.const((1.0 / np.sqrt(rv._data.astype(np.float64) + self.eps)).reshape(bshape)
                                 .astype(x._data.dtype), g)
        else:
            mean, invstd = self.mean, self.invstd
            if self.training and x.dtype in (np.float32, np.float64) and x.flags.c_contiguous and \
                    g.dtype == x.dtype and (w is None or w.dtype == x.dtype):
                N, C = x.shape[:2]
                want = [_want(self, i) for i in range(3)]
                gx, gw, gb = _bn_train_backward(x.reshape(N, C, -1), g.reshape(N, C, -1), w, mean, invstd,
                                                self.n, want)
                return (None if gx is None else gx.reshape(x.shape)), gw, gb
        wb = None if w is None else F.reshape(w, bshape)
        gx = gw = gb = None
        if _want(self, 0):
            dxh = g if wb is None else g * wb
            if self.training:
                gx = _dx_core(F, x, dxh, axes, self.n, mean, invstd)
            else:
                gx = dxh * invstd
        if _want(self, 1):
            gw = F.sum(g * ((x - mean) * invstd), axes)
        if _want(self, 2):
            gb = F.sum(g, axes)
        return gx, gw, gb


def _numel_check(t, name, c):
    if t is not None and t._data.size != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t._data.size}")


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    _float_kernel(input, "batch_norm")
    """torch.batch_norm: normalise over every dim but 1; updates the running stats in place (training)."""
    _check_param_dtypes(input, weight, bias, running_mean, running_var)
    if grad.enabled:
        for nm, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is not None and t._rg:
                raise RuntimeError(f"The function 'native_batch_norm' is not differentiable with respect to "
                                   f"argument '{nm}'. This input cannot have requires_grad True.")
    x = input._data
    c = x.shape[1] if x.ndim > 1 else 0
    _numel_check(running_mean, "running_mean", c)
    _numel_check(running_var, "running_var", c)
    _numel_check(weight, "weight", c)
    _numel_check(bias, "bias", c)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be defined in "
                           f"evaluation mode")
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, c) + (1,) * (x.ndim - 2)
    n = x.size // c if c else 0
    dt = x.dtype
    # (other memory layouts keep the general path, whose result follows the input's layout)
    fast = training and x.size and x.dtype in (np.float32, np.float64) and x.flags.c_contiguous
    if training:
        if fast:
            xc, mean, var, d = _bn_train_stats(x.reshape(x.shape[0], c, -1))
            mean, var = mean.reshape(bshape), var.reshape(bshape)
        elif x.size:
            mean, var = _stats(x, axes)
        else:
            mean = var = np.full(bshape, np.nan)
        if running_mean is not None and n:
            m = float(momentum)
            rm = running_mean._data
            rm[...] = (m * mean.reshape(-1) + (1 - m) * rm.astype(np.float64)).astype(rm.dtype).reshape(rm.shape)
        if running_var is not None and n:
            m = float(momentum)
            rv = running_var._data
            unb = var.reshape(-1) * (n / (n - 1)) if n > 1 else np.full(c, np.nan)
            rv[...] = (m * unb + (1 - m) * rv.astype(np.float64)).astype(rv.dtype).reshape(rv.shape)
    else:
        mean = running_mean._data.astype(np.float64).reshape(bshape)
        var = running_var._data.astype(np.float64).reshape(bshape)
    with np.errstate(all="ignore"):
        invstd64 = 1.0 / np.sqrt(var + eps)
        mean_t, invstd = mean.astype(dt), invstd64.astype(dt)
        alpha = invstd if weight is None else invstd * weight._data.reshape(bshape)
        if fast:        # y = (xc - d) * alpha + bias, in place in the centred copy
            beta = (-d.reshape(bshape) * alpha).astype(dt)
            if bias is not None:
                beta = beta + bias._data.reshape(bshape)
            y = np.multiply(xc, alpha.reshape(1, c, 1).astype(dt), out=xc)
            y += beta.reshape(1, c, 1).astype(dt)
            y = y.reshape(x.shape)
        else:
            beta = -mean_t * alpha
            if bias is not None:
                beta = beta + bias._data.reshape(bshape)
            y = (x * alpha + beta).astype(dt, copy=False)
    ins = (input, weight, bias)
    if grad.enabled and any(t is not None and t._rg for t in ins):
        node = NativeBatchNormBackward0(tuple(edge(t) if t is not None else (None, 0) for t in ins))
        node.mean, node.invstd = mean_t, invstd
        node.axes, node.bshape, node.n, node.eps = axes, bshape, n, eps
        node.training, node.has_w, node.has_rs = bool(training), weight is not None, running_mean is not None
        node._saved = (save_in(input), save_in(weight) if weight is not None else None,
                       save_in(running_mean) if running_mean is not None else None,
                       save_in(running_var) if running_var is not None else None)
        return make(y, True, node)
    return make(y)


# -- layer norm / group norm -----------------------------------------------------------------------
class NativeLayerNormBackward0(Node):
    __slots__ = ("mean", "invstd", "axes", "n", "eps", "has_w")
    _saved_names = ("input", "weight")
    _saved_weight = _saved_prop(1)
    _saved_result1, _saved_result2 = _result_props(None)

    def backward(self, F, g):
        saved = _unpack(F, self)
        x = saved[0]
        w = saved[1] if self.has_w else None
        axes = self.axes
        if F.is_tensor_mode:
            mean, invstd = _t_stats(F, x, axes, self.n, self.eps)
        else:
            mean, invstd = self.mean, self.invstd
        gx = gw = gb = None
        lead = tuple(range(F.data(x).ndim - len(axes)))
        if _want(self, 0):
            dxh = g if w is None else g * w
            gx = _dx_core(F, x, dxh, axes, self.n, mean, invstd)
        if _want(self, 1):
            gw = g * ((x - mean) * invstd)
            gw = F.sum(gw, lead) if lead else gw
        if _want(self, 2):
            gb = F.sum(g, lead) if lead else g
        return gx, gw, gb


def _native_layer_norm(input, normalized_shape, weight, bias, eps):
    _float_kernel(input, "LayerNormKernelImpl")
    _check_param_dtypes(input, weight, bias)
    x = input._data
    ns = tuple(normalized_shape)
    k = len(ns)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
                           "one element, but got normalized_shape = []")
    for nm, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t._data.shape) != ns:
            raise RuntimeError(f"Expected {nm} to be of same shape as normalized_shape, but got {nm} of shape "
                               f"{list(t._data.shape)} and normalized_shape = {list(ns)}")
    if x.ndim < k or x.shape[x.ndim - k:] != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape [*, "
                           f"{', '.join(str(s) for s in ns)}], but got input of size{list(x.shape)}")
    axes = tuple(range(x.ndim - k, x.ndim))
    n = int(np.prod(ns))
    dt = x.dtype
    if x.size:
        mean, var = _stats(x, axes)
    else:
        mean = var = np.zeros(x.shape[:x.ndim - k] + (1,) * k)
    invstd64 = 1.0 / np.sqrt(var + eps)
    y = ((x - mean.astype(dt)) * invstd64.astype(dt)).astype(dt, copy=False)
    if weight is not None:
        y = y * weight._data
    if bias is not None:
        y = y + bias._data
    y = y.astype(dt, copy=False)
    ins = (input, weight, bias)
    if grad.enabled and any(t is not None and t._rg for t in ins):
        node = NativeLayerNormBackward0(tuple(edge(t) if t is not None else (None, 0) for t in ins))
        node.mean, node.invstd = mean.astype(dt), invstd64.astype(dt)
        node.axes, node.n, node.eps, node.has_w = axes, n, eps, weight is not None
        node._saved = (save_in(input), save_in(weight) if weight is not None else None)
        return make(y, True, node)
    return make(y)


class NativeGroupNormBackward0(Node):
    __slots__ = ("mean", "invstd", "gshape", "n", "eps", "has_w", "bshape")
    _saved_names = ("input", "weight")
    _saved_weight = _saved_prop(1)
    _saved_result1, _saved_result2 = _result_props(2)

    def backward(self, F, g):
        saved = _unpack(F, self)
        x = saved[0]
        w = saved[1] if self.has_w else None
        gshape, bshape = self.gshape, self.bshape
        shape = F.data(x).shape
        xr = F.reshape(x, gshape)
        if F.is_tensor_mode:
            mean, invstd = _t_stats(F, xr, (2,), self.n, self.eps)
        else:
            mean, invstd = self.mean, self.invstd
        raxes = (0,) + tuple(range(2, len(shape)))
        gx = gw = gb = None
        if _want(self, 0):
            dxh = g if w is None else g * F.reshape(w, bshape)
            gx = F.reshape(_dx_core(F, xr, F.reshape(dxh, gshape), (2,), self.n, mean, invstd), shape)
        if _want(self, 1):
            xh = F.reshape((xr - mean) * invstd, shape)
            gw = F.sum(g * xh, raxes)
        if _want(self, 2):
            gb = F.sum(g, raxes)
        return gx, gw, gb


def _native_group_norm(input, weight, bias, num_groups, eps):
    _float_kernel(input, "GroupNormKernelImpl")
    _check_param_dtypes(input, weight, bias)
    x = input._data
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {x.ndim}")
    nb, c = x.shape[0], x.shape[1]
    G = int(num_groups)
    if G <= 0 or c % G:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(x.shape)} and num_groups={G}")
    for nm, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t._data.ndim != 1 or t._data.size != c):
            raise RuntimeError(f"Expected {nm} to be a vector of size equal to the number of channels in input, "
                               f"but got {nm} of shape {list(t._data.shape)} and input of shape {list(x.shape)}")
    n = (c // G) * int(np.prod(x.shape[2:]))
    gshape = (nb, G, n)
    xr = x.reshape(gshape)
    dt = x.dtype
    if xr.size:
        mean, var = _stats(xr, (2,))
    else:
        mean = var = np.zeros((nb, G, 1))
    invstd64 = 1.0 / np.sqrt(var + eps)
    bshape = (1, c) + (1,) * (x.ndim - 2)
    y = ((xr - mean.astype(dt)) * invstd64.astype(dt)).astype(dt, copy=False).reshape(x.shape)
    if weight is not None:
        y = y * weight._data.reshape(bshape)
    if bias is not None:
        y = y + bias._data.reshape(bshape)
    y = y.astype(dt, copy=False)
    ins = (input, weight, bias)
    if grad.enabled and any(t is not None and t._rg for t in ins):
        node = NativeGroupNormBackward0(tuple(edge(t) if t is not None else (None, 0) for t in ins))
        node.mean, node.invstd = mean.astype(dt), invstd64.astype(dt)
        node.gshape, node.bshape, node.n, node.eps, node.has_w = gshape, bshape, n, eps, weight is not None
        node._saved = (save_in(input), save_in(weight) if weight is not None else None)
        return make(y, True, node)
    return make(y)


# -- embedding -------------------------------------------------------------------------------------
def _check_indices(indices, fn):
    d = indices._data.dtype
    if d not in (np.int64, np.int32):
        from .. import _dtype
        legacy = _dtype._FROM_NP[d]._legacy
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{legacy} instead (while checking arguments for {fn})")
    return indices._data.astype(np.int64, copy=False)


class EmbeddingBackward0(Node):       # dW = zeros with gy rows added at the indices (padding rows skipped)
    __slots__ = ("idx", "num_weights", "padding_idx", "scale_grad_by_freq", "sparse", "wshape")
    _saved_names = ()

    def backward(self, F, g):
        idx = self.idx.reshape(-1)
        d = self.wshape[1]
        g2 = F.reshape(g, (idx.size, d))
        keep = idx != self.padding_idx
        scale = None
        if self.scale_grad_by_freq and idx.size:
            counts = np.bincount(idx, minlength=self.num_weights)[idx]
            scale = (1.0 / counts).astype(F.data(g2).dtype).reshape(-1, 1)
        if not keep.all():
            g2 = F.mask(keep.reshape(-1, 1), g2)
        if scale is not None:
            g2 = g2 * _C(F, scale, g2)
        return (_index_add_zeros(F, self.wshape, 0, idx, g2),)

    @property
    def _saved_indices(self):
        return make(self.idx)

    @property
    def _saved_padding_idx(self):
        return self.padding_idx

    @property
    def _saved_scale_grad_by_freq(self):
        return self.scale_grad_by_freq

    @property
    def _saved_sparse(self):
        return self.sparse

    @property
    def _saved_weight_sym_argsize_0(self):
        return self.num_weights


def embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding(weight, indices, ...): rows of weight; gradient summed into the used rows."""
    idx = _check_indices(input, "embedding")
    w = weight._data
    if w.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    nw = w.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= nw):
        raise IndexError("index out of range in self")
    y = w[idx]
    if weight._rg and grad.enabled:
        node = EmbeddingBackward0((edge(weight),))
        node.idx = idx.copy()
        node.num_weights, node.padding_idx = nw, int(padding_idx)
        node.scale_grad_by_freq, node.sparse, node.wshape = bool(scale_grad_by_freq), bool(sparse), w.shape
        return make(y, True, node)
    return make(y)


def embedding_renorm_(weight, input, max_norm, norm_type):
    """Rescale (in place, no history) the rows of weight used by input whose norm exceeds max_norm."""
    check_inplace(weight)
    idx = np.unique(_check_indices(input, "embedding_renorm_"))
    w = weight._data
    if idx.size and (idx.min() < 0 or idx.max() >= w.shape[0]):
        raise IndexError("index out of range in self")
    rows = w[idx].astype(np.float64)
    p = float(norm_type)
    if p == math.inf:
        norms = np.abs(rows).max(axis=1) if rows.shape[1] else np.zeros(len(idx))
    elif p == 0:
        norms = (rows != 0).sum(axis=1).astype(np.float64)
    else:
        norms = (np.abs(rows) ** p).sum(axis=1) ** (1.0 / p)
    norms = norms.astype(w.dtype).astype(np.float64)     # torch computes the norm in the weight's dtype
    big = norms > max_norm
    if big.any():
        scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
        w[idx[big]] = (w[idx[big]] * scale[:, None]).astype(w.dtype)
    weight._vc[0] += 1
    return weight


# -- embedding bag ---------------------------------------------------------------------------------
class EmbeddingBagBackward0(Node):
    __slots__ = ("idx", "bag", "valid", "mode", "scale", "maxi", "wshape")
    _saved_names = ("weight", "per_sample_weights")
    _saved_per_sample_weights = _saved_prop(1)

    def backward(self, F, g):
        saved = _unpack(F, self)
        w, psw = saved[0], saved[1]
        idx, bag, valid = self.idx, self.bag, self.valid
        gw = gp = None
        if self.mode == 2:                      # max: each (bag, column) sends its grad to the argmax row
            if _want(self, 0):
                mi = self.maxi                  # (B, D), -1 for empty bags
                b, d = np.nonzero(mi >= 0)
                gsel = g[b, d] if not F.is_tensor_mode else g[make(b), make(d)]
                gw = F.index_add_zeros(self.wshape, (mi[b, d], d), gsel)
            return gw, None
        vi, vb = idx[valid], bag[valid]
        rows = _index_select(F, g, 0, vb)       # (n_valid, D)
        if _want(self, 0):
            r = rows
            s = self.scale[valid] if self.scale is not None else None
            if psw is not None:
                pv = _index_select(F, psw, 0, np.nonzero(valid)[0])
                r = r * F.unsqueeze(pv, 1)
            if s is not None:
                r = r * _C(F, s.reshape(-1, 1), r)
            gw = _index_add_zeros(F, self.wshape, 0, vi, r)
        if psw is not None and _want(self, 1):
            wr = _index_select(F, w, 0, vi)
            vals = F.sum(rows * wr, (1,))
            n = idx.size
            gp = _index_add_zeros(F, (n,), 0, np.nonzero(valid)[0], vals)
        return gw, gp


def _bag_freq(idx, nw):
    """The divisor torch 2.13's CPU embedding_bag backward applies per index value with
    scale_grad_by_freq: the k-th distinct value (ascending) is divided by the count of the value at
    position k of the sorted indices (a quirk of its kernel, reproduced so gradients match)."""
    counts = np.bincount(idx, minlength=nw)
    srt = np.sort(idx)
    uniq = np.unique(idx)
    div = np.ones(nw, np.float64)
    div[uniq] = counts[srt[:uniq.size]]
    return div


def _embedding_bag(weight, input, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """torch.embedding_bag for 1-D input and offsets (the functional form flattens 2-D input)."""
    idx = _check_indices(input, "embedding_bag")
    offs = offsets._data.astype(np.int64)
    w = weight._data
    nw, d = w.shape
    n = idx.size
    if offs.size and offs[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(offs[0])}")
    if offs.size and offs[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                           f"{int(offs[-1])}")
    if offs.size > 1 and (np.diff(offs) < 0).any():
        raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this error message be "
                           "improved?  If so, please report an enhancement request to PyTorch.)")
    if n and (idx.min() < 0 or idx.max() >= nw):
        bad = int(np.nonzero((idx < 0) | (idx >= nw))[0][0])
        raise RuntimeError(f"Index {bad} of input takes value {int(idx[bad])} which is not in the valid range "
                           f"[0, {nw})")
    if padding_idx is not None and not -nw <= padding_idx < nw:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, {-nw} through {nw - 1}, but got "
                           f"{padding_idx}")
    starts = offs[:-1] if include_last_offset else offs
    nb = starts.size
    bag = np.searchsorted(starts, np.arange(n), side="right") - 1 if n else np.zeros(0, np.int64)
    if include_last_offset and offs.size:
        bag = np.where(np.arange(n) < offs[-1], bag, -1)
    pad = -1 if padding_idx is None else int(padding_idx)
    if pad < 0 and padding_idx is not None:
        pad += nw
    valid = (idx != pad) & (bag >= 0)
    vi, vb = idx[valid], bag[valid]
    psw = None if per_sample_weights is None else per_sample_weights._data
    dt = w.dtype
    out = np.zeros((nb, d), dt)
    maxi = None
    scale = None
    if mode == 2:                  # per (bag, column): the first row reaching the maximum, as torch's kernel
        rows = w[vi]
        m = vi.size
        best = np.full((nb, d), -np.inf, dt)
        np.maximum.at(best, vb, rows)
        first = np.full((nb, d), m, np.int64)
        np.minimum.at(first, vb, np.where(rows == best[vb], np.arange(m)[:, None], m))
        has = first < m
        maxi = np.where(has, vi[np.minimum(first, m - 1)] if m else -1, -1)
        out = np.where(has, best, 0).astype(dt)
    else:
        rows = w[vi]
        if psw is not None:
            rows = rows * psw[valid][:, None]
        np.add.at(out, vb, rows)
        cnt = np.bincount(vb, minlength=nb)[:nb]
        if mode == 1:
            div = np.maximum(cnt, 1).astype(dt)
            out = (out / div[:, None]).astype(dt)
            scale = (1.0 / np.maximum(cnt, 1))[np.maximum(bag, 0)]
        if scale_grad_by_freq and n:
            f = 1.0 / _bag_freq(idx, nw)[idx]
            scale = f if scale is None else scale * f
        if scale is not None:
            scale = scale.astype(dt)
    ins = (weight, per_sample_weights)
    if grad.enabled and any(t is not None and t._rg for t in ins):
        node = EmbeddingBagBackward0(tuple(edge(t) if t is not None else (None, 0) for t in ins))
        node.idx, node.bag, node.valid, node.mode, node.scale, node.maxi = idx, bag, valid, mode, scale, maxi
        node.wshape = w.shape
        node._saved = (save_in(weight), save_in(per_sample_weights) if per_sample_weights is not None else None)
        return make(out, True, node)
    return make(out)


def _one_hot(tensor, num_classes=-1):
    a = tensor._data
    if a.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    k = int(num_classes)
    if k == -1:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        k = int(a.max()) + 1
    if a.size:
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if a.max() >= k:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(a.shape + (k,), np.int64)
    np.put_along_axis(out, a[..., None], 1, axis=-1) if a.size else None
    return make(out)


# -- torch-namespace entry points (composites where PyTorch composes) ------------------------------
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    """torch.batch_norm: an empty input gives clone * weight[0] + bias[0] (so the graph stays connected)."""
    if input._data.size == 0:
        x = input._data
        c = x.shape[1] if x.ndim > 1 else 0
        for nm, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                      ("bias", bias)):
            _numel_check(t, nm, c)
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    return _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled=True):
    """Batch norm over the (1, N*C, ...) view; the running stats get the mean over the batch."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    shape = input._data.shape
    b, c = shape[0], shape[1]
    rep = (lambda t: None if t is None else t.repeat(b))  # noqa: E731
    rm_, rv_ = rep(running_mean), rep(running_var)
    x = input.contiguous().view((1, b * c) + tuple(shape[2:]))
    out = batch_norm(x, rep(weight), rep(bias), rm_, rv_, use_input_stats, momentum, eps)
    for run, rep_t in ((running_mean, rm_), (running_var, rv_)):
        if run is not None:
            run._data[...] = rep_t._data.reshape(b, c).mean(axis=0).astype(run._data.dtype)
            run._vc[0] += 1
    return out.view(shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _native_layer_norm(input, _shape_arg(normalized_shape, "layer_norm"), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return _native_group_norm(input, weight, bias, num_groups, eps)


def _shape_arg(normalized_shape, fn):
    if isinstance(normalized_shape, (int, np.integer)) and not isinstance(normalized_shape, bool):
        raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    from .. import _args
    return _args.int_list(normalized_shape, fn, "normalized_shape", 2)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x * rsqrt(mean(x^2) + eps) (* weight), made contiguous: PyTorch's CPU composite."""
    _float_kernel(input, "rms_norm")
    ns = _shape_arg(normalized_shape, "rms_norm")
    shape = input._data.shape
    k = len(ns)
    if weight is not None and tuple(weight._data.shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight._data.shape)} and normalized_shape = {list(ns)}")
    if len(shape) < k or tuple(shape[len(shape) - k:]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in ns)}], but got input of size{list(shape)}")
    if eps is None:
        dt = input._data.dtype
        eps = float(np.finfo(dt).eps) if dt.kind == "f" else 1.1920928955078125e-07
    dims = tuple(range(len(shape) - k, len(shape)))
    out = input.mul(input.pow(2).mean(dims, keepdim=True).add(eps).rsqrt())
    if weight is not None:
        out = out.mul(weight)
        if out.dtype != input.dtype:
            out = out.to(input.dtype)
    return out.contiguous()


# dropout: PyTorch's CPU kernel draws the mask as empty_like(x).bernoulli_(1 - p) ((N, C, 1, ...) for
# feature dropout), divides it by 1 - p in x's dtype and multiplies (MulBackward0; the alpha forms add a
# shift: AddBackward0).  The same steps on glassgrad's bit-exact generator give the same mask.
_ALPHA = 1.7580993408473766


def _bernoulli_like(x, q):
    """``empty_like(x).bernoulli_(q)``: empty_like keeps x's memory layout and bernoulli_ fills memory in
    order, so a transposed input gets its mask drawn in its storage order."""
    from .creation import empty, empty_like
    a = x._data
    if a.ndim < 2 or a.flags.c_contiguous:
        return empty_like(x).bernoulli_(q)
    st = [abs(s) for s in a.strides]
    perm = sorted(range(a.ndim), key=lambda i: (-st[i], i))
    n = empty(tuple(a.shape[i] for i in perm), dtype=x.dtype).bernoulli_(q)
    return n.permute(*[perm.index(i) for i in range(a.ndim)])


def _dropout_impl(input, p, train, feature, alpha, inplace):
    from .creation import empty, zeros
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input._data.size == 0:
        return input
    if p == 1:
        z = zeros((), dtype=input.dtype)
        return input.mul_(z) if inplace else input.mul(z)
    if feature:
        if input._data.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = input._data.shape[:2] + (1,) * (input._data.ndim - 2)
        noise = empty(shape, dtype=input.dtype).bernoulli_(1 - p)
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
