"""torch.optim.Adam and AdamW (single-tensor update rule, CPU rounding)."""
import numpy as np

from .. import _cuda_kernels
from .._cuda_kernels import optloss as _k_optloss
from .._tensor import Tensor
from ._common import check_args, check_fused, count_step, new_state, version_bumps, weight_decay
from .optimizer import Optimizer, _to_scalar, addcmul, blockwise, lerp, setv, zeros_state
from ._functional import adam, adamw  # noqa: F401  (torch.optim.adam.adam)

__all__ = ["Adam", "AdamW", "adam", "adamw"]


def _adam_update(o, x, m, v, bc2, eps, value):
    """o = x + value * m / (sqrt(v) / bc2 + eps), with ATen's single-tensor rounding steps."""
    d = np.sqrt(v)
    d /= bc2
    d += eps
    t = np.multiply(m, value)
    t /= d
    np.add(x, t, out=o)


def _fused_ok(x, g, group):
    return (x.__class__ is not np.ndarray and not group["amsgrad"] and x.dtype in _FUSED_DTYPES
            and getattr(g, "shape", None) == x.shape and g.dtype == x.dtype and _cuda_kernels.available())


_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


class Adam(Optimizer):
    _setstate_defaults = dict(amsgrad=False, maximize=False, foreach=None, capturable=False, differentiable=False,
                              decoupled_weight_decay=False, fused=None)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        check_args(lr, eps=eps, betas=betas, weight_decay=weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        betas = tuple(map(_to_scalar, betas))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    @staticmethod
    def _init_state(st, p, group):
        new_state(st, p, "exp_avg", "exp_avg_sq")
        if group["amsgrad"]:
            st["max_exp_avg_sq"] = zeros_state(p)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for p, g, st, group in self._with_grads(self._init_state):
            lr = _to_scalar(group["lr"])
            beta1, beta2 = group["betas"]
            bump = version_bumps(group)
            x = p._data
            dt = x.dtype.type
            step = count_step(st)
            wd = group["weight_decay"]
            decay = group["decoupled_weight_decay"] and wd != 0 and _fused_ok(x, g, group)
            if not decay:                       # (AdamW's decay on a GPU: in the update's kernel)
                g = weight_decay(p, g, wd, lr, group["decoupled_weight_decay"], bump)
            m, v = st["exp_avg"], st["exp_avg_sq"]
            md, vd = m._data, v._data
            if decay or _fused_ok(x, g, group):     # a GPU: the whole update in one kernel, the same rounding steps
                args = (g, dt(1 - beta1), dt(beta2), dt(1 - beta2), dt((1 - beta2 ** step) ** 0.5), dt(group["eps"]),
                        dt(-lr / (1 - beta1 ** step)))
                if decay:
                    _k_optloss.adamw_step(*args, dt(1 - lr * wd), x, md, vd)
                else:
                    _cuda_kernels.adam_step(*args, x, md, vd)
                m._vc[0] += bump
                v._vc[0] += 2 * bump
                p._vc[0] += 2 * bump if decay else bump
                continue
            setv(m, lerp(md, g, 1 - beta1, out=md), bump)  # m = beta1 * m + (1 - beta1) * g
            np.multiply(vd, dt(beta2), out=vd)
            setv(v, addcmul(vd, g, g, 1 - beta2, out=vd), 2 * bump)  # v = beta2 * v + (1 - beta2) * g^2
            if group["amsgrad"]:
                mx = st["max_exp_avg_sq"]
                setv(mx, np.maximum(mx._data, vd, out=mx._data), bump)  # v_max = max(v_max, v)
                vd = mx._data
            # p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
            blockwise(_adam_update, x, x, md, vd, dt((1 - beta2 ** step) ** 0.5), dt(group["eps"]),
                      dt(-lr / (1 - beta1 ** step)))
            setv(p, x, bump)
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
