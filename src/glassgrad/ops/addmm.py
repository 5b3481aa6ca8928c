"""Products added to an input: beta * input + alpha * (product), one node each (as PyTorch).

ops: addmm addmm_ addmv addmv_ baddbmm baddbmm_ addbmm addbmm_ addr addr_, and linear (nn.functional.linear: addmm or matmul, as PyTorch composes it;
     the plain products: ops/linalg.py)
"""
import numpy as np

from .. import _dtype
from .._blas import matmul as gemm
from . import views as _views
from .linalg import matmul, _LinalgNode, _wrap, _st, _no_bool, _mv_checks, _mv_dtype, _scalar_type, _bmm_checks
from ._core import _inplace, as_array
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["addmm", "addmv", "baddbmm", "addbmm", "addr"]


class AddmmBackward0(_LinalgNode):          # backward: _addmm_bw
    __slots__ = ()
    stack_rule = "addmm"
    _saved_names = ("", "mat1", "mat2")


class AddmvBackward0(_LinalgNode):          # backward: _addmv_bw
    __slots__ = ()
    _saved_names = ("", "mat", "vec")


class BaddbmmBackward0(_LinalgNode):        # backward: _addbmm_bw
    __slots__ = ()
    _saved_names = ("", "batch1", "batch2")


class AddbmmBackward0(_LinalgNode):         # backward: _addbmm_bw
    __slots__ = ()
    _saved_names = ("", "batch1", "batch2")


class AddrBackward0(_LinalgNode):           # backward: _addr_bw
    __slots__ = ()
    _saved_names = ("", "vec1", "vec2")


def _expand_check(t, target):
    s = tuple(t._data.shape)
    target = tuple(target)
    if len(s) > len(target):
        raise RuntimeError(f"expand(torch.{_dtype._FROM_NP[t._data.dtype]._legacy}{{{list(s)}}}, size={list(target)}): "
                           f"the number of sizes provided ({len(target)}) must be greater or equal to the number "
                           f"of dimensions in the tensor ({len(s)})")
    for i in range(1, len(s) + 1):
        if s[-i] != target[-i] and s[-i] != 1:
            raise RuntimeError(f"The expanded size of the tensor ({target[-i]}) must match the existing size "
                               f"({s[-i]}) at non-singleton dimension {len(target) - i}.  Target sizes: "
                               f"{list(target)}.  Tensor sizes: {list(s)}")


def _scale(x, s):
    return x if s == 1 else x * s


def _mm_as(a, b, like, ns):
    """a @ b laid out like `like`: when `like` is a transposed (column-major) matrix, such as the
    weight.t() of a Linear, compute (b.T @ a.T).T -- the same GEMM -- so that the gradient reaching the
    weight through TBackward0 is row-major and its AccumulateGrad can adopt it without a copy (ATen's
    mm backward follows the operand's strides the same way)."""
    flags = getattr(like, "flags", None)
    if flags is not None and flags.f_contiguous and not flags.c_contiguous:
        return ns.mT(ns.matmul(ns.mT(b), ns.mT(a)))
    return ns.matmul(a, b)


def _product(a, b):
    """(a @ b, the result dtype): bfloat16 stays in float32 until _combine has added the bias, so that the
    result is rounded once (torch's CPU GEMM adds the bias to its float32 accumulator)."""
    if a.dtype.kind == "V":
        return gemm(a.astype(np.float32), b.astype(np.float32)), a.dtype
    return gemm(a, b), None


def _combine(inp, prod, dt, beta, alpha):
    y = _scale(prod, alpha)
    if beta != 0:
        b = _scale(inp._data if dt is None else inp._data.astype(prod.dtype), beta)
        if y.shape == np.broadcast_shapes(y.shape, b.shape) and y.dtype == np.result_type(y, b):
            y += b          # y is a fresh product: add the bias in place
        else:
            y = y + b
    return as_array(y, prod.dtype if dt is None else dt)


# -- addmm ---------------------------------------------------------------------------------------
def _addmm_bw(n, ns, g, inp, m1, m2):
    beta, alpha, ishape = n.info
    gi = g1 = g2 = None
    if n.need(0):
        gi = ns.sum_to(_scale(g, beta), ishape)
    if n.need(1):
        g1 = _scale(_mm_as(g, ns.mT(m2), m1, ns), alpha)
    if n.need(2):
        g2 = _scale(_mm_as(ns.mT(m1), g, m2, ns), alpha)
    return (gi, g1, g2)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if _acs.on:
        return _ac.lower(addmm, input, mat1, mat2, beta=beta, alpha=alpha, out=out)
    if input._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_st(input)} and {_st(mat2)}")
    if mat1._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_st(mat1)} and {_st(mat2)}")
    if mat1._data.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1._data.ndim}-D tensor")
    if mat2._data.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2._data.ndim}-D tensor")
    s1, s2 = mat1._data.shape, mat2._data.shape
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s1[0]}x{s1[1]} and {s2[0]}x{s2[1]})")
    _expand_check(input, (s1[0], s2[1]))
    _no_bool("addmm_impl_cpu_", input)
    y = _combine(input, *_product(mat1._data, mat2._data), beta, alpha)
    y = np.broadcast_to(y, (s1[0], s2[1])).copy() if y.shape != (s1[0], s2[1]) else y
    return _wrap(y, AddmmBackward0, (input, mat1, mat2), _addmm_bw, (beta, alpha, input._data.shape))


def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    if mat1._data.ndim == 2 and mat2._data.ndim == 2:
        ts = (mat1._data.shape[0], mat2._data.shape[1])
        if self._data.shape != ts:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(self._data.shape)} and output tensor "
                               f"size {list(ts)} should match")
    return _inplace(lambda x, a, b: addmm(x, a, b, beta=beta, alpha=alpha), self, mat1, mat2)


# -- addmv ---------------------------------------------------------------------------------------
def _addmv_bw(n, ns, g, inp, m, v):
    beta, alpha, ishape = n.info
    gi = ns.sum_to(_scale(g, beta), ishape) if n.need(0) else None
    gm = _scale(ns.outer(g, v), alpha) if n.need(1) else None
    gv = _scale(ns.matmul(ns.mT(m), g), alpha) if n.need(2) else None
    return (gi, gm, gv)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    si = input._data.shape
    if mat._data.ndim != 2 or vec._data.ndim != 1 or len(si) > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {len(si)}, {mat._data.ndim}, {vec._data.ndim}")
    _mv_checks(si, mat, vec)
    _mv_dtype(input, mat, vec)
    _no_bool("addmv_impl_cpu", input)
    r = mat._data.shape[0]
    y = _combine(input, *_product(mat._data, vec._data), beta, alpha)
    y = np.broadcast_to(y, (r,)).copy() if y.shape != (r,) else y
    return _wrap(y, AddmvBackward0, (input, mat, vec), _addmv_bw, (beta, alpha, si))


# -- baddbmm / addbmm ----------------------------------------------------------------------------
def _addbmm_bw(n, ns, g, inp, b1, b2):
    beta, alpha, ishape, reduce = n.info
    gi = ns.sum_to(_scale(g, beta), ishape) if n.need(0) else None
    gb = ns.unsqueeze(g, 0) if reduce else g
    g1 = _scale(ns.matmul(gb, ns.mT(b2)), alpha) if n.need(1) else None
    g2 = _scale(ns.matmul(ns.mT(b1), gb), alpha) if n.need(2) else None
    return (gi, g1, g2)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    if _acs.on:
        return _ac.lower(baddbmm, input, batch1, batch2, beta=beta, alpha=alpha, out=out)
    if batch1._data.ndim >= 2 and batch2._data.ndim >= 1:
        _expand_check(input, (batch1._data.shape[0], batch1._data.shape[1], batch2._data.shape[-1]))
    if input._data.dtype != batch1._data.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_dtype.cpp_name(input._data.dtype)}, "
                           f"batch1: {_dtype.cpp_name(batch1._data.dtype)}, "
                           f"batch2: {_dtype.cpp_name(batch2._data.dtype)}")
    _bmm_checks(batch1, batch2)
    _scalar_type(batch1, batch2)
    s1, s2 = batch1._data.shape, batch2._data.shape
    ts = (s1[0], s1[1], s2[2])
    _expand_check(input, ts)
    _no_bool("baddbmm", input)
    y = _combine(input, *_product(batch1._data, batch2._data), beta, alpha)
    y = np.broadcast_to(y, ts).copy() if y.shape != ts else y
    return _wrap(y, BaddbmmBackward0, (input, batch1, batch2), _addbmm_bw, (beta, alpha, input._data.shape, False))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    if _acs.on:
        return _ac.lower(addbmm, input, batch1, batch2, beta=beta, alpha=alpha, out=out)
    if batch1._data.ndim >= 2 and batch2._data.ndim >= 3:
        _expand_check(input, (batch1._data.shape[1], batch2._data.shape[2]))
    if batch1._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    s1, s2 = batch1._data.shape, batch2._data.shape
    if s1[0] != s2[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {s1[0]} and {s2[0]}")
    if s1[2] != s2[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({s1[1]}x{s1[2]} and {s2[1]}x{s2[2]})")
    if input._data.dtype != batch2._data.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_st(input)} and {_st(batch2)}")
    if batch1._data.dtype != batch2._data.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_st(batch1)} and {_st(batch2)}")
    ts = (s1[1], s2[2])
    _no_bool("addbmm", input)
    prod = gemm(batch1._data, batch2._data).sum(axis=0).astype(batch1._data.dtype)
    y = _combine(input, prod, None, beta, alpha)
    y = np.broadcast_to(y, ts).copy() if y.shape != ts else y
    return _wrap(y, AddbmmBackward0, (input, batch1, batch2), _addbmm_bw, (beta, alpha, input._data.shape, True))


# -- linear (nn.functional.linear) ------------------------------------------------------------------
def _bad_inplace(self, ts):
    if tuple(self._data.shape) != tuple(ts):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self._data.shape)} and output tensor "
                           f"size {list(ts)} should match")


def addmv_(self, mat, vec, *, beta=1, alpha=1):
    if mat._data.ndim == 2:
        _bad_inplace(self, mat._data.shape[:1])
    return _inplace(lambda x, a, b: addmv(x, a, b, beta=beta, alpha=alpha), self, mat, vec)


def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    if batch1._data.ndim == 3 and batch2._data.ndim == 3:
        _bad_inplace(self, batch1._data.shape[:2] + batch2._data.shape[2:])
    return _inplace(lambda x, a, b: baddbmm(x, a, b, beta=beta, alpha=alpha), self, batch1, batch2)


def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return _inplace(lambda x, a, b: addbmm(x, a, b, beta=beta, alpha=alpha), self, batch1, batch2)


# -- addr ----------------------------------------------------------------------------------------
def _addr_bw(n, ns, g, inp, v1, v2):
    beta, alpha, ishape = n.info
    gi = ns.sum_to(_scale(g, beta), ishape) if n.need(0) else None
    g1 = _scale(ns.matmul(g, v2), alpha) if n.need(1) else None
    g2 = _scale(ns.matmul(ns.mT(g), v1), alpha) if n.need(2) else None
    return (gi, g1, g2)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2) (Boolean: input and beta, or vec1 vec2 and alpha)."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    ts = (vec1._data.shape[0], vec2._data.shape[0])
    _expand_check(input, ts)
    dt = _dtype.result_type(input, vec1, vec2)
    if dt._cat != 2:
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    input, vec1, vec2 = (t if t.dtype is dt else t.to(dt) for t in (input, vec1, vec2))
    a, v1, v2 = input._data, vec1._data, vec2._data
    if dt is _dtype.bool:
        y = np.logical_or(np.logical_and(a, bool(beta)), np.logical_and(np.outer(v1, v2), bool(alpha)))
    else:
        y = _combine(input, *_product(v1[:, None], v2[None, :]), beta, alpha)
    y = np.broadcast_to(y, ts).copy() if y.shape != ts else y
    return _wrap(y, AddrBackward0, (input, vec1, vec2), _addr_bw, (beta, alpha, a.shape))


def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    if self._data.ndim != 2:
        raise RuntimeError(f"2D tensor expected, got {self._data.ndim}D tensor for input")
    return _inplace(lambda x, a, b: addr(x, a, b, beta=beta, alpha=alpha), self, vec1, vec2)


def _check_linear(input, weight):
    if input.dim() == 0 or weight.dim() not in (1, 2):
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.dim()}D and "
                           f"{weight.dim()}D")
    if input.shape[-1] != weight.shape[-1]:
        rows = 1
        for s in input.shape[:-1]:
            rows *= s
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                           f"{weight.shape[-1]}x{weight.shape[0] if weight.dim() == 2 else 1})")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {input.dtype.name_c} and "
                           f"{weight.dtype.name_c}")


def linear(input, weight, bias=None):
    """y = x W^T + b (nn.functional.linear): the composite PyTorch uses, so grad_fn names match --
    AddmmBackward0 for a 2-D input with bias, ViewBackward0 / UnsafeViewBackward0 for other ranks."""
    if _acs.on:
        return _ac.lower(linear, input, weight, bias)
    _check_linear(input, weight)
    wt = _views.t(weight) if weight.dim() == 2 else weight
    if bias is None:
        return matmul(input, wt)
    if input.dim() == 2 and weight.dim() == 2:
        return addmm(bias, input, wt)
    if weight.dim() == 2:
        flat = input.reshape(-1, input.shape[-1])
        return addmm(bias, flat, wt).view(*input.shape[:-1], weight.shape[0])
    return matmul(input, wt) + bias
