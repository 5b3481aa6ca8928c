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


# -- torch pickles: malformed arguments, nesting, keys that hash alike (issues 3, 4, 5, 7) ---------------------------

def _tensor_pickle(offset=0, size=(4,), stride=(1,), requires_grad=False, storage=torch.FloatStorage, key="0",
                   numel=4, nbytes=16, pid=None, args=None, wrap=None):
    """A torch archive holding one tensor rebuilt by _rebuild_tensor_v2 from the given (possibly wrong-typed)
    pieces; `wrap(tensor_object)` wraps it in something else."""
    marker = object()
    pid = pid if pid is not None else ("storage", storage, key, "cpu", numel)
    t = Reduce(tu._rebuild_tensor_v2, args(marker) if args else
               (marker, offset, size, stride, requires_grad, OrderedDict()))
    f = io.BytesIO()
    TorchLike(f, {id(marker): pid}).dump(wrap(t) if wrap else t)
    return zip_bytes([("a/data.pkl", f.getvalue(), STORED), ("a/byteorder", b"little", STORED),
                      ("a/data/0", bytes(nbytes), STORED)])


def _raw_pickle(body):
    return zip_bytes([("a/data.pkl", b"\x80\x02" + body + b".", STORED)])


TORCH_MALFORMED = {
    "offset_float": (_tensor_pickle(offset=1.5), "malformed tensor"),
    "offset_huge": (_tensor_pickle(offset=2 ** 70), "outside its storage"),
    "offset_negative": (_tensor_pickle(offset=-1), "negative"),
    "size_a_string": (_tensor_pickle(size="abcd"), "malformed tensor"),
    "size_a_list": (_tensor_pickle(size=[4], stride=[1]), "malformed tensor"),
    "size_nested": (_tensor_pickle(size=((4,),)), "malformed tensor"),
    "size_a_dict": (_tensor_pickle(size={4: 1}), "malformed tensor"),
    "size_bool": (_tensor_pickle(size=(True,)), "malformed tensor"),
    "size_negative": (_tensor_pickle(size=(-1,)), "negative"),
    "size_huge_broadcast": (_tensor_pickle(size=(2 ** 62,), stride=(0,)), "too large for NumPy"),
    "size_huge_but_empty": (_tensor_pickle(size=(0, 2 ** 70), stride=(1, 1)), "too large for NumPy"),
    "stride_huge_on_size_one": (_tensor_pickle(size=(1,), stride=(2 ** 70,)), "too large for NumPy"),
    "stride_float": (_tensor_pickle(stride=(1.0,)), "malformed tensor"),
    "sizes_and_strides_differ": (_tensor_pickle(size=(2, 2), stride=(1,)), "malformed tensor"),
    "dims_65": (_tensor_pickle(size=(1,) * 65, stride=(1,) * 65),
                "65 dimensions; glassgrad \\(NumPy\\) supports at most 64"),
    "requires_grad_on_ints": (_tensor_pickle(requires_grad=True, storage=torch.LongStorage, nbytes=32),
                              "floating point"),
    "requires_grad_an_int": (_tensor_pickle(requires_grad=1), "requires_grad must be a bool"),
    "parameter_requires_grad_a_tensor": (_tensor_pickle(wrap=lambda t: Reduce(
        tu._rebuild_parameter, (t, t, OrderedDict()))), "requires_grad must be a bool"),
    "parameter_of_ints": (_tensor_pickle(storage=torch.LongStorage, nbytes=32, wrap=lambda t: Reduce(
        tu._rebuild_parameter, (t, True, OrderedDict()))), "floating point"),
    "too_many_arguments": (_tensor_pickle(args=lambda m: (m, 0, (4,), (1,), False, OrderedDict(), None, 1)),
                           "bad arguments"),
    "storage_key_an_int": (_tensor_pickle(key=5), "persistent storage id"),
    "storage_numel_float": (_tensor_pickle(numel=4.0), "persistent storage id"),
    "storage_numel_huge": (_tensor_pickle(numel=2 ** 70), "declares"),
    "storage_numel_negative": (_tensor_pickle(numel=-4), "declares"),
    "storage_location_an_int": (_tensor_pickle(pid=("storage", torch.FloatStorage, "0", 0, 4)),
                                "persistent storage id"),
    "storage_id_a_string": (_tensor_pickle(pid="storage"), "persistent storage id"),
    "storage_id_too_short": (_tensor_pickle(pid=("storage", torch.FloatStorage, "0")), "persistent storage id"),
    "storage_type_a_string": (_tensor_pickle(pid=("storage", "FloatStorage", "0", "cpu", 4)),
                              "persistent storage id"),
    "too_few_arguments": (_tensor_pickle(args=lambda m: (m, 0)), "bad arguments"),
    "unhashable_key_in_tuple": (_raw_pickle(b"}]\x85K\x02s"), "unhashable"),
    "mark_missing": (_raw_pickle(b"K\x01t"), "MARK"),
    "memo_missing": (_raw_pickle(b"h\x05"), "memo"),
    "global_of_ints": (_raw_pickle(b"K\x01K\x02\x93"), "two strings"),
    "short_binunicode_truncated": (_raw_pickle(b"\x8c\xff"), "truncated"),
    "stack_left_over": (_raw_pickle(b"K\x01K\x02"), "malformed stack"),
}


def _reduce_of_a_tensor():
    """REDUCE whose callable is a tensor: a pickled tensor, then an empty tuple and REDUCE."""
    with zipfile.ZipFile(io.BytesIO(_tensor_pickle())) as z:
        body = z.read("a/data.pkl")
    return zip_bytes([("a/data.pkl", body[:-1] + b")R.", STORED), ("a/data/0", bytes(16), STORED)])


TORCH_MALFORMED["reduce_a_tensor"] = (_reduce_of_a_tensor(), "REDUCE of Tensor")


@pytest.mark.parametrize("case", sorted(TORCH_MALFORMED))
def test_malformed_torch_pickles_raise_checkpoint_error(case, tmp_path):
    data, msg = TORCH_MALFORMED[case]
    for load in (_load_bytes(data), _load_path(tmp_path, data)):
        _refused(load, CheckpointError, msg)


_DEEP = r"""
import io, struct, sys, zipfile
sys.setrecursionlimit(10 ** 6)
import glassgrad
from glassgrad import safetensors as gs
from glassgrad.serialization import CheckpointError
n = 1_000_000
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as z:
    z.writestr("a/data.pkl", b"\x80\x02}K\x01" + b"\x85" * n + b"K\x00s.")       # a tuple key n deep
deep = "[" * n + "]" * n
header = deep.encode()
cases = {"pickle_tuple_key": lambda: glassgrad.load(io.BytesIO(buf.getvalue())),
         "safetensors_header": lambda: gs.load(struct.pack("<Q", len(header)) + header),
         "glassgrad_structure": lambda: glassgrad.load(io.BytesIO(gs.save(
             {}, metadata={"glassgrad": '{"version": 1, "root": ' + deep + "}"})))}
for name, load in cases.items():
    try:
        load()
        print(name, "loaded")
    except (CheckpointError, gs.SafetensorError) as e:
        print(name, type(e).__name__, e)
"""


def test_deep_nesting_is_refused_without_recursing(tmp_path):
    """A tuple key a million deep crashes torch.load (hash recursion); deep JSON reaches json's C recursion.
    With the recursion limit raised, either overflows the C stack unless nesting is bounded before it."""
    out = subprocess.run([sys.executable, "-c", _DEEP], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    lines = out.stdout.splitlines()
    assert len(lines) == 3 and all("nested deeper than 1000" in ln for ln in lines), lines
    assert [ln.split()[1] for ln in lines] == ["CheckpointError", "SafetensorError", "CheckpointError"]


@pytest.mark.parametrize("op", ["tuple1", "mark", "list", "dict"])
def test_pickles_nested_deeper_than_the_limit_are_refused(op):
    """Each way of nesting: TUPLE1 on TUPLE1, MARK ... TUPLE, APPEND of a list into a list, SETITEM of a dict into
    a dict; 1000 levels load, 1001 do not."""
    def body(n):
        return {"tuple1": b"N" + b"\x85" * n, "mark": b"(" * n + b"N" + b"t" * n,
                "list": b"]" * n + b"a" * (n - 1), "dict": b"}" + b"K\x00}" * (n - 1) + b"s" * (n - 1)}[op]
    _refused(_load_bytes(_raw_pickle(body(1001))), CheckpointError, "nested deeper than 1000")
    got = glassgrad.load(io.BytesIO(_raw_pickle(body(1000))))
    for _ in range(999 if op in ("list", "dict") else 1000):
        got = got[0]
    assert got is None if op in ("tuple1", "mark") else got in ([], {})


_P = 2 ** 61 - 1            # CPython's int hash modulus: k * _P hashes to 0 for every k


def _long1(n):
    b = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(b)]) + b


def test_int_keys_that_all_hash_alike_are_refused_at_once():
    """60k keys k * (2**61 - 1): each insert probes every earlier key -- half a minute to build the dict.  No real
    checkpoint has more than a few keys with one hash (str hashes are salted per process, ints below 2**61 - 1
    hash to themselves), so more than 16 in one dict are refused."""
    body = b"}(" + b"".join(_long1(k * _P) + b"N" for k in range(1, 60_001)) + b"u"
    data = _raw_pickle(body)
    assert len(data) < 2 << 20
    t = time.perf_counter()
    _refused(_load_bytes(data), CheckpointError, "keys with one hash")
    assert time.perf_counter() - t < 12   # the dict takes ~30 s to build; 12 s allows a loaded CI machine
    structure = {"$dict": [[k * _P, None] for k in range(1, 60_001)]}
    t = time.perf_counter()
    _refused(_load_bytes(_forge({}, structure)), CheckpointError, "keys with one hash")
    assert time.perf_counter() - t < 12


def test_real_int_and_float_keys_still_load():
    """Optimizer state_dicts key their state by int; ints, floats and tuples of them that merely share low bits
    are not refused."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(lin.parameters())
    lin(torch.randn(4, 3)).sum().backward()
    opt.step()
    obj = {"opt": opt.state_dict(), "ints": {k * 2 ** 40: k for k in range(2000)}, "neg": {-1: "a", -2: "b"},
           "floats": {k / 8: k for k in range(2000)}, "tuples": {(k, 2 ** 40 * k): k for k in range(2000)}}
    data = _torch_bytes(obj)
    assert_same(torch.load(io.BytesIO(data), weights_only=True), glassgrad.load(io.BytesIO(data)))


# -- torch zip archives: compression, names twice, entry counts, damage (issues 1, 2, 6) -----------------------------

@pytest.mark.parametrize("method,name", [(BZIP2, "bzip2"), (LZMA, "lzma")])
@pytest.mark.parametrize("entry", ["data.pkl", "byteorder", "data/0"])
def test_bzip2_and_lzma_entries_are_refused_before_inflating(tmp_path, method, name, entry):
    """A few hundred bytes of bzip2 inflate to gigabytes; torch refuses the method, so does glassgrad -- after
    reading nothing but the directory.  The pickle and byteorder bombs here inflate to 16 MiB (the limit is
    1 MiB); the storage keeps its size, which is checked first."""
    good = _entries(_torch_bytes({"w": torch.ones(3)}))
    pad = bytes(0 if entry == "data/0" else 16 << 20)
    bomb = [(n, d + pad if n.endswith(entry) else d, method if n.endswith(entry) else STORED) for n, d, _ in good]
    data = zip_bytes(bomb)
    assert len(data) < 64 << 10
    _refused(_load_path(tmp_path, data), CheckpointError, f"{entry}.*compressed with {name}", peak_below=1 << 20)


def test_deflated_pickle_loads_as_torch_loads_it(tmp_path):
    """torch reads DEFLATE entries (miniz); glassgrad does for all but storages, which torch.save never
    compresses (glassgrad maps or reads them straight from the file)."""
    obj = {"w": torch.arange(6.0).view(2, 3), "step": 3}
    data = zip_bytes(_entries(_torch_bytes(obj), lambda n: STORED if "/data/" in n else DEFLATED))
    assert_same(torch.load(io.BytesIO(data), weights_only=True), glassgrad.load(io.BytesIO(data)))
    p = tmp_path / "d.pt"
    p.write_bytes(data)
    assert_same(torch.load(p, weights_only=True), glassgrad.load(p, mmap=True))


def _deflate_bomb(declared):
    """An archive whose data.pkl inflates to 64 MiB but declares `declared` bytes in its directory."""
    data = zip_bytes([("a/data.pkl", b"\x80\x02N." + bytes(64 << 20), DEFLATED)])
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo("a/data.pkl")
    cd = data.rindex(b"PK\x01\x02")                         # the only central directory record
    b = bytearray(data)
    struct.pack_into("<I", b, cd + 24, declared)            # uncompressed size
    struct.pack_into("<I", b, info.header_offset + 22, declared)
    return bytes(b)


def test_a_deflate_bomb_inflates_no_further_than_its_declared_size(tmp_path):
    _refused(_load_path(tmp_path, _deflate_bomb(100)), CheckpointError, "data.pkl.*(inflates|CRC)",
             peak_below=1 << 20)


@pytest.mark.parametrize("order", ["first", "second"])
def test_two_entries_with_one_name_are_refused(tmp_path, order):
    good = _entries(_torch_bytes({"w": torch.ones(3)}))
    dup = [e for e in good if e[0].endswith("data/0")][0]
    other = (dup[0], torch.full((3,), 7.0).numpy().tobytes(), STORED)
    entries = []
    for e in good:
        entries += ([other, e] if order == "first" else [e, other]) if e is dup else [e]
    _refused(_load_path(tmp_path, zip_bytes(entries)), CheckpointError, "two entries named '.*data/0'")


def test_an_archive_with_too_many_entries_is_refused_from_its_directory_end(tmp_path):
    """400k entries cost Python's zipfile 235 MiB (torch: 31 MiB); glassgrad reads the entry count from the end
    record and refuses more than 100,000 before parsing the directory: here one too many."""
    entries = [("a/data.pkl", b"\x80\x02N.", STORED)] + [(f"a/{i}", b"", STORED) for i in range(100_000)]
    _refused(_load_path(tmp_path, zip_bytes(entries)), CheckpointError, "100001 entries.*at most 100000",
             peak_below=1 << 20)


def test_a_directory_holding_more_records_than_its_end_record_counts_is_refused(tmp_path):
    """The count is the bound only if the directory holds exactly that many records."""
    data = bytearray(zip_bytes([("a/data.pkl", b"\x80\x02N.", STORED), ("a/x", b"", STORED)]))
    end = data.rindex(b"PK\x05\x06")
    struct.pack_into("<HH", data, end + 8, 1, 1)
    _refused(_load_path(tmp_path, bytes(data)), CheckpointError, "central directory")


def test_the_directory_of_a_large_real_archive_costs_under_250_bytes_an_entry(tmp_path):
    """5,000 storages: glassgrad's directory takes under 250 bytes an entry (Python's zipfile: ~520)."""
    p = tmp_path / "many.pt"
    torch.save({str(i): torch.tensor([float(i)]) for i in range(5000)}, p)
    archive = _pt_reader._Archive(p, os.path.getsize(p), mmap=False)
    tracemalloc.start()
    try:
        names = archive.directory()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        archive.close()
    assert len(names) == 5006 and peak < 5006 * 250, peak / 5006
    assert glassgrad.load(p, mmap=True)["4999"].item() == 4999.0


def _patched(data, at, fmt, *values):
    b = bytearray(data)
    struct.pack_into(fmt, b, at, *values)
    return bytes(b)


def _archive_cases():
    good = _torch_bytes({"w": torch.ones(3)})                   # torch writes zip64 end records
    end, end64 = good.rindex(b"PK\x05\x06"), good.rindex(b"PK\x06\x06")
    cd = good.index(b"PK\x01\x02")
    plain = zip_bytes([("a/data.pkl", b"\x80\x02N.", STORED)])
    return {
        "no_end_record": (good[:end], "no end of central directory"),
        "directory_past_the_end": (_patched(good, end64 + 48, "<Q", 2 ** 40), "central directory"),
        "directory_past_the_end_32": (_patched(plain, plain.rindex(b"PK\x05\x06") + 16, "<I", 2 ** 32 - 2),
                                      "central directory"),
        "zip64_record_missing": (_patched(good, end64, "<I", 0), "zip64 end record"),
        "zip64_record_past_the_end": (_patched(good, end - 12, "<Q", 2 ** 50), "zip64 end record"),
        "too_many_entries_counted": (_patched(good, end64 + 32, "<Q", 2 ** 40), "at most 100000"),
        "record_bad_signature": (_patched(good, cd, "<I", 0), "central directory"),
        "name_past_the_directory": (_patched(good, cd + 28, "<H", 60000), "central directory"),
        "header_offset_past_the_end": (_patched(good, cd + 42, "<I", 2 ** 32 - 2), "local header|past the end"),
        "encrypted": (_patched(good, cd + 8, "<H", 1), "encrypted"),
    }


ARCHIVE_CASES = _archive_cases()


@pytest.mark.parametrize("case", sorted(ARCHIVE_CASES))
def test_damaged_archives_raise_checkpoint_error(case, tmp_path):
    data, msg = ARCHIVE_CASES[case]
    for load in (_load_bytes(data), _load_path(tmp_path, data)):
        _refused(load, CheckpointError, msg, peak_below=1 << 20)


def test_zip64_archives_from_torch_still_load():
    """torch writes zip64 records in its archives (miniz); the directory reader follows them."""
    obj = {"w": torch.arange(10.0), "b": torch.ones(2, dtype=torch.int64)}
    data = _torch_bytes(obj)
    assert b"PK\x06\x06" in data
    assert_same(torch.load(io.BytesIO(data), weights_only=True), glassgrad.load(io.BytesIO(data)))
