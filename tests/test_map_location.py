"""glassgrad.load's map_location, against torch.load on the same files: every form torch takes (None, a device
or its string, a dict of locations, a callable(storage, location)) for all three formats glassgrad reads;
views of one storage still share it after placement; the errors for devices this machine lacks are torch's.
The tests that move storages to a GPU run only where CuPy sees one."""
import io
import json
import zipfile

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import safetensors as gs
from glassgrad.serialization import CheckpointError, LocationError

from _ckpt import assert_same, error_of

HAS_CUDA = glassgrad.cuda.is_available()
needs_gpu = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU with CuPy (run on the device machine)")
no_gpu = pytest.mark.skipif(HAS_CUDA, reason="checks the errors of a machine without a GPU")


def _torch_obj():
    base = torch.arange(12.0).reshape(3, 4)
    return {"w": base, "v": base[1:].t(), "n": torch.tensor([1, 2], dtype=torch.int64), "k": 3}


def _bytes(fmt):
    """The same object as a file of format `fmt`: written by torch (zip or legacy) or by glassgrad."""
    b = io.BytesIO()
    if fmt == "glassgrad":
        base = glassgrad.arange(12.0).reshape(3, 4)
        glassgrad.save({"w": base, "v": base[1:].t(), "n": glassgrad.tensor([1, 2]), "k": 3}, b, format="glassgrad")
    else:
        torch.save(_torch_obj(), b, _use_new_zipfile_serialization=(fmt == "torch_zip"))
    return b.getvalue()


def _relocated(data, location):
    """A torch zip archive whose storages say they were saved on `location` (as if saved from that device)."""
    src, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    cpu = b"X\x03\x00\x00\x00cpu"
    new = b"X" + len(location).to_bytes(4, "little") + location.encode()
    with zipfile.ZipFile(out, "w") as dst:
        for n in src.namelist():
            d = src.read(n)
            if n.endswith("data.pkl"):
                assert cpu in d
                d = d.replace(cpu, new)
            dst.writestr(n, d)
    return out.getvalue()


def _relocated_glassgrad(data, location):
    """A glassgrad checkpoint whose storages say they were saved on `location`."""
    tensors, meta = gs.read_bytes(data)
    doc = json.loads(meta["glassgrad"])
    doc["locations"] = {k: location for k in tensors}
    return gs.save(tensors, {"glassgrad": json.dumps(doc)})


def _shares(out):
    """The loaded 'v' is still a view of the loaded 'w': a write through one shows in the other."""
    w = out["w"]
    w[2, 0] = -5.0
    return float(out["v"][0, 1]) == -5.0


FORMATS = ["glassgrad", "torch_zip", "torch_legacy"]
FORMS = {
    "none": None,
    "str": "cpu",
    "device": "DEVICE",
    "dict_hit": {"cpu": "cpu"},
    "dict_miss": {"cuda:0": "cpu"},
    "callable_same": lambda s, loc: s,
    "callable_none": lambda s, loc: None,
    "callable_cpu": lambda s, loc: s.cpu(),
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_form_loads_cpu_files_and_keeps_views_shared(fmt, form):
    ml = FORMS[form]
    data = _bytes(fmt)
    gml = glassgrad.device("cpu") if ml == "DEVICE" else ml
    out = glassgrad.load(io.BytesIO(data), map_location=gml)
    if fmt != "glassgrad":
        assert_same(out, torch.load(io.BytesIO(data), map_location=torch.device("cpu") if ml == "DEVICE" else ml))
    else:
        assert out["v"].tolist() == [[4.0, 8.0], [5.0, 9.0], [6.0, 10.0], [7.0, 11.0]]
    assert out["w"].device == glassgrad.device("cpu")
    assert _shares(out)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_callable_sees_each_storage_once_with_its_saved_location(fmt):
    data = _bytes(fmt)
    seen = []
    glassgrad.load(io.BytesIO(data), map_location=lambda s, loc: seen.append((loc, s.numel())))
    assert sorted(seen) == [("cpu", 2), ("cpu", 12)]
    if fmt != "glassgrad":
        theirs = []
        torch.load(io.BytesIO(data), map_location=lambda s, loc: theirs.append(loc))
        assert sorted(theirs) == [loc for loc, _ in sorted(seen)]


@no_gpu
@pytest.mark.parametrize("ml", ["cuda", "cuda:1", "DEVICE", {"cpu": "cuda:0"}, "xyz", "meta2"])
@pytest.mark.parametrize("fmt", ["torch_zip", "torch_legacy"])
def test_devices_this_machine_lacks_raise_torchs_error(fmt, ml):
    data = _bytes(fmt)
    ours = error_of(lambda: glassgrad.load(io.BytesIO(data), map_location=glassgrad.device("cuda") if ml == "DEVICE" else ml))
    theirs = error_of(lambda: torch.load(io.BytesIO(data), map_location=torch.device("cuda") if ml == "DEVICE" else ml))
    assert isinstance(ours, RuntimeError) and isinstance(theirs, RuntimeError)
    assert isinstance(ours, LocationError)       # and a glassgrad checkpoint error: the fuzz contract holds
    assert str(ours) == str(theirs)


@no_gpu
def test_a_file_saved_on_a_gpu_needs_a_map_location_here_as_in_torch():
    data = _relocated(_bytes("torch_zip"), "cuda:0")
    ours = error_of(lambda: glassgrad.load(io.BytesIO(data)))
    theirs = error_of(lambda: torch.load(io.BytesIO(data)))
    assert type(ours) is LocationError and type(theirs) is RuntimeError and str(ours) == str(theirs)
    with pytest.raises(LocationError) as e:
        glassgrad.load(io.BytesIO(_relocated_glassgrad(_bytes("glassgrad"), "cuda:0")))
    assert str(e.value) == str(theirs)


@pytest.mark.parametrize("ml", ["cpu", {"cuda:0": "cpu"}, "callable"])
def test_a_file_saved_on_a_gpu_loads_on_the_cpu_when_mapped(ml):
    data = _relocated(_bytes("torch_zip"), "cuda:0")
    seen = []
    f = (lambda s, loc: seen.append(loc) or s.cpu()) if ml == "callable" else ml
    out = glassgrad.load(io.BytesIO(data), map_location=f)
    assert_same(out, torch.load(io.BytesIO(data), map_location="cpu"))
    assert _shares(out)
    assert seen == (["cuda:0", "cuda:0"] if ml == "callable" else [])
    out = glassgrad.load(io.BytesIO(_relocated_glassgrad(_bytes("glassgrad"), "cuda:0")), map_location=f)
    assert out["w"].device == glassgrad.device("cpu") and _shares(out)


def test_bad_map_locations():
    data = _bytes("glassgrad")
    with pytest.raises(TypeError, match="map_location"):
        glassgrad.load(io.BytesIO(data), map_location=3)
    with pytest.raises(TypeError, match="map_location must return"):
        glassgrad.load(io.BytesIO(data), map_location=lambda s, loc: "cpu")
    with pytest.raises(TypeError, match="map_location must return"):
        glassgrad.load(io.BytesIO(data), map_location=lambda s, loc: s[:1])
    with pytest.raises(CheckpointError, match="malformed storage locations"):
        tensors, meta = gs.read_bytes(data)
        doc = json.loads(meta["glassgrad"])
        doc["locations"] = {"0": 7}
        glassgrad.load(io.BytesIO(gs.save(tensors, {"glassgrad": json.dumps(doc)})))


# -- on a GPU -------------------------------------------------------------------------------------------------

@needs_gpu
@pytest.mark.parametrize("ml", ["cuda", "cuda:0", "DEVICE", {"cpu": "cuda:0"}, "callable"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_storages_move_to_the_gpu_once_and_views_share_them_there(fmt, ml):
    data = _bytes(fmt)
    f = {"DEVICE": glassgrad.device("cuda"), "callable": lambda s, loc: s.cuda()}.get(ml, ml) \
        if not isinstance(ml, dict) else ml
    out = glassgrad.load(io.BytesIO(data), map_location=f)
    assert out["w"].device.type == "cuda" and out["v"].device.type == "cuda" and out["n"].device.type == "cuda"
    assert out["v"].cpu().tolist() == [[4.0, 8.0], [5.0, 9.0], [6.0, 10.0], [7.0, 11.0]]
    assert _shares(out)


@needs_gpu
@pytest.mark.parametrize("fmt", ["glassgrad", "torch"])
def test_gpu_tensors_come_back_on_the_gpu_unless_mapped(fmt):
    base = glassgrad.arange(12.0, device="cuda").reshape(3, 4)
    b = io.BytesIO()
    glassgrad.save({"w": base, "v": base[1:].t()}, b, format=fmt)
    out = glassgrad.load(io.BytesIO(b.getvalue()))
    assert out["w"].device == glassgrad.device("cuda", 0) and _shares(out)
    cpu = glassgrad.load(io.BytesIO(b.getvalue()), map_location="cpu")
    assert cpu["w"].device == glassgrad.device("cpu") and _shares(cpu)
    np.testing.assert_array_equal(cpu["v"].numpy(), base[1:].t().cpu().numpy())
    if fmt == "torch":                           # torch (CPU build) reads it when told where to put it
        theirs = torch.load(io.BytesIO(b.getvalue()), map_location="cpu")
        np.testing.assert_array_equal(theirs["v"].numpy(), cpu["v"].numpy())
