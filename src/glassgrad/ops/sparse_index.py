"""transpose / swapaxes / swapdims of sparse dims, unsqueeze, and index_select of a sparse COO tensor (torch.index_select / Tensor.index_select): for each position of
`index`, in order, the entries whose index along `dim` matches, in their own order (a dense dim: the values'
index_select).  ``IndexSelectBackward0`` raises torch's error (no sparse index_add_)."""
import numpy as np

from .._sparse_coo import COO
from .._sparse_tensor import register, not_on_sparse
from ._core import Node, Tensor
from .sparse import out, grad_in, grads_out

__all__ = []

_INDEX_ERROR = "index_select() argument index must be 1-D strided (non-sparse) long-tensor."


class IndexSelectBackward0(Node):
    __slots__ = ()

    def backward(self, ns, g):
        raise not_on_sparse("index_add_")


def index_select(input, dim, index):
    if not isinstance(index, Tensor) or index.is_sparse or index._data.ndim > 1 or index._data.dtype.kind not in "iu":
        raise IndexError(_INDEX_ERROR)
    c = input._data
    n = c.ndim
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    d = dim % n
    idx = index._data.reshape(-1).astype(np.int64)
    size = c.shape[d]
    bad = idx[(idx < 0) | (idx >= size)]
    if len(bad):
        raise IndexError(f"index_select(): index contains {int(bad[0])} that is out of range for tensor of size "
                         f"{list(c.shape)} at dimension {d}")
    shape = c.shape[:d] + (len(idx),) + c.shape[d + 1:]
    if d >= c.sparse_dim:
        res = COO(c.indices, np.take(c.values, idx, axis=d - c.sparse_dim + 1), shape, c.coalesced)
    else:
        hits = [np.nonzero(c.indices[d] == v)[0] for v in idx]
        take = np.concatenate(hits).astype(np.int64) if hits else np.zeros(0, np.int64, like=idx)
        pos = np.repeat(np.arange(len(idx), like=idx), [len(h) for h in hits]) if hits else np.zeros(0, np.int64, like=idx)
        new = c.indices[:, take].copy()
        new[d] = pos
        res = COO(new, c.values[take], shape, len(take) < 2)
    return out(res, IndexSelectBackward0, (input,))[0]


class TransposeBackward0(Node):
    __slots__ = ("dims",)

    def backward(self, ns, g):
        g = grad_in(ns, g)
        d0, d1 = self.dims
        if g.__class__ is not COO:
            return grads_out(ns, np.swapaxes(g, d0, d1))
        idx = g.indices.copy()
        idx[[d0, d1]] = idx[[d1, d0]]
        shape = list(g.shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        return grads_out(ns, COO(idx, g.values, shape, False))


def transpose(input, dim0, dim1):
    c = input._data
    n = c.ndim
    for d in (dim0, dim1):
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    d0, d1 = dim0 % n, dim1 % n
    if d0 >= c.sparse_dim or d1 >= c.sparse_dim:
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: {c.sparse_dim}, "
                           f"d0: {d0}, d1: {d1}")
    idx = c.indices.copy()
    idx[[d0, d1]] = idx[[d1, d0]]
    shape = list(c.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    res, node = out(COO(idx, c.values, shape, c.coalesced and d0 == d1), TransposeBackward0, (input,))
    if node is not None:
        node.dims = (d0, d1)
    return res


class UnsqueezeBackward0(Node):
    """torch squeezes a sparse gradient through as_strided, which sparse tensors lack: backward raises."""
    __slots__ = ()

    def backward(self, ns, g):
        raise not_on_sparse("as_strided")


def unsqueeze(input, dim):
    c = input._data
    n = c.ndim + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    d = dim % n
    shape = c.shape[:d] + (1,) + c.shape[d:]
    if d <= c.sparse_dim:
        res = COO(np.insert(c.indices, d, 0, axis=0), c.values, shape, c.coalesced)
    else:
        res = COO(c.indices, np.expand_dims(c.values, d - c.sparse_dim + 1), shape, c.coalesced)
    return out(res, UnsqueezeBackward0, (input,))[0]


register(unsqueeze=unsqueeze, index_select=index_select, transpose=transpose, swapaxes=transpose, swapdims=transpose)
