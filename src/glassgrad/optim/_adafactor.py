"""torch.optim.Adafactor (single-tensor update rule)."""
import numpy as np

from .._tensor import _make
from ._common import check_args, count_step, weight_decay
from .optimizer import Optimizer, _to_scalar, add_alpha, lerp, setv, step_tensor

__all__ = ["Adafactor"]


def _norm(a):
    """Tensor.norm(2).item(): reduced and rounded in the tensor's dtype."""
    return float(np.sqrt(np.sum(a * a)))


class Adafactor(Optimizer):
    _complex_as_real = False     # PyTorch: 'does not support complex parameters'
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        check_args(lr, lr_text="Learning rate should be >= 0 but is: {}")
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

    @staticmethod
    def _init_state(st, p, group):
        g = p.grad._data
        st["step"] = step_tensor()
        if g.ndim > 1:  # factored second moment: row and column variances
            st["row_var"] = _make(np.zeros(g.shape[:-1] + (1,), g.dtype, like=g))
            st["col_var"] = _make(np.zeros(g.shape[:-2] + (1,) + g.shape[-1:], g.dtype, like=g))
        else:
            st["variance"] = _make(np.zeros_like(g))

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            eps1, eps2 = group["eps"]  # eps1 None: the first parameter's dtype eps, for the whole group (as torch)
            for p, g, st, _ in self._with_grads(self._init_state, [group]):
                x = p._data
                dt = x.dtype.type
                if eps1 is None:
                    eps1 = float(np.finfo(x.dtype).eps)
                step = count_step(st)
                w = step ** group["beta2_decay"]  # the second-moment EMA weight t^beta2_decay
                rho = min(lr, 1 / (step ** 0.5))
                alpha = max(eps2, _norm(x) / (x.size ** 0.5)) * rho  # alpha = max(eps2, RMS(p)) * min(lr, 1/sqrt(t))
                g = weight_decay(p, g, group["weight_decay"], lr, decoupled=True)  # p *= 1 - lr * wd
                if g.ndim > 1:
                    rv, cv = st["row_var"], st["col_var"]
                    # row/col var = lerp(var, mean of g^2 over the other axis, w); v_hat = row @ col / mean(row)
                    row_mean = np.sqrt(np.sum(g * g, axis=-1, keepdims=True)) ** 2 / dt(g.shape[-1])
                    setv(rv, lerp(rv._data, row_mean.astype(g.dtype), w))
                    col_mean = np.sqrt(np.sum(g * g, axis=-2, keepdims=True)) ** 2 / dt(g.shape[-2])
                    setv(cv, lerp(cv._data, col_mean.astype(g.dtype), w))
                    est = rv._data @ cv._data
                    est = est / np.maximum(rv._data.mean(axis=-2, keepdims=True), dt(eps1))
                else:
                    v = st["variance"]
                    setv(v, lerp(v._data, g * g, w))  # v = lerp(v, g^2, w)
                    est = v._data.copy()
                upd = (dt(1) / np.sqrt(np.maximum(est, dt(eps1 * eps1)))) * g  # u = g / sqrt(max(v_hat, eps1^2))
                denom = max(1.0, _norm(upd) / ((upd.size ** 0.5) * group["d"]))
                setv(p, add_alpha(x, upd, -alpha / denom))  # p -= alpha * u / max(1, RMS(u) / d)
        return loss
