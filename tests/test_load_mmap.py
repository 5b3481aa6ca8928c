"""glassgrad.load(mmap=True) and torch.load's other arguments: mapped tensors read the file lazily and
copy-on-write (writes never reach the file), views stay shared, and the errors for what cannot be mapped
are torch's."""
import io
import pickle
import tracemalloc

import numpy as np
import pytest
import torch

import glassgrad
from _ckpt import assert_same, error_of


def _write(tmp_path, fmt):
    p = tmp_path / f"{fmt}.pt"
    if fmt == "torch":
        base = torch.arange(12.0).reshape(3, 4)
        torch.save({"w": base, "v": base[1:].t(), "n": torch.tensor([1, 2]), "k": "x"}, p)
    else:
        base = glassgrad.arange(12.0).reshape(3, 4)
        glassgrad.save({"w": base, "v": base[1:].t(), "n": glassgrad.tensor([1, 2]), "k": "x"}, p,
                       format="torch" if fmt == "glassgrad_as_torch" else "glassgrad")
    return p


def _mapped(t):
    """Whether tensor t's memory is a file mapping."""
    import mmap
    a = t.numpy()
    while a is not None:
        if isinstance(a, (np.memmap, mmap.mmap)):
            return True
        a = getattr(a, "base", None)
    return False


@pytest.mark.parametrize("fmt", ["glassgrad", "torch", "glassgrad_as_torch"])
def test_mapped_loads_equal_read_loads_and_never_write_the_file(fmt, tmp_path):
    p = _write(tmp_path, fmt)
    before = p.read_bytes()
    read, mapped = glassgrad.load(p), glassgrad.load(p, mmap=True)
    assert_same(mapped, read)
    if fmt != "glassgrad":
        assert_same(mapped, torch.load(p, mmap=True))
    assert _mapped(mapped["w"]) and _mapped(mapped["n"]) and not _mapped(read["w"])
    mapped["w"][2, 0] = -5.0                           # copy-on-write: the view sees it, the file does not
    assert mapped["v"][0, 1].item() == -5.0
    del mapped
    assert p.read_bytes() == before
    assert glassgrad.load(p, mmap=True)["w"][2, 0].item() == 8.0


@pytest.mark.parametrize("fmt", ["glassgrad", "torch"])
def test_mapping_does_not_read_the_tensors(fmt, tmp_path):
    p = tmp_path / "big.pt"
    (torch.save if fmt == "torch" else glassgrad.save)({"w": (torch if fmt == "torch" else glassgrad).ones(4 * 2 ** 20)}, p)
    peaks = {}
    for mmap in (False, True):
        tracemalloc.start()
        try:
            w = glassgrad.load(p, mmap=mmap)["w"]
            peaks[mmap] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert w.sum().item() == 4 * 2 ** 20
    assert peaks[False] > 16 * 2 ** 20 > 2 ** 20 > peaks[True], peaks


@pytest.mark.parametrize("case", ["bytesio", "open_file", "legacy"])
def test_what_cannot_be_mapped_raises_torchs_error(case, tmp_path):
    p = tmp_path / "c.pt"
    torch.save({"w": torch.ones(3)}, p, _use_new_zipfile_serialization=(case != "legacy"))
    if case == "legacy":
        args = lambda: str(p)                                   # noqa: E731
    elif case == "bytesio":
        args = lambda: io.BytesIO(p.read_bytes())               # noqa: E731
    else:
        args = lambda: open(p, "rb")                            # noqa: E731
    ours, theirs = error_of(lambda: glassgrad.load(args(), mmap=True)), error_of(lambda: torch.load(args(), mmap=True))
    assert ours is not None and (type(ours), str(ours)) == (type(theirs), str(theirs))


def test_torch_loads_pickle_arguments_are_accepted_and_change_nothing(tmp_path):
    p = _write(tmp_path, "torch")
    for kw in ({"pickle_module": pickle}, {"encoding": "latin1"}, {"weights_only": False}):
        assert_same(glassgrad.load(p, **kw), torch.load(p, **kw))
    with pytest.raises(TypeError, match="unexpected keyword argument 'map_locaton'"):
        glassgrad.load(p, map_locaton="cpu")


def test_torch_saves_pickle_arguments_are_accepted(tmp_path):
    w = glassgrad.arange(3.0)
    for fmt in ("glassgrad", "torch"):
        glassgrad.save({"w": w}, tmp_path / "a.pt", pickle, 4, format=fmt)
        glassgrad.save({"w": w}, tmp_path / "b.pt", pickle_protocol=2, _disable_byteorder_record=True, format=fmt)
        assert glassgrad.load(tmp_path / "a.pt")["w"].tolist() == glassgrad.load(tmp_path / "b.pt")["w"].tolist()
    with pytest.raises(ValueError, match="legacy"):
        glassgrad.save({"w": w}, tmp_path / "c.pt", _use_new_zipfile_serialization=False)
    assert not (tmp_path / "c.pt").exists()
