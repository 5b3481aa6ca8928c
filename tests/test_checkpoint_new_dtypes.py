"""uint16/32/64 and float8 tensors in torch.save checkpoints: torch writes them with _rebuild_tensor_v3 on untyped
storages; glassgrad reads those (plain and mmap, views sharing their storage) and writes the same form, which
torch reads back -- values, dtypes, strides and storage sharing."""
import numpy as np
import pytest
import torch

import glassgrad as gg

NAMES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
         "float8_e8m0fnu"]


def _bits(t):
    return t.contiguous().view(torch.uint8 if isinstance(t, torch.Tensor) else gg.uint8).tolist()


@pytest.mark.parametrize("mmap", [False, True])
def test_torch_checkpoints_with_the_new_dtypes_load(tmp_path, mmap):
    src = {}
    for n in NAMES:
        base = torch.tensor([[0.5, 1.0, 2.0], [4.0, 8.0, 16.0]]).to(getattr(torch, n))
        src[n], src[n + "_view"] = base, base[:, 1:]
    src["param"] = torch.nn.Parameter(torch.ones(2).to(torch.float8_e5m2), requires_grad=False)
    torch.save(src, tmp_path / "t.pt")
    got = gg.load(tmp_path / "t.pt", mmap=mmap)
    for k, v in src.items():
        g = got[k]
        assert str(g.dtype) == str(v.dtype) and g.stride() == v.stride() and _bits(g) == _bits(v), k
    assert type(got["param"]).__name__ == "Parameter"
    for n in NAMES:         # a view and its base share memory, as in torch
        got[n][0, 2] = got[n][0, 0]
        assert _bits(got[n + "_view"][0]) == _bits(got[n][0, 1:])


def test_glassgrad_checkpoints_with_the_new_dtypes_load_in_torch(tmp_path):
    src = {}
    for n in NAMES:
        base = gg.tensor([[0.5, 1.0, 2.0], [4.0, 8.0, 16.0]]).to(getattr(gg, n))
        src[n], src[n + "_view"] = base, base[:, 1:]
    src["big"] = gg.tensor([2 ** 64 - 1], dtype=gg.uint64)
    gg.save(src, tmp_path / "g.pt", format="torch")
    back = torch.load(tmp_path / "g.pt")
    for k, v in src.items():
        t = back[k]
        assert str(t.dtype) == str(v.dtype) and t.stride() == v.stride() and _bits(t) == _bits(v), k
    for n in NAMES:
        assert back[n].untyped_storage().data_ptr() == back[n + "_view"].untyped_storage().data_ptr()
    assert np.uint64(back["big"].item()) == np.uint64(2 ** 64 - 1)


def test_dtype_values_travel_both_ways(tmp_path):
    torch.save({"a": torch.float32, "b": torch.uint16, "c": torch.float8_e5m2}, tmp_path / "t.pt")
    got = gg.load(tmp_path / "t.pt")
    assert got == {"a": gg.float32, "b": gg.uint16, "c": gg.float8_e5m2}
    gg.save(got, tmp_path / "g.pt", format="torch")
    assert torch.load(tmp_path / "g.pt") == {"a": torch.float32, "b": torch.uint16, "c": torch.float8_e5m2}
