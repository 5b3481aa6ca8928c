"""torch.optim.RAdam (single-tensor update rule, CPU rounding)."""
import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer, _to_scalar, add_alpha, addcmul, grad_array, lerp, setv, step_tensor, zeros_state
from .adam import _check_betas

__all__ = ["RAdam"]


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fix_steps(("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False),
                        ("decoupled_weight_decay", False))

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            beta1, beta2 = group["betas"]
            eps, wd = group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = step_tensor()
                    st["exp_avg"] = zeros_state(p)
                    st["exp_avg_sq"] = zeros_state(p)
                x = p._data
                dt = x.dtype.type
                g = grad_array(p, group["maximize"])
                setv(st["step"], st["step"]._data + 1)
                step = float(st["step"]._data)
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        setv(p, x * dt(1 - lr * wd))
                    else:
                        g = add_alpha(g, x, wd)
                m, v = st["exp_avg"], st["exp_avg_sq"]
                setv(m, lerp(m._data, g, 1 - beta1))
                setv(v, addcmul(v._data * dt(beta2), g, g, 1 - beta2), 2)
                bc1 = 1 - beta1 ** step
                bc2 = 1 - beta2 ** step
                corrected = m._data / dt(bc1)
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bc2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive = (dt(1) / (np.sqrt(v._data) + dt(eps))) * dt(bc2 ** 0.5)
                    upd = corrected * dt(lr) * adaptive * dt(rect)
                else:
                    upd = corrected * dt(lr)
                setv(p, x - upd)
        return loss
