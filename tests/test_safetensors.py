"""glassgrad.safetensors against the `safetensors` package and torch: round trips, files both ways,
load_state_dict on the result, hostile headers rejected before any allocation, atomic writes."""
import json
import os
import struct
import tracemalloc

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import safetensors as gs

import safetensors.numpy as st_numpy      # the safetensors package is the oracle (test extra): missing, the suite fails
import safetensors.torch as st_torch

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _tensors(T):
    g = T.Generator().manual_seed(0)
    out = {}
    for i, dt in enumerate(DTYPES):
        x = T.randn(3, 4, generator=g) * 10
        out[f"t_{dt}"] = (x > 0) if dt == "bool" else x.to(getattr(T, dt))
    out["scalar"] = T.tensor(3.5)
    out["empty"] = T.zeros(0, 5)
    out["noncontig"] = T.arange(12.0).reshape(3, 4).t()
    return out


def _same(a, b):
    assert set(a) == set(b)
    for k in a:
        x, y = a[k], b[k]
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1], k
        assert tuple(x.shape) == tuple(y.shape), k
        np.testing.assert_array_equal(np.asarray(x.numpy()), np.asarray(y.numpy()), err_msg=k)


def test_round_trip_and_metadata(tmp_path):
    p = tmp_path / "a.safetensors"
    ts = _tensors(glassgrad)
    gs.save_file(ts, p, metadata={"step": "7"})
    _same(gs.load_file(p), ts)
    assert gs.load_metadata(p) == {"step": "7"}
    _same(gs.load(gs.save(ts)), ts)
    loaded = gs.load_file(p)
    loaded["t_float32"].add_(1)                       # loaded tensors are writable
    np.testing.assert_array_equal(loaded["t_float32"].numpy(), ts["t_float32"].numpy() + 1)


def test_files_from_the_safetensors_package_load(tmp_path):
    p = tmp_path / "torch.safetensors"
    ts = {k: v.contiguous() for k, v in _tensors(torch).items()}
    st_torch.save_file(ts, str(p), metadata={"format": "pt"})
    _same(gs.load_file(p), ts)
    assert gs.load_metadata(p) == {"format": "pt"}
    _same(gs.load(st_torch.save(ts)), ts)


def test_glassgrad_files_load_in_the_safetensors_package(tmp_path):
    p = tmp_path / "gg.safetensors"
    ts = _tensors(glassgrad)
    gs.save_file(ts, p, metadata={"a": "b"})
    _same(st_torch.load_file(str(p)), ts)
    from safetensors import safe_open
    with safe_open(str(p), framework="np") as f:
        assert f.metadata() == {"a": "b"}
    _same({k: glassgrad.from_numpy(v) for k, v in st_numpy.load(gs.save(ts)).items()}, ts)


def test_load_state_dict_from_a_torch_written_file(tmp_path):
    p = tmp_path / "model.safetensors"
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    st_torch.save_file(tm.state_dict(), str(p))
    gm = glassgrad.nn.Sequential(glassgrad.nn.Linear(5, 4), glassgrad.nn.ReLU(), glassgrad.nn.Linear(4, 2))
    gm.load_state_dict(gs.load_file(p))
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_allclose(gm(glassgrad.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6)


def _file(header, data=b"", size=None, raw_header=None):
    raw = raw_header if raw_header is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(raw) if size is None else size) + raw + data


def _entry(dtype="F32", shape=(2,), offs=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offs)}


HOSTILE = {
    "truncated_size": (b"\x01\x02", "no header size"),
    "header_past_end": (_file({}, size=1000), "runs past the end"),
    "huge_header": (struct.pack("<Q", 2 ** 63) + b"{}", "header too large"),
    "not_utf8": (_file(None, raw_header=b'{"a\xff": 1}'), "not valid UTF-8"),
    "not_json": (_file(None, raw_header=b"{not json"), "not valid JSON"),
    "not_object": (_file([1, 2]), "not a JSON object"),
    "unknown_dtype": (_file({"a": _entry(dtype="C32")}, b"\0" * 8), "unsupported dtype"),
    "missing_key": (_file({"a": {"dtype": "F32", "shape": [2]}}, b"\0" * 8), "needs dtype, shape and data_offsets"),
    "negative_shape": (_file({"a": _entry(shape=(-2,))}, b"\0" * 8), "non-negative"),
    "float_shape": (_file({"a": _entry(shape=(2.0,))}, b"\0" * 8), "non-negative integers"),
    "size_mismatch": (_file({"a": _entry(shape=(3,))}, b"\0" * 8), "needs 12 bytes"),
    "out_of_range": (_file({"a": _entry(offs=(8, 16))}, b"\0" * 8), "gap"),
    "overlap": (_file({"a": _entry(), "b": _entry(offs=(4, 12))}, b"\0" * 12), "overlap"),
    "past_the_data": (_file({"a": _entry(shape=(4,), offs=(0, 16))}, b"\0" * 8), "cover 16 bytes"),
    "trailing_bytes": (_file({"a": _entry()}, b"\0" * 12), "cover 8 bytes"),
    "reversed_offsets": (_file({"a": _entry(offs=(8, 0))}, b"\0" * 8), "0 <= begin <= end"),
    "bad_metadata": (_file({"__metadata__": {"k": 1}}), "strings to strings"),
    "huge_shape": (_file({"a": _entry(shape=(2 ** 40, 2 ** 20), offs=(0, 2 ** 62))}, b"\0" * 8), "cover"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_files_raise_a_specific_error_without_allocating(case, tmp_path):
    data, message = HOSTILE[case]
    p = tmp_path / "bad.safetensors"
    p.write_bytes(data)
    tracemalloc.start()
    try:
        for load in (lambda: gs.load_file(p), lambda: gs.load(data)):
            with pytest.raises(gs.SafetensorError, match=message):
                load()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    with pytest.raises(Exception):      # the reference implementation refuses it too
        st_numpy.load(data)


def test_a_failed_save_leaves_the_previous_file_and_no_temporary(tmp_path, monkeypatch):
    p = tmp_path / "ckpt.safetensors"
    gs.save_file({"w": glassgrad.ones(4)}, p)
    before = p.read_bytes()

    def boom(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="No space left"):
        gs.save_file({"w": glassgrad.zeros(1000)}, p)
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ckpt.safetensors"]


def test_bad_tensors_to_save():
    with pytest.raises(gs.SafetensorError, match="not a Tensor"):
        gs.save({"a": np.zeros(2)})
    with pytest.raises(gs.SafetensorError, match="str to str"):
        gs.save({"a": glassgrad.ones(1)}, metadata={"a": 1})
