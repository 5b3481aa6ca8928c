"""torch.optim.Adafactor (single-tensor update rule)."""
import numpy as np

from .._tensor import Tensor, _make
from .optimizer import Optimizer, _to_scalar, add_alpha, grad_array, lerp, setv, step_tensor

__all__ = ["Adafactor"]


def _norm(a):
    """Tensor.norm(2).item(): reduced and rounded in the tensor's dtype."""
    return float(np.sqrt(np.sum(a * a)))


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            eps1, eps2 = group["eps"]
            decay, wd, dclip = group["beta2_decay"], group["weight_decay"], group["d"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                g = grad_array(p, group["maximize"])
                if len(st) == 0:
                    st["step"] = step_tensor()
                    if g.ndim > 1:
                        st["row_var"] = _make(np.zeros(g.shape[:-1] + (1,), g.dtype))
                        st["col_var"] = _make(np.zeros(g.shape[:-2] + (1,) + g.shape[-1:], g.dtype))
                    else:
                        st["variance"] = _make(np.zeros_like(g))
                x = p._data
                dt = x.dtype.type
                if eps1 is None:
                    eps1 = float(np.finfo(x.dtype).eps)
                setv(st["step"], st["step"]._data + 1)
                step = float(st["step"]._data)
                w = step ** decay
                rho = min(lr, 1 / (step ** 0.5))
                alpha = max(eps2, _norm(x) / (x.size ** 0.5)) * rho
                if wd != 0:
                    setv(p, x * dt(1 - lr * wd))
                if g.ndim > 1:
                    rv, cv = st["row_var"], st["col_var"]
                    row_mean = np.sqrt(np.sum(g * g, axis=-1, keepdims=True)) ** 2 / dt(g.shape[-1])
                    setv(rv, lerp(rv._data, row_mean.astype(g.dtype), w))
                    col_mean = np.sqrt(np.sum(g * g, axis=-2, keepdims=True)) ** 2 / dt(g.shape[-2])
                    setv(cv, lerp(cv._data, col_mean.astype(g.dtype), w))
                    est = rv._data @ cv._data
                    est = est / np.maximum(rv._data.mean(axis=-2, keepdims=True), dt(eps1))
                else:
                    v = st["variance"]
                    setv(v, lerp(v._data, g * g, w))
                    est = v._data.copy()
                upd = (dt(1) / np.sqrt(np.maximum(est, dt(eps1 * eps1)))) * g
                denom = max(1.0, _norm(upd) / ((upd.size ** 0.5) * dclip))
                setv(p, add_alpha(x, upd, -alpha / denom))
        return loss
