"""torch.sparse: the functions of sparse COO tensors under torch.sparse's names (ops/sparse*.py)."""
from .ops.sparse_ops import (sparse_mm as mm, sparse_addmm as addmm, sparse_sum as _sum, sparse_softmax as softmax,
                             sparse_log_softmax as log_softmax, check_sparse_tensor_invariants)

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "check_sparse_tensor_invariants"]


def sum(input, dim=None, dtype=None):
    """The sum of a sparse tensor's values: all (a dense 0-d tensor) or over `dim`."""
    return _sum(input, dim, dtype)
