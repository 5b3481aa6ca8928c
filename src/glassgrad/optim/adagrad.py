"""torch.optim.Adagrad (single-tensor update rule, CPU rounding)."""
import numpy as np

from .._tensor import _make
from ._common import check_args, check_fused, count_step, version_bumps, weight_decay
from .optimizer import Optimizer, _to_scalar, addcdiv, addcmul, setv, step_tensor
from ._functional import adagrad  # noqa: F401  (torch.optim.adagrad.adagrad)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    _setstate_defaults = dict(foreach=None, maximize=False, differentiable=False, fused=None)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_args(lr, lr_decay=lr_decay, weight_decay=weight_decay,
                   initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)
        for group in self.param_groups:  # torch creates Adagrad's state eagerly
            for p in group["params"]:
                self._init_state(self.state[p], p, group)

    def _init_state(self, st, p, group):
        st["step"] = step_tensor().to(p.device) if group.get("fused") else step_tensor()   # (torch: fused: there)
        v = self.defaults["initial_accumulator_value"]
        st["sum"] = _make(np.full_like(p._data, complex(v, v) if p._data.dtype.kind == "c" else v))   # as PyTorch

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for p, g, st, group in self._with_grads(self._init_state):
            bump = version_bumps(group)
            x = p._data
            step = count_step(st)
            g = weight_decay(p, g, group["weight_decay"])
            clr = _to_scalar(group["lr"]) / (1 + (step - 1) * group["lr_decay"])  # lr / (1 + (t - 1) * lr_decay)
            s = st["sum"]
            setv(s, addcmul(s._data, g, g, 1), bump)  # sum += g^2
            std = np.sqrt(s._data) + x.dtype.type(group["eps"])
            setv(p, addcdiv(x, g, std, -clr), bump)  # p -= clr * g / (sqrt(sum) + eps)
        return loss
