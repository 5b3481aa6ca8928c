"""glassgrad.save(format="torch") writes archives that torch.load(weights_only=True) reads back as the same
objects (glassgrad/_pt_writer.py); a model trained on glassgrad runs in PyTorch from them."""
import io

import numpy as np
import pytest
import torch

import glassgrad

from _ckpt import assert_same, error_of


_same = assert_same


def _objects():
    glassgrad.manual_seed(0)
    cnn = glassgrad.nn.Sequential(glassgrad.nn.Conv2d(3, 4, 3), glassgrad.nn.BatchNorm2d(4), glassgrad.nn.Flatten(),
                                  glassgrad.nn.Linear(4, 2))
    opt = glassgrad.optim.SGD(cnn.parameters(), lr=0.1, momentum=0.9)
    cnn(glassgrad.randn(2, 3, 3, 3)).sum().backward()
    opt.step()
    base = glassgrad.arange(12.0)
    return {"model": cnn.state_dict(), "opt": opt.state_dict(), "param": glassgrad.nn.Parameter(glassgrad.ones(3)),
            "frozen": glassgrad.nn.Parameter(glassgrad.ones(2), requires_grad=False),
            "rg": glassgrad.ones(2, requires_grad=True),
            "dtypes": [glassgrad.ones(2, dtype=d) for d in (glassgrad.float16, glassgrad.float64, glassgrad.int8,
                                                            glassgrad.uint8, glassgrad.int16, glassgrad.int32,
                                                            glassgrad.int64, glassgrad.bool)],
            "views": (base[2:5], base.view(3, 4).t(), base), "empty": glassgrad.zeros(0, 3),
            "scalar": glassgrad.tensor(2.5),
            "plain": {"step": 3, "lr": 0.1, "neg": -7, "i32": -2 ** 31, "big": 2 ** 70, "neg_big": -2 ** 70,
                      "name": "x\u00e9", "none": None, "flag": False, "nested": [(), [1], {}]}}


@pytest.mark.parametrize("via", ["path", "fileobj"])
def test_torch_reads_what_glassgrad_writes(tmp_path, via):
    obj = _objects()
    if via == "path":
        p = tmp_path / "ck.pt"
        glassgrad.save(obj, p, format="torch")
        got = torch.load(p, weights_only=True)
    else:
        buf = io.BytesIO()
        glassgrad.save(obj, buf, format="torch")
        buf.seek(0)
        got = torch.load(buf, weights_only=True)
    _same(obj, got)
    got["views"][2][3] = 100.0                        # views share one storage in torch too
    assert got["views"][0][1].item() == 100.0 and got["views"][1][3, 0].item() == 100.0


def test_glassgrad_reads_its_torch_format_back(tmp_path):
    obj = _objects()
    p = tmp_path / "ck.pt"
    glassgrad.save(obj, p, format="torch")
    back = glassgrad.load(p)
    torch.save(torch.load(p, weights_only=True), tmp_path / "again.pt")
    _same(back, torch.load(tmp_path / "again.pt", weights_only=True))


def test_a_glassgrad_trained_model_runs_in_torch(tmp_path):
    glassgrad.manual_seed(0)
    gm = glassgrad.nn.Sequential(glassgrad.nn.Linear(5, 8), glassgrad.nn.ReLU(), glassgrad.nn.Linear(8, 2))
    opt = glassgrad.optim.Adam(gm.parameters(), lr=0.05)
    x = glassgrad.randn(16, 5)
    for _ in range(5):
        opt.zero_grad()
        gm(x).pow(2).mean().backward()
        opt.step()
    p = tmp_path / "trained.pt"
    glassgrad.save(gm.state_dict(), p, format="torch")
    tm = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    tm.load_state_dict(torch.load(p, weights_only=True))
    for (gn, gp), (tn, tp) in zip(gm.state_dict().items(), tm.state_dict().items()):
        assert gn == tn
        np.testing.assert_array_equal(tp.numpy(), gp.numpy())          # the weights arrive bit for bit
    # the two libraries' float32 GEMMs round differently (and torch's per CPU): close, not equal
    np.testing.assert_allclose(tm(torch.tensor(x.numpy())).detach().numpy(), gm(x).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_errors():
    with pytest.raises(type(error_of(lambda: torch.save({"f": lambda: 0}, io.BytesIO())))):   # pickle's own error
        glassgrad.save({"f": lambda: 0}, io.BytesIO(), format="torch")
    with pytest.raises(ValueError, match="unknown format"):
        glassgrad.save({}, io.BytesIO(), format="pickle")
