"""Distances: cdist (CdistBackward0; the matmul form torch takes for p = 2 and more than 25 rows, its
EuclideanDistBackward0 under a view), pdist (PdistBackward0; nn.functional.pdist), dist (DistBackward0) and
renorm (RenormBackward0), with torch's backward formulas.  cdist's and pdist's gradients are not differentiable
again in torch (CdistBackwardBackward0 / PdistBackwardBackward0 raise), nor are they here.

ops: cdist pdist dist renorm renorm_
"""
import numpy as np

from .. import _args, _dtype, backend
from .._tensor import _wrap_dim
from ._core import make, edge, grad, broadcast_error, _inplace, full_precision, as_array
from ..autograd.graph import Node, save_in, save_out
from .linalg_solve import _LaNode, wrap
from .statistics import _vector_norm, norm as _norm
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["cdist", "pdist", "dist", "renorm", "renorm_"]

_INF = float("inf")


# -- the p-norm of differences and its derivative (torch's DistanceOpsKernel.cpp) --------------------------------
def _pnorm(d, p):
    if p == _INF and d.shape[-1] == 0:
        return np.zeros(d.shape[:-1], d.dtype, like=d)
    return as_array(_vector_norm(d, p, -1, False), d.dtype)


def _pnorm_grad(d, g, r, p):
    """d(norm)/d(diff) * g for each difference vector d (last axis), its norm r and gradient g."""
    g = g[..., None]
    r = r[..., None]
    with np.errstate(all="ignore"):
        if p == 0:
            return np.zeros_like(d)
        if p == 1:
            return g * np.sign(d)
        if p == _INF:
            return g * np.sign(d) * (1 - np.minimum(1, np.ceil(np.abs(np.abs(d) - r))))
        if p < 2:
            res = np.where(r == 0, 0, np.sign(d) * np.abs(d) ** (p - 1) * g / r ** (p - 1))
            return np.where((d == 0) & (p < 1), 0, res).astype(d.dtype)
        if p == 2:
            return np.where(r == 0, 0, g * d / r).astype(d.dtype)
        return np.where(r == 0, 0, d * np.abs(d) ** (p - 2) * g / r ** (p - 1)).astype(d.dtype)


class _NoDoubleBackward(Node):
    """torch's `<Op>BackwardBackward0`: the gradient of a gradient torch does not implement."""
    __slots__ = ()
    what = ""

    def backward(self, ns, g):
        raise NotImplementedError(f"the derivative for '{self.what}' is not implemented.")


class CdistBackwardBackward0(_NoDoubleBackward):
    __slots__ = ()
    what = "_cdist_backward"


class PdistBackwardBackward0(_NoDoubleBackward):
    __slots__ = ()
    what = "_pdist_backward"


def _grads_out(ns, g, arrays, inputs, cls):
    """The gradients (arrays) as ns's values; in tensor mode each the output of a node that cannot be
    differentiated again (torch's CdistBackwardBackward0 / PdistBackwardBackward0)."""
    if not ns.is_tensor_mode:
        return arrays
    res = []
    for a in arrays:
        if a is None or not grad.enabled or not (g._rg or any(t._rg for t in inputs)):
            res.append(None if a is None else make(a))
            continue
        n = cls((edge(g),) + tuple(edge(t) for t in inputs))
        res.append(make(a, True, n))
    return tuple(res)


# -- cdist -----------------------------------------------------------------------------------------------------
class CdistBackward0(Node):
    __slots__ = ("p", "s1", "s2")
    _saved_names = ("x1", "x2", "result")

    def backward(self, ns, g):
        x1, x2, y = ns.unpack(self)
        a1, a2, r, gd = ns.data(x1), ns.data(x2), ns.data(y), ns.data(g)
        bshape = r.shape[:-2]
        b1 = np.broadcast_to(a1, bshape + a1.shape[-2:])
        b2 = np.broadcast_to(a2, bshape + a2.shape[-2:])
        d = b1[..., :, None, :] - b2[..., None, :, :]
        gdiff = _pnorm_grad(d, gd, r, self.p)
        g1 = _sum_to(gdiff.sum(-2), self.s1) if self.next_functions[0][0] is not None else None
        g2 = _sum_to(-gdiff.sum(-3), self.s2) if self.next_functions[1][0] is not None else None
        return _grads_out(ns, g, (g1, g2), (x1, x2), CdistBackwardBackward0)


def _sum_to(a, shape):
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and a.shape[i + lead] != 1)
    return np.sum(a, axis=axes, keepdims=True).reshape(shape) if axes else a


def _cdist_checks(x1, x2, p):
    for name, t in (("X1", x1), ("X2", x2)):
        if t._data.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t._data.ndim}D")
    c1, c2 = x1._data.shape[-1], x2._data.shape[-1]
    if c1 != c2:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {c1} X2: {c2}")
    for name, t in (("X1", x1), ("X2", x2)):
        if t._data.dtype.kind not in "fV":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_dtype.c_name(t._data.dtype)}")
    if not p >= 0:
        raise RuntimeError("cdist only supports non-negative p values")


def _batch(x1, x2):
    s1, s2 = x1._data.shape[:-2], x2._data.shape[:-2]
    try:
        return tuple(np.broadcast_shapes(s1, s2))
    except ValueError:
        raise broadcast_error(s1, s2) from None


class EuclideanDistBackward0(_LaNode):
    """torch's _euclidean_dist_backward: ratio = g / result (0 where result is 0)."""
    __slots__ = ()
    _saved_names = ("x1", "x2", "result")

    def formula(self, g, x1, x2, res):
        ratio = (g / res).masked_fill(res == 0, 0)
        g1 = x1 * ratio.sum(-1, True) - ratio.matmul(x2) if self.need(0) else None
        g2 = x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT.matmul(x1) if self.need(1) else None
        return g1, g2


def _euclidean_dist(x1, x2):
    a1, a2 = x1._data, x2._data
    n1 = (a1 ** 2).sum(-1, keepdims=True)
    n2 = (a2 ** 2).sum(-1, keepdims=True)
    l1 = np.concatenate([a1 * -2, n1, np.ones_like(n1)], -1)
    l2 = np.concatenate([a2, np.ones_like(n2), n2], -1)
    r = np.sqrt(np.maximum(np.matmul(l1, np.swapaxes(l2, -1, -2)), a1.dtype.type(1e-30)))
    return wrap((r.astype(a1.dtype),), EuclideanDistBackward0, (x1, x2), (0, 1), (0,))[0]


_MODES = {None: 0, "use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
          "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode=None):
    if _acs.on:
        return _ac.fp32(cdist, x1, x2, p, compute_mode)
    p = float(_args.number_arg(p, "cdist", "p", 3))
    _cdist_checks(x1, x2, p)
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    batch = _batch(x1, x2)
    r1, r2, c = x1._data.shape[-2], x2._data.shape[-2], x1._data.shape[-1]
    mode = _MODES[compute_mode]
    mm = bool(x1._data.size and x2._data.size and p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))))
    d1, d2 = x1._data.dtype, x2._data.dtype
    if d1 != d2:
        if mm:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_dtype.cpp_name(d1)} != "
                               f"{_dtype.cpp_name(d2)}")
        raise RuntimeError(f"expected scalar type {_dtype.c_name(d1)} but found {_dtype.c_name(d2)}")
    if mm:
        bp = int(np.prod(batch, dtype=np.int64))
        e1 = x1.expand(batch + (r1, c)).reshape(bp, r1, c)
        e2 = x2.expand(batch + (r2, c)).reshape(bp, r2, c)
        return _euclidean_dist(e1, e2).view(batch + (r1, r2))
    if x1._data.size and x2._data.size:        # torch's direct kernel has no float16 / bfloat16 (its mm form has)
        full_precision("cdist", d1)
    a1 = np.broadcast_to(x1._data, batch + (r1, c))
    a2 = np.broadcast_to(x2._data, batch + (r2, c))
    with np.errstate(all="ignore"):
        y = _pnorm(a1[..., :, None, :] - a2[..., None, :, :], p)
    if grad.enabled and (x1._rg or x2._rg):
        n = CdistBackward0((edge(x1), edge(x2)))
        n.p, n.s1, n.s2 = p, x1._data.shape, x2._data.shape
        out = make(y, True, n)
        n._saved = (save_in(x1), save_in(x2), save_out(out))
        return out
    return make(y)


# -- pdist -----------------------------------------------------------------------------------------------------
class PdistBackward0(Node):
    __slots__ = ("p",)
    _saved_names = ("self", "result")

    def backward(self, ns, g):
        x, y = ns.unpack(self)
        a = ns.data(x)
        i, j = backend.xp_of(a).triu_indices(a.shape[0], 1)       # (np.triu_indices has no like=)
        gd = _pnorm_grad(a[i] - a[j], ns.data(g), ns.data(y), self.p)
        res = np.zeros_like(a)
        np.add.at(res, i, gd)
        np.add.at(res, j, -gd)
        return _grads_out(ns, g, (res,), (x,), PdistBackwardBackward0)


def pdist(input, p=2):
    a = input._data
    if a.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {a.ndim}D")
    if a.dtype.kind not in "fV":
        raise RuntimeError("pdist only supports floating-point dtypes")
    p = float(_args.number_arg(p, "pdist", "p", 2))
    if a.shape[0] > 1:
        full_precision("pdist", a.dtype)
    if not p >= 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = backend.xp_of(a).triu_indices(a.shape[0], 1)
    with np.errstate(all="ignore"):
        y = _pnorm(a[i] - a[j], p)
    if input._rg and grad.enabled:
        n = PdistBackward0((edge(input),))
        n.p = p
        out = make(y, True, n)
        n._saved = (save_in(input), save_out(out))
        return out
    return make(y)


# -- dist, renorm (torch's norm_backward, written on Tensors) ------------------------------------------------------
def _norm_backward(g, x, p, nrm, dims):
    """torch's norm_backward with keepdim: g and nrm have x's rank (or are 0-d for the full reduction)."""
    if p == 0:
        return None
    if p == 1:
        return x.sign() * g
    if p == 2:
        return g * (x / nrm).masked_fill(nrm == 0, 0)
    if p == _INF:
        xa = x.abs()
        mask = xa.eq(nrm).logical_or(xa.isnan())
        return x.sign() * ((g / mask.sum(dims, True)) * mask)
    if p < 1:
        scaled = x.sign() * x.abs().pow(p - 1).masked_fill(x == 0, 0)
        return scaled * g * nrm.pow(1 - p)
    scaled = x.sign() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
    return scaled * (g / nrm.pow(p - 1)).masked_fill(nrm == 0, 0)


class DistBackward0(_LaNode):
    __slots__ = ()
    _saved_names = ("self", "other", "result")

    def formula(self, g, a, b, y):
        nb = _norm_backward(g, a - b, self.info, y, tuple(range(max(a.dim(), b.dim()))))
        if nb is None:      # p = 0: torch's formula negates an undefined gradient for `other`
            if self.need(1):
                raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in C++) for "
                                   "argument #0 'self'")
            return None, None
        return (nb.sum_to_size(a.shape) if self.need(0) else None), ((-nb).sum_to_size(b.shape) if self.need(1) else None)


def dist(input, other, p=2):
    p = float(_args.number_arg(p, "dist", "p", 3))
    d = input - other
    if d._data.dtype.kind not in "fcV":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. Got "
                           f"{_dtype.c_name(d._data.dtype)} instead.")
    y = _norm(d.detach(), p)._data
    return wrap((y,), DistBackward0, (input, other), (0, 1), (0,), p)[0]


class RenormBackward0(_LaNode):
    __slots__ = ()
    _saved_names = ("self",)

    def formula(self, g, x):
        p, dim, maxnorm = self.info
        dims = tuple(i for i in range(x.dim()) if i != dim)
        acc = _dtype.float64 if x.dtype == _dtype.float32 else x.dtype
        nrm = _norm(x, p, dims, True, dtype=acc)
        go = (x * g).sum(dims, True, dtype=acc)
        nb = _norm_backward(go, x, p, nrm, dims)
        inv = (nrm + 1e-7).reciprocal()
        gn = maxnorm * inv * (g - inv * nb) if nb is not None else maxnorm * inv * g
        return (gn.to(g.dtype).where(nrm > maxnorm, g),)


def renorm(input, p, dim, maxnorm, *, out=None):
    a = input._data
    p = float(_args.number_arg(p, "renorm", "p", 2))
    maxnorm = float(_args.number_arg(maxnorm, "renorm", "maxnorm", 4))
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if a.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {a.ndim} dimensions")
    dim = _wrap_dim(dim, a.ndim)
    if a.dtype.kind not in "fcV":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.c_name(a.dtype)}")
    axes = tuple(i for i in range(a.ndim) if i != dim)
    nrm = as_array(_vector_norm(a, p, axes, True), a.dtype)
    with np.errstate(all="ignore"):
        mx = a.dtype.type(maxnorm)
        factor = np.where(nrm > mx, mx / (nrm + a.dtype.type(1e-7)), a.dtype.type(1)).astype(a.dtype)
    return wrap(((a * factor).astype(a.dtype),), RenormBackward0, (input,), (0,), (), (p, dim, maxnorm))[0]


def renorm_(input, p, dim, maxnorm):
    return _inplace(renorm, input, p, dim, maxnorm)
