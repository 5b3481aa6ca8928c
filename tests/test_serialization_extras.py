"""torch.serialization's settings and helpers beyond save/load, against torch: skip_data, the load endianness,
the mmap flags, the location registry (register_package, location_tag, default_restore_location),
validate_cuda_device, check_module_version_greater_or_equal, StorageType, mkdtemp and friends."""
import io
import mmap
import os
import warnings
import zipfile

import numpy as np
import pytest
import torch
import torch.serialization as ts

import glassgrad
import glassgrad.serialization as gs

from _ckpt import error_of

HAS_CUDA = glassgrad.cuda.is_available()
no_gpu = pytest.mark.skipif(HAS_CUDA, reason="checks the errors of a machine without a GPU")


def _same_error(ours, theirs):
    assert ours is not None and theirs is not None, (ours, theirs)
    assert type(ours).__name__ == type(theirs).__name__ and str(ours) == str(theirs), (ours, theirs)


def _rezip(data, name, repl=None):
    """The archive `data` with entry */name dropped, or its contents replaced by `repl`."""
    src, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for i in src.infolist():
            if i.filename.endswith("/" + name):
                if repl is None:
                    continue
                z.writestr(i.filename, repl)
            else:
                z.writestr(i.filename, src.read(i.filename))
    return out.getvalue()


def test_names_and_types_match_torch():
    assert issubclass(gs.SourceChangeWarning, Warning)
    assert [e.name for e in gs.LoadEndianness] == [e.name for e in ts.LoadEndianness]
    assert [e.value for e in gs.LoadEndianness] == [e.value for e in ts.LoadEndianness]
    assert gs.get_default_load_endianness() is ts.get_default_load_endianness() is None
    assert gs.get_default_mmap_options() == ts.get_default_mmap_options() == mmap.MAP_PRIVATE
    for n in ts.__all__:
        assert hasattr(gs, n), n


# -- skip_data ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["torch", "glassgrad"])
def test_skip_data_saves_the_layout_with_zero_bytes(fmt):
    base = glassgrad.arange(6.0).reshape(2, 3)
    b = io.BytesIO()
    with gs.skip_data():
        glassgrad.save({"a": base, "b": base[1]}, b, format=fmt)
    out = glassgrad.load(io.BytesIO(b.getvalue()))
    assert out["a"].tolist() == [[0.0] * 3] * 2 and out["b"].tolist() == [0.0] * 3
    if fmt == "torch":
        theirs = torch.load(io.BytesIO(b.getvalue()))
        assert theirs["a"].tolist() == out["a"].tolist() and theirs["b"].shape == (3,)
    out["a"][1, 0] = 5.0
    assert out["b"][0].item() == 5.0                                                       # still shared
    b = io.BytesIO()                                    # and outside the block the bytes are written again
    glassgrad.save(base, b, format=fmt)
    assert glassgrad.load(io.BytesIO(b.getvalue())).tolist() == base.tolist()


def test_a_torch_skip_data_file_loads_here():
    """torch writes no CRC for skipped storages (CRC field 0): glassgrad reads such entries as torch does."""
    b = io.BytesIO()
    with ts.skip_data():
        torch.save({"a": torch.arange(6.0)}, b)
    assert glassgrad.load(io.BytesIO(b.getvalue()))["a"].tolist() == [0.0] * 6


@pytest.mark.parametrize("crc", [True, False])
def test_crc32_options_decide_whether_save_records_crcs(crc):
    assert gs.get_crc32_options() is ts.get_crc32_options() is True
    out = []
    try:
        for lib, mod in ((torch, ts), (glassgrad, gs)):
            mod.set_crc32_options(crc)
            assert mod.get_crc32_options() is crc
            b = io.BytesIO()
            lib.save({"w": lib.arange(6.0)}, b)
            z = zipfile.ZipFile(io.BytesIO(b.getvalue()))
            out.append(sorted((i.filename.split("/", 1)[1], i.CRC != 0) for i in z.infolist()
                              if not i.filename.split("/", 1)[1].startswith(".")))
            assert (z.testzip() is None) == crc
            assert torch.load(io.BytesIO(b.getvalue()))["w"].tolist() == list(range(6))
            assert glassgrad.load(io.BytesIO(b.getvalue()))["w"].tolist() == list(range(6))
    finally:
        ts.set_crc32_options(True)
        gs.set_crc32_options(True)
    assert out[0] == out[1] and all(flag == crc for _, flag in out[1])


def test_skip_data_records_no_crc_for_storages_as_torch():
    flags = []
    for lib, mod in ((torch, ts), (glassgrad, gs)):
        b = io.BytesIO()
        with mod.skip_data():
            lib.save({"w": lib.arange(6.0)}, b)
        flags.append(sorted((i.filename.split("/", 1)[1], i.CRC != 0) for i in zipfile.ZipFile(b).infolist()
                            if not i.filename.split("/", 1)[1].startswith(".")))
    assert flags[0] == flags[1] and ("data/0", False) in flags[1]


def test_a_torch_file_without_crcs_loads_here():
    ts.set_crc32_options(False)
    try:
        b = io.BytesIO()
        torch.save(torch.arange(6.0), b)
    finally:
        ts.set_crc32_options(True)
    assert glassgrad.load(io.BytesIO(b.getvalue())).tolist() == list(range(6))


def test_load_under_skip_data_reads_no_storage_bytes():
    b = io.BytesIO()
    torch.save({"a": torch.arange(1.0, 7.0).reshape(2, 3)}, b)
    with gs.skip_data():
        out = glassgrad.load(io.BytesIO(b.getvalue()))["a"]
    assert out.shape == (2, 3) and out.dtype == glassgrad.float32      # storage not populated (zeros here)
    assert glassgrad.load(io.BytesIO(b.getvalue()))["a"].tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_skip_data_with_the_legacy_format_is_torchs_error():
    with ts.skip_data():
        theirs = error_of(lambda: torch.save(torch.ones(1), io.BytesIO(), _use_new_zipfile_serialization=False))
    with gs.skip_data():
        ours = error_of(lambda: glassgrad.save(glassgrad.ones(1), io.BytesIO(), _use_new_zipfile_serialization=False))
    _same_error(ours, theirs)


# -- load endianness ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("endian", [None, "BIG", "LITTLE", "NATIVE"])
def test_default_load_endianness_applies_to_archives_without_a_byteorder_record(endian):
    b = io.BytesIO()
    torch.save(torch.tensor([0.0, 1.5, -2.0, 1e-3], dtype=torch.float64), b)
    data = _rezip(b.getvalue(), "byteorder")
    try:
        ts.set_default_load_endianness(endian and ts.LoadEndianness[endian])
        gs.set_default_load_endianness(endian and gs.LoadEndianness[endian])
        assert gs.get_default_load_endianness() == (endian and gs.LoadEndianness[endian])
        theirs, ours = torch.load(io.BytesIO(data)), glassgrad.load(io.BytesIO(data))
        assert ours.numpy().tobytes() == theirs.numpy().tobytes()
        with_mark = glassgrad.load(io.BytesIO(b.getvalue()))        # a record wins over the default
        assert with_mark.tolist() == [0.0, 1.5, -2.0, 1e-3]
    finally:
        ts.set_default_load_endianness(None)
        gs.set_default_load_endianness(None)


def test_a_big_endian_archive_loads():
    b = io.BytesIO()
    torch.save({"x": torch.arange(4, dtype=torch.int32)}, b)
    src = zipfile.ZipFile(io.BytesIO(b.getvalue()))
    key = [n for n in src.namelist() if "/data/" in n][0]
    big = np.frombuffer(src.read(key), "<i4").astype(">i4").tobytes()
    swapped = _rezip(_rezip(b.getvalue(), "byteorder", b"big"), key.split("/", 1)[1], big)
    assert torch.load(io.BytesIO(swapped))["x"].tolist() == glassgrad.load(io.BytesIO(swapped))["x"].tolist() == \
        [0, 1, 2, 3]


def test_endianness_errors_match_torch():
    _same_error(error_of(lambda: gs.set_default_load_endianness("little")),
                error_of(lambda: ts.set_default_load_endianness("little")))
    b = io.BytesIO()
    torch.save(torch.ones(2), b)
    data = _rezip(b.getvalue(), "byteorder", b"middle")
    theirs, ours = error_of(lambda: torch.load(io.BytesIO(data))), error_of(lambda: glassgrad.load(io.BytesIO(data)))
    assert isinstance(theirs, ValueError) and isinstance(ours, gs.CheckpointError)    # the reader's own error
    assert str(theirs) in str(ours)


# -- mmap flags -----------------------------------------------------------------------------------------------

def test_set_default_mmap_options_validates_and_restores():
    _same_error(error_of(lambda: gs.set_default_mmap_options(5)), error_of(lambda: ts.set_default_mmap_options(5)))
    with gs.set_default_mmap_options(mmap.MAP_SHARED), ts.set_default_mmap_options(mmap.MAP_SHARED):
        assert gs.get_default_mmap_options() == ts.get_default_mmap_options() == mmap.MAP_SHARED
    assert gs.get_default_mmap_options() == ts.get_default_mmap_options() == mmap.MAP_PRIVATE
    gs.set_default_mmap_options(mmap.MAP_SHARED)        # as a call: stays set
    assert gs.get_default_mmap_options() == mmap.MAP_SHARED
    gs.set_default_mmap_options(mmap.MAP_PRIVATE)


@pytest.mark.parametrize("fmt", ["torch", "glassgrad"])
@pytest.mark.parametrize("shared", [False, True])
def test_mmap_flags_decide_whether_writes_reach_the_file(tmp_path, fmt, shared):
    p = tmp_path / ("w.safetensors" if fmt == "glassgrad" else "w.pt")
    glassgrad.save(glassgrad.arange(4.0), p, format=fmt)
    q = tmp_path / "t.pt"
    torch.save(torch.arange(4.0), q)
    with gs.set_default_mmap_options(mmap.MAP_SHARED if shared else mmap.MAP_PRIVATE), \
            ts.set_default_mmap_options(mmap.MAP_SHARED if shared else mmap.MAP_PRIVATE):
        x = glassgrad.load(p, mmap=True)
        x[0] = 42.0
        y = torch.load(q, mmap=True)
        y[0] = 42.0
        del x, y
    # (glassgrad checks each entry's CRC, which a shared write makes stale: torch, which checks none, reads it back)
    ours = torch.load(p) if fmt == "torch" else glassgrad.load(p)
    assert ours[0].item() == torch.load(q)[0].item() == (42.0 if shared else 0.0)


# -- the location registry ------------------------------------------------------------------------------------

def test_location_tag_and_default_restore_location_on_the_cpu():
    assert gs.location_tag(glassgrad.zeros(2)) == ts.location_tag(torch.zeros(2)) == "cpu"
    assert gs.location_tag(glassgrad.zeros(2).untyped_storage()) == "cpu"
    s = glassgrad.zeros(2).untyped_storage()
    assert gs.default_restore_location(s, "cpu") is s
    _same_error(error_of(lambda: gs.location_tag(3)), error_of(lambda: ts.location_tag(3)))


@no_gpu
@pytest.mark.parametrize("loc", ["cuda", "cuda:1", "foo", "cpu:0", "hpu", "mps"])
def test_default_restore_location_errors_match_torch(loc):
    ours = error_of(lambda: gs.default_restore_location(glassgrad.zeros(2).untyped_storage(), loc))
    theirs = error_of(lambda: ts.default_restore_location(torch.zeros(2).untyped_storage(), loc))
    _same_error(ours, theirs)


@no_gpu
@pytest.mark.parametrize("loc", ["cuda", "cuda:1", "cpu", "foo", 0])
def test_validate_cuda_device_matches_torch(loc):
    _same_error(error_of(lambda: gs.validate_cuda_device(loc)), error_of(lambda: ts.validate_cuda_device(loc)))


@pytest.fixture
def mydev():
    """A package tagging every cpu storage 'mydev' (priority 1, before cpu) in both registries; removed after."""
    def tag(obj):
        if obj.device.type == "cpu":
            return "mydev"

    def restore(obj, location):
        if location == "mydev":
            seen.append(type(obj).__name__)
            return obj
    seen, saved = [], (list(glassgrad._serialization_extras._registry), list(ts._package_registry))
    gs.register_package(1, tag, restore)
    ts.register_package(1, tag, restore)
    yield seen
    glassgrad._serialization_extras._registry[:] = saved[0]
    ts._package_registry[:] = saved[1]


def test_a_registered_package_tags_and_restores(mydev):
    assert gs.location_tag(glassgrad.ones(1)) == ts.location_tag(torch.ones(1)) == "mydev"
    b = io.BytesIO()
    glassgrad.save({"w": glassgrad.arange(3.0)}, b)
    assert torch.load(io.BytesIO(b.getvalue()))["w"].tolist() == [0.0, 1.0, 2.0]     # torch restores it
    assert glassgrad.load(io.BytesIO(b.getvalue()))["w"].tolist() == [0.0, 1.0, 2.0]
    b = io.BytesIO()
    torch.save({"w": torch.arange(3.0)}, b)
    assert glassgrad.load(io.BytesIO(b.getvalue()))["w"].tolist() == [0.0, 1.0, 2.0]
    assert mydev == ["UntypedStorage"] * 3


def test_an_unknown_location_still_fails_as_in_torch(mydev):
    b = io.BytesIO()
    torch.save(torch.arange(3.0), b)
    pkl = zipfile.ZipFile(io.BytesIO(b.getvalue())).read("archive/data.pkl")
    data = _rezip(b.getvalue(), "data.pkl", pkl.replace(b"mydev", b"nodev"))
    ours, theirs = error_of(lambda: glassgrad.load(io.BytesIO(data))), error_of(lambda: torch.load(io.BytesIO(data)))
    assert isinstance(ours, gs.LocationError) and str(ours) == str(theirs)


# -- small helpers --------------------------------------------------------------------------------------------

def test_check_module_version_greater_or_equal():
    import numpy
    for req in [(1, 20), (99,), (1,)]:
        assert gs.check_module_version_greater_or_equal(numpy, req) == \
            ts.check_module_version_greater_or_equal(numpy, req)

    class M:
        __name__, __version__ = "m", "1.x"
    _same_error(error_of(lambda: gs.check_module_version_greater_or_equal(M, (1, 2))),
                error_of(lambda: ts.check_module_version_greater_or_equal(M, (1, 2))))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert gs.check_module_version_greater_or_equal(M, (1, 2), False) is True
        assert gs.check_module_version_greater_or_equal(M, (1,)) is True
    assert "malformed '1.x'" in str(w[0].message) and "assuming that requirement is met" in str(w[0].message)


@pytest.mark.parametrize("name", ["FloatStorage", "DoubleStorage", "BFloat16Storage", "BoolStorage", "ComplexFloatStorage",
                                  "UntypedStorage", "Foo"])
def test_storage_type(name):
    ours, theirs = error_of(lambda: gs.StorageType(name)), error_of(lambda: ts.StorageType(name))
    if theirs is not None:
        _same_error(ours, theirs)
        return
    assert str(gs.StorageType(name)) == str(ts.StorageType(name))
    assert str(gs.StorageType(name).dtype) == str(ts.StorageType(name).dtype)


def test_normalize_storage_type_and_storage_to_tensor_type():
    assert gs.normalize_storage_type(glassgrad.FloatStorage) is glassgrad.FloatStorage
    assert ts.normalize_storage_type(torch.FloatStorage) is torch.FloatStorage
    class NoStorage:
        pass
    ours = error_of(lambda: gs.normalize_storage_type(NoStorage))
    theirs = error_of(lambda: ts.normalize_storage_type(NoStorage))
    assert type(ours) is type(theirs) is AttributeError and "has no attribute 'NoStorage'" in str(ours)
    ours = error_of(lambda: gs.storage_to_tensor_type(glassgrad.zeros(1).untyped_storage()))
    theirs = error_of(lambda: ts.storage_to_tensor_type(torch.zeros(1).untyped_storage()))
    assert type(ours) is type(theirs) is AttributeError and "has no attribute 'UntypedTensor'" in str(ours)


def test_mkdtemp_removes_its_directory():
    with gs.mkdtemp() as d:
        assert os.path.isdir(d)
        open(os.path.join(d, "f"), "w").close()
    assert not os.path.exists(d)
