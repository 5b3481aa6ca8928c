"""torch.optim.Adamax (single-tensor update rule, CPU rounding)."""
import numpy as np

from ._common import check_args, count_step, new_state, weight_decay
from .optimizer import Optimizer, _to_scalar, addcdiv, lerp, setv
from ._functional import adamax  # noqa: F401  (torch.optim.adamax.adamax)

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    _setstate_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_args(lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @staticmethod
    def _init_state(st, p, group):
        new_state(st, p, "exp_avg", "exp_inf")

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for p, g, st, group in self._with_grads(self._init_state):
            beta1, beta2 = group["betas"]
            x = p._data
            dt = x.dtype.type
            step = count_step(st)
            g = weight_decay(p, g, group["weight_decay"])
            m, u = st["exp_avg"], st["exp_inf"]
            setv(m, lerp(m._data, g, 1 - beta1))  # m = beta1 * m + (1 - beta1) * g
            setv(u, np.maximum(u._data * dt(beta2), np.abs(g) + dt(group["eps"])), 2)  # u = max(beta2 * u, |g| + eps)
            # p -= lr / (1 - beta1^t) * m / u
            setv(p, addcdiv(x, m._data, u._data, -_to_scalar(group["lr"]) / (1 - beta1 ** step)))
        return loss
