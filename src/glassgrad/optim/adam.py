"""torch.optim.Adam and AdamW (single-tensor update rule, CPU rounding)."""
import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer, _to_scalar, add_alpha, addcdiv, addcmul, grad_array, lerp, setv, step_tensor, \
    zeros_state

__all__ = ["Adam", "AdamW"]


def _check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _check_common(lr, eps, weight_decay):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_common(lr, eps, weight_decay)
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        betas = tuple(map(_to_scalar, betas))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fix_steps(("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False),
                        ("differentiable", False), ("decoupled_weight_decay", False), ("fused", None))

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            beta1, beta2 = group["betas"]
            wd, eps, amsgrad = group["weight_decay"], group["eps"], group["amsgrad"]
            decoupled = group["decoupled_weight_decay"]
            bump = 0 if group["fused"] else 1  # torch's fused kernels leave version counters alone
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = step_tensor()
                    st["exp_avg"] = zeros_state(p)
                    st["exp_avg_sq"] = zeros_state(p)
                    if amsgrad:
                        st["max_exp_avg_sq"] = zeros_state(p)
                x = p._data
                dt = x.dtype.type
                g = grad_array(p, group["maximize"])
                setv(st["step"], st["step"]._data + 1)
                step = float(st["step"]._data)
                if wd != 0:
                    if decoupled:
                        setv(p, x * dt(1 - lr * wd), bump)
                    else:
                        g = add_alpha(g, x, wd)
                m, v = st["exp_avg"], st["exp_avg_sq"]
                setv(m, lerp(m._data, g, 1 - beta1), bump)
                setv(v, addcmul(v._data * dt(beta2), g, g, 1 - beta2), 2 * bump)
                bc1 = 1 - beta1 ** step
                bc2 = 1 - beta2 ** step
                step_size = lr / bc1
                bc2_sqrt = bc2 ** 0.5
                if amsgrad:
                    mx = st["max_exp_avg_sq"]
                    setv(mx, np.maximum(mx._data, v._data), bump)
                    denom = np.sqrt(mx._data) / dt(bc2_sqrt) + dt(eps)
                else:
                    denom = np.sqrt(v._data) / dt(bc2_sqrt) + dt(eps)
                setv(p, addcdiv(x, m._data, denom, -step_size), bump)
        return loss


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
