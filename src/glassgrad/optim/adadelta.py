"""torch.optim.Adadelta (single-tensor update rule, CPU rounding)."""
import numpy as np

from ._common import check_args, count_step, new_state, weight_decay
from .optimizer import Optimizer, _to_scalar, add_alpha, addcmul, setv
from ._functional import adadelta  # noqa: F401  (torch.optim.adadelta.adadelta)

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    _setstate_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_args(lr, rho=rho, eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    @staticmethod
    def _init_state(st, p, group):
        new_state(st, p, "square_avg", "acc_delta")

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for p, g, st, group in self._with_grads(self._init_state):
            rho, eps = group["rho"], group["eps"]
            x = p._data
            dt = x.dtype.type
            count_step(st)
            g = weight_decay(p, g, group["weight_decay"])
            sq, acc = st["square_avg"], st["acc_delta"]
            setv(sq, addcmul(sq._data * dt(rho), g, g, 1 - rho), 2)  # sq = rho * sq + (1 - rho) * g^2
            # delta = sqrt(acc + eps) / sqrt(sq + eps) * g
            delta = np.sqrt(acc._data + dt(eps)) / np.sqrt(sq._data + dt(eps)) * g
            setv(acc, addcmul(acc._data * dt(rho), delta, delta, 1 - rho), 2)  # acc = rho * acc + (1 - rho) * delta^2
            setv(p, add_alpha(x, delta, -_to_scalar(group["lr"])))  # p -= lr * delta
        return loss
