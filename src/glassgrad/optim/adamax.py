"""torch.optim.Adamax (single-tensor update rule, CPU rounding)."""
import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer, _to_scalar, add_alpha, addcdiv, grad_array, lerp, setv, step_tensor, zeros_state
from .adam import _check_betas

__all__ = ["Adamax"]


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fix_steps(("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False))

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
                    st["exp_inf"] = zeros_state(p)
                x = p._data
                dt = x.dtype.type
                g = grad_array(p, group["maximize"])
                setv(st["step"], st["step"]._data + 1)
                if wd != 0:
                    g = add_alpha(g, x, wd)
                m, u = st["exp_avg"], st["exp_inf"]
                setv(m, lerp(m._data, g, 1 - beta1))
                setv(u, np.maximum(u._data * dt(beta2), np.abs(g) + dt(eps)), 2)
                clr = lr / (1 - beta1 ** float(st["step"]._data))
                setv(p, addcdiv(x, m._data, u._data, -clr))
        return loss
