"""torch.nn.attention: which kernels scaled_dot_product_attention may use (`sdpa_kernel`, `SDPBackend`).

glassgrad has two: the fused CPU kernel (torch's FLASH_ATTENTION on CPU, `_sdpa_flash` in
nn/functional/_attention.py) and the composite (MATH).  EFFICIENT_ATTENTION, CUDNN_ATTENTION and
OVERRIDEABLE are CUDA (or out-of-tree) kernels that never run on CPU, as in torch: enabling only those leaves
no viable kernel and scaled_dot_product_attention raises torch's error.
"""
import contextlib
from enum import IntEnum

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(IntEnum):
    """The kernels of scaled_dot_product_attention (torch's values)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self):
        return f"SDPBackend.{self.name}"


_ALL = (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION,
        SDPBackend.OVERRIDEABLE)
_state = {"enabled": set(_ALL), "priority": list(_ALL)}


def enabled(backend):
    """Whether scaled_dot_product_attention may use `backend` now."""
    return backend in _state["enabled"]


def _cur_sdpa_kernel_backends(with_priority=False):
    if with_priority:
        return [b for b in _state["priority"] if b in _state["enabled"]]
    return [b for b in _ALL if b in _state["enabled"]]


def _sdpa_kernel(backends, set_priority=False):
    _state["enabled"] = set(backends)
    if set_priority:
        _state["priority"] = list(backends) + [b for b in _state["priority"] if b not in backends]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block scaled_dot_product_attention uses only `backends` (one SDPBackend or a list); the
    previous choice is restored on exit."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    previous_priority = list(_state["priority"])
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)
        _state["priority"] = previous_priority
