"""torch.UntypedStorage, torch.TypedStorage and the legacy FloatStorage, LongStorage, ...: the memory under a
tensor, shared with it.

An UntypedStorage holds a 1-D uint8 NumPy view of the memory (`_bytes`): `tensor.untyped_storage()` is a view
of the whole array of the tensor's base (the memory every view of it shares), so writes through the storage
show in the tensor and back, and `data_ptr()` is the memory's address.  A TypedStorage is an UntypedStorage
with a dtype (its elements are read and written as that dtype).  `FloatStorage(...)` makes a TypedStorage of
float32 and `isinstance(s, FloatStorage)` asks for its dtype, as torch's legacy classes.
"""
import numpy as np

from . import _dtype

__all__ = ["UntypedStorage", "TypedStorage", "is_storage", "DoubleStorage", "FloatStorage", "HalfStorage",
           "BFloat16Storage", "LongStorage", "IntStorage", "ShortStorage", "CharStorage", "ByteStorage",
           "BoolStorage"]


def _index(i, n):
    if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
        raise TypeError(f"can't index a storage with {type(i).__name__}")
    j = int(i) + n if i < 0 else int(i)
    if not 0 <= j < n:
        raise IndexError(f"index {int(i)} out of range for storage of size {n}")
    return j


def bytes_of(arr):
    """The uint8 view of a dense array's whole memory (the storage of a tensor whose base owns `arr`); for a
    strided NumPy view (a tensor from a checkpoint or a strided array), the nearest dense array it views."""
    while not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        up = arr.base
        if not isinstance(up, np.ndarray):      # as_strided's views hold their array through a DummyArray
            up = getattr(up, "base", None)
        if not isinstance(up, np.ndarray):
            break
        arr = up
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        raise RuntimeError("glassgrad: this tensor's memory is a strided NumPy array, not one dense block, so it "
                           "has no storage to expose; call .contiguous() first")
    return arr.reshape(-1, order="A").view(np.uint8)


class UntypedStorage:
    """Bytes of memory, shared with the tensors that view it."""
    __slots__ = ("_bytes",)
    is_sparse = False
    is_cuda = False

    def __init__(self, *args, device=None):
        if len(args) > 1:
            raise TypeError(f"UntypedStorage(): expected at most 1 argument, got {len(args)}")
        if device is not None and str(device) != "cpu":
            raise RuntimeError("glassgrad: storages live on the cpu")
        a = args[0] if args else 0
        if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
            self._bytes = np.zeros(int(a), np.uint8)
        elif isinstance(a, (list, tuple)):
            self._bytes = np.array(a, dtype=np.int64).astype(np.uint8)
        else:
            raise TypeError(f"UntypedStorage(): invalid data type '{type(a).__name__}'")

    @classmethod
    def _wrap(cls, b):
        s = cls.__new__(cls)
        s._bytes = b
        return s

    device = property(lambda self: _device_cpu())

    def size(self):
        return self._bytes.size

    nbytes = size
    __len__ = size

    def element_size(self):
        return 1

    def data_ptr(self):
        return self._bytes.ctypes.data if self._bytes.size else 0

    def untyped(self):
        return self

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(self._bytes.size)
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is supported")
            return UntypedStorage._wrap(self._bytes[start:max(stop, start)])
        return int(self._bytes[_index(i, self._bytes.size)])

    def __setitem__(self, i, v):
        if isinstance(i, slice):
            self._bytes[i] = v
        else:
            self._bytes[_index(i, self._bytes.size)] = v

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._bytes.tolist()

    def fill_(self, value):
        self._bytes[...] = value
        return self

    def copy_(self, source, non_blocking=None):
        src = source.untyped()._bytes
        if src.size != self._bytes.size:
            raise RuntimeError(f"size mismatch, {self._bytes.size} vs {src.size}")
        self._bytes[...] = src
        return self

    def clone(self):
        return UntypedStorage._wrap(self._bytes.copy())

    def cpu(self):
        return self

    def type(self, dtype=None, non_blocking=False):
        return "torch.storage.UntypedStorage"

    def __repr__(self):
        body = " " + "\n ".join(str(v) for v in self.tolist())
        return f"{body}\n[torch.storage.UntypedStorage(device=cpu) of size {self.size()}]"

    __str__ = __repr__


def _device_cpu():
    from ._device import device
    return device("cpu")


def _np_dtype(dt):
    return dt.np


class TypedStorage:
    """An UntypedStorage read and written as elements of one dtype (torch.TypedStorage, deprecated in torch)."""
    __slots__ = ("_untyped_storage", "dtype")
    is_sparse = False
    is_cuda = False

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None, _internal=False):
        dt = _dtype.get_default_dtype() if dtype is None else dtype
        if wrap_storage is not None:
            if args:
                raise RuntimeError("No positional arguments should be given when using `wrap_storage`")
            self._untyped_storage, self.dtype = wrap_storage.untyped(), dt
            return
        a = args[0] if args else 0
        if len(args) > 1:
            raise TypeError(f"TypedStorage(): expected at most 1 argument, got {len(args)}")
        if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
            arr = np.zeros(int(a), _np_dtype(dt))
        elif isinstance(a, (list, tuple)):
            arr = np.array(a).astype(_np_dtype(dt))
        else:
            raise TypeError(f"new(): invalid data type '{type(a).__name__}'")
        self._untyped_storage, self.dtype = UntypedStorage._wrap(bytes_of(arr)), dt

    def _arr(self):
        b = self._untyped_storage._bytes
        npdt = _np_dtype(self.dtype)
        return b[:b.size - b.size % npdt.itemsize].view(npdt)

    device = property(lambda self: _device_cpu())

    def size(self):
        return self._untyped_storage.size() // self.dtype.itemsize

    __len__ = size

    def nbytes(self):
        return self._untyped_storage.size()

    def element_size(self):
        return self.dtype.itemsize

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def untyped(self):
        return self._untyped_storage

    def _value(self, v):
        return bool(v) if self.dtype is _dtype.bool else (float(v) if self.dtype.is_floating_point else int(v))

    def __getitem__(self, i):
        if isinstance(i, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return self._value(self._arr()[_index(i, self.size())])

    def __setitem__(self, i, v):
        if not isinstance(v, (int, float, bool, np.number, np.bool_)):
            raise TypeError(f"can't assign a {type(v).__name__} to a torch.{self.dtype._legacy}")
        a = self._arr()
        if isinstance(i, slice):
            a[i] = v
        else:
            a[_index(i, self.size())] = v

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return [self._value(v) for v in self._arr().tolist()]

    def fill_(self, value):
        self._arr()[...] = value
        return self

    def copy_(self, source, non_blocking=None):
        self._untyped_storage.copy_(source.untyped())
        return self

    def clone(self):
        return TypedStorage(wrap_storage=self._untyped_storage.clone(), dtype=self.dtype)

    def cpu(self):
        return self

    def pickle_storage_type(self):
        return self.dtype._legacy.replace("Tensor", "Storage")

    def type(self, dtype=None, non_blocking=False):
        return "torch." + self.pickle_storage_type()

    def __repr__(self):
        body = " " + "\n ".join(str(v) for v in self.tolist())
        return f"{body}\n[torch.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size {self.size()}]"

    __str__ = __repr__


class _LegacyStorageMeta(type):
    """FloatStorage(...) makes a float32 TypedStorage; isinstance(s, FloatStorage) checks s's dtype."""

    def __call__(cls, *args, **kwargs):
        if "dtype" in kwargs:
            raise RuntimeError(f"{cls.__name__}.__new__ received an invalid combination of arguments: dtype")
        return TypedStorage(*args, dtype=cls.dtype, **kwargs)

    def __instancecheck__(cls, instance):
        return isinstance(instance, TypedStorage) and instance.dtype is cls.dtype


def _legacy(name, dt):
    return _LegacyStorageMeta(name, (TypedStorage,), {"__slots__": (), "dtype": dt, "__module__": "torch"})


DoubleStorage = _legacy("DoubleStorage", _dtype.float64)
FloatStorage = _legacy("FloatStorage", _dtype.float32)
HalfStorage = _legacy("HalfStorage", _dtype.float16)
BFloat16Storage = _legacy("BFloat16Storage", _dtype.bfloat16)
LongStorage = _legacy("LongStorage", _dtype.int64)
IntStorage = _legacy("IntStorage", _dtype.int32)
ShortStorage = _legacy("ShortStorage", _dtype.int16)
CharStorage = _legacy("CharStorage", _dtype.int8)
ByteStorage = _legacy("ByteStorage", _dtype.uint8)
BoolStorage = _legacy("BoolStorage", _dtype.bool)
_BY_DTYPE = {s.dtype.name: s for s in (DoubleStorage, FloatStorage, HalfStorage, BFloat16Storage, LongStorage,
                                        IntStorage, ShortStorage, CharStorage, ByteStorage, BoolStorage)}


def storage_type_of(dt):
    return _BY_DTYPE[dt.name]


def is_storage(obj):
    return isinstance(obj, (TypedStorage, UntypedStorage))
