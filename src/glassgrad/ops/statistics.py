"""Statistics and norms over dimensions: var std (with their correction), the p-norm (torch.linalg.vector_norm
underneath), logsumexp, median nanmedian mode kthvalue, and histc.

ops: var std norm logsumexp median nanmedian mode kthvalue histc
"""
import math
import warnings

import numpy as np

from .._rng.kernels import _fma64
from .. import _args, _dtype
from .._tensor import Tensor, _wrap_dim
from .. import backend
from ._core import make, edge, save_in, save_out, grad, ordered, as_array
from ..autograd.graph import Node
from .reduction import (_dims, _expand_back, _keep, _count, _even_weights, _mask_node, _MaskScale,
                        _check_nonempty, _name_c)
from .sorting import named, selected, _SelectNode
from .conversion import c_result
from ._core import NotImplementedNode, no_complex

__all__ = ["var", "std", "norm", "logsumexp", "median", "nanmedian", "mode", "kthvalue", "histc", "bincount", "histogram"]


# -- var / std ----------------------------------------------------------------------------------------
def _var_args(name, input, dim, unbiased, correction):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    a = input._data
    if a.dtype.kind not in "fcV":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if unbiased is not None:
        _args.bool_arg(unbiased, name, "unbiased")
    if correction is None:
        correction = 0 if unbiased is False else 1
    else:
        correction = _args.number_arg(correction, name, "correction")
    axes = _dims(dim, a.ndim)
    n = _count(a.shape, axes)
    if n - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    return a, axes, correction, n


def _centered(ns, x, axes, n):
    return x - ns.sum(x, axes, True) / n


class VarBackward0(Node):           # y = sum((x - mean)^2) / (n - c); dx = gy * 2 (x - mean) / (n - c)
    __slots__ = ("in_shape", "axes", "keepdim", "n", "corr")
    _saved_names = ("self",)

    def backward(self, ns, g):
        x, = ns.unpack(self)
        gk = _expand_back(ns, g, self.in_shape, self.axes, self.keepdim)
        with np.errstate(all="ignore"):
            k = np.float64(2.0) / (self.n - self.corr)
        return (gk * _centered(ns, x, self.axes, self.n) * float(k),)


class StdBackward0(Node):           # y = sqrt(var); dx = gy (x - mean) / ((n - c) y), 0 where y == 0
    __slots__ = ("in_shape", "axes", "keepdim", "n", "corr")
    _saved_names = ("self", "result")

    def backward(self, ns, g):
        x, y = ns.unpack(self)
        yk = _expand_back(ns, y, self.in_shape, self.axes, self.keepdim)
        gk = _expand_back(ns, g, self.in_shape, self.axes, self.keepdim)
        nz = np.broadcast_to(_keep(ns.data(y), self.in_shape, self.axes, self.keepdim) != 0, self.in_shape)
        with np.errstate(all="ignore"):
            scale = ns.mask(nz, gk / yk)
            k = np.float64(1.0) / (self.n - self.corr)
        return (scale * _centered(ns, x, self.axes, self.n) * float(k),)


def _var_out(cls, input, a, y, axes, keepdim, corr, n, save_result):
    y = c_result(as_array(y, a.real.dtype), a)
    if input._rg and grad.enabled:
        nd = cls((edge(input),))
        nd.in_shape = a.shape
        nd.axes = axes
        nd.keepdim = keepdim
        nd.n = n
        nd.corr = corr
        out = make(y, True, nd)
        nd._saved = (save_in(input), save_out(out)) if save_result else (save_in(input),)
        return out
    return make(y)


def _var_values(a, axes, c, n, keepdim):
    with np.errstate(all="ignore"):
        m = np.mean(a, axis=axes, keepdims=True) if n else 0
        d = a - m
        ss = np.sum(d.real ** 2 + d.imag ** 2 if a.dtype.kind == "c" else d ** 2, axis=axes, keepdims=keepdim)
        rt = a.real.dtype           # complex input: a real variance
        return as_array(ss / rt.type(n - c) if n - c != 0 else ss / 0.0, rt)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    a, axes, c, n = _var_args("var", input, dim, unbiased, correction)
    return _var_out(VarBackward0, input, a, _var_values(a, axes, c, n, keepdim), axes, keepdim, c, n, False)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    a, axes, c, n = _var_args("std", input, dim, unbiased, correction)
    with np.errstate(all="ignore"):
        y = np.sqrt(_var_values(a, axes, c, n, keepdim))
    return _var_out(StdBackward0, input, a, y, axes, keepdim, c, n, True)


# -- norm (torch.linalg.vector_norm underneath) -----------------------------------------------------------
class LinalgVectorNormBackward0(Node):
    __slots__ = ("in_shape", "axes", "keepdim", "p")
    _saved_names = ("self", "result")

    def backward(self, ns, g):
        x, y = ns.unpack(self)
        p = self.p
        sh, ax, kd = self.in_shape, self.axes, self.keepdim
        gk = _expand_back(ns, g, sh, ax, kd)
        with np.errstate(all="ignore"):
            if p == 0:
                return (gk * ns.const(np.zeros(sh, ns.data(x).dtype, like=ns.data(x)), g),)
            if p == 1:
                return (ns.sgn(x) * gk,)
            ydat = np.broadcast_to(_keep(ns.data(y), sh, ax, kd), sh)
            yk = _expand_back(ns, y, sh, ax, kd)
            if p == 2:
                return (x * ns.mask(ydat != 0, gk / yk),)
            if p in (float("inf"), float("-inf")):
                w = _even_weights(np.abs(ns.data(x)), _keep(ns.data(y), sh, ax, kd), ax)
                return (ns.sgn(x) * gk * ns.const(w, g),)
            xd = ns.data(x)
            if p < 1:
                sx = ns.mask(xd != 0, ns.sgn(x) * ns.pow(ns.abs(x), p - 1))
                return (sx * gk * ns.pow(yk, 1 - p),)
            sx = x * ns.pow(ns.abs(x), p - 2) if p != 2 else x
            return (sx * ns.mask(ydat != 0, gk / ns.pow(yk, p - 1)),)


class NormBackward1(LinalgVectorNormBackward0):
    """torch.norm(x, p, dim, keepdim)'s node (the one pairwise_distance records)."""
    __slots__ = ()


def _vector_norm(a, p, axes, keepdim):
    ab = np.abs(a)
    if p == 2:      # ufunc reduce directly: np.sum's Python wrapper costs more than a small norm
        return np.sqrt(np.add.reduce(ab * ab, axis=axes, keepdims=keepdim))
    if p == 1:
        return np.add.reduce(ab, axis=axes, keepdims=keepdim)
    if p == 0:
        return np.sum(ab != 0, axis=axes, keepdims=keepdim).astype(ab.dtype)
    if p == float("inf"):
        return np.max(ab, axis=axes, keepdims=keepdim)
    if p == float("-inf"):
        return np.min(ab, axis=axes, keepdims=keepdim)
    with np.errstate(all="ignore"):
        return np.power(np.sum(np.power(ab, p), axis=axes, keepdims=keepdim), 1.0 / p)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, out=None):
    if dtype is not None:
        d = _dtype.to_dtype(dtype)
        if input._data.dtype != d.np:
            input = input.to(d)
    a = input._data
    if isinstance(p, str):
        if p != "fro":
            if p == "nuc":
                raise NotImplementedError("norm(p='nuc') is not supported by glassgrad")
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        p = 2
    if p is None:
        p = 2
    p = float(p)
    if a.dtype.kind not in "fcV":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_name_c(a)}")
    if isinstance(dim, int):
        dim = (dim,)
    axes = _dims(dim, a.ndim)
    if p in (float("inf"), float("-inf")) or p < 0:
        if a.size == 0 and dim is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on an empty tensor because the "
                               "operation does not have an identity")
        for ax in axes:
            if a.shape[ax] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {p:g} norm on the dimension {ax}"
                                   "because this dimension is empty and the operation does not have an identity")
    y = c_result(as_array(_vector_norm(a, p, axes, keepdim), a.real.dtype), a)       # complex input: a real norm
    if input._rg and grad.enabled:
        n = LinalgVectorNormBackward0((edge(input),))
        n.in_shape = a.shape
        n.axes = axes
        n.keepdim = keepdim
        n.p = p
        out = make(y, True, n)
        n._saved = (save_in(input), save_out(out))
        return out
    return make(y)


norm_general = norm


# -- logsumexp -----------------------------------------------------------------------------------------------
class LogsumexpBackward0(Node):     # y = log(sum(exp(x))); dx = gy * exp(x - y)
    __slots__ = ("in_shape", "axes", "keepdim")
    _saved_names = ("self", "result")

    def backward(self, ns, g):
        x, y = ns.unpack(self)
        sh, ax, kd = self.in_shape, self.axes, self.keepdim
        return (_expand_back(ns, g, sh, ax, kd) * ns.exp(x - _expand_back(ns, y, sh, ax, kd)),)


def logsumexp(input, dim, keepdim=False, *, out=None):
    if input._data.dtype.kind not in "fcV":
        input = input.to(_dtype._default[0])
    a = input._data
    if isinstance(dim, int):
        dim = (dim,)
    axes = _dims(dim, a.ndim)
    with np.errstate(all="ignore"):
        if a.size:
            m = np.max(a, axis=axes, keepdims=True)
            m = np.where(np.isfinite(m), m, 0).astype(a.dtype)
        else:
            m = np.zeros(np.sum(a, axis=axes, keepdims=True).shape, a.dtype, like=a)
        y = np.log(np.sum(np.exp(a - m), axis=axes, keepdims=True)) + m
    if not keepdim:
        y = y.reshape(np.sum(a, axis=axes).shape)
    y = c_result(as_array(y, a.dtype), a)
    if input._rg and grad.enabled:
        n = LogsumexpBackward0((edge(input),))
        n.in_shape = a.shape
        n.axes = axes
        n.keepdim = keepdim
        out = make(y, True, n)
        n._saved = (save_in(input), save_out(out))
        return out
    return make(y)


# -- median / nanmedian / mode / kthvalue ------------------------------------------------------------------------------
class MedianBackward0(_MaskScale):
    __slots__ = ()


class NanmedianBackward0(_MaskScale):
    __slots__ = ()


class MedianBackward1(_SelectNode):
    __slots__ = ()


class NanmedianBackward1(_SelectNode):
    __slots__ = ()


class ModeBackward0(_SelectNode):
    __slots__ = ()


class KthvalueBackward0(_SelectNode):
    __slots__ = ()


def _median_pos(s, ignore_nan):
    """Position in the stably sorted last axis of the (lower) median; NaN rows pick their first NaN."""
    n = s.shape[-1]
    if s.dtype.kind not in "fV":
        return np.full(s.shape[:-1], (n - 1) // 2, np.int64, like=s)
    cnt = (~np.isnan(s)).sum(axis=-1)
    if ignore_nan:
        return np.where(cnt > 0, (cnt - 1) // 2, 0).astype(np.int64)
    return np.where(cnt < n, cnt, (n - 1) // 2).astype(np.int64)


def _full_median(name, cls, input, ignore_nan):
    a = input._data
    flat = np.sort(ordered(a).reshape(-1), kind="stable")
    if flat.size == 0:
        y = np.asarray(np.nan, a.dtype, like=a) if a.dtype.kind in "fV" else np.asarray(0, a.dtype, like=a)
        return _mask_node(cls, input, y, tuple(range(a.ndim)), False, np.zeros(a.shape, a.dtype, like=a))
    y = as_array(flat[_median_pos(flat, ignore_nan)], a.dtype)
    axes = tuple(range(a.ndim))
    w = _even_weights(a, y, axes) if input._rg and grad.enabled else None
    return _mask_node(cls, input, y, axes, False, w)


def _select_pos(name, cls, input, dim, keepdim, posfn):
    """values/indices of the element at sorted position posfn(sorted_rows) along dim."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    _check_nonempty(name, a, (d,))
    if a.ndim == 0:
        posfn(np.sort(a.reshape(1)))
        idx = np.zeros((), np.int64, like=a)
        return named(name, selected(cls, input, a.copy(), idx, d), make(idx))
    o = ordered(a)
    order = np.argsort(o, axis=d, kind="stable")
    s = np.moveaxis(np.take_along_axis(o, order, d), d, -1)
    pos = np.expand_dims(posfn(s) if a.shape[d] else np.zeros(s.shape[:-1], np.int64, like=s), d)
    idx = np.take_along_axis(order, pos, d).astype(np.int64)
    vals = np.take_along_axis(a, idx, d)
    if not keepdim:
        idx, vals = idx.squeeze(d), vals.squeeze(d)
    return named(name, selected(cls, input, vals, idx, d, keepdim), make(idx))


def median(input, dim=None, keepdim=False, *, out=None):
    no_complex(input, "median")
    if dim is None:
        return _full_median("median", MedianBackward0, input, False)
    return _select_pos("median", MedianBackward1, input, dim, keepdim, lambda s: _median_pos(s, False))


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    no_complex(input, "median")
    if dim is None:
        return _full_median("nanmedian", NanmedianBackward0, input, True)
    return _select_pos("nanmedian", NanmedianBackward1, input, dim, keepdim, lambda s: _median_pos(s, True))


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    k = _args.int_arg(k, "kthvalue", "k", 2)
    no_complex(input, "kthvalue")
    a = input._data
    d = _wrap_dim(dim, a.ndim)

    def pos(s):
        n = s.shape[-1]
        if k < 1 or k > n:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
        return np.full(s.shape[:-1], k - 1, np.int64, like=s)
    return _select_pos("kthvalue", KthvalueBackward0, input, dim, keepdim, pos)


def mode(input, dim=-1, keepdim=False, *, out=None):
    no_complex(input, "mode")
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    _check_nonempty("mode", a, (d,))
    if a.ndim == 0:
        idx = np.zeros((), np.int64, like=a)
        return named("mode", selected(ModeBackward0, input, a.copy(), idx, d), make(idx))
    am = np.moveaxis(ordered(a), d, -1)
    rows = am.reshape(-1, am.shape[-1])
    idx = np.zeros(rows.shape[0], np.int64, like=a)
    for r in range(rows.shape[0]):
        row = rows[r]
        u, c = np.unique(row, return_counts=True)
        v = u[np.argmax(c)]
        nan = (isinstance(v, float) and np.isnan(v)) if a.__class__ is np.ndarray else \
            (v.dtype == np.float64 and bool(np.isnan(v)))     # (the device's 0-d result for a Python float)
        idx[r] = np.nonzero(row == v)[0][-1] if not nan else \
            np.nonzero(np.isnan(row))[0][-1]
    idx = np.expand_dims(idx.reshape(am.shape[:-1]), d)
    vals = np.take_along_axis(a, idx, d)
    if not keepdim:
        idx, vals = idx.squeeze(d), vals.squeeze(d)
    return named("mode", selected(ModeBackward0, input, vals, idx, d, keepdim), make(idx))


# -- histc ----------------------------------------------------------------------------------------------
def _cfmt(v):
    """A double as C++ streams print it (torch's messages): 0, 1.5, inf, -nan."""
    return "-nan" if v != v else f"{v:g}"


def histc(input, bins=100, min=0, max=0, *, out=None):
    """torch.histc: the counts of input's elements in `bins` equal bins over [min, max] (min == max: the
    data's own range, widened by 1 each way if that is one value too).  Elements outside the range and
    NaNs are not counted; the last bin includes its right edge.  Computed as torch's CPU kernel does (bin =
    trunc((x - min) * bins / (max - min)) in the input's dtype), so the counts match at bin edges too.
    Not differentiable: the result never requires grad."""
    no_complex(input, "aminmax")
    bins = _args.int_arg(bins, "histc", "bins", 2)
    lo = float(_args.number_arg(min, "histc", "min", 3))
    hi = float(_args.number_arg(max, "histc", "max", 4))
    a = input._data
    if lo == hi and a.size:
        lo, hi = float(np.min(a)), float(np.max(a))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_cfmt(lo)}, {_cfmt(hi)}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if a.dtype.kind not in "fV":
        kernel = "linspace_cpu" if a.dtype == np.bool_ else "histogram_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.from_numpy_dtype(a.dtype).name_c}'")
    t = a.dtype.type
    if not (np.isfinite(t(lo)) and np.isfinite(t(hi))):
        raise RuntimeError(f"value cannot be converted to type {_dtype.from_numpy_dtype(a.dtype).name_c.lower()} "
                           "without overflow")
    lo_t, hi_t = t(lo), t(hi)
    x = a.reshape(-1)
    x = x[(x >= lo_t) & (x <= hi_t)]
    with np.errstate(all="ignore"):
        pos = ((x - lo_t) * t(bins) / (hi_t - lo_t)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)         # the rightmost bin includes its right edge
    return make(np.bincount(pos, minlength=bins).astype(a.dtype))


def bincount(input, weights=None, minlength=0):
    """torch.bincount: how often each value 0..max occurs in the non-negative 1-d integer `input` (the sum of
    `weights` at them when given: float32 weights give float32, others float64).  Not differentiable: with
    weights that require grad the result's grad_fn is NotImplemented, as torch's."""
    a = input._data
    if a.dtype == np.bool_:
        raise NotImplementedError("\"bincount_cpu\" not implemented for 'Bool'")
    if a.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_dtype.from_numpy_dtype(a.dtype).name_c}'")
    minlength = _args.int_arg(minlength, "bincount", "minlength", 3)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights._data.ndim != 1 or weights._data.shape[0] != a.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if a.size == 0:
        return make(np.zeros(minlength, np.int64, like=a))
    if weights is None:
        return make(np.bincount(a, minlength=minlength).astype(np.int64))
    w = weights._data
    dt = np.float32 if w.dtype == np.float32 else np.float64
    y = np.bincount(a, weights=w.astype(np.float64), minlength=minlength).astype(dt)
    if grad.enabled and weights._rg:
        node = NotImplementedNode((edge(weights),))
        node.what = "aten::bincount"
        return make(y, True, node, 0)
    return make(y)


def _histogram_edges(input, bins, range):
    """(bin edges, whether they came from a bins tensor) for torch.histogram, with torch's checks."""
    a = input._data
    if hasattr(bins, "_data"):
        if bins._data.dtype != a.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_dtype.cpp_name(a.dtype)} and bins for dimension 0 with dtype "
                               f"{_dtype.cpp_name(bins._data.dtype)}")
        return bins._data.reshape(-1).copy(), True
    nb = _args.int_arg(bins, "histogram", "bins", 2)
    if nb <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {nb} for dimension 0")
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
    elif a.size:
        lo, hi = float(np.min(a)), float(np.max(a))
    else:
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not finite")
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for dimension 0")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _fused_linspace(lo, hi, nb + 1, a.dtype, a), False


def _fused_linspace(lo, hi, steps, npdt, like):
    """torch's CPU linspace in npdt: start + step i for the first half, end - step (steps - 1 - i) for the
    rest, each a fused multiply-add (one rounding: float32's through float64, float64's by _fma64's exact
    emulation), on `like`'s device."""
    t = npdt.type
    step = float(t((t(hi) - t(lo)) / t(steps - 1)))
    i = np.arange(steps, dtype=np.float64, like=backend.like(like))
    k = (steps - 1) - i
    half = i < steps // 2
    if npdt == np.float64:
        e = np.where(half, _fma64(i, step, float(t(lo))), _fma64(k, -step, float(t(hi))))
    else:
        e = np.where(half, float(t(lo)) + step * i, float(t(hi)) - step * k)
    return e.astype(npdt)


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """torch.histogram: (hist, bin_edges) of the flattened input, counted as torch's CPU kernel does (an
    element's bin found from its linear position, then checked against the edges; the last bin includes its
    right edge; NaNs and elements outside the edges are not counted).  Not differentiable: inputs that
    require grad give a NotImplemented grad_fn, as torch's."""
    a = input._data
    if a.dtype.kind not in "fV" or (a.dtype not in (np.float32, np.float64) and range is None and a.size
                                     and not isinstance(bins, Tensor)):
        # torch finds the range of a float16 / bfloat16 input with a kernel that has no such dtype
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_dtype.from_numpy_dtype(a.dtype).name_c}'")
    if weight is not None:
        if weight._data.dtype != a.dtype:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                               f"have the same dtype, but got input({_dtype.cpp_name(a.dtype)}), and "
                               f"weight({_dtype.cpp_name(weight._data.dtype)})")
        if weight._data.shape != a.shape:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                               f"input tensor excluding its innermost dimension, but got input with shape "
                               f"[{a.size}, 1] and weight with shape {list(weight._data.shape)}")
    edges, searched = _histogram_edges(input, bins, range)
    nb = edges.size - 1
    x = a.reshape(-1)
    keep = (x >= edges[0]) & (x <= edges[-1])
    x = x[keep]
    ub = np.searchsorted(edges, x, side="right")
    if not searched:
        with np.errstate(all="ignore"):
            pos = np.trunc((x - edges[0]) * a.dtype.type(nb) / (edges[-1] - edges[0])).astype(np.int64)
        ub = np.clip(ub, np.maximum(pos - 1, 0), np.minimum(pos + 2, nb + 1))
    pos = np.minimum(ub - 1, nb - 1)
    w = None if weight is None else weight._data.reshape(-1)[keep].astype(np.float64)
    hist = np.bincount(pos, weights=w, minlength=nb)[:nb].astype(a.dtype)
    if density:
        with np.errstate(all="ignore"):
            hist = (hist / hist.sum() / np.diff(edges)).astype(a.dtype)
    ins = [t for t in (input, weight, bins) if hasattr(t, "_rg") and t._rg]
    if grad.enabled and ins:
        node = NotImplementedNode(tuple(edge(t) for t in ins))
        node.what = "aten::histogram"
        return named("histogram", make(hist, True, node, 0), make(edges, True, node, 1), ("hist", "bin_edges"))
    return named("histogram", make(hist), make(edges), ("hist", "bin_edges"))
