"""Scans: running sums, products and extremes along a dimension.

ops: cumsum cumsum_ cumprod cummax cummin
"""

import numpy as np

from .. import _dtype
from .._tensor import _wrap_dim
from ._core import make, edge, save_in, save_out, grad, _inplace, holomorphic, no_complex, as_array
from ..autograd.graph import Node
from .sorting import named, selected, _SelectNode, select_backward
from .conversion import c_result

__all__ = ["cumsum", "cumprod", "cummax", "cummin"]


def cumprod_(x, dim, *, dtype=None):
    _cum_dtype(x._data, dtype or x.dtype, "cumprod")     # in place: the scan runs in x's dtype
    return _inplace(cumprod, x, dim, dtype=dtype)


# -- cumsum / cumprod -------------------------------------------------------------------------------------------
def _cum_dtype(a, dtype, name="cumsum"):
    """The result dtype; ATen's CPU kernels have no bool loop (reached only when there is an element to scan)."""
    if dtype is not None:
        dt = _dtype.to_dtype(dtype).np
        if dt == np.bool_ and a.ndim and a.size:
            raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
        return dt
    return np.int64 if a.dtype.kind in "iub" else a.dtype


class CumsumBackward0(Node):        # y = cumsum(x); dx = reversed cumsum of gy
    __slots__ = ("dim", "in_dt", "reverse")

    def backward(self, ns, g):
        if g.ndim == 0:
            return (ns.cast(g, self.in_dt),)
        return (ns.cast(ns.cumsum(g, self.dim, not self.reverse), self.in_dt),)


def _cumsum_arr(a, d, reverse):
    if a.ndim == 0:
        return a.copy()
    if reverse:
        return np.flip(np.cumsum(np.flip(a, d), axis=d), d)
    return np.cumsum(a, axis=d)


def cumsum(input, dim, *, dtype=None, out=None):
    return _cumsum(input, dim, dtype, False)


def _cumsum(input, dim, dtype=None, reverse=False):
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    dt = _cum_dtype(a, dtype)
    y = c_result(as_array(_cumsum_arr(a.astype(dt, copy=False), d, reverse), dt), a)
    if input._rg and grad.enabled:
        n = CumsumBackward0((edge(input),))
        n.dim = d
        n.in_dt = a.dtype
        n.reverse = reverse
        return make(y, True, n)
    return make(y)


def cumsum_(x, dim, *, dtype=None):
    _cum_dtype(x._data, dtype or x.dtype)     # in place: the scan runs in x's dtype
    return _inplace(cumsum, x, dim, dtype=dtype)


class CumprodBackward0(Node):       # y = cumprod(x); dx = revcumsum(gy * y) / x (exact matrix with zeros)
    __slots__ = ("dim", "W")
    _saved_names = ("self", "result")

    @holomorphic
    def backward(self, ns, g):
        x, y = ns.unpack(self)
        if g.ndim == 0:
            return (g,)
        d = self.dim
        if self.W is None:
            return (ns.cumsum(g * y, d, True) / x,)
        if ns.is_tensor_mode:
            return (self._grad_differentiable(ns, g, x),)
        last = g.ndim - 1
        gm = ns.transpose(g, d, last)
        r = ns.squeeze(ns.matmul(ns.const(self.W, g), ns.unsqueeze(gm, last + 1)), last + 1)
        return (ns.transpose(r, d, last),)


    def _grad_differentiable(self, ns, g, x):
        """dx_k = sum_{j >= k} g_j prod_{i <= j, i != k} x_i, built from differentiable ops (zeros)."""
        d = self.dim
        xd = ns.data(x)
        n = xd.shape[d]
        shp = [1] * xd.ndim
        shp[d] = n
        pos = np.arange(n, like=xd).reshape(shp)
        res = None
        for k in range(n):
            ek = (pos == k).astype(xd.dtype)
            c = cumprod(x * ns.const(1 - ek, x) + ns.const(np.broadcast_to(ek, xd.shape).copy(), x), d)
            dk = ns.sum(g * c * ns.const((pos >= k).astype(xd.dtype), x), (d,), True) * ns.const(ek, x)
            res = dk if res is None else res + dk
        return res


def _cumprod_matrix(a, d):
    """W[..., k, j] = d y_j / d x_k = prod_{i <= j, i != k} x_i for j >= k (exact with zeros)."""
    xm = np.swapaxes(a, d, -1)
    n = xm.shape[-1]
    W = np.zeros(xm.shape + (n,), a.dtype, like=a)
    for k in range(n):
        xk = xm.copy()
        xk[..., k] = 1
        c = np.cumprod(xk, axis=-1)
        c[..., :k] = 0
        W[..., k, :] = c
    return W


def cumprod(input, dim, *, dtype=None, out=None):
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    dt = _cum_dtype(a, dtype, "cumprod")
    a2 = a.astype(dt, copy=False)
    y = c_result(as_array(a2.copy() if a.ndim == 0 else np.cumprod(a2, axis=d), dt), a)
    if input._rg and grad.enabled:
        n = CumprodBackward0((edge(input),))
        n.dim = d
        n.W = _cumprod_matrix(a2, d) if a.ndim and (a2 == 0).any() else None
        out = make(y, True, n)
        n._saved = (save_in(input), save_out(out))
        return out
    return make(y)


# -- cummax / cummin ---------------------------------------------------------------------------------------------------
class CummaxBackward0(_SelectNode):
    __slots__ = ()

    def backward(self, ns, g):
        if self._saved:                  # empty input: PyTorch hands back the input itself
            return ns.unpack(self)
        return (select_backward(ns, g, self.idx, self.in_shape, self.dim, self.keepdim),)


class CumminBackward0(CummaxBackward0):
    __slots__ = ()


def _cum_extreme(name, cls, input, dim, better):
    no_complex(input, name)
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        idx = np.zeros((), np.int64, like=a)
        return named(name, selected(cls, input, a.copy(), idx, d), make(idx))
    am = np.moveaxis(a, d, -1)
    vals = np.empty_like(am)
    idx = np.zeros(am.shape, np.int64, like=a)
    isf = a.dtype.kind in "fV"
    n = am.shape[-1]
    if n:
        cur = am[..., 0].copy()
        ci = np.zeros(cur.shape, np.int64, like=a)
        for j in range(n):
            v = am[..., j]
            if j:
                take = better(v, cur)
                if isf:
                    take = np.isnan(v) | (~np.isnan(cur) & take)
                cur = np.where(take, v, cur)
                ci = np.where(take, j, ci)
            vals[..., j] = cur
            idx[..., j] = ci
    vals = np.ascontiguousarray(np.moveaxis(vals, -1, d), like=a)     # (ascontiguousarray converts without like=)
    idx = np.ascontiguousarray(np.moveaxis(idx, -1, d), like=a)
    v = selected(cls, input, vals, idx, d)
    if a.size == 0 and v._grad_fn is not None:
        v._grad_fn._saved = (save_in(input),)
    return named(name, v, make(idx))


def cummax(input, dim, *, out=None):
    return _cum_extreme("cummax", CummaxBackward0, input, dim, np.greater_equal)


def cummin(input, dim, *, out=None):
    return _cum_extreme("cummin", CumminBackward0, input, dim, np.less_equal)
