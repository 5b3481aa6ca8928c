"""sparse @ sparse and sparse * sparse (COO).  sparse @ sparse: torch.sparse.mm (``SparseSparseMatmulBackward0``) and torch.mm / matmul / @
(``MmBackward0``) of two sparse matrices; a coalesced sparse result, whose pattern is every (i, j) some k
joins (sums that cancel stay as explicit zeros, as torch's).  The gradients are sparse products too:
g @ B^T for A, A^T @ g for B (torch.sparse.mm's zeroed outside the operand's pattern).
sparse * sparse (``MulBackward0``): of two coalesced operands, their intersection (torch's); torch's rule for
uncoalesced operands (the pattern of one, chosen by their flags and sizes) is not reproduced: they raise.
"""
import numpy as np

from .. import _dtype
from .._sparse_coo import COO, coalesce as _coalesce, to_dense as _dense, flat_index, gather
from ._core import Node, full_precision
from . import sparse as _sparse
from .sparse import grad_in, grads_out, saved, out

__all__ = []


def spsp(a, b):
    """COO (m, k) @ COO (k, n) -> coalesced COO (m, n)."""
    a, b = _coalesce(a), _coalesce(b)
    br, bc = b.indices
    rows = np.arange(b.shape[0], like=br)
    start = np.searchsorted(br, rows, "left")
    stop = np.searchsorted(br, rows, "right")
    ar, ak = a.indices
    counts = (stop - start)[ak]
    rep = np.repeat(np.arange(a.nnz, like=ak), counts)
    first = np.repeat(start[ak], counts)
    within = np.arange(int(counts.sum()), like=ak) - np.repeat(np.cumsum(counts) - counts, counts)
    bi = first + within
    vals = a.values[rep] * b.values[bi]
    idx = np.stack([ar[rep], bc[bi]]).astype(np.int64).reshape(2, -1)
    return _coalesce(COO(idx, vals.astype(np.result_type(a.values, b.values), copy=False), (a.shape[0], b.shape[1])))


def _masked(r, like):
    """torch's sparse_mask_like_grad(like, r) for a coalesced product `r`: on the pattern of a coalesced `like`
    with fewer entries than `r` (r.sparse_mask(like)), else on r's pattern with zeros outside like's."""
    if like.coalesced and like.nnz < r.nnz:
        return COO(like.indices, gather(r, like.indices, like.shape), like.shape, True)
    keep = np.isin(flat_index(r.indices, r.shape), flat_index(like.indices, like.shape))
    vals = r.values * keep.astype(r.values.dtype)
    return COO(r.indices, vals, r.shape, r.coalesced)


def _t(c):
    return COO(c.indices[::-1].copy(), c.values, c.shape[::-1])


class SparseSparseMatmulBackward0(Node):
    __slots__ = ()

    def backward(self, ns, g):
        g = grad_in(ns, g)
        a, b = saved(self)
        ga = gb = None
        if isinstance(g, COO):
            mask = _masked if self.__class__ is SparseSparseMatmulBackward0 else (lambda r, like: r)
            if self.next_functions[0][0] is not None:
                ga = mask(spsp(g, _t(b)), a)
            if self.next_functions[1][0] is not None:
                gb = mask(spsp(_t(a), g), b)
        else:
            if self.next_functions[0][0] is not None:
                ga = g @ _dense(b).T
            if self.next_functions[1][0] is not None:
                gb = _dense(a).T @ g
        return grads_out(ns, ga, gb)


class MmBackward0(SparseSparseMatmulBackward0):
    __slots__ = ()


def sparse_sparse_mm(a, b, node_cls=SparseSparseMatmulBackward0):
    ca, cb = a._data, b._data
    if ca.ndim != 2 or cb.ndim != 2 or ca.dense_dim or cb.dense_dim:
        raise RuntimeError("glassgrad: sparse @ sparse needs two 2-D sparse matrices without dense dims")
    if ca.shape[1] != cb.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({ca.shape[0]}x{ca.shape[1]} and "
                           f"{cb.shape[0]}x{cb.shape[1]})")
    if ca.dtype != cb.dtype:
        raise RuntimeError(f"mat1 dtype {_dtype.c_name(ca.dtype)} does not match mat2 dtype {_dtype.c_name(cb.dtype)}")
    full_precision("sparse_matmul", ca.dtype)
    return out(spsp(ca, cb), node_cls, (a, b), saves=(a, b))[0]


def mm(a, b):
    return sparse_sparse_mm(a, b, MmBackward0)


def intersect(a, b):
    """The entries of coalesced `a` and `b` at the indices both hold: the product of their values."""
    la, lb = flat_index(a.indices, a.shape[:a.sparse_dim]), flat_index(b.indices, b.shape[:b.sparse_dim])
    _, ia, ib = np.intersect1d(la, lb, assume_unique=True, return_indices=True)
    vals = a.values[ia] * b.values[ib]
    return COO(a.indices[:, ia], vals, a.shape, True)


class MulBackward0(Node):
    """sparse * sparse: g * other for each (the intersection again)."""
    __slots__ = ()

    def backward(self, ns, g):
        g = grad_in(ns, g)
        a, b = saved(self)
        g = _coalesce(g) if isinstance(g, COO) else COO(np.array(np.nonzero(np.ones(g.shape, bool, like=g)), np.int64, like=g)
                                                         .reshape(len(g.shape), -1), g.reshape(-1), g.shape, True)
        ga = intersect(g, b) if self.next_functions[0][0] is not None else None
        gb = intersect(g, a) if self.next_functions[1][0] is not None else None
        return grads_out(ns, ga, gb)


def sparse_mul(a, b):
    ca, cb = a._data, b._data
    if ca.shape != cb.shape or ca.sparse_dim != cb.sparse_dim:
        raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with equal dimensionality, "
                           "number of sparse dimensions, and shape of sparse dimensions")
    if not (ca.coalesced and cb.coalesced):
        raise RuntimeError("glassgrad: sparse * sparse is supported for coalesced operands only (call .coalesce() "
                           "on both: torch's rule for uncoalesced operands is not reproduced)")
    dt = _dtype.promote_types(a.dtype, b.dtype).np
    res = intersect(ca.astype(dt, copy=False), cb.astype(dt, copy=False))
    return out(res, MulBackward0, (a, b), saves=(a, b))[0]


_sparse.SPARSE_MUL[0] = sparse_mul
