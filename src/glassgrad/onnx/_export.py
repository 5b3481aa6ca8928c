"""The trace and the model: run the forward with every op recording its node, convert, assemble the ModelProto."""
import warnings

import numpy as np

from .. import _grad_state, version
from .._tensor import Tensor, _make
from ..autograd.graph import AccumulateGrad, Node, edge
from ..autograd.grad_mode import enable_grad
from . import _convert, _convert_inplace, _convert_more, _convert_nn   # noqa: F401  (they register the converters)
from ._graph import Graph, convert, topo_order
from .errors import OnnxExporterError, OnnxExporterWarning


class TraceConstant(Node):
    """The grad_fn the trace gives a floating tensor made in the forward without one (``torch.zeros``, an
    arange): its value then, a constant of the graph. Being a node (not a leaf), the tensor may still be
    written in place (CopySlices)."""
    __slots__ = ("value",)

    def __init__(self, value):
        Node.__init__(self, ())
        self.value = value


class TraceDetach(Node):
    """The grad_fn the trace gives ``x.detach()`` / ``x.data``: the same value as x (no gradient is involved)."""
    __slots__ = ()


class _Recorder:
    """The tensor-creation watcher of the trace (``_grad_state.watching``): keeps every tensor made, gives a
    floating tensor created without a node a TraceConstant, and a detached one a TraceDetach."""

    def __init__(self):
        self.made = []

    def on_make(self, t):
        self.made.append(t)
        if t._grad_fn is None and not t._rg and isinstance(t._data, np.ndarray) and t._data.dtype.kind == "f":
            t._grad_fn = TraceConstant(t._data.copy())
            t._rg = True

    def on_cut(self, kind, src, result=None):
        if result is not None and kind in (".detach()", ".data") and (src._rg or src._grad_fn is not None):
            result._grad_fn = TraceDetach((edge(src),))
            result._out_nr = 0
            result._rg = True

    def on_zero_grad(self, *a):
        pass

    on_backward_begin = on_node = on_backward_end = on_zero_grad


def flat(obj, out, leaf=lambda t: t, other=None):
    """The tensors of nested tuples / lists / dicts `obj`, in order, appended to `out` as `leaf(tensor)`; with
    `other`, every other non-None value too, as `other(value)`."""
    if isinstance(obj, Tensor):
        out.append(leaf(obj))
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            flat(o, out, leaf, other)
    elif isinstance(obj, dict):
        for o in obj.values():
            flat(o, out, leaf, other)
    elif other is not None and obj is not None:
        out.append(other(obj))
    return out


def _leafify(obj, g, names, counter):
    """The example inputs as the trace's leaves: floating ones detached and requiring grad, integer ones as
    they are; each is a graph input."""
    if isinstance(obj, Tensor):
        i = counter[0]
        counter[0] += 1
        name = names[i] if i < len(names) else f"input_{i}"
        if obj._data.dtype.kind in "fc":
            t = obj.detach()
            t._rg = True
        else:
            t = obj
        g.inputs[id(t)] = name
        g.graph_inputs.append((name, t))
        return t
    if isinstance(obj, (tuple, list)):
        return type(obj)(_leafify(o, g, names, counter) for o in obj)
    if isinstance(obj, dict):
        return {k: _leafify(v, g, names, counter) for k, v in obj.items()}
    return obj


def _trace(model, args, kwargs, g):
    owned = {}
    if hasattr(model, "named_parameters"):
        for name, t in model.named_buffers():
            g.params.setdefault(id(t), name)
            if t._data.dtype.kind == "f" and not name.endswith(("running_mean", "running_var")):
                owned[id(t)] = (t, t._rg)      # batch norm's running statistics refuse requires_grad
                t._rg = True
        for name, t in model.named_parameters():
            g.params.setdefault(id(t), name)
            if t._data.dtype.kind == "f":
                owned[id(t)] = (t, t._rg)
                t._rg = True
    counter = [0]
    args = _leafify(args, g, g.input_names, counter)
    kwargs = _leafify(kwargs, g, g.input_names, counter)
    rec, previous = _Recorder(), _grad_state.state.watching
    _grad_state.state.watching = rec
    inference = _grad_state.state.inference
    _grad_state.state.inference = False
    try:
        with enable_grad():
            out = model(*args, **kwargs)
    finally:
        _grad_state.state.watching = previous
        _grad_state.state.inference = inference
        for t, rg in owned.values():
            t._rg = rg
    for t in rec.made:
        if t._grad_fn is not None:
            g.made[(id(t._grad_fn), t._out_nr)] = t
    return out


def _grown(obj, g, dynamic_axes, counter):
    """The example inputs with each dynamic axis one longer (values repeated), for the second trace."""
    if isinstance(obj, Tensor):
        i = counter[0]
        counter[0] += 1
        name = g.input_names[i] if i < len(g.input_names) else f"input_{i}"
        axes = _axes_of(dynamic_axes, name)
        if not axes:
            return obj
        shape = list(obj.shape)
        for ax in axes:
            g.sym.setdefault((shape[ax], shape[ax] + 1), (name, ax))
            shape[ax] += 1
        return _make(np.resize(obj._data, shape))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_grown(o, g, dynamic_axes, counter) for o in obj)
    if isinstance(obj, dict):
        return {k: _grown(v, g, dynamic_axes, counter) for k, v in obj.items()}
    return obj


def _second_trace(onnx, model, args, kwargs, g, roots, dynamic_axes):
    """Trace again with the dynamic axes one longer: which sizes follow them (Graph.shape2 / leaf2 / sym)."""
    counter = [0]
    args2, kwargs2 = _grown(args, g, dynamic_axes, counter), _grown(kwargs, g, dynamic_axes, counter)
    g2 = Graph(onnx, g.opset, {}, {}, {})
    g2.input_names = g.input_names
    outs2 = flat(_trace(model, args2, kwargs2, g2), [])
    order1, order2 = topo_order(roots), topo_order([t._grad_fn for t in outs2 if t._grad_fn is not None])
    if [type(n) for n in order1] != [type(n) for n in order2]:
        raise OnnxExporterError("glassgrad.onnx: the forward records other operators when a dynamic axis changes "
                                "size (control flow on a size?); export without dynamic_axes")
    shapes = {}
    for (fn, nr), t in g2.made.items():
        shapes.setdefault(fn, {})[nr] = tuple(t.shape)
    for n1, n2 in zip(order1, order2):
        if isinstance(n1, AccumulateGrad):
            g.leaf2[id(n1.variable)] = tuple(n2.variable.shape)
        elif isinstance(n1, TraceConstant):
            g.shape2[(id(n1), 0)] = n2.value.shape
        elif type(n1).__name__ == "CopySlices":
            g.shape2[(id(n1), 0)] = tuple(n2.shape)
        for nr, shape in shapes.get(id(n2), {}).items():
            g.shape2[(id(n1), nr)] = shape


def _dims(shape, axes):
    return [axes.get(i, s) for i, s in enumerate(shape)]


def _axes_of(dynamic_axes, name):
    spec = (dynamic_axes or {}).get(name)
    if spec is None:
        return {}
    if isinstance(spec, dict):
        return {int(k): str(v) for k, v in spec.items()}
    return {int(k): f"{name}_dynamic_axes_{i + 1}" for i, k in enumerate(spec)}


def export_model(onnx, model, args, kwargs, opset, input_names, output_names, dynamic_axes, export_params,
                 keep_initializers_as_inputs, do_constant_folding):
    g = Graph(onnx, opset, {}, {}, {})
    g.input_names = list(input_names or [])
    g.dynamic = bool(dynamic_axes)
    out = _trace(model, args, kwargs, g)
    outs = flat(out, [])
    if not outs:
        raise OnnxExporterError("glassgrad.onnx: the model returned no tensor")
    roots = [t._grad_fn for t in outs if t._grad_fn is not None]
    if g.dynamic:
        _second_trace(onnx, model, args, kwargs, g, roots, dynamic_axes)
    convert(g, roots)
    helper = onnx.helper
    out_infos = []
    for i, t in enumerate(outs):
        name = output_names[i] if output_names and i < len(output_names) else f"output_{i}"
        src = g.tensor_value(t) if (t._grad_fn is not None or id(t) in g.inputs) else g.const(np.asarray(t._data))
        g.nodes.append(helper.make_node("Identity", [src], [name], name=g.fresh("Identity")))
        axes = _axes_of(dynamic_axes, name)
        shape = _dims(t.shape, axes) if (axes or not g.dynamic) else [None] * t.dim()
        out_infos.append(helper.make_tensor_value_info(name, _elem(onnx, t._data.dtype), shape))
    in_infos = [helper.make_tensor_value_info(name, _elem(onnx, t._data.dtype),
                                              _dims(t.shape, _axes_of(dynamic_axes, name)))
                for name, t in g.graph_inputs]
    if do_constant_folding:
        _fold(onnx, g, keep=set() if export_params else set(g.params.values()))
    _prune(g, [o.name for o in out_infos])
    used = {i for n in g.nodes for i in n.input}
    for name, _ in g.graph_inputs:
        if name not in used:
            warnings.warn(f"glassgrad.onnx: the input '{name}' does not reach the exported graph: the outputs do "
                          "not depend on it, or only through values without a gradient path (a mask, indices), "
                          "which are built in at their traced values", OnnxExporterWarning, stacklevel=3)
    inits = {k: v for k, v in g.inits.items() if k in used}
    as_inputs = [k for k in inits if keep_initializers_as_inputs or (not export_params and k in g.params.values())]
    in_infos += [helper.make_tensor_value_info(k, _elem(onnx, inits[k].dtype), list(inits[k].shape))
                 for k in as_inputs]
    if not export_params:
        inits = {k: v for k, v in inits.items() if k not in g.params.values()}
    graph = helper.make_graph(g.nodes, "main_graph", in_infos, out_infos,
                              initializer=[onnx.numpy_helper.from_array(v, k) for k, v in inits.items()])
    opsets = [helper.make_opsetid("", opset)]
    proto = helper.make_model(graph, opset_imports=opsets, producer_name="glassgrad", producer_version=version.__version__)
    proto.ir_version = min(helper.find_min_ir_version_for(opsets), onnx.IR_VERSION)
    proto.ir_version = max(proto.ir_version, 8)
    onnx.checker.check_model(proto)
    return proto


def _prune(g, outputs):
    """Drop the nodes no output needs (a Transpose that Gemm's transB made redundant)."""
    needed, kept = set(outputs), []
    for node in reversed(g.nodes):
        if any(o in needed for o in node.output):
            needed.update(i for i in node.input if i)
            kept.append(node)
    g.nodes[:] = kept[::-1]


def _elem(onnx, dtype):
    return onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _fold(onnx, g, keep):
    """Constant folding: a node whose inputs are all constants (not parameters kept as inputs) is evaluated
    now (onnx's reference evaluator) and replaced by its result."""
    from onnx.reference import ReferenceEvaluator
    kept = []
    for node in g.nodes:
        ins = [i for i in node.input if i]
        if ins and all(i in g.inits and i not in keep for i in ins) and node.op_type != "Identity":
            graph = onnx.helper.make_graph([node], "fold", [], [onnx.helper.make_tensor_value_info(o, 0, None)
                                                                for o in node.output])
            model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", g.opset)])
            results = ReferenceEvaluator(model).run(None, {i: g.inits[i] for i in ins})
            for o, r in zip(node.output, results):
                g.inits[o] = np.asarray(r)
            continue
        kept.append(node)
    g.nodes[:] = kept
