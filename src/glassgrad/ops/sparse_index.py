"""index_select of a sparse COO tensor (torch.index_select / Tensor.index_select): for each position of
`index`, in order, the entries whose index along `dim` matches, in their own order (a dense dim: the values'
index_select).  ``IndexSelectBackward0`` raises torch's error (no sparse index_add_)."""
import numpy as np

from .._sparse_coo import COO
from .._sparse_tensor import register, not_on_sparse
from ._core import Node, Tensor
from .sparse import out

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
        take = np.concatenate(hits).astype(np.int64) if hits else np.zeros(0, np.int64)
        pos = np.repeat(np.arange(len(idx)), [len(h) for h in hits]) if hits else np.zeros(0, np.int64)
        new = c.indices[:, take].copy()
        new[d] = pos
        res = COO(new, c.values[take], shape, len(take) < 2)
    return out(res, IndexSelectBackward0, (input,))[0]


register(index_select=index_select)
