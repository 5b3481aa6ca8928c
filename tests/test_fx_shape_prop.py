"""torch.fx.passes.shape_prop.ShapeProp against torch's: every node's tensor_meta (shape, dtype, requires_grad,
strides, memory format, quantization) and type, for contiguous and channels_last inputs; its error wrapping."""
import importlib

import numpy as np
import pytest
import torch

import glassgrad

MODS = (torch, glassgrad)


def _model(T):
    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = T.nn.Conv2d(3, 4, 3)
            self.bn = T.nn.BatchNorm2d(4)
            self.l = T.nn.Linear(4, 2)

        def forward(self, x):
            y = self.bn(self.c(x)).relu()
            z = y.mean((2, 3))
            return self.l(z), y.shape[0], (z.t(), [z.sum()]), {"i": x.long()}
    return M()


def _norm(meta):
    """A comparable form of a node's tensor_meta (torch.Size / dtype / format objects by their names)."""
    if isinstance(meta, tuple) and hasattr(meta, "_fields"):
        return (tuple(meta.shape), str(meta.dtype).split(".")[-1], meta.requires_grad, tuple(meta.stride),
                str(meta.memory_format), meta.is_quantized, dict(meta.qparams))
    if isinstance(meta, (list, tuple)):
        return [_norm(m) for m in meta]
    if isinstance(meta, dict):
        return {k: _norm(v) for k, v in meta.items()}
    return meta


def _propagate(T, fmt):
    T.manual_seed(0)
    gm = importlib.import_module(T.__name__ + ".fx").symbolic_trace(_model(T))
    sp = importlib.import_module(T.__name__ + ".fx.passes.shape_prop")
    x = T.tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))
    x = x.to(memory_format=getattr(T, fmt))
    out = sp.ShapeProp(gm).propagate(x)
    metas = [(n.name, n.meta["type"].__name__, _norm(n.meta.get("tensor_meta"))) for n in gm.graph.nodes]
    return out, metas, sp


@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last"])
def test_shape_prop_meta_as_torch(fmt):
    t_out, t_meta, _ = _propagate(torch, fmt)
    g_out, g_meta, sp = _propagate(glassgrad, fmt)
    assert g_meta == t_meta
    assert type(g_out).__name__ == type(t_out).__name__ and g_out[1] == t_out[1]
    assert sp.TensorMetadata._fields == torch.fx.passes.shape_prop.TensorMetadata._fields
    if fmt == "channels_last":       # the formats are really read off the strides
        assert any("channels_last" in str(m) for _, _, m in g_meta)


def test_shape_prop_error_is_wrapped():
    for T in MODS:
        fx = importlib.import_module(T.__name__ + ".fx")
        sp = importlib.import_module(T.__name__ + ".fx.passes.shape_prop")
        gm = fx.symbolic_trace(T.nn.Linear(3, 2))
        with pytest.raises(RuntimeError, match="ShapeProp error for: node=") as e:
            sp.ShapeProp(gm).propagate(T.zeros(2, 5))
        assert isinstance(e.value.__cause__, RuntimeError)
