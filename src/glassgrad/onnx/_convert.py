"""Converters of the pointwise, reduction, matrix and view nodes: grad_fn class name -> ONNX nodes.

Each converter gets the graph under construction, the grad_fn node of the traced forward and the value names of
its inputs (in ``next_functions`` order; None where the input had no gradient path) and returns the value name of
each output. It reads what the node keeps for its backward (dims, scalars, shapes), as torch's ``_saved_*``."""
import math

import numpy as np

from ..ops import slicing as _slicing
from ..ops import views as _views
from ._graph import FALLBACKS, converter
from .errors import OnnxExporterError

_UNARY = {"ReluBackward0": "Relu", "SigmoidBackward0": "Sigmoid", "TanhBackward0": "Tanh", "ExpBackward0": "Exp",
          "LogBackward0": "Log", "SqrtBackward0": "Sqrt", "NegBackward0": "Neg", "AbsBackward0": "Abs",
          "SinBackward0": "Sin", "CosBackward0": "Cos", "ErfBackward0": "Erf", "ReciprocalBackward0": "Reciprocal",
          "CloneBackward0": "Identity", "SignBackward0": "Sign",
          "FloorBackward0": "Floor", "CeilBackward0": "Ceil", "RoundBackward0": "Round"}


def _np_dtype(g, node, nr=0):
    t = g.made.get((id(node), nr))
    return t._data.dtype if t is not None else np.float32


def scalar(g, node, value):
    """A Python number as a 0-d constant of the node's output dtype."""
    return g.const(np.asarray(value, dtype=_np_dtype(g, node)))


def _unary(op):
    return lambda g, node, ins: g.add(op, [ins[0]])


for _name, _op in _UNARY.items():
    converter(_name)(_unary(_op))


@converter("RsqrtBackward0")
def _rsqrt(g, node, ins):
    return g.add("Reciprocal", [g.add("Sqrt", [ins[0]])])


def _promoted(g, node, value, dtype):
    """An operand in the node's result dtype (torch's promotion: a wrapped number or 0-d tensor of another
    dtype, an integer tensor with a float one)."""
    out = _np_dtype(g, node)
    if dtype is None or np.dtype(dtype) == out:
        return value
    return g.add("Cast", [value], to=g.onnx.helper.np_dtype_to_tensor_dtype(out))


def _operands(g, node, ins):
    a = g.arg(node, ins, 0, "self" if "self" in type(node)._saved_names else None)
    a = _promoted(g, node, a, getattr(node, "adt", None))
    if getattr(node, "other", None) is not None:
        return a, scalar(g, node, node.other)
    b = g.arg(node, ins, 1, "other" if "other" in type(node)._saved_names else None)
    return a, _promoted(g, node, b, getattr(node, "bdt", None))


def _scaled(g, node, b):
    alpha = getattr(node, "alpha", 1)
    return b if alpha == 1 else g.add("Mul", [b, scalar(g, node, alpha)])


@converter("AddBackward0")
def _add(g, node, ins):
    a, b = _operands(g, node, ins)
    return g.add("Add", [a, _scaled(g, node, b)])


@converter("SubBackward0")
def _sub(g, node, ins):
    a, b = _operands(g, node, ins)
    return g.add("Sub", [a, _scaled(g, node, b)])


@converter("RsubBackward1")
def _rsub_scalar(g, node, ins):      # other - alpha * self, other a number
    return g.add("Sub", [scalar(g, node, node.other), _scaled(g, node, ins[0])])


@converter("MulBackward0", "MulBackward1")
def _mul(g, node, ins):
    return g.add("Mul", list(_operands(g, node, ins)))


@converter("DivBackward0", "DivBackward1")
def _div(g, node, ins):
    if getattr(node, "rounding_mode", None) not in (None, "none"):
        raise OnnxExporterError(f"glassgrad.onnx: division with rounding_mode={node.rounding_mode!r}")
    return g.add("Div", list(_operands(g, node, ins)))


@converter("PowBackward0")
def _pow(g, node, ins):
    return g.add("Pow", [ins[0], scalar(g, node, node.exponent)])


@converter("ClampBackward1", "ClampMinBackward0", "ClampMaxBackward0", "HardtanhBackward0")
def _clip(g, node, ins):
    lo = getattr(node, "min", getattr(node, "min_val", None))
    hi = getattr(node, "max", getattr(node, "max_val", None))
    return g.add("Clip", [ins[0], "" if lo is None else scalar(g, node, lo), "" if hi is None else scalar(g, node, hi)])


@converter("LeakyReluBackward0")
def _leaky(g, node, ins):
    return g.add("LeakyRelu", [ins[0]], alpha=float(node.negative_slope))


@converter("SiluBackward0")
def _silu(g, node, ins):
    return g.add("Mul", [ins[0], g.add("Sigmoid", [ins[0]])])


@converter("GeluBackward0")
def _gelu(g, node, ins):
    x = ins[0]
    if g.opset >= 20:
        return g.add("Gelu", [x], approximate=node.approximate)
    half = g.add("Mul", [x, scalar(g, node, 0.5)])
    if node.approximate == "tanh":        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = g.add("Mul", [g.add("Mul", [x, x]), x])
        inner = g.add("Add", [x, g.add("Mul", [cube, scalar(g, node, 0.044715)])])
        t = g.add("Tanh", [g.add("Mul", [inner, scalar(g, node, math.sqrt(2 / math.pi))])])
    else:                                 # 0.5 x (1 + erf(x / sqrt 2))
        t = g.add("Erf", [g.add("Div", [x, scalar(g, node, math.sqrt(2.0))])])
    return g.add("Mul", [half, g.add("Add", [t, scalar(g, node, 1.0)])])


@converter("SoftmaxBackward0", "LogSoftmaxBackward0", "SafeSoftmaxBackward0")
def _softmax(g, node, ins):
    dim = node.dim[0] if isinstance(node.dim, tuple) else node.dim
    return g.add("LogSoftmax" if type(node).__name__.startswith("Log") else "Softmax", [ins[0]], axis=int(dim))


# -- reductions ---------------------------------------------------------------------------------------------------
def reduce(g, op, x, axes, keepdim):
    """ReduceSum / ReduceMean / ... over `axes` (None: all), axes as attribute or input as the opset wants."""
    keep = int(bool(keepdim))
    if axes is None:
        return g.add(op, [x], keepdims=keep)
    if op == "ReduceSum" or g.opset >= 18:
        return g.add(op, [x, g.ints(axes)], keepdims=keep)
    return g.add(op, [x], axes=list(axes), keepdims=keep)


@converter("SumBackward0", "SumBackward1", "MeanBackward0", "MeanBackward1")
def _sum_mean(g, node, ins):
    op = "ReduceSum" if type(node).__name__.startswith("Sum") else "ReduceMean"
    return reduce(g, op, ins[0], getattr(node, "axes", None), getattr(node, "keepdim", False))


# -- matrix products ----------------------------------------------------------------------------------------------
@converter("AddmmBackward0")
def _addmm(g, node, ins):
    beta, alpha = node.info[0], node.info[1]
    bias = g.arg(node, ins, 0, "")
    mat2, trans = g.arg(node, ins, 2, "mat2"), 0
    t_node = node.next_functions[2][0]
    if isinstance(t_node, _views.TBackward0) and len(t_node.in_shape) == 2 and t_node.next_functions[0][0]:
        mat2, trans = g.values[(id(t_node.next_functions[0][0]), t_node.next_functions[0][1])], 1  # Linear's weight
    return g.add("Gemm", [g.arg(node, ins, 1, "mat1"), mat2, bias], alpha=float(alpha), beta=float(beta),
                 transB=trans)


@converter("MmBackward0", "BmmBackward0", "MvBackward0", "DotBackward0")
def _mm(g, node, ins):
    return g.add("MatMul", [g.arg(node, ins, 0, "self"), g.arg(node, ins, 1, "mat2" if "mat2" in
                                                                     type(node)._saved_names else "vec")])


@converter("CatBackward0")
def _cat(g, node, ins):
    return g.add("Concat", [v for v in ins], axis=int(node.dim))


@converter("StackBackward0")
def _stack(g, node, ins):
    axes = g.ints([node.dim])
    return g.add("Concat", [g.add("Unsqueeze", [v, axes]) for v in ins], axis=int(node.dim))


@converter("EmbeddingBackward0")
def _embedding(g, node, ins):
    return g.add("Gather", [ins[0], g.array_value(node.idx)], axis=0)


# -- views --------------------------------------------------------------------------------------------------------
def reshape_shape(g, node, out):
    """Reshape's / Expand's shape input: the traced shape, or with dynamic axes, the sizes that vary read from
    the inputs they follow (Graph.shape_value)."""
    out2 = g.shape2.get((id(node), 0), out) if g.dynamic else out
    return g.shape_value(list(zip(out, out2)))


def _view_node(g, node, ins):
    x, shape = ins[0], tuple(node.in_shape)
    if isinstance(node, (_views.PermuteBackward0,)):
        return g.add("Transpose", [x], perm=[int(p) % len(shape) for p in node.args[0]])
    if isinstance(node, _views.TransposeBackward0):
        a, b = (int(d) % max(len(shape), 1) for d in node.args)
        perm = list(range(len(shape)))
        perm[a], perm[b] = perm[b], perm[a]
        return g.add("Transpose", [x], perm=perm)
    if isinstance(node, _views.TBackward0):
        return g.add("Transpose", [x], perm=[1, 0]) if len(shape) == 2 else g.add("Identity", [x])
    if isinstance(node, _views.UnsqueezeBackward0):
        return g.add("Unsqueeze", [x, g.ints([int(node.args[0]) % (len(shape) + 1)])])
    out = tuple(g.out(node).shape)
    if isinstance(node, _views.ExpandBackward0):
        pad = (1,) * (len(out) - len(shape)) + shape
        out2 = g.shape2.get((id(node), 0), out) if g.dynamic else out
        pairs = [(1, 1) if p == o else (o, o2) for p, o, o2 in zip(pad, out, out2)]
        return g.add("Expand", [x, g.shape_value(pairs)])
    if isinstance(node, _views.SqueezeBackward0):
        axes, j = [], 0
        for i, s in enumerate(shape):
            if j < len(out) and out[j] == s and (s != 1 or len(shape) - i - 1 < len(out) - j):
                j += 1
            else:
                axes.append(i)
        return g.add("Squeeze", [x, g.ints(axes)]) if axes else g.add("Identity", [x])
    if isinstance(node, _views.ViewBackward0):
        return g.add("Reshape", [x, reshape_shape(g, node, out)])
    if isinstance(node, _slicing.SliceBackward0):
        return sliced(g, x, shape, node.args[0])
    if type(node).__name__ == "AliasBackward0":
        return g.add("Identity", [x])
    raise OnnxExporterError(f"glassgrad.onnx: the view {type(node).__name__} is not supported")


def sliced(g, x, shape, fn):
    """x[key] for a basic-indexing function `fn` (a slice / select the node keeps): decoded by applying it to an
    array of flat positions, then Slice (+ Squeeze for the dims an integer index drops)."""
    base = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    v = np.asarray(fn(base))
    if v.size == 0:
        raise OnnxExporterError("glassgrad.onnx: an empty slice")
    strides = [int(np.prod(shape[k + 1:])) for k in range(len(shape))]
    idx = [(v // strides[k]) % shape[k] for k in range(len(shape))]
    varying = [any(v.shape[j] > 1 and np.ptp(idx[k], axis=j).any() for j in range(v.ndim)) for k in range(len(shape))]
    starts, ends, axes, steps, drop = [], [], [], [], []
    out_left = v.ndim
    for k in range(len(shape)):
        first = int(idx[k].flat[0])
        if varying[k] or out_left > sum(varying[k + 1:]):    # a constant dim is kept while output dims are spare
            j = v.ndim - out_left
            n, step = v.shape[j], 1
            if varying[k]:
                step = int(np.take(idx[k], 1, axis=j).flat[0] - first)
            out_left -= 1
            if first == 0 and step == 1 and n == shape[k]:
                continue
        else:
            n, step = 1, 1
            drop.append(k)
        starts.append(first)
        ends.append(first + step * (n - 1) + 1)
        axes.append(k)
        steps.append(step)
    y = x
    if axes:
        y = g.add("Slice", [x, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)])
    if drop:
        y = g.add("Squeeze", [y, g.ints(drop)])
    return y if axes or drop else g.add("Identity", [x])


def _multi_view(g, node, ins):
    return [sliced(g, ins[0], tuple(node.in_shape), fn) for fn in node.fns]


def _dispatch_view(g, node, ins):
    if isinstance(node, _slicing._MultiViewNode):
        return _multi_view(g, node, ins)
    if isinstance(node, _views._ViewNode):
        return _view_node(g, node, ins)
    raise OnnxExporterError(f"glassgrad.onnx: {type(node).__name__} from {type(node).__module__} is not supported")


converter("ViewBackward0", "UnsafeViewBackward0", "PermuteBackward0", "TransposeBackward0",
          "TransposeBackward1",
          "TBackward0", "UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2",
          "ExpandBackward0", "SliceBackward0", "SelectBackward0", "NarrowBackward0", "SplitBackward0",
          "SplitWithSizesBackward0", "UnbindBackward0", "UnsafeSplitBackward0", "AliasBackward0")(_dispatch_view)
FALLBACKS.append((lambda n: isinstance(n, (_views._ViewNode, _slicing._MultiViewNode)), _dispatch_view))


@converter("linalg:_matmul_bw", "linalg:_bmm_bw")
def _matmul(g, node, ins):
    return g.add("MatMul", [g.arg(node, ins, 0, 0), g.arg(node, ins, 1, 1)])


@converter("MaskedFillBackward0", "MaskedFillBackward1")
def _masked_fill(g, node, ins):
    """where(mask, value, x). The node keeps the (broadcast) mask, a constant of its traced value; a number
    value is read back from the traced output where the mask is set."""
    mask = g.mask_const(np.asarray(node.mask, dtype=bool), *g.out_shapes(node), "masked_fill's mask")
    if len(ins) > 1 and ins[1] is not None:
        value = ins[1]
    else:
        y = np.asarray(g.out(node)._data)
        value = g.const(y[np.asarray(node.mask)].flat[0] if np.asarray(node.mask).any() else np.zeros((), y.dtype))
    return g.add("Where", [mask, value, ins[0]])
