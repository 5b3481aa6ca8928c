"""torch.onnx.ONNXProgram: what ``export(..., dynamo=True)`` (torch's default) returns -- the exported model, run
with onnxruntime (``__call__``) or onnx's reference evaluator (``call_reference``), and saved (``save``).

Unlike torch's, it holds an ``onnx.ModelProto`` (``model_proto``), not an ``onnx_ir`` model, and no
``torch.export.ExportedProgram`` (``exported_program`` is None): glassgrad traces the forward (see the package)."""
import copy
import textwrap

import numpy as np

from ._export import flat


class ONNXProgram:
    def __init__(self, model_proto, exported_program=None):
        self._proto = model_proto
        self.exported_program = exported_program
        self._inference_session = None

    def __repr__(self):
        import onnx
        return (f"ONNXProgram(\n    model=\n{textwrap.indent(onnx.printer.to_text(self._proto), ' ' * 8)}\n    ,\n"
                f"    exported_program=\n{textwrap.indent(str(self.exported_program), ' ' * 8)}\n)\n")

    @property
    def model_proto(self):
        """The ONNX ``ModelProto``."""
        return self._proto

    def _feeds(self, args, kwargs):
        names = [i.name for i in self._proto.graph.input]
        return dict(zip(names, flat((args, kwargs or {}), [], lambda t: t.detach().numpy(), np.asarray)))

    def initialize_inference_session(self, initializer=None):
        import onnxruntime as ort
        make = initializer or (lambda m: ort.InferenceSession(m, providers=["CPUExecutionProvider"]))
        self._inference_session = make(self._proto.SerializeToString())

    def release(self):
        self._inference_session = None

    def __call__(self, *args, **kwargs):
        """Run the model in onnxruntime on the same arguments as the model's forward; a tuple of tensors."""
        from .._tensor import _make
        if self._inference_session is None:
            self.initialize_inference_session()
        outs = self._inference_session.run(None, self._feeds(args, kwargs))
        return tuple(_make(np.asarray(o)) for o in outs)

    def call_reference(self, *args, **kwargs):
        """Run the model with onnx's reference evaluator; a tuple of tensors."""
        import onnx.reference
        from .._tensor import _make
        outs = onnx.reference.ReferenceEvaluator(self._proto).run(None, self._feeds(args, kwargs))
        return tuple(_make(np.asarray(o)) for o in outs)

    def save(self, destination, *, include_initializers=True, keep_initializers_as_inputs=False,
             external_data=None):
        """Write the model to `destination` (torch's initializer options; external_data: weights in a
        '<destination>.data' file)."""
        import onnx
        proto = self._proto
        if not include_initializers or keep_initializers_as_inputs:
            proto = copy.deepcopy(proto)
            graph = proto.graph
            if keep_initializers_as_inputs:
                have = {i.name for i in graph.input}
                graph.input.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                                   for t in graph.initializer if t.name not in have)
            if not include_initializers:
                del graph.initializer[:]
        if external_data:
            import os
            onnx.save_model(proto, os.fspath(destination), save_as_external_data=True, all_tensors_to_one_file=True,
                            location=os.path.basename(os.fspath(destination)) + ".data")
        else:
            onnx.save_model(proto, destination)
