"""torch.functional: the torch.* functions torch writes in Python (einsum, split, stft, norm, unique, ...), here the
same objects as glassgrad's torch.* names. glassgrad has no pca_lowrank / svd_lowrank (randomized low-rank
decompositions), so those two are absent."""
from . import (atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes, broadcast_tensors,  # noqa: F401
               cartesian_prod, cdist, chain_matmul, einsum, istft, lu, meshgrid, norm, split, stft, tensordot,
               unique, unique_consecutive, unravel_index)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
           "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "split", "stft",
           "tensordot", "unique", "unique_consecutive", "unravel_index"]
