"""torch.optim.ASGD (single-tensor update rule, and the multi-tensor one when foreach=True; CPU rounding)."""
import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer, _scalar_dtype, _to_scalar, add_alpha, addcmul, grad_array, setv, step_tensor, \
    zeros_state

__all__ = ["ASGD"]


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fix_steps(("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False))
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state.get(p, None)
                for k in ("eta", "mu"):
                    if st and k in st and not isinstance(st[k], Tensor):
                        st[k] = step_tensor(float(st[k]))

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            lambd, alpha, t0, wd = group["lambd"], group["alpha"], group["t0"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = step_tensor()
                    st["eta"] = step_tensor(lr)
                    st["mu"] = step_tensor(1.0)
                    st["ax"] = zeros_state(p)
                x = p._data
                dt = x.dtype.type
                g = grad_array(p, group["maximize"])
                setv(st["step"], st["step"]._data + 1)
                if wd != 0:
                    g = add_alpha(g, x, wd)
                ax, mu = st["ax"], st["mu"]
                sdt = _scalar_dtype()
                if group["foreach"]:
                    # PyTorch's multi-tensor rule (taken on CPU only when foreach=True is asked for): one fused
                    # step  p -= eta * (g + lambd * p)  and eta recomputed in the step tensor's precision
                    inter = add_alpha(g, x, lambd)  # g already holds the weight decay term
                    setv(p, addcmul(x, inter, st["eta"]._data.astype(x.dtype), -1))
                    setv(ax, addcmul(ax._data, x - ax._data, mu._data.astype(x.dtype), 1))
                    s = st["step"]._data[()]
                    base = (1 + (lambd * lr) * s) ** sdt(alpha)
                    setv(st["eta"], np.asarray((sdt(1) / base) * sdt(lr), dtype=sdt))  # lr / tensor = reciprocal * lr
                else:
                    eta = float(st["eta"]._data)
                    setv(p, x * dt(1 - lambd * eta))
                    setv(p, add_alpha(x, g, -eta))
                    if float(mu._data) != 1:
                        setv(ax, ax._data + (x - ax._data) * mu._data.astype(x.dtype))
                    else:
                        setv(ax, x)
                    # torch.as_tensor(python float) is a default-dtype tensor, copied into the state tensor
                    step = float(st["step"]._data)
                    setv(st["eta"], np.array(lr / ((1 + lambd * lr * step) ** alpha), dtype=sdt))
                step = float(st["step"]._data)
                setv(mu, np.array(1 / max(1, step - t0), dtype=sdt))
        return loss
