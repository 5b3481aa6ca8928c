"""``glassgrad demo``: a small CNN with two loss terms on scikit-learn's handwritten digits, and its report.

The data set (1797 8x8 images, ``sklearn.datasets.load_digits``) ships inside scikit-learn: nothing is
downloaded.  The model predicts the digit (10 classes, ``loss_digit``) and, from the same features,
whether the digit is even (``loss_even``); the loss is their sum.  Training uses glassgrad's own
``nn``, ``optim`` and ``DataLoader`` under a tqdm progress bar, while ``explain`` watches: the graph
and the attribution of the two terms at the first step, the gradient flow at every step.  It ends by
printing the test accuracy and the path of the HTML report.

Needs the ``demo`` extra: ``pip install "glassgrad[demo]"`` (scikit-learn, tqdm, matplotlib, graphviz).  The
report's graph is drawn by Graphviz's ``dot`` program when it is installed, else by glassgrad's own layout.
"""
import os
import sys
import time

import numpy as np

__all__ = ["run_demo", "DigitNet", "MissingExtra", "load_data"]

_EXTRA = 'pip install "glassgrad[demo]"'


class MissingExtra(ImportError):
    """A package the demo needs is not installed."""


def _require(mod, pkg):
    try:
        return __import__(mod)
    except ImportError:
        raise MissingExtra(f"the demo needs {pkg}, which is not installed: {_EXTRA} "
                           f"(or pip install {pkg})") from None


def load_data(seed=0, test_fraction=0.2):
    """(x_train, y_train, x_test, y_test) as float32 (N, 1, 8, 8) in [0, 1] and int64 labels."""
    _require("sklearn", "scikit-learn")
    from sklearn.datasets import load_digits
    d = load_digits()
    x = (d.images.astype(np.float32) / 16.0)[:, None, :, :]
    y = d.target.astype(np.int64)
    perm = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(len(y) * test_fraction))
    te, tr = perm[:n_test], perm[n_test:]
    return x[tr], y[tr], x[te], y[te]


def _model_class():
    import glassgrad.nn as nn
    import glassgrad.nn.functional as F

    class DigitNet(nn.Module):
        """conv(1->8) -> conv(8->16) -> maxpool -> fc(256->64) -> two heads: digit (10) and 'is even' (1)."""

        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(16 * 4 * 4, 64)
            self.digit = nn.Linear(64, 10)
            self.even = nn.Linear(64, 1)

        def forward(self, x):
            h = F.relu(self.conv1(x))
            h = self.pool(F.relu(self.conv2(h)))
            h = F.relu(self.fc(h.flatten(1)))
            return self.digit(h), self.even(h).squeeze(1)

    return DigitNet


def DigitNet():  # noqa: N802 - a factory named like the class it builds
    return _model_class()()


def _train(model, loader, opt, epochs, bar_cls, F):
    for epoch in range(epochs):
        bar = bar_cls(loader, desc=f"epoch {epoch + 1}/{epochs}", unit="batch", leave=True)
        seen = correct = 0
        for xb, yb in bar:
            logits, even_logit = model(xb)
            loss_digit = F.cross_entropy(logits, yb)
            loss_even = F.binary_cross_entropy_with_logits(even_logit, (yb % 2 == 0).float())
            loss = loss_digit + loss_even
            opt.zero_grad()
            loss.backward()
            opt.step()
            correct += int((logits.argmax(1) == yb).sum().item())
            seen += len(yb)
            bar.set_postfix({"loss": f"{loss.item():.3f}", "acc": f"{correct / seen:.3f}"})
        bar.close()


def _accuracy(model, x, y):
    import glassgrad as torch
    with torch.no_grad():
        logits, even_logit = model(x)
        digit = (logits.argmax(1) == y).float().mean().item()
        even = ((even_logit > 0) == (y % 2 == 0)).float().mean().item()
    return digit, even


def run_demo(epochs=None, out="glassgrad-demo", seed=0, batch_size=64, lr=3e-3, stream=None):
    """Train, report; returns (test digit accuracy, test 'even' accuracy, report path)."""
    epochs = 10 if epochs is None else int(epochs)
    if epochs < 1:
        raise ValueError("epochs must be at least 1")
    _require("tqdm", "tqdm")
    from tqdm.auto import tqdm
    stream = stream if stream is not None else sys.stdout
    t0 = time.perf_counter()
    if not _has("matplotlib"):
        print(f"glassgrad demo: matplotlib not installed: the report will have no plots ({_EXTRA})",
              file=sys.stderr)

    import glassgrad as torch
    import glassgrad.nn.functional as F
    from glassgrad.utils.data import DataLoader, TensorDataset
    from glassgrad.explain._session import Session
    from glassgrad.explain._report import write_report

    x_tr, y_tr, x_te, y_te = load_data(seed)
    torch.manual_seed(seed)
    model = DigitNet()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loader = DataLoader(TensorDataset(torch.from_numpy(x_tr), torch.from_numpy(y_tr)), batch_size=batch_size,
                        shuffle=True)
    total = epochs * len(loader)
    print(f"glassgrad demo: {type(model).__name__} on scikit-learn's digits ({len(y_tr)} train / {len(y_te)} test "
          f"images, 8x8), two loss terms: loss_digit (10 classes) + loss_even (is the digit even?)", file=stream)
    sess = Session(total, full=True, nan_steps=1, progress=False)
    with sess:
        _train(model, loader, opt, epochs, tqdm, F)
    acc, acc_even = _accuracy(model, torch.from_numpy(x_te), torch.from_numpy(y_te))
    res = sess.result()
    res.script = "glassgrad demo"
    res.args = [f"--epochs {epochs}"]
    res.notes.append(f"test accuracy: digit {acc:.3f}, even/odd {acc_even:.3f} "
                     f"({len(y_te)} held-out images; chance is 0.1 and 0.5)")
    res.notes.append("attribution and graph: the first training step; gradient flow: every step")
    res.seconds = time.perf_counter() - t0
    path = write_report(res, os.path.join(out, "report.html"), title="glassgrad demo: two-loss CNN on digits")
    print(f"test accuracy: {acc:.3f} (digit, 10 classes), {acc_even:.3f} (even/odd)", file=stream)
    print(f"report: {path}", file=stream)
    return acc, acc_even, path


def _has(mod):
    try:
        __import__(mod)
        return True
    except ImportError:
        return False
