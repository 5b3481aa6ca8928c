"""The example models of the nn issue, written once the ordinary PyTorch way and shared by
tests/models/test_models.py (trained on glassgrad and torch) and tests/explain/test_on_models.py.

Each ``build_<name>(T, seed=0)`` seeds ``T`` with ``T.manual_seed(seed)`` and then constructs the model from
``T.nn`` (``T`` is ``torch`` or ``glassgrad``), so the same seed gives the same weights in both libraries.
The ``*_batch(T)`` helpers give each model's fixed data as ``T`` tensors (drawn with NumPy, so they do not
touch ``T``'s generator).
"""
import numpy as np

GPT_V, GPT_D, GPT_H, GPT_L, GPT_S = 32, 32, 4, 2, 16      # vocabulary, width, heads, blocks, context


def data(seed, *shapes, kind="normal", high=None):
    rng = np.random.default_rng(seed)
    if kind == "int":
        return [rng.integers(0, high, size=s).astype(np.int64) for s in shapes]
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


# -- a CIFAR-style ResNet with BatchNorm -------------------------------------------------------------------
def build_resnet(T, seed=0):
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
            return self.fc(T.flatten(self.pool(out), 1))

    T.manual_seed(seed)
    return ResNet()


def resnet_batch(T):
    """8 images 3x12x12 and their labels in [0, 10)."""
    x, = data(1, (8, 3, 12, 12))
    y, = data(2, (8,), kind="int", high=10)
    return T.tensor(x), T.tensor(y)


# -- a small GPT: weight tying, causal attention --------------------------------------------------------
def build_gpt(T, seed=0):
    nn, F = T.nn, T.nn.functional
    V, D, H, L, S = GPT_V, GPT_D, GPT_H, GPT_L, GPT_S

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

        def forward(self, idx, targets=None):
            """The logits, or with ``targets`` the mean cross-entropy over all positions."""
            pos = T.arange(idx.shape[1])
            x = self.wte(idx) + self.wpe(pos)
            for b in self.blocks:
                x = b(x)
            logits = self.lm_head(self.ln_f(x))
            if targets is None:
                return logits
            return F.cross_entropy(logits.view(-1, V), targets.reshape(-1))

    T.manual_seed(seed)
    return GPT()


def gpt_batch(T):
    """4 token sequences of length GPT_S + 1 (inputs ``seq[:, :-1]``, targets ``seq[:, 1:]``)."""
    seq, = data(3, (4, GPT_S + 1), kind="int", high=GPT_V)
    return T.tensor(seq)


# -- an LSTM language model ----------------------------------------------------------------------------
def build_lstm_lm(T, seed=0):
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

    T.manual_seed(seed)
    return LM()


def lstm_batch(T):
    """3 token sequences of length 13 over a vocabulary of 20."""
    seq, = data(4, (3, 13), kind="int", high=20)
    return T.tensor(seq)


# -- a detector-style head: two levels, shared heads (seed 000's pattern) ---------------------------------
def build_detector(T, seed=0):
    nn = T.nn

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

    T.manual_seed(seed)
    return Head()


def ohem(T, pred, target, negative_ratio=3):
    """Cross-entropy with online hard example mining: all positives and the hardest negatives."""
    F = T.nn.functional
    pos = target.bool()
    neg = ~pos
    n_pos = int(pos.sum())
    loss_pos = F.cross_entropy(pred[pos], target[pos], reduction="sum")
    loss_neg = F.cross_entropy(pred[neg], target[neg], reduction="none")
    n_neg = min(int(neg.sum()), negative_ratio * n_pos)
    loss_neg, _ = T.topk(loss_neg, n_neg)
    return (loss_pos + loss_neg.sum()) / (n_pos + n_neg)


def detector_batch(T):
    """2 images 3x16x16, and per level (16x16, 8x8) the binary targets and the radii."""
    x, = data(5, (2, 3, 16, 16))
    rng = np.random.default_rng(6)
    targets = [(rng.random((2, s, s)) > 0.7).astype(np.int64) for s in (16, 8)]
    radii = [rng.random((2, s, s)).astype(np.float32) * 3 for s in (16, 8)]
    return T.tensor(x), [T.tensor(t) for t in targets], [T.tensor(r) for r in radii]


# -- an MLP with dropout ---------------------------------------------------------------------------------
def build_dropout_mlp(T, seed=0):
    nn = T.nn
    T.manual_seed(seed)
    return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 32), nn.Tanh(),
                         nn.Dropout(0.2), nn.Linear(32, 3))


def mlp_batch(T, n):
    """n samples of 10 features and their labels in [0, 3)."""
    x, = data(7, (n, 10))
    y, = data(8, (n,), kind="int", high=3)
    return T.tensor(x), T.tensor(y)
