"""Sparse COO products, reductions and masks, on ``ops/sparse.py``'s storage and node helpers.

torch.mm / matmul / @ / spmm / dsmm of sparse x dense and dense x sparse (``MmBackward0``), torch.sparse.mm /
torch.sparse.addmm (``SparseAddmmBackward0``: the gradient of the sparse operand is sparse, on its coalesced
pattern), hspmm / hsmm, smm / sspaddmm / saddmm (no derivative, as torch), torch.sparse.sum
(``SparseSumBackward0``; the full sum ``SumBackward0``), Tensor.sum of a sparse tensor, torch.sparse.softmax /
log_softmax (``SparseSoftmaxBackward0`` / ``SparseLogSoftmaxBackward0``: implicit zeros are left out),
Tensor.sparse_mask (``SparseMaskBackward0``), sparse_resize_ / sparse_resize_and_clear_ and
torch.sparse.check_sparse_tensor_invariants.
"""
import numpy as np

from .. import _dtype
from .._sparse_coo import COO, CSR, to_csr, coalesce as _coalesce, to_dense as _dense, gather, flat_index
from .._sparse_coo import empty as _empty_coo
from .._sparse_tensor import register, not_on_sparse, make_sparse, SparseCsrTensor
from ._core import Node, NotImplementedNode, Tensor, make, edge, NO_EDGE, save_in, grad, sum_to, as_array
from .addmm import addmm as _dense_addmm
from .linalg import mm as _dense_mm
from . import sparse_matmul as _spsp
from .sparse import grad_in, grads_out, saved, out, is_sparse, _INVARIANTS

__all__ = ["spmm", "smm", "hspmm", "sspaddmm", "saddmm", "dsmm", "hsmm"]


# -- products -----------------------------------------------------------------------------------------------
def _masked_product(c, a, b):
    """(a @ b) at the coalesced pattern of `c` (the gradient of a sparse operand)."""
    c = _coalesce(c)
    r, k = c.indices
    return COO(c.indices, np.einsum("ij,ij->i", a[r], b.T[k]).astype(c.values.dtype, copy=False), c.shape, True)


def _spmm(c, d):
    """COO (m, k) @ dense (k, n) -> dense (m, n)."""
    y = np.zeros((c.shape[0], d.shape[1]), dtype=np.result_type(c.values, d), like=d)
    r, k = c.indices
    np.add.at(y, r, c.values[:, None] * d[k])
    return y


def _spmm_t(c, g):
    """COO (m, k) transposed @ dense (m, n) -> dense (k, n)."""
    y = np.zeros((c.shape[1], g.shape[1]), dtype=g.dtype, like=g)
    r, k = c.indices
    np.add.at(y, k, c.values[:, None] * g[r])
    return y


class MmBackward0(Node):
    """sparse @ dense (`sparse_left`) or dense @ sparse; the sparse operand's gradient is sparse."""
    __slots__ = ("sparse_left", "alpha", "beta", "in_shape")

    def backward(self, ns, g):
        if ns.is_tensor_mode and g._rg:
            return self._graph(g)
        g = grad_in(ns, g)
        g = _dense(g) if g.__class__ is COO else g
        s, d = saved(self)
        nf = self.next_functions[-2:]
        gs = gd = None
        masked = self.__class__ is SparseAddmmBackward0    # torch.sparse.mm / addmm: a sparse gradient
        if self.sparse_left:
            if nf[0][0] is not None:
                gs = _masked_product(s, g, d.T) if masked else g @ d.T
            if nf[1][0] is not None:
                gd = _spmm_t(s, g)
        else:
            if nf[0][0] is not None:
                gd = _spmm(s, g.T).T        # g @ S^T
            if nf[1][0] is not None:
                gs = d.T @ g
        if self.alpha != 1:
            gs, gd = (None if gs is None else gs * self.alpha), (None if gd is None else gd * self.alpha)
        if gs is not None and gs.__class__ is COO and s.__class__ is CSR:
            gs = to_csr(gs)             # a CSR operand's sparse gradient is CSR
        res = (gs, gd) if self.sparse_left else (gd, gs)
        return grads_out(ns, *res)


    def _graph(self, g):
        """create_graph=True with a gradient that requires grad: the dense operand's gradient as a recorded
        sparse product (differentiable in g, as torch's); the sparse operand's is not supported."""
        s, _ = saved(self)
        if self.next_functions[-2 if self.sparse_left else -1][0] is not None:
            raise RuntimeError("glassgrad: double backward into a sparse operand is not supported")
        st = make_sparse(COO(s.indices[::-1].copy(), s.values, s.shape[::-1]))
        gd = mm(st, g) if self.sparse_left else dense_mm_sparse(g, st)
        gd = gd if self.alpha == 1 else gd * self.alpha
        return (None, gd) if self.sparse_left else (gd, None)


class SparseAddmmBackward0(MmBackward0):
    __slots__ = ()

    def backward(self, ns, g):
        gi = None
        if ns.is_tensor_mode and g._rg:
            if self.next_functions[0][0] is not None:
                gi = ns.sum_to(g if self.beta == 1 else g * self.beta, self.in_shape)
            return (gi,) + self._graph(g)
        if self.next_functions[0][0] is not None:
            gi = grad_in(ns, g)
            gi = sum_to(gi if self.beta == 1 else gi * self.beta, self.in_shape)
        return grads_out(ns, gi) + MmBackward0.backward(self, ns, g)


def _check_mm(s, d, name="addmm"):
    if not isinstance(d, Tensor):
        raise TypeError(f"mm(): argument 'mat2' (position 2) must be Tensor, not {type(d).__name__}")
    if is_sparse(d):
        raise RuntimeError("glassgrad: the product of two sparse tensors is not supported")
    c = s._data
    if c.ndim != 2 or c.dense_dim:
        raise RuntimeError(f"{name}: matrices expected, got {c.ndim}D tensor")
    a = d._data
    if a.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(a.ndim, 1)}, "
                         f"{max(a.ndim, 1) - 1}], but got 1)")
    if a.dtype != c.values.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.c_name(c.values.dtype)} but found "
                           f"{_dtype.c_name(a.dtype)}")
    if a.shape[0] != c.shape[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {c.shape[1]}, got {a.shape[0]}")


def _node(cls, inputs, s, d, sparse_left, alpha=1, beta=1, in_shape=None):
    n = cls(tuple(NO_EDGE if t is None or not t._rg else edge(t) for t in inputs))
    n._saved = (save_in(s), save_in(d))
    n.sparse_left, n.alpha, n.beta, n.in_shape = sparse_left, alpha, beta, in_shape
    return n


def mm(input, mat2):
    """sparse @ dense (torch.mm / matmul / @ / spmm / dsmm): dense, MmBackward0."""
    if not is_sparse(input):
        return dense_mm_sparse(input, mat2)
    if is_sparse(mat2):
        return _spsp.mm(input, mat2)
    _check_mm(input, mat2)
    y = _spmm(input._data, mat2._data)
    if grad.enabled and (input._rg or mat2._rg):
        return make(y, True, _node(MmBackward0, (input, mat2), input, mat2, True))
    return make(y)


def dense_mm_sparse(input, mat2):
    """dense @ sparse: dense, MmBackward0."""
    c = mat2._data
    a = input._data
    if a.ndim != 2 or c.ndim != 2:
        raise RuntimeError("self must be a matrix" if a.ndim != 2 else "mat2 must be a matrix")
    if a.shape[1] != c.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{c.shape[0]}x{c.shape[1]})")
    if a.dtype != c.values.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.c_name(a.dtype)} but found "
                           f"{_dtype.c_name(c.values.dtype)}")
    y = _spmm(COO(c.indices[::-1], c.values, c.shape[::-1]), a.T).T.copy()
    if grad.enabled and (input._rg or mat2._rg):
        return make(y, True, _node(MmBackward0, (input, mat2), mat2, input, False))
    return make(y)


def sparse_mm(sparse, dense, reduce="sum"):
    """torch.sparse.mm: SparseAddmmBackward0 (of two sparse matrices: SparseSparseMatmulBackward0)."""
    if is_sparse(sparse) and is_sparse(dense):
        return _spsp.sparse_sparse_mm(sparse, dense)
    return sparse_addmm(None, sparse, dense)


def sparse_addmm(mat, mat1, mat2, *, beta=1, alpha=1):
    """torch.sparse.addmm: beta * mat + alpha * (mat1 @ mat2), dense; SparseAddmmBackward0."""
    if not is_sparse(mat1) and mat1.__class__ is not SparseCsrTensor:
        return _dense_mm(mat1, mat2) if mat is None else _dense_addmm(mat, mat1, mat2, beta=beta, alpha=alpha)
    _check_mm(mat1, mat2)
    y = _spmm(mat1._data, mat2._data)
    y = y * alpha if alpha != 1 else y
    if mat is not None:
        m = mat._data
        try:
            np.broadcast_to(m, y.shape)
        except ValueError:
            raise RuntimeError(f"The expanded size of the tensor ({y.shape[1]}) must match the existing size "
                               f"({m.shape[-1]}) at non-singleton dimension {m.ndim - 1}.  Target sizes: "
                               f"{list(y.shape)}.  Tensor sizes: {list(m.shape)}") from None
        y = y + (m if beta == 1 else beta * m)
    y = y.astype(mat2._data.dtype, copy=False)       # bfloat16: accumulated in float32, rounded once
    if grad.enabled and (mat1._rg or mat2._rg or (mat is not None and mat._rg)):
        n = _node(SparseAddmmBackward0, (mat, mat1, mat2), mat1, mat2, True, alpha, beta,
                  None if mat is None else mat._data.shape)
        return make(y, True, n)
    return make(y)


def spmm(input, mat2):
    return mm(input, mat2) if is_sparse(input) else _dense_mm(input, mat2)


def dsmm(input, mat2):
    return spmm(input, mat2)


def _on_cpu(name):
    """torch's error for a sparse-only kernel given a dense tensor."""
    return NotImplementedError(not_on_sparse(name).args[0].replace("'SparseCPU'", "'CPU'"))


def _no_derivative(res, what, inputs):
    if grad.enabled and any(t._rg for t in inputs):
        n = NotImplementedNode(tuple(edge(t) if t._rg else NO_EDGE for t in inputs))
        n.what = what
        res._rg, res._grad_fn = True, n
    return res


def hspmm(mat1, mat2):
    """sparse @ dense as a hybrid sparse tensor (sparse rows, dense columns); no derivative."""
    if not is_sparse(mat1):
        raise _on_cpu("hspmm")
    _check_mm(mat1, mat2)
    c = _coalesce(mat1._data)
    rows = np.unique(c.indices[0])
    y = _spmm(c, mat2._data)[rows]
    res = make_sparse(COO(rows.reshape(1, -1).astype(np.int64), y, (c.shape[0], mat2._data.shape[1]), False))
    return _no_derivative(res, "aten::hspmm", (mat1, mat2))


hsmm = hspmm


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), all sparse (the product on every column of mat1's rows)."""
    if not is_sparse(input):        # (torch dispatches on the sparse operands: mat1 dense too, the dense kernel)
        raise RuntimeError("self.is_sparse() INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/aten/src/ATen/native/"
                           "SparseTensorUtils.h\":28, please report a bug to PyTorch. _internal_get_SparseTensorImpl: "
                           "not a sparse tensor" if is_sparse(mat1) else "tensor.sspaddmm(...) can only be called on "
                           "sparse tensors")
    if not is_sparse(mat1):
        raise RuntimeError("sspaddmm: expected 'mat1' to have sparse layout, got 'mat1' with layout Strided")
    _check_mm(mat1, mat2)
    c, a = _coalesce(mat1._data), input._data
    rows = np.unique(c.indices[0])
    n = mat2._data.shape[1]
    y = (_spmm(c, mat2._data)[rows] * alpha).reshape(-1)
    idx = np.stack([np.repeat(rows, n), np.tile(np.arange(n, like=rows), len(rows))]).astype(np.int64)
    vals = np.concatenate([a.values * beta, y]).astype(c.values.dtype, copy=False)
    res = make_sparse(COO(np.concatenate([a.indices, idx], axis=1), vals, a.shape, False))
    return _no_derivative(res, "aten::sspaddmm", (input, mat1, mat2))


def saddmm(input, mat1, mat2, *, beta=1, alpha=1):
    return sspaddmm(input, mat1, mat2, beta=beta, alpha=alpha)


def smm(input, mat2):
    """sparse @ dense as a sparse tensor (sspaddmm of an empty sparse tensor)."""
    if not is_sparse(input):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    c = input._data
    zero = make_sparse(COO(np.zeros((2, 0), np.int64, like=c.indices), np.zeros((0,), c.values.dtype, like=c.values),
                           (c.shape[0], mat2._data.shape[1] if mat2._data.ndim == 2 else 0), True))
    return sspaddmm(zero, input, mat2)


# -- sums --------------------------------------------------------------------------------------------------
class SparseSumBackward0(Node):
    """The gradient on the input's coalesced pattern: the result's gradient gathered at the kept sparse
    indices, broadcast over the summed dense dims."""
    __slots__ = ("coo", "keep", "dense_summed", "keepdim")

    def backward(self, ns, g):
        g = grad_in(ns, g)
        c = _coalesce(self.coo)
        sd = c.sparse_dim
        kept = [d for d in range(sd) if d in self.keep]
        if self.keepdim:
            g = _squeeze(g, [d for d in range(sd) if d not in kept] + self.dense_summed)
        if kept:
            gv = gather(g, c.indices[kept], tuple(c.shape[d] for d in kept))
        else:
            gv = np.broadcast_to(_dense(g) if g.__class__ is COO else g, (c.nnz,) + g.shape)
        for d in self.dense_summed:
            gv = np.expand_dims(gv, d - sd + 1)
        gv = np.broadcast_to(gv.astype(c.values.dtype, copy=False), c.values.shape)   # torch's expand: a view
        if self.__class__ is not SumBackward0:
            gv = np.ascontiguousarray(gv, like=gv)     # torch materialises this one (its leaf may take it over)
        return grads_out(ns, COO(c.indices, gv, c.shape, True))


def _squeeze(g, dims):
    shape = tuple(s for d, s in enumerate(g.shape) if d not in dims)
    if g.__class__ is not COO:
        return g.reshape(shape)
    sd = g.sparse_dim
    vals = g.values.reshape((g.nnz,) + shape[sd - len([d for d in dims if d < sd]):])
    return COO(g.indices[[d for d in range(sd) if d not in dims]], vals, shape, g.coalesced)


class SumBackward0(SparseSumBackward0):
    """The full sum: Tensor.sum() gives a dense gradient (torch expands it), torch.sparse.sum() a sparse one
    on the coalesced pattern."""
    __slots__ = ("dense_grad",)

    def backward(self, ns, g):
        if not self.dense_grad:
            return SparseSumBackward0.backward(self, ns, g)
        g = grad_in(ns, g)
        return grads_out(ns, np.broadcast_to(g, self.coo.shape).astype(self.coo.dtype))


class SumBackward1(SparseSumBackward0):
    """Tensor.sum(dim) of a sparse tensor: torch cannot expand a sparse gradient."""
    __slots__ = ()

    def backward(self, ns, g):
        if grad_in(ns, g).__class__ is COO:
            raise RuntimeError("expand is unsupported for Sparse tensors")
        return SparseSumBackward0.backward(self, ns, g)


def _dims(dim, ndim):
    dims = [dim] if isinstance(dim, int) else list(dim)
    res = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        d = d + ndim if d < 0 else d
        if d in res:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        res.append(d)
    return res


def sparse_sum(input, dim=None, dtype=None, *, _cls=SparseSumBackward0, keepdim=False):
    """torch.sparse.sum: the full sum (a 0-d dense tensor), or over `dim` (sparse unless every sparse dim is
    summed)."""
    if not is_sparse(input):
        if dim is None:
            raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")
        raise _on_cpu("_indices")
    c = input._data
    vals = c.values if dtype is None else c.values.astype(_dtype.to_dtype(dtype).np)
    if dim is None:
        y = as_array(vals.sum(dtype=vals.dtype if vals.dtype.kind in "fcV" else np.int64))
        res = make(y)
        dims, cls = list(range(c.ndim)), SumBackward0
    else:
        dims, cls = _dims(dim, c.ndim), _cls
        sd = c.sparse_dim
        keep = [d for d in range(sd) if d not in dims]
        dense_summed = [d for d in dims if d >= sd]
        if dense_summed:
            vals = vals.sum(axis=tuple(d - sd + 1 for d in dense_summed))
        if not keepdim:
            shape = tuple(s for d, s in enumerate(c.shape) if d not in dims)
        else:
            shape = tuple(1 if d in dims else s for d, s in enumerate(c.shape))
        if not keep:
            y = vals.sum(axis=0)
            res = make(y.reshape(shape) if keepdim else y)
        else:
            idx = c.indices[keep]
            if keepdim:
                idx = np.zeros((sd, c.nnz), np.int64, like=c.indices)
                idx[keep] = c.indices[keep]
                if dense_summed:
                    vals = np.expand_dims(vals, tuple(d - sd + 1 for d in dense_summed))
            res = _coalesce(COO(idx, vals, shape, False))
            res = make_sparse(COO(res.indices, res.values, shape, False) if keepdim else res)
    if grad.enabled and input._rg:
        n = cls((edge(input),))
        if cls is SumBackward0:
            n.dense_grad = _cls is SumBackward0
        n.coo, n.keep = c, [d for d in range(c.sparse_dim) if d not in dims]
        n.dense_summed, n.keepdim = [d for d in dims if d >= c.sparse_dim], keepdim and dim is not None
        res._rg, res._grad_fn = True, n
    return res


def tensor_sum(input, dim=None, keepdim=False, *, dtype=None):
    """Tensor.sum / torch.sum of a sparse tensor (SumBackward0 / SumBackward1)."""
    if dim is None:
        return sparse_sum(input, None, dtype, _cls=SumBackward0)
    return sparse_sum(input, dim, dtype, _cls=SumBackward1, keepdim=keepdim)


# -- softmax ---------------------------------------------------------------------------------------------------
def _groups(c, d):
    """For softmax over sparse dim `d`: the group of each nnz (its indices without dim d) and the count."""
    other = [k for k in range(c.sparse_dim) if k != d]
    lin = flat_index(c.indices[other], tuple(c.shape[k] for k in other))
    _, inv = np.unique(lin, return_inverse=True)
    return inv.reshape(-1), int(inv.max()) + 1 if len(inv) else 0


def _group_softmax(v, inv, ng, log):
    m = np.full((ng,) + v.shape[1:], -np.inf, dtype=v.dtype, like=v)
    np.maximum.at(m, inv, v)
    z = v - m[inv]
    e = np.exp(z)
    s = np.zeros((ng,) + v.shape[1:], dtype=v.dtype, like=v)
    np.add.at(s, inv, e)
    return z - np.log(s)[inv] if log else e / s[inv]


def _dense_softmax(v, axis, log):
    z = v - v.max(axis=axis, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=axis, keepdims=True)
    return z - np.log(s) if log else e / s


class SparseSoftmaxBackward0(Node):
    __slots__ = ("coo", "dim", "log")

    def backward(self, ns, g):
        y = self.coo
        gv = gather(grad_in(ns, g), y.indices, y.shape[:y.sparse_dim])
        yv = y.values
        w = np.exp(yv) if self.log else yv
        base = gv if self.log else gv * yv
        if self.dim < y.sparse_dim:
            inv, ng = _groups(y, self.dim)
            s = np.zeros((ng,) + yv.shape[1:], dtype=yv.dtype, like=yv)
            np.add.at(s, inv, base)
            s = s[inv]
        else:
            s = base.sum(axis=self.dim - y.sparse_dim + 1, keepdims=True)
        gx = gv - w * s if self.log else yv * (gv - s)
        return grads_out(ns, COO(y.indices, gx.astype(yv.dtype, copy=False), y.shape, True))


class SparseLogSoftmaxBackward0(SparseSoftmaxBackward0):
    __slots__ = ()


def _softmax(input, dim, dtype, log):
    if not is_sparse(input):
        raise _on_cpu("_sparse_log_softmax" if log else "_sparse_softmax")
    c = _coalesce(input._data)
    d = _dims(dim, c.ndim)[0]
    v = c.values
    if dtype is not None:
        v = v.astype(_dtype.to_dtype(dtype).np)
    if v.dtype not in (np.float32, np.float64):        # (torch's sparse kernels have no float16 / bfloat16)
        raise NotImplementedError(f"\"{'log_softmax' if log else 'softmax'}\" not implemented for "
                           f"'{_dtype.c_name(v.dtype)}'")
    if d < c.sparse_dim:
        inv, ng = _groups(c, d)
        y = _group_softmax(v, inv, ng, log)
    else:
        y = _dense_softmax(v, d - c.sparse_dim + 1, log)
    res = COO(c.indices, y, c.shape, True)
    if grad.enabled and input._rg:
        n = (SparseLogSoftmaxBackward0 if log else SparseSoftmaxBackward0)((edge(input),))
        n.coo, n.dim, n.log = res, d, log
        return make_sparse(res, True, n)
    return make_sparse(res)


def sparse_softmax(input, dim, dtype=None):
    return _softmax(input, dim, dtype, False)


def sparse_log_softmax(input, dim, dtype=None):
    return _softmax(input, dim, dtype, True)


# -- sparse_mask ---------------------------------------------------------------------------------------------
def _sparse_mask_sparse(input, mask):
    a, c = input._data, mask._data
    if a.shape != c.shape:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(a.shape)} but mask "
                           f"has size {list(c.shape)}")
    vals = gather(_coalesce(a), c.indices, c.shape[:c.sparse_dim])
    res, n = out(COO(c.indices, vals, c.shape, c.coalesced), SparseMaskBackward0, (input,))
    if n is not None:
        n.coo, n.in_shape = c, None
    return res

class SparseMaskBackward0(Node):
    __slots__ = ("coo", "in_shape")

    def backward(self, ns, g):
        c = self.coo        # torch scatters onto the mask's own pattern: duplicates count twice
        gv = gather(grad_in(ns, g), c.indices, c.shape[:c.sparse_dim])
        if self.in_shape is None:       # a sparse input: a sparse gradient on the mask's pattern
            return grads_out(ns, COO(c.indices, gv, c.shape, c.coalesced))
        return grads_out(ns, _dense(COO(c.indices, gv, self.in_shape, c.coalesced)))


def sparse_mask(input, mask):
    """dense.sparse_mask(sparse): the dense values at the mask's indices, on the mask's pattern."""
    if not is_sparse(mask):
        raise NotImplementedError(not_on_sparse("sparse_mask").args[0].replace("'SparseCPU'", "'CPU'"))
    if is_sparse(input):
        return _sparse_mask_sparse(input, mask)
    c, a = mask._data, input._data
    if a.shape != c.shape:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(a.shape)} but mask "
                           f"has size {list(c.shape)}")
    res, n = out(COO(c.indices, a[tuple(c.indices)].copy(), c.shape, c.coalesced), SparseMaskBackward0, (input,))
    if n is not None:
        n.coo, n.in_shape = c, a.shape
    return res
# -- resizing ------------------------------------------------------------------------------------------------
def sparse_resize_(input, size, sparse_dim, dense_dim):
    if not is_sparse(input):
        raise NotImplementedError(not_on_sparse("sparse_resize_").args[0].replace("'SparseCPU'", "'CPU'"))
    c = input._data
    size = tuple(int(s) for s in size)
    if sparse_dim + dense_dim != len(size):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
    if c.nnz:
        if sparse_dim != c.sparse_dim:
            raise RuntimeError(_resize_msg("changing the number of sparse dimensions", c.sparse_dim, sparse_dim))
        if dense_dim != c.dense_dim:
            raise RuntimeError(_resize_msg("changing the number of dense dimensions", c.dense_dim, dense_dim))
        if any(n < o for n, o in zip(size[:sparse_dim], c.shape[:sparse_dim])):
            raise RuntimeError(_resize_msg("shrinking the size of sparse dimensions", list(c.shape[:sparse_dim]),
                                           list(size[:sparse_dim])))
        if any(n < o for n, o in zip(size[sparse_dim:], c.shape[sparse_dim:])):
            raise RuntimeError(_resize_msg("shrinking the size of dense dimensions", list(c.shape[sparse_dim:]),
                                           list(size[sparse_dim:])))
        vals = c.values
        if size[sparse_dim:] != c.shape[sparse_dim:]:      # torch leaves the new part uninitialised
            vals = np.zeros((c.nnz,) + size[sparse_dim:], vals.dtype, like=vals)
            vals[(slice(None),) + tuple(slice(0, s) for s in c.shape[sparse_dim:])] = c.values
        input._data = COO(c.indices, vals, size, c.coalesced)
    else:
        input._data = _empty_coo(sparse_dim, size, c.values.dtype, c.values)
    return input


def sparse_resize_and_clear_(input, size, sparse_dim, dense_dim):
    if not is_sparse(input):
        raise NotImplementedError(not_on_sparse("sparse_resize_and_clear_").args[0].replace("'SparseCPU'", "'CPU'"))
    size = tuple(int(s) for s in size)
    if sparse_dim + dense_dim != len(size):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
    input._data = _empty_coo(sparse_dim, size, input._data.values.dtype, input._data.values)
    return input


def _resize_msg(what, old, new):
    return (f"{what} (from {old} to {new}) on a non-empty sparse tensor is not supported.\n"
            "You could try the following options:\n"
            "1. If you need an empty sparse tensor of this size, call `x = torch.sparse_coo_tensor(size)`.\n"
            "2. If you need to resize this tensor, you have the following options:\n"
            "    1. For both sparse and dense dimensions, keep the number of them constant and the size of them "
            "non-shrinking, and then try the same call again.\n"
            "    2. Or, create a new sparse tensor with the correct indices and values from this sparse tensor.")


# -- torch.sparse.check_sparse_tensor_invariants --------------------------------------------------------------
class check_sparse_tensor_invariants:
    """A context manager (and decorator) that turns the invariant checks of sparse_coo_tensor on or off."""

    @staticmethod
    def is_enabled():
        return _INVARIANTS["enabled"]

    @staticmethod
    def enable():
        _INVARIANTS["enabled"] = _INVARIANTS["explicit"] = True

    @staticmethod
    def disable():
        _INVARIANTS["enabled"] = False
        _INVARIANTS["explicit"] = True

    def __init__(self, enable=True):
        self.state = enable
        self.saved_state = None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a different context "
                               "manager instance for context nesting.")
        self.saved_state = (_INVARIANTS["enabled"], _INVARIANTS["explicit"])
        _INVARIANTS["enabled"] = self.state
        _INVARIANTS["explicit"] = True

    def __exit__(self, type, value, traceback):
        _INVARIANTS["enabled"], _INVARIANTS["explicit"] = self.saved_state
        self.saved_state = None

    def __call__(self, mth):
        def test_mth(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return mth(*args, **kwargs)
        return test_mth


register(mm=mm, matmul=mm, spmm=spmm, dsmm=dsmm, smm=smm, hspmm=hspmm, hsmm=hsmm, sum=tensor_sum, sspaddmm=sspaddmm,
         saddmm=saddmm)
check_sparse_tensor_invariants.__module__ = "torch.sparse"
