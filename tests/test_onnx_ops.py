"""torch.onnx.export of single operators: each exported function of (x, y) runs in onnxruntime and gives
glassgrad's values (float32 tolerances); opset-dependent converters under an old and a new opset."""
import io

import numpy as np
import pytest

import glassgrad

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
F = glassgrad.nn.functional
T = glassgrad

OPS = {
    "where": lambda x, y: T.where(x > 0, x, y), "maximum": lambda x, y: T.maximum(x, y),
    "minimum": lambda x, y: T.minimum(x, y), "amax": lambda x, y: x.amax(1), "max_dim": lambda x, y: x.max(1)[0],
    "min_all": lambda x, y: x.min() + y, "cumsum": lambda x, y: x.cumsum(1), "index": lambda x, y: x[:, [0, 2]],
    "pad": lambda x, y: F.pad(x, (1, 1, 2, 0), value=0.5), "pad_crop": lambda x, y: F.pad(x, (-1, 1)),
    "pad_reflect": lambda x, y: F.pad(x, (1, 1, 1, 1), mode="reflect"),
    "pad_replicate": lambda x, y: F.pad(x, (2, 1, 1, 0), mode="replicate"),
    "nearest": lambda x, y: F.interpolate(x, scale_factor=2), "nearest_size": lambda x, y: F.interpolate(x, size=(6, 8)),
    "bilinear": lambda x, y: F.interpolate(x, size=(6, 7), mode="bilinear"),
    "bilinear_ac": lambda x, y: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
    "hardswish": lambda x, y: F.hardswish(x), "hardsigmoid": lambda x, y: F.hardsigmoid(x),
    "softplus": lambda x, y: F.softplus(x, beta=2), "mish": lambda x, y: F.mish(x), "logsigmoid": lambda x, y: F.logsigmoid(x),
    "prelu": lambda x, y: F.prelu(x, T.tensor([0.1, 0.2, 0.3])), "log1p": lambda x, y: x.abs().log1p(),
    "relu6": lambda x, y: F.relu6(x * 4), "elu": lambda x, y: F.elu(x, 0.7), "selu": lambda x, y: F.selu(x),
    "celu": lambda x, y: F.celu(x, 1.5), "repeat": lambda x, y: x.repeat(2, 1, 1, 1, 2),
    "norm2": lambda x, y: x.norm(dim=1), "norm1": lambda x, y: T.linalg.vector_norm(x, 1, dim=(2, 3)),
    "normalize": lambda x, y: F.normalize(x, dim=1), "var": lambda x, y: x.var(1), "std": lambda x, y: x.std((2, 3), keepdim=True),
    "baddbmm": lambda x, y: T.baddbmm(x[0], x[0], y[0], beta=0.5, alpha=2), "instance_norm": lambda x, y: F.instance_norm(x),
    "rsqrt": lambda x, y: (x.abs() + 1).rsqrt(), "div": lambda x, y: x / (y.abs() + 1), "sub_alpha": lambda x, y: T.sub(x, y, alpha=2),
    "matmul4d": lambda x, y: x @ y, "chunk": lambda x, y: x.chunk(2, 2)[1], "flip": lambda x, y: x.flip(1, 3),
    "roll": lambda x, y: x.roll((1, -1), (2, 3)), "tril": lambda x, y: x.tril(), "triu": lambda x, y: x.triu(1),
    "glu": lambda x, y: F.glu(x, 2), "pixel_shuffle": lambda x, y: F.pixel_shuffle(x.repeat(1, 4, 1, 1)[:, :4], 2),
    "conv_transpose": lambda x, y: F.conv_transpose2d(x, T.ones(3, 2, 2, 2) / 4, stride=2),
    "maxpool_ceil": lambda x, y: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), "avgpool1d": lambda x, y: F.avg_pool1d(x[0], 2),
    "avgpool_pad": lambda x, y: F.avg_pool2d(x, 3, 1, 1, count_include_pad=False),
    "adaptive_max": lambda x, y: F.adaptive_max_pool2d(x, 1), "adaptive_avg": lambda x, y: F.adaptive_avg_pool2d(x, (2, 1)),
    "pow_tensor": lambda x, y: x.abs().pow(y), "pow_base": lambda x, y: T.pow(2.0, x), "pow": lambda x, y: x.pow(3),
    "masked_inf": lambda x, y: x.masked_fill(T.ones(4, 4).triu(1).bool(), float("-inf")).softmax(-1),
    "erf_sin_cos": lambda x, y: T.erf(x) + x.sin() * y.cos(), "clamp": lambda x, y: x.clamp(min=-0.1, max=0.5),
    "cast": lambda x, y: x.double().float(), "addcmul": lambda x, y: T.addcmul(x, x, y, value=0.5),
    "addcdiv": lambda x, y: T.addcdiv(x, x, y.abs() + 1), "lerp": lambda x, y: T.lerp(x, y, 0.3),
    "gelu_tanh": lambda x, y: F.gelu(x, approximate="tanh"), "silu": lambda x, y: F.silu(x),
    "layer_norm": lambda x, y: F.layer_norm(x, (4, 4)), "expand": lambda x, y: x[:, :1].expand(-1, 3, -1, -1) * y,
    "sum_mean": lambda x, y: x.sum((1, 2), keepdim=True) - x.mean(), "stack": lambda x, y: T.stack([x, y], 2),
    "unbind": lambda x, y: x.unbind(1)[2], "narrow": lambda x, y: x.narrow(3, 1, 2), "select_neg": lambda x, y: x[:, -1, 1:3:2],
    "maxpool3d": lambda x, y: F.max_pool3d(x.unsqueeze(1), 2), "avgpool3d": lambda x, y: F.avg_pool3d(x.unsqueeze(1), 2),
    "adaptive_avg3d": lambda x, y: F.adaptive_avg_pool3d(x.unsqueeze(1), (3, 2, 2)),
    "conv3d": lambda x, y: F.conv3d(x.unsqueeze(1), T.ones(2, 1, 2, 2, 2) / 8, padding=1),
    "conv1d": lambda x, y: F.conv1d(x[0], T.ones(2, 4, 3) / 12, stride=2, padding=1),
    "trilinear": lambda x, y: F.interpolate(x.unsqueeze(1), scale_factor=2, mode="trilinear"),
    "linear1d": lambda x, y: F.interpolate(x[0], size=7, mode="linear"), "nearest1d": lambda x, y: F.interpolate(x[0], size=9),
    "reflect1d": lambda x, y: F.pad(x[0], (2, 1), mode="reflect"), "maxpool1d": lambda x, y: F.max_pool1d(x[0], 2),
    "none_index": lambda x, y: x[:, None, 1], "transpose_t": lambda x, y: x[0, 0].t() @ y[0, 0], "sdpa": lambda x, y: F.scaled_dot_product_attention(x, y, y),
}


class _Fn(glassgrad.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, y):
        return self.fn(x, y)


def _run(fn, opset=None):
    g = np.random.default_rng(3)
    x, y = (glassgrad.from_numpy(g.standard_normal((2, 3, 4, 4)).astype(np.float32)) for _ in range(2))
    m = _Fn(fn)
    buf = io.BytesIO()
    glassgrad.onnx.export(m, (x, y), buf, input_names=["x", "y"], opset_version=opset, dynamo=False)
    onnx.checker.check_model(onnx.load_from_string(buf.getvalue()))
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    feeds = {i.name: v.numpy() for i, v in zip(sess.get_inputs(), (x, y))}
    got = sess.run(None, feeds)[0]
    want = m(x, y).detach().numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", list(OPS))
def test_operator(name):
    _run(OPS[name])


@pytest.mark.parametrize("name", ["hardswish", "mish", "gelu_tanh", "layer_norm", "amax", "sum_mean", "norm2"])
@pytest.mark.parametrize("opset", [13, 17])
def test_operator_at_older_opsets(name, opset):
    _run(OPS[name], opset)
