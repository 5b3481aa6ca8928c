"""torch._C: the few names of torch's C extension module that ordinary libraries call directly.

glassgrad has no C extension; this module holds the handful of ``torch._C`` functions that third-party code
(torchmetrics, Lightning, ...) calls, each with the answer torch's CPU build gives.
"""

__all__ = ["_log_api_usage_once", "_get_tracing_state"]


def _log_api_usage_once(event):
    """Records an API-usage event (torch logs it only when PYTORCH_API_USAGE_STDERR is set); returns None."""
    if not isinstance(event, str):
        raise TypeError("bad argument type for built-in operation")
    return None


def _get_tracing_state():
    """The active TorchScript tracing state: glassgrad never traces with TorchScript, so always None."""
    return None
