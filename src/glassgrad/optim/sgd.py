"""torch.optim.SGD (single-tensor update rule, CPU rounding)."""
import numpy as np

from .._tensor import _make
from ._common import below_zero, check_args, check_fused, version_bumps, weight_decay
from .optimizer import Optimizer, _to_scalar, add_alpha, setv
from ._functional import sgd  # noqa: F401  (torch.optim.sgd.sgd)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    _setstate_defaults = dict(nesterov=False, maximize=False, foreach=None, differentiable=False, fused=False)

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        check_args(lr, momentum=momentum, weight_decay=weight_decay, bad=below_zero)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        # no state init: torch's SGD only keeps state (a momentum buffer) when momentum != 0
        for p, g, _, group in self._with_grads():
            mom = group["momentum"]
            bump = version_bumps(group)
            g = weight_decay(p, g, group["weight_decay"])
            if mom != 0:
                st = self.state[p]
                buf = st.get("momentum_buffer")
                if buf is None:
                    buf = _make(g.copy())  # buf = g on the first step
                    st["momentum_buffer"] = buf
                else:
                    b = buf._data
                    np.multiply(b, b.dtype.type(mom), out=b)
                    setv(buf, add_alpha(b, g, 1 - group["dampening"], out=b), 2 * bump)  # buf = mom * buf + (1 - damp) * g
                g = add_alpha(g, buf._data, mom) if group["nesterov"] else buf._data  # nesterov: g + mom * buf
            x = p._data
            setv(p, add_alpha(x, g, -_to_scalar(group["lr"]), out=x), bump)  # p -= lr * g
        return loss
