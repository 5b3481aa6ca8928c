"""glassgrad.explain: see how gradients flow through your own model.

Every tool here only reads the graph (``grad_fn``, ``next_functions``, hooks, ``autograd.grad``);
none changes what the engine computes.

  graph(output, model=None)         -> GraphView  (DOT, SVG/PNG/PDF, a text tree, Jupyter)
  attribute({name: loss}, model)    -> Attribution (each parameter's gradient split by loss term)
  flow(model)                       -> Flow        (per-layer gradient statistics, plots, tracking)
  record()                          -> Tape        (the engine's steps during a backward, as a story)

Submodules load on first use.
"""
import importlib

_EXPORTS = {
    "graph": "_graph", "GraphView": "_graph", "trace_modules": "_graph",
    "attribute": "_attribute", "Attribution": "_attribute",
    "flow": "_flow", "Flow": "_flow", "FlowTracker": "_flow",
    "record": "_record", "Tape": "_record", "jacobian_story": "_record", "JacobianStory": "_record",
    "gate_story": "_record", "GateStory": "_record",
    "why_no_grad": "_why", "Reason": "_why", "watch": "_watch", "nan_watch": "_nan", "NonFiniteError": "_nan",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'glassgrad.explain' has no attribute '{name}'")
    return getattr(importlib.import_module(f"{__name__}.{mod}"), name)


def __dir__():
    return __all__
