"""torch._C: the few names of torch's C extension module that ordinary libraries call directly.

glassgrad has no C extension; this module holds the handful of ``torch._C`` functions that third-party code
(torchmetrics, Lightning, ...) calls, each with the answer torch's CPU build gives.
"""

__all__ = ["_log_api_usage_once", "_get_tracing_state", "_TensorMeta", "ScriptModule"]


def _log_api_usage_once(event):
    """Records an API-usage event (torch logs it only when PYTORCH_API_USAGE_STDERR is set); returns None."""
    if not isinstance(event, str):
        raise TypeError("bad argument type for built-in operation")
    return None


def _get_tracing_state():
    """The active TorchScript tracing state: glassgrad never traces with TorchScript, so always None."""
    return None


class _TensorMeta(type):
    """The metaclass of Tensor (and so of every Tensor subclass), as torch._C._TensorMeta."""


_TensorMeta.__module__ = "torch._C"


class ScriptModule:
    """torch.ScriptModule is torch._C.ScriptModule, the C++ object under a TorchScript module; glassgrad has no
    TorchScript (torch.jit returns eager modules), so, as a bare construction in torch, making one fails."""

    def __init__(self, *args, **kwargs):
        raise TypeError("__init__(): incompatible constructor arguments. The following argument types are "
                        "supported:\n    1. torch._C.ScriptModule(arg0: str, arg1: torch::jit::CompilationUnit, "
                        f"arg2: bool)\n\nInvoked with: {', '.join(map(repr, args))}")


ScriptModule.__module__ = "torch"
