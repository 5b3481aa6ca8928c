"""Saving like torch and loading safely (issue 16): save writes torch's zip format by default (safetensors for
.safetensors paths), whole modules and any picklable object travel both ways between the libraries with
weights_only=False, the default load stays weights-only, and the safe-globals allow-list works as torch's."""
import dataclasses
import io
import os
import pickle

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import safetensors as gs
from glassgrad._pt_pickle import UnsafeCheckpointError
from _ckpt import assert_same, error_of


@dataclasses.dataclass
class Config:                       # a user class in a checkpoint (importable as test_save_objects.Config)
    lr: float
    layers: int


def _models(lib):
    nn = lib.nn
    lib.manual_seed(0)
    return {
        "mlp": nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 3)),
        "cnn": nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(16, 2)),
        "lstm": nn.LSTM(4, 5, num_layers=2, batch_first=True),
        "encoder": nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True),
        "embed": nn.Sequential(nn.Embedding(10, 4), nn.LayerNorm(4)),
    }


_INPUTS = {"mlp": ((3, 4), "f"), "cnn": ((2, 2, 4, 4), "f"), "lstm": ((2, 3, 4), "f"), "encoder": ((2, 5, 8), "f"),
           "embed": ((2, 3), "i")}


def _input(name):
    shape, kind = _INPUTS[name]
    rng = np.random.default_rng(7)
    return rng.integers(0, 10, shape) if kind == "i" else rng.standard_normal(shape).astype(np.float32)


def _run(lib, model, x):
    model.eval()
    with lib.no_grad():
        out = model(lib.tensor(x) if not isinstance(x, np.ndarray) or x.dtype.kind == "f" else lib.tensor(x))
    out = out[0] if isinstance(out, tuple) else out
    return out.numpy()


def _sync(torch_model, gg_model):
    """The glassgrad model with the torch model's weights (so outputs can be compared)."""
    sd = {k: glassgrad.tensor(v.detach().numpy()) for k, v in torch_model.state_dict().items()}
    gg_model.load_state_dict(sd)
    return gg_model


@pytest.mark.parametrize("name", sorted(_INPUTS))
def test_glassgrad_saves_a_whole_module_torch_loads_it(name, tmp_path):
    model = _models(glassgrad)[name]
    glassgrad.save(model, tmp_path / "m.pt")
    theirs = torch.load(tmp_path / "m.pt", weights_only=False)
    assert type(theirs).__module__.startswith("torch.nn") and type(theirs).__name__ == type(model).__name__
    x = _input(name)
    np.testing.assert_allclose(_run(torch, theirs, x), _run(glassgrad, model, x), rtol=1e-5, atol=1e-5)
    assert list(theirs.state_dict()) == list(model.state_dict())


@pytest.mark.parametrize("name", sorted(_INPUTS))
def test_torch_saves_a_whole_module_glassgrad_loads_it(name, tmp_path):
    model = _models(torch)[name]
    torch.save(model, tmp_path / "m.pt")
    ours = glassgrad.load(tmp_path / "m.pt", weights_only=False)
    assert type(ours) is type(_models(glassgrad)[name])
    x = _input(name)
    np.testing.assert_allclose(_run(glassgrad, ours, x), _run(torch, model, x), rtol=1e-5, atol=1e-5)
    ours.train()
    out = ours(glassgrad.tensor(x))                 # the loaded module trains: gradients reach its parameters
    (out[0] if isinstance(out, tuple) else out).float().sum().backward()
    assert all(p.grad is not None for p in ours.parameters() if p.requires_grad)


def test_whole_objects_round_trip_in_glassgrad(tmp_path):
    model = _models(glassgrad)["mlp"]
    opt = glassgrad.optim.Adam(model.parameters(), lr=0.01)
    model(glassgrad.randn(2, 4)).sum().backward()
    opt.step()
    glassgrad.save({"model": model, "opt": opt, "cfg": Config(0.1, 3), "epoch": 4}, tmp_path / "all.pt")
    back = glassgrad.load(tmp_path / "all.pt", weights_only=False)
    assert back["cfg"] == Config(0.1, 3) and back["epoch"] == 4
    assert_same(back["model"].state_dict(), model.state_dict())
    assert back["opt"].state_dict()["state"][0]["step"] == opt.state_dict()["state"][0]["step"]
    assert back["opt"].param_groups[0]["params"][0] is back["model"][0].weight     # shared objects stay shared


def test_default_load_stays_weights_only(tmp_path):
    for lib in (glassgrad, torch):
        lib.save(_models(lib)["mlp"], tmp_path / f"{lib.__name__}.pt")
        for loader in (glassgrad, torch):
            with pytest.raises(pickle.UnpicklingError, match="Sequential"):
                loader.load(tmp_path / f"{lib.__name__}.pt")
    with pytest.raises(UnsafeCheckpointError, match=r"add_safe_globals\(\[torch.nn.modules.container.Sequential\]\)"):
        glassgrad.load(tmp_path / "torch.pt")


class _Boom:
    def __reduce__(self):
        return os.system, ("echo pwned > /dev/null",)


def test_a_code_running_pickle_is_refused_unless_asked(tmp_path, monkeypatch):
    torch.save({"x": torch.ones(2), "evil": _Boom()}, tmp_path / "evil.pt")
    called = []
    monkeypatch.setattr(os, "system", lambda cmd: called.append(cmd))
    with pytest.raises(UnsafeCheckpointError, match="refusing global posix.system|refusing global os.system"):
        glassgrad.load(tmp_path / "evil.pt")
    assert not called


def test_state_dicts_round_trip_with_default_arguments_both_ways(tmp_path):
    gm, tm = _models(glassgrad)["cnn"], _models(torch)["cnn"]
    glassgrad.save(gm.state_dict(), tmp_path / "g.pt")            # default: torch's format
    tm.load_state_dict(torch.load(tmp_path / "g.pt"))           # torch.load's defaults (weights_only=True)
    assert_same(torch.load(tmp_path / "g.pt"), gm.state_dict())
    torch.save(tm.state_dict(), tmp_path / "t.pt")
    gm2 = _models(glassgrad)["cnn"]
    gm2.load_state_dict(glassgrad.load(tmp_path / "t.pt"))
    assert_same(gm2.state_dict(), tm.state_dict())


def test_safetensors_paths_and_format_argument_write_glassgrad_format(tmp_path):
    sd = {"w": glassgrad.arange(6.0).reshape(2, 3), "n": 3}
    glassgrad.save(sd, tmp_path / "a.safetensors")
    assert "glassgrad" in gs.read_file(tmp_path / "a.safetensors")[1]         # a safetensors file with structure
    for fmt in ("glassgrad", "safetensors"):
        b = io.BytesIO()
        glassgrad.save(sd, b, format=fmt)
        assert b.getvalue()[8:9] == b"{"                                      # safetensors' JSON header
    b = io.BytesIO()
    glassgrad.save(sd, b)
    assert b.getvalue()[:4] == b"PK\x03\x04"                                  # file objects: torch's zip too
    assert_same(torch.load(io.BytesIO(b.getvalue())), {"w": torch.arange(6.0).reshape(2, 3), "n": 3})
    with pytest.raises(ValueError, match="unknown format"):
        glassgrad.save(sd, io.BytesIO(), format="pickle")


def test_pickling_errors_are_pickles_own_as_in_torch():
    for obj in ({"f": lambda: 0}, {"g": (i for i in ())}):
        ours, theirs = error_of(lambda: glassgrad.save(obj, io.BytesIO())), \
            error_of(lambda: torch.save(obj, io.BytesIO()))
        assert type(ours) is type(theirs), (ours, theirs)


def _config_file(lib, tmp_path):
    p = tmp_path / f"cfg_{lib.__name__}.pt"
    lib.save({"w": lib.ones(2), "cfg": Config(0.5, 2)}, p)
    return p


def test_safe_globals_extend_the_weights_only_allow_list(tmp_path):
    glassgrad.serialization.clear_safe_globals()
    for lib in (glassgrad, torch):
        p = _config_file(lib, tmp_path)
        assert sorted(glassgrad.serialization.get_unsafe_globals_in_checkpoint(p)) == \
            sorted(torch.serialization.get_unsafe_globals_in_checkpoint(p)) == ["test_save_objects.Config"]
        with pytest.raises(pickle.UnpicklingError, match="Config"):
            glassgrad.load(p)
        with glassgrad.serialization.safe_globals([Config]):
            assert glassgrad.load(p)["cfg"] == Config(0.5, 2)
            assert glassgrad.serialization.get_unsafe_globals_in_checkpoint(p) == []
        assert glassgrad.serialization.get_safe_globals() == []
        with pytest.raises(pickle.UnpicklingError):
            glassgrad.load(p)
        glassgrad.serialization.add_safe_globals([(Config, "test_save_objects.Config")])
        try:
            assert glassgrad.serialization.get_safe_globals() == [(Config, "test_save_objects.Config")]
            assert glassgrad.load(p)["cfg"] == Config(0.5, 2)
        finally:
            glassgrad.serialization.clear_safe_globals()
        assert glassgrad.serialization.get_safe_globals() == []


def test_allow_listing_modules_loads_a_whole_module_weights_only(tmp_path):
    nn = glassgrad.nn
    torch.save(torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU()), tmp_path / "m.pt")
    with glassgrad.serialization.safe_globals([nn.Sequential, nn.Linear, nn.ReLU, set]):
        m = glassgrad.load(tmp_path / "m.pt")
    assert type(m) is nn.Sequential and type(m[0]) is nn.Linear


def test_pickle_module_and_weights_only_arguments_as_torch(tmp_path):
    p = tmp_path / "m.pt"
    torch.save(torch.nn.Linear(2, 2), p)
    for lib in (glassgrad, torch):
        e = error_of(lambda: lib.load(p, pickle_module=pickle, weights_only=True))
        assert type(e) is RuntimeError and str(e) == "Can not safely load weights when explicit pickle_module is specified"
    assert type(glassgrad.load(p, pickle_module=pickle)) is glassgrad.nn.Linear    # weights_only defaults to False
    with pytest.warns(UserWarning, match="pickle_load_args only works if `weights_only=False`"):
        glassgrad.save({"a": 1}, tmp_path / "a.pt")
        glassgrad.load(tmp_path / "a.pt", encoding="utf-8")


def test_sizes_devices_and_sets_load_weights_only(tmp_path):
    obj = {"size": torch.Size([2, 3]), "dev": torch.device("cpu"), "ids": {1, 2}}
    torch.save(obj, tmp_path / "o.pt")
    back = glassgrad.load(tmp_path / "o.pt")
    assert back["size"] == glassgrad.Size([2, 3]) and type(back["size"]) is glassgrad.Size
    assert back["dev"] == glassgrad.device("cpu") and back["ids"] == {1, 2}


@pytest.mark.parametrize("ns", ["nn", "optim", "optim.lr_scheduler", "distributions", "distributions.transforms",
                                "utils.data", "nn.functional"])
def test_glassgrad_objects_are_named_as_torch_names_them(ns):
    """A pickled glassgrad class or function names torch's object (so torch.load builds torch's), and glassgrad
    resolves that name back to itself."""
    import importlib
    import inspect
    from glassgrad._pt_objects import FullUnpickler, torch_name
    t_ns, g_ns = importlib.import_module("torch." + ns), importlib.import_module("glassgrad." + ns)
    checked = 0
    for n in dir(t_ns):
        a, b = getattr(t_ns, n, None), getattr(g_ns, n, None)
        if b is None or n.startswith("__") or not (inspect.isclass(a) and inspect.isclass(b) or
                                                   ns == "nn.functional" and inspect.isfunction(b)):
            continue
        if inspect.isclass(a) and a.__module__.split(".")[0] != "torch" or \
                not inspect.isclass(a) and getattr(a, "__module__", None) != "torch.nn.functional":
            continue
        want = f"{a.__module__}.{a.__qualname__}" if inspect.isclass(a) else f"torch.{ns}.{n}"
        assert torch_name(b) == want, n
        module, _, name = want.rpartition(".")
        assert FullUnpickler(io.BytesIO(), None).find_class(module, name) is b, n
        checked += 1
    assert checked > 5
