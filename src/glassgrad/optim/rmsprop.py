"""torch.optim.RMSprop (single-tensor update rule, CPU rounding)."""
import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer, _to_scalar, add_alpha, addcdiv, addcmul, grad_array, lerp, setv, step_tensor, \
    zeros_state

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fix_steps(("momentum", 0), ("centered", False), ("foreach", None), ("maximize", False),
                        ("differentiable", False), ("capturable", False))

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            alpha, eps, wd = group["alpha"], group["eps"], group["weight_decay"]
            mom, centered = group["momentum"], group["centered"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = step_tensor()
                    st["square_avg"] = zeros_state(p)
                    if mom > 0:
                        st["momentum_buffer"] = zeros_state(p)
                    if centered:
                        st["grad_avg"] = zeros_state(p)
                x = p._data
                dt = x.dtype.type
                g = grad_array(p, group["maximize"])
                setv(st["step"], st["step"]._data + 1)
                if wd != 0:
                    g = add_alpha(g, x, wd)
                sq = st["square_avg"]
                setv(sq, addcmul(sq._data * dt(alpha), g, g, 1 - alpha), 2)
                if centered:
                    ga = st["grad_avg"]
                    setv(ga, lerp(ga._data, g, 1 - alpha))
                    avg = np.sqrt(addcmul(sq._data, ga._data, ga._data, -1))
                else:
                    avg = np.sqrt(sq._data)
                avg = avg + dt(eps)
                if mom > 0:
                    buf = st["momentum_buffer"]
                    setv(buf, addcdiv(buf._data * dt(mom), g, avg, 1), 2)
                    setv(p, add_alpha(x, buf._data, -lr))
                else:
                    setv(p, addcdiv(x, g, avg, -lr))
        return loss
