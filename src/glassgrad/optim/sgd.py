"""torch.optim.SGD (single-tensor update rule, CPU rounding)."""
from .optimizer import Optimizer, _to_scalar, add_alpha, grad_array, setv
from .._tensor import _make

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        from .._tensor import Tensor
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fix_steps(("nesterov", False), ("maximize", False), ("foreach", None), ("differentiable", False),
                        ("fused", False))

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            wd, mom, damp = group["weight_decay"], group["momentum"], group["dampening"]
            nesterov, maximize = group["nesterov"], group["maximize"]
            bump = 0 if group["fused"] else 1  # torch's fused kernels leave version counters alone
            for p in group["params"]:
                if p.grad is None:
                    continue
                x = p._data
                g = grad_array(p, maximize)
                if wd != 0:
                    g = add_alpha(g, x, wd)
                if mom != 0:
                    st = self.state[p]
                    buf = st.get("momentum_buffer")
                    if buf is None:
                        buf = _make(g.copy())
                        st["momentum_buffer"] = buf
                    else:
                        b = buf._data * buf._data.dtype.type(mom)
                        setv(buf, add_alpha(b, g, 1 - damp), 2 * bump)
                    g = add_alpha(g, buf._data, mom) if nesterov else buf._data
                setv(p, add_alpha(x, g, -lr), bump)
        return loss
