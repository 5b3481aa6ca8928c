"""torch.onnx: export a model's forward as an ONNX model (through the optional ``onnx`` package).

How it traces (one honest design, with its limits). ``export`` runs the model's forward once on the example
inputs and reads the operators off the **autograd graph** that run records: every glassgrad op makes a grad_fn
node named as torch's (``AddmmBackward0``, ``ConvolutionBackward0``, ...) that keeps what its backward needs
(dims, strides, scalars, saved tensors), which is also what an ONNX node needs. To make every op of the forward
record its node, the trace

* runs under ``enable_grad``, with the example inputs as fresh leaves that require grad, and with every
  floating parameter and buffer of the model (except batch norm's running statistics, which its op refuses)
  requiring grad for the duration (restored afterwards);
* watches tensor creation (the ``_grad_state.watching`` hook the glass box uses): a floating tensor made in the
  forward without a node (``torch.zeros`` for an LSTM's state, an ``arange`` for positions) gets a
  ``TraceConstant`` node holding its value then, so that it reaches the graph as a constant and may still be
  written in place (``pe[:, 0::2] = ...`` records CopySlices, exported as a scatter); ``x.detach()`` /
  ``x.data`` get a ``TraceDetach`` node (an Identity); the hook also maps each node to the tensor it produced
  (a reshape reads its output size from it).

The nodes reachable from the outputs are then handed, inputs first, to a converter per node class
(``_convert.py``: pointwise, reductions, matrix products, views; ``_convert_nn.py``: convolution, pooling,
normalization, attention, LSTM). A node class without one raises torch's ``UnsupportedOperatorError``
("Exporting the operator 'aten::cumprod' to ONNX opset version 20 is not supported").

Limits, as for any tracer: control flow is fixed by the example inputs. Values computed *without* a gradient
path are not recorded ops: an integer or boolean tensor computed from the inputs (``x > 0``, ``argmax``, integer
arithmetic) becomes a constant of its traced value (a mask a node keeps), or, where a node needs it and did not
keep it, an export error; an input that reaches the graph only that way gets an OnnxExporterWarning; code
under ``no_grad`` inside forward is not recorded. Integer inputs are recognised where a node keeps an equal
array (embedding's indices). An LSTM layer is one ONNX LSTM node; GRU and RNN layers, which glassgrad computes
step by step, are exported unrolled over the traced sequence length.

Dynamic axes: a second trace runs with each dynamic input axis one longer. A size that differs between the two
traces and follows a dynamic axis is read from that input's Shape at run time, a single other varying size in
a shape becomes Reshape's -1, a uniform constant made in the forward with such a size (an RNN's zero state)
becomes ConstantOfShape, and a mask a node keeps is cut to size 1 along such an axis when it is uniform along
it; a non-uniform one (an ``arange`` of the length, a causal mask for a dynamic length), two unexplained
sizes in one shape, an in-place write into such a tensor, or a forward that records other operators at the
other size is an export error. Opsets 13 to 20.
"""
import contextlib
import enum
import io
import os

from .errors import OnnxExporterError, UnsupportedOperatorError   # noqa: F401
from . import errors      # noqa: F401
from ._program import ONNXProgram
from ..version import __version__

__all__ = ["export", "is_in_onnx_export", "select_model_mode_for_export", "OperatorExportTypes", "TrainingMode",
           "OnnxExporterError", "ONNXProgram", "errors", "producer_name", "producer_version"]

producer_name = "glassgrad"
producer_version = __version__       # glassgrad's (torch's module gives torch's)
_MIN_OPSET, _MAX_OPSET, _DEFAULT_OPSET = 13, 20, 20
_state = {"exporting": False}


class OperatorExportTypes(enum.Enum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class TrainingMode(enum.Enum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def is_in_onnx_export():
    """True while ``export`` runs the model's forward."""
    return _state["exporting"]


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    """Set ``model``'s training mode to ``mode`` (a TrainingMode) for the with-block, then restore it."""
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"'mode' should be a torch.onnx.TrainingMode enum, but got '{type(mode)}'.")
    originally = getattr(model, "training", None)
    if originally is not None:
        model.train(mode == TrainingMode.TRAINING or (mode == TrainingMode.PRESERVE and originally))
    try:
        yield
    finally:
        if originally is not None:
            model.train(originally)


def _axes_from_shapes(model, dynamic_shapes, input_names):
    """torch.export's dynamic_shapes (per input, by position or by forward's parameter name: {axis: Dim or name})
    as dynamic_axes over the graph's input names (forward's parameter names where none are given)."""
    import inspect
    params = [p for p in inspect.signature(getattr(model, "forward", model)).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = list(input_names) if input_names else [p.name for p in params]
    specs = dynamic_shapes.values() if isinstance(dynamic_shapes, dict) else dynamic_shapes
    keys = list(dynamic_shapes) if isinstance(dynamic_shapes, dict) else list(range(len(specs)))
    axes = {}
    for key, spec in zip(keys, specs):
        i = [p.name for p in params].index(key) if isinstance(key, str) else key
        if spec is None or i >= len(names):
            continue
        items = spec.items() if isinstance(spec, dict) else ((a, d) for a, d in enumerate(spec) if d is not None)
        axes[names[i]] = {int(a): d if isinstance(d, str) else getattr(d, "__name__", f"{names[i]}_dim_{a}")
                          for a, d in items}
    return axes, names


def _import_onnx():
    try:
        import onnx
    except ModuleNotFoundError as e:
        if e.name != "onnx":
            raise
        raise ModuleNotFoundError("torch.onnx.export needs the 'onnx' package, which is not installed: "
                                  "pip install 'glassgrad[onnx]' (or: pip install onnx)", name="onnx") from None
    return onnx


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None, output_names=None,
           opset_version=None, dynamo=True, external_data=True, dynamic_shapes=None, export_params=True,
           keep_initializers_as_inputs=False, dynamic_axes=None, training=TrainingMode.EVAL,
           operator_export_type=OperatorExportTypes.ONNX, do_constant_folding=True, **unused):
    """Trace ``model(*args, **kwargs)`` once and write it to ``f`` (a path or a binary file) as an ONNX model.

    ``dynamic_shapes`` (torch.export's form: per input, by position or by forward's parameter name, {axis: Dim
    or name}) is read as ``dynamic_axes`` over inputs named after forward's parameters.
    glassgrad has one exporter (the trace described in this module's doc) for both values of ``dynamo``; as
    torch, ``dynamo=True`` (the default) returns an ``ONNXProgram`` (``f`` may then be None), ``dynamo=False``
    returns None."""
    onnx = _import_onnx()
    from . import _export
    opset = _DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not _MIN_OPSET <= opset <= _MAX_OPSET:
        raise ValueError(f"Unsupported ONNX opset version: {opset}")
    if dynamic_shapes is not None:
        if dynamic_axes is not None:
            raise ValueError("give dynamic_shapes or dynamic_axes, not both")
        dynamic_axes, input_names = _axes_from_shapes(model, dynamic_shapes, input_names)
    if not isinstance(training, TrainingMode):
        raise TypeError(f"'mode' should be a torch.onnx.TrainingMode enum, but got '{type(training)}'.")
    if operator_export_type != OperatorExportTypes.ONNX:
        raise OnnxExporterError("glassgrad.onnx.export writes standard ONNX only (operator_export_type=ONNX)")
    if not isinstance(args, tuple):
        args = (args,)
    if args and isinstance(args[-1], dict) and kwargs is None:
        args, kwargs = args[:-1], args[-1]
    with select_model_mode_for_export(model, training) if hasattr(model, "train") else contextlib.nullcontext():
        _state["exporting"] = True
        try:
            proto = _export.export_model(onnx, model, args, dict(kwargs or {}), opset, input_names, output_names,
                                         dynamic_axes, export_params, keep_initializers_as_inputs,
                                         do_constant_folding)
        finally:
            _state["exporting"] = False
    if verbose:
        print(onnx.printer.to_text(proto.graph))
    if f is not None:
        data = proto.SerializeToString()
        if isinstance(f, (str, os.PathLike)):
            with open(f, "wb") as fh:
                fh.write(data)
        elif isinstance(f, io.IOBase) or hasattr(f, "write"):
            f.write(data)
        else:
            raise TypeError(f"f must be a path or a binary file, not {type(f).__name__}")
    elif not dynamo:
        raise ValueError("f must be given when dynamo=False")
    return ONNXProgram(proto) if dynamo else None
