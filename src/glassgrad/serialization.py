"""glassgrad.save / glassgrad.load: checkpoints that cannot execute code.

``load`` also reads ``torch.save``'s zip archives and its legacy (pre-1.6) files, through the restricted pickle
machine in _pt_reader.py; ``save(..., format="torch")`` writes zip archives torch reads (_pt_writer.py).

The file is a plain safetensors file (see glassgrad/safetensors.py): every distinct storage (the memory
one or more tensors view) is one entry, and the object's structure is JSON in the header's
``__metadata__["glassgrad"]``.  The structure holds only data -- dicts (with their key types and order,
and a state_dict's ``_metadata``), lists, tuples, numbers (NaN and infinities included), strings, bools,
None -- and tensors as views: storage, dtype, shape, strides, offset, requires_grad, Parameter or not.
Views of one storage come back sharing one storage.  Loading interprets nothing else: an unknown tag is
an error, every view is checked to lie inside its storage before it is built.
"""
import io
import json
import math
from collections import OrderedDict

import numpy as np

from . import safetensors as _st

__all__ = ["save", "load", "CheckpointError"]

_KEY = "glassgrad"
_VERSION = 1


class CheckpointError(_st.SafetensorError):
    """A checkpoint whose structure is malformed or names something glassgrad will not build."""


# -- save --------------------------------------------------------------------------------------------

def _owner(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class _Saver:
    def __init__(self):
        self.storages = {}      # id(owner array) -> (key, owner)

    def storage(self, a):
        own = _owner(a)
        if not (own.flags.c_contiguous and own.dtype == a.dtype):
            own = a = np.ascontiguousarray(a)          # not a plain view of a plain buffer: save a copy
        hit = self.storages.get(id(own))
        if hit is None:
            hit = self.storages[id(own)] = (str(len(self.storages)), own)
        return hit[0], a, hit[1]

    def encode(self, obj):
        from ._tensor import Tensor
        from .backend import to_host
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"$float": repr(obj)}
        if isinstance(obj, Tensor):
            key, a, own = self.storage(to_host(obj._data))
            base = own.__array_interface__["data"][0]
            off = a.__array_interface__["data"][0] - base if a.size else 0
            from .nn.parameter import Parameter
            return {"$tensor": key, "dtype": a.dtype.name, "shape": list(a.shape),
                    "strides": [s // a.itemsize for s in a.strides], "offset": off // a.itemsize,
                    "requires_grad": bool(obj._rg), "parameter": isinstance(obj, Parameter)}
        if isinstance(obj, (list, tuple)):
            items = [self.encode(v) for v in obj]
            return items if isinstance(obj, list) else {"$tuple": items}
        if isinstance(obj, dict):
            out = {"$dict": [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
            if isinstance(obj, OrderedDict):
                out["ordered"] = True
            meta = getattr(obj, "_metadata", None)
            if meta is not None:
                out["_metadata"] = self.encode(meta)
            return out
        if isinstance(obj, (np.integer, np.floating, np.bool_)):
            return self.encode(obj.item())
        raise TypeError(f"glassgrad.save cannot store a {type(obj).__name__} (only tensors, dicts, lists, tuples, "
                        "numbers, strings, bools and None)")


def save(obj, f, format="glassgrad"):
    """Save `obj` (tensors, state_dicts, nested dicts/lists/tuples of them and plain values) to `f`, a path
    (written atomically) or a binary file object.  ``format="torch"`` writes torch.save's zip archive
    instead, for torch.load(weights_only=True)."""
    if format == "torch":
        from ._pt_writer import write_torch_zip
        if hasattr(f, "write"):
            write_torch_zip(obj, f)
        else:
            import os
            stem = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
            _st.atomic_write(f, lambda fh: write_torch_zip(obj, fh, stem))
        return
    if format != "glassgrad":
        raise ValueError(f"glassgrad.save: unknown format {format!r} (glassgrad or torch)")
    s = _Saver()
    structure = json.dumps({"version": _VERSION, "root": s.encode(obj)}, separators=(",", ":"),
                           allow_nan=False)
    from ._tensor import _make
    tensors = {key: _make(own.reshape(-1)) for key, own in s.storages.values()}
    meta = {_KEY: structure}
    if hasattr(f, "write"):
        f.write(_st.save(tensors, meta))
    else:
        _st.save_file(tensors, f, meta)


# -- load --------------------------------------------------------------------------------------------

def checked_view(own, offset, shape, strides, bad):
    """The view of 1-d storage array `own` at element `offset` with element `strides`, after checking that
    every element it can address lies inside the storage (`bad(message)` makes the error to raise).
    Negative strides are allowed (the reach is checked both ways); shape, offset must be >= 0."""
    if any(s < 0 for s in shape) or offset < 0:
        raise bad("negative size or offset")
    n = own.size
    if 0 in shape:
        if offset > n:
            raise bad("tensor view reaches outside its storage")
        base = own[:0]
    else:
        lo = offset + sum(st * (sz - 1) for st, sz in zip(strides, shape) if st < 0)
        hi = offset + sum(st * (sz - 1) for st, sz in zip(strides, shape) if st > 0)
        if lo < 0 or hi >= n:
            raise bad("tensor view reaches outside its storage")
        base = own[offset:]
    return np.lib.stride_tricks.as_strided(base, shape, [s * own.itemsize for s in strides], writeable=True)


def _bad(msg):
    return CheckpointError(f"glassgrad.load: {msg}")


class _Loader:
    def __init__(self, storages):
        self.storages = storages

    def tensor(self, d):
        from ._tensor import _make
        from .nn.parameter import Parameter
        own = self.storages.get(d.get("$tensor"))
        if own is None:
            raise _bad(f"tensor refers to a missing storage {d.get('$tensor')!r}")
        try:
            dt = np.dtype(d["dtype"])
            shape, strides, off = tuple(d["shape"]), tuple(d["strides"]), d["offset"]
        except (KeyError, TypeError):
            raise _bad("malformed tensor entry") from None
        ints = shape + strides + (off,)
        if dt != own.dtype or len(shape) != len(strides) or not all(type(v) is int for v in ints):
            raise _bad("tensor entry does not match its storage")
        a = checked_view(own, off, shape, strides, _bad)
        t = _make(a)
        if d.get("parameter"):
            return Parameter(t, requires_grad=bool(d.get("requires_grad")))
        if d.get("requires_grad"):
            t.requires_grad_(True)
        return t

    def decode(self, x):
        if x is None or isinstance(x, (bool, str, int, float)):
            return x
        if isinstance(x, list):
            return [self.decode(v) for v in x]
        if not isinstance(x, dict):
            raise _bad(f"unexpected {type(x).__name__}")
        if "$tensor" in x:
            return self.tensor(x)
        if "$tuple" in x:
            return tuple(self.decode(v) for v in self._list(x["$tuple"]))
        if "$float" in x:
            if x["$float"] not in ("nan", "inf", "-inf"):
                raise _bad(f"bad float {x['$float']!r}")
            return float(x["$float"])
        if "$dict" in x:
            out = OrderedDict() if x.get("ordered") else {}
            for pair in self._list(x["$dict"]):
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise _bad("dict entries must be [key, value] pairs")
                k = self.decode(pair[0])
                if isinstance(k, (list, dict)):
                    raise _bad("unhashable dict key")
                out[k] = self.decode(pair[1])
            if "_metadata" in x:
                out._metadata = self.decode(x["_metadata"])
            return out
        raise _bad(f"unknown entry {sorted(x)[:3]}")

    @staticmethod
    def _list(v):
        if not isinstance(v, list):
            raise _bad("expected a list")
        return v


def load(f, map_location=None, weights_only=True):
    """Load what glassgrad.save wrote, from a path or a binary file object.  Nothing in the file can run
    code: `weights_only` is accepted for PyTorch compatibility and makes no difference."""
    from . import _pt_reader
    if hasattr(f, "read"):
        data = f.read()
        if _pt_reader.is_torch_zip(data[:4]):
            return _placed(_pt_reader.load_torch_zip(io.BytesIO(data)), map_location)
        if _pt_reader.is_torch_legacy(data[:4]):
            return _placed(_pt_reader.load_torch_legacy(data), map_location)
        tensors, meta = _st.read_bytes(data)
    else:
        with open(f, "rb") as fh:
            head = fh.read(4)
            if _pt_reader.is_torch_legacy(head):
                fh.seek(0)
                return _placed(_pt_reader.load_torch_legacy(fh.read()), map_location)
        if _pt_reader.is_torch_zip(head):
            return _placed(_pt_reader.load_torch_zip(f), map_location)
        tensors, meta = _st.read_file(f)
    return _finish(tensors, meta or {}, map_location)


def _placed(obj, map_location):
    if map_location is not None and str(map_location) != "cpu":
        raise NotImplementedError("glassgrad.load: map_location other than 'cpu' is not implemented yet")
    return obj


def _finish(tensors, meta, map_location):
    if _KEY not in meta:
        raise _bad("not a glassgrad checkpoint (no structure in the safetensors metadata)")
    try:
        doc = json.loads(meta[_KEY])
        if not isinstance(doc, dict) or doc.get("version") != _VERSION or "root" not in doc:
            raise _bad("unsupported structure version")
        obj = _Loader({k: t._data for k, t in tensors.items()}).decode(doc["root"])
    except ValueError as e:
        if isinstance(e, CheckpointError):
            raise
        raise _bad(f"structure is not valid JSON: {e}") from None
    except RecursionError:
        raise _bad("structure nested too deeply") from None
    return _placed(obj, map_location)
