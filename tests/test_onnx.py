"""torch.onnx.export: the exported models run in onnxruntime and give glassgrad's outputs (and, where torch
exports the same model, torch's exported model's outputs); dynamic batch; opsets; errors as torch's."""
import io
import subprocess
import sys

import numpy as np
import pytest
import torch

import glassgrad

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _mlp(nn):
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 8), nn.GELU(), nn.Linear(8, 3),
                         nn.LogSoftmax(-1))


def _cnn(nn):
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                         nn.Conv2d(8, 8, 3, stride=2, dilation=1, groups=2, padding=1), nn.SiLU(),
                         nn.AvgPool2d(2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4), nn.Softmax(-1))


def _cnn1d(nn):
    return nn.Sequential(nn.Conv1d(3, 4, 3, dilation=2), nn.GroupNorm(2, 4), nn.Tanh(), nn.MaxPool1d(2),
                         nn.Sigmoid(), nn.Flatten(), nn.Linear(12, 2))


def _transformer(nn):
    class Block(nn.Module):     # a post-norm encoder block (torch's TorchScript exporter fails on
        def __init__(self):     # nn.TransformerEncoderLayer itself: see test_transformer_encoder_layer)
            super().__init__()
            self.attn = nn.MultiheadAttention(16, 4, batch_first=True)
            self.ln1, self.ln2 = nn.LayerNorm(16), nn.LayerNorm(16)
            self.ff = nn.Sequential(nn.Linear(16, 32), nn.GELU(approximate="tanh"), nn.Dropout(0.1), nn.Linear(32, 16))

        def forward(self, x):
            x = self.ln1(x + self.attn(x, x, x, need_weights=False)[0])
            return self.ln2(x + self.ff(x))
    return Block()


def _lstm(nn):
    return nn.LSTM(4, 6, num_layers=2, batch_first=True)


MODELS = {"mlp": (_mlp, (3, 4)), "cnn": (_cnn, (2, 3, 8, 8)), "cnn1d": (_cnn1d, (2, 3, 11)),
          "transformer": (_transformer, (2, 5, 16)), "lstm": (_lstm, (3, 7, 4))}


def _pair(name):
    """The same model in glassgrad and torch (torch's weights copied from glassgrad's), in eval mode."""
    build, shape = MODELS[name]
    glassgrad.manual_seed(0)
    gm, tm = build(glassgrad.nn), build(torch.nn)
    tm.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in gm.state_dict().items()})
    return gm.eval(), tm.eval(), shape


def _export(lib, model, x, **kw):
    buf = io.BytesIO()
    lib.onnx.export(model, (x,), buf, input_names=["x"], output_names=["y"], **kw)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto)
    return ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"]), proto


def _first(out):
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name", list(MODELS))
def test_export_runs_in_onnxruntime_as_glassgrad_and_torch(name):
    gm, tm, shape = _pair(name)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    sess, proto = _export(glassgrad, gm, glassgrad.from_numpy(x), dynamo=False)
    got = sess.run(None, {"x": x})[0]
    want = _first(gm(glassgrad.from_numpy(x))).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    tsess, _ = _export(torch, tm, torch.from_numpy(x), dynamo=False)
    np.testing.assert_allclose(got, tsess.run(None, {"x": x})[0], rtol=1e-4, atol=1e-5)
    assert proto.opset_import[0].version == 20 and proto.graph.input[0].name == "x"
    if name != "lstm":          # parameters keep their names (an LSTM's are reordered into ONNX's gate order)
        assert {i.name for i in proto.graph.initializer} & set(gm.state_dict())


@pytest.mark.parametrize("name", list(MODELS))
def test_dynamic_batch(name):
    gm, _, shape = _pair(name)
    ax = 0 if name != "lstm" or gm.batch_first else 1
    x = glassgrad.randn(*shape)
    sess, proto = _export(glassgrad, gm, x, dynamic_axes={"x": {ax: "batch"}, "y": {ax: "batch"}})
    assert proto.graph.input[0].type.tensor_type.shape.dim[ax].dim_param == "batch"
    for b in (1, shape[ax] + 3):
        big = list(shape)
        big[ax] = b
        xb = np.random.default_rng(b).standard_normal(big).astype(np.float32)
        got = sess.run(None, {"x": xb})[0]
        want = _first(gm(glassgrad.from_numpy(xb))).detach().numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_transformer_encoder_layer_with_dynamic_batch():
    """nn.TransformerEncoderLayer (torch 2.13's TorchScript exporter itself fails on it: its fast path hands
    scaled_dot_product_attention a traced is_causal)."""
    glassgrad.manual_seed(0)
    m = glassgrad.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, norm_first=True).eval()
    sess, _ = _export(glassgrad, m, glassgrad.randn(2, 5, 16), dynamic_axes={"x": {0: "b"}, "y": {0: "b"}})
    x = glassgrad.randn(4, 5, 16)
    np.testing.assert_allclose(sess.run(None, {"x": x.numpy()})[0], m(x).detach().numpy(), rtol=1e-4, atol=1e-5)
    tm = torch.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, norm_first=True).eval()
    with pytest.raises(TypeError, match="argument 'is_causal' .* must be bool, not Tensor"):
        torch.onnx.export(tm, (torch.randn(2, 5, 16),), io.BytesIO(), dynamo=False)


@pytest.mark.parametrize("rnn", ["lstm2bi", "gru2", "rnn"])
def test_recurrent_layers_all_outputs_with_dynamic_batch(rnn):
    glassgrad.manual_seed(0)
    nn = glassgrad.nn
    m = {"lstm2bi": lambda: nn.LSTM(4, 5, num_layers=2, bidirectional=True),
         "gru2": lambda: nn.GRU(4, 5, num_layers=2), "rnn": lambda: nn.RNN(4, 5, nonlinearity="relu")}[rnn]().eval()
    sess, _ = _export(glassgrad, m, glassgrad.randn(3, 2, 4), dynamic_axes={"x": {1: "batch"}})
    x = glassgrad.randn(3, 5, 4)
    out, h = m(x)
    want = [out, *h] if isinstance(h, tuple) else [out, h]
    got = sess.run(None, {"x": x.numpy()})
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_dynamic_axes_as_a_list_named_as_torch():
    gm, tm, shape = _pair("mlp")
    names = []
    for lib, m in ((glassgrad, gm), (torch, tm)):
        _, proto = _export(lib, m, lib.randn(*shape), dynamo=False, dynamic_axes={"x": [0]})
        names.append(proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param)
    assert names[0] == names[1] == "x_dynamic_axes_1"


@pytest.mark.parametrize("opset", [13, 17, 18, 20])
def test_opset_versions(opset):
    gm, _, shape = _pair("transformer")
    x = glassgrad.randn(*shape)
    sess, proto = _export(glassgrad, gm, x, opset_version=opset)
    assert proto.opset_import[0].version == opset
    np.testing.assert_allclose(sess.run(None, {"x": x.numpy()})[0], gm(x).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_embedding_with_an_integer_input_and_gru():
    class Net(glassgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = glassgrad.nn.Embedding(10, 6)
            self.gru = glassgrad.nn.GRU(6, 5, batch_first=True)
            self.norm = glassgrad.nn.LayerNorm(5)

        def forward(self, ids):
            out, h = self.gru(self.emb(ids))
            return self.norm(out).sum(1) * 2 - h[0] / 3

    glassgrad.manual_seed(0)
    m = Net().eval()
    ids = glassgrad.tensor([[1, 2, 3, 9], [0, 5, 5, 7]])
    sess, proto = _export(glassgrad, m, ids)
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT64
    other = np.array([[4, 4, 8, 1], [2, 3, 0, 6]])
    np.testing.assert_allclose(sess.run(None, {"x": other})[0], m(glassgrad.tensor(other)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_sdpa_views_cat_and_constants_made_in_forward():
    class Net(glassgrad.nn.Module):
        def forward(self, q):
            k = q.transpose(1, 2).reshape(q.shape[0], 4, 3).permute(0, 2, 1)
            a = glassgrad.nn.functional.scaled_dot_product_attention(q, k, q, is_causal=True)
            pieces = a.split([1, 2], dim=1)
            mid = glassgrad.cat([pieces[1], pieces[0] * 2], 1)[:, 1:, ::2]
            return glassgrad.stack([mid.unsqueeze(1).squeeze(1), 1 - mid], -1) + glassgrad.ones(2) * 0.5

    x = glassgrad.randn(2, 3, 4)
    sess, _ = _export(glassgrad, Net(), x)
    np.testing.assert_allclose(sess.run(None, {"x": x.numpy()})[0], Net()(x).numpy(), rtol=1e-5, atol=1e-6)


def test_unsupported_operator_raises_torchs_error():
    class Net(glassgrad.nn.Module):
        def forward(self, x):
            return glassgrad.cumprod(x, 0)

    with pytest.raises(glassgrad.onnx.errors.UnsupportedOperatorError,
                       match="Exporting the operator 'aten::cumprod' to ONNX opset version 20 is not supported"):
        glassgrad.onnx.export(Net(), (glassgrad.randn(3, requires_grad=True),), io.BytesIO())
    assert issubclass(glassgrad.onnx.errors.UnsupportedOperatorError, glassgrad.onnx.OnnxExporterError)
    assert issubclass(glassgrad.onnx.OnnxExporterError, RuntimeError)
    with pytest.raises(ValueError, match="Unsupported ONNX opset version: 9"):
        glassgrad.onnx.export(Net(), (glassgrad.randn(3),), io.BytesIO(), opset_version=9)


def test_without_the_onnx_package(monkeypatch):
    code = ("import sys; sys.modules['onnx'] = sys.modules['onnxruntime'] = None\n"
            "import glassgrad.onnx as o, glassgrad\nprint(o.is_in_onnx_export(), o.TrainingMode.EVAL.name)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.split() == ["False", "EVAL"], r.stderr
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'glassgrad\[onnx\]'"):
        glassgrad.onnx.export(_mlp(glassgrad.nn), (glassgrad.randn(2, 4),), io.BytesIO())


def test_modes_and_flags_as_torch():
    seen = []

    class Net(glassgrad.nn.Module):
        def forward(self, x):
            seen.append((glassgrad.onnx.is_in_onnx_export(), self.training))
            return x * 2

    m = Net()
    assert not glassgrad.onnx.is_in_onnx_export()
    glassgrad.onnx.export(m, (glassgrad.randn(2),), io.BytesIO())
    glassgrad.onnx.export(m, (glassgrad.randn(2),), io.BytesIO(), training=glassgrad.onnx.TrainingMode.PRESERVE)
    assert seen == [(True, False), (True, True)] and m.training
    for lib in (glassgrad, torch):
        assert list(lib.onnx.TrainingMode.__members__) == ["EVAL", "PRESERVE", "TRAINING"]
        assert list(lib.onnx.OperatorExportTypes.__members__) == ["ONNX", "ONNX_ATEN", "ONNX_ATEN_FALLBACK",
                                                                  "ONNX_FALLTHROUGH"]
        mod = lib.nn.Linear(2, 2)
        with lib.onnx.select_model_mode_for_export(mod, lib.onnx.TrainingMode.EVAL):
            assert not mod.training
        assert mod.training
        with pytest.raises(TypeError, match="'mode' should be a torch.onnx.TrainingMode enum, but got"):
            with lib.onnx.select_model_mode_for_export(mod, 0):
                pass


def test_import_torch_onnx_through_glassgrad_run(tmp_path):
    script = tmp_path / "export.py"
    out = tmp_path / "m.onnx"
    script.write_text("import torch\nimport torch.onnx\nimport onnx\n"
                      "m = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())\n"
                      f"torch.onnx.export(m, (torch.randn(4, 3),), {str(out)!r}, dynamo=False)\n"
                      f"onnx.checker.check_model(onnx.load({str(out)!r}))\nprint(torch.__name__, 'ok')\n")
    r = subprocess.run([sys.executable, "-m", "glassgrad", "run", str(script)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "ok" and onnx.load(str(out)).producer_name == "glassgrad"


def test_dynamo_default_returns_an_onnx_program(tmp_path):
    gm, _, shape = _pair("cnn")
    x = glassgrad.randn(*shape)
    prog = glassgrad.onnx.export(gm, (x,))
    assert isinstance(prog, glassgrad.onnx.ONNXProgram) and prog.exported_program is None
    want = gm(x).detach().numpy()
    for run in (prog, prog.call_reference):
        (y,) = run(x)
        assert isinstance(y, glassgrad.Tensor)
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-4, atol=1e-5)
    prog.save(tmp_path / "a.onnx")
    prog.save(tmp_path / "b.onnx", include_initializers=False, keep_initializers_as_inputs=True)
    prog.save(tmp_path / "c.onnx", external_data=True)
    a, b = onnx.load(str(tmp_path / "a.onnx")), onnx.load(str(tmp_path / "b.onnx"), load_external_data=False)
    assert len(a.graph.initializer) > 0 and len(b.graph.initializer) == 0
    assert len(b.graph.input) == 1 + len(a.graph.initializer)
    assert (tmp_path / "c.onnx.data").exists() and onnx.load(str(tmp_path / "c.onnx")).graph.initializer
    assert glassgrad.onnx.export(gm, (x,), io.BytesIO(), dynamo=False) is None
    assert "ONNXProgram(" in repr(prog)


class _PositionalEncoding(glassgrad.nn.Module):
    """Constants made in the forward and written in place (CopySlices), a state of the batch's size, detach."""
    def forward(self, x):
        T, d = x.shape[1], x.shape[2]
        pe = glassgrad.zeros(T, d)
        pos = glassgrad.arange(T, dtype=glassgrad.float32).unsqueeze(1)
        div = glassgrad.exp(glassgrad.arange(0, d, 2).float() * (-np.log(10000.0) / d))
        pe[:, 0::2] = glassgrad.sin(pos * div)
        pe[:, 1::2] = glassgrad.cos(pos * div)
        pe[1:3].mul_(2)
        h = glassgrad.zeros(x.shape[0], d)
        h += 1
        return x + pe + h.unsqueeze(1) * x.detach().mean() + pe[0]


def test_constants_made_and_written_in_place_in_forward():
    m = _PositionalEncoding()
    for dyn, batch in ((None, 2), ({"x": {0: "b"}}, 5)):
        sess, _ = _export(glassgrad, m, glassgrad.randn(2, 6, 4), dynamic_axes=dyn)
        x = glassgrad.randn(batch, 6, 4)
        np.testing.assert_allclose(sess.run(None, {"x": x.numpy()})[0], m(x).numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(glassgrad.onnx.OnnxExporterError, match="with a size of a dynamic axis .* is not uniform"):
        _export(glassgrad, m, glassgrad.randn(2, 6, 4), dynamic_axes={"x": {1: "t"}})


def test_buffers_reach_the_graph():
    class Pos(glassgrad.nn.Module):       # a buffer reaches the graph; its batch-free shape broadcasts
        def __init__(self):
            super().__init__()
            self.register_buffer("pe", glassgrad.randn(5, 4))

        def forward(self, x):
            return x + self.pe[: x.shape[1]]

    m = Pos()
    sess, _ = _export(glassgrad, m, glassgrad.randn(2, 5, 4), dynamic_axes={"x": {0: "b"}})
    x = glassgrad.randn(3, 5, 4)
    np.testing.assert_allclose(sess.run(None, {"x": x.numpy()})[0], m(x).numpy(), rtol=1e-6)
    assert not m.pe.requires_grad


def test_float64_kwargs_and_nested_outputs():
    class M(glassgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = glassgrad.nn.Linear(3, 2)

        def forward(self, x, scale=None):
            y = self.lin(x) * scale
            return {"a": y, "b": (y.relu(), x.sum(-1))}

    glassgrad.manual_seed(0)
    m = M().double()
    m.lin.weight.requires_grad_(False)          # frozen: exported all the same, and left frozen
    x, scale = glassgrad.randn(4, 3, dtype=glassgrad.float64), glassgrad.tensor(2.0, dtype=glassgrad.float64)
    buf = io.BytesIO()
    glassgrad.onnx.export(m, (x,), buf, kwargs={"scale": scale}, input_names=["x", "scale"],
                          output_names=["a", "b0", "b1"], dynamic_axes={"x": {0: "n"}, "a": {0: "n"}}, dynamo=False)
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    assert [i.type for i in sess.get_inputs()] == ["tensor(double)"] * 2
    x2 = glassgrad.randn(7, 3, dtype=glassgrad.float64)
    got = sess.run(None, {"x": x2.numpy(), "scale": np.array(3.0)})
    ref = m(x2, scale=glassgrad.tensor(3.0, dtype=glassgrad.float64))
    for a, b in zip(got, [ref["a"], *ref["b"]]):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-12)
    assert not m.lin.weight.requires_grad and m.lin.bias.requires_grad


def test_dynamic_shapes_as_torch_export_gives_them():
    gm, _, shape = _pair("cnn")
    for spec in ({"input": {0: "batch"}}, ({0: "batch"},), [[None if i else "batch" for i in range(4)]]):
        prog = glassgrad.onnx.export(gm, (glassgrad.randn(*shape),), dynamic_shapes=spec)
        inp = prog.model_proto.graph.input[0]
        assert inp.name == "input" and inp.type.tensor_type.shape.dim[0].dim_param == "batch"
        x = glassgrad.randn(5, *shape[1:])
        np.testing.assert_allclose(prog(x)[0].numpy(), gm(x).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_masks_with_dynamic_axes_and_inputs_that_do_not_reach_the_graph():
    class Causal(glassgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = glassgrad.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)

        def forward(self, x):
            mask = glassgrad.nn.Transformer.generate_square_subsequent_mask(x.shape[1])
            return self.layer(x, src_mask=mask, is_causal=True)

    glassgrad.manual_seed(0)
    m = Causal().eval()
    sess, _ = _export(glassgrad, m, glassgrad.randn(2, 5, 16), dynamic_axes={"x": {0: "b"}})   # batch: fine
    x = glassgrad.randn(3, 5, 16)
    np.testing.assert_allclose(sess.run(None, {"x": x.numpy()})[0], m(x).detach().numpy(), rtol=1e-4, atol=1e-5)
    with pytest.raises(glassgrad.onnx.OnnxExporterError, match="an attention mask built for the traced size 5"):
        _export(glassgrad, m, glassgrad.randn(2, 5, 16), dynamic_axes={"x": {0: "b", 1: "t"}})

    class Padded(glassgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = glassgrad.nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x, pad):
            return self.attn(x, x, x, key_padding_mask=pad)[0]

    with pytest.warns(glassgrad.onnx.errors.OnnxExporterWarning, match="the input 'input_1' does not reach"):
        glassgrad.onnx.export(Padded().eval(), (glassgrad.randn(2, 5, 8), glassgrad.tensor([[False] * 5] * 2)),
                              io.BytesIO(), dynamo=False)


def test_export_params_and_initializers_as_inputs():
    gm, _, shape = _pair("mlp")
    x = glassgrad.randn(*shape)
    feeds = {k: v.numpy() for k, v in gm.state_dict().items()}
    for kw in ({"export_params": False}, {"keep_initializers_as_inputs": True}):
        sess, proto = _export(glassgrad, gm, x, dynamo=False, **kw)
        names = [i.name for i in proto.graph.input]
        assert names[0] == "x" and set(names[1:]) == set(feeds)
        assert (len(proto.graph.initializer) == 0) == ("export_params" in kw)
        got = sess.run(None, {"x": x.numpy(), **feeds})[0]
        np.testing.assert_allclose(got, gm(x).detach().numpy(), rtol=1e-5, atol=1e-6)
