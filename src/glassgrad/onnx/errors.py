"""torch.onnx.errors: the exporter's exceptions, under torch's names and messages."""
__all__ = ["OnnxExporterError", "OnnxExporterWarning", "SymbolicValueError", "UnsupportedOperatorError"]


class OnnxExporterWarning(UserWarning):
    """Warnings in the ONNX exporter."""


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


class UnsupportedOperatorError(OnnxExporterError):
    """Raised when an operator is unsupported by the exporter (torch's message, word for word)."""

    def __init__(self, name, version, supported_version):
        if supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not supported. Support for "
                   f"this operator was added in version {supported_version}, try exporting with this version")
        elif name.startswith(("aten::", "prim::", "quantized::")):
            msg = f"Exporting the operator '{name}' to ONNX opset version {version} is not supported"
        else:
            msg = (f"ONNX export failed on an operator with unrecognized namespace {name}. If you are trying to "
                   "export a custom operator, make sure you registered it with the right domain and version.")
        super().__init__(msg)


class SymbolicValueError(OnnxExporterError):
    """Errors around TorchScript values and nodes (kept for torch's name; glassgrad's exporter does not raise it)."""

    def __init__(self, msg, value=None):
        super().__init__(msg)
