"""Reductions.

ops: sum mean nansum nanmean prod max min amax amin aminmax argmax argmin all any count_nonzero hash_tensor
(statistics and norms: ops/statistics.py; running sums and extremes: ops/scans.py)
"""

import numpy as np

from .. import _args, _dtype
from ..backend import as_array
from .._tensor import _wrap_dim
from ._core import Tensor, make, edge, save_in, save_out, grad, quiet, ordered, holomorphic, no_complex
from ..autograd.graph import Node
from .arithmetic import div
from .binary import maximum, minimum
from .sorting import named, selected, _SelectNode as _Sel
from .conversion import c_result
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["sum", "mean", "nansum", "nanmean", "prod", "max", "min", "amax", "amin", "aminmax", "argmax",
           "argmin", "all", "any", "count_nonzero", "hash_tensor"]


def _dims(dim, ndim):
    """Normalise dim (None, int, or sequence) to a sorted tuple of axes."""
    if dim is None:
        return tuple(range(ndim))
    if ndim == 0:                      # a 0-d tensor accepts dim 0 / -1 and reduces nothing
        for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
            _wrap_dim(d, 0)
        return ()
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return tuple(range(ndim))
        ds = tuple(sorted(_wrap_dim(d, ndim) for d in dim))
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"dim {ds[0]} appears multiple times in the list of dims")
        return ds
    return (_wrap_dim(dim, ndim),)


def _expand_back(ns, g, in_shape, axes, keepdim):
    """Broadcast a reduced gradient back to the input shape."""
    if not keepdim and axes:
        shp = list(in_shape)
        for a in axes:
            shp[a] = 1
        g = ns.reshape(g, tuple(shp))
    return ns.expand(g, in_shape)


class SumBackward0(Node):           # y = x.sum(); dx = gy expanded
    __slots__ = ("in_shape", "in_dt")
    stack_rule = "generic"    # the formula works on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (ns.cast(ns.expand(ns.reshape(g, (1,) * len(self.in_shape)) if self.in_shape else g, self.in_shape),
                       self.in_dt),)


class SumBackward1(Node):           # y = x.sum(dims, keepdim); dx = gy expanded back
    __slots__ = ("in_shape", "axes", "keepdim", "in_dt")
    stack_rule = "generic"    # the formula works on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (ns.cast(_expand_back(ns, g, self.in_shape, self.axes, self.keepdim), self.in_dt),)


def _sum_dtype(a, dtype):
    if dtype is not None:
        return _dtype.to_dtype(dtype).np
    if a.dtype.kind in "iub":
        return np.int64
    return None


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    a = input._data
    dt = _sum_dtype(a, dtype)
    if dt is not None:
        a = a.astype(dt)
    if a.dtype.kind == "V":         # bfloat16: accumulated in float32 and rounded once, as torch does
        return _sum_bf16(input, a, dim, keepdim)
    if dim is None and not keepdim:
        y = quiet(np.sum, a)
        if input._rg and grad.enabled:
            n = SumBackward0((edge(input),))
            n.in_shape = input._data.shape
            n.in_dt = input._data.dtype
            return make(as_array(y), True, n)
        return make(as_array(y))
    axes = _dims(dim, a.ndim)
    y = c_result(as_array(quiet(np.sum, a, axes, None, None, keepdim)), a)
    if input._rg and grad.enabled:
        n = SumBackward1((edge(input),))
        n.in_shape = input._data.shape
        n.axes = axes
        n.keepdim = keepdim
        n.in_dt = input._data.dtype
        return make(as_array(y), True, n)
    return make(as_array(y))


def _sum_bf16(input, a, dim, keepdim):
    y = as_array(quiet(np.sum, a.astype(np.float32), _dims(dim, a.ndim), None, None, keepdim)).astype(a.dtype)
    if input._rg and grad.enabled:
        if dim is None and not keepdim:
            n = SumBackward0((edge(input),))
        else:
            n = SumBackward1((edge(input),))
            n.axes, n.keepdim = _dims(dim, a.ndim), keepdim
        n.in_shape, n.in_dt = a.shape, a.dtype
        return make(y, True, n)
    return make(y)


class MeanBackward0(Node):          # y = x.mean(); dx = gy / n expanded
    __slots__ = ("in_shape", "n")
    stack_rule = "generic"    # the formula works on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (ns.expand(ns.reshape(g / self.n, (1,) * len(self.in_shape)) if self.in_shape else g / self.n,
                         self.in_shape),)


class MeanBackward1(Node):          # y = x.mean(dims); dx = gy / n expanded back
    __slots__ = ("in_shape", "axes", "keepdim", "n")
    stack_rule = "generic"    # the formula works on stacked gradients as written (Node.stack_rule)

    def backward(self, ns, g):
        return (_expand_back(ns, g / self.n, self.in_shape, self.axes, self.keepdim),)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    a = input._data
    if dtype is not None:
        a = a.astype(_dtype.to_dtype(dtype).np)
    if a.dtype.kind not in "fVc":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_dtype.from_numpy_dtype(a.dtype).name_c}")
    axes = _dims(dim, a.ndim)
    if a.dtype.kind == "V":         # bfloat16: accumulated in float32 and rounded once
        y = as_array(quiet(np.mean, a, axes, np.float32, None, keepdim)).astype(a.dtype)
    else:
        y = as_array(quiet(np.mean, a, axes, None, None, keepdim))
    y = c_result(y, a)
    cnt = 1
    for ax in axes:
        cnt *= a.shape[ax]
    if input._rg and grad.enabled:
        if dim is None and not keepdim:
            n = MeanBackward0((edge(input),))
        else:
            n = MeanBackward1((edge(input),))
            n.axes = axes
            n.keepdim = keepdim
        n.in_shape = a.shape
        n.n = cnt
        return make(y, True, n)
    return make(y)


# -- helpers shared with statistics.py ---------------------------------------------------------
def _count(shape, axes):
    c = 1
    for ax in axes:
        c *= shape[ax]
    return c


def _keep(y, in_shape, axes, keepdim):
    """An array reduced over axes, reshaped to the keepdim form (for comparisons with the input)."""
    if keepdim or not axes:
        return y
    shp = list(in_shape)
    for a in axes:
        shp[a] = 1
    return np.reshape(y, shp)


def _float_np(a):
    """The dtype a float-only reduction computes in (ints -> the default float)."""
    return a.dtype if a.dtype.kind in "fcV" else _dtype._default[0].np


def _name_c(a):
    return _dtype.from_numpy_dtype(a.dtype).name_c


class _MaskScale(Node):
    """dx = gy (expanded back) * w, with w a constant weight array (ties split evenly, masks)."""
    __slots__ = ("in_shape", "axes", "keepdim", "w")

    def backward(self, ns, g):
        return (_expand_back(ns, g, self.in_shape, self.axes, self.keepdim) * ns.const(self.w, g),)


def _mask_node(cls, x, y, axes, keepdim, w):
    if x._rg and grad.enabled:
        n = cls((edge(x),))
        n.in_shape = x._data.shape
        n.axes = axes
        n.keepdim = keepdim
        n.w = w
        return make(y, True, n)
    return make(y)


def _even_weights(a, yk, axes, nan_matches=True):
    """Ties split evenly: mask(x == y) / count along the reduced axes.  With nan_matches (max, median)
    a NaN result selects the NaN inputs; without (amax, amin: PyTorch's scale_grad_by_count) nothing
    matches a NaN and the weights become 0/0 = NaN, as in PyTorch."""
    m = (a == yk)
    if nan_matches and a.dtype.kind in "fV":
        m = m | (np.isnan(a) & np.isnan(yk))
    cnt = m.sum(axis=axes, keepdims=True) if axes else m.astype(np.int64)
    with np.errstate(all="ignore"):
        if nan_matches:
            cnt = np.maximum(cnt, 1)
        return (m / cnt).astype(a.dtype)


# -- nansum / nanmean ----------------------------------------------------------------------------------
class NansumBackward0(_MaskScale):
    __slots__ = ()


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    no_complex(input, "", "nansum on CPU does not support complex inputs", RuntimeError)
    a = input._data
    dt = _sum_dtype(a, dtype)
    if dt is not None:
        a = a.astype(dt)
    axes = _dims(dim, a.ndim)
    y = c_result(as_array(np.nansum(ordered(a), axis=axes, keepdims=keepdim)).astype(a.dtype, copy=False), a)
    if a.dtype.kind in "fcV":
        w = (~np.isnan(input._data)).astype(input._data.dtype)
    else:
        w = np.ones(a.shape, input._data.dtype, like=a)
    return _mask_node(NansumBackward0, input, y, axes, keepdim, w)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    a = input._data
    if dtype is not None:
        input = input.to(_dtype.to_dtype(dtype))
        a = input._data
    if a.dtype.kind not in "fcV":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_name_c(a)}")
    axes = _dims(dim, a.ndim)
    cnt = as_array((~np.isnan(a)).sum(axis=axes, keepdims=keepdim))
    return div(nansum(input, dim, keepdim), make(cnt))


# -- prod -------------------------------------------------------------------------------------------------
def _prod_others(a, axes):
    """For each element, the product of the other elements of its reduction group (exact with zeros)."""
    rest = [i for i in range(a.ndim) if i not in axes]
    perm = rest + list(axes)
    t = np.transpose(a, perm)
    lead = t.shape[:len(rest)]
    t2 = t.reshape(lead + (-1,))
    ones = np.ones(lead + (1,), a.dtype, like=a)
    left = np.concatenate([ones, np.cumprod(t2, axis=-1)[..., :-1]], axis=-1)
    right = np.flip(np.concatenate([ones, np.cumprod(np.flip(t2, -1), axis=-1)[..., :-1]], axis=-1), -1)
    o = (left * right).reshape(t.shape)
    return np.transpose(o, sorted(range(len(perm)), key=perm.__getitem__))     # (the inverse permutation)


class ProdBackward0(Node):          # y = prod(x); dx = gy * y / x (exact product of the others with zeros)
    __slots__ = ("in_shape", "axes", "keepdim", "others")
    _saved_names = ("self", "result")

    @holomorphic
    def backward(self, ns, g):
        x, y = ns.unpack(self)
        if self.others is None:
            return (_expand_back(ns, g * y, self.in_shape, self.axes, self.keepdim) / x,)
        gk = _expand_back(ns, g, self.in_shape, self.axes, self.keepdim)
        if not ns.is_tensor_mode:
            return (gk * self.others,)
        return (gk * self._others_differentiable(ns, x),)

    def _others_differentiable(self, ns, x):
        """The product of the other elements of each group, as a function of x (double backward with
        zeros): others = P / x' * factor, P the product of the group's non-zero elements, x' = x with
        its zeros replaced by 1, and factor restoring the (first-order) dependence on the zeros."""
        xd = ns.data(x)
        ax = self.axes
        z = (xd == 0).astype(xd.dtype)
        cnt = z.sum(axis=ax, keepdims=True) if ax else z
        xp = x * ns.const(1 - z, x) + ns.const(z, x)
        P = prod(xp, ax, True) if ax else xp
        S = ns.sum(x * ns.const(z, x), ax, True) if ax else x * ns.const(z, x)
        one = ns.const(np.broadcast_to(cnt == 1, xd.shape).astype(xd.dtype), x)
        two = ns.const(np.broadcast_to(cnt == 2, xd.shape).astype(xd.dtype), x)
        none = ns.const(np.broadcast_to(cnt == 0, xd.shape).astype(xd.dtype), x)
        zc = ns.const(z, x)
        factor = none + one * (zc + (1 - zc) * S) + two * zc * (S - x)
        return P / xp * factor


class ProdBackward1(ProdBackward0):
    __slots__ = ()


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if _acs.on:
        return _ac.fp32(prod, input, dim, keepdim, dtype=dtype, out=out)
    a = input._data
    dt = _sum_dtype(a, dtype)
    if dt is not None:
        a = a.astype(dt)
    axes = _dims(dim, a.ndim)
    y = c_result(as_array(np.prod(a, axis=axes, keepdims=keepdim if dim is not None else False)), a)
    if input._rg and grad.enabled:
        n = (ProdBackward0 if dim is None else ProdBackward1)((edge(input),))
        n.in_shape = a.shape
        n.axes = axes
        n.keepdim = keepdim if dim is not None else False
        n.others = _prod_others(a, axes) if (a == 0).any() else None
        out = make(y, True, n)
        n._saved = (save_in(input), save_out(out))
        return out
    return make(y)


# -- max / min / amax / amin / aminmax / argmax / argmin --------------------------------------------------
class MaxBackward1(_MaskScale):
    __slots__ = ()


class MinBackward1(_MaskScale):
    __slots__ = ()


class AmaxBackward0(_MaskScale):
    __slots__ = ()


class AminBackward0(_MaskScale):
    __slots__ = ()


def _full_extreme(name, fn, cls, input):
    a = input._data
    if a.size == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    y = as_array(fn(a))
    axes = tuple(range(a.ndim))
    w = _even_weights(a, y, axes) if input._rg and grad.enabled else None
    return _mask_node(cls, input, y, axes, False, w)


def _check_nonempty(name, a, axes):
    for ax in axes:
        if a.ndim and a.shape[ax] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {ax} to have non-zero size.")


def _dim_extreme(name, argfn, input, dim, keepdim):
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    _check_nonempty(name, a, (d,))
    if a.ndim == 0:
        idx = np.zeros((), np.int64, like=a)
        vals = a.copy()
    else:
        idx = np.expand_dims(argfn(a, axis=d).astype(np.int64), d)
        vals = np.take_along_axis(a, idx, d)
        if not keepdim:
            idx = idx.squeeze(d)
            vals = vals.squeeze(d)
    cls = MaxBackward0 if name == "max" else MinBackward0
    return named(name, selected(cls, input, vals, idx, d, keepdim or a.ndim == 0), make(idx))


def max(input, dim=None, keepdim=False, *, out=None):
    if isinstance(dim, Tensor):
        return maximum(input, dim)
    _real_only(input, "max", dim is None)
    if dim is None:
        return _full_extreme("max", np.max, MaxBackward1, input)
    return _dim_extreme("max", np.argmax, input, dim, keepdim)


def min(input, dim=None, keepdim=False, *, out=None):
    if isinstance(dim, Tensor):
        return minimum(input, dim)
    _real_only(input, "min", dim is None)
    if dim is None:
        return _full_extreme("min", np.min, MinBackward1, input)
    return _dim_extreme("min", np.argmin, input, dim, keepdim)


def _real_only(input, name, full=True):
    """PyTorch's errors for the extremes of a complex tensor."""
    if input._data.dtype.kind == "c":
        raise NotImplementedError(f'"{name}_all" not implemented for \'{_dtype.c_name(input._data.dtype)}\'') \
            if full else RuntimeError(f"{name}(): does not support complex input")


def _amax_like(name, fn, cls, input, dim, keepdim):
    a = input._data
    _real_only(input, name, False)
    axes = _dims(dim, a.ndim)
    if a.size == 0 and (dim is None or dim == () or dim == []):
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    _check_nonempty(name, a, axes)
    y = c_result(as_array(fn(a, axis=axes, keepdims=keepdim)), a)
    w = None
    if input._rg and grad.enabled:
        w = _even_weights(a, _keep(y, a.shape, axes, keepdim), axes, False)
    return _mask_node(cls, input, y, axes, keepdim, w)


def amax(input, dim=(), keepdim=False, *, out=None):
    return _amax_like("amax", np.max, AmaxBackward0, input, dim, keepdim)


def amin(input, dim=(), keepdim=False, *, out=None):
    return _amax_like("amin", np.min, AminBackward0, input, dim, keepdim)


class AminmaxBackward0(Node):
    __slots__ = ("in_shape", "axes", "keepdim", "wmin", "wmax")
    n_outputs = 2

    def backward(self, ns, grads):
        gmin, gmax = grads
        res = None
        for g, w in ((gmin, self.wmin), (gmax, self.wmax)):
            if g is not None:
                t = _expand_back(ns, g, self.in_shape, self.axes, self.keepdim) * ns.const(w, g)
                res = t if res is None else res + t
        return (res,)


def aminmax(input, *, dim=None, keepdim=False, out=None):
    a = input._data
    _real_only(input, "aminmax", False)
    axes = _dims(dim, a.ndim)
    if a.size == 0 and (dim is None or (a.ndim and a.shape[axes[0]] == 0)):
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                           "has no identity.")
    mn = as_array(np.min(a, axis=axes, keepdims=keepdim))
    mx = as_array(np.max(a, axis=axes, keepdims=keepdim))
    if input._rg and grad.enabled:
        n = AminmaxBackward0((edge(input),))
        n.in_shape = a.shape
        n.axes = axes
        n.keepdim = keepdim
        n.wmin = _even_weights(a, _keep(mn, a.shape, axes, keepdim), axes, False)
        n.wmax = _even_weights(a, _keep(mx, a.shape, axes, keepdim), axes, False)
        return named("aminmax", make(mn, True, n, 0), make(mx, True, n, 1), ("min", "max"))
    return named("aminmax", make(mn), make(mx), ("min", "max"))


def _arg(name, fn, input, dim, keepdim):
    a = input._data
    _real_only(input, name, False)
    if a.dtype == np.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if a.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        i = as_array(fn(a.reshape(-1)), np.int64)
        if keepdim:
            i = i.reshape((1,) * a.ndim)
        return make(i)
    d = _wrap_dim(dim, a.ndim)
    _check_nonempty(name, a, (d,))
    if a.ndim == 0:
        return make(np.zeros((), np.int64, like=a))
    return make(as_array(fn(a, axis=d, keepdims=keepdim), np.int64))


def argmax(input, dim=None, keepdim=False, *, out=None):
    return _arg("argmax", np.argmax, input, dim, keepdim)


def argmin(input, dim=None, keepdim=False, *, out=None):
    return _arg("argmin", np.argmin, input, dim, keepdim)


# -- all / any / count_nonzero ------------------------------------------------------------------------------
def _logic_red(fn, input, dim, keepdim):
    a = input._data
    axes = _dims(dim, a.ndim)
    y = c_result(as_array(fn(a, axis=axes, keepdims=keepdim)), a)
    if a.dtype == np.uint8:
        y = y.astype(np.uint8)
    return make(y)


def all(input, dim=None, keepdim=False, *, out=None):
    return _logic_red(np.all, input, dim, keepdim)


def any(input, dim=None, keepdim=False, *, out=None):
    return _logic_red(np.any, input, dim, keepdim)


def count_nonzero(input, dim=None):
    a = input._data
    axes = _dims(dim, a.ndim)
    return make(c_result(as_array(np.count_nonzero(a, axis=axes) if a.ndim else (a != 0), np.int64), a))




def hash_tensor(input, dim=None, *, keepdim=False, mode=0, out=None):
    """The xor of the elements' 64 bits (floats as float64, integers and bools as int64) over `dim` (all
    dims by default), as uint64; not differentiable (mode 0, torch's only mode)."""
    a = input._data
    if isinstance(dim, (list, tuple)):
        for k, d in enumerate(dim):
            if _args.as_int(d) is None:
                raise TypeError("hash_tensor(): argument 'dim' (position 2) must be tuple of ints, but found element "
                                f"of type {type(d).__name__} at pos {k}")
    dims = None if dim is None else _args.int_list(dim, "hash_tensor", "dim", 2)
    mode = _args.int_arg(mode, "hash_tensor", "mode")
    if a.size == 0 and not dims:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    for d in dims or ():                    # (each dim wrapped and checked in turn, as torch)
        if a.ndim and a.shape[_wrap_dim(d, a.ndim)] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    axes = _dims(dims, a.ndim)
    k, rest = a.dtype.kind, [i for i in range(a.ndim) if i not in axes]
    shape = [1 if i in axes else s for i, s in enumerate(a.shape)] if keepdim else [a.shape[i] for i in rest]
    if a.size == 0:                         # an empty result (torch runs no kernel, so checks no dtype)
        return make(np.zeros(shape, np.uint64, like=a))
    if k == "c" or (k == "u" and a.dtype != np.uint8) or (k in "fV" and a.dtype.itemsize == 1):
        raise NotImplementedError(f'"xor_sum_cpu" not implemented for \'{_dtype.c_name(a.dtype)}\'')
    bits = (a.astype(np.float64) if k in "fV" else a.astype(np.int64)).view(np.uint64)
    n = int(np.prod([a.shape[i] for i in axes]))
    b = bits.transpose(rest + list(axes)).reshape([a.shape[i] for i in rest] + [n])
    while b.shape[-1] > 1:                  # xor-fold the reduced elements pairwise (device-neutral)
        n, h = b.shape[-1], b.shape[-1] // 2
        head = b[..., :h] ^ b[..., h:2 * h]
        b = head if n % 2 == 0 else np.concatenate([head, b[..., 2 * h:]], axis=-1)
    return make(as_array(b[..., 0].reshape(shape), np.uint64))


class MaxBackward0(_Sel):
    __slots__ = ()


class MinBackward0(_Sel):
    __slots__ = ()

