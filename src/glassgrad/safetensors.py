"""safetensors files without the `safetensors` package: ``save_file`` / ``load_file`` / ``save`` / ``load``
with the API of ``safetensors.torch``, so files from the wider ecosystem load straight into glassgrad
(``model.load_state_dict(load_file("model.safetensors"))``) and glassgrad's files load everywhere.

The format: an 8-byte little-endian header size N, N bytes of UTF-8 JSON mapping each tensor name to
``{"dtype", "shape", "data_offsets": [begin, end]}`` (plus an optional ``"__metadata__"`` of strings),
then the tensors' bytes, little-endian, C order.  Nothing in it can run code.  A file is checked whole
before anything is allocated for its tensors: header size within the file, JSON an object, known dtypes,
non-negative integer shapes whose byte size equals their offsets' span, and offsets that tile the data
exactly (no overlap, no gap, nothing past the end), no name twice, nesting at most 1000 deep (counted
before parsing), shapes NumPy can hold.  Any violation raises ``SafetensorError`` naming it.
Writes go to a temporary file in the target's folder, flushed and fsync'ed, then renamed over the target:
a crash mid-save leaves the previous file intact (and the next save removes the crashed writer's temporary
file).
"""
import json
import os
import re
import struct

import numpy as np

from ._atomic import atomic_write

__all__ = ["SafetensorError", "save", "save_file", "load", "load_file"]

_DTYPES = {"BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "I32": np.int32, "I64": np.int64,
           "F16": np.float16, "F32": np.float32, "F64": np.float64, "U16": np.uint16, "U32": np.uint32,
           "U64": np.uint64, "C64": np.complex64}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}
# ml_dtypes' types (an optional package: loading one without it names pip install glassgrad[bf16])
_ML = {"BF16": "bfloat16", "F8_E4M3": "float8_e4m3fn", "F8_E4M3FNUZ": "float8_e4m3fnuz", "F8_E5M2": "float8_e5m2",
       "F8_E5M2FNUZ": "float8_e5m2fnuz"}
_ML_NAMES = {v: k for k, v in _ML.items()}


def _np_dtype(name):
    """The NumPy dtype of a safetensors dtype name, None if glassgrad has none; BF16 and the F8 types are
    ml_dtypes' (loaded on first use)."""
    if name in _ML:
        from . import _dtype
        return getattr(_dtype, _ML[name]).np
    return _DTYPES.get(name)


def _name(npdt):
    if npdt.name in _ML_NAMES and npdt.itemsize <= 2 and npdt.kind in "fV":
        return _ML_NAMES[npdt.name]
    return _NAMES.get(npdt.newbyteorder("="))
_MAX_HEADER = 100_000_000          # the reference implementation's limit


class SafetensorError(ValueError):
    """A safetensors file (or the tensors to write) that breaks the format."""


# -- writing -----------------------------------------------------------------------------------------

def _arrays(tensors):
    from ._tensor import Tensor
    from .backend import to_host
    if not isinstance(tensors, dict):
        raise SafetensorError(f"expected a dict of tensors, got {type(tensors).__name__}")
    out = {}
    for name, t in tensors.items():
        if not isinstance(name, str) or name == "__metadata__":
            raise SafetensorError(f"invalid tensor name {name!r}")
        if not isinstance(t, Tensor):
            raise SafetensorError(f"{name!r} is a {type(t).__name__}, not a Tensor")
        a = to_host(t._data)
        if _name(a.dtype) is None:
            raise SafetensorError(f"{name!r}: dtype {a.dtype} cannot be stored")
        out[name] = a.astype(a.dtype.newbyteorder("<"), order="C", copy=False)
    return out


def _header(arrays, metadata):
    if metadata is not None and not (isinstance(metadata, dict)
                                     and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise SafetensorError("metadata must be a dict of str to str")
    # largest alignment first, then by name: every tensor starts aligned to its element size
    order = sorted(arrays, key=lambda k: (-arrays[k].dtype.itemsize, k))
    head, pos = {}, 0
    if metadata:
        head["__metadata__"] = dict(metadata)
    for k in order:
        a = arrays[k]
        head[k] = {"dtype": _name(a.dtype), "shape": list(a.shape),
                   "data_offsets": [pos, pos + a.nbytes]}
        pos += a.nbytes
    raw = json.dumps(head, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)          # the data starts 8-byte aligned
    return struct.pack("<Q", len(raw)) + raw, order


def save(tensors, metadata=None):
    """The bytes of a safetensors file holding `tensors` (a dict name -> Tensor)."""
    arrays = _arrays(tensors)
    head, order = _header(arrays, metadata)
    return head + b"".join(arrays[k].tobytes() for k in order)


def save_file(tensors, filename, metadata=None):
    """Write `tensors` to `filename` atomically (temporary file, fsync, rename)."""
    arrays = _arrays(tensors)
    head, order = _header(arrays, metadata)

    def write(f):
        f.write(head)
        for k in order:
            f.write(memoryview(arrays[k].reshape(-1).view(np.uint8)))
    atomic_write(filename, write)


# -- reading -----------------------------------------------------------------------------------------

MAX_DEPTH = 1000            # JSON (and pickle) nesting any real checkpoint stays far below
_JSON_ESCAPE, _JSON_STRING = re.compile(rb"\\.", re.S), re.compile(rb'"[^"]*"')    # neither backtracks


def json_loads(raw, bad):
    """The JSON document in bytes `raw`, or `bad(message)` raised: for text that is not JSON, for an object
    with a key twice (json keeps the last one silently) and for nesting deeper than MAX_DEPTH -- counted on
    the text, strings removed, before json recurses (which, under a raised recursion limit, can overflow the
    C stack)."""
    brackets = np.frombuffer(_JSON_STRING.sub(b"", _JSON_ESCAPE.sub(b"", raw)), dtype=np.uint8)
    depth = 0
    for i in range(0, len(brackets), 1 << 14):
        c = brackets[i:i + (1 << 14)]
        run = depth + np.cumsum(((c == 91) | (c == 123)).astype(np.int64) - ((c == 93) | (c == 125)))
        if run.max() > MAX_DEPTH:
            raise bad(f"nested deeper than {MAX_DEPTH} levels")
        depth = int(run[-1])

    def unique(pairs):
        d = dict(pairs)
        if len(d) != len(pairs):
            seen = set()
            twice = next(k for k, _ in pairs if k in seen or seen.add(k))
            raise bad(f"key {twice!r} twice in one JSON object")
        return d
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=unique)
    except SafetensorError:
        raise
    except UnicodeDecodeError:
        raise bad("not valid UTF-8") from None
    except ValueError as e:
        raise bad(f"not valid JSON: {e}") from None
    except RecursionError:          # deep enough for what the caller's stack has left of the recursion limit
        raise bad(f"nested too deeply (at most {MAX_DEPTH} levels, fewer on a deep call stack)") from None


def numpy_shape(shape, itemsize, bad):
    """Raises bad(message) unless NumPy can make an array of `shape` (non-negative ints) with `itemsize`-byte
    elements: at most 64 dimensions, and the product of the non-zero sizes times the item size below
    2**63 (NumPy checks that even for an empty array)."""
    if len(shape) > 64:
        raise bad(f"a tensor with {len(shape)} dimensions; glassgrad (NumPy) supports at most 64")
    n = itemsize
    for s in shape:
        n *= s or 1
    if n >= 2 ** 63:
        raise bad(f"a tensor of shape {list(shape)} is too large for NumPy")


def _parse_header(size_bytes, read_header, total):
    """Validate the header; returns ([(name, dtype, shape, begin, end)], metadata, data_start)."""
    if len(size_bytes) < 8:
        raise SafetensorError("file too small: no header size")
    n = struct.unpack("<Q", size_bytes)[0]
    if n > _MAX_HEADER:
        raise SafetensorError(f"header too large: {n} bytes")
    if 8 + n > total:
        raise SafetensorError(f"header size {n} runs past the end of the file ({total} bytes)")
    head = json_loads(read_header(n), lambda msg: SafetensorError(f"header: {msg}"))
    if not isinstance(head, dict):
        raise SafetensorError("header is not a JSON object")
    metadata = head.pop("__metadata__", None)
    if metadata is not None and not (isinstance(metadata, dict)
                                     and all(isinstance(v, str) for v in metadata.values())):
        raise SafetensorError("__metadata__ must map strings to strings")
    data_len = total - 8 - n
    entries = []
    for name, info in head.items():
        if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= set(info):
            raise SafetensorError(f"{name!r}: an entry needs dtype, shape and data_offsets")
        dt = _np_dtype(info["dtype"]) if isinstance(info["dtype"], str) else None
        if dt is None:
            known = info["dtype"] in ("F8_E8M0",)
            raise SafetensorError(f"{name!r}: unsupported dtype {info['dtype']!r}" + (
                " (glassgrad's safetensors have no float8_e8m0fnu; convert it first)"
                if known else ""))
        shape, offs = info["shape"], info["data_offsets"]
        if not (isinstance(shape, list) and all(type(s) is int and s >= 0 for s in shape)):
            raise SafetensorError(f"{name!r}: shape must be a list of non-negative integers")
        if not (isinstance(offs, list) and len(offs) == 2 and all(type(o) is int for o in offs)
                and 0 <= offs[0] <= offs[1]):
            raise SafetensorError(f"{name!r}: data_offsets must be [begin, end] with 0 <= begin <= end")
        nbytes = np.dtype(dt).itemsize
        numpy_shape(shape, nbytes, lambda msg: SafetensorError(f"{name!r}: {msg}"))
        for s in shape:
            nbytes *= s
        if nbytes != offs[1] - offs[0]:
            raise SafetensorError(f"{name!r}: shape {shape} of {info['dtype']} needs {nbytes} bytes, its offsets "
                                  f"span {offs[1] - offs[0]}")
        entries.append((name, dt, tuple(shape), offs[0], offs[1]))
    pos = 0
    for name, _, _, b, e in sorted(entries, key=lambda x: (x[3], x[4])):
        if b != pos:
            raise SafetensorError(f"{name!r}: data_offsets {[b, e]} " + ("overlap the previous tensor" if b < pos
                                                                         else "leave a gap before it"))
        pos = e
    if pos != data_len:
        raise SafetensorError(f"the tensors cover {pos} bytes of data but the file has {data_len}")
    return entries, metadata, 8 + n


def _tensors(entries, buf, start):
    from ._tensor import _make
    out = {}
    for name, dt, shape, b, e in entries:
        a = np.frombuffer(buf, dtype=np.dtype(dt).newbyteorder("<"), count=(e - b) // np.dtype(dt).itemsize,
                          offset=start + b)
        out[name] = _make(a.astype(dt, copy=False).reshape(shape))
    return out


def read_bytes(data):
    """(tensors, metadata) of the bytes of a safetensors file."""
    data = bytes(data)
    entries, meta, start = _parse_header(data[:8], lambda n: data[8:8 + n], len(data))
    buf = bytearray(data)               # writable memory for the tensors (checked before this copy)
    return _tensors(entries, buf, start), meta


def read_file(filename, mmap=False):
    """(tensors, metadata) of a safetensors file.  With `mmap` the tensors map the file copy-on-write (as
    torch.load(mmap=True)): pages are read when touched, writes stay in this process."""
    with open(filename, "rb") as f:
        total = os.fstat(f.fileno()).st_size
        size = f.read(8)
        entries, meta, start = _parse_header(size, lambda n: f.read(n), total)
        if mmap:
            buf = np.memmap(filename if mmap == "r+" else f, dtype=np.uint8, mode="c" if mmap is True else mmap,
                            shape=(total,))     # mmap: True (copy-on-write) or np.memmap's mode
        else:
            buf = bytearray(total)          # the file was checked against its real size: now allocate
            f.seek(0)
            if f.readinto(buf) != total:
                raise SafetensorError("file changed size while being read")
    return _tensors(entries, buf, start), meta


def load(data):
    """Tensors from the bytes of a safetensors file (a dict name -> Tensor)."""
    return read_bytes(data)[0]


def load_file(filename, device="cpu"):
    """Tensors from a safetensors file; `device` as in safetensors.torch.load_file."""
    out = read_file(filename)[0]
    if str(device) != "cpu":
        out = {k: v.to(device) for k, v in out.items()}
    return out


def load_metadata(filename):
    """The ``__metadata__`` of a safetensors file (None if it has none), header checks included."""
    with open(filename, "rb") as f:
        total = os.fstat(f.fileno()).st_size
        return _parse_header(f.read(8), lambda n: f.read(n), total)[1]
