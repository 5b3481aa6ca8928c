"""torch.onnx.export of single operators: each exported function of (x, y) runs in onnxruntime and gives
glassgrad's values and the values of torch's own export of the same function (float32 tolerances);
opset-dependent converters under an old and a new opset."""
import io

import numpy as np
import pytest

import glassgrad

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import torch

OPS = {
    "where": lambda T, F, x, y: T.where(x > 0, x, y), "maximum": lambda T, F, x, y: T.maximum(x, y),
    "minimum": lambda T, F, x, y: T.minimum(x, y), "amax": lambda T, F, x, y: x.amax(1), "max_dim": lambda T, F, x, y: x.max(1)[0],
    "min_all": lambda T, F, x, y: x.min() + y, "cumsum": lambda T, F, x, y: x.cumsum(1), "index": lambda T, F, x, y: x[:, [0, 2]],
    "pad": lambda T, F, x, y: F.pad(x, (1, 1, 2, 0), value=0.5), "pad_crop": lambda T, F, x, y: F.pad(x, (-1, 1)),
    "pad_reflect": lambda T, F, x, y: F.pad(x, (1, 1, 1, 1), mode="reflect"),
    "pad_replicate": lambda T, F, x, y: F.pad(x, (2, 1, 1, 0), mode="replicate"),
    "nearest": lambda T, F, x, y: F.interpolate(x, scale_factor=2), "nearest_size": lambda T, F, x, y: F.interpolate(x, size=(6, 8)),
    "bilinear": lambda T, F, x, y: F.interpolate(x, size=(6, 7), mode="bilinear"),
    "bilinear_ac": lambda T, F, x, y: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
    "hardswish": lambda T, F, x, y: F.hardswish(x), "hardsigmoid": lambda T, F, x, y: F.hardsigmoid(x),
    "softplus": lambda T, F, x, y: F.softplus(x, beta=2), "mish": lambda T, F, x, y: F.mish(x), "logsigmoid": lambda T, F, x, y: F.logsigmoid(x),
    "prelu": lambda T, F, x, y: F.prelu(x, T.tensor([0.1, 0.2, 0.3])), "log1p": lambda T, F, x, y: x.abs().log1p(),
    "relu6": lambda T, F, x, y: F.relu6(x * 4), "elu": lambda T, F, x, y: F.elu(x, 0.7), "selu": lambda T, F, x, y: F.selu(x),
    "celu": lambda T, F, x, y: F.celu(x, 1.5), "repeat": lambda T, F, x, y: x.repeat(2, 1, 1, 1, 2),
    "norm2": lambda T, F, x, y: x.norm(dim=1), "norm1": lambda T, F, x, y: T.linalg.vector_norm(x, 1, dim=(2, 3)),
    "normalize": lambda T, F, x, y: F.normalize(x, dim=1), "var": lambda T, F, x, y: x.var(1), "std": lambda T, F, x, y: x.std((2, 3), keepdim=True),
    "baddbmm": lambda T, F, x, y: T.baddbmm(x[0], x[0], y[0], beta=0.5, alpha=2), "instance_norm": lambda T, F, x, y: F.instance_norm(x),
    "rsqrt": lambda T, F, x, y: (x.abs() + 1).rsqrt(), "div": lambda T, F, x, y: x / (y.abs() + 1), "sub_alpha": lambda T, F, x, y: T.sub(x, y, alpha=2),
    "matmul4d": lambda T, F, x, y: x @ y, "chunk": lambda T, F, x, y: x.chunk(2, 2)[1], "flip": lambda T, F, x, y: x.flip(1, 3),
    "roll": lambda T, F, x, y: x.roll((1, -1), (2, 3)), "tril": lambda T, F, x, y: x.tril(), "triu": lambda T, F, x, y: x.triu(1),
    "glu": lambda T, F, x, y: F.glu(x, 2), "pixel_shuffle": lambda T, F, x, y: F.pixel_shuffle(x.repeat(1, 4, 1, 1)[:, :4], 2),
    "conv_transpose": lambda T, F, x, y: F.conv_transpose2d(x, T.ones(3, 2, 2, 2) / 4, stride=2),
    "maxpool_ceil": lambda T, F, x, y: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), "avgpool1d": lambda T, F, x, y: F.avg_pool1d(x[0], 2),
    "avgpool_pad": lambda T, F, x, y: F.avg_pool2d(x, 3, 1, 1, count_include_pad=False),
    "adaptive_max": lambda T, F, x, y: F.adaptive_max_pool2d(x, 1), "adaptive_avg": lambda T, F, x, y: F.adaptive_avg_pool2d(x, (2, 1)),
    "pow_tensor": lambda T, F, x, y: x.abs().pow(y), "pow_base": lambda T, F, x, y: T.pow(2.0, x), "pow": lambda T, F, x, y: x.pow(3),
    "masked_inf": lambda T, F, x, y: x.masked_fill(T.ones(4, 4).triu(1).bool(), float("-inf")).softmax(-1),
    "erf_sin_cos": lambda T, F, x, y: T.erf(x) + x.sin() * y.cos(), "clamp": lambda T, F, x, y: x.clamp(min=-0.1, max=0.5),
    "cast": lambda T, F, x, y: x.double().float(), "addcmul": lambda T, F, x, y: T.addcmul(x, x, y, value=0.5),
    "addcdiv": lambda T, F, x, y: T.addcdiv(x, x, y.abs() + 1), "lerp": lambda T, F, x, y: T.lerp(x, y, 0.3),
    "gelu_tanh": lambda T, F, x, y: F.gelu(x, approximate="tanh"), "silu": lambda T, F, x, y: F.silu(x),
    "layer_norm": lambda T, F, x, y: F.layer_norm(x, (4, 4)), "expand": lambda T, F, x, y: x[:, :1].expand(-1, 3, -1, -1) * y,
    "sum_mean": lambda T, F, x, y: x.sum((1, 2), keepdim=True) - x.mean(), "stack": lambda T, F, x, y: T.stack([x, y], 2),
    "unbind": lambda T, F, x, y: x.unbind(1)[2], "narrow": lambda T, F, x, y: x.narrow(3, 1, 2), "select_neg": lambda T, F, x, y: x[:, -1, 1:3:2],
    "maxpool3d": lambda T, F, x, y: F.max_pool3d(x.unsqueeze(1), 2), "avgpool3d": lambda T, F, x, y: F.avg_pool3d(x.unsqueeze(1), 2),
    "adaptive_avg3d": lambda T, F, x, y: F.adaptive_avg_pool3d(x.unsqueeze(1), (3, 2, 2)),
    "conv3d": lambda T, F, x, y: F.conv3d(x.unsqueeze(1), T.ones(2, 1, 2, 2, 2) / 8, padding=1),
    "conv1d": lambda T, F, x, y: F.conv1d(x[0], T.ones(2, 4, 3) / 12, stride=2, padding=1),
    "trilinear": lambda T, F, x, y: F.interpolate(x.unsqueeze(1), scale_factor=2, mode="trilinear"),
    "linear1d": lambda T, F, x, y: F.interpolate(x[0], size=7, mode="linear"), "nearest1d": lambda T, F, x, y: F.interpolate(x[0], size=9),
    "reflect1d": lambda T, F, x, y: F.pad(x[0], (2, 1), mode="reflect"), "maxpool1d": lambda T, F, x, y: F.max_pool1d(x[0], 2),
    "none_index": lambda T, F, x, y: x[:, None, 1], "transpose_t": lambda T, F, x, y: x[0, 0].t() @ y[0, 0], "sdpa": lambda T, F, x, y: F.scaled_dot_product_attention(x, y, y),
}


def _module(lib, fn):
    class Fn(lib.nn.Module):
        def forward(self, x, y):
            return fn(lib, lib.nn.functional, x, y)
    return Fn()


def _ort(lib, fn, x, y, opset):
    buf = io.BytesIO()
    lib.onnx.export(_module(lib, fn), (lib.from_numpy(x), lib.from_numpy(y)), buf, input_names=["x", "y"],
                    opset_version=opset, dynamo=False)
    onnx.checker.check_model(onnx.load_from_string(buf.getvalue()))
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: v for i, v in zip(sess.get_inputs(), (x, y)) if i.name in "xy"})[0]


def _run(fn, opset=None, against_torch=False):
    g = np.random.default_rng(3)
    x, y = (g.standard_normal((2, 3, 4, 4)).astype(np.float32) for _ in range(2))
    got = _ort(glassgrad, fn, x, y, opset)
    want = _module(glassgrad, fn)(glassgrad.from_numpy(x), glassgrad.from_numpy(y)).detach().numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if against_torch:        # torch's own export of the same function, run in onnxruntime
        np.testing.assert_allclose(got, _ort(torch, fn, x, y, opset), rtol=1e-5, atol=1e-5)


# operators torch 2.13's TorchScript exporter does not export (checked: it raises for each)
TORCH_CANNOT = {"addcdiv"}


@pytest.mark.parametrize("name", list(OPS))
def test_operator(name):
    _run(OPS[name], against_torch=name not in TORCH_CANNOT)


@pytest.mark.parametrize("name", sorted(TORCH_CANNOT))
def test_operators_torch_does_not_export(name):
    with pytest.raises(torch.onnx.errors.UnsupportedOperatorError, match=f"operator 'aten::{name}'"):
        _run(OPS[name], against_torch=True)


@pytest.mark.parametrize("name", ["hardswish", "mish", "gelu_tanh", "layer_norm", "amax", "sum_mean", "norm2"])
@pytest.mark.parametrize("opset", [13, 17])
def test_operator_at_older_opsets(name, opset):
    _run(OPS[name], opset, against_torch=True)
