"""torch.masked: reductions and normalisations that ignore the elements a boolean mask leaves out
(torch.masked.sum(x, 1, mask=m), ...); see _ops.py. MaskedTensor is not built (see docs/architecture.md)."""
from ._ops import (amax, amin, argmax, argmin, cumprod, cumsum, log_softmax, logaddexp, logsumexp, mean,  # noqa: F401
                   median, norm, normalize, prod, softmax, softmin, std, sum, var)

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp", "mean",
           "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]
