"""torch.optim.RMSprop (single-tensor update rule, CPU rounding)."""
import numpy as np

from ._common import check_args, count_step, new_state, weight_decay
from .optimizer import Optimizer, _to_scalar, add_alpha, addcdiv, addcmul, lerp, setv, zeros_state
from ._functional import rmsprop  # noqa: F401  (torch.optim.rmsprop.rmsprop)

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    _setstate_defaults = dict(momentum=0, centered=False, foreach=None, maximize=False, differentiable=False,
                              capturable=False)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_args(lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    @staticmethod
    def _init_state(st, p, group):
        new_state(st, p, "square_avg")
        if group["momentum"] > 0:
            st["momentum_buffer"] = zeros_state(p)
        if group["centered"]:
            st["grad_avg"] = zeros_state(p)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for p, g, st, group in self._with_grads(self._init_state):
            lr = _to_scalar(group["lr"])
            alpha, mom = group["alpha"], group["momentum"]
            x = p._data
            dt = x.dtype.type
            count_step(st)
            g = weight_decay(p, g, group["weight_decay"])
            sq = st["square_avg"]
            setv(sq, addcmul(sq._data * dt(alpha), g, g, 1 - alpha), 2)  # sq = alpha * sq + (1 - alpha) * g^2
            if group["centered"]:
                ga = st["grad_avg"]
                setv(ga, lerp(ga._data, g, 1 - alpha))  # ga = alpha * ga + (1 - alpha) * g
                avg = np.sqrt(addcmul(sq._data, ga._data, ga._data, -1))  # avg = sqrt(sq - ga^2)
            else:
                avg = np.sqrt(sq._data)
            avg = avg + dt(group["eps"])
            if mom > 0:
                buf = st["momentum_buffer"]
                setv(buf, addcdiv(buf._data * dt(mom), g, avg, 1), 2)  # buf = mom * buf + g / avg
                setv(p, add_alpha(x, buf._data, -lr))  # p -= lr * buf
            else:
                setv(p, addcdiv(x, g, avg, -lr))  # p -= lr * g / avg
        return loss
