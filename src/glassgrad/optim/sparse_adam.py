"""torch.optim.SparseAdam.

glassgrad has no sparse tensors, so every gradient is dense and step() raises PyTorch's dense-gradient error;
construction validates its arguments exactly as PyTorch does.
"""
from ._common import check_args, not_positive
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        check_args(lr, eps=eps, betas=betas, bad=not_positive)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and not p.grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        return loss
