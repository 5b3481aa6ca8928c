"""torch.optim.Muon: momentum + Newton-Schulz orthogonalisation of 2-D updates.

PyTorch runs the Newton-Schulz iteration in bfloat16; glassgrad has no bfloat16 dtype, so the iteration keeps
float32 arrays whose values are rounded to bfloat16 after every op (round to nearest even), with matmuls
accumulated in float32 as PyTorch's CPU kernels do.
"""
import math

import numpy as np

from ..backend import like
from ._common import check_args, decay_param
from .optimizer import Optimizer, _to_scalar, add_alpha, lerp, setv, zeros_state

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _bf16(a):
    """Round float32 values to the nearest bfloat16 (ties to even), returned as float32."""
    a = np.ascontiguousarray(a, dtype=np.float32, like=like(a))
    bits = a.view(np.uint32).astype(np.uint64)
    r = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), a, r)


def _newton_schulz(grad, coefficients, steps, eps):
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = (np.float32(v) for v in coefficients)
    x = _bf16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bf16(np.sqrt(np.sum(x * x, dtype=np.float32)))
    x = _bf16(x / np.maximum(norm, _bf16(np.float32(eps))[0]))      # (a scalar: mixes with device data)
    for _ in range(steps):
        gram = _bf16(x @ x.T)
        upd = _bf16(b * gram + c * (gram @ gram))
        x = _bf16(a * x + upd @ x)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, shape):
    A, B = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    _complex_as_real = False     # PyTorch: 'does not support complex parameters'
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        check_args(lr, lr_text="Learning rate should be >= 0 but is: {}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    @staticmethod
    def _init_state(st, p, group):
        st["momentum_buffer"] = zeros_state(p.grad)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for p, g, st, group in self._with_grads(self._init_state):
            lr = _to_scalar(group["lr"])
            mom = group["momentum"]
            if g.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            buf = st["momentum_buffer"]
            setv(buf, lerp(buf._data, g, 1 - mom))  # buf = mom * buf + (1 - mom) * g
            upd = lerp(g, buf._data, mom) if group["nesterov"] else buf._data  # nesterov: lerp(g, buf, mom)
            upd = _newton_schulz(upd, group["ns_coefficients"], group["ns_steps"], group["eps"])  # ~ orthogonalise
            adjusted = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
            decay_param(p, lr, group["weight_decay"])  # p *= 1 - lr * wd (always, even for wd == 0)
            setv(p, add_alpha(p._data, upd.astype(p._data.dtype), -adjusted))  # p -= adjusted_lr * O
        return loss
