"""Linear algebra, continued: matmul for every rank combination, bmm mv dot vdot inner outer ger
addmm addmm_ addmv baddbmm addbmm kron einsum tensordot.

PyTorch builds several of these out of smaller ops (matmul folds batches into mm, einsum
permutes/reshapes into bmm ...); the grad_fn a user sees is the *top* node of that chain.
Here each op is one node, named as PyTorch's top node, whose backward is the whole chain's
gradient written with F.* (so it is differentiable again).
"""
import numpy as np

from .. import _dtype
from .._blas import matmul as gemm
from ._core import Tensor, make, edge, save_in, grad
from ..autograd.graph import Node

__all__ = ["bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "baddbmm", "addbmm",
           "kron"]

def _st(t):
    return _dtype.c_name(t._data.dtype)


# -- a generic node: one class per PyTorch name, backward given as a function -----------------
class _G(Node):
    __slots__ = ("bw", "info")

    def backward(self, F, g):
        return self.bw(self, F, g, *F.unpack(self))

    def need(self, i):
        return self.next_functions[i][0] is not None


_CLASSES = {}


_SAVED_NAMES = {"DotBackward0": ("self", "tensor"), "VdotBackward0": ("self", "other"),
                "MvBackward0": ("self", "vec"), "BmmBackward0": ("self", "mat2"),
                "AddmmBackward0": ("", "mat1", "mat2"), "AddmvBackward0": ("", "mat", "vec"),
                "BaddbmmBackward0": ("", "batch1", "batch2"), "AddbmmBackward0": ("", "batch1", "batch2")}


def _node(name, inputs, bw, info=None):
    cls = _CLASSES.get(name)
    if cls is None:
        cls = _CLASSES[name] = type(name, (_G,), {"__slots__": (), "_saved_names": _SAVED_NAMES.get(name, ())})
    n = cls(tuple(edge(t) for t in inputs))
    n._saved = tuple(save_in(t) for t in inputs)
    n.bw = bw
    n.info = info
    return n


def _wrap(y, name, inputs, bw, info=None):
    if grad.enabled and any(t._rg for t in inputs):
        return make(y, True, _node(name, inputs, bw, info))
    return make(y)


def _tensor_arg(x, fname, pos, argname):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{argname}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _no_bool(name, *ts):
    for t in ts:
        if t._data.dtype == np.bool_:
            raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


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


# -- matmul ------------------------------------------------------------------------------------
def _matmul_bw(n, F, g, a, b):
    a_shape, b_shape, a2s, b2s, ys = n.info
    a2 = F.reshape(a, a2s) if a2s != a_shape else a
    b2 = F.reshape(b, b2s) if b2s != b_shape else b
    g2 = F.reshape(g, ys)
    ga = gb = None
    if n.need(0):
        ga = F.sum_to(F.matmul(g2, F.mT(b2)), a2s)
        if a2s != a_shape:
            ga = F.reshape(ga, a_shape)
    if n.need(1):
        gb = F.sum_to(F.matmul(F.mT(a2), g2), b2s)
        if b2s != b_shape:
            gb = F.reshape(gb, b_shape)
    return (ga, gb)


def _bcast_batch(sa, sb):
    from ._core import broadcast_error
    try:
        return tuple(np.broadcast_shapes(sa, sb))
    except ValueError:
        raise broadcast_error(sa, sb) from None


def matmul_general(input, other):
    a, b = input, other
    A, B = a._data, b._data
    da, db = A.ndim, B.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    sa, sb = A.shape, B.shape
    a_rg = a._rg and grad.enabled
    # 3-D @ 3-D where only the second has a batch: PyTorch treats the first as a matrix (folds)
    da_eff = da
    if da == 3 and db == 3 and sa[0] == 1 and sb[0] != 1:
        da_eff = 2
    k = sa[-1]
    if da == 1 and db == 2:
        if sb[0] != k:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied (1x{k} and {sb[0]}x{sb[1]})")
        _mm_dtype(a, b)
        name, kern = "SqueezeBackward4", "addmm_impl_cpu_"
    elif da >= 3 and db <= 2:
        bm = int(np.prod(sa[:-1]))
        if db == 2:
            if sb[0] != k:
                raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({bm}x{k} and {sb[0]}x{sb[1]})")
            _mm_dtype(a, b)
            kern = "addmm_impl_cpu_"
        else:
            if sb[0] != k:
                raise RuntimeError(f"size mismatch, got input ({bm}), mat ({bm}x{k}), vec ({sb[0]})")
            _mv_dtype(b, a, b)
            kern = "addmv_impl_cpu"
        name = "UnsafeViewBackward0"
    elif da_eff <= 2 and db >= 3:
        n_ = sb[-2]
        p = sb[-1]
        bp = int(np.prod(sb[:-2])) * p
        if da == 1:
            if a_rg:
                if n_ != k:
                    raise RuntimeError(f"size mismatch, got input ({bp}), mat ({bp}x{n_}), vec ({k})")
                _mv_dtype(a, b, a)
                kern = "addmv_impl_cpu"
            else:
                if n_ != k:
                    nb = int(np.prod(sb[:-2]))
                    raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                                       f"[{nb}, {k}] but got: [{nb}, {n_}].")
                _scalar_type(a, b)
                kern = "bmm"
            name = "UnsafeViewBackward0"
        elif a_rg:
            m = sa[-2]
            if n_ != k:
                raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({bp}x{n_} and {k}x{m})")
            _mm_dtype(b, a)
            kern = "addmm_impl_cpu_"
            nel = int(np.prod(sb[:-2])) * m * p
            name = "TransposeBackward0" if (m == 1 or p == 1 or nel == 0) else "CloneBackward0"
        else:
            if n_ != k:
                raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                                   f"[{int(np.prod(sb[:-2]))}, {k}] but got: [{int(np.prod(sb[:-2]))}, {n_}].")
            _scalar_type(a, b)
            name, kern = "UnsafeViewBackward0", "bmm"
    else:  # both batched
        batch = _bcast_batch(sa[:-2], sb[:-2])
        nb = int(np.prod(batch))
        if sb[-2] != k:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{nb}, {k}] but got: [{nb}, {sb[-2]}].")
        _scalar_type(a, b)
        name, kern = "UnsafeViewBackward0", "bmm"
    _no_bool(kern, a)
    y = np.matmul(A, B)
    a2s = (1,) + sa if da == 1 else sa
    b2s = sb + (1,) if db == 1 else sb
    ys = y.shape[:-1] + (1,) + y.shape[-1:] if da == 1 else y.shape
    if db == 1:
        ys = ys + (1,)
    return _wrap(y, name, (a, b), _matmul_bw, (sa, sb, a2s, b2s, ys))


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


def _bmm_bw(n, F, g, a, b):
    return (F.matmul(g, F.mT(b)) if n.need(0) else None, F.matmul(F.mT(a), g) if n.need(1) else None)


def bmm(input, mat2, *, out=None):
    _tensor_arg(mat2, "bmm", 2, "mat2")
    _bmm_checks(input, mat2)
    if input._data.shape[0] * input._data.shape[1] * mat2._data.shape[2]:
        _scalar_type(input, mat2)
    _no_bool("bmm", input)
    y = np.matmul(input._data, mat2._data)
    y = y.astype(input._data.dtype if y.size else mat2._data.dtype, copy=False)
    return _wrap(y, "BmmBackward0", (input, mat2), _bmm_bw)


def _mv_checks(inp_shape, m, v):
    """Size checks of mv/addmv (ranks already checked): `inp_shape` is addmv's input shape."""
    r, c = m._data.shape
    n = v._data.shape[0]
    isz = inp_shape[0] if inp_shape else 1
    if c != n and inp_shape is not None and len(inp_shape) == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if c != n or (inp_shape and isz != r and isz != 1):
        raise RuntimeError(f"size mismatch, got input ({isz if inp_shape else r}), mat ({r}x{c}), vec ({n})")


def _mv_bw(n, F, g, m, v):
    gm = F.outer(g, v) if n.need(0) else None
    gv = F.matmul(F.mT(m), g) if n.need(1) else None
    return (gm, gv)


def mv(input, vec, *, out=None):
    _tensor_arg(vec, "mv", 2, "vec")
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._data.ndim}, {vec._data.ndim}")
    _mv_checks((input._data.shape[0],), input, vec)
    _mv_dtype(vec, input, vec)
    _no_bool("addmv_impl_cpu", input)
    return _wrap(np.matmul(input._data, vec._data), "MvBackward0", (input, vec), _mv_bw)


def _dot_checks(a, b):
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_st(a)} and {_st(b)}")
    na, nb = a._data.shape[0], b._data.shape[0]
    if na != nb:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{na}] and src [{nb}] to have the same "
                           f"number of elements, but got {na} and {nb} elements respectively")


def _dot_bw(n, F, g, a, b):
    return (g * b if n.need(0) else None, g * a if n.need(1) else None)


def dot(input, tensor, *, out=None):
    _tensor_arg(tensor, "dot", 2, "tensor")
    _dot_checks(input, tensor)
    _no_bool("dot", input)
    y = np.asarray(np.dot(input._data, tensor._data), dtype=input._data.dtype)
    return _wrap(y, "DotBackward0", (input, tensor), _dot_bw)


def vdot(input, other, *, out=None):
    _tensor_arg(other, "vdot", 2, "other")
    _dot_checks(input, other)
    _no_bool("vdot", input)
    y = np.asarray(np.dot(input._data, other._data), dtype=input._data.dtype)
    return _wrap(y, "VdotBackward0", (input, other), _dot_bw)


# -- outer / ger / inner / kron -------------------------------------------------------------------
def outer(input, vec2):
    _tensor_arg(vec2, "outer", 2, "vec2")
    from .views import reshape
    from .arithmetic import mul
    if input._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input._data.ndim}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    return mul(reshape(input, (input._data.shape[0], 1)), vec2)


def ger(input, vec2):
    return outer(input, vec2)


def inner(input, other, *, out=None):
    _tensor_arg(other, "inner", 2, "other")
    if input._data.ndim == 0 or other._data.ndim == 0:
        from .arithmetic import mul
        return mul(input, other)
    sa, sb = input._data.shape, other._data.shape
    if sa[-1] != sb[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(sa)} and {list(sb)}")
    from .linalg import tensordot
    return tensordot(input, other, ([-1], [-1]))


def _kron_bw(n, F, g, a, b):
    sa, sb, ys, at, bt, dt, adt, bdt = n.info
    nd = len(sa)
    gi = F.reshape(g, tuple(x for pair in zip(sa, sb) for x in pair))
    ga = gb = None
    if n.need(0):
        b_e = F.cast(F.reshape(b, tuple(x for s in sb for x in (1, s))), dt)
        ga = F.cast(F.reshape(F.sum(gi * b_e, tuple(2 * i + 1 for i in range(nd)), True), at), adt)
    if n.need(1):
        a_e = F.cast(F.reshape(a, tuple(x for s in sa for x in (s, 1))), dt)
        gb = F.cast(F.reshape(F.sum(gi * a_e, tuple(2 * i for i in range(nd)), True), bt), bdt)
    return (ga, gb)


def kron(input, other, *, out=None):
    _tensor_arg(other, "kron", 2, "other")
    A, B = input._data, other._data
    rt = np.promote_types(A.dtype, B.dtype) if A.dtype != B.dtype else A.dtype
    if rt.kind == "f" and (A.dtype.kind != "f" or B.dtype.kind != "f"):
        rt = (A.dtype if A.dtype.kind == "f" else B.dtype)
    nd = max(A.ndim, B.ndim)
    sa = (1,) * (nd - A.ndim) + A.shape
    sb = (1,) * (nd - B.ndim) + B.shape
    ys = tuple(x * y for x, y in zip(sa, sb))
    y = np.kron(A.reshape(sa).astype(rt), B.reshape(sb).astype(rt)).reshape(ys) if nd else \
        (A.astype(rt) * B.astype(rt)).reshape(())
    return _wrap(y, "UnsafeViewBackward0", (input, other), _kron_bw,
                 (sa, sb, ys, A.shape, B.shape, rt, A.dtype, B.dtype))


# -- addmm / addmv / baddbmm / addbmm ---------------------------------------------------------------
def _scale(x, s):
    return x if s == 1 else x * s


def _mm_as(a, b, like, F):
    """a @ b laid out like `like`: when `like` is a transposed (column-major) matrix, such as the
    weight.t() of a Linear, compute (b.T @ a.T).T -- the same GEMM -- so that the gradient reaching the
    weight through TBackward0 is row-major and its AccumulateGrad can adopt it without a copy (ATen's
    mm backward follows the operand's strides the same way)."""
    flags = getattr(like, "flags", None)
    if flags is not None and flags.f_contiguous and not flags.c_contiguous:
        return F.mT(F.matmul(F.mT(b), F.mT(a)))
    return F.matmul(a, b)


def _addmm_bw(n, F, g, inp, m1, m2):
    beta, alpha, ishape = n.info
    gi = g1 = g2 = None
    if n.need(0):
        gi = F.sum_to(_scale(g, beta), ishape)
    if n.need(1):
        g1 = _scale(_mm_as(g, F.mT(m2), m1, F), alpha)
    if n.need(2):
        g2 = _scale(_mm_as(F.mT(m1), g, m2, F), alpha)
    return (gi, g1, g2)


def _combine(inp, prod, beta, alpha):
    y = _scale(prod, alpha)
    if beta != 0:
        b = _scale(inp._data, beta)
        if y.shape == np.broadcast_shapes(y.shape, b.shape) and y.dtype == np.result_type(y, b):
            y += b          # y is a fresh product: add the bias in place
        else:
            y = y + b
    return np.asarray(y, dtype=prod.dtype)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
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
    y = _combine(input, gemm(mat1._data, mat2._data), beta, alpha)
    y = np.broadcast_to(y, (s1[0], s2[1])).copy() if y.shape != (s1[0], s2[1]) else y
    return _wrap(y, "AddmmBackward0", (input, mat1, mat2), _addmm_bw, (beta, alpha, input._data.shape))


def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    from ._core import _inplace
    if mat1._data.ndim == 2 and mat2._data.ndim == 2:
        ts = (mat1._data.shape[0], mat2._data.shape[1])
        if self._data.shape != ts:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(self._data.shape)} and output tensor "
                               f"size {list(ts)} should match")
    return _inplace(lambda x, a, b: addmm(x, a, b, beta=beta, alpha=alpha), self, mat1, mat2)


def _addmv_bw(n, F, g, inp, m, v):
    beta, alpha, ishape = n.info
    gi = F.sum_to(_scale(g, beta), ishape) if n.need(0) else None
    gm = _scale(F.outer(g, v), alpha) if n.need(1) else None
    gv = _scale(F.matmul(F.mT(m), g), alpha) if n.need(2) else None
    return (gi, gm, gv)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    si = input._data.shape
    if mat._data.ndim != 2 or vec._data.ndim != 1 or len(si) > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {len(si)}, {mat._data.ndim}, {vec._data.ndim}")
    _mv_checks(si, mat, vec)
    _mv_dtype(input, mat, vec)
    _no_bool("addmv_impl_cpu", input)
    r = mat._data.shape[0]
    y = _combine(input, np.matmul(mat._data, vec._data), beta, alpha)
    y = np.broadcast_to(y, (r,)).copy() if y.shape != (r,) else y
    return _wrap(y, "AddmvBackward0", (input, mat, vec), _addmv_bw, (beta, alpha, si))


def _addbmm_bw(n, F, g, inp, b1, b2):
    beta, alpha, ishape, reduce = n.info
    gi = F.sum_to(_scale(g, beta), ishape) if n.need(0) else None
    gb = F.unsqueeze(g, 0) if reduce else g
    g1 = _scale(F.matmul(gb, F.mT(b2)), alpha) if n.need(1) else None
    g2 = _scale(F.matmul(F.mT(b1), gb), alpha) if n.need(2) else None
    return (gi, g1, g2)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
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
    y = _combine(input, np.matmul(batch1._data, batch2._data), beta, alpha)
    y = np.broadcast_to(y, ts).copy() if y.shape != ts else y
    return _wrap(y, "BaddbmmBackward0", (input, batch1, batch2), _addbmm_bw, (beta, alpha, input._data.shape, False))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
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
    prod = np.matmul(batch1._data, batch2._data).sum(axis=0).astype(batch1._data.dtype)
    y = _combine(input, prod, beta, alpha)
    y = np.broadcast_to(y, ts).copy() if y.shape != ts else y
    return _wrap(y, "AddbmmBackward0", (input, batch1, batch2), _addbmm_bw, (beta, alpha, input._data.shape, True))

