"""torch.optim.Adagrad (single-tensor update rule, CPU rounding)."""
import numpy as np

from .._tensor import Tensor, _make
from .optimizer import Optimizer, _to_scalar, add_alpha, addcdiv, addcmul, grad_array, setv, step_tensor

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p):
        st = self.state[p]
        st["step"] = step_tensor()
        st["sum"] = _make(np.full_like(p._data, self.defaults["initial_accumulator_value"]))

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fix_steps(("foreach", None), ("maximize", False), ("differentiable", False), ("fused", None))

    def share_memory(self):
        pass

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            wd, lr_decay, eps = group["weight_decay"], group["lr_decay"], group["eps"]
            bump = 0 if group["fused"] else 1  # torch's fused kernels leave version counters alone
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if len(st) == 0:
                    self._init_state(p)
                x = p._data
                dt = x.dtype.type
                setv(st["step"], st["step"]._data + 1)
                step = float(st["step"]._data)
                g = grad_array(p, group["maximize"])
                if wd != 0:
                    g = add_alpha(g, x, wd)
                clr = lr / (1 + (step - 1) * lr_decay)
                s = st["sum"]
                setv(s, addcmul(s._data, g, g, 1), bump)
                std = np.sqrt(s._data) + dt(eps)
                setv(p, addcdiv(x, g, std, -clr), bump)
        return loss
