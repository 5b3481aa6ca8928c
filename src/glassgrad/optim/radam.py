"""torch.optim.RAdam (single-tensor update rule, CPU rounding)."""
import numpy as np

from ._common import check_args, count_step, new_state, weight_decay
from .optimizer import Optimizer, _to_scalar, addcmul, lerp, setv
from ._functional import radam  # noqa: F401  (torch.optim.radam.radam)

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    _setstate_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False,
                              decoupled_weight_decay=False)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_args(lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    @staticmethod
    def _init_state(st, p, group):
        new_state(st, p, "exp_avg", "exp_avg_sq")

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for p, g, st, group in self._with_grads(self._init_state):
            lr = _to_scalar(group["lr"])
            beta1, beta2 = group["betas"]
            x = p._data
            dt = x.dtype.type
            step = count_step(st)
            g = weight_decay(p, g, group["weight_decay"], lr, group["decoupled_weight_decay"])
            m, v = st["exp_avg"], st["exp_avg_sq"]
            setv(m, lerp(m._data, g, 1 - beta1))  # m = beta1 * m + (1 - beta1) * g
            setv(v, addcmul(v._data * dt(beta2), g, g, 1 - beta2), 2)  # v = beta2 * v + (1 - beta2) * g^2
            bc2 = 1 - beta2 ** step
            corrected = m._data / dt(1 - beta1 ** step)
            # rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t), rho_inf = 2 / (1 - beta2) - 1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bc2
            if rho_t > 5.0:
                # p -= lr * m_hat * r_t * sqrt(1 - beta2^t) / (sqrt(v) + eps), r_t the variance rectification
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive = (dt(1) / (np.sqrt(v._data) + dt(group["eps"]))) * dt(bc2 ** 0.5)
                upd = corrected * dt(lr) * adaptive * dt(rect)
            else:
                upd = corrected * dt(lr)  # p -= lr * m_hat
            setv(p, x - upd)
        return loss
