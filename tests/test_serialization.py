"""glassgrad.save / glassgrad.load (the safe default format): what training needs round-trips exactly,
views keep sharing storage, resuming in a fresh process continues bit for bit, and malformed structures
raise CheckpointError without building anything."""
import io
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import glassgrad
from glassgrad import safetensors as gs
from glassgrad.serialization import CheckpointError

ROOT = os.path.join(os.path.dirname(__file__), "..")


def _eq(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, glassgrad.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad
        assert a.stride() == b.stride()
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _eq(a[k], b[k])
        assert getattr(a, "_metadata", None) == getattr(b, "_metadata", None)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _eq(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


def _roundtrip(obj, tmp_path, via="path"):
    if via == "path":
        p = tmp_path / "c.pt"
        glassgrad.save(obj, p, format="glassgrad")
        return glassgrad.load(p)
    buf = io.BytesIO()
    glassgrad.save(obj, buf)
    buf.seek(0)
    return glassgrad.load(buf)


@pytest.mark.parametrize("via", ["path", "fileobj"])
def test_nested_values_round_trip(tmp_path, via):
    obj = {"a": [1, 2.5, float("nan"), float("inf"), -float("inf"), "s", True, None, (3, "x")],
           7: glassgrad.arange(6.0).reshape(2, 3), (1, 2): {"deep": [glassgrad.tensor([True, False])]},
           "i64": glassgrad.tensor([2 ** 62]), "half": glassgrad.ones(3, dtype=glassgrad.float16),
           "rg": glassgrad.ones(2, requires_grad=True), "empty": glassgrad.zeros(0, 4),
           "scalar": glassgrad.tensor(1.5), "big": 10 ** 30}
    _eq(obj, _roundtrip(obj, tmp_path, via))


def test_views_come_back_sharing_one_storage(tmp_path):
    base = glassgrad.arange(12.0).reshape(3, 4)
    obj = {"base": base, "t": base.t(), "row": base[1], "col": base[:, 2], "tail": base.view(-1)[5:]}
    out = _roundtrip(obj, tmp_path)
    _eq(obj, out)
    out["base"][1, 2] = 100.0
    assert out["t"][2, 1].item() == out["row"][2].item() == out["col"][1].item() == out["tail"][1].item() == 100.0
    assert len(gs.load_file(tmp_path / "c.pt")) == 1          # one storage in the file
    for mmap in (False, True):                                # saved again after loading: still one
        again = glassgrad.load(tmp_path / "c.pt", mmap=mmap)
        glassgrad.save(again, tmp_path / "again.pt", format="glassgrad")
        assert len(gs.load_file(tmp_path / "again.pt")) == 1
        _eq(again, glassgrad.load(tmp_path / "again.pt"))


def test_module_optimizer_scheduler_rng_state(tmp_path):
    glassgrad.manual_seed(0)
    model = glassgrad.nn.Sequential(glassgrad.nn.Linear(4, 3), glassgrad.nn.BatchNorm1d(3))
    opt = glassgrad.optim.Adam(model.parameters(), lr=0.1)
    sched = glassgrad.optim.lr_scheduler.StepLR(opt, 2)
    model(glassgrad.randn(5, 4)).sum().backward()
    opt.step()
    sched.step()
    obj = {"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
           "rng": glassgrad.get_rng_state(), "params": list(model.parameters())}
    out = _roundtrip(obj, tmp_path)
    _eq(obj, out)
    assert isinstance(out["params"][0], glassgrad.nn.Parameter)
    fresh = glassgrad.nn.Sequential(glassgrad.nn.Linear(4, 3), glassgrad.nn.BatchNorm1d(3))
    fresh.load_state_dict(out["model"])
    opt2 = glassgrad.optim.Adam(fresh.parameters(), lr=0.1)
    opt2.load_state_dict(out["opt"])
    glassgrad.set_rng_state(out["rng"])


_RESUME = """
import sys
sys.path.insert(0, {src!r})
import glassgrad as torch
mode, path = sys.argv[1], sys.argv[2]
def build():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Dropout(0.2), torch.nn.Linear(16, 3))
    opt = torch.optim.AdamW(model.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 10)
    return model, opt, sched
model, opt, sched = build()
x, y = torch.randn(32, 6), torch.randint(0, 3, (32,))
start = 0
if mode == "resume":
    ck = torch.load(path)
    model.load_state_dict(ck["model"]); opt.load_state_dict(ck["opt"]); sched.load_state_dict(ck["sched"])
    torch.set_rng_state(ck["rng"]); start = ck["step"]
for step in range(start, 8):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward(); opt.step(); sched.step()
    print(step, loss.item().hex())
    if mode == "save" and step == 3:
        torch.save({{"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                    "rng": torch.get_rng_state(), "step": step + 1}}, path)
"""


def test_resume_in_a_fresh_process_is_bit_identical(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(_RESUME.format(src=os.path.join(ROOT, "src")))
    ck = str(tmp_path / "ck.pt")

    def run(mode):
        out = subprocess.run([sys.executable, str(script), mode, ck], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout.splitlines()
    full = run("save")
    resumed = run("resume")
    assert len(full) == 8 and resumed == full[4:]


def _forge(tmp_path, structure, tensors=None):
    p = tmp_path / "forged.pt"
    gs.save_file(tensors or {"0": glassgrad.arange(4.0)}, p,
                 metadata={"glassgrad": json.dumps({"version": 1, "root": structure})})
    return p


T = {"$tensor": "0", "dtype": "float32", "shape": [4], "strides": [1], "offset": 0, "requires_grad": False}
FORGED = {
    "unknown_tag": ({"$call": "os.system"}, "unknown entry"),
    "missing_storage": (dict(T, **{"$tensor": "9"}), "missing storage"),
    "past_the_end": (dict(T, shape=[5]), "outside its storage"),
    "huge_stride": (dict(T, shape=[2], strides=[10 ** 12]), "outside its storage"),
    "negative_offset": (dict(T, offset=-1), "negative"),
    "negative_stride_before_start": (dict(T, shape=[2], strides=[-1]), "outside its storage"),
    "dtype_mismatch": (dict(T, dtype="float64"), "does not match"),
    "float_shape": (dict(T, shape=[4.0]), "malformed tensor"),
    "bad_float": ({"$float": "1e999999"}, "bad float"),
    "bad_pairs": ({"$dict": [[1, 2, 3]]}, "pairs"),
    "unhashable_key": ({"$dict": [[[1], 2]]}, "unhashable"),
}


@pytest.mark.parametrize("case", sorted(FORGED))
def test_forged_structures_raise_checkpoint_error(case, tmp_path):
    structure, msg = FORGED[case]
    with pytest.raises(CheckpointError, match=msg):
        glassgrad.load(_forge(tmp_path, structure))


def test_deep_nesting_is_refused(tmp_path):
    p = tmp_path / "deep.pt"
    gs.save_file({}, p, metadata={"glassgrad": '{"version": 1, "root": ' + "[" * 100000 + "]" * 100000 + "}"})
    with pytest.raises(CheckpointError, match="nested deeper than 1000"):
        glassgrad.load(p)


def test_not_a_glassgrad_checkpoint(tmp_path):
    p = tmp_path / "plain.safetensors"
    gs.save_file({"w": glassgrad.ones(2)}, p)
    with pytest.raises(CheckpointError, match="not a glassgrad checkpoint"):
        glassgrad.load(p)
    p.write_bytes(b"PK\x03\x04 not ours")
    with pytest.raises(gs.SafetensorError):
        glassgrad.load(p)


def test_unsupported_objects_are_refused_at_save(tmp_path):
    # glassgrad's own format holds data only (torch's format pickles objects: tests/test_save_objects.py)
    with pytest.raises(TypeError, match="cannot store a function"):
        glassgrad.save({"f": lambda: 0}, tmp_path / "x.safetensors")
    model = glassgrad.nn.Linear(2, 2)
    for fmt in ("glassgrad", "safetensors"):
        with pytest.raises(TypeError, match=r"cannot store a Linear .* save its state_dict\(\) instead"):
            glassgrad.save(model, tmp_path / "m.pt", format=fmt)
        with pytest.raises(TypeError, match=r"cannot store a SGD .* state_dict"):
            glassgrad.save({"opt": glassgrad.optim.SGD(model.parameters(), lr=0.1)}, tmp_path / "m.pt", format=fmt)
    assert not os.listdir(tmp_path)


_WRITER = """
import os, resource, signal, sys
sys.path.insert(0, {src!r})
import glassgrad
path, mode = sys.argv[1], sys.argv[2]
big = {{"w": glassgrad.ones(16 * 2 ** 20)}}            # 64 MiB
if mode == "limit":                                   # a size-limited file: writes past 1 MiB fail (EFBIG)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2 ** 20, 2 ** 20))
    try:
        glassgrad.save(big, path)
    except OSError as e:
        print("failed", e.errno)
else:
    print("start", flush=True)
    while True:
        glassgrad.save(big, path)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE / SIGKILL semantics: Linux")
@pytest.mark.parametrize("mode", ["limit", "kill"])
def test_a_writer_that_dies_or_hits_a_full_disk_leaves_the_previous_checkpoint(tmp_path, mode):
    import time
    path = tmp_path / "ck.pt"
    glassgrad.save({"w": glassgrad.arange(3.0)}, path)
    script = tmp_path / "writer.py"
    script.write_text(_WRITER.format(src=os.path.join(ROOT, "src")))
    if mode == "limit":
        out = subprocess.run([sys.executable, str(script), str(path), mode], capture_output=True, text=True,
                             timeout=120)
        assert out.stdout.split() == ["failed", "27"], out.stderr       # EFBIG
        assert sorted(os.listdir(tmp_path)) == ["ck.pt", "writer.py"]  # the temporary file was removed
        assert glassgrad.load(path)["w"].tolist() == [0.0, 1.0, 2.0]
        return
    p = subprocess.Popen([sys.executable, str(script), str(path), mode], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "start"
    time.sleep(0.4)                                    # mid-write of some save
    p.kill()
    p.wait()
    w = glassgrad.load(path)["w"]                      # the old checkpoint or a complete new one, never a torn one
    assert w.tolist() == [0.0, 1.0, 2.0] or (w.shape == (16 * 2 ** 20,) and bool((w == 1).all()))
    left = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]          # the killed save's temporary file
    for n in left:                                                           # once it is old enough ...
        os.utime(tmp_path / n, (time.time() - 3600,) * 2)
    glassgrad.save({"w": glassgrad.arange(3.0)}, tmp_path / "other.pt")      # ... any save in the folder removes it
    assert sorted(os.listdir(tmp_path)) == ["ck.pt", "other.pt", "writer.py"], left


@pytest.mark.skipif(os.name != "posix", reason="stale temporary files are recognised by pid on POSIX only")
def test_only_a_dead_writers_old_temporary_files_are_removed(tmp_path):
    import time
    from glassgrad._atomic import _temp_prefix
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    prefix = _temp_prefix(str(tmp_path / "ck.pt"))
    names = {
        "stale": f"{prefix}{dead.pid}.abc_1234.tmp",                   # dead writer, old: removed
        "fresh": f"{prefix}{dead.pid}.fresh123.tmp",                   # dead writer, written just now: kept
        "live": f"{prefix}{os.getppid()}.live1234.tmp",                # a running writer: kept
        "mine": f"{prefix}{os.getpid()}.mine1234.tmp",                 # this process (another thread?): kept
        "other_host": f".ck.pt.otherhost-{dead.pid}.abcd1234.tmp",     # another machine on a shared disk: kept
        "other_file": f".ck2.pt.{prefix[7:]}{dead.pid}.abcd1234.tmp",  # a dead writer's for another file: removed
        "not_ours": f"{prefix}{dead.pid}.tmp",                         # not mkstemp's pattern: kept
    }
    for k, n in names.items():
        (tmp_path / n).write_bytes(b"x")
        if k != "fresh":
            os.utime(tmp_path / n, (time.time() - 3600,) * 2)
    glassgrad.save({"w": glassgrad.arange(3.0)}, tmp_path / "ck.pt")
    kept = [n for k, n in names.items() if k not in ("stale", "other_file")]
    assert sorted(os.listdir(tmp_path)) == sorted(["ck.pt"] + kept)
