"""The restricted pickle machine that reads torch.save's ``data.pkl`` (for ``_pt_reader.py``).

It knows only what a state_dict needs: containers, numbers, strings, the globals in ``_ALLOWED``
(OrderedDict, the tensor and parameter rebuild functions, the storage types) and persistent storage ids.
Any other global is refused with an error naming it (UnsafeCheckpointError) -- nothing is imported,
nothing is called that is not in the table.  Containers nest at most MAX_DEPTH deep, and a dict's keys
may not all hash alike (serialization.set_key).

_Machine.run reads one opcode at a time and hands it to the handler of its kind: push_value (strings,
numbers, None, booleans), container (MARK, tuples, lists, dicts), memo_op, object_op (globals, REDUCE,
BUILD, storages).
"""
import pickle
import struct
from collections import OrderedDict

import numpy as np

from . import _dtype
from .safetensors import MAX_DEPTH
from .serialization import CheckpointError, checked_view, requires_grad, set_key

__all__ = ["UnsafeCheckpointError"]


class UnsafeCheckpointError(CheckpointError, pickle.UnpicklingError):
    """The pickle asks for something a state_dict never needs (a global outside the allowed table and the
    user's allow-list) -- a pickle.UnpicklingError, as torch.load(weights_only=True) raises."""


def _bad(msg):
    return CheckpointError(f"torch checkpoint: {msg}")


class _StorageType:
    def __init__(self, name, dtype):
        self.name, self._dtype = name, None if dtype is None else np.dtype(dtype)

    @property
    def dtype(self):
        """The NumPy dtype; BFloat16Storage's is ml_dtypes' bfloat16, resolved when a checkpoint uses it (an
        optional package: without it, the error names pip install glassgrad[bf16])."""
        if self._dtype is None:
            from ._dtype import bfloat16
            self._dtype = bfloat16.np
        return self._dtype


_STORAGES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
             "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16, "CharStorage": np.int8,
             "ByteStorage": np.uint8, "BoolStorage": np.bool_, "BFloat16Storage": None,
             "ComplexFloatStorage": np.complex64, "ComplexDoubleStorage": np.complex128}


class _Storage:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad_, backward_hooks, metadata=None):
    from ._tensor import _make
    if not isinstance(storage, _Storage):
        raise _bad("tensor rebuilt from something that is not a storage")
    a = checked_view(storage.array, storage_offset, size, stride, _bad, negative_strides=False)
    t = _make(a)
    return t.requires_grad_(True) if requires_grad(requires_grad_, a.dtype, _bad) else t


def _rebuild_parameter(data, requires_grad_, backward_hooks):
    from ._tensor import Tensor
    from .nn.parameter import Parameter
    if not isinstance(data, Tensor):
        raise _bad("parameter rebuilt from something that is not a tensor")
    return Parameter(data, requires_grad=requires_grad(requires_grad_, data._data.dtype, _bad))


_V3_DTYPES = ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
              "float8_e8m0fnu", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
              "uint8", "bool")


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad_, backward_hooks, dtype, metadata=None):
    """torch's rebuild of a tensor of `dtype` on an untyped (byte) storage: offset and strides count elements."""
    from ._tensor import _make
    if not isinstance(storage, _Storage) or storage.array.dtype != np.uint8:
        raise _bad("tensor rebuilt from something that is not an untyped storage")
    if not isinstance(dtype, _dtype.dtype):
        raise _bad("tensor rebuilt with something that is not a dtype")
    npdt = dtype.np
    b = storage.array
    if b.size % npdt.itemsize:
        raise _bad(f"untyped storage of {b.size} bytes does not hold whole {dtype.name} elements")
    a = checked_view(b.view(npdt), storage_offset, size, stride, _bad, negative_strides=False)
    t = _make(a)
    return t.requires_grad_(True) if requires_grad(requires_grad_, a.dtype, _bad) else t


_ALLOWED = {("collections", "OrderedDict"): OrderedDict,
            ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
            ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
            ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
            ("torch.storage", "UntypedStorage"): _StorageType("UntypedStorage", np.uint8)}
_ALLOWED.update({("torch", n): _StorageType(n, d) for n, d in _STORAGES.items()})
_ALLOWED.update({("torch", n): getattr(_dtype, n) for n in _V3_DTYPES})     # the dtype objects themselves


def _size(*args):
    from ._tensor import Size
    return Size(*args)


def _device(*args):
    from ._device import device
    return device(*args)


def _get_layout(name):
    from ._layout import sparse_coo
    if name != "torch.sparse_coo":
        raise _bad(f"tensors of layout {name} are not supported (glassgrad reads sparse COO)")
    return sparse_coo


def _rebuild_sparse_tensor(layout, data):
    """torch's rebuild of a sparse COO tensor: (indices, values, size[, coalesced]), checked as on load."""
    from ._layout import sparse_coo
    from .serialization import build_sparse_coo
    if layout is not sparse_coo or not isinstance(data, tuple) or len(data) not in (3, 4):
        raise _bad("malformed sparse tensor")
    indices, values, size = data[:3]
    coalesced = data[3] if len(data) == 4 else None
    if not (isinstance(size, tuple) and all(type(n) is int and n >= 0 for n in size)) \
            or coalesced not in (None, True, False):
        raise _bad("malformed sparse tensor")
    return build_sparse_coo(indices, values, list(size), coalesced, _bad)


_ALLOWED.update({("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
                 ("torch.serialization", "_get_layout"): _get_layout})
_ALLOWED.update({("builtins", "set"): set, ("__builtin__", "set"): set, ("torch", "Size"): _size,
                 ("torch", "device"): _device})
_CALLABLE = (OrderedDict, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter, set, _size, _device,
             _rebuild_sparse_tensor, _get_layout)
_CONTAINERS = frozenset((tuple, list, dict, OrderedDict))
# torch's own tensor types that glassgrad has no dtype for: a plain error, not a refusal as unsafe
_NO_DTYPE = {("torch", "QInt8Storage"): "quantized",
             ("torch", "QUInt8Storage"): "quantized", ("torch", "QInt32Storage"): "quantized",
             ("torch", "QUInt4x2Storage"): "quantized", ("torch", "QUInt2x4Storage"): "quantized",
             ("torch._utils", "_rebuild_qtensor"): "quantized", ("torch", "qint8"): "quantized",
             ("torch", "quint8"): "quantized", ("torch", "qint32"): "quantized",
             ("torch", "complex32"): "complex32", ("torch", "ComplexHalfStorage"): "complex32"}


class _Machine:
    """The subset of pickle protocol 2-5 that torch.save's data.pkl uses, with no imports and no calls
    outside _ALLOWED."""

    def __init__(self, data, storage, pos=0, dry=False):
        self.data, self.pos, self.storage, self.dry = data, pos, storage, dry
        self.stack, self.marks, self.memo = [], [], {}
        self.depth, self.counts = {}, {}    # id(container) -> how deep it nests / (dicts) its keys' hash counts
        from ._pt_objects import user_allowed
        self.user = user_allowed()          # add_safe_globals / safe_globals: "module.name" -> object
        self.user_objs = {id(v) for v in self.user.values()}

    def read(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise _bad("data.pkl is truncated")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def line(self):
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise _bad("data.pkl is truncated")
        s = self.data[self.pos:end].decode("utf-8", "strict")
        self.pos = end + 1
        return s

    def pop_mark(self):
        if not self.marks:
            raise _bad("pickle MARK missing")
        k = self.marks.pop()
        items = self.stack[k:]
        del self.stack[k:]
        return items

    def pop(self):
        if not self.stack:
            raise _bad("pickle stack underflow")
        return self.stack.pop()

    def global_(self, module, name):
        obj = _ALLOWED.get((module, name))
        if obj is None and (module, name) in _NO_DTYPE:
            raise CheckpointError(f"torch checkpoint: it holds {_NO_DTYPE[module, name]} tensors ({module}.{name}), "
                                  "which glassgrad does not have (its dtypes: float16/32/64, bfloat16, float8, complex64/128, "
                                  "int8/16/32/64, uint8/16/32/64, bool); convert them in torch first, e.g. with .float()")
        if obj is None:
            obj = self.user.get(f"{module}.{name}")
        if obj is None:
            full = f"{module}.{name}"
            raise UnsafeCheckpointError(
                f"torch checkpoint: refusing global {full} (not needed to load tensors or state_dicts). Weights only "
                "load failed: load(..., weights_only=False) will likely succeed, but it can run arbitrary code -- do "
                "it only if you trust the source of the checkpoint. Or allowlist this global with "
                f"`torch.serialization.add_safe_globals([{full}])` or the `torch.serialization.safe_globals("
                f"[{full}])` context manager if you trust this class/function.")
        return obj

    def made(self, obj, items=()):
        """Push container `obj`, new, holding `items`."""
        self.depth[id(obj)] = self.nest(items)
        if isinstance(obj, dict):
            self.counts[id(obj)] = {}
        self.stack.append(obj)

    def grew(self, obj, items):
        """Container `obj` now also holds `items`."""
        d = self.nest(items)
        if d > self.depth[id(obj)]:
            self.depth[id(obj)] = d

    def nest(self, items):
        """How deep a container holding `items` nests: at most MAX_DEPTH.  Exact for tuples, which are built
        whole, and so for everything Python hashes recursively (a deep tuple key crashes the interpreter when
        hashed); lists and dicts filled after they were nested are counted as of then, and Python's recursion
        limit guards what recurses into them."""
        d, depth = 0, self.depth
        for x in items:
            if type(x) in _CONTAINERS:
                e = depth.get(id(x), 1)
                if e > d:
                    d = e
        if d >= MAX_DEPTH:
            raise _bad(f"containers nested deeper than {MAX_DEPTH} levels")
        return d + 1

    def setitems(self, target, items):
        if not isinstance(target, dict) or len(items) % 2:
            raise _bad("SETITEM(S) on something that is not a dict")
        counts = self.counts[id(target)]
        for i in range(0, len(items), 2):
            set_key(target, counts, items[i], items[i + 1], _bad)
        self.grew(target, items)

    def run(self):
        """Run the pickle program to its STOP and return the one object it built."""
        while True:
            op = self.read(1)
            if op in _VALUE_OPS:
                self.push_value(op)
            elif op in _CONTAINER_OPS:
                self.container(op)
            elif op in _MEMO_OPS:
                self.memo_op(op)
            elif op in _OBJECT_OPS:
                self.object_op(op)
            elif op == b"\x80":                                 # PROTO
                self.read(1)
            elif op == b"\x95":                                 # FRAME
                self.read(8)
            elif op == b".":                                    # STOP
                st = self.stack
                if len(st) != 1:
                    raise _bad("pickle ended with a malformed stack")
                return st[0]
            else:
                raise _bad(f"unsupported pickle opcode {op!r}")

    def push_value(self, op):
        """Strings, numbers, None and booleans."""
        u = struct.unpack
        st = self.stack
        if op == b"X":
            st.append(self.read(u("<I", self.read(4))[0]).decode("utf-8", "strict"))
        elif op == b"\x8c":                                     # SHORT_BINUNICODE
            st.append(self.read(self.read(1)[0]).decode("utf-8", "strict"))
        elif op == b"J":
            st.append(u("<i", self.read(4))[0])
        elif op == b"K":
            st.append(self.read(1)[0])
        elif op == b"M":
            st.append(u("<H", self.read(2))[0])
        elif op == b"\x8a":                                     # LONG1
            st.append(int.from_bytes(self.read(self.read(1)[0]), "little", signed=True))
        elif op == b"G":
            st.append(u(">d", self.read(8))[0])
        elif op == b"N":
            st.append(None)
        elif op == b"\x88":
            st.append(True)
        else:                                                   # b"\x89"
            st.append(False)

    def container(self, op):
        """Building tuples, lists and dicts (and the MARK they start from), with their nesting depth."""
        st = self.stack
        if op == b"}":
            self.made({})
        elif op == b"]":
            self.made([])
        elif op == b")":
            self.made(())
        elif op == b"(":
            self.marks.append(len(st))
        elif op == b"t":
            items = self.pop_mark()
            self.made(tuple(items), items)
        elif op in (b"\x85", b"\x86", b"\x87"):                 # TUPLE1..3
            n = op[0] - 0x84
            if len(st) < n:
                raise _bad("pickle stack underflow")
            items = tuple(st[-n:])
            del st[-n:]
            self.made(items, items)
        elif op == b"l":
            items = self.pop_mark()
            self.made(items, items)
        elif op in (b"a", b"e"):                                # APPEND, APPENDS
            items = [self.pop()] if op == b"a" else self.pop_mark()
            if not st or not isinstance(st[-1], list):
                raise _bad("APPEND(S) on something that is not a list")
            st[-1].extend(items)
            self.grew(st[-1], items)
        elif op == b"d":
            items = self.pop_mark()
            self.made({})
            self.setitems(st[-1], items)
        elif op == b"s":
            v, k = self.pop(), self.pop()
            self.setitems(st[-1] if st else None, [k, v])
        else:                                                   # b"u"
            items = self.pop_mark()
            self.setitems(st[-1] if st else None, items)

    def memo_op(self, op):
        """BINPUT, LONG_BINPUT, MEMOIZE store the top of the stack; BINGET, LONG_BINGET push it again."""
        u = struct.unpack
        st = self.stack
        if op in (b"q", b"r", b"\x94"):
            key = self.read(1)[0] if op == b"q" else u("<I", self.read(4))[0] if op == b"r" else len(self.memo)
            if not st:
                raise _bad("pickle stack underflow")
            self.memo[key] = st[-1]
        else:                                                   # b"h", b"j"
            key = self.read(1)[0] if op == b"h" else u("<I", self.read(4))[0]
            if key not in self.memo:
                raise _bad("pickle memo key missing")
            st.append(self.memo[key])

    def object_op(self, op):
        """Globals (only those in _ALLOWED or the user's allow-list), REDUCE (only _CALLABLE or user-allowed),
        NEWOBJ and BUILD (a state_dict's _metadata, or objects of user-allowed classes) and storages (BINPERSID)."""
        st = self.stack
        if op == b"c":                                          # GLOBAL
            st.append(self.global_(self.line(), self.line()))
        elif op == b"\x93":                                     # STACK_GLOBAL
            name, module = self.pop(), self.pop()
            if not (isinstance(module, str) and isinstance(name, str)):
                raise _bad("STACK_GLOBAL needs two strings")
            st.append(self.global_(module, name))
        elif op == b"R":                                        # REDUCE
            self.reduce()
        elif op == b"b":                                        # BUILD
            self.build(self.pop())
        elif op == b"\x81":                                     # NEWOBJ: only a user-allowed class
            args, cls = self.pop(), self.pop()
            if id(cls) not in self.user_objs or not isinstance(cls, type) or not isinstance(args, tuple):
                raise UnsafeCheckpointError(f"torch checkpoint: can only create objects of classes allowlisted with "
                                            f"add_safe_globals, not {cls!r}")
            st.append(cls.__new__(cls, *args))
        else:                                                   # b"Q": BINPERSID
            st.append(self.storage(self.pop()))

    def build(self, state):
        """BUILD: a state_dict's _metadata, or the state of an object of a user-allowed class (as torch's
        weights-only unpickler: __setstate__, else the instance dict and slots)."""
        st = self.stack
        if not st:
            raise _bad("pickle stack underflow")
        inst = st[-1]
        if type(inst) is OrderedDict and isinstance(state, dict) and set(state) <= {"_metadata"}:
            if "_metadata" in state:
                inst._metadata = state["_metadata"]
        elif id(type(inst)) in self.user_objs and not self.dry:
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
                return
            slots = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
            if state:
                inst.__dict__.update(state)
            for k, v in (slots or {}).items():
                setattr(inst, k, v)
        elif not self.dry:
            raise _bad(f"BUILD on a {type(inst).__name__} (only an OrderedDict's _metadata, or an object of a class "
                       "allowlisted with add_safe_globals)")

    def reduce(self):
        st = self.stack
        args, fn = self.pop(), self.pop()
        if id(fn) in self.user_objs and isinstance(args, tuple):
            st.append(None if self.dry else fn(*args))
            return
        if not (any(fn is f for f in _CALLABLE) and isinstance(args, tuple)):
            raise _bad(f"REDUCE of {type(fn).__name__}")
        if fn is OrderedDict:
            if args:
                raise _bad("OrderedDict built with arguments")
            self.made(OrderedDict())
            return
        if self.dry:                                            # legacy format's first pass: storages only
            st.append(None)
            return
        try:
            st.append(fn(*args))
        except (TypeError, ValueError, RuntimeError) as e:
            raise _bad(f"bad arguments: {e}") from None


# the opcodes each handler of _Unpickler.run takes
_VALUE_OPS = frozenset((b"X", b"\x8c", b"J", b"K", b"M", b"\x8a", b"G", b"N", b"\x88", b"\x89"))
_CONTAINER_OPS = frozenset((b"}", b"]", b")", b"(", b"t", b"\x85", b"\x86", b"\x87", b"l", b"a", b"e", b"d", b"s",
                            b"u"))
_MEMO_OPS = frozenset((b"q", b"r", b"\x94", b"h", b"j"))
_OBJECT_OPS = frozenset((b"c", b"\x93", b"R", b"b", b"Q", b"\x81"))


def _check_pid(pid, n):
    """A persistent id ('storage', storage type, key, location, numel[, view]) of length n."""
    if not (isinstance(pid, tuple) and len(pid) == n and isinstance(pid[0], str) and pid[0] == "storage"
            and isinstance(pid[1], _StorageType) and isinstance(pid[2], str) and isinstance(pid[3], str)
            and type(pid[4]) is int):
        raise _bad("malformed persistent storage id")
    return pid
