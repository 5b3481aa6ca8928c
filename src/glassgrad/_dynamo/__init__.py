"""torch._dynamo, the parts scripts touch around torch.compile: `config` (suppress_errors, cache_size_limit,
...), `reset`, `disable`, `optimize`, `is_compiling`, `allow_in_graph`, `list_backends`, `mark_dynamic` /
`mark_static` / `maybe_mark_dynamic` (hints, nothing to compile here), `exc`, `eval_frame.OptimizedModule`."""
from . import config, exc  # noqa: F401
from .eval_frame import OptimizedModule  # noqa: F401  (torch._dynamo.OptimizedModule)
from ..compiler import (allow_in_graph, assume_constant_result, disable, is_compiling, list_backends,  # noqa: F401
                        reset, compile as _compile)

__all__ = ["config", "exc", "allow_in_graph", "assume_constant_result", "disable", "is_compiling",
           "list_backends", "reset", "optimize", "mark_dynamic", "mark_static", "maybe_mark_dynamic",
           "is_dynamo_supported", "OptimizedModule"]


def optimize(backend="inductor", *, nopython=False, dynamic=None, disable=False, **kwargs):
    """torch._dynamo.optimize(backend): a decorator with torch.compile's result (eager here)."""
    return lambda fn: _compile(fn, fullgraph=nopython, dynamic=dynamic, backend=backend, disable=disable)


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):  # noqa: A002
    """A shape hint for the compiler: nothing to do without one."""


def maybe_mark_dynamic(t, index):
    """A shape hint for the compiler: nothing to do without one."""


def mark_static(t, index=None):
    """A shape hint for the compiler: nothing to do without one."""


def is_dynamo_supported():
    """False: glassgrad has no TorchDynamo (torch.compile runs code eagerly)."""
    return False


def __getattr__(name):
    """torch._dynamo's submodules that torch imports with it (``torch._dynamo.eval_frame.OptimizedModule``, which
    accelerate's is_compiled_module reads), loaded on first use here (eval_frame imports nn)."""
    if name in ("eval_frame", "_trace_wrapped_higher_order_op"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'glassgrad._dynamo' has no attribute '{name}'")
