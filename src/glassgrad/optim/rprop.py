"""torch.optim.Rprop (single-tensor update rule, CPU rounding)."""
import numpy as np

from .._tensor import Tensor, _make
from .optimizer import Optimizer, _to_scalar, addcmul, grad_array, setv, step_tensor, zeros_state

__all__ = ["Rprop"]


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fix_steps(("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False))

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            smin, smax = group["step_sizes"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = step_tensor()
                    st["prev"] = zeros_state(p)
                    st["step_size"] = _make(np.full_like(p.grad._data, _to_scalar(group["lr"])))
                x = p._data
                dt = x.dtype.type
                g = grad_array(p, group["maximize"])
                setv(st["step"], st["step"]._data + 1)
                prev, size = st["prev"], st["step_size"]
                sign = np.sign(g * prev._data)
                factor = np.where(sign > 0, dt(etaplus), np.where(sign < 0, dt(etaminus), dt(1)))
                setv(size, np.clip(size._data * factor, dt(smin), dt(smax)), 2)
                g = np.where(factor == dt(etaminus), dt(0), g)
                setv(p, addcmul(x, np.sign(g), size._data, -1))
                setv(prev, g)
        return loss
