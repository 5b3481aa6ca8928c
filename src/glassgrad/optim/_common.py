"""Pieces shared by the concrete optimizers: torch's constructor checks (check_args, check_fused), the fresh
per-parameter state (new_state), the step counter (count_step) and the gradient preparation (weight_decay).  The
per-parameter loop itself is Optimizer._with_grads; the fused array kernels (add_alpha, addcmul, addcdiv, lerp,
setv) live in optimizer.py."""
import numpy as np

from .._tensor import Tensor
from .optimizer import add_alpha, setv, step_tensor, zeros_state


def _negative(v):
    return not 0.0 <= v


def below_zero(v):
    """SGD's test (`v < 0.0`): unlike the usual `not 0.0 <= v` it lets NaN through, as torch's SGD does."""
    return v < 0.0


def not_positive(v):
    """SparseAdam's test: lr and eps must be > 0."""
    return not 0.0 < v


_UPPER = {"rho": 1.0}  # inclusive upper bounds; other named values only have a lower bound


def check_args(lr, *, lr_text="Invalid learning rate: {}", bad=_negative, **values):
    """torch's constructor checks, in the order given: a Tensor lr must hold one element, then lr and each named
    value must not be `bad` (negative by default; rho must also be <= 1), with torch's texts ("Invalid
    epsilon value: ...", "Invalid <name> value: ..."); `betas` needs both entries in [0, 1)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if bad(lr):
        raise ValueError(lr_text.format(lr))
    for name, v in values.items():
        if name == "betas":
            for i in (0, 1):
                if not 0.0 <= v[i] < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {v[i]}")
        elif bad(v) or (name in _UPPER and not v <= _UPPER[name]):
            label = "epsilon" if name == "eps" else name
            raise ValueError(f"Invalid {label} value: {v}")


def check_fused(fused, foreach, differentiable):
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def version_bumps(group):
    """Version-counter bumps per in-place op: torch's fused kernels leave version counters alone."""
    return 0 if group.get("fused") else 1


def new_state(st, p, *zeros, **scalars):
    """Fill a parameter's empty state: the step count, then the named scalar tensors, then zero buffers like p."""
    st["step"] = step_tensor()
    for name, v in scalars.items():
        st[name] = step_tensor(v)
    for name in zeros:
        st[name] = zeros_state(p)


def count_step(st):
    """state["step"] += 1 (in place); returns the new count as a float."""
    t = st["step"]
    setv(t, t._data + 1)
    return float(t._data)


def decay_param(p, lr, wd, bump=1):
    """Decoupled weight decay: p *= 1 - lr * wd (in place)."""
    x = p._data
    if x.__class__ is not np.ndarray:       # a device array: in place, one kernel (the same rounding)
        np.multiply(x, x.dtype.type(1 - lr * wd), out=x)
        p._vc[0] += bump
        return
    setv(p, x * x.dtype.type(1 - lr * wd), bump)


def weight_decay(p, g, wd, lr=None, decoupled=False, bump=1):
    """A group's weight decay: L2 returns g + wd * p; decoupled scales p by 1 - lr * wd and returns g."""
    if wd != 0:
        if decoupled:
            decay_param(p, lr, wd, bump)
        else:
            g = add_alpha(g, p._data, wd)
    return g
