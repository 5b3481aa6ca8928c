"""Hostile and malformed files against every glassgrad checkpoint reader (torch's zip and legacy formats,
glassgrad's own, safetensors): each is refused with glassgrad's error naming the problem -- never a raw
Python or NumPy exception, a crash, a large allocation or quadratic time -- and what torch reads still loads."""
import io
import json
import os
import struct
import subprocess
import sys
import time
import tracemalloc
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch
import torch._utils as tu

import glassgrad
import glassgrad.nn.parameter  # noqa: F401 -- imported up front: the tests count allocations
from _ckpt import Reduce, TorchLike, assert_same, zip_bytes
from glassgrad import _pt_reader, backend, safetensors as gs
from glassgrad.serialization import CheckpointError, LocationError, Placement

STORED, DEFLATED, BZIP2, LZMA = zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA


def _torch_bytes(obj):
    b = io.BytesIO()
    torch.save(obj, b)
    return b.getvalue()


def _entries(archive, method=lambda name: STORED):
    """The entries of zip `archive` as zip_bytes takes them, each compressed with method(name)."""
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        return [(n, z.read(n), method(n)) for n in z.namelist()]


def _refused(load, error, match, peak_below=None):
    """load() raises `error` (exactly that family: not merely any Exception) matching `match`; with `peak_below`
    also checks the bytes allocated on the way."""
    tracemalloc.start()
    try:
        with pytest.raises(error, match=match):
            load()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if peak_below is not None:
        assert peak < peak_below, f"{peak / 2 ** 20:.1f} MiB allocated"


def _load_bytes(data):
    return lambda: glassgrad.load(io.BytesIO(data))


def _load_path(tmp_path, data, name="ck.pt"):
    p = tmp_path / name
    p.write_bytes(data)
    return lambda: glassgrad.load(p)


# -- glassgrad's own format and safetensors: malformed fields, keys twice, deep JSON (issues 2, 3, 7) ----------------

def test_a_safetensors_header_naming_a_tensor_twice_is_refused(tmp_path):
    entry = '{"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}'
    raw = ('{"a": %s, "a": %s}' % (entry, entry)).encode()
    data = struct.pack("<Q", len(raw)) + raw + bytes(4)
    _refused(lambda: gs.load(data), gs.SafetensorError, "'a' twice")
    _refused(_load_path(tmp_path, data), CheckpointError, "'a' twice")      # glassgrad.load: its own error


def _forge(tensors, structure, raw=None):
    """glassgrad's format with `structure` as the root (or `raw` as the whole structure JSON)."""
    raw = raw if raw is not None else json.dumps({"version": 1, "root": structure})
    return gs.save(tensors, metadata={"glassgrad": raw})


def test_a_dict_with_one_key_twice_is_refused():
    data = _forge({"0": glassgrad.ones(1)}, {"$dict": [["w", 1], ["w", 2]]})
    _refused(_load_bytes(data), CheckpointError, "'w' twice")


T = {"$tensor": "0", "dtype": "float32", "shape": [4], "strides": [1], "offset": 0, "requires_grad": False,
     "parameter": False}


def _g(structure):
    """glassgrad's format: `structure` over one float32 storage '0' of 4 elements."""
    return _forge({"0": glassgrad.arange(4.0)}, structure)


GLASSGRAD_MALFORMED = {
    "storage_key_an_int": (_g(dict(T, **{"$tensor": 0})), "storage key"),
    "storage_key_a_list": (_g(dict(T, **{"$tensor": ["0"]})), "storage key"),
    "dtype_unknown": (_g(dict(T, dtype="V9999999999999")), "does not match"),
    "dtype_a_list": (_g(dict(T, dtype=["float32"])), "does not match"),
    "dtype_a_dict": (_g(dict(T, dtype={"names": ["a"], "formats": ["f4"]})), "does not match"),
    "shape_a_string": (_g(dict(T, shape="4")), "malformed tensor"),
    "shape_a_dict": (_g(dict(T, shape={"4": 1})), "malformed tensor"),
    "shape_nested": (_g(dict(T, shape=[[4]])), "malformed tensor"),
    "shape_an_int": (_g(dict(T, shape=4)), "malformed tensor"),
    "shape_bool": (_g(dict(T, shape=[True])), "malformed tensor"),
    "shape_huge_but_empty": (_g(dict(T, shape=[0, 2 ** 70], strides=[1, 1])), "too large for NumPy"),
    "shape_huge_broadcast": (_g(dict(T, shape=[2 ** 62], strides=[0])), "too large for NumPy"),
    "stride_huge_on_size_one": (_g(dict(T, shape=[1], strides=[2 ** 70])), "too large for NumPy"),
    "dims_65": (_g(dict(T, shape=[1] * 65, strides=[1] * 65)),
                "65 dimensions; glassgrad \\(NumPy\\) supports at most 64"),
    "offset_float": (_g(dict(T, offset=0.5)), "malformed tensor"),
    "offset_huge": (_g(dict(T, offset=2 ** 70)), "outside its storage"),
    "offset_missing": (_g({k: v for k, v in T.items() if k != "offset"}), "malformed tensor"),
    "requires_grad_a_string": (_g(dict(T, requires_grad="yes")), "requires_grad must be a bool"),
    "parameter_an_int": (_g(dict(T, parameter=1)), "parameter must be a bool"),
    "metadata_on_a_plain_dict": (_g({"$dict": [], "_metadata": {"$dict": []}}), "_metadata"),
    "ordered_a_string": (_g({"$dict": [], "ordered": "yes"}), "ordered must be a bool"),
    "key_a_tuple_holding_a_list": (_g({"$dict": [[{"$tuple": [[1]]}, 1]]}), "unhashable"),
    "dict_pairs_a_dict": (_g({"$dict": {"a": 1}}), "expected a list"),
    "tuple_items_a_string": (_g({"$tuple": "ab"}), "expected a list"),
    "float_a_list": (_g({"$float": ["nan"]}), "bad float"),
    "requires_grad_on_ints": (_forge({"0": glassgrad.arange(4)}, dict(T, dtype="int64", requires_grad=True)),
                              "floating point"),
    "root_missing": (_forge({}, None, raw='{"version": 1}'), "unsupported structure"),
    "locations_a_list": (_forge({}, None, raw='{"version": 1, "root": 1, "locations": [1]}'), "locations"),
    "location_an_int": (_forge({}, None, raw='{"version": 1, "root": 1, "locations": {"0": 1}}'), "locations"),
}


@pytest.mark.parametrize("case", sorted(GLASSGRAD_MALFORMED))
def test_malformed_glassgrad_structures_raise_checkpoint_error(case, tmp_path):
    data, msg = GLASSGRAD_MALFORMED[case]
    for load in (_load_bytes(data), _load_path(tmp_path, data)):
        _refused(load, CheckpointError, msg)


def _st(header, data=b""):
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


def _e(shape, offs, dtype="F32"):
    return {"dtype": dtype, "shape": shape, "data_offsets": offs}


SAFETENSORS_MALFORMED = {
    "shape_huge_but_empty": (_st({"a": _e([0, 2 ** 70], [0, 0])}), "too large for NumPy"),
    "shape_huge_zero_bytes": (_st({"a": _e([2 ** 62, 2 ** 62, 0], [0, 0])}), "too large for NumPy"),
    "dims_65": (_st({"a": _e([1] * 65, [0, 4])}, bytes(4)), "65 dimensions; glassgrad \\(NumPy\\) supports at most 64"),
    "dtype_a_list": (_st({"a": _e([1], [0, 4], dtype=["F32"])}, bytes(4)), "unsupported dtype"),
    "shape_a_dict": (_st({"a": _e({"1": 1}, [0, 4])}, bytes(4)), "shape must be a list"),
    "offsets_floats": (_st({"a": _e([1], [0.0, 4.0])}, bytes(4)), "data_offsets"),
    "offsets_huge": (_st({"a": _e([1], [2 ** 70, 2 ** 70 + 4])}, bytes(4)), "gap"),
    "entry_a_list": (_st({"a": [1, 2]}), "needs dtype"),
    "metadata_a_list": (_st({"__metadata__": ["a"]}), "strings to strings"),
    "deeply_nested": (struct.pack("<Q", 200002) + b"[" * 100001 + b"]" * 100001, "nested deeper than 1000"),
    "int_too_long": (struct.pack("<Q", 5006) + b'{"a":' + b"9" * 5000 + b"}", "not valid JSON"),
}


def test_a_header_of_escaped_quotes_is_scanned_in_linear_time():
    """A string opened and never closed, full of escaped quotes: a backtracking pattern for JSON strings (as a
    depth count might use) takes quadratic time on it -- 6 s for 40 KB; this is 400 KB."""
    raw = b'"' + b'\\"' * 200_000
    data = struct.pack("<Q", len(raw)) + raw
    t = time.perf_counter()
    _refused(lambda: gs.load(data), gs.SafetensorError, "not valid JSON")
    assert time.perf_counter() - t < 2


@pytest.mark.parametrize("case", sorted(SAFETENSORS_MALFORMED))
def test_malformed_safetensors_headers_raise_safetensor_error(case, tmp_path):
    data, msg = SAFETENSORS_MALFORMED[case]
    p = tmp_path / "bad.safetensors"
    p.write_bytes(data)
    for load in (lambda: gs.load(data), lambda: gs.load_file(p)):
        _refused(load, gs.SafetensorError, msg, peak_below=4 << 20)
    _refused(lambda: glassgrad.load(p), CheckpointError, msg)       # glassgrad.load: always its own error


def test_a_location_with_thousands_of_digits_is_a_location_error(monkeypatch):
    """On a machine with a GPU, int() of a 5000-digit device index raised Python's ValueError."""
    monkeypatch.setattr(backend, "cuda_available", lambda: True)
    monkeypatch.setattr(backend, "device_count", lambda: 1)
    for location, msg in [("cuda:" + "9" * 5000, "don't know how to restore"), ("cuda:999999999", "device 999999999")]:
        with pytest.raises(LocationError, match=msg):
            Placement()(np.zeros(2, np.float32), location)
