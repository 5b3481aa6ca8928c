"""torch.optim.NAdam (single-tensor update rule, CPU rounding)."""
import numpy as np

from ._common import check_args, count_step, new_state, weight_decay
from .optimizer import Optimizer, _to_scalar, addcdiv, addcmul, lerp, setv
from ._functional import nadam  # noqa: F401  (torch.optim.nadam.nadam)

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    _setstate_defaults = dict(maximize=False, foreach=None, capturable=False, differentiable=False,
                              decoupled_weight_decay=False)
    _scalar_state = ("step", "mu_product")  # plain numbers in an old state become scalar tensors

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_args(lr, eps=eps, betas=betas, weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    @staticmethod
    def _init_state(st, p, group):
        new_state(st, p, "exp_avg", "exp_avg_sq", mu_product=1.0)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for p, g, st, group in self._with_grads(self._init_state):
            lr = _to_scalar(group["lr"])
            beta1, beta2 = group["betas"]
            md = group["momentum_decay"]
            x = p._data
            dt = x.dtype.type
            step = count_step(st)
            g = weight_decay(p, g, group["weight_decay"], lr, group["decoupled_weight_decay"])
            # mu_t = beta1 * (1 - 0.96^(t * psi) / 2); mu_product = prod of mu_1..mu_t
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * md)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * md)))
            mp = st["mu_product"]
            setv(mp, mp._data * mp._data.dtype.type(mu))
            mu_prod = float(mp._data)
            m, v = st["exp_avg"], st["exp_avg_sq"]
            setv(m, lerp(m._data, g, 1 - beta1))  # m = beta1 * m + (1 - beta1) * g
            setv(v, addcmul(v._data * dt(beta2), g, g, 1 - beta2), 2)  # v = beta2 * v + (1 - beta2) * g^2
            denom = np.sqrt(v._data / dt(1 - beta2 ** step)) + dt(group["eps"])  # sqrt(v / (1 - beta2^t)) + eps
            # p -= lr * (1 - mu) / (1 - mu_product) * g / denom + lr * mu_next / (1 - mu_product * mu_next) * m / denom
            setv(p, addcdiv(x, g, denom, -lr * (1.0 - mu) / (1.0 - mu_prod)))
            setv(p, addcdiv(x, m._data, denom, (-lr * mu_next) / (1.0 - mu_prod * mu_next)))
        return loss
