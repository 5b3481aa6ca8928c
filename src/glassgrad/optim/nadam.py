"""torch.optim.NAdam (single-tensor update rule, CPU rounding)."""
import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer, _to_scalar, add_alpha, addcdiv, addcmul, grad_array, lerp, setv, step_tensor, \
    zeros_state
from .adam import _check_betas

__all__ = ["NAdam"]


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fix_steps(("maximize", False), ("foreach", None), ("capturable", False), ("differentiable", False),
                        ("decoupled_weight_decay", False))
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state.get(p, None)
                if st and "mu_product" in st and not isinstance(st["mu_product"], Tensor):
                    st["mu_product"] = step_tensor(float(st["mu_product"]))

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            beta1, beta2 = group["betas"]
            eps, wd, md = group["eps"], group["weight_decay"], group["momentum_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = step_tensor()
                    st["mu_product"] = step_tensor(1.0)
                    st["exp_avg"] = zeros_state(p)
                    st["exp_avg_sq"] = zeros_state(p)
                x = p._data
                dt = x.dtype.type
                g = grad_array(p, group["maximize"])
                setv(st["step"], st["step"]._data + 1)
                step = float(st["step"]._data)
                bc2 = 1 - beta2 ** step
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        setv(p, x * dt(1 - lr * wd))
                    else:
                        g = add_alpha(g, x, wd)
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * md)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * md)))
                mp = st["mu_product"]
                setv(mp, mp._data * mp._data.dtype.type(mu))
                mu_prod = float(mp._data)
                m, v = st["exp_avg"], st["exp_avg_sq"]
                setv(m, lerp(m._data, g, 1 - beta1))
                setv(v, addcmul(v._data * dt(beta2), g, g, 1 - beta2), 2)
                denom = np.sqrt(v._data / dt(bc2)) + dt(eps)
                mu_prod_next = mu_prod * mu_next
                setv(p, addcdiv(x, g, denom, -lr * (1.0 - mu) / (1.0 - mu_prod)))
                setv(p, addcdiv(x, m._data, denom, (-lr * mu_next) / (1.0 - mu_prod_next)))
        return loss
