"""torch.optim.Rprop (single-tensor update rule, CPU rounding)."""
import numpy as np

from .._tensor import _make
from ._common import check_args, count_step, new_state
from .optimizer import Optimizer, _to_scalar, addcmul, setv
from ._functional import rprop  # noqa: F401  (torch.optim.rprop.rprop)

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    _setstate_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        check_args(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @staticmethod
    def _init_state(st, p, group):
        new_state(st, p, "prev")
        lr = _to_scalar(group["lr"])
        g = p.grad._data      # complex: lr for the imaginary part too (PyTorch)
        st["step_size"] = _make(np.full_like(g, complex(lr, lr) if g.dtype.kind == "c" else lr))

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for p, g, st, group in self._with_grads(self._init_state):
            etaminus, etaplus = group["etas"]
            smin, smax = group["step_sizes"]
            x = p._data
            dt = x.dtype.type
            count_step(st)
            prev, size = st["prev"], st["step_size"]
            # size *= etaplus where g * prev > 0, etaminus where < 0; clipped to [smin, smax]
            sign = np.sign(g * prev._data)
            factor = np.where(sign > 0, dt(etaplus), np.where(sign < 0, dt(etaminus), dt(1)))
            setv(size, np.clip(size._data * factor, dt(smin), dt(smax)), 2)
            g = np.where(factor == dt(etaminus), dt(0), g)  # a sign change skips this step (and resets prev)
            setv(p, addcmul(x, np.sign(g), size._data, -1))  # p -= sign(g) * size
            setv(prev, g)
        return loss
