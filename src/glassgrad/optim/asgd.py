"""torch.optim.ASGD (single-tensor update rule, and the multi-tensor one when foreach=True; CPU rounding)."""
from ..backend import as_array
from ._common import check_args, count_step, new_state, weight_decay
from .optimizer import Optimizer, _scalar_dtype, _to_scalar, add_alpha, addcmul, setv
from ._functional import asgd  # noqa: F401  (torch.optim.asgd.asgd)

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    _setstate_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _scalar_state = ("step", "eta", "mu")  # plain numbers in an old state become scalar tensors

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_args(lr, weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @staticmethod
    def _init_state(st, p, group):
        new_state(st, p, "ax", eta=_to_scalar(group["lr"]), mu=1.0)
        for k in ("step", "eta", "mu"):         # torch's ASGD keeps them on the parameter's device
            st[k] = st[k].to(p.device)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        sdt = _scalar_dtype()
        for p, g, st, group in self._with_grads(self._init_state):
            lr = _to_scalar(group["lr"])
            lambd, alpha = group["lambd"], group["alpha"]
            x = p._data
            dt = x.dtype.type
            step = count_step(st)
            g = weight_decay(p, g, group["weight_decay"])
            ax, mu = st["ax"], st["mu"]
            if group["foreach"]:
                # PyTorch's multi-tensor rule (taken on CPU only when foreach=True is asked for): one fused
                # step  p -= eta * (g + lambd * p)  and eta recomputed in the step tensor's precision
                inter = add_alpha(g, x, lambd)  # g already holds the weight decay term
                setv(p, addcmul(x, inter, st["eta"]._data.astype(x.dtype), -1))
                setv(ax, addcmul(ax._data, x - ax._data, mu._data.astype(x.dtype), 1))  # ax += mu * (p - ax)
                s = st["step"]._data[()]
                base = (1 + (lambd * lr) * s) ** sdt(alpha)
                setv(st["eta"], as_array((sdt(1) / base) * sdt(lr), sdt))  # lr / tensor = reciprocal * lr
            else:
                eta = float(st["eta"]._data)
                setv(p, x * dt(1 - lambd * eta))  # p *= 1 - lambd * eta
                setv(p, add_alpha(x, g, -eta))  # p -= eta * g
                if float(mu._data) != 1:
                    setv(ax, ax._data + (x - ax._data) * mu._data.astype(x.dtype))  # ax += mu * (p - ax)
                else:
                    setv(ax, x)
                # eta = lr / (1 + lambd * lr * t)^alpha; torch.as_tensor(python float) is a default-dtype
                # tensor, copied into the state tensor
                setv(st["eta"], sdt(lr / ((1 + lambd * lr * step) ** alpha)))
            setv(mu, sdt(1 / max(1, step - group["t0"])))  # mu = 1 / max(1, t - t0)
        return loss
