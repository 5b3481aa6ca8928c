"""Whole models, written the ordinary way, trained 20 steps on glassgrad and on torch from the same
weights (same seed: glassgrad's RNG and initialisation order are PyTorch's) and the same data.
The loss at every step must agree to float32 tolerance."""
import math

import numpy as np
import pytest
import torch

import glassgrad

STEPS = 20


def run_both(train, rtol=2e-4, atol=1e-5):
    """train(T) -> per-step losses (floats), or (losses, [arrays]) with more results to compare."""
    ref = train(torch)
    got = train(glassgrad)
    ref, ref_extra = ref if isinstance(ref, tuple) else (ref, [])
    got, got_extra = got if isinstance(got, tuple) else (got, [])
    assert len(ref) == len(got) == STEPS
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)
    assert ref[-1] < ref[0]          # the models really train
    for a, b in zip(got_extra, ref_extra):
        np.testing.assert_allclose(a, b, rtol=10 * rtol, atol=10 * atol)
    return ref, got


def data(seed, *shapes, kind="normal", high=None):
    rng = np.random.default_rng(seed)
    if kind == "int":
        return [rng.integers(0, high, size=s).astype(np.int64) for s in shapes]
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


# -- a CIFAR-style ResNet with BatchNorm, SGD + momentum + weight decay -----------------------------
def resnet(T):
    nn, F = T.nn, T.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                              nn.BatchNorm2d(cout))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + self.shortcut(x))

    class ResNet(nn.Module):
        def __init__(self, num_classes=10):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.layer1 = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 8))
            self.layer2 = nn.Sequential(BasicBlock(8, 16, stride=2), BasicBlock(16, 16))
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(16, num_classes)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.layer2(self.layer1(out))
            return self.fc(torch_flatten(T, self.pool(out)))

    T.manual_seed(0)
    model = ResNet()
    opt = T.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    x, = data(1, (8, 3, 12, 12))
    y, = data(2, (8,), kind="int", high=10)
    x, y = T.tensor(x), T.tensor(y)
    losses = []
    model.train()
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with T.no_grad():
        eval_out = model(x).numpy()
    return losses, [eval_out, model.bn1.running_mean.numpy(), model.bn1.running_var.numpy(),
                    model.layer2[0].shortcut[1].running_var.numpy(),
                    np.array(model.bn1.num_batches_tracked.item())]


def torch_flatten(T, x):
    return T.flatten(x, 1)


def test_resnet_batchnorm_sgd():
    run_both(resnet, rtol=1e-3, atol=1e-5)


# -- a small GPT: weight tying, causal attention, AdamW with two param groups, cosine schedule ------
def gpt(T):
    nn, F = T.nn, T.nn.functional
    V, D, H, L, S = 32, 32, 4, 2, 16

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(D)
            self.qkv = nn.Linear(D, 3 * D)
            self.proj = nn.Linear(D, D)
            self.ln2 = nn.LayerNorm(D)
            self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

        def forward(self, x):
            B, N, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
            q = q.view(B, N, H, C // H).transpose(1, 2)
            k = k.view(B, N, H, C // H).transpose(1, 2)
            v = v.view(B, N, H, C // H).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, N, C)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(V, D)
            self.wpe = nn.Embedding(S, D)
            self.blocks = nn.ModuleList([Block() for _ in range(L)])
            self.ln_f = nn.LayerNorm(D)
            self.lm_head = nn.Linear(D, V, bias=False)
            self.lm_head.weight = self.wte.weight          # weight tying
            self.apply(self._init)

        def _init(self, m):
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets):
            pos = T.arange(idx.shape[1])
            x = self.wte(idx) + self.wpe(pos)
            for b in self.blocks:
                x = b(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, V), targets.reshape(-1))

    T.manual_seed(0)
    model = GPT()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = T.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=3e-3, betas=(0.9, 0.95))
    sched = T.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS)
    seq, = data(3, (4, S + 1), kind="int", high=V)
    seq = T.tensor(seq)
    losses = []
    for _ in range(STEPS):
        loss = model(seq[:, :-1], seq[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    return losses


def test_gpt_adamw_cosine():
    run_both(gpt, rtol=2e-4)


# -- an LSTM language model with gradient clipping ---------------------------------------------------
def lstm_lm(T):
    nn = T.nn

    class LM(nn.Module):
        def __init__(self, V=20, E=16, Hd=24):
            super().__init__()
            self.emb = nn.Embedding(V, E)
            self.rnn = nn.LSTM(E, Hd, num_layers=2, batch_first=True)
            self.out = nn.Linear(Hd, V)

        def forward(self, x, state=None):
            h, state = self.rnn(self.emb(x), state)
            return self.out(h), state

    T.manual_seed(0)
    model = LM()
    opt = T.optim.Adam(model.parameters(), lr=1e-2)
    crit = nn.CrossEntropyLoss()
    seq, = data(4, (3, 13), kind="int", high=20)
    seq = T.tensor(seq)
    losses = []
    for _ in range(STEPS):
        logits, _ = model(seq[:, :-1])
        loss = crit(logits.reshape(-1, 20), seq[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        losses.append(loss.item())
    return losses


def test_lstm_lm_clipping():
    run_both(lstm_lm, rtol=2e-4)


# -- a detector-style head: multi-level, multi-term loss with OHEM (seed 000's pattern) -------------
def detector(T):
    nn, F = T.nn, T.nn.functional

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
            self.down = nn.Sequential(nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU())
            self.cls = nn.Conv2d(8, 2, 1)          # shared across levels
            self.reg = nn.Conv2d(8, 1, 1)

        def forward(self, x):
            f1 = self.stem(x)
            f2 = self.down(f1)
            return [(self.cls(f), self.reg(f)) for f in (f1, f2)]

    def ohem(pred, target, negative_ratio=3):
        pos = target.bool()
        neg = ~pos
        n_pos = int(pos.sum())
        loss_pos = F.cross_entropy(pred[pos], target[pos], reduction="sum")
        loss_neg = F.cross_entropy(pred[neg], target[neg], reduction="none")
        n_neg = min(int(neg.sum()), negative_ratio * n_pos)
        loss_neg, _ = T.topk(loss_neg, n_neg)
        return (loss_pos + loss_neg.sum()) / (n_pos + n_neg)

    T.manual_seed(0)
    model = Head()
    opt = T.optim.Adam(model.parameters(), lr=5e-3)
    x, = data(5, (2, 3, 16, 16))
    rng = np.random.default_rng(6)
    targets = [(rng.random((2, s, s)) > 0.7).astype(np.int64) for s in (16, 8)]
    radii = [rng.random((2, s, s)).astype(np.float32) * 3 for s in (16, 8)]
    x = T.tensor(x)
    targets = [T.tensor(t) for t in targets]
    radii = [T.tensor(r) for r in radii]
    losses = []
    for _ in range(STEPS):
        total = 0.0
        for (c, r), t, rad in zip(model(x), targets, radii):
            c = c.permute(0, 2, 3, 1).reshape(-1, 2)
            t = t.reshape(-1)
            mask = t > 0
            total = total + ohem(c, t)
            total = total + F.smooth_l1_loss(r.reshape(-1)[mask], rad.reshape(-1)[mask])
        opt.zero_grad()
        total.backward()
        opt.step()
        losses.append(total.item())
    return losses


def test_detector_multi_level_ohem():
    run_both(detector, rtol=2e-4)


# -- dropout in train mode under a fixed seed, data from a shuffling DataLoader ---------------------
def dropout_mlp(T):
    nn, F = T.nn, T.nn.functional
    T.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 32), nn.Tanh(),
                          nn.Dropout(0.2), nn.Linear(32, 3))
    opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    x, = data(7, (40, 10))
    y, = data(8, (40,), kind="int", high=3)
    ds = T.utils.data.TensorDataset(T.tensor(x), T.tensor(y))
    loader = T.utils.data.DataLoader(ds, batch_size=8, shuffle=True, drop_last=True)
    losses = []
    model.train()
    while len(losses) < STEPS:
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if len(losses) == STEPS:
                break
    return losses


def test_dropout_train_mode_seeded():
    ref = dropout_mlp(torch)
    got = dropout_mlp(glassgrad)
    np.testing.assert_allclose(got, ref, rtol=2e-4, atol=1e-5)
    assert not math.isnan(got[-1])
