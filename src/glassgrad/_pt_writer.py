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
            if obj.is_sparse:
                raise TypeError("glassgrad.save(format='torch') cannot store a sparse tensor (the glassgrad format "
                                "can)")
            self.tensor(obj)
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
            from .serialization import unstorable
            raise unstorable(obj, "glassgrad.save(format='torch')")

    def tensor(self, t):
        from .nn.parameter import Parameter
        if t.dtype.name == "bfloat16":
            _STORAGE_OF.setdefault(t.dtype.np, "BFloat16Storage")     # ml_dtypes' dtype, known once it is used
        v3 = t.dtype.np not in _STORAGE_OF      # uint16/32/64, float8: torch's v3 form on an untyped storage
        if v3 and t.dtype.name not in _V3_DTYPES:
            raise TypeError(f"glassgrad.save(format='torch'): dtype {t.dtype.np} has no torch storage")
        key, dtype, shape, strides, off = self.table.view(t)
        own, location = self.table.storage(key)
        if isinstance(t, Parameter):
            self.global_("torch._utils", "_rebuild_parameter")
            self.w(b"(")
        self.global_("torch._utils", "_rebuild_tensor_v3" if v3 else "_rebuild_tensor_v2")
        self.w(b"((")
        self.emit("storage")
        if v3:
            self.global_("torch.storage", "UntypedStorage")
        else:
            self.global_("torch", _STORAGE_OF[dtype])
        self.emit(key)
        self.emit(location)
        self.emit(int(own.nbytes if v3 else own.size))
        self.w(b"tQ")
        self.emit(int(off))
        self.emit(tuple(int(s) for s in shape))
        self.emit(tuple(int(s) for s in strides))
        self.emit(bool(t._rg) and not isinstance(t, Parameter))
        self.ordered_dict_empty()
        if v3:
            self.global_("torch", t.dtype.name)
        self.w(b"tR")
        if isinstance(t, Parameter):
            self.emit(bool(t._rg))
            self.ordered_dict_empty()
            self.w(b"tR")


def write_torch_zip(obj, f, name="archive"):
    """Write `obj` as a torch.save zip archive to the binary file object `f`."""
    e = _Emitter()
    e.emit(obj)
    e.w(b".")
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{name}/data.pkl", b"".join(e.out))
        z.writestr(f"{name}/byteorder", "little")
        for key, own, _ in e.table.storages():
            little = own.astype(own.dtype.newbyteorder("<"), copy=False).reshape(-1)
            with z.open(f"{name}/data/{key}", "w", force_zip64=little.nbytes >= 2 ** 31) as w:
                w.write(memoryview(little.view(np.uint8)))           # straight from the array, no bytes copy
        z.writestr(f"{name}/version", "3\n")
