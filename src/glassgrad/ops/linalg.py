"""Linear algebra: matrix and vector products.

ops: mm matmul (every rank combination) bmm mv dot vdot outer ger kron (inner: ops/einsum.py)
     (beta * input + alpha * product -- addmm addmm_ addmv baddbmm addbmm: ops/addmm.py;
     einsum tensordot: ops/einsum.py)

PyTorch builds several of these out of smaller ops (matmul folds batches into mm, kron
reshapes ...); the grad_fn a user sees is the *top* node of that chain.  Here each op is one
node, named as PyTorch's top node, whose backward is the whole chain's gradient written with
ns.* (so it is differentiable again).  Those nodes are `_LinalgNode`s: one small class per
PyTorch name (with its `_saved_names`), the backward formula a function given at creation.
"""
import numpy as np

from .. import _dtype
from .._blas import matmul as gemm
from ._core import Tensor, as_array, make, edge, save_in, grad, broadcast_error, holomorphic
from ..autograd.graph import Node
from .arithmetic import mul
from .views import reshape
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["mm", "matmul", "bmm", "mv", "dot", "vdot", "outer", "ger", "kron"]


def _st(t):
    return _dtype.c_name(t._data.dtype)


# -- the nodes: one class per PyTorch name, the backward formula given as a function -------------
class _LinalgNode(Node):
    __slots__ = ("bw", "info")

    @holomorphic
    def backward(self, ns, g):
        return self.bw(self, ns, g, *ns.unpack(self))

    def need(self, i):
        return self.next_functions[i][0] is not None


def _node(cls, inputs, bw, info=None):
    n = cls(tuple(edge(t) for t in inputs))
    n._saved = tuple(save_in(t) for t in inputs)
    n.bw = bw
    n.info = info
    return n


def _wrap(y, cls, inputs, bw, info=None):
    """The result of an op whose node is `cls` (backward `bw(node, ns, g, *saved inputs)`, `info` for it)."""
    if grad.enabled and any(t._rg for t in inputs):
        return make(y, True, _node(cls, inputs, bw, info))
    return make(y)


class SqueezeBackward4(_LinalgNode):        # matmul 1-D @ 2-D; backward: _matmul_bw
    __slots__ = ()


class UnsafeViewBackward0(_LinalgNode):     # matmul with a batch (_matmul_bw); kron (_kron_bw)
    __slots__ = ()


class TransposeBackward0(_LinalgNode):      # matmul 2-D @ batched, some size 1; backward: _matmul_bw
    __slots__ = ()


class CloneBackward0(_LinalgNode):          # matmul 2-D @ batched; backward: _matmul_bw
    __slots__ = ()


class BmmBackward0(_LinalgNode):            # backward: _bmm_bw
    __slots__ = ()
    _saved_names = ("self", "mat2")


class MvBackward0(_LinalgNode):             # backward: _mv_bw
    __slots__ = ()
    _saved_names = ("self", "vec")


class DotBackward0(_LinalgNode):            # backward: _dot_bw
    __slots__ = ()
    _saved_names = ("self", "tensor")


class VdotBackward0(_LinalgNode):           # backward: _dot_bw
    __slots__ = ()
    _saved_names = ("self", "other")


# -- argument checks --------------------------------------------------------------------------------
def _tensor_arg(x, fname, pos, argname):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{argname}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _no_bool(name, *ts):
    for t in ts:
        if t._data.dtype == np.bool_:
            raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


def _mm_dtype(x, y):
    if x._data.dtype != y._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_dtype.cpp_name(x._data.dtype)} != {_dtype.cpp_name(y._data.dtype)}")


def _mv_dtype(i, m, v):
    if not (i._data.dtype == m._data.dtype == v._data.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_st(i)}, {_st(m)}, and {_st(v)}")


def _scalar_type(x, y):
    if x._data.dtype != y._data.dtype:
        raise RuntimeError(f"expected scalar type {_st(x)} but found {_st(y)}")


# -- mm ------------------------------------------------------------------------------------------
class MmBackward0(Node):            # y = a @ b; da = gy @ b.T; db = a.T @ gy
    __slots__ = ()
    stack_rule = "mm"
    _saved_names = ("self", "mat2")

    @holomorphic
    def backward(self, ns, g):
        a, b = ns.unpack(self)
        ga = None if self.next_functions[0][0] is None else ns.matmul(g, ns.mT(b))
        gb = None if self.next_functions[1][0] is None else ns.matmul(ns.mT(a), g)
        return (ga, gb)


def mm(input, mat2, *, out=None):
    if _acs.on:
        return _ac.lower(mm, input, mat2, out=out)
    a, b = input._data, mat2._data
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    _mm_dtype(input, mat2)
    if a.dtype == np.bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    y = gemm(a, b)
    if grad.enabled and (input._rg or mat2._rg):
        n = MmBackward0((edge(input), edge(mat2)))
        n._saved = (save_in(input), save_in(mat2))
        return make(y, True, n)
    return make(y)


# -- matmul --------------------------------------------------------------------------------------
def matmul(input, other, *, out=None):
    if _acs.on:
        return _ac.lower(matmul, input, other, out=out)
    if not isinstance(other, Tensor):
        raise TypeError(f"matmul(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    if input._data.ndim == 2 and other._data.ndim == 2:
        return mm(input, other)
    return matmul_general(input, other)


def _matmul_bw(n, ns, g, a, b):
    a_shape, b_shape, a2s, b2s, ys = n.info
    a2 = ns.reshape(a, a2s) if a2s != a_shape else a
    b2 = ns.reshape(b, b2s) if b2s != b_shape else b
    g2 = ns.reshape(g, ys)
    ga = gb = None
    if n.need(0):
        ga = ns.sum_to(ns.matmul(g2, ns.mT(b2)), a2s)
        if a2s != a_shape:
            ga = ns.reshape(ga, a_shape)
    if n.need(1):
        gb = ns.sum_to(ns.matmul(ns.mT(a2), g2), b2s)
        if b2s != b_shape:
            gb = ns.reshape(gb, b_shape)
    return (ga, gb)


def _bcast_batch(sa, sb):
    try:
        return tuple(np.broadcast_shapes(sa, sb))
    except ValueError:
        raise broadcast_error(sa, sb) from None


def matmul_general(input, other):
    """matmul for every rank combination but 2-D @ 2-D (that is mm)."""
    a, b = input, other
    A, B = a._data, b._data
    da, db = A.ndim, B.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    cls, kern = _matmul_checks(a, b)
    _no_bool(kern, a)
    y = gemm(A, B)
    sa, sb = A.shape, B.shape
    a2s = (1,) + sa if da == 1 else sa
    b2s = sb + (1,) if db == 1 else sb
    ys = y.shape[:-1] + (1,) + y.shape[-1:] if da == 1 else y.shape
    if db == 1:
        ys = ys + (1,)
    return _wrap(y, cls, (a, b), _matmul_bw, (sa, sb, a2s, b2s, ys))


def _matmul_checks(a, b):
    """PyTorch's checks (and error texts) for the chain matmul folds into: which node tops it and which
    kernel (named in the Bool error) runs."""
    sa, sb = a._data.shape, b._data.shape
    da, db = len(sa), len(sb)
    k = sa[-1]
    # 3-D @ 3-D where only the second has a batch: PyTorch treats the first as a matrix (folds)
    da_eff = 2 if (da == 3 and db == 3 and sa[0] == 1 and sb[0] != 1) else da
    if da == 1 and db == 2:
        if sb[0] != k:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied (1x{k} and {sb[0]}x{sb[1]})")
        _mm_dtype(a, b)
        return SqueezeBackward4, "addmm_impl_cpu_"
    if da >= 3 and db <= 2:
        bm = int(np.prod(sa[:-1]))
        if db == 2:
            if sb[0] != k:
                raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({bm}x{k} and {sb[0]}x{sb[1]})")
            _mm_dtype(a, b)
            return UnsafeViewBackward0, "addmm_impl_cpu_"
        if sb[0] != k:
            raise RuntimeError(f"size mismatch, got input ({bm}), mat ({bm}x{k}), vec ({sb[0]})")
        _mv_dtype(b, a, b)
        return UnsafeViewBackward0, "addmv_impl_cpu"
    if da_eff <= 2 and db >= 3:
        return _matmul_checks_batched_right(a, b)
    # both batched
    batch = _bcast_batch(sa[:-2], sb[:-2])
    nb = int(np.prod(batch))
    if sb[-2] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{nb}, {k}] but got: [{nb}, {sb[-2]}].")
    _scalar_type(a, b)
    return UnsafeViewBackward0, "bmm"


def _matmul_checks_batched_right(a, b):
    """_matmul_checks for a vector or matrix `a` @ a batched `b`: PyTorch folds differently when `a`
    needs a gradient."""
    sa, sb = a._data.shape, b._data.shape
    a_rg = a._rg and grad.enabled
    k = sa[-1]
    n_ = sb[-2]
    p = sb[-1]
    bp = int(np.prod(sb[:-2])) * p
    if len(sa) == 1:
        if a_rg:
            if n_ != k:
                raise RuntimeError(f"size mismatch, got input ({bp}), mat ({bp}x{n_}), vec ({k})")
            _mv_dtype(a, b, a)
            return UnsafeViewBackward0, "addmv_impl_cpu"
        if n_ != k:
            nb = int(np.prod(sb[:-2]))
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{nb}, {k}] but got: [{nb}, {n_}].")
        _scalar_type(a, b)
        return UnsafeViewBackward0, "bmm"
    if a_rg:
        m = sa[-2]
        if n_ != k:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({bp}x{n_} and {k}x{m})")
        _mm_dtype(b, a)
        nel = int(np.prod(sb[:-2])) * m * p
        return (TransposeBackward0 if (m == 1 or p == 1 or nel == 0) else CloneBackward0), "addmm_impl_cpu_"
    if n_ != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{int(np.prod(sb[:-2]))}, {k}] but got: [{int(np.prod(sb[:-2]))}, {n_}].")
    _scalar_type(a, b)
    return UnsafeViewBackward0, "bmm"


# -- bmm / mv / dot / vdot ------------------------------------------------------------------------
def _bmm_checks(b1, b2):
    if b1._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    s1, s2 = b1._data.shape, b2._data.shape
    if s2[0] != s1[0] or s2[1] != s1[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{s1[0]}, {s1[2]}] "
                           f"but got: [{s2[0]}, {s2[1]}].")


def _bmm_bw(n, ns, g, a, b):
    return (ns.matmul(g, ns.mT(b)) if n.need(0) else None, ns.matmul(ns.mT(a), g) if n.need(1) else None)


def bmm(input, mat2, *, out=None):
    if _acs.on:
        return _ac.lower(bmm, input, mat2, out=out)
    _tensor_arg(mat2, "bmm", 2, "mat2")
    _bmm_checks(input, mat2)
    if input._data.shape[0] * input._data.shape[1] * mat2._data.shape[2]:
        _scalar_type(input, mat2)
    _no_bool("bmm", input)
    y = gemm(input._data, mat2._data)
    y = y.astype(input._data.dtype if y.size else mat2._data.dtype, copy=False)
    return _wrap(y, BmmBackward0, (input, mat2), _bmm_bw)


def _mv_checks(inp_shape, m, v):
    """Size checks of mv/addmv (ranks already checked): `inp_shape` is addmv's input shape."""
    r, c = m._data.shape
    n = v._data.shape[0]
    isz = inp_shape[0] if inp_shape else 1
    if c != n and inp_shape is not None and len(inp_shape) == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if c != n or (inp_shape and isz != r and isz != 1):
        raise RuntimeError(f"size mismatch, got input ({isz if inp_shape else r}), mat ({r}x{c}), vec ({n})")


def _mv_bw(n, ns, g, m, v):
    gm = ns.outer(g, v) if n.need(0) else None
    gv = ns.matmul(ns.mT(m), g) if n.need(1) else None
    return (gm, gv)


def mv(input, vec, *, out=None):
    _tensor_arg(vec, "mv", 2, "vec")
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._data.ndim}, {vec._data.ndim}")
    _mv_checks((input._data.shape[0],), input, vec)
    _mv_dtype(vec, input, vec)
    _no_bool("addmv_impl_cpu", input)
    return _wrap(gemm(input._data, vec._data), MvBackward0, (input, vec), _mv_bw)


def _dot_checks(a, b):
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_st(a)} and {_st(b)}")
    na, nb = a._data.shape[0], b._data.shape[0]
    if na != nb:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{na}] and src [{nb}] to have the same "
                           f"number of elements, but got {na} and {nb} elements respectively")


def _dot_bw(n, ns, g, a, b):
    return (g * b if n.need(0) else None, g * a if n.need(1) else None)


def _vdot_bw(n, ns, g, a, b):       # y = sum(conj(a) b): da = conj(gy) b, db = gy a (through the conj of
    return (ns.conj(g * b) if n.need(0) else None, g * ns.conj(a) if n.need(1) else None)   # _LinalgNode)


def dot(input, tensor, *, out=None):
    _tensor_arg(tensor, "dot", 2, "tensor")
    _dot_checks(input, tensor)
    _no_bool("dot", input)
    y = as_array(np.dot(input._data, tensor._data), input._data.dtype)
    return _wrap(y, DotBackward0, (input, tensor), _dot_bw)


def vdot(input, other, *, out=None):
    _tensor_arg(other, "vdot", 2, "other")
    _dot_checks(input, other)
    _no_bool("vdot", input)
    y = as_array(np.vdot(input._data, other._data), input._data.dtype)
    return _wrap(y, VdotBackward0, (input, other), _vdot_bw)


# -- outer / ger / kron -------------------------------------------------------------------------
def outer(input, vec2):
    _tensor_arg(vec2, "outer", 2, "vec2")
    if input._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input._data.ndim}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    return mul(reshape(input, (input._data.shape[0], 1)), vec2)


def ger(input, vec2):
    return outer(input, vec2)


def _kron_bw(n, ns, g, a, b):
    sa, sb, ys, at, bt, dt, adt, bdt = n.info
    nd = len(sa)
    gi = ns.reshape(g, tuple(x for pair in zip(sa, sb) for x in pair))
    ga = gb = None
    if n.need(0):
        b_e = ns.cast(ns.reshape(b, tuple(x for s in sb for x in (1, s))), dt)
        ga = ns.cast(ns.reshape(ns.sum(gi * b_e, tuple(2 * i + 1 for i in range(nd)), True), at), adt)
    if n.need(1):
        a_e = ns.cast(ns.reshape(a, tuple(x for s in sa for x in (s, 1))), dt)
        gb = ns.cast(ns.reshape(ns.sum(gi * a_e, tuple(2 * i for i in range(nd)), True), bt), bdt)
    return (ga, gb)


def kron(input, other, *, out=None):
    _tensor_arg(other, "kron", 2, "other")
    A, B = input._data, other._data
    rt = np.promote_types(A.dtype, B.dtype) if A.dtype != B.dtype else A.dtype
    if rt.kind in "fV" and (A.dtype.kind not in "fV" or B.dtype.kind not in "fV"):
        rt = (A.dtype if A.dtype.kind in "fV" else B.dtype)
    nd = max(A.ndim, B.ndim)
    sa = (1,) * (nd - A.ndim) + A.shape
    sb = (1,) * (nd - B.ndim) + B.shape
    ys = tuple(x * y for x, y in zip(sa, sb))
    y = np.kron(A.reshape(sa).astype(rt), B.reshape(sb).astype(rt)).reshape(ys) if nd else \
        (A.astype(rt) * B.astype(rt)).reshape(())
    return _wrap(y, UnsafeViewBackward0, (input, other), _kron_bw,
                 (sa, sb, ys, A.shape, B.shape, rt, A.dtype, B.dtype))
