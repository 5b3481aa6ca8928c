"""torch.optim.SGD (single-tensor update rule, CPU rounding; on a GPU one fused kernel per parameter)."""
import numpy as np

from .. import _cuda_kernels
from .._cuda_kernels import optloss as _k_optloss
from .._tensor import _make
from ._common import below_zero, check_args, check_fused, version_bumps, weight_decay
from .optimizer import Optimizer, _to_scalar, add_alpha, grad_array, setv
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
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not _fused_step(self, p, group):
                    self._step_one(p, grad_array(p, group.get("maximize", False)), group)
        return loss

    def _step_one(self, p, g, group):
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


_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _fused_step(opt, p, group):
    """The whole update of a real float32 / float64 parameter on a GPU in one kernel (the array code's rounding
    steps); False (nothing done) elsewhere."""
    x = p._data
    g = p.grad._data
    if (x.__class__ is np.ndarray or x.dtype not in _FUSED_DTYPES or g.__class__ is not x.__class__
            or g.shape != x.shape or g.dtype != x.dtype or not _cuda_kernels.available()):
        return False
    dt = x.dtype.type
    mom, wd = group["momentum"], group["weight_decay"]
    bump = version_bumps(group)
    buf = first = None
    if mom != 0:
        st = opt.state[p]
        buf = st.get("momentum_buffer")
        first = buf is None
        if first:
            buf = _make(np.empty_like(x))
        elif buf._data.__class__ is not x.__class__ or buf._data.shape != x.shape or buf._data.dtype != x.dtype:
            return False
    _k_optloss.sgd_step(g, x, None if buf is None else buf._data, dt(wd) if wd != 0 else None, dt(mom),
                        dt(1 - group["dampening"]), dt(-_to_scalar(group["lr"])), group.get("maximize", False),
                        group["nesterov"], first)
    if first:
        opt.state[p]["momentum_buffer"] = buf
    elif buf is not None:
        buf._vc[0] += 2 * bump
    p._vc[0] += bump
    return True
