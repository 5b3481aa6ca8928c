"""Converters of the trace's own nodes (TraceConstant, TraceDetach) and of in-place writes: CopySlices (a
write into a view of a tensor) and the view taken again from a rewritten base (autograd's AsStridedBackward0)."""
import numpy as np

from .._tensor import _make
from ._convert import _dispatch_view, sliced
from ._graph import CONVERTERS, converter
from .errors import OnnxExporterError, UnsupportedOperatorError
from ._graph import aten_name


@converter("TraceConstant")
def _trace_constant(g, node, ins):
    a = np.asarray(node.value)
    return g.constant(a, g.shape2.get((id(node), 0), a.shape) if g.dynamic else a.shape)


@converter("TraceDetach")
def _trace_detach(g, node, ins):
    return g.add("Identity", [ins[0]])


@converter("CopyBackwards")
def _copy(g, node, ins):            # x.copy_(src): src broadcast to x's shape, in x's dtype
    out = g.out(node)
    to = g.onnx.helper.np_dtype_to_tensor_dtype(out._data.dtype)
    src = g.add("Cast", [ins[1]], to=to)
    return g.add("Expand", [src, g.ints(out.shape)])


def _positions(shape, view_fn):
    base = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    return np.asarray(view_fn(base))


@converter("CopySlices")
def _copy_slices(g, node, ins):
    """base[view] = fn(base[view], *others): the new view's values scattered into the flattened base at the
    view's flat positions (a static layout: not along a dynamic axis)."""
    shape = tuple(node.shape)
    if g.dynamic and tuple(g.shape2.get((id(node), 0), shape)) != shape:
        raise OnnxExporterError("glassgrad.onnx: an in-place write into a view of a tensor whose size follows a "
                                "dynamic axis; export that axis static")
    pos = _positions(shape, node.view_fn)
    fn = node.fn
    dtype = g.out(node)._data.dtype if (id(node), 0) in g.made else np.float32
    g.made.setdefault((id(fn), 0), _make(np.zeros(pos.shape, dtype)))      # fn's output: the view's new value
    convert = CONVERTERS.get(type(fn).__name__)
    if convert is None:
        raise UnsupportedOperatorError(aten_name(type(fn).__name__), g.opset, None)
    old_view = sliced(g, ins[0], shape, node.view_fn)
    new_view = convert(g, fn, [old_view] + list(ins[1:]))
    new_view = new_view[0] if isinstance(new_view, list) else new_view
    updates = g.add("Reshape", [g.add("Expand", [new_view, g.ints(pos.shape)]), g.ints([-1])])
    flat = g.add("Reshape", [ins[0], g.ints([-1])])
    scattered = g.add("ScatterElements", [flat, g.ints(pos.reshape(-1)), updates], axis=0)
    return g.add("Reshape", [scattered, g.ints(shape)])


@converter("AsStridedBackward0")
def _view_of_rewritten(g, node, ins):
    """autograd's AsStridedBackward0 is a view taken again from a base rewritten in place; ops/strided.py's
    (as_strided) is a view node like the others."""
    if getattr(node, "view_fn", None) is not None:
        return sliced(g, ins[0], tuple(node.shape), node.view_fn)
    return _dispatch_view(g, node, ins)
