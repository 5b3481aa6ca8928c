"""The ONNX graph under construction (used by ``glassgrad.onnx``): value names, nodes, initializers, and the
walk of the traced autograd graph that hands each node to its converter (``_convert`` / ``_convert_nn``)."""
import re

import numpy as np

from ..autograd import graph as _graph
from ..autograd.graph import AccumulateGrad
from .errors import UnsupportedOperatorError, OnnxExporterError

CONVERTERS = {}     # grad_fn class name -> converter(g, node, ins) returning one value name per output
FALLBACKS = []      # (predicate on the node, converter): for node families under many names (the views)


def converter(*names):
    def register(fn):
        for n in names:
            CONVERTERS[n] = fn
        return fn
    return register


class Graph:
    """What the converters write to: ``add`` a node, ``const`` an initializer, ``arg`` a node's input."""

    def __init__(self, onnx, opset, made, inputs, params):
        self.onnx, self.opset = onnx, opset
        self.nodes, self.inits, self.values = [], {}, {}
        self.made = made            # (id(grad_fn), out_nr) -> the Tensor it produced in the traced forward
        self.inputs = inputs        # id(leaf tensor) -> graph input name; also id(array) for integer inputs
        self.params = params        # id(parameter / buffer) -> its state_dict name
        self.graph_inputs = []      # (name, leaf tensor) of the example inputs, in order
        self._n = 0
        self.dynamic = False
        # dynamic axes: the sizes of a second trace with the dynamic input sizes changed (``_export``)
        self.shape2 = {}            # (id(grad_fn), out_nr) -> its output's shape in the second trace
        self.leaf2 = {}             # id(leaf tensor) -> its shape in the second trace
        self.sym = {}               # (size in trace 1, size in trace 2) -> (input name, axis)

    def fresh(self, hint):
        self._n += 1
        return f"/{hint}_{self._n}"

    def add(self, op, inputs, n_out=1, **attrs):
        outs = [self.fresh(f"{op}_output") for _ in range(n_out)]
        self.nodes.append(self.onnx.helper.make_node(op, list(inputs), outs, name=self.fresh(op), **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, value, name=None, dtype=None):
        arr = np.asarray(value, dtype=dtype)
        if arr.dtype == np.float16 or arr.dtype.kind not in "fiub":
            raise OnnxExporterError(f"glassgrad.onnx: cannot store a constant of dtype {arr.dtype}")
        name = name or self.fresh("Constant")
        self.inits[name] = np.ascontiguousarray(arr)
        return name

    def ints(self, values):
        return self.const(np.asarray(list(values), dtype=np.int64))

    # -- inputs of a node -------------------------------------------------------------------------------------
    def leaf(self, t):
        """The value of a leaf tensor: a graph input, a named parameter, or a constant made in the forward."""
        key = id(t)
        if key in self.inputs:
            return self.inputs[key]
        if key in self.values:
            return self.values[key]
        a = np.asarray(t._data)
        self.values[key] = self.constant(a, self.leaf2.get(key, a.shape), self.params.get(key))
        return self.values[key]

    def constant(self, a, shape2, name=None):
        """A constant of the trace; made with a size of a dynamic axis (`shape2` differs), a uniform one
        becomes ConstantOfShape, another is an export error."""
        if tuple(shape2) == a.shape:
            return self.const(a, name)
        if a.size == 0 or not (a == a.flat[0]).all():
            raise OnnxExporterError("glassgrad.onnx: a tensor made in the forward with a size of a dynamic axis "
                                    f"(shape {a.shape}) is not uniform; only uniform ones (zeros, ones) follow it")
        shape = self.shape_value(list(zip(a.shape, shape2)))
        return self.add("ConstantOfShape", [shape], value=self.onnx.numpy_helper.from_array(a.reshape(-1)[:1].copy()))

    def mask_const(self, arr, out, out2, what):
        """A constant a node kept at the traced sizes (a mask) for an output of shapes `out` / `out2` in the two
        traces: along a size that varies it must be uniform, and is cut to 1 there (it broadcasts); else an
        export error, as no traced constant is right at other sizes."""
        arr = np.asarray(arr)
        for i in range(1, min(arr.ndim, len(out)) + 1):
            if out[-i] != out2[-i] and arr.shape[-i] != 1:
                first = np.take(arr, [0], axis=arr.ndim - i)
                if not (arr == first).all():
                    raise OnnxExporterError(f"glassgrad.onnx: {what} built for the traced size {out[-i]} of a "
                                            "dynamic axis is not the same along it; export that axis static")
                arr = first
        return self.const(arr)

    def out_shapes(self, node, nr=0):
        """The shape of a node's output in the trace and (with dynamic axes) in the second trace."""
        if isinstance(node, AccumulateGrad):
            shape = tuple(node.variable.shape)
            return shape, tuple(self.leaf2.get(id(node.variable), shape))
        shape = tuple(self.out(node, nr).shape)
        return shape, tuple(self.shape2.get((id(node), nr), shape)) if self.dynamic else shape

    def shape_value(self, pairs):
        """A 1-D int64 shape from (size in trace 1, size in trace 2) pairs: a size both traces agree on is a
        number, one that follows a dynamic input axis is read from that input's Shape, a single other one is -1."""
        if all(a == b for a, b in pairs):
            return self.ints([a for a, _ in pairs])
        unknown = [i for i, (a, b) in enumerate(pairs) if a != b and (a, b) not in self.sym]
        if len(unknown) > 1:
            raise OnnxExporterError("glassgrad.onnx: a shape with more than one size that varies with the dynamic "
                                    f"axes but follows none of them ({[a for a, _ in pairs]})")
        parts = []
        for a, b in pairs:
            if a == b:
                parts.append(self.ints([a]))
            elif (a, b) in self.sym:
                name, axis = self.sym[(a, b)]
                parts.append(self.add("Gather", [self.add("Shape", [name]), self.ints([axis])], axis=0))
            else:
                parts.append(self.ints([-1]))
        return self.add("Concat", parts, axis=0)

    def tensor_value(self, t):
        """The value of any tensor the trace saw (a saved tensor): by its node, as a leaf, or an integer input."""
        fn = t._grad_fn
        if fn is not None:
            return self.values[(id(fn), t._out_nr)]
        if id(t) in self.inputs:
            return self.inputs[id(t)]
        return self.array_value(t._data) if t._data.dtype.kind not in "fc" else self.leaf(t)

    def array_value(self, a):
        """An integer array a node keeps (embedding's indices): the integer graph input it is, or equals (nodes
        keep copies), else a constant."""
        a = np.asarray(a)
        for name, t in self.graph_inputs:
            d = t._data
            if d.dtype.kind not in "fc" and d.shape == a.shape and (d is a or np.array_equal(d, a)):
                return name
        return self.const(a)

    def arg(self, node, ins, i, saved=None):
        """Input `i` of `node`: its edge's value, else the tensor saved under `saved` (as a constant)."""
        if i < len(ins) and ins[i] is not None:
            return ins[i]
        if saved is not None:
            t = _graph.TEN.unpack_one(node, node._saved[saved]) if isinstance(saved, int) else \
                getattr(node, "_saved_" + saved)
            if t is not None:
                return self.tensor_value(t)
        raise OnnxExporterError(f"glassgrad.onnx: input {i} of {type(node).__name__} has no recorded value: it was "
                                "computed without a gradient path (see glassgrad.onnx's limits)")

    def out(self, node, nr=0):
        t = self.made.get((id(node), nr))
        if t is None:
            raise OnnxExporterError(f"glassgrad.onnx: the output of {type(node).__name__} was not seen by the trace "
                                    "(rewritten in place?)")
        return t


def aten_name(node_name):
    """The ATen operator a grad_fn class is named after: 'CumsumBackward0' -> 'aten::cumsum'."""
    base = re.sub(r"Backward\d*$", "", node_name)
    return "aten::" + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", base).lower()


def topo_order(roots):
    """The grad_fn nodes reachable from `roots`, each after the nodes it consumes (iterative DFS)."""
    order, seen = [], set()
    for root in roots:
        stack = [(root, False)]
        while stack:
            n, done = stack.pop()
            if done:
                order.append(n)
                continue
            if n is None or id(n) in seen:
                continue
            seen.add(id(n))
            stack.append((n, True))
            for m, _ in reversed(n.next_functions):
                if m is not None and id(m) not in seen:
                    stack.append((m, False))
    return order


def convert(g, roots):
    """Hand every node, inputs first, to its converter; record its output value names."""
    for node in topo_order(roots):
        if isinstance(node, AccumulateGrad):
            g.values[(id(node), 0)] = g.leaf(node.variable)
            continue
        name = type(node).__name__
        bw = getattr(node, "bw", None)
        fn = CONVERTERS.get(f"linalg:{bw.__name__}") if callable(bw) else None
        fn = fn or CONVERTERS.get(name) or next((f for test, f in FALLBACKS if test(node)), None)
        if fn is None:
            raise UnsupportedOperatorError(aten_name(name), g.opset, None)
        ins = [None if m is None else g.values[(id(m), nr)] for m, nr in node.next_functions]
        outs = fn(g, node, ins)
        if isinstance(outs, str):
            outs = [outs]
        for nr, v in enumerate(outs):
            g.values[(id(node), nr)] = v
