"""The dense Tensor's methods of the sparse family (ops/sparse.py): conversions to a sparse layout, and the
sparse accessors, which on a dense tensor raise torch's errors (``SparseTensor`` overrides them)."""
from . import ops as _ops


class TensorSparseMethods:
    __slots__ = ()

    def to_sparse(self, *args, layout=None, **kwargs):
        if layout is not None and repr(layout) == "torch.sparse_csr":
            return _ops.sparse_csr.to_sparse_csr(self)
        return _ops.sparse.to_sparse(self, *args, layout=layout, **kwargs)
    def to_sparse_csr(self, dense_dim=None):
        return _ops.sparse_csr.to_sparse_csr(self, dense_dim)
    def crow_indices(self):
        raise RuntimeError("crow_indices expected sparse row compressed tensor layout but got Strided")
    def col_indices(self):
        raise RuntimeError("col_indices expected sparse row compressed tensor layout but got Strided")
    def to_sparse_coo(self):
        return _ops.sparse.to_sparse(self)
    def to_dense(self, dtype=None, *, masked_grad=None):
        return _ops.sparse.to_dense(self, dtype)
    def sparse_mask(self, mask):
        return _ops.sparse_ops.sparse_mask(self, mask)
    def is_coalesced(self):
        return _ops.sparse.dense_is_coalesced(self)
    def coalesce(self):
        return _ops.sparse.coalesce(self)
    def indices(self):
        return _ops.sparse.indices(self)
    def values(self):
        return _ops.sparse.values(self)
    def _indices(self):
        return _ops.sparse._indices(self)
    def _values(self):
        return _ops.sparse._values(self)
    def _nnz(self):
        return _ops.sparse._nnz(self)
    def sparse_dim(self):
        return 0
    def dense_dim(self):
        return self._data.ndim
    def sparse_resize_(self, size, sparse_dim, dense_dim):
        return _ops.sparse_ops.sparse_resize_(self, size, sparse_dim, dense_dim)
    def sparse_resize_and_clear_(self, size, sparse_dim, dense_dim):
        return _ops.sparse_ops.sparse_resize_and_clear_(self, size, sparse_dim, dense_dim)
