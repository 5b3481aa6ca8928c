"""torch.autograd: backward, grad, Function, grad modes, anomaly detection.

(autograd.functional is imported by the top-level package, which binds it here; gradcheck and gradgradcheck
are in gradcheck.py.)
"""
import warnings

import numpy as np

from .. import backend as _backend
from .._dtype import get_default_dtype, _FROM_NP
from .._tensor import Tensor, Size, _make

from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, set_multithreading_enabled)
from .function import Function, FunctionCtx, once_differentiable
from .engine import run_backward
from .graph import Node
from .graph import edge as _edge
from . import graph
from . import traversal
from . import anomaly
from .anomaly import detect_anomaly, set_detect_anomaly, is_anomaly_enabled
from . import profiler, profiler_util  # noqa: F401  (torch.autograd.profiler: its ops are timed only while on)

__all__ = ["backward", "grad", "Variable", "Function", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "detect_anomaly", "set_detect_anomaly"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Legacy ``Variable(tensor, requires_grad=False)``: returns a tensor sharing the data."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            data = _make(np.zeros((0,), get_default_dtype().np))     # torch.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = _make(data._data)
        t._vc = data._vc
        if requires_grad:
            t.requires_grad_(True)
        return t


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _outputs(x):
    """The tensors backward() / grad() differentiate; anything else is torch's AssertionError (its own type
    for this check, matched here as an explicit raise)."""
    out = (x,) if isinstance(x, Tensor) else tuple(x) if isinstance(x, (tuple, list)) else (x,)
    for t in out:
        if not isinstance(t, Tensor):
            raise AssertionError("Expected output to be a torch.Tensor")
    return out


def _make_grads(outputs, grads, create_graph):
    """Check the seed gradients and turn them into what the engine carries (arrays or Tensors)."""
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if o._rg:
                if o._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if o._data.dtype.kind not in "fV":
                    raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                       f"{o.dtype}")
                arr = np.ones_like(o._data)
                out.append(_make(arr) if create_graph else arr)
            else:
                out.append(None)
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        if g._data.shape != o._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)} and "
                               f"output[{i}] has a shape of {Size(o._data.shape)}.")
        # (torch 2.13 accepts any real dtype here -- int and bool included -- and casts it; to a leaf's
        # grad_dtype when it has one, None meaning no cast)
        dt = o._data.dtype
        if o._grad_fn is None and o._extra is not None:
            dt = o._extra.get("grad_dtype", dt)
        if create_graph:
            out.append(g if dt is None or g._data.dtype == dt else g.to(_FROM_NP[dt]))
        else:
            arr = g._data
            if dt is not None and arr.dtype != dt:
                arr = arr.astype(dt)
            out.append(arr)
    return out


def _roots(outputs, grads):
    roots, seeds = [], []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if not o._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append(_edge(o))
        seeds.append(g)
    return roots, seeds


_CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient "
    "which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you "
    "have to use this function, make sure to reset the .grad fields of your parameters to None after use to break "
    "the cycle and avoid the leak. (Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)")
_warned_create_graph = [False]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Accumulate d(tensors)/d(leaves) . grad_tensors into the leaves' .grad."""
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both passed to "
                               "backward(). Please only use 'grad_tensors'.")
        warnings.warn("'grad_variables' is deprecated. Use 'grad_tensors' instead.", stacklevel=2)
        grad_tensors = grad_variables
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _outputs(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    seeds = _make_grads(tensors, grads, create_graph)
    roots, seeds = _roots(tensors, seeds)
    if inputs is not None:
        for t in inputs:
            t.retain_grad()     # as PyTorch: a non-leaf input keeps its .grad (retains_grad is True)
    if create_graph and not _warned_create_graph[0]:
        _warned_create_graph[0] = True      # TORCH_WARN_ONCE: once per process
        warnings.warn(_CREATE_GRAPH_WARNING, UserWarning, stacklevel=3)
    run_backward(roots, seeds, retain_graph, create_graph, inputs=inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of outputs w.r.t. inputs (a tuple); .grad is not touched."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _outputs(outputs)
    inputs = (inputs,) if isinstance(inputs, graph.GradientEdge) else _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    for t in inputs:
        if isinstance(t, graph.GradientEdge):
            continue
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        per = [grad(outputs, inputs, tuple(g[b] for g in grads), retain_graph=True, create_graph=create_graph,
                    allow_unused=allow_unused, materialize_grads=materialize_grads)
               for b in range(grads[0].shape[0])]
        stack = graph.TEN.stack         # torch.stack (differentiable: the gradients may require grad)
        return tuple(None if per[0][k] is None else stack([p[k] for p in per]) for k in range(len(inputs)))
    seeds = _make_grads(outputs, grads, create_graph)
    roots, seeds = _roots(outputs, seeds)
    res = run_backward(roots, seeds, retain_graph, create_graph, inputs=inputs, accumulate=False)
    out = []
    for i, (t, g) in enumerate(zip(inputs, res)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            out.append(_make(np.zeros_like(t._data)) if materialize_grads and isinstance(t, Tensor) else None)
            continue
        if isinstance(t, graph.GradientEdge):          # the gradient flowing into the edge, as it arrived
            out.append(g if isinstance(g, Tensor) else _make(g.copy() if not _backend.writeable(g)
                                                               or g.base is not None else g))
            continue
        dt = t._data.dtype
        if t._grad_fn is None and t._extra is not None:      # a leaf's grad_dtype (None: no cast)
            dt = t._extra.get("grad_dtype", dt)
        if isinstance(g, Tensor):
            if dt is not None and g._data.dtype != dt:
                g = g.to(_FROM_NP[dt])
            out.append(g)
        else:
            if dt is not None and g.dtype != dt:
                g = g.astype(dt)
            if g.shape != t._data.shape:
                g = np.broadcast_to(g, t._data.shape).copy()
            elif not _backend.writeable(g) or g.base is not None:
                g = g.copy()
            out.append(_make(g))
    return tuple(out)


from . import function  # noqa: E402
from . import variable as _variable_module  # noqa: E402,F401  (the module torch.autograd.variable)


def variable(*args, **kwargs):
    """Deprecated (torch's torch.autograd.variable, which shadows the submodule of that name, raises too)."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")

from .gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: E402
# autograd.functional is built on ops (the library layer): `import glassgrad` imports it, which binds it here
