"""torch.optim.Adadelta (single-tensor update rule, CPU rounding)."""
import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer, _to_scalar, add_alpha, addcmul, grad_array, setv, step_tensor, zeros_state

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fix_steps(("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False))

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = step_tensor()
                    st["square_avg"] = zeros_state(p)
                    st["acc_delta"] = zeros_state(p)
                x = p._data
                dt = x.dtype.type
                setv(st["step"], st["step"]._data + 1)
                g = grad_array(p, group["maximize"])
                if wd != 0:
                    g = add_alpha(g, x, wd)
                sq, acc = st["square_avg"], st["acc_delta"]
                setv(sq, addcmul(sq._data * dt(rho), g, g, 1 - rho), 2)
                std = np.sqrt(sq._data + dt(eps))
                delta = np.sqrt(acc._data + dt(eps))
                delta = delta / std * g
                setv(acc, addcmul(acc._data * dt(rho), delta, delta, 1 - rho), 2)
                setv(p, add_alpha(x, delta, -lr))
        return loss
