"""Writing PyTorch's zip checkpoint format (what ``torch.load(weights_only=True)`` reads) without torch.

The pickle is emitted opcode by opcode (protocol 2, as torch.save) for exactly what _pt_reader.py
accepts back: dicts (OrderedDict with a state_dict's ``_metadata``), lists, tuples, strings, numbers,
bools, None, tensors through ``torch._utils._rebuild_tensor_v2`` over persistent storage ids, parameters
through ``_rebuild_parameter``.  Each distinct storage is one uncompressed archive entry; views of one
storage keep sharing it.
"""
import struct
import zipfile
from collections import OrderedDict

import numpy as np

_STORAGE_OF = {np.dtype(np.float32): "FloatStorage", np.dtype(np.float64): "DoubleStorage",
               np.dtype(np.float16): "HalfStorage", np.dtype(np.int64): "LongStorage",
               np.dtype(np.int32): "IntStorage", np.dtype(np.int16): "ShortStorage",
               np.dtype(np.int8): "CharStorage", np.dtype(np.uint8): "ByteStorage",
               np.dtype(np.bool_): "BoolStorage", np.dtype(np.complex64): "ComplexFloatStorage",
               np.dtype(np.complex128): "ComplexDoubleStorage"}


_V3_DTYPES = ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
              "float8_e8m0fnu")


class _Emitter:
    def __init__(self):
        self.out = [b"\x80\x02"]
        from .serialization import StorageTable
        self.table = StorageTable()

    def w(self, b):
        self.out.append(b)

    def global_(self, module, name):
        self.w(b"c" + module.encode() + b"\n" + name.encode() + b"\n")

    def ordered_dict_empty(self):
        self.global_("collections", "OrderedDict")
        self.w(b")R")

    def emit(self, obj):
        from ._tensor import Tensor
        if obj is None:
            self.w(b"N")
        elif obj is True:
            self.w(b"\x88")
        elif obj is False:
            self.w(b"\x89")
        elif isinstance(obj, int):
            if 0 <= obj < 256:
                self.w(b"K" + bytes([obj]))
            elif -2 ** 31 <= obj < 2 ** 31:
                self.w(b"J" + struct.pack("<i", obj))
            else:
                n = (obj.bit_length() + 8) // 8
                self.w(b"\x8a" + bytes([n]) + obj.to_bytes(n, "little", signed=True))
        elif isinstance(obj, float):
            self.w(b"G" + struct.pack(">d", obj))
        elif isinstance(obj, str):
            b = obj.encode("utf-8", "surrogatepass")
            self.w(b"X" + struct.pack("<I", len(b)) + b)
        elif isinstance(obj, Tensor):
            if obj.is_sparse_csr:
                raise TypeError("glassgrad.save cannot store a sparse CSR tensor (convert it with to_sparse())")
            if obj.is_sparse:
                self.sparse(obj)
            else:
                self.tensor(obj)
        elif isinstance(obj, tuple) and type(obj).__name__ == "Size" and type(obj).__module__ == "glassgrad._tensor":
            self.global_("torch", "Size")            # torch.Size((2, 3)), as torch pickles it
            self.emit((tuple(obj),))
            self.w(b"R")
        elif isinstance(obj, tuple):
            if not obj:
                self.w(b")")
                return
            self.w(b"(")
            for v in obj:
                self.emit(v)
            self.w(b"t")
        elif isinstance(obj, list):
            self.w(b"]")
            if obj:
                self.w(b"(")
                for v in obj:
                    self.emit(v)
                self.w(b"e")
        elif isinstance(obj, dict):
            if isinstance(obj, OrderedDict):
                self.ordered_dict_empty()
            else:
                self.w(b"}")
            if obj:
                self.w(b"(")
                for k, v in obj.items():
                    self.emit(k)
                    self.emit(v)
                self.w(b"u")
            meta = getattr(obj, "_metadata", None)
            if isinstance(obj, OrderedDict) and meta is not None:
                self.w(b"}")
                self.emit("_metadata")
                self.emit(meta)
                self.w(b"sb")
        elif isinstance(obj, (np.integer, np.floating, np.bool_)):
            self.emit(obj.item())
        elif type(obj).__name__ == "dtype" and type(obj).__module__ == "glassgrad._dtype":
            self.global_("torch", obj.name)          # a dtype value (torch pickles it as the global torch.<name>)
        else:
            raise _NotPlain(type(obj).__name__)

    def sparse(self, t):
        """A sparse COO tensor as torch pickles it: _rebuild_sparse_tensor(layout, (indices, values, size,
        coalesced))."""
        from ._tensor import _make
        c = t._data
        self.global_("torch._utils", "_rebuild_sparse_tensor")
        self.global_("torch.serialization", "_get_layout")
        self.emit(("torch.sparse_coo",))
        self.w(b"R(")
        self.emit(_make(c.indices))
        self.emit(_make(c.values))
        self.global_("torch", "Size")
        self.emit((tuple(int(n) for n in c.shape),))
        self.w(b"R")
        self.emit(bool(c.coalesced))
        self.w(b"t\x86R")

    def tensor(self, t):
        from .nn.parameter import Parameter
        pid, v3, off, shape, strides = storage_id(self.table, t)
        if isinstance(t, Parameter):
            self.global_("torch._utils", "_rebuild_parameter")
            self.w(b"(")
        self.global_("torch._utils", "_rebuild_tensor_v3" if v3 else "_rebuild_tensor_v2")
        self.w(b"((")
        self.emit("storage")
        if v3:
            self.global_("torch.storage", "UntypedStorage")
        else:
            self.global_("torch", pid[1].name)
        for v in pid[2:]:
            self.emit(v)
        self.w(b"tQ")
        self.emit(off)
        self.emit(shape)
        self.emit(strides)
        self.emit(bool(t._rg) and not isinstance(t, Parameter))
        self.ordered_dict_empty()
        if v3:
            self.global_("torch", t.dtype.name)
        self.w(b"tR")
        if isinstance(t, Parameter):
            self.emit(bool(t._rg))
            self.ordered_dict_empty()
            self.w(b"tR")


class _NotPlain(Exception):
    """The object holds something only a pickle can express (a module, any class instance)."""


def storage_id(table, t):
    """(persistent id, v3?, offset, shape, strides) of tensor `t`, its storage registered in `table`.  The id is
    ('storage', storage type (a _pt_objects._Global), key, location, numel) as torch.save writes it."""
    from ._pt_objects import _Global
    if t.dtype.name == "bfloat16":
        _STORAGE_OF.setdefault(t.dtype.np, "BFloat16Storage")     # ml_dtypes' dtype, known once it is used
    v3 = t.dtype.np not in _STORAGE_OF      # uint16/32/64, float8: torch's v3 form on an untyped storage
    if v3 and t.dtype.name not in _V3_DTYPES:
        raise TypeError(f"glassgrad.save(format='torch'): dtype {t.dtype.np} has no torch storage")
    key, dtype, shape, strides, off = table.view(t)
    own, location = table.storage(key)
    stype = _Global("torch.storage", "UntypedStorage") if v3 else _Global("torch", _STORAGE_OF[dtype])
    pid = ("storage", stype, key, location, int(own.nbytes if v3 else own.size))
    return pid, v3, int(off), tuple(int(s) for s in shape), tuple(int(s) for s in strides)


def write_torch_zip(obj, f, name="archive", protocol=2):
    """Write `obj` as a torch.save zip archive to the binary file object `f`: state_dicts and plain data by
    the emitter above (what torch.load(weights_only=True) reads), anything else by Python's pickler with
    torch's conventions (_pt_objects.py: what torch.load(weights_only=False) reads)."""
    from ._serialization_extras import skipping_data
    e = _Emitter()
    try:
        e.emit(obj)
        e.w(b".")
        pkl, table = b"".join(e.out), e.table
    except _NotPlain:
        from ._pt_objects import pickle_object
        from .serialization import StorageTable
        table = StorageTable()
        pkl = pickle_object(obj, table, protocol)      # pickle's own errors, as torch.save raises them
    from ._serialization_extras import get_crc32_options
    crc = get_crc32_options()
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as z:
        z.writestr(_entry(f"{name}/data.pkl", crc), pkl)
        z.writestr(_entry(f"{name}/byteorder", crc), "little")
        for key, own, _ in table.storages():
            little = own.astype(own.dtype.newbyteorder("<"), copy=False).reshape(-1)
            if skipping_data():                 # serialization.skip_data: zeros where the bytes go, no CRC
                little = np.zeros(little.shape, little.dtype)
            with z.open(_entry(f"{name}/data/{key}", crc and not skipping_data()), "w",
                        force_zip64=little.nbytes >= 2 ** 31) as w:
                w.write(memoryview(little.view(np.uint8)))           # straight from the array, no bytes copy
        z.writestr(_entry(f"{name}/version", crc), "3\n")


class _NoCRC(zipfile.ZipInfo):
    """An entry whose CRC is written as 0 (not recorded), as torch.save writes under set_crc32_options(False)."""
    CRC = property(lambda self: 0, lambda self, value: None)


def _entry(name, crc):
    """The ZipInfo zipfile makes for a name (this moment, mode 0o600), recording the CRC or not."""
    import time
    info = (zipfile.ZipInfo if crc else _NoCRC)(name, date_time=time.localtime(time.time())[:6])
    info.external_attr = 0o600 << 16
    return info
