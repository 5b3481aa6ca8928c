"""torch.functional: the torch.* functions torch writes in Python (split, norm, einsum, meshgrid, ...), the same
objects as glassgrad's ``torch.split`` etc. (torch.fx prints them under this module's name)."""

import glassgrad as _glassgrad

__all__ = [n for n in ("atleast_1d", "atleast_2d", "atleast_3d", "align_tensors", "broadcast_shapes",
                       "broadcast_tensors", "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum",
                       "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank",
                       "tensordot", "unique", "unique_consecutive", "unravel_index")
           if hasattr(_glassgrad, n)]


def __getattr__(name):
    if name in __all__:
        return getattr(_glassgrad, name)
    raise AttributeError(f"module 'glassgrad.functional' has no attribute '{name}'")


def __dir__():
    return sorted(__all__)
