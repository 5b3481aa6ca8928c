"""glassgrad.save / glassgrad.load: checkpoints that cannot execute code.

``load`` also reads ``torch.save``'s zip archives and its legacy (pre-1.6) files, through the restricted pickle
machine in _pt_reader.py and _pt_pickle.py; ``save(..., format="torch")`` writes zip archives torch reads (_pt_writer.py).

The file is a plain safetensors file (see glassgrad/safetensors.py): every distinct storage (the memory
one or more tensors view) is one entry, and the object's structure is JSON in the header's
``__metadata__["glassgrad"]``.  The structure holds only data -- dicts (with their key types and order,
and a state_dict's ``_metadata``), lists, tuples, numbers (NaN and infinities included), strings, bools,
None -- and tensors as views: storage, dtype, shape, strides, offset, requires_grad, Parameter or not.
Views of one storage come back sharing one storage.  Loading interprets nothing else: an unknown tag is
an error, every view is checked to lie inside its storage before it is built.

Storages saved from a GPU record their location ("cuda:0") beside the structure, as torch's files do; on
load, ``map_location`` (torch.load's argument, class Placement) moves each storage once, so shared views
stay shared on whatever device they land.
"""
import io
import json
import math
import reprlib
from collections import OrderedDict

import numpy as np

from . import safetensors as _st
from ._atomic import atomic_write
from ._tensor import element_strides

from ._pt_objects import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals  # noqa: F401
from ._serialization_extras import *  # noqa: F401,F403
from ._serialization_extras import (__all__ as _extras_all, custom_packages, location_tag, mmap_mode, restore_registered,
                                    skipping_data)

__all__ = ["save", "load", "CheckpointError", "LocationError", "Placement", "add_safe_globals", "clear_safe_globals",
           "get_safe_globals", "safe_globals", "get_unsafe_globals_in_checkpoint", "DEFAULT_PROTOCOL"] + _extras_all

DEFAULT_PROTOCOL = 2

_KEY = "glassgrad"
_VERSION = 1


class CheckpointError(_st.SafetensorError):
    """A checkpoint whose structure is malformed or names something glassgrad will not build."""


class LocationError(CheckpointError, RuntimeError):
    """A storage's location (or map_location) names a device this machine cannot put it on -- a RuntimeError,
    as in torch.load."""


# -- save --------------------------------------------------------------------------------------------

class StorageTable:
    """The distinct storages that saved tensors view, each saved once (both file formats use this)."""

    def __init__(self):
        self.index = {}         # id(owner array) -> key
        self.entries = []       # [(key, host copy of the owner, location, owner)]; key = position

    def view(self, t):
        """Tensor `t` as (storage key, dtype, shape, element strides, element offset); registers its storage."""
        from . import backend
        a = t._data
        own = a if a.base is None else backend.owner(a)
        if not (own.flags.c_contiguous and own.dtype == a.dtype):
            own = a = backend.xp_of(a).ascontiguousarray(a)     # not a plain view of a plain buffer: save a copy
        key = self.index.get(id(own))
        if key is None:                                 # (the owner is kept alive, so its id stays unique)
            key = self.index[id(own)] = str(len(self.entries))
            where = location_tag(t) if custom_packages() else str(backend.device_of(own))
            self.entries.append((key, backend.to_host(own), where, own))
        it = a.itemsize
        off = (backend.data_ptr(a) - backend.data_ptr(own)) // it if a is not own and a.size else 0
        return key, a.dtype, a.shape, element_strides(a), off

    def storage(self, key):
        """(host array, location) of storage `key`."""
        return self.entries[int(key)][1:3]

    def storages(self):
        """(key, host array, location) of every storage, in key order."""
        return [e[:3] for e in self.entries]


class _Saver:
    def __init__(self):
        from ._tensor import Tensor
        from .nn.parameter import Parameter
        self.table, self.Tensor, self.Parameter = StorageTable(), Tensor, Parameter

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"$float": repr(obj)}
        if isinstance(obj, self.Tensor) and obj.is_sparse_csr:
            raise TypeError("glassgrad.save cannot store a sparse CSR tensor (convert it with to_sparse())")
        if isinstance(obj, self.Tensor) and obj.is_sparse:      # sparse COO: its indices and values
            from ._tensor import _make
            c = obj._data
            return {"$sparse_coo": [self.encode(_make(c.indices)), self.encode(_make(c.values))],
                    "size": list(c.shape), "coalesced": bool(c.coalesced), "requires_grad": bool(obj._rg)}
        if isinstance(obj, self.Tensor):
            key, dtype, shape, strides, off = self.table.view(obj)
            return {"$tensor": key, "dtype": str(dtype), "shape": list(shape), "strides": list(strides),
                    "offset": off, "requires_grad": bool(obj._rg), "parameter": isinstance(obj, self.Parameter)}
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
        raise unstorable(obj, "glassgrad.save")


def unstorable(obj, who):
    """The TypeError for an object a checkpoint cannot hold (with the usual fix for modules and optimizers)."""
    hint = ""
    if hasattr(obj, "state_dict") and callable(obj.state_dict):
        hint = "; save its state_dict() instead and load it back with load_state_dict()"
    return TypeError(f"{who} cannot store a {type(obj).__name__} (only tensors, dicts, lists, tuples, numbers, "
                     f"strings, bools and None: nothing that would need code to rebuild){hint}")


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False, *, format=None):
    """Save `obj` to `f`, a path (written atomically) or a binary file object, as torch.save does: torch's zip
    archive, which torch.load reads.  State_dicts, tensors and plain data are written for
    torch.load(weights_only=True); any other picklable object (a whole module, an optimizer) is pickled with
    `pickle_protocol`, as torch.save does, and needs load(..., weights_only=False) (_pt_objects.py).
    A path ending in ``.safetensors``, or ``format="glassgrad"`` (alias ``"safetensors"``), writes glassgrad's
    own format instead: a safetensors file with the structure in its metadata (module docstring), which holds
    data only.  torch's legacy (pre-1.6) format is not written."""
    import os
    if not _use_new_zipfile_serialization:
        if skipping_data():
            raise RuntimeError("Cannot use skip_data=True with _use_new_zipfile_serialization=False")
        raise ValueError("glassgrad.save does not write torch's legacy (pre-1.6) format; glassgrad.load reads it")
    if format is None:
        path = None if hasattr(f, "write") else os.fspath(f)
        format = "glassgrad" if isinstance(path, str) and path.endswith(".safetensors") else "torch"
    if format == "torch":
        from ._pt_writer import write_torch_zip
        if hasattr(f, "write"):
            write_torch_zip(obj, f, protocol=pickle_protocol)
        else:
            stem = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
            atomic_write(f, lambda fh: write_torch_zip(obj, fh, stem, pickle_protocol))
        return
    if format not in ("glassgrad", "safetensors"):
        raise ValueError(f"glassgrad.save: unknown format {format!r} (torch, or glassgrad / safetensors)")
    s = _Saver()
    doc = {"version": _VERSION, "root": s.encode(obj)}
    located = {key: loc for key, _, loc in s.table.storages() if loc != "cpu"}
    if located:
        doc["locations"] = located
    structure = json.dumps(doc, separators=(",", ":"), allow_nan=False)
    from ._tensor import _make
    # safetensors has no complex128: such a storage is written as its float64 (real, imag) pairs
    tensors = {key: _make(own.reshape(-1).view(np.float64) if own.dtype == np.complex128 else own.reshape(-1))
               for key, own, _ in s.table.storages()}
    if skipping_data():                 # skip_data: the file's layout, zeros where the bytes go
        tensors = {key: _make(np.zeros_like(t._data)) for key, t in tensors.items()}
    meta = {_KEY: structure}
    if hasattr(f, "write"):
        f.write(_st.save(tensors, meta))
    else:
        _st.save_file(tensors, f, meta)


# -- load --------------------------------------------------------------------------------------------

def checked_view(own, offset, shape, strides, bad, negative_strides=True):
    """The view of 1-d storage array `own` at element `offset` with element `strides`, after checking all a
    file can get wrong (`bad(message)` makes the error to raise): shape and strides tuples of ints of one
    length, offset an int, sizes and offset >= 0, a shape and strides NumPy can hold, and every element the
    view can address inside the storage.  Negative strides are allowed unless `negative_strides` is False
    (the reach is checked both ways)."""
    from .backend import as_strided
    if not (type(offset) is int and type(shape) is tuple and type(strides) is tuple and len(shape) == len(strides)
            and all(type(v) is int for v in shape + strides)):
        raise bad("malformed tensor size / stride / offset")
    if any(s < 0 for s in shape) or offset < 0:
        raise bad("negative size or offset")
    if not negative_strides and any(s < 0 for s in strides):
        raise bad("negative tensor stride")
    _st.numpy_shape(shape, own.itemsize, bad)
    if any(abs(s) * own.itemsize >= 2 ** 63 for s in strides):
        raise bad(f"a tensor with strides {list(strides)} is too large for NumPy")
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
    return as_strided(base, shape, [s * own.itemsize for s in strides])


def requires_grad(flag, dtype, bad):
    """A loaded tensor's requires_grad `flag`, checked: a bool, and True only for a floating point dtype."""
    if type(flag) is not bool:
        raise bad(f"requires_grad must be a bool, not {type(flag).__name__}")
    if flag and dtype.kind not in "fVc":
        raise bad(f"a {dtype} tensor cannot require gradients (only floating point tensors can)")
    return flag


SAME_HASH = 16      # keys of one dict sharing one hash: more than any real checkpoint has


def set_key(d, counts, key, value, bad):
    """d[key] = value for a dict being loaded; returns whether `key` is new to d.  `counts` (hash -> number of
    d's keys with it) refuses more than SAME_HASH keys with one hash: a dict of keys that all hash alike takes
    quadratic time to build (60k ints k * (2**61 - 1): half a minute).  No real checkpoint comes near: str hashes are
    salted per process, ints below 2**61 - 1 (an optimizer's parameter ids) hash to themselves, and a float
    shares its hash with few other numbers -- the limit binds only on keys chosen to collide."""
    try:
        h = hash(key)
    except TypeError:
        raise bad("unhashable dict key") from None
    new = key not in d
    if new:
        n = counts[h] = counts.get(h, 0) + 1
        if n > SAME_HASH:
            raise bad(f"more than {SAME_HASH} keys with one hash in one dict (keys chosen to make loading slow)")
    d[key] = value
    return new


_NO_CUDA = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
            "If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.")


def _restore(array, location):
    """Host storage `array` moved to the device a location tag ('cpu', 'cuda', 'cuda:1') names."""
    import re
    from . import backend
    from ._device import device
    if location == "cpu" and not custom_packages():
        return array
    m = re.fullmatch(r"cuda(?::(\d{1,9}))?", location) if isinstance(location, str) else None
    if m is None and isinstance(location, str) and not location.startswith("cuda"):
        return restore_registered(array, location, LocationError)   # register_package's deserializers
    if m is None:
        raise LocationError("don't know how to restore data location of torch.storage.UntypedStorage "
                           f"(tagged with {location})")
    if not backend.cuda_available():
        raise LocationError(_NO_CUDA)
    index, count = int(m.group(1) or 0), backend.device_count()
    if index >= count:
        raise LocationError(f"Attempting to deserialize object on CUDA device {index} but "
                           f"torch.cuda.device_count() is {count}. Please use torch.load with map_location "
                           "to map your storages to an existing device.")
    return backend.to_device(array, device("cuda", index))


class Placement:
    """torch.load's `map_location`, applied to each loaded storage once -- so tensors that view one storage
    still share one storage wherever it lands.  `map_location` is None (each storage goes back where it
    was saved), a device or device string (everything goes there), a dict from saved location to location
    ({'cuda:1': 'cuda:0'}), or a callable(storage, location) returning the storage placed, or None for the
    default.  The storage handed to the callable is a flat tensor on the CPU; ``.cuda()``, ``.to()`` and
    ``.cpu()`` on it work as on torch's storages."""

    def __init__(self, map_location=None):
        from ._device import device
        if isinstance(map_location, bytes):
            map_location = map_location.decode()
        if isinstance(map_location, device):
            map_location = str(map_location)
        if not (map_location is None or isinstance(map_location, (str, dict)) or callable(map_location)):
            raise TypeError("map_location should be a device, a string, a dict or a callable, "
                            f"not {type(map_location).__name__}")
        self.map = map_location

    def __call__(self, array, location):
        ml = self.map
        if ml is None:
            return _restore(array, location)
        if isinstance(ml, str):
            return _restore(array, ml)
        if isinstance(ml, dict):
            return _restore(array, ml.get(location, location))
        from ._tensor import Tensor, _make
        out = ml(_make(array), location)
        if out is None:
            return _restore(array, location)
        if not (isinstance(out, Tensor) and out.dtype == _make(array).dtype and tuple(out.shape) == array.shape):
            raise TypeError("map_location must return the storage it was given (a flat tensor of the same "
                            f"dtype and size, placed on a device) or None, not {type(out).__name__}")
        return out._data


def _bad(msg):
    return CheckpointError(f"glassgrad.load: {msg}")


def build_sparse_coo(indices, values, size, coalesced, bad):
    """The sparse COO tensor of a checkpoint's parts, checked as torch's check_invariants does, a claimed
    coalesced flag verified (sorted, no duplicates); `bad(msg)` makes the error."""
    from ._tensor import Tensor
    from ._sparse_coo import flat_index
    from .ops.sparse import sparse_coo_tensor
    if not (isinstance(indices, Tensor) and isinstance(values, Tensor)) or str(indices.dtype) != "torch.int64" \
            or indices.dim() != 2 or values.dim() < 1:
        raise bad("a sparse tensor needs int64 indices (sparse_dim, nnz) and values (nnz, ...)")
    try:
        t = sparse_coo_tensor(indices, values, size, check_invariants=True, is_coalesced=coalesced)
    except RuntimeError as e:
        raise bad(f"invalid sparse tensor: {e}") from None
    c = t._data
    if coalesced and c.nnz > 1 and not (np.diff(flat_index(c.indices, c.shape[:c.sparse_dim])) > 0).all():
        raise bad("a sparse tensor marked coalesced has unsorted or duplicate indices")
    return t


class _Loader:
    def __init__(self, storages, locations, place):
        self.storages, self.locations, self.place = storages, locations, place
        self.placed = {}

    def storage(self, key):
        own = self.placed.get(key)
        if own is None:
            own = self.storages.get(key)
            if own is None:
                raise _bad(f"tensor refers to a missing storage {key!r}")
            own = self.placed[key] = self.place(own, self.locations.get(key, "cpu"))
        return own

    def tensor(self, d):
        from ._tensor import _make
        from .nn.parameter import Parameter
        key = d["$tensor"]
        if not isinstance(key, str):
            raise _bad(f"a tensor's storage key must be a string, not {type(key).__name__}")
        own = self.storage(key)
        if d.get("dtype") == "complex128" and own.dtype == np.float64 and own.ndim == 1 and own.size % 2 == 0:
            own = own.view(np.complex128)       # written as float64 pairs (safetensors has no complex128)
        if d.get("dtype") != str(own.dtype):
            raise _bad(f"tensor dtype does not match its storage ({own.dtype})")
        shape, strides = d.get("shape"), d.get("strides")
        if not (isinstance(shape, list) and isinstance(strides, list)):
            raise _bad("malformed tensor entry: shape and strides must be lists")
        t = _make(checked_view(own, d.get("offset"), tuple(shape), tuple(strides), _bad))
        rg = requires_grad(d.get("requires_grad", False), own.dtype, _bad)
        if self._flag(d, "parameter"):
            return Parameter(t, requires_grad=rg)
        return t.requires_grad_(True) if rg else t

    def sparse(self, x):
        """A sparse COO tensor: its parts checked as torch's check_invariants does, and a claimed coalesced
        flag verified (sorted, no duplicates)."""
        parts, size = self._list(x["$sparse_coo"]), x.get("size")
        if len(parts) != 2 or not (isinstance(size, list) and all(type(s) is int and s >= 0 for s in size)):
            raise _bad("malformed sparse tensor entry")
        indices, values = (self.decode(p) for p in parts)
        t = build_sparse_coo(indices, values, size, self._flag(x, "coalesced"), _bad)
        return t.requires_grad_(True) if requires_grad(x.get("requires_grad", False), values._data.dtype, _bad) \
            else t

    def decode(self, x):
        if x is None or isinstance(x, (bool, str, int, float)):
            return x
        if isinstance(x, list):
            return [self.decode(v) for v in x]
        if not isinstance(x, dict):
            raise _bad(f"unexpected {type(x).__name__}")
        if "$tensor" in x:
            return self.tensor(x)
        if "$sparse_coo" in x:
            return self.sparse(x)
        if "$tuple" in x:
            return tuple(self.decode(v) for v in self._list(x["$tuple"]))
        if "$float" in x:
            if x["$float"] not in ("nan", "inf", "-inf"):
                raise _bad("bad float (only nan, inf, -inf are spelled out)")
            return float(x["$float"])
        if "$dict" in x:
            ordered = self._flag(x, "ordered")
            out, counts = OrderedDict() if ordered else {}, {}
            for pair in self._list(x["$dict"]):
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise _bad("dict entries must be [key, value] pairs")
                k = self.decode(pair[0])
                if not set_key(out, counts, k, self.decode(pair[1]), _bad):
                    raise _bad(f"key {reprlib.repr(k)} twice in one dict")
            if "_metadata" in x:
                if not ordered:
                    raise _bad("_metadata on a dict that is not ordered (a state_dict is an OrderedDict)")
                out._metadata = self.decode(x["_metadata"])
            return out
        raise _bad(f"unknown entry {reprlib.repr(sorted(x)[:3])}")

    @staticmethod
    def _flag(x, name):
        v = x.get(name, False)
        if type(v) is not bool:
            raise _bad(f"{name} must be a bool, not {type(v).__name__}")
        return v

    @staticmethod
    def _list(v):
        if not isinstance(v, list):
            raise _bad("expected a list")
        return v


_PICKLE_ARGS = {"encoding", "errors", "fix_imports"}


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load what glassgrad.save or torch.save wrote, from a path or a binary file object, as torch.load.
    Safe by default (``weights_only=True``, or None without a `pickle_module`): tensors, state_dicts and plain
    data through glassgrad's restricted reader, which imports and calls nothing outside its table and the
    allow-list of add_safe_globals / safe_globals.  Only ``weights_only=False`` unpickles torch's format
    with Python's pickle -- which can run any code the file names; do it only for files you trust.
    `map_location` is torch.load's (see Placement); `mmap=True` maps the file's tensors copy-on-write instead
    of reading them (a path only, not the legacy torch format -- as in torch)."""
    import os
    import warnings
    from . import _pt_reader
    extra = set(pickle_load_args) - _PICKLE_ARGS
    if extra:
        raise TypeError(f"load() got an unexpected keyword argument {sorted(extra)[0]!r}")
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.")
    full = None if weights_only else pickle_load_args
    place = Placement(map_location)
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if hasattr(f, "read"):
        data = f.read()
        if _pt_reader.is_torch_zip(data[:4]):
            return _pt_reader.load_torch_zip(io.BytesIO(data), place, full=full)
        if _pt_reader.is_torch_legacy(data[:4]):
            return _pt_reader.load_torch_legacy(data, place)
        tensors, meta = _container(_st.read_bytes, data)
    else:
        with open(f, "rb") as fh:
            head = fh.read(4)
            if _pt_reader.is_torch_legacy(head):
                if mmap:
                    raise RuntimeError(f"mmap can only be used with files saved with `torch.save({os.fspath(f)}, "
                                       "_use_new_zipfile_serialization=True), please torch.save your checkpoint "
                                       "with this option in order to use mmap.")
                fh.seek(0)
                return _pt_reader.load_torch_legacy(fh.read(), place)
        if _pt_reader.is_torch_zip(head):
            return _pt_reader.load_torch_zip(f, place, mmap=bool(mmap), full=full)
        tensors, meta = _container(_st.read_file, f, mmap=mmap_mode() if mmap else False)
    return _finish(tensors, meta or {}, place)


def get_unsafe_globals_in_checkpoint(f):
    """The "module.name" of every global in a torch.save archive (`f`: path or binary file) that a
    weights_only load would refuse -- read statically from its data.pkl, as torch's (nothing is run)."""
    import pickletools
    import zipfile
    from ._pt_objects import user_allowed
    from ._pt_pickle import _ALLOWED
    allowed = {f"{m}.{n}".replace("__builtin__.", "builtins.") for m, n in _ALLOWED} | set(user_allowed())
    with zipfile.ZipFile(f) as z:
        pkl = [n for n in z.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pkl) != 1:
            raise _bad("archive has no single <name>/data.pkl")
        data = z.read(pkl[0])
    found, strings = [], []
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            name = arg.replace(" ", ".").replace("__builtin__.", "builtins.")
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            name = f"{strings[-2]}.{strings[-1]}"
        else:
            if isinstance(arg, str):
                strings.append(arg)
            continue
        if name not in allowed and name not in found:
            found.append(name)
    return found


def _container(read, *args, **kwargs):
    """read(...) of the safetensors file glassgrad's format is, its errors raised as glassgrad.load's."""
    try:
        return read(*args, **kwargs)
    except CheckpointError:
        raise
    except _st.SafetensorError as e:
        raise _bad(str(e)) from None


def _finish(tensors, meta, place):
    if _KEY not in meta:
        raise _bad("not a glassgrad checkpoint (no structure in the safetensors metadata)")
    doc = _st.json_loads(meta[_KEY].encode("utf-8", "surrogatepass"), lambda msg: _bad(f"structure: {msg}"))
    if not isinstance(doc, dict) or doc.get("version") != _VERSION or "root" not in doc:
        raise _bad("unsupported structure version")
    locations = doc.get("locations", {})
    if not (isinstance(locations, dict) and all(isinstance(v, str) for v in locations.values())):
        raise _bad("malformed storage locations")
    try:
        return _Loader({k: t._data for k, t in tensors.items()}, locations, place).decode(doc["root"])
    except RecursionError:
        raise _bad("structure nested too deeply") from None
