"""Converters of the less common nodes: elementwise extras, max / min, norms and moments, padding, resizing,
repeats, flips, masks, casts."""
import numpy as np

from ._convert import _operands, reduce, scalar
from ._graph import converter
from .errors import OnnxExporterError


def _unary(g, node, ins):
    return g.arg(node, ins, 0, "self" if "self" in type(node)._saved_names else None)


@converter("EluBackward0", "CeluBackward0")
def _elu(g, node, ins):
    x, alpha, scale, inner = ins[0], float(node.alpha), float(node.scale), float(node.input_scale)
    if type(node).__name__ == "CeluBackward0":
        return g.add("Celu", [x], alpha=alpha)
    if scale == 1 and inner == 1:
        return g.add("Elu", [x], alpha=alpha)
    if inner == 1:
        return g.add("Selu", [x], alpha=alpha, gamma=scale)
    neg = g.add("Mul", [g.add("Sub", [g.add("Exp", [g.add("Mul", [x, scalar(g, node, inner)])]),
                                      scalar(g, node, 1.0)]), scalar(g, node, scale * alpha)])
    return g.add("Where", [g.add("Greater", [x, scalar(g, node, 0.0)]), g.add("Mul", [x, scalar(g, node, scale)]), neg])


@converter("HardsigmoidBackward0")
def _hardsigmoid(g, node, ins):
    return g.add("HardSigmoid", [_unary(g, node, ins)], alpha=1 / 6, beta=0.5)


@converter("HardswishBackward0")
def _hardswish(g, node, ins):
    x = _unary(g, node, ins)
    if g.opset >= 14:
        return g.add("HardSwish", [x])
    return g.add("Mul", [x, g.add("HardSigmoid", [x], alpha=1 / 6, beta=0.5)])


def _softplus_of(g, node, x, beta=1.0):
    """log(1 + exp(beta x)) / beta (ONNX's Softplus has no threshold; past torch's the two agree to rounding)."""
    if beta == 1:
        return g.add("Softplus", [x])
    return g.add("Div", [g.add("Softplus", [g.add("Mul", [x, scalar(g, node, beta)])]), scalar(g, node, beta)])


@converter("SoftplusBackward0")
def _softplus(g, node, ins):
    return _softplus_of(g, node, _unary(g, node, ins), float(node.beta))


@converter("MishBackward0")
def _mish(g, node, ins):
    x = _unary(g, node, ins)
    if g.opset >= 18:
        return g.add("Mish", [x])
    return g.add("Mul", [x, g.add("Tanh", [_softplus_of(g, node, x)])])


@converter("LogSigmoidBackward0")
def _logsigmoid(g, node, ins):
    return g.add("Neg", [_softplus_of(g, node, g.add("Neg", [_unary(g, node, ins)]))])


@converter("Log1PBackward0")
def _log1p(g, node, ins):
    return g.add("Log", [g.add("Add", [_unary(g, node, ins), scalar(g, node, 1.0)])])


@converter("PreluKernelBackward0")
def _prelu(g, node, ins):
    w = g.arg(node, ins, 1, "weight")
    return g.add("PRelu", [g.arg(node, ins, 0, "self"), g.add("Reshape", [w, g.ints(node.wshape)])])


@converter("MaximumBackward0", "MinimumBackward0")
def _max_min(g, node, ins):
    return g.add("Max" if type(node).__name__.startswith("Max") else "Min", list(_operands(g, node, ins)))


@converter("PowBackward1")
def _pow_tensor(g, node, ins):
    return g.add("Pow", [g.arg(node, ins, 0, "self"), g.arg(node, ins, 1, "exponent")])


@converter("PowBackward2")
def _pow_base(g, node, ins):       # a number to a tensor's power
    return g.add("Pow", [scalar(g, node, node.other), g.arg(node, ins, 0, "exponent")])


@converter("AmaxBackward0", "AminBackward0", "MaxBackward1", "MinBackward1")
def _amax(g, node, ins):
    op = "ReduceMax" if "max" in type(node).__name__.lower() else "ReduceMin"
    return reduce(g, op, ins[0], list(node.axes), node.keepdim)


@converter("MaxBackward0", "MinBackward0")
def _max_dim(g, node, ins):         # the values of max(dim) / min(dim); the indices are not differentiable
    op = "ReduceMax" if type(node).__name__.startswith("Max") else "ReduceMin"
    return [reduce(g, op, ins[0], [int(node.dim)], node.keepdim)]


@converter("LinalgVectorNormBackward0")
def _vector_norm(g, node, ins):
    x, p, axes, keep = ins[0], float(node.p), list(node.axes), node.keepdim
    if p == 2:
        return reduce(g, "ReduceL2", x, axes, keep)
    if p == 1:
        return reduce(g, "ReduceL1", x, axes, keep)
    if p == float("inf"):
        return reduce(g, "ReduceMax", g.add("Abs", [x]), axes, keep)
    powered = g.add("Pow", [g.add("Abs", [x]), scalar(g, node, p)])
    return g.add("Pow", [reduce(g, "ReduceSum", powered, axes, keep), scalar(g, node, 1.0 / p)])


@converter("VarBackward0", "StdBackward0")
def _var_std(g, node, ins):
    x, axes = ins[0], list(node.axes)
    centred = g.add("Sub", [x, reduce(g, "ReduceMean", x, axes, True)])
    total = reduce(g, "ReduceSum", g.add("Mul", [centred, centred]), axes, node.keepdim)
    var = g.add("Div", [total, scalar(g, node, max(node.n - node.corr, 0))])
    return g.add("Sqrt", [var]) if type(node).__name__.startswith("Std") else var


@converter("CumsumBackward0")
def _cumsum(g, node, ins):
    axis = g.const(np.asarray(int(node.dim), dtype=np.int64))
    return g.add("CumSum", [ins[0], axis], reverse=int(bool(getattr(node, "reverse", False))))


@converter("BaddbmmBackward0", "AddbmmBackward0")
def _baddbmm(g, node, ins):
    beta, alpha = node.info[0], node.info[1]
    prod = g.add("MatMul", [g.arg(node, ins, 1, "batch1"), g.arg(node, ins, 2, "batch2")])
    if type(node).__name__.startswith("Addbmm"):
        prod = reduce(g, "ReduceSum", prod, [0], False)
    if alpha != 1:
        prod = g.add("Mul", [prod, scalar(g, node, alpha)])
    if beta == 0:
        return prod
    bias = g.arg(node, ins, 0, "")
    return g.add("Add", [bias if beta == 1 else g.add("Mul", [bias, scalar(g, node, beta)]), prod])


@converter("AddcmulBackward0", "AddcdivBackward0")
def _addcmul(g, node, ins):
    t1, t2 = g.arg(node, ins, 1, "tensor1"), g.arg(node, ins, 2, "tensor2")
    prod = g.add("Mul" if type(node).__name__.startswith("Addcmul") else "Div", [t1, t2])
    if node.value != 1:
        prod = g.add("Mul", [prod, scalar(g, node, node.value)])
    return g.add("Add", [g.arg(node, ins, 0), prod])


@converter("LerpBackward0", "LerpBackward1")
def _lerp(g, node, ins):
    a, b = g.arg(node, ins, 0), g.arg(node, ins, 1)
    w = scalar(g, node, node.w) if getattr(node, "w", None) is not None else g.arg(node, ins, 2, "weight")
    return g.add("Add", [a, g.add("Mul", [w, g.add("Sub", [b, a])])])


@converter("WhereBackward0")
def _where(g, node, ins):
    cond = np.asarray(node.cond, dtype=bool)
    value = g.array_value(cond)
    if value in g.inits:        # not an input: a constant at the traced sizes
        value = g.mask_const(g.inits.pop(value), *g.out_shapes(node), "where's condition")
    return g.add("Where", [value, g.arg(node, ins, 0), g.arg(node, ins, 1)])


@converter("TrilBackward0", "TriuBackward0")
def _tril(g, node, ins):            # the kept triangle, as the node keeps it (a mask over the last two dims)
    zero = np.zeros((), g.out(node)._data.dtype)
    mask = g.mask_const(np.asarray(node.mask, dtype=bool), *g.out_shapes(node), "tril / triu's mask")
    return g.add("Where", [mask, ins[0], g.const(zero)])


@converter("ToCopyBackward0")
def _to_copy(g, node, ins):
    return g.add("Cast", [ins[0]], to=g.onnx.helper.np_dtype_to_tensor_dtype(g.out(node)._data.dtype))


@converter("RepeatBackward0")
def _repeat(g, node, ins):
    x, reps, nd = ins[0], list(node.reps), len(node.in_shape)
    if len(reps) > nd:
        x = g.add("Unsqueeze", [x, g.ints(range(len(reps) - nd))])
    return g.add("Tile", [x, g.ints(reps)])


@converter("FlipBackward0")
def _flip(g, node, ins):
    dims = [int(d) for d in node.dims]
    big = np.iinfo(np.int64)
    return g.add("Slice", [ins[0], g.ints([-1] * len(dims)), g.ints([big.min] * len(dims)), g.ints(dims),
                           g.ints([-1] * len(dims))])


@converter("RollBackward0")
def _roll(g, node, ins):
    x, shape = ins[0], tuple(g.out(node).shape)
    dims = [int(d) for d in node.dims] if node.dims else None
    if dims is None:
        raise OnnxExporterError("glassgrad.onnx: roll without dims (over the flattened tensor)")
    for shift, d in zip(node.shifts, dims):
        n = shape[d]
        s = int(shift) % n if n else 0
        if s:
            tail = g.add("Slice", [x, g.ints([n - s]), g.ints([n]), g.ints([d])])
            head = g.add("Slice", [x, g.ints([0]), g.ints([n - s]), g.ints([d])])
            x = g.add("Concat", [tail, head], axis=d)
    return x


@converter("GluBackward0")
def _glu(g, node, ins):
    x, d = _unary(g, node, ins), int(node.dim)
    half = g.out(node).shape[d]
    a = g.add("Slice", [x, g.ints([0]), g.ints([half]), g.ints([d])])
    b = g.add("Slice", [x, g.ints([half]), g.ints([2 * half]), g.ints([d])])
    return g.add("Mul", [a, g.add("Sigmoid", [b])])


@converter("PixelShuffleBackward0")
def _pixel_shuffle(g, node, ins):
    if len(g.out(node).shape) != 4:
        raise OnnxExporterError("glassgrad.onnx: pixel_shuffle of a tensor that is not 4-D")
    return g.add("DepthToSpace", [ins[0]], blocksize=int(node.upscale_factor), mode="CRD")


def _onnx_pads(nd, torch_pad):
    """torch's pad list (last dim first, (begin, end) pairs) as ONNX's [begins..., ends...] over all dims."""
    begins, ends = [0] * nd, [0] * nd
    for i in range(len(torch_pad) // 2):
        begins[nd - 1 - i], ends[nd - 1 - i] = int(torch_pad[2 * i]), int(torch_pad[2 * i + 1])
    return begins + ends


@converter("ConstantPadNdBackward0")
def _constant_pad(g, node, ins):
    y = np.asarray(g.out(node)._data)
    filled = np.ones(y.shape, dtype=bool)
    filled[node.dst] = False           # the traced output outside the copied input holds the pad value
    value = y[filled].flat[0] if filled.any() else np.zeros((), y.dtype)
    pads = g.ints(_onnx_pads(len(node.shape), node.pad))
    return g.add("Pad", [ins[0], pads, g.const(np.asarray(value, dtype=y.dtype))], mode="constant")


@converter("ReflectionPad1DBackward0", "ReflectionPad2DBackward0", "ReflectionPad3DBackward0",
           "ReplicationPad1DBackward0", "ReplicationPad2DBackward0", "ReplicationPad3DBackward0")
def _mode_pad(g, node, ins):
    mode = "reflect" if type(node).__name__.startswith("Reflection") else "edge"
    return g.add("Pad", [_unary(g, node, ins), g.ints(_onnx_pads(len(node.shape), node.padding))], mode=mode)


@converter("UpsampleNearest1DBackward0", "UpsampleNearest2DBackward0", "UpsampleNearest3DBackward0",
           "UpsampleLinear1DBackward0", "UpsampleBilinear2DBackward0", "UpsampleTrilinear3DBackward0")
def _upsample(g, node, ins):
    in_shape, out = tuple(node.input_shape), tuple(g.out(node).shape)
    k = len(in_shape) - 2
    given = list(node.scales) if node.scales and all(s for s in node.scales) else None
    scales = given or [o / i for o, i in zip(out[2:], in_shape[2:])]
    scales = g.const(np.asarray([1.0, 1.0] + [float(s) for s in scales][:k], dtype=np.float32))
    if "Nearest" in type(node).__name__:
        return g.add("Resize", [ins[0], "", scales], mode="nearest", coordinate_transformation_mode="asymmetric",
                     nearest_mode="floor")
    mode = "align_corners" if node.align_corners else "pytorch_half_pixel"
    return g.add("Resize", [ins[0], "", scales], mode="linear", coordinate_transformation_mode=mode)


@converter("AdaptiveMaxPool2DBackward0", "AdaptiveMaxPool3DBackward0")
def _adaptive_max(g, node, ins):
    out = tuple(g.out(node).shape)
    k = 2 if "2D" in type(node).__name__ else 3
    if any(o != 1 for o in out[-k:]):
        raise OnnxExporterError("glassgrad.onnx: adaptive_max_pool to an output larger than 1")
    return reduce(g, "ReduceMax", ins[0], list(range(len(out) - k, len(out))), True)


@converter("IndexBackward0")
def _index(g, node, ins):
    """x[..., idx, ...] with one integer array and full slices elsewhere: Gather."""
    key = node.index if isinstance(node.index, tuple) else (node.index,)
    arrays = [i for i, k in enumerate(key) if isinstance(k, np.ndarray)]
    full = all(k == slice(None) for i, k in enumerate(key) if i not in arrays)
    if len(arrays) != 1 or not full or key[arrays[0]].dtype == bool:
        raise OnnxExporterError("glassgrad.onnx: advanced indexing other than one integer index array")
    return g.add("Gather", [ins[0], g.array_value(key[arrays[0]])], axis=arrays[0])
