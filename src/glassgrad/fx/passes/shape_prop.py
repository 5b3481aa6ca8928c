"""torch.fx.passes.shape_prop: ShapeProp runs a GraphModule on sample inputs and records, on every node, the
metadata of each tensor it produced (``node.meta["tensor_meta"]``, a TensorMetadata or the same nested structure
of them as the node's value) and the value's type (``node.meta["type"]``)."""
import traceback
from typing import Any, NamedTuple

import glassgrad as _gg
from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: Any
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result, include_contiguity=True):
    """The TensorMetadata of `result`: its memory format is the first of contiguous / channels_last /
    channels_last_3d it is contiguous in (None for none of them, or a sparse tensor, which has no strides)."""
    sparse = result.layout != _gg.strided
    memory_format = None
    if include_contiguity and not sparse:
        for fmt in (_gg.contiguous_format, _gg.channels_last, _gg.channels_last_3d):
            try:
                ok = result.is_contiguous(memory_format=fmt)
            except RuntimeError:        # channels_last of a tensor that is not 4-d (torch's "or_false")
                ok = False
            if ok:
                memory_format = fmt
                break
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, () if sparse else result.stride(),
                          memory_format, False, {})


class ShapeProp(Interpreter):
    """Interpret `gm` node by node, recording each node's tensor metadata and result type."""

    def __init__(self, gm, fake_mode=None):
        if fake_mode is not None:
            raise RuntimeError("glassgrad.fx: ShapeProp has no fake_mode (glassgrad has no fake tensors); "
                               "propagate real sample inputs")
        super().__init__(gm)
        self.fake_mode = None
        self.fake_module = None
        self.real_module = self.module

    def run_node(self, n):
        try:
            result = super().run_node(n)
        except Exception as e:
            traceback.print_exc()
            raise RuntimeError(f"ShapeProp error for: node={n.format_node()} with meta={n.meta}") from e
        found_tensor = False

        def extract_tensor_meta(obj):
            nonlocal found_tensor
            if isinstance(obj, _gg.Tensor):
                found_tensor = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract_tensor_meta)
        if found_tensor:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the module on `args` through the interpreter, recording each node's shape and type; its result."""
        return super().run(*args)
