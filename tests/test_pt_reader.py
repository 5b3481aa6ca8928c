"""Reading torch.save archives without torch and without unpickling (glassgrad/_pt_reader.py, _pt_pickle.py): what
torch.load(weights_only=True) returns, and a clean, specific error for hostile or broken files."""
import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import glassgrad
import glassgrad.nn.parameter  # noqa: F401 -- imported up front: the hostile tests count allocations
from _ckpt import Reduce as _Reduce, TorchLike as _TorchLike, assert_same
from glassgrad._pt_reader import UnsafeCheckpointError
from glassgrad.serialization import CheckpointError


_same = assert_same


def _objects():
    torch.manual_seed(0)
    cnn = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Flatten(),
                              torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(cnn.parameters())
    cnn(torch.randn(2, 3, 3, 3)).sum().backward()
    opt.step()
    base = torch.arange(12.0)
    return {"model": cnn.state_dict(), "opt": opt.state_dict(), "param": torch.nn.Parameter(torch.ones(3)),
            "dtypes": [torch.ones(2, dtype=d) for d in (torch.float16, torch.float64, torch.int8, torch.uint8,
                                                         torch.int16, torch.int32, torch.int64, torch.bool)],
            "views": (base[2:5], base.view(3, 4).t(), base), "empty": torch.zeros(0, 3), "scalar": torch.tensor(2.5),
            "plain": {"step": 3, "lr": 0.1, "name": "x", "none": None, "flag": True, "big": 2 ** 70}}


@pytest.mark.parametrize("via", ["path", "fileobj"])
def test_torch_archives_load_as_torch_loads_them(tmp_path, via):
    obj = _objects()
    p = tmp_path / "ck.pt"
    torch.save(obj, p)
    want = torch.load(p, weights_only=True)
    got = glassgrad.load(p) if via == "path" else glassgrad.load(io.BytesIO(p.read_bytes()))
    _same(want, got)
    got["views"][2][3] = 100.0                        # views still share one storage
    assert got["views"][0][1].item() == 100.0 and got["views"][1][3, 0].item() == 100.0


def test_a_torch_state_dict_drives_a_glassgrad_model(tmp_path):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU()).eval()
    p = tmp_path / "m.pth"
    torch.save(tm.state_dict(), p)
    gm = glassgrad.nn.Sequential(glassgrad.nn.Conv2d(3, 4, 3), glassgrad.nn.BatchNorm2d(4), glassgrad.nn.ReLU()).eval()
    gm.load_state_dict(glassgrad.load(p))
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(gm(glassgrad.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


# -- hostile files -------------------------------------------------------------------------------------

def _archive(tmp_path, pkl, extra=(), data=None):
    p = tmp_path / "evil.pt"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("evil/data.pkl", pkl)
        z.writestr("evil/byteorder", "little")
        for k, v in (data or {}).items():
            z.writestr(f"evil/data/{k}", v)
        for name in extra:
            z.writestr(name, b"x")
    return p


def _marker_cmd(tmp_path):
    return f"touch {tmp_path / 'PWNED'}"


EXPLOITS = {
    "os_system": lambda m: _Reduce(os.system, (m,)),
    "eval": lambda m: _Reduce(eval, (f"__import__('os').system({m!r})",)),
    "exec": lambda m: _Reduce(exec, (f"import os; os.system({m!r})",)),
    "subprocess": lambda m: _Reduce(__import__("subprocess").Popen, (m,)),
    "importlib": lambda m: _Reduce(__import__("importlib").import_module, ("os",)),
    "getattr_chain": lambda m: _Reduce(getattr, (_Reduce(__import__("importlib").import_module, ("os",)), "system")),
    "inside_a_state_dict": lambda m: OrderedDict(w=_Reduce(os.system, (m,))),
}


@pytest.mark.parametrize("proto", [2, 4])
@pytest.mark.parametrize("case", sorted(EXPLOITS))
def test_code_execution_payloads_are_refused_naming_the_global(case, proto, tmp_path):
    pkl = pickle.dumps(EXPLOITS[case](_marker_cmd(tmp_path)), protocol=proto)
    with pytest.raises(UnsafeCheckpointError, match="refusing global"):
        glassgrad.load(_archive(tmp_path, pkl))
    assert not (tmp_path / "PWNED").exists()


def _forged_tensor(tmp_path, size, stride, offset=0, numel=4, nbytes=16):
    import torch._utils as tu
    marker = object()
    f = io.BytesIO()
    _TorchLike(f, {id(marker): ("storage", torch.FloatStorage, "0", "cpu", numel)}).dump(
        _Reduce(tu._rebuild_tensor_v2, (marker, offset, size, stride, False, OrderedDict())))
    return _archive(tmp_path, f.getvalue(), data={"0": b"\0" * nbytes})


HOSTILE = {
    "setitem_on_list": (lambda t: _archive(t, b"\x80\x02]K\x01K\x02s."), "not a dict"),
    "setitems_on_tuple": (lambda t: _archive(t, b"\x80\x02)(K\x01K\x02u."), "not a dict"),
    "append_on_dict": (lambda t: _archive(t, b"\x80\x02}K\x01a."), "not a list"),
    "stack_underflow": (lambda t: _archive(t, b"\x80\x02s."), "underflow"),
    "truncated_pickle": (lambda t: _archive(t, b"\x80\x02X\xff\x00\x00\x00ab"), "truncated"),
    "unknown_opcode": (lambda t: _archive(t, b"\x80\x02\xff."), "unsupported pickle opcode"),
    "storage_larger_than_bytes": (lambda t: _forged_tensor(t, (4,), (1,), numel=1 << 40), "declares"),
    "view_outside_storage": (lambda t: _forged_tensor(t, (2 ** 40,), (1,)), "outside its storage"),
    "huge_stride": (lambda t: _forged_tensor(t, (2,), (2 ** 50,)), "outside its storage"),
    "negative_stride": (lambda t: _forged_tensor(t, (2,), (-1,)), "negative"),
    "dotdot_entry": (lambda t: _archive(t, b"\x80\x02N.", extra=["evil/../../etc/x"]), "unsafe path"),
    "no_data_pkl": (lambda t: _no_pkl(t), "data.pkl"),
    "truncated_zip": (lambda t: _truncated(t), "zip"),
    "bad_utf8": (lambda t: _archive(t, b"\x80\x02X\x02\x00\x00\x00\xff\xfe."), "UTF-8"),
    "compressed_storage": (lambda t: _compressed(t), "compressed"),
}


def _no_pkl(tmp_path):
    p = tmp_path / "nopkl.pt"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("a/other", b"x")
    return p


def _compressed(tmp_path):
    """A storage entry that would inflate (a zip bomb shape): refused before reading."""
    p = _forged_tensor(tmp_path, (4,), (1,))
    q = tmp_path / "deflated.pt"
    with zipfile.ZipFile(p) as src, zipfile.ZipFile(q, "w", zipfile.ZIP_DEFLATED) as dst:
        for n in src.namelist():
            dst.writestr(n, src.read(n))
    return q


def _truncated(tmp_path):
    p = tmp_path / "ok.pt"
    torch.save({"w": torch.ones(1000)}, p)
    data = p.read_bytes()
    p.write_bytes(data[:len(data) // 2])
    return p


class _ReduceState(_Reduce):
    """An object pickled as fn(*args) followed by BUILD(state)."""

    def __init__(self, fn, args, state):
        super().__init__(fn, args)
        self.state = state

    def __reduce__(self):
        return self.fn, self.args, self.state


def _tensor_with(tmp_path, wrap, storage_tag="storage", dtypes=(torch.FloatStorage,)):
    """A torch-like archive whose pickle is wrap(rebuild_args...) over storage '0' (one pid per dtype)."""
    import torch._utils as tu
    markers = [object() for _ in dtypes]
    f = io.BytesIO()
    pids = {id(m): (storage_tag, d, "0", "cpu", 4) for m, d in zip(markers, dtypes)}
    _TorchLike(f, pids).dump(wrap(tu, markers))
    return _archive(tmp_path, f.getvalue(), data={"0": b"\0" * 16})


def _torchscript(tmp_path):
    class Scripted(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def forward(self, x):
            return self.lin(x)
    p = tmp_path / "scripted.pt"
    torch.jit.save(torch.jit.script(Scripted()), str(p))
    return p


# the shapes of published weights_only bypasses: a TorchScript archive (CVE-2025-32434: torch.load handed it to
# torch.jit.load), callables reachable from allowed-looking torch/numpy globals, BUILD on allowed objects, and
# type confusion between the rebuild functions' arguments (CVE-2026-24747's family, with SETITEM above)
BYPASSES = {
    "torchscript_archive": (_torchscript, "TorchScript"),
    "rebuild_from_type_v2": (lambda t: _archive(t, pickle.dumps(_Reduce(
        __import__("torch._tensor")._tensor._rebuild_from_type_v2, (os.system, torch.Tensor, ("x",), {})),
        protocol=2)), "refusing global torch._tensor._rebuild_from_type_v2"),
    "storage_load_from_bytes": (lambda t: _archive(t, pickle.dumps(_Reduce(
        __import__("torch.storage").storage._load_from_bytes, (b"x",)), protocol=2)),
        "refusing global torch.storage._load_from_bytes"),
    "numpy_reconstruct": (lambda t: _archive(t, pickle.dumps(np.arange(3), protocol=2)), "refusing global numpy"),
    "codecs_encode": (lambda t: _archive(t, pickle.dumps(_Reduce(__import__("codecs").encode, ("x", "latin1")),
                                                          protocol=2)), "refusing global _codecs.encode"),
    "parameter_class": (lambda t: _archive(t, pickle.dumps(_Reduce(torch.nn.Parameter, ()), protocol=2)),
                        "refusing global torch.nn.parameter.Parameter"),
    "build_on_a_tensor": (lambda t: _tensor_with(t, lambda tu, m: _ReduceState(
        tu._rebuild_tensor_v2, (m[0], 0, (4,), (1,), False, OrderedDict()), {"__class__": 1})), "BUILD"),
    "build_extra_state_on_ordered_dict": (lambda t: _archive(t, pickle.dumps(_ReduceState(
        OrderedDict, (), {"_metadata": {}, "__setstate__": 1}), protocol=2)), "BUILD"),
    "rebuild_tensor_from_a_dict": (lambda t: _tensor_with(t, lambda tu, m: _Reduce(
        tu._rebuild_tensor_v2, ({}, 0, (4,), (1,), False, OrderedDict()))), "not a storage"),
    "parameter_from_a_string": (lambda t: _archive(t, pickle.dumps(_Reduce(
        __import__("torch._utils")._utils._rebuild_parameter, ("x", True, OrderedDict())), protocol=2)),
        "not a tensor"),
    "persistent_id_not_a_storage": (lambda t: _tensor_with(t, lambda tu, m: _Reduce(
        tu._rebuild_tensor_v2, (m[0], 0, (4,), (1,), False, OrderedDict())), storage_tag="module"),
        "persistent storage id"),
    "one_storage_two_dtypes": (lambda t: _tensor_with(t, lambda tu, m: [_Reduce(
        tu._rebuild_tensor_v2, (mk, 0, (2,), (1,), False, OrderedDict())) for mk in m],
        dtypes=(torch.FloatStorage, torch.LongStorage)), "two dtypes"),
}


def _local_header(tmp_path, at, value):
    """A valid one-tensor archive whose storage entry's local header has `value` written at byte `at`."""
    p = _forged_tensor(tmp_path, (4,), (1,))
    with zipfile.ZipFile(p) as z:
        off = z.getinfo("evil/data/0").header_offset
    data = bytearray(p.read_bytes())
    data[off + at:off + at + len(value)] = value
    p.write_bytes(bytes(data))
    return p


HOSTILE.update(BYPASSES)
HOSTILE.update({          # the local header in front of a storage's bytes (what mmap=True maps) is checked too
    "local_header_bad_magic": (lambda t: _local_header(t, 0, b"XX"), "header|corrupt"),
    "local_header_extra_past_the_end": (lambda t: _local_header(t, 28, b"\xff\xff"), "past the end|corrupt"),
})
UNSAFE = {"torchscript_archive", "rebuild_from_type_v2", "storage_load_from_bytes", "numpy_reconstruct",
          "codecs_encode", "parameter_class"}


@pytest.mark.parametrize("mmap", [False, True], ids=["read", "mmap"])
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_broken_and_hostile_archives_raise_a_specific_error(case, mmap, tmp_path):
    import tracemalloc
    make, msg = HOSTILE[case]
    path = make(tmp_path)
    before = sorted(os.listdir(tmp_path))
    tracemalloc.start()
    try:
        with pytest.raises(UnsafeCheckpointError if case in UNSAFE else CheckpointError, match=msg):
            glassgrad.load(path, mmap=mmap)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 ** 20, f"{peak} bytes allocated"          # huge declared sizes are refused, not allocated
    assert sorted(os.listdir(tmp_path)) == before             # nothing written


def test_a_self_referencing_list_does_not_hang(tmp_path):
    a = []
    a.append(a)
    got = glassgrad.load(_archive(tmp_path, pickle.dumps(a, protocol=2)))
    assert got[0] is got


# -- the legacy (non-zip) format -------------------------------------------------------------------------

def _legacy(tmp_path, obj):
    p = tmp_path / "legacy.pt"
    torch.save(obj, p, _use_new_zipfile_serialization=False)
    return p


@pytest.mark.parametrize("via", ["path", "fileobj"])
def test_legacy_archives_load_as_torch_loads_them(tmp_path, via):
    p = _legacy(tmp_path, _objects())
    want = torch.load(p, weights_only=True)
    got = glassgrad.load(p) if via == "path" else glassgrad.load(io.BytesIO(p.read_bytes()))
    _same(want, got)
    got["views"][2][3] = 100.0
    assert got["views"][0][1].item() == 100.0


def _legacy_cut(tmp_path, n):
    p = _legacy(tmp_path, {"w": torch.ones(100)})
    data = p.read_bytes()
    p.write_bytes(data[:len(data) - n])
    return p


def _legacy_payload(tmp_path):
    p = _legacy(tmp_path, {"w": torch.ones(2)})
    data = p.read_bytes()
    evil = pickle.dumps(_Reduce(os.system, (_marker_cmd(tmp_path),)), protocol=2)
    m = data.index(b"}")                                 # the object pickle starts with PROTO 2, EMPTY_DICT
    start = data.rindex(b"\x80\x02", 0, m)
    p.write_bytes(data[:start] + evil + data[data.index(b".", m) + 1:])
    return p


@pytest.mark.parametrize("case,make,msg", [
    ("truncated_storage", lambda t: _legacy_cut(t, 8), "declares"),
    ("no_storage_bytes", lambda t: _legacy_cut(t, 400), "truncated|declares"),
    ("bad_magic", lambda t: _archive_bytes(t, b"\x80\x02\x8a\x0a" + b"\x00" * 10 + b"."), "magic"),
    ("payload", _legacy_payload, "refusing global"),
])
def test_broken_and_hostile_legacy_files(tmp_path, case, make, msg):
    with pytest.raises(CheckpointError, match=msg):
        glassgrad.load(make(tmp_path))
    assert not (tmp_path / "PWNED").exists()


def _archive_bytes(tmp_path, data):
    p = tmp_path / "raw.pt"
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("dt", ["complex64", "uint16", "uint64", "float8_e4m3fn"])   # (safetensors has no C128)
def test_torch_dtypes_beyond_the_classic_ones_load_from_both_formats(dt, tmp_path):
    """complex, uint16/32/64 and float8 (torch saves the last two with _rebuild_tensor_v3 on untyped storages;
    safetensors stores all of them): glassgrad has them, so they load with torch's values."""
    from safetensors.torch import save_file
    from glassgrad.safetensors import load_file
    p = tmp_path / "w.pt"
    torch.save({"w": torch.ones(2, dtype=getattr(torch, dt))}, p)
    save_file({"w": torch.ones(2, dtype=getattr(torch, dt))}, str(tmp_path / "w.safetensors"))
    for w in (glassgrad.load(p)["w"], load_file(tmp_path / "w.safetensors")["w"]):
        assert w.dtype is getattr(glassgrad, dt)
        assert (w.real if w.is_complex() else w).float().tolist() == [1.0, 1.0]


def test_a_torch_dtype_glassgrad_lacks_gets_a_plain_error_not_an_unsafe_one(tmp_path):
    """complex32 (chalf): glassgrad has no such dtype; the checkpoint is refused as unsupported, not as hostile."""
    p = tmp_path / "w.pt"
    torch.save({"w": torch.ones(2, dtype=torch.complex32)}, p)
    with pytest.raises(CheckpointError, match="glassgrad does not have") as e:
        glassgrad.load(p)
    assert not isinstance(e.value, UnsafeCheckpointError)


def test_corrupted_storage_bytes_fail_the_crc_check_when_read(tmp_path):
    """torch.load takes flipped storage bytes silently; glassgrad's read path checks each entry's CRC.  The
    mmap path does not read the bytes up front, so (as in torch) it cannot check them."""
    p = _forged_tensor(tmp_path, (4,), (1,))
    with zipfile.ZipFile(p) as z:
        info = z.getinfo("evil/data/0")
    data = bytearray(p.read_bytes())
    n, extra = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28], "little"), \
        int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
    data[info.header_offset + 30 + n + extra + 5] ^= 0x40
    p.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="CRC mismatch"):
        glassgrad.load(p)
    assert glassgrad.load(p, mmap=True).numpy().view(np.uint8)[5] == 0x40
