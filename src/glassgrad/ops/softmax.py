"""softmax and log_softmax, with their fast kernels.

ops: softmax log_softmax

`_softmax_arr` computes either in place on one fresh array (shifted by the finite max); `_short_reduce`
reduces a short axis (2..7) as a loop over its slices, several times faster than NumPy's row by row.
"""
import numpy as np

from .. import _cuda_kernels, _dtype
from .._cuda_kernels import optloss as _k_optloss
from ._core import make, edge, save_out, grad, quiet, as_array
from ..autograd.graph import Node
from .conversion import to_dtype
from .reduction import _dims

__all__ = ["softmax", "log_softmax"]


class SoftmaxBackward0(Node):       # y = exp(x) / sum(exp(x), dim); dx = y (gy - sum(gy y, dim))
    __slots__ = ("dim",)
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)
    _saved_names = ("result",)

    def backward(self, ns, g):
        y, = ns.unpack(self)
        if ns.plain and _fused_bwd_ok(y, g, self.dim):
            return (_k_optloss.softmax_backward_lastdim(y, g, False),)
        if ns.plain and y.dtype.kind == "V":       # bfloat16: in float32, rounded once
            y32, g32 = y.astype(np.float32), g.astype(np.float32)
            return ((y32 * (g32 - np.sum(g32 * y32, self.dim, keepdims=True))).astype(y.dtype),)
        return (y * (g - ns.sum(g * y, self.dim, True)),)


class LogSoftmaxBackward0(Node):    # y = x - log(sum(exp(x), dim)); dx = gy - exp(y) sum(gy, dim)
    __slots__ = ("dim",)
    stack_rule = "generic"    # runs on stacked gradients as written (Node.stack_rule)
    _saved_names = ("result",)

    def backward(self, ns, g):
        y, = ns.unpack(self)
        if not ns.plain:
            return (g - ns.exp(y) * ns.sum(g, self.dim, True),)
        if _fused_bwd_ok(y, g, self.dim):
            return (_k_optloss.softmax_backward_lastdim(y, g, True),)
        if y.dtype.kind == "V":                     # bfloat16: in float32, rounded once
            y32, g32 = y.astype(np.float32), g.astype(np.float32)
            return ((g32 - np.exp(y32) * np.sum(g32, self.dim, keepdims=True)).astype(y.dtype),)
        return (g - np.exp(y) * _short_reduce(np.add, g, self.dim),)


def _fused_bwd_ok(y, g, d):
    """The backward's one-kernel form applies (a GPU; over the last axis of contiguous float32 / float64 arrays)."""
    return (y.__class__ is not np.ndarray and g.__class__ is y.__class__ and d == (y.ndim - 1,) and y.size
            and y.dtype in _FUSED and g.dtype == y.dtype and g.shape == y.shape and y.flags.c_contiguous
            and g.flags.c_contiguous and _cuda_kernels.available())


def _short_reduce(ufunc, a, d):
    """ufunc.reduce(a, axis=d, keepdims=True).  NumPy reduces a short innermost axis row by row (~50 ns a
    row); for one axis of length 2..7 a loop over its slices is several times faster.  Max is exact either
    way, and sums of fewer than 8 terms add in NumPy's order (left to right)."""
    ax = d[0] if isinstance(d, tuple) and len(d) == 1 else d
    n = a.shape[ax] if a.ndim > 1 and isinstance(ax, int) else 0
    if not 1 < n < 8:
        return ufunc.reduce(a, axis=d, keepdims=True)
    ix = [slice(None)] * a.ndim
    ix[ax] = slice(0, 1)
    r = a[tuple(ix)].copy()
    for j in range(1, n):
        ix[ax] = slice(j, j + 1)
        ufunc(r, a[tuple(ix)], out=r)
    return r


def _softmax_arr(a, d, log):
    """(log-)softmax of array `a` over axes `d`: shifted by the finite max, in place on one fresh array (on a GPU,
    over the last axis of a contiguous float array: _cuda_kernels' one-kernel form of the same steps)."""
    if (a.__class__ is not np.ndarray and d == (a.ndim - 1,) and a.dtype in _FUSED and a.flags.c_contiguous
            and _cuda_kernels.available()):
        return _cuda_kernels.softmax_lastdim(a, log)
    m = _short_reduce(np.maximum, a, d)
    m = np.where(np.isfinite(m), m, 0)
    z = as_array(a - m)
    if log:
        s = _short_reduce(np.add, np.exp(z), d)
        z -= np.log(s)
    else:
        np.exp(z, out=z)
        z /= _short_reduce(np.add, z, d)
    return z


_FUSED = (np.dtype(np.float32), np.dtype(np.float64))


def _softmax(input, dim, dtype, log):
    if dtype is not None:
        input = to_dtype(input, _dtype.to_dtype(dtype))
    a = input._data
    if dim is None:
        dim = 0 if a.ndim in (0, 1, 3) else 1
    d = _dims(dim, a.ndim) if a.ndim else (_dims(dim, 0), ())[1]
    if a.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{'log_' if log else ''}softmax_lastdim_kernel_impl\" not implemented for "
                           f"'{_dtype.from_numpy_dtype(a.dtype).name_c}'")
    if a.size == 0:
        y = a.copy()
    elif a.dtype.kind == "V":       # bfloat16: computed in float32, rounded once
        y = quiet(_softmax_arr, a.astype(np.float32), d, log).astype(a.dtype)
    else:
        y = quiet(_softmax_arr, a, d, log)
    if not y.flags.c_contiguous:
        y = np.ascontiguousarray(y, like=y)         # torch's softmax writes a contiguous result
    if input._rg and grad.enabled:
        n = (LogSoftmaxBackward0 if log else SoftmaxBackward0)((edge(input),))
        n.dim = d
        out = make(y, True, n)
        n._saved = (save_out(out),)
        return out
    return make(y)


def softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    return _softmax(input, dim, dtype, False)


def log_softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    return _softmax(input, dim, dtype, True)
