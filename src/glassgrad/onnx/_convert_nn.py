"""Converters of the layer nodes: convolution, pooling, normalization, attention, LSTM."""
import numpy as np

from ._convert import reduce, scalar
from ._graph import converter
from .errors import OnnxExporterError


def _ints(v, n):
    return [int(x) for x in v] if isinstance(v, (tuple, list)) else [int(v)] * n


@converter("ConvolutionBackward0")
def _conv(g, node, ins):
    x, w = g.arg(node, ins, 0, "input"), g.arg(node, ins, 1, "weight")
    inputs = [x, w] + ([ins[2]] if len(ins) > 2 and ins[2] is not None else [])
    if node.bias_sym_sizes_opt is not None and len(inputs) == 2:
        raise OnnxExporterError("glassgrad.onnx: the convolution's bias has no recorded value")
    nd = len(node.stride)
    pads = _ints(node.padding, nd)
    attrs = dict(strides=_ints(node.stride, nd), pads=pads + pads, dilations=_ints(node.dilation, nd),
                 group=int(node.groups))
    if node.transposed:
        return g.add("ConvTranspose", inputs, output_padding=_ints(node.output_padding, nd), **attrs)
    return g.add("Conv", inputs, **attrs)


def _batched(g, node, x, build):
    """ONNX pools want a batch dim: add one for an unbatched input and take it off again."""
    if getattr(node, "batched", True):
        return build(x)
    zero = g.ints([0])
    return g.add("Squeeze", [build(g.add("Unsqueeze", [x, zero])), zero])


@converter("MaxPool2DWithIndicesBackward0", "MaxPool3DWithIndicesBackward0")
def _maxpool(g, node, ins):
    nd = len(node.kernel_size)
    pads = _ints(node.padding, nd)
    attrs = dict(kernel_shape=_ints(node.kernel_size, nd), strides=_ints(node.stride, nd), pads=pads + pads,
                 dilations=_ints(node.dilation, nd), ceil_mode=int(bool(node.ceil_mode)))
    return _batched(g, node, ins[0], lambda x: g.add("MaxPool", [x], **attrs))


@converter("AvgPool2DBackward0", "AvgPool3DBackward0")
def _avgpool(g, node, ins):
    if node.divisor_override is not None:
        raise OnnxExporterError("glassgrad.onnx: avg_pool with divisor_override has no ONNX AveragePool")
    nd = len(node.kernel_size)
    pads = _ints(node.padding, nd)
    attrs = dict(kernel_shape=_ints(node.kernel_size, nd), strides=_ints(node.stride, nd), pads=pads + pads,
                 ceil_mode=int(bool(node.ceil_mode)), count_include_pad=int(bool(node.count_include_pad)))
    return _batched(g, node, ins[0], lambda x: g.add("AveragePool", [x], **attrs))


@converter("AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool3DBackward0")
def _adaptive_avg(g, node, ins):
    shape, out = tuple(node.self_sym_sizes), tuple(g.out(node).shape)
    k = len(shape) - 2 if len(shape) == len(out) and len(shape) > 3 else len(shape) - 1
    ins_sp, out_sp = shape[-k:], out[-k:]
    if all(o == 1 for o in out_sp):
        return reduce(g, "ReduceMean", ins[0], list(range(len(shape) - k, len(shape))), True)
    if any(i % o for i, o in zip(ins_sp, out_sp)):
        raise OnnxExporterError(f"glassgrad.onnx: adaptive_avg_pool from {ins_sp} to {out_sp}: the sizes do not "
                                "divide (no ONNX AveragePool equals it)")
    kernel = [i // o for i, o in zip(ins_sp, out_sp)]
    return _batched(g, node, ins[0], lambda x: g.add("AveragePool", [x], kernel_shape=kernel, strides=kernel))


def _affine(g, node, ins, x, bshape):
    """x * weight + bias with weight / bias reshaped to `bshape` (absent ones skipped)."""
    shape = g.ints(bshape)
    for i, op in ((1, "Mul"), (2, "Add")):
        if len(ins) > i and ins[i] is not None:
            x = g.add(op, [x, g.add("Reshape", [ins[i], shape])])
    return x


@converter("NativeBatchNormBackward0")
def _batch_norm(g, node, ins):
    if node.training:          # batch statistics (instance norm, no running stats): the forward's formula
        x, axes = ins[0], [int(a) for a in node.axes]
        centred = g.add("Sub", [x, reduce(g, "ReduceMean", x, axes, True)])
        var = reduce(g, "ReduceMean", g.add("Mul", [centred, centred]), axes, True)
        y = g.add("Div", [centred, g.add("Sqrt", [g.add("Add", [var, scalar(g, node, node.eps)])])])
        return _affine(g, node, ins, y, list(node.bshape))
    c = node.bshape[1]
    mean, var = g.tensor_value(node._saved_running_mean), g.tensor_value(node._saved_running_var)
    dt = np.float64 if node.bshape and g.out(node)._data.dtype == np.float64 else np.float32
    w = ins[1] if len(ins) > 1 and ins[1] is not None else g.const(np.ones(c, dt))
    b = ins[2] if len(ins) > 2 and ins[2] is not None else g.const(np.zeros(c, dt))
    return g.add("BatchNormalization", [ins[0], w, b, mean, var], epsilon=float(node.eps))


@converter("NativeLayerNormBackward0")
def _layer_norm(g, node, ins):
    axes = [int(a) for a in node.axes]
    if g.opset >= 17:
        shape = tuple(g.out(node).shape[axes[0]:])
        dt = g.out(node)._data.dtype
        w = ins[1] if len(ins) > 1 and ins[1] is not None else g.const(np.ones(shape, dt))
        inputs = [ins[0], w] + ([ins[2]] if len(ins) > 2 and ins[2] is not None else [])
        return g.add("LayerNormalization", inputs, axis=axes[0], epsilon=float(node.eps))
    x = ins[0]
    centred = g.add("Sub", [x, reduce(g, "ReduceMean", x, axes, True)])
    var = reduce(g, "ReduceMean", g.add("Mul", [centred, centred]), axes, True)
    y = g.add("Div", [centred, g.add("Sqrt", [g.add("Add", [var, scalar(g, node, node.eps)])])])
    shape = tuple(g.out(node).shape[axes[0]:])
    return _affine(g, node, ins, y, shape)


@converter("NativeGroupNormBackward0")
def _group_norm(g, node, ins):
    x = ins[0]
    groups = int(node.gshape[1])
    grouped = g.add("Reshape", [x, g.ints([0, groups, -1])])
    centred = g.add("Sub", [grouped, reduce(g, "ReduceMean", grouped, [2], True)])
    var = reduce(g, "ReduceMean", g.add("Mul", [centred, centred]), [2], True)
    y = g.add("Div", [centred, g.add("Sqrt", [g.add("Add", [var, scalar(g, node, node.eps)])])])
    y = g.add("Reshape", [y, g.add("Shape", [x])])
    return _affine(g, node, ins, y, [1] + list(node.bshape[1:]))


@converter("ScaledDotProductFlashAttentionForCpuBackward0")
def _sdpa(g, node, ins):
    q, k, v = (g.arg(node, ins, i, n) for i, n in enumerate(("query", "key", "value")))
    if node.groups > 1:
        raise OnnxExporterError("glassgrad.onnx: scaled_dot_product_attention with enable_gqa (grouped heads)")
    rank = len(g.out(node).shape)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    att = g.add("MatMul", [q, g.add("Transpose", [k], perm=perm)])
    att = g.add("Mul", [att, scalar(g, node, node.scale)])
    if node.mask is not None:
        out, out2 = g.out_shapes(node)
        k_node, k_nr = node.next_functions[1]
        if k_node is not None and g.dynamic:          # the mask's shape: (..., L, S), S from the keys
            k1, k2 = g.out_shapes(k_node, k_nr)
            out, out2 = out[:-1] + k1[-2:-1], out2[:-1] + k2[-2:-1]
        mask = np.asarray(node.mask, dtype=g.out(node)._data.dtype)
        att = g.add("Add", [att, g.mask_const(mask, out, out2, "an attention mask")])
    return g.add("MatMul", [g.add("Softmax", [att], axis=-1), v])


_ONNX_GATES = {2: [0, 3, 1, 2], 3: [1, 0, 2]}    # torch's gate blocks in ONNX's order: LSTM ifgo -> iofc, GRU rzn -> zrh


@converter("MkldnnRnnLayerBackward0")
def _lstm_layer(g, node, ins):
    """One LSTM layer and direction (torch's mkldnn_rnn_layer): ONNX LSTM over the time-major input."""
    if node.mode != 2 or node.batch_sizes:
        raise OnnxExporterError("glassgrad.onnx: only LSTM layers over a padded (not packed) sequence are supported")
    H = int(node.hidden_size)
    order = _ONNX_GATES[2]

    def weight(i, name):
        edge = node.next_functions[i][0]
        t = getattr(edge, "variable", None) if edge is not None else getattr(node, "_saved_" + name)
        if t is None:
            raise OnnxExporterError("glassgrad.onnx: an LSTM weight computed in the forward is not supported")
        a = np.asarray(t._data)
        return np.concatenate([a[j * H:(j + 1) * H] for j in order])[None]

    w, r = weight(1, "weight0"), weight(2, "weight1")
    inputs = [g.arg(node, ins, 0, "input"), g.const(w), g.const(r)]
    if node.has_biases:
        inputs.append(g.const(np.concatenate([weight(3, "weight2"), weight(4, "weight3")], axis=1)))
    else:
        inputs.append("")
    zero = g.ints([0])
    inputs.append("")      # sequence_lens
    for i, name in ((5, "hx_"), (6, "cx_")):
        edge = node.next_functions[i][0]
        t = getattr(edge, "variable", None) if edge is not None else getattr(node, "_saved_" + name)
        if t is not None and t._grad_fn is None and id(t) not in g.inputs and not np.asarray(t._data).any():
            inputs.append("")           # zeros made in the forward: ONNX's default, free of the traced batch size
        else:
            inputs.append(g.add("Unsqueeze", [g.arg(node, ins, i, name), zero]))
    while inputs[-1] == "":
        inputs.pop()
    y, yh, yc = g.add("LSTM", inputs, n_out=3, hidden_size=H, direction="reverse" if node.reverse else "forward")
    one = g.ints([1])
    return [g.add("Squeeze", [y, one]), g.add("Squeeze", [yh, zero]), g.add("Squeeze", [yc, zero])]
