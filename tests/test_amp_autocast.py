"""CPU autocast against torch: each op on torch's CPU lists (lower precision, float32, promote) and a few that
are on none gives torch's output dtype and values, the autocast casts appear as ToCopyBackward0 and the
gradients reach the float32 leaves in float32; the state functions and the autocast object behave as torch's."""
import warnings

import numpy as np
import pytest
import torch

import glassgrad


def _inputs(T, seed=0, low="bfloat16"):
    rng = np.random.default_rng(seed)

    def t(*shape, dtype=None, grad=False):
        x = T.tensor(rng.standard_normal(shape).astype(np.float32))
        if dtype is not None:
            x = x.to(getattr(T, low if dtype == "low" else dtype))
        return x.requires_grad_(grad)
    return t


def _F(T):
    return T.nn.functional


# name -> f(T, t) building the op's inputs with t(*shape, dtype=, grad=) and calling it
CASES = {
    "mm": lambda T, t: T.mm(t(4, 5, grad=True), t(5, 3, grad=True)),
    "matmul_op": lambda T, t: t(2, 4, 5, grad=True) @ t(5, 3, grad=True),
    "matmul_1d": lambda T, t: T.matmul(t(5, grad=True), t(5, 3)),
    "tensor_mm": lambda T, t: t(4, 5, grad=True).mm(t(5, 3)),
    "bmm": lambda T, t: T.bmm(t(2, 4, 5, grad=True), t(2, 5, 3, grad=True)),
    "addmm": lambda T, t: T.addmm(t(3, grad=True), t(4, 5, grad=True), t(5, 3, grad=True)),
    "baddbmm": lambda T, t: T.baddbmm(t(2, 4, 3, grad=True), t(2, 4, 5), t(2, 5, 3, grad=True), beta=0.5),
    "addbmm": lambda T, t: T.addbmm(t(4, 3, grad=True), t(2, 4, 5), t(2, 5, 3, grad=True)),
    "linear": lambda T, t: _F(T).linear(t(4, 5, grad=True), t(3, 5, grad=True), t(3, grad=True)),
    "linear_3d": lambda T, t: _F(T).linear(t(2, 4, 5, grad=True), t(3, 5, grad=True), t(3, grad=True)),
    "linear_nobias": lambda T, t: _F(T).linear(t(4, 5, grad=True), t(3, 5, grad=True)),
    "conv2d": lambda T, t: _F(T).conv2d(t(1, 2, 5, 5, grad=True), t(3, 2, 3, 3, grad=True), t(3, grad=True)),
    "conv1d": lambda T, t: _F(T).conv1d(t(1, 2, 6, grad=True), t(3, 2, 3, grad=True), padding=1),
    "conv_transpose2d": lambda T, t: _F(T).conv_transpose2d(t(1, 2, 4, 4, grad=True), t(2, 3, 3, 3, grad=True)),
    "sdpa": lambda T, t: _F(T).scaled_dot_product_attention(t(1, 3, 4, grad=True), t(1, 3, 4), t(1, 3, 4)),
    "prelu": lambda T, t: _F(T).prelu(t(4, 3, grad=True), t(3, grad=True)),
    "vecdot": lambda T, t: T.linalg.vecdot(t(4, 3, grad=True), t(4, 3)),
    "einsum": lambda T, t: T.einsum("ij,jk->ik", t(4, 5, grad=True), t(5, 3)),
    "tensordot": lambda T, t: T.tensordot(t(4, 5, grad=True), t(5, 3), 1),
    "multi_dot": lambda T, t: T.linalg.multi_dot([t(4, 5, grad=True), t(5, 3), t(3, 2)]),
    "convolution": lambda T, t: T.convolution(t(1, 2, 5, 5, grad=True), t(3, 2, 3, 3), None, [1, 1], [0, 0], [1, 1],
                                              False, [0, 0], 1),
    "conv_tbc": lambda T, t: T.conv_tbc(t(5, 1, 2, grad=True), t(3, 2, 4), t(4)),
    "conv2d_same": lambda T, t: _F(T).conv2d(t(1, 2, 5, 5, grad=True), t(3, 2, 3, 3), padding="same"),
    "chain_matmul": lambda T, t: T.chain_matmul(t(2, 3, grad=True), t(3, 2), t(2, 2)),
    "f64_untouched": lambda T, t: T.mm(t(4, 5, dtype="float64"), t(5, 3, dtype="float64")),
    "half_to_bf16": lambda T, t: T.mm(t(4, 5, dtype="float16"), t(5, 3, dtype="float16")),
    # on no list: run in their inputs' dtype
    "mv": lambda T, t: T.mv(t(4, 5, grad=True), t(5)),
    "dot": lambda T, t: T.dot(t(5, grad=True), t(5)),
    "outer": lambda T, t: T.outer(t(5, grad=True), t(3)),
    "addmv": lambda T, t: T.addmv(t(4), t(4, 5, grad=True), t(5)),
    "softmax_bf16": lambda T, t: T.softmax(t(4, 5, dtype="bfloat16"), 1),
    "add_mixed": lambda T, t: t(4, grad=True) + t(4, dtype="bfloat16"),
    "layer_norm_bf16": lambda T, t: _F(T).layer_norm(t(4, 5, dtype="bfloat16"), (5,)),
    # float32 list
    "mse_loss": lambda T, t: _F(T).mse_loss(t(4, 5, dtype="bfloat16"), t(4, 5)),
    "l1_loss": lambda T, t: _F(T).l1_loss(t(4, 5, dtype="bfloat16"), t(4, 5, dtype="bfloat16")),
    "cross_entropy": lambda T, t: _F(T).cross_entropy(t(4, 5, dtype="bfloat16"), T.tensor([0, 2, 4, 1])),
    "nll_loss": lambda T, t: _F(T).nll_loss(t(4, 5, dtype="bfloat16"), T.tensor([0, 2, 4, 1])),
    "smooth_l1": lambda T, t: _F(T).smooth_l1_loss(t(4, dtype="bfloat16"), t(4)),
    "huber": lambda T, t: _F(T).huber_loss(t(4, dtype="bfloat16"), t(4)),
    "bce_logits": lambda T, t: _F(T).binary_cross_entropy_with_logits(t(4, dtype="bfloat16"), t(4).sigmoid()),
    "bce": lambda T, t: _F(T).binary_cross_entropy(t(4).sigmoid().bfloat16(), t(4).sigmoid()),
    "kl_div": lambda T, t: _F(T).kl_div(t(4, dtype="bfloat16"), t(4).softmax(0), reduction="sum"),
    "prod": lambda T, t: T.prod(t(4, dtype="bfloat16")),
    "cdist": lambda T, t: T.cdist(t(3, 2, dtype="bfloat16"), t(4, 2)),
    "trace": lambda T, t: T.trace(t(3, 3, dtype="bfloat16")),
    "quantile": lambda T, t: T.quantile(t(5, dtype="bfloat16"), 0.3),
    "nanquantile": lambda T, t: T.nanquantile(t(5, dtype="bfloat16"), 0.7),
    "polar": lambda T, t: T.polar(t(3, dtype="bfloat16").abs(), t(3, dtype="bfloat16")).real,
    "view_as_complex": lambda T, t: T.view_as_complex(t(3, 2, dtype="bfloat16")).imag,
    "fft": lambda T, t: T.fft.fft(t(4, 3, dtype="bfloat16")).real,
    "rfft": lambda T, t: T.fft.rfft(t(6, dtype="bfloat16")).imag,
    "irfft": lambda T, t: T.fft.irfft(t(5, dtype="bfloat16")),
    "fft2": lambda T, t: T.fft.fft2(t(4, 4, dtype="bfloat16")).real,
    "stft": lambda T, t: T.stft(t(16, dtype="bfloat16"), 4, window=T.hann_window(4), return_complex=True).abs(),
    "max_pool3d": lambda T, t: _F(T).max_pool3d(t(1, 1, 2, 4, 4, dtype="bfloat16"), 2),
    "avg_pool3d": lambda T, t: _F(T).avg_pool3d(t(1, 1, 2, 4, 4, dtype="bfloat16"), 2),
    "adaptive_avg_pool3d": lambda T, t: _F(T).adaptive_avg_pool3d(t(1, 1, 2, 4, 4, dtype="bfloat16"), 1),
    "adaptive_max_pool3d": lambda T, t: _F(T).adaptive_max_pool3d(t(1, 1, 2, 4, 4, dtype="bfloat16"), 1),
    "grid_sample": lambda T, t: _F(T).grid_sample(t(1, 1, 3, 3, dtype="bfloat16"), t(1, 2, 2, 2).tanh(),
                                                  align_corners=False),
    "pad_reflect": lambda T, t: _F(T).pad(t(1, 2, 3, dtype="bfloat16"), (1, 1), mode="reflect"),
    "pad_reflect3d": lambda T, t: _F(T).pad(t(1, 2, 3, 3, 3, dtype="bfloat16"), (1, 1, 1, 1, 1, 1), mode="reflect"),
    "pad_replicate": lambda T, t: _F(T).pad(t(1, 2, 3, 3, dtype="bfloat16"), (1, 1, 2, 0), mode="replicate"),
    "pad_circular": lambda T, t: _F(T).pad(t(1, 2, 3, dtype="bfloat16"), (1, 1), mode="circular"),
    # torch.linalg and the legacy linear algebra (refuse bf16 outside autocast; float32 inside)
    "linalg_inv": lambda T, t: T.linalg.inv(_spd(T, t)),
    "linalg_inv_ex": lambda T, t: T.linalg.inv_ex(_spd(T, t))[0],
    "linalg_cholesky": lambda T, t: T.linalg.cholesky(_spd(T, t)),
    "linalg_cholesky_ex": lambda T, t: T.linalg.cholesky_ex(_spd(T, t))[0],
    "linalg_solve": lambda T, t: T.linalg.solve(_spd(T, t), t(3, 2)),
    "linalg_eigh": lambda T, t: T.linalg.eigh(_spd(T, t))[0],
    "linalg_eigvalsh": lambda T, t: T.linalg.eigvalsh(_spd(T, t)),
    "linalg_eigvals": lambda T, t: T.linalg.eigvals(_spd(T, t)).real,
    "linalg_svdvals": lambda T, t: T.linalg.svdvals(_spd(T, t)),
    "linalg_qr_r": lambda T, t: T.linalg.qr(_spd(T, t))[1].abs(),
    "linalg_lstsq": lambda T, t: T.linalg.lstsq(_spd(T, t), t(3, 2))[0],
    "linalg_tensorinv": lambda T, t: T.linalg.tensorinv(_spd(T, t), 1),
    "linalg_cond": lambda T, t: T.linalg.cond(_spd(T, t)),
    "inverse": lambda T, t: T.inverse(_spd(T, t)),
    "pinverse": lambda T, t: T.pinverse(_spd(T, t)),
    "cholesky_legacy": lambda T, t: T.cholesky(_spd(T, t)),
    "cholesky_inverse": lambda T, t: T.cholesky_inverse(T.linalg.cholesky(_spd(T, t).float()).bfloat16()),
    "triangular_solve": lambda T, t: T.triangular_solve(t(3, 2, dtype="bfloat16"), _spd(T, t).triu())[0],
    "svd_legacy_s": lambda T, t: T.svd(_spd(T, t))[1],
    # promote list
    "cat": lambda T, t: T.cat([t(2, 3, grad=True), t(2, 3, dtype="low")]),
    "cat_low": lambda T, t: T.cat([t(2, 3, dtype="low"), t(2, 3, dtype="low")]),
    "cat_f64": lambda T, t: T.cat([t(2, 3, dtype="float64"), t(2, 3, dtype="low")]),
    "stack": lambda T, t: T.stack([t(2, 3, dtype="low"), t(2, 3)]),
    "index_copy": lambda T, t: T.index_copy(t(3, 2, dtype="low"), 0, T.tensor([1]), t(1, 2)),
}


def _spd(T, t):
    """A well-conditioned symmetric positive definite 3x3 matrix in bfloat16."""
    a = t(3, 3)
    return (a @ a.T + 3 * T.eye(3)).bfloat16()


def _run(T, name, dtype, seed=0):
    t = _inputs(T, seed, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with T.autocast("cpu", dtype=getattr(T, dtype)):
            return CASES[name](T, t)


def _leaves(out):
    seen, stack, leaves = set(), [out.grad_fn], []
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if type(n).__name__ == "AccumulateGrad":
            leaves.append(n.variable)
        stack.extend(f for f, _ in n.next_functions)
    return leaves


def _graph(out):
    """The output's grad_fn name and how many casts (ToCopyBackward0) the graph holds."""
    seen, stack, casts = set(), [out.grad_fn], 0
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        casts += type(n).__name__ == "ToCopyBackward0"
        stack.extend(f for f, _ in n.next_functions)
    return type(out.grad_fn).__name__, casts


# glassgrad's own node structure differs from torch's composite here (the dtypes and gradients still match)
_OWN_GRAPH = {"sdpa", "einsum", "tensordot", "matmul_1d", "prelu", "cdist", "kl_div"}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_autocast_op_as_torch(name, dtype):
    want, got = _run(torch, name, dtype), _run(glassgrad, name, dtype)
    assert str(got.dtype) == str(want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    tol = 2e-2 if want.dtype in (torch.bfloat16, torch.float16) else 1e-5
    np.testing.assert_allclose(got.detach().float().numpy(), want.detach().float().numpy(), rtol=tol * 4, atol=tol)
    assert (got.grad_fn is None) == (want.grad_fn is None)
    if want.grad_fn is None:
        return
    if name not in _OWN_GRAPH:
        assert _graph(got) == _graph(want)
    want.float().sum().backward()
    got.float().sum().backward()
    for gw, gg in zip(sorted(_leaves(want), key=lambda v: v.shape), sorted(_leaves(got), key=lambda v: v.shape)):
        assert str(gg.grad.dtype) == str(gw.grad.dtype)
        np.testing.assert_allclose(gg.grad.numpy(), gw.grad.numpy(), rtol=8e-2, atol=8e-2)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_autocast_promote_errors_as_torch(dtype):
    for T in (torch, glassgrad):
        t = _inputs(T)
        other = "float16" if dtype == "bfloat16" else "bfloat16"
        with T.autocast("cpu", dtype=getattr(T, dtype)):
            with pytest.raises(RuntimeError, match="Unexpected floating ScalarType in at::autocast::prioritize"):
                T.cat([t(2, dtype=other), t(2, dtype=dtype)])
            with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype"):
                T.addmm(t(2, 2, dtype="float64"), t(2, 2), t(2, 2))
            with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype, but got Double and"):
                _F(T).linear(t(2, 3), t(2, 3), t(2, dtype="float64"))


def _nn(T):
    return T.nn


# modules and composites under autocast (torch's LSTM takes oneDNN's lower-precision kernel only where oneDNN is
# on; glassgrad has no oneDNN, so torch is run with it off, where its LSTM stays float32)
MODULES = {
    "lstm": lambda T: _nn(T).LSTM(4, 3, batch_first=True)(T.randn(2, 5, 4))[0],
    "gru": lambda T: _nn(T).GRU(4, 3)(T.randn(5, 2, 4))[0],
    "mha": lambda T: _nn(T).MultiheadAttention(4, 2, batch_first=True)(*(T.randn(2, 3, 4),) * 3)[0],
    "mha_weights": lambda T: _nn(T).MultiheadAttention(4, 2, batch_first=True)(*(T.randn(2, 3, 4),) * 3)[1],
    "encoder_layer": lambda T: _nn(T).TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True)(
        T.randn(2, 3, 4)),
    "conv_bn_relu": lambda T: _nn(T).Sequential(_nn(T).Conv2d(2, 3, 3), _nn(T).BatchNorm2d(3), _nn(T).ReLU())(
        T.randn(2, 2, 5, 5)),
    "linear_layernorm": lambda T: _nn(T).Sequential(_nn(T).Linear(4, 4), _nn(T).LayerNorm(4))(T.randn(2, 4)),
    "conv_groupnorm": lambda T: _nn(T).Sequential(_nn(T).Conv2d(2, 4, 1), _nn(T).GroupNorm(2, 4))(
        T.randn(1, 2, 3, 3)),
    "conv_transpose1d": lambda T: _nn(T).ConvTranspose1d(2, 3, 3)(T.randn(1, 2, 5)),
    "cnn_head": lambda T: _nn(T).Sequential(_nn(T).Conv2d(2, 3, 3), _nn(T).MaxPool2d(2), _nn(T).AdaptiveAvgPool2d(1),
                                            _nn(T).Flatten(), _nn(T).Linear(3, 2), _nn(T).Softmax(-1))(
        T.randn(2, 2, 6, 6)),
    "cross_entropy_module": lambda T: _nn(T).CrossEntropyLoss()(_nn(T).Linear(4, 3)(T.randn(2, 4)), T.tensor([0, 2])),
    "mse_module": lambda T: _nn(T).MSELoss()(_nn(T).Linear(4, 3)(T.randn(2, 4)), T.randn(2, 3)),
    "matmul_f32_bf16": lambda T: T.randn(2, 3) @ T.randn(3, 2).bfloat16(),
    "addmm_out_f32": lambda T: T.addmm(T.randn(2), T.randn(2, 3), T.randn(3, 2), out=T.empty(2, 2)),
    "sdpa_float_mask": lambda T: _F(T).scaled_dot_product_attention(T.randn(1, 2, 4), T.randn(1, 2, 4),
                                                                    T.randn(1, 2, 4), attn_mask=T.randn(2, 2)),
    "mm_then_reductions": lambda T: T.stack([T.mm(T.randn(2, 3), T.randn(3, 2)).sum(),
                                             T.mm(T.randn(2, 3), T.randn(3, 2)).norm()]),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_autocast_modules_as_torch(name):
    outs = []
    for T in (torch, glassgrad):
        T.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.backends.mkldnn.flags(enabled=False), T.autocast("cpu"):
                outs.append(MODULES[name](T))
    want, got = outs
    assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
    w = want.detach().float().numpy()
    np.testing.assert_allclose(got.detach().float().numpy(), w, rtol=5e-2, atol=3e-2 * max(1.0, np.abs(w).max()))
