"""Normalisation primitives (the nodes PyTorch shows for the norm layers).

ops: batch_norm (NativeBatchNormBackward0), layer_norm (NativeLayerNormBackward0),
     group_norm (NativeGroupNormBackward0); composites as in PyTorch: instance_norm, rms_norm.
Embedding lookups live in ops/embedding.py, dropout in ops/dropout.py.

All three norms share one core: x is normalised over some axes,
    xhat = (x - mean) * invstd,   invstd = 1 / sqrt(var + eps)   (biased variance)
and with dxhat = gy * weight the input gradient is
    dx = invstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
(or dx = dxhat * invstd when the statistics are constants: batch norm in eval mode).
In array mode the forward's mean / invstd are reused; in tensor mode (create_graph) they are
recomputed from the saved input with differentiable ops, so second derivatives are exact.
"""
import numpy as np

from .. import _args, _cuda_kernels, _dtype
from .. import _memory_format as _mf
from .._cuda_kernels import bn as _k_bn
from .._cuda_kernels import seq as _k_seq

from ._core import make, edge, save_in, grad, as_array
from ..autograd.graph import Node, freed_error
from .namespaces import TEN

# the torch-namespace functions (torch.batch_norm, torch.layer_norm, ...); nn.functional wraps them
__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm"]


def _stats(a, axes):
    """Mean and biased variance of array `a` over `axes` (kept), accumulated in float64 (float32 inputs
    keep float32 temporaries: no full-size float64 copy)."""
    if a.dtype != np.float32:
        a = a.astype(np.float64, copy=False)
    mean = a.mean(axis=axes, keepdims=True, dtype=np.float64)
    xc = a - mean.astype(a.dtype)
    var = np.square(xc).mean(axis=axes, keepdims=True, dtype=np.float64)
    return mean, var


def _t_stats(ns, x, axes, n, eps):
    """Differentiable mean / invstd of Tensor x over axes (tensor-mode backward)."""
    mean = ns.sum(x, axes, True) * (1.0 / n)
    xc = x - mean
    var = ns.sum(xc * xc, axes, True) * (1.0 / n)
    return mean, 1.0 / ns.sqrt(var + eps)


def _dx_core(ns, x, dxh, axes, n, mean, invstd):
    """Input gradient of xhat = (x - mean) * invstd with batch statistics over axes."""
    xh = (x - mean) * invstd
    inv_n = 1.0 / n
    return invstd * (dxh - ns.sum(dxh, axes, True) * inv_n - xh * (ns.sum(dxh * xh, axes, True) * inv_n))


def _unpack(ns, node):
    saved = node._saved
    if saved is None:
        raise freed_error()
    return tuple(None if s is None else ns.unpack_one(node, s) for s in saved)


def _saved_prop(i):
    """grad_fn._saved_<name> for an entry that may be None (no weight, no running stats)."""
    def get(self):
        saved = self._saved
        if saved is None:
            raise freed_error()
        s = saved[i]
        return None if s is None else TEN.unpack_one(self, s)
    return property(get)


def _result_props(flat):
    """_saved_result1 / _saved_result2: the mean and invstd the forward computed (torch's shapes: (C,) for
    batch norm, (N, G) for group norm, the kept-dims shape for layer norm)."""
    def f(name):
        def get(self):
            a = as_array(getattr(self, name))
            return make(a.reshape(a.shape[:flat] if flat else -1).copy() if flat is not None else a.copy())
        return property(get)
    return f("mean"), f("invstd")


def _want(node, i):
    return node.next_functions[i][0] is not None


def _C(ns, arr, like):
    return ns.const(arr, like) if ns.is_tensor_mode else arr


def _float_kernel(input, kernel):
    """torch's normalisation kernels exist for floating dtypes only."""
    if input._data.dtype.kind not in "fV":
        name = _dtype.from_numpy_dtype(input._data.dtype).name_c
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def _check_param_dtypes(input, *ts):
    """PyTorch's CPU mixed-dtype checks: parameters must share the input's dtype (a half / bfloat16 input may
    take float32 parameters)."""
    dt = input._data.dtype
    ps = [t._data.dtype for t in ts if t is not None]
    if not ps:
        return
    if ps[0] != dt:
        if any(p != np.float32 for p in ps):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if dt != np.float16 and dt.kind != "V":          # float16 / bfloat16 input, float32 parameters
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

    def backward(self, ns, g):
        saved = _unpack(ns, self)
        x = saved[0]
        w = saved[1] if self.has_w else None
        axes, bshape = self.axes, self.bshape
        if ns.is_tensor_mode:
            if self.training:
                mean, invstd = _t_stats(ns, x, axes, self.n, self.eps)
            else:
                rm, rv = saved[2], saved[3]
                mean = ns.const(as_array(rm._data, np.float64).reshape(bshape).astype(x._data.dtype), g)
                invstd = ns.const((1.0 / np.sqrt(rv._data.astype(np.float64) + self.eps)).reshape(bshape)
                                 .astype(x._data.dtype), g)
        else:
            mean, invstd = self.mean, self.invstd
            if _k_bn.takes(x, (g, w, mean, invstd)):    # a GPU: one launch
                want = [_want(self, i) for i in range(3)]
                return _k_bn.backward(x, g, w, mean, invstd, self.training, want)
            if self.training and x.dtype in (np.float32, np.float64) and x.flags.c_contiguous and \
                    g.dtype == x.dtype and (w is None or w.dtype == x.dtype):
                N, C = x.shape[:2]
                want = [_want(self, i) for i in range(3)]
                gx, gw, gb = _bn_train_backward(x.reshape(N, C, -1), g.reshape(N, C, -1), w, mean, invstd,
                                                self.n, want)
                return (None if gx is None else gx.reshape(x.shape)), gw, gb
        wb = None if w is None else ns.reshape(w, bshape)
        gx = gw = gb = None
        if _want(self, 0):
            dxh = g if wb is None else g * wb
            if self.training:
                gx = _dx_core(ns, x, dxh, axes, self.n, mean, invstd)
            else:
                gx = dxh * invstd
        if _want(self, 1):
            gw = ns.sum(g * ((x - mean) * invstd), axes)
        if _want(self, 2):
            gb = ns.sum(g, axes)
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
    arrs = [None if t is None else t._data for t in (weight, bias, running_mean, running_var)]
    if _k_bn.takes(x, arrs):                    # a GPU: the whole forward in one launch, the same steps
        y, mean_t, invstd = _k_bn.train_forward(x, *arrs, momentum, eps) if training else \
            _k_bn.eval_forward(x, *arrs, eps)
        mean_t, invstd = mean_t.reshape(bshape), invstd.reshape(bshape)
    else:
        y, mean_t, invstd = _bn_arrays(x, weight, bias, running_mean, running_var, training, momentum, eps,
                                       (axes, bshape, n, c))
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


def _bn_arrays(x, weight, bias, running_mean, running_var, training, momentum, eps, dims):
    """Batch norm's forward as array code: (y, mean, invstd), the statistics (1, C, 1...) in x's dtype."""
    axes, bshape, n, c = dims
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
            mean = var = np.full(bshape, np.nan, like=x)
        if running_mean is not None and n:
            m = float(momentum)
            rm = running_mean._data
            rm[...] = (m * mean.reshape(-1) + (1 - m) * rm.astype(np.float64)).astype(rm.dtype).reshape(rm.shape)
        if running_var is not None and n:
            m = float(momentum)
            rv = running_var._data
            unb = var.reshape(-1) * (n / (n - 1)) if n > 1 else np.full(c, np.nan, like=x)
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
        elif dt.kind == "V":        # bfloat16: the bf16 mean and invstd applied in float32, y rounded once
            f32 = np.float32
            y = (x.astype(f32) - mean_t.astype(f32)) * invstd.astype(f32)
            if weight is not None:
                y = y * weight._data.reshape(bshape).astype(f32)
            if bias is not None:
                y = y + bias._data.reshape(bshape).astype(f32)
            y = y.astype(dt)
        else:
            beta = -mean_t * alpha
            if bias is not None:
                beta = beta + bias._data.reshape(bshape)
            y = (x * alpha + beta).astype(dt, copy=False)
    return y, mean_t, invstd


# -- layer norm / group norm -----------------------------------------------------------------------
class NativeLayerNormBackward0(Node):
    __slots__ = ("mean", "invstd", "axes", "n", "eps", "has_w")
    _saved_names = ("input", "weight")
    _saved_weight = _saved_prop(1)
    _saved_result1, _saved_result2 = _result_props(None)

    def backward(self, ns, g):
        saved = _unpack(ns, self)
        x = saved[0]
        w = saved[1] if self.has_w else None
        axes = self.axes
        if ns.is_tensor_mode:
            mean, invstd = _t_stats(ns, x, axes, self.n, self.eps)
        else:
            mean, invstd = self.mean, self.invstd
            if _fused_ln_backward(x, g, w, mean, invstd):    # a GPU: two kernels, the same steps
                return _ln_backward_fused(self, x, g, w)
        gx = gw = gb = None
        lead = tuple(range(ns.data(x).ndim - len(axes)))
        if _want(self, 0):
            dxh = g if w is None else g * w
            gx = _dx_core(ns, x, dxh, axes, self.n, mean, invstd)
        if _want(self, 1):
            gw = g * ((x - mean) * invstd)
            gw = ns.sum(gw, lead) if lead else gw
        if _want(self, 2):
            gb = ns.sum(g, lead) if lead else g
        return gx, gw, gb


def _fused_ln_backward(x, g, w, mean, invstd):
    """Whether layer norm's array-mode backward goes to the fused kernels (a GPU; contiguous arrays of x's dtype)."""
    if x.__class__ is np.ndarray or not x.size or x.dtype not in _LN_FUSED or g.shape != x.shape:
        return False
    arrays = (x, mean, invstd) if w is None else (x, mean, invstd, w)
    return (all(a.dtype == x.dtype and a.flags.c_contiguous for a in arrays) and g.dtype == x.dtype
            and _cuda_kernels.available())


def _ln_backward_fused(node, x, g, w):
    want = (_want(node, 0), _want(node, 1), _want(node, 2))
    g = g if g.flags.c_contiguous else g.copy(order="C")
    gx, gw, gb = _k_seq.layer_norm_backward(x, g, w, node.mean, node.invstd, node.n, want)
    shape = x.shape[x.ndim - len(node.axes):]
    return gx, None if gw is None else gw.reshape(shape), None if gb is None else gb.reshape(shape)


def _ln_arrays(x, axes, k, weight, bias, eps):
    """Layer norm's forward as array code: (y, mean, invstd), the statistics float64."""
    dt = x.dtype
    if x.size:
        mean, var = _stats(x, axes)
    else:
        mean = var = np.zeros(x.shape[:x.ndim - k] + (1,) * k, like=x)
    invstd64 = 1.0 / np.sqrt(var + eps)
    cd = np.dtype(np.float32) if dt.kind == "V" else dt    # bfloat16: in float32, rounded once
    y = ((x.astype(cd, copy=False) - mean.astype(cd)) * invstd64.astype(cd)).astype(cd, copy=False)
    if weight is not None:
        y = y * weight._data.astype(cd, copy=False)
    if bias is not None:
        y = y + bias._data.astype(cd, copy=False)
    return y.astype(dt, copy=False), mean, invstd64


_LN_FUSED = (np.dtype(np.float32), np.dtype(np.float64))


def _fused_ln(x, weight, bias):
    if x.__class__ is np.ndarray or not x.size or x.dtype not in _LN_FUSED or not x.flags.c_contiguous:
        return False
    for t in (weight, bias):
        if t is not None and (t._data.dtype != x.dtype or not t._data.flags.c_contiguous):
            return False
    return _cuda_kernels.available()


def _native_layer_norm(input, normalized_shape, weight, bias, eps):
    _float_kernel(input, "LayerNormKernelImpl")
    _check_param_dtypes(input, weight, bias)
    x = input._data
    norm_shape = tuple(normalized_shape)
    k = len(norm_shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
                           "one element, but got normalized_shape = []")
    for nm, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t._data.shape) != norm_shape:
            raise RuntimeError(f"Expected {nm} to be of same shape as normalized_shape, but got {nm} of shape "
                               f"{list(t._data.shape)} and normalized_shape = {list(norm_shape)}")
    if x.ndim < k or x.shape[x.ndim - k:] != norm_shape:
        raise RuntimeError(f"Given normalized_shape={list(norm_shape)}, expected input with shape [*, "
                           f"{', '.join(str(s) for s in norm_shape)}], but got input of size{list(x.shape)}")
    axes = tuple(range(x.ndim - k, x.ndim))
    n = int(np.prod(norm_shape))
    dt = x.dtype
    if _fused_ln(x, weight, bias):              # a GPU: the whole forward in one kernel, the same steps
        y, mean, invstd = _cuda_kernels.layer_norm(x, k, None if weight is None else weight._data,
                                                   None if bias is None else bias._data, eps)   # (in x's dtype)
    else:
        y, mean, invstd = _ln_arrays(x, axes, k, weight, bias, eps)                               # (float64)
    if not y.flags.c_contiguous:
        y = np.ascontiguousarray(y, like=y)         # torch's layer_norm writes a contiguous result
    ins = (input, weight, bias)
    if grad.enabled and any(t is not None and t._rg for t in ins):
        node = NativeLayerNormBackward0(tuple(edge(t) if t is not None else (None, 0) for t in ins))
        node.mean, node.invstd = mean.astype(dt, copy=False), invstd.astype(dt, copy=False)
        node.axes, node.n, node.eps, node.has_w = axes, n, eps, weight is not None
        node._saved = (save_in(input), save_in(weight) if weight is not None else None)
        return make(y, True, node)
    return make(y)


class NativeGroupNormBackward0(Node):
    __slots__ = ("mean", "invstd", "gshape", "n", "eps", "has_w", "bshape")
    _saved_names = ("input", "weight")
    _saved_weight = _saved_prop(1)
    _saved_result1, _saved_result2 = _result_props(2)

    def backward(self, ns, g):
        saved = _unpack(ns, self)
        x = saved[0]
        w = saved[1] if self.has_w else None
        gshape, bshape = self.gshape, self.bshape
        shape = ns.data(x).shape
        xr = ns.reshape(x, gshape)
        if ns.is_tensor_mode:
            mean, invstd = _t_stats(ns, xr, (2,), self.n, self.eps)
        else:
            mean, invstd = self.mean, self.invstd
        raxes = (0,) + tuple(range(2, len(shape)))
        gx = gw = gb = None
        if _want(self, 0):
            dxh = g if w is None else g * ns.reshape(w, bshape)
            gx = ns.reshape(_dx_core(ns, xr, ns.reshape(dxh, gshape), (2,), self.n, mean, invstd), shape)
        if _want(self, 1):
            xh = ns.reshape((xr - mean) * invstd, shape)
            gw = ns.sum(g * xh, raxes)
        if _want(self, 2):
            gb = ns.sum(g, raxes)
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
        mean = var = np.zeros((nb, G, 1), like=x)
    invstd64 = 1.0 / np.sqrt(var + eps)
    bshape = (1, c) + (1,) * (x.ndim - 2)
    cd = np.dtype(np.float32) if dt.kind == "V" else dt    # bfloat16: in float32, rounded once
    y = ((xr.astype(cd, copy=False) - mean.astype(cd)) * invstd64.astype(cd)).astype(cd, copy=False).reshape(x.shape)
    if weight is not None:
        y = y * weight._data.reshape(bshape).astype(cd, copy=False)
    if bias is not None:
        y = y + bias._data.reshape(bshape).astype(cd, copy=False)
    y = y.astype(dt, copy=False)
    ins = (input, weight, bias)
    if grad.enabled and any(t is not None and t._rg for t in ins):
        node = NativeGroupNormBackward0(tuple(edge(t) if t is not None else (None, 0) for t in ins))
        node.mean, node.invstd = mean.astype(dt), invstd64.astype(dt)
        node.gshape, node.bshape, node.n, node.eps, node.has_w = gshape, bshape, n, eps, weight is not None
        node._saved = (save_in(input), save_in(weight) if weight is not None else None)
        return make(y, True, node)
    return make(y)


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
    return _args.int_list(normalized_shape, fn, "normalized_shape", 2)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x * rsqrt(mean(x^2) + eps) (* weight), made contiguous in the input's suggested memory format:
    PyTorch's CPU composite."""
    _float_kernel(input, "rms_norm")
    norm_shape = _shape_arg(normalized_shape, "rms_norm")
    shape = input._data.shape
    k = len(norm_shape)
    if weight is not None and tuple(weight._data.shape) != norm_shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight._data.shape)} and normalized_shape = {list(norm_shape)}")
    if len(shape) < k or tuple(shape[len(shape) - k:]) != norm_shape:
        raise RuntimeError(f"Given normalized_shape={list(norm_shape)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in norm_shape)}], but got input of size{list(shape)}")
    if eps is None:
        dt = input._data.dtype
        eps = float(_dtype.np_finfo(dt).eps) if dt.kind in "fV" else 1.1920928955078125e-07
    dims = tuple(range(len(shape) - k, len(shape)))
    out = input.mul(input.pow(2).mean(dims, keepdim=True).add(eps).rsqrt())
    if weight is not None:
        out = out.mul(weight)
        if out.dtype != input.dtype:
            out = out.to(input.dtype)
    if input._data.flags.c_contiguous:
        return out.contiguous()
    return out.contiguous(memory_format=_mf.suggest(shape, input.stride()))     # torch: the suggested format
