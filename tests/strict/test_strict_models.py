"""Whole models on the device (issue 17): an MLP, a small CNN (conv, batch norm, pooling) and an LSTM moved with
.cuda() -- the strict stand-in device here (GLASSGRAD_STRICT_DEVICE=1), CuPy on a GPU -- train one SGD step with
the loss, the gradients and the updated loss of the same model on the CPU (float32 tolerance: the device path
multiplies with np.matmul where the CPU may use the BLAS fast paths)."""
import contextlib

import numpy as np
import pytest

import glassgrad as gg
from glassgrad import backend
from glassgrad import nn

RTOL, ATOL = 1e-4, 1e-5

# Models not yet trainable on the device, as tests/strict/pending.py for the op table: each must fail (a model that
# starts passing fails the test until it is removed here).  All three wait only for ops outside nn (h/dnn's
# branch): addmm's _combine, softmax's _softmax_arr and loss's nll reductions (np.asarray of device results),
# ArrayNS.index_add_zeros / view_scatter / zeros (host zeros) -- with those fixed all three pass.
PENDING = set()


class _LSTMNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 7, num_layers=2, batch_first=True)
        self.head = nn.Linear(7, 3)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def _mlp():
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)), (6, 8)


def _cnn():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 4, 3), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(4, 3)), (4, 3, 10, 10)


def _lstm():
    return _LSTMNet(), (4, 6, 5)


def _train_step(build, device):
    gg.manual_seed(0)
    model, xshape = build()
    rng = np.random.default_rng(1)
    x = gg.from_numpy(rng.standard_normal(xshape).astype(np.float32))
    y = gg.from_numpy(rng.integers(0, 3, xshape[0]).astype(np.int64))
    if device == "cuda":
        model, x, y = model.cuda(), x.cuda(), y.cuda()
    opt = gg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model.train()
    with _no_copies(device) as copies:          # a training step stays on the device: no array crosses
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        grads = [p.grad for p in model.parameters()]
        opt.step()
        after = nn.functional.cross_entropy(model(x), y)
    assert not copies, f"an array of {copies[0][0]} copied between host and device:\n{copies[0][1]}"
    return loss, grads, after, list(model.parameters())


def _no_copies(device):
    if device != "cuda" or not backend.STRICT:
        return contextlib.nullcontext([])
    from glassgrad import _strict
    return _strict.recording(uploads=True)


def _same(a, b, what):
    assert b.device.type == "cuda", f"{what}: on {b.device}"
    np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), rtol=RTOL, atol=ATOL, err_msg=what)


def _check(build):
    c_loss, c_grads, c_after, c_params = _train_step(build, "cpu")
    d_loss, d_grads, d_after, d_params = _train_step(build, "cuda")
    _same(c_loss, d_loss, "loss")
    assert len(c_grads) == len(d_grads)
    for i, (a, b) in enumerate(zip(c_grads, d_grads)):
        assert a is not None and b is not None, f"parameter {i}: no gradient"
        _same(a, b, f"grad of parameter {i}")
    for i, (a, b) in enumerate(zip(c_params, d_params)):
        _same(a, b, f"parameter {i} after the step")
    _same(c_after, d_after, "loss after one step")
    assert float(d_after) != float(d_loss)          # the step changed the model


@pytest.mark.parametrize("name", ["mlp", "cnn", "lstm"])
def test_model_trains_on_device_as_on_cpu(name):
    build = {"mlp": _mlp, "cnn": _cnn, "lstm": _lstm}[name]
    if name in PENDING:
        with pytest.raises(Exception):      # (passing now? remove it from PENDING)
            _check(build)
        pytest.xfail(f"{name}: not trainable on the device yet (PENDING)")
    _check(build)
