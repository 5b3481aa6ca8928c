"""Whole training steps with the fused CUDA kernels (_cuda_kernels/, through CuPy on a GPU or the CPU emulation
here) against the same steps on the CPU: an MLP, a CNN (conv, batch norm, max pool), an LSTM and a small GPT
block (embeddings, layer norm, causal attention, GELU), trained with SGD + momentum and gradient clipping or with
AdamW -- the loss, every gradient and every parameter after two steps, within float32 tolerance; and the step
really ran the fused kernels."""
import numpy as np
import pytest

import glassgrad as gg
import glassgrad.nn.functional as F
from glassgrad import _strict, nn

pytestmark = pytest.mark.usefixtures("fused_kernels")

RTOL, ATOL = 2e-4, 2e-5


class _GPTBlock(nn.Module):
    def __init__(self, vocab=11, d=16, heads=2, ctx=8):
        super().__init__()
        self.heads = heads
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        # (no qkv bias: the key bias's gradient is zero up to rounding -- softmax ignores a shift -- and AdamW
        # would turn that rounding noise into full-size steps, on any two devices alike)
        self.qkv, self.proj = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d)
        self.fc, self.act, self.out = nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d)
        self.head = nn.Linear(d, 3)

    def forward(self, idx):
        B, T = idx.shape
        x = self.tok(idx) + self.pos(gg.arange(T, device=idx.device))
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], -1)
        q, k, v = (t.reshape(B, T, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, -1)
        x = x + self.proj(a)
        x = x + self.out(self.act(self.fc(self.ln2(x))))
        return self.head(x[:, -1])


class _LSTMNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 5)
        self.lstm = nn.LSTM(5, 7, num_layers=2, batch_first=True)
        self.head = nn.Linear(7, 3)

    def forward(self, idx):
        out, _ = self.lstm(self.emb(idx))
        return self.head(out[:, -1])


def _build(name):
    if name == "mlp":
        return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)), (6, 8), "sgd"
    if name == "cnn":
        return (nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(8, 4, 3, stride=2), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                              nn.Linear(16, 3)), (4, 3, 10, 10), "sgd")
    if name == "lstm":
        return _LSTMNet(), (4, 6), "sgd"
    return _GPTBlock(), (5, 8), "adamw"


def _steps(name, device):
    gg.manual_seed(0)
    model, xshape, optname = _build(name)
    rng = np.random.default_rng(1)
    if name in ("lstm", "gpt"):
        x = gg.from_numpy(rng.integers(0, 11, xshape).astype(np.int64))
    else:
        x = gg.from_numpy(rng.standard_normal(xshape).astype(np.float32))
    y = gg.from_numpy(rng.integers(0, 3, xshape[0]).astype(np.int64))
    model, x, y = model.to(device), x.to(device), y.to(device)
    if optname == "sgd":
        opt = gg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)
    else:
        opt = gg.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    losses = []
    for _ in range(2):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.detach())
    return losses, [p.grad for p in model.parameters()], list(model.parameters())


@pytest.mark.parametrize("name", ["mlp", "cnn", "lstm", "gpt"])
def test_training_with_fused_kernels_matches_cpu(name):
    c_losses, c_grads, c_params = _steps(name, "cpu")
    with _strict.counting() as launches:         # (the fused kernels' launches, on a GPU too: conftest)
        d_losses, d_grads, d_params = _steps(name, "cuda")
    fused = {where.split(":")[0] for (_, where) in launches if where.startswith("_cuda_kernels")}
    assert fused, "no fused kernel ran"
    for what, cs, ds in (("loss", c_losses, d_losses), ("grad", c_grads, d_grads), ("param", c_params, d_params)):
        assert len(cs) == len(ds)
        for i, (a, b) in enumerate(zip(cs, ds)):
            np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), rtol=RTOL, atol=ATOL,
                                       err_msg=f"{name}: {what} {i}")
