"""Statistics PyTorch composes from other ops (their grad_fn is the last op's, as in torch): quantile and
nanquantile (sort, gather, lerp: torch's quantile_impl step by step), cov and corrcoef (torch's Correlation.cpp);
std_mean / var_mean (one node, two outputs) and logcumsumexp, with torch's backward formulas on Tensors; and
histogramdd (torch's binning, no gradient).

ops: quantile nanquantile cov corrcoef std_mean var_mean logcumsumexp histogramdd
"""
import builtins
import math
import warnings

import numpy as np

from .. import _args, _dtype
from .._tensor import _wrap_dim
from ._core import make, Tensor, edge, grad, NotImplementedNode, as_array
from .linalg_solve import _LaNode, wrap
from .reduction import _dims, _count, mean
from .conversion import c_result
from .statistics import var, _fused_linspace
from .sorting import named
from .ternary import where
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["quantile", "nanquantile", "cov", "corrcoef", "std_mean", "var_mean", "logcumsumexp", "histogramdd"]

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


# -- quantile / nanquantile -----------------------------------------------------------------------------------
def _q_tensor(input, q):
    if isinstance(q, Tensor):
        return q
    q = float(_args.number_arg(q, "quantile", "q", 2))
    if not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    return make(np.asarray(q, input._data.dtype, like=input._data))


def _quantile_checks(input, q, interpolation):
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if input._data.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q._data.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input._data.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q._data.dtype != input._data.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    qd = q._data
    if not bool(np.all((qd >= 0) & (qd <= 1))):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")


def _out_shape(x, q, dim, keepdim):
    nd = x._data.ndim
    if dim is not None and nd > 0:
        wd = _wrap_dim(dim, nd)
        shape = list(x._data.shape)
        if keepdim:
            shape[wd] = 1
        else:
            del shape[wd]
    else:
        shape = [1] * nd if keepdim else []
    if q._data.ndim > 0:
        shape.insert(0, q._data.size)
    return shape


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    name = "nanquantile" if ignore_nan else "quantile"
    if not isinstance(interpolation, str):
        raise TypeError(f"{name}(): argument 'interpolation' must be str, not {_args.type_name(interpolation)}")
    _args.bool_arg(keepdim, name, "keepdim", 4)
    q = _q_tensor(input, q)
    _quantile_checks(input, q, interpolation)
    nd = input._data.ndim
    if dim is not None:
        dim = _wrap_dim(dim, max(nd, 1))
    out_shape = _out_shape(input, q, dim, keepdim)
    if dim is None:
        srt = input.flatten().sort()[0]
    elif dim == nd - 1:
        srt = input.sort()[0]
    else:
        srt = input.unsqueeze(-1).transpose(dim, -1).sort()[0]
    if q._data.ndim == 0:
        out_shape.insert(0, 1)
    srt = srt.view(out_shape[1:] + [srt.shape[-1]])
    sd = srt._data
    ranks, fac, fill, mask = _ranks(q._data, sd, ignore_nan)
    ranks = {"lower": np.floor, "higher": np.ceil, "nearest": np.round}.get(interpolation, as_array)(ranks)
    below = ranks.astype(np.int64)
    vals = srt.gather(-1, make(below))
    if interpolation in ("linear", "midpoint"):
        if interpolation == "midpoint":
            w = make(np.full_like(ranks, 0.5))
        else:       # q * factor - below, differentiable in q (zero where torch's masked_fill wrote)
            w = q * make(np.where(mask, 0, fac).astype(sd.dtype)) + make((fill - below).astype(sd.dtype))
        above = srt.gather(-1, make(np.ceil(ranks).astype(np.int64)))
        vals = vals.lerp(above, w)
    if q._data.ndim == 0:
        return vals.squeeze_(-1)
    return vals.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)


def _ranks(q, sd, ignore_nan):
    """torch's ranks (in the input's dtype), the factor q is multiplied by, the value torch's masked_fill
    writes and where it writes it."""
    if ignore_nan:      # ranks from the number of non-NaN values; all NaN: rank 0
        fac = (np.sum(~np.isnan(sd), axis=-1, keepdims=True) - 1).astype(sd.dtype)
        ranks = as_array(q * fac, sd.dtype)
        mask = ranks < 0
        return np.where(mask, 0, ranks).astype(sd.dtype), fac, np.zeros(ranks.shape, np.int64, like=sd), mask
    last = sd.dtype.type(sd.shape[-1] - 1)    # a NaN in the row: the last rank (the result is NaN); a NumPy scalar
    r, mask = np.broadcast_arrays(as_array(q * last, sd.dtype), np.isnan(sd).any(-1, keepdims=True))
    return np.where(mask, last, r).astype(sd.dtype), last, np.where(mask, int(last), 0), mask


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    if _acs.on:
        return _ac.fp32(quantile, input, q, dim, keepdim, interpolation=interpolation, out=out)
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    if _acs.on:
        return _ac.fp32(nanquantile, input, q, dim, keepdim, interpolation=interpolation, out=out)
    return _quantile(input, q, dim, keepdim, interpolation, True)


# -- cov / corrcoef ---------------------------------------------------------------------------------------------
def _check_weights(name, w, n, integral):
    _args.tensor_arg(w, "cov", name)
    d = w._data
    if d.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{d.ndim} dimensions")
    ok = d.dtype.kind in "iu" if integral else d.dtype.kind in "fV"
    if not ok:
        kind = "integral" if integral else "floating point"
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{_dtype.c_name(d.dtype)} dtype")
    if d.size != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {d.size} != {n}")
    if n and d.min() < 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    if input._data.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input._data.ndim} dimensions")
    if input._data.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    correction = _args.int_arg(correction, "cov", "correction")
    x = input.view(1, -1) if input._data.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, False)
        w = aweights if w is None else w * aweights
    w_sum = make(np.asarray(n, np.int64, like=x._data)) if w is None else w.sum()
    if w is not None and not bool(w_sum._data != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor._data <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor.detach() * 0
    x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t())
    return c.true_divide(norm_factor).squeeze()


def corrcoef(input):
    if input._data.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input._data.ndim} dimensions")
    c = cov(input)
    if c._data.ndim == 0:
        return c / c
    sd = c.diagonal().sqrt()
    c = c / sd.view(-1, 1)
    c = c / sd.view(1, -1)
    return c.clip(-1, 1)


# -- std_mean / var_mean (one node, two outputs) ------------------------------------------------------------------
def _var_backward(g, x, dims, n, corr, keepdim):
    if not keepdim and x.dim() > 1 and dims:
        for d in dims:
            g = g.unsqueeze(d)
    mean = x.mean(dims, True) if dims else x.mean()
    return (2.0 / (n - corr)) * g * (x - mean)


class VarMeanBackward0(_LaNode):
    __slots__ = ()
    n_outputs = 2
    _saved_names = ("self",)

    def formula(self, grads, x, *res):
        dims, n, corr, keepdim = self.info
        gv, gm = grads
        out = None
        if gv is not None:
            if res:         # std: grad / (2 std), 0 where std is 0
                gv = (gv / (res[0] * 2)).masked_fill(res[0] == 0, 0)
            out = _var_backward(gv, x, dims, n, corr, keepdim)
        if gm is not None:
            if not keepdim and x.dim() > 1 and dims:
                for d in dims:
                    gm = gm.unsqueeze(d)
            aux = (gm / n).expand(x.shape)
            out = aux if out is None else out + aux
        return (out,)


class StdMeanBackward0(VarMeanBackward0):
    __slots__ = ()
    _saved_names = ("self", "result0")


def _var_mean(name, cls, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    if correction is None:
        correction = 0 if unbiased is False else 1
    v = var(input.detach(), dim, keepdim=keepdim, correction=correction)
    m = mean(input.detach(), dim, keepdim=keepdim)
    a = input._data
    axes = _dims(dim, a.ndim)
    n = _count(a.shape, axes)
    first = v.sqrt()._data if cls is StdMeanBackward0 else v._data
    info = ((axes if dim is not None and a.ndim else ()), n, correction, keepdim)
    outs = wrap((first, m._data), cls, (input,), (0,), (0,) if cls is StdMeanBackward0 else (), info)
    return outs


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_mean("std_mean", StdMeanBackward0, input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var_mean("var_mean", VarMeanBackward0, input, dim, unbiased, keepdim, correction)


# -- logcumsumexp -------------------------------------------------------------------------------------------------
class LogcumsumexpBackward0(_LaNode):
    """torch's logcumsumexp_backward: the positive and negative parts of grad through reversed scans."""
    __slots__ = ()
    _saved_names = ("self", "result")

    def formula(self, g, x, y):
        d = self.info
        if g.dim() == 0 or g.numel() == 0:
            return (g,)
        low = make(np.asarray(np.finfo(g._data.dtype).min, g._data.dtype, like=g._data))
        lag = g.abs().log()
        pos = where(g > 0, lag, low)
        neg = where(g < 0, lag, low)

        def rev(t):
            return logcumsumexp(t.flip([d]), d).flip([d])
        return ((rev(pos - y) + x).exp() - (rev(neg - y) + x).exp(),)


def logcumsumexp(input, dim, *, out=None):
    a = input._data
    d = _wrap_dim(dim, max(a.ndim, 1))
    if a.dtype.kind not in "fcV":
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{_dtype.c_name(a.dtype)}'")
    with np.errstate(all="ignore"):
        if not (a.ndim and a.size):
            y = a.copy()
        elif a.__class__ is np.ndarray or a.dtype.kind == "c":
            y = np.logaddexp.accumulate(a, axis=d)
        else:
            y = _logaddexp_scan(a, d)
    return wrap((c_result(as_array(y, a.dtype), a),), LogcumsumexpBackward0, (input,), (0,), (0,), d)[0]


def _logaddexp_scan(a, d):
    """logaddexp.accumulate along axis d for a device array (CuPy has no logaddexp.accumulate): Hillis-Steele's
    inclusive scan, log2(n) rounds of logaddexp over shifted halves (as a GPU scan; the sums associate differently
    from the sequential one, within rounding)."""
    y = np.moveaxis(a, d, -1).copy()
    k, n = 1, y.shape[-1]
    while k < n:
        y[..., k:] = np.logaddexp(y[..., k:], y[..., :-k])
        k *= 2
    return np.moveaxis(y, -1, d)


# -- histogramdd ----------------------------------------------------------------------------------------------------
def _dd_edges(x, d, bins, rng):
    """Dimension d's bin edges (torch's fused linspace over its range, or a bins tensor) and whether they were
    given (then an element's bin is searched for, not computed)."""
    col = x[:, d]
    if hasattr(bins, "_data"):
        if bins._data.dtype != x.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_dtype.cpp_name(x.dtype)} and bins for dimension {d} with dtype "
                               f"{_dtype.cpp_name(bins._data.dtype)}")
        return bins._data.reshape(-1).copy(), True
    nb = _args.int_arg(bins, "histogramdd", "bins", 2)
    if nb <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {nb} for dimension {d}")
    if rng is not None:
        lo, hi = float(rng[2 * d]), float(rng[2 * d + 1])
    elif col.size:
        lo, hi = float(np.min(col)), float(np.max(col))
    else:
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{lo:g}, {hi:g}] is not finite")
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                           f"dimension {d}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _fused_linspace(lo, hi, nb + 1, x.dtype, x), False


def _dd_bin(col, edges, searched):
    """torch's bin of each value along one dimension (-1: outside the edges or NaN)."""
    nb = edges.size - 1
    inside = (col >= edges[0]) & (col <= edges[-1])
    ub = np.searchsorted(edges, col, side="right")
    if not searched:
        with np.errstate(all="ignore"):
            pos = np.trunc((col - edges[0]) * col.dtype.type(nb) / (edges[-1] - edges[0]))
        pos = np.where(inside, pos, 0).astype(np.int64)
        ub = np.clip(ub, np.maximum(pos - 1, 0), np.minimum(pos + 2, nb + 1))
    return np.where(inside, np.minimum(ub - 1, nb - 1), -1)


def _dd_checks(a, bins, weight, rng):
    if rng is not None and (not isinstance(rng, (list, tuple)) or
                            not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in rng)):
        raise TypeError(f"histogramdd(): argument 'range' must be tuple of floats, not {_args.type_name(rng)}")
    edges_given = isinstance(bins, (list, tuple)) and bins and not isinstance(bins[0], int)
    if a.dtype.kind not in "fV" or (a.dtype not in (np.float32, np.float64) and rng is None and not edges_given
                                     and a.size):      # torch's range finding has no float16 / bfloat16 kernel
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_dtype.c_name(a.dtype)}'")
    if a.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    D = a.shape[-1]
    if isinstance(bins, (list, tuple)) and len(bins) != D:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if rng is not None and len(rng) != 2 * D:
        raise RuntimeError(f"torch.histogramdd: for a {D}-dimensional histogram range should have {2 * D} elements, "
                           f"but got {len(rng)}")
    if weight is not None:
        if weight._data.dtype != a.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                               f"have the same dtype, but got input({_dtype.cpp_name(a.dtype)}), and "
                               f"weight({_dtype.cpp_name(weight._data.dtype)})")
        if weight._data.shape != a.shape[:-1]:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                               "input tensor excluding its innermost dimension, but got input with shape "
                               f"{list(a.shape)} and weight with shape {list(weight._data.shape)}")
    return D


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    a = input._data
    D = _dd_checks(a, bins, weight, range)
    x = a.reshape(-1, D)
    per = list(bins) if isinstance(bins, (list, tuple)) else [bins] * D
    edges = [_dd_edges(x, d, per[d], range) for d in builtins.range(D)]
    idx = np.stack([_dd_bin(x[:, d], e, s) for d, (e, s) in enumerate(edges)], 1) if x.size else \
        np.zeros((0, D), np.int64, like=a)
    keep = (idx >= 0).all(1)
    shape = tuple(e.size - 1 for e, _ in edges)
    flat = np.ravel_multi_index(tuple(idx[keep].T), shape) if keep.any() else np.zeros(0, np.int64, like=a)
    w = None if weight is None else weight._data.reshape(-1)[keep].astype(np.float64)
    hist = np.bincount(flat, weights=w, minlength=int(np.prod(shape))).reshape(shape).astype(a.dtype)
    if density:
        with np.errstate(all="ignore"):
            h = hist / hist.sum()
            for d, (e, _) in enumerate(edges):
                h = h / np.diff(e).reshape((-1,) + (1,) * (D - 1 - d))
            hist = h.astype(a.dtype)
    return named("histogramdd", *_dd_outputs(input, weight, hist, [e for e, _ in edges]), ("hist", "bin_edges"))


class _EdgesNotImplemented(NotImplementedNode):
    """torch's NotImplemented node of the bin edges: one output per dimension."""
    __slots__ = ("n",)

    @property
    def n_outputs(self):
        return self.n


_EdgesNotImplemented.__name__ = "NotImplemented"
_EdgesNotImplemented.__qualname__ = "NotImplemented"


def _dd_outputs(input, weight, hist, edges):
    """torch's outputs: without a derivative (NotImplemented nodes) when the input or the weight requires grad."""
    ins = [t for t in (input, weight) if t is not None and t._rg]
    if not (grad.enabled and ins):
        return make(hist), tuple(make(e) for e in edges)
    hn = NotImplementedNode(tuple(edge(t) for t in ins))
    hn.what = "aten::_histogramdd_from_bin_cts"
    if not input._rg:
        return make(hist, True, hn), tuple(make(e) for e in edges)
    en = _EdgesNotImplemented((edge(input),))
    en.what = "aten::_histogramdd_bin_edges"
    en.n = len(edges)
    return make(hist, True, hn), tuple(make(e, True, en, i) for i, e in enumerate(edges))
