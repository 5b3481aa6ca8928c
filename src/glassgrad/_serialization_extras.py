"""torch.serialization's settings and helpers beyond save/load (re-exported by serialization.py).

The settings are read by the readers and writers: the fallback byte order of a torch archive without a
``byteorder`` record (``set_default_load_endianness``, _pt_reader.py), the mmap flags of ``load(mmap=True)``
(``set_default_mmap_options``: MAP_PRIVATE maps copy-on-write, MAP_SHARED writes through to the file) and
``skip_data`` (save writes zeros where storage bytes go; load of a torch archive reads no storage bytes, so its
tensors hold zeros -- torch leaves them uninitialized).  ``register_package`` keeps torch's registry of
(priority, tagger, deserializer): ``location_tag`` and ``default_restore_location`` walk it in priority order,
``load`` hands a storage saved at a location other than cpu/cuda to it, and ``save`` asks it for each storage's
tag once a package other than the built-in ones is registered.
"""
import contextlib
import enum
import functools
import importlib
import mmap as _mmap
import re
import shutil
import tempfile
import threading
import warnings

__all__ = ["SourceChangeWarning", "mkdtemp", "LoadEndianness", "get_crc32_options", "set_crc32_options", "get_default_load_endianness",
           "set_default_load_endianness", "get_default_mmap_options", "set_default_mmap_options", "skip_data",
           "register_package", "check_module_version_greater_or_equal", "validate_cuda_device",
           "validate_hpu_device", "location_tag", "default_restore_location", "normalize_storage_type",
           "storage_to_tensor_type", "StorageType"]


class SourceChangeWarning(Warning):
    """Warned by torch when a pickled module's source changed since it was saved."""


@contextlib.contextmanager
def mkdtemp():
    """A temporary directory's path for the `with` block; the directory and its contents are removed after."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)


class LoadEndianness(enum.Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


_config = {"endianness": None, "mmap_flags": _mmap.MAP_PRIVATE, "crc32": True}


def get_crc32_options():
    """Whether save computes and writes each archive entry's CRC-32 (default True)."""
    return _config["crc32"]


def set_crc32_options(compute_crc32):
    """Whether save computes and writes each entry's CRC-32: without it the CRCs read 0, which zip tools may
    call corrupt; load reads such archives (as torch.load does)."""
    _config["crc32"] = compute_crc32


def get_default_load_endianness():
    """The byte order assumed for a torch archive that records none (None: native)."""
    return _config["endianness"]


def set_default_load_endianness(endianness):
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _config["endianness"] = endianness


def fallback_byteorder():
    """'<' or '>': the byte order of a torch archive without a byteorder record (None: little, as torch)."""
    import sys
    e = _config["endianness"]
    if e is LoadEndianness.NATIVE:
        return "<" if sys.byteorder == "little" else ">"
    return ">" if e is LoadEndianness.BIG else "<"


def get_default_mmap_options():
    """The mmap flags of load(mmap=True): mmap.MAP_PRIVATE (default) or mmap.MAP_SHARED."""
    return _config["mmap_flags"]


class set_default_mmap_options:
    """Set the mmap flags of load(mmap=True) to `flags` (mmap.MAP_PRIVATE or mmap.MAP_SHARED); as a context
    manager, the previous flags come back on exit."""

    def __init__(self, flags):
        if flags != _mmap.MAP_PRIVATE and flags != _mmap.MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, "
                             f"expected mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = _config["mmap_flags"]
        _config["mmap_flags"] = flags

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        _config["mmap_flags"] = self.prev


def mmap_mode():
    """np.memmap's mode for the current mmap flags: 'c' (copy-on-write) or 'r+' (shared with the file)."""
    return "r+" if _config["mmap_flags"] == _mmap.MAP_SHARED else "c"


class _Local(threading.local):
    skip_data = False
    materialize_fake_tensors = False


_tls = _Local()


def skipping_data():
    return _tls.skip_data


class skip_data:
    """Within the block, save writes zeros in place of storage bytes (the file keeps its layout, the bytes can be
    filled in later) and load of a torch archive reads no storage bytes.  `materialize_fake_tensors` is accepted
    as torch's (glassgrad has no fake tensors)."""

    def __init__(self, materialize_fake_tensors=False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._old = (_tls.skip_data, _tls.materialize_fake_tensors)
        _tls.skip_data, _tls.materialize_fake_tensors = True, self.materialize_fake_tensors

    def __exit__(self, type, value, tb):
        _tls.skip_data, _tls.materialize_fake_tensors = self._old


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True):
    """Whether `module.__version__` ('x.y.z', each field cast to the type of the matching field of
    `req_version_tuple`) is >= the tuple; a version that cannot be compared raises RuntimeError, or with
    error_if_malformed=False warns and counts as met."""
    try:
        fields = module.__version__.split(".")
        have = tuple(type(req)(fields[i]) for i, req in enumerate(req_version_tuple))
        return have >= req_version_tuple
    except Exception as e:
        msg = (f"'{module.__name__}' module version string is malformed '{module.__version__}' and cannot be "
               f"compared with tuple {str(req_version_tuple)}")
        if error_if_malformed:
            raise RuntimeError(msg) from e
        warnings.warn(msg + ", but continuing assuming that requirement is met", stacklevel=2)
        return True


# -- the location registry ----------------------------------------------------------------------------

_registry = []
_builtin = set()


def register_package(priority, tagger, deserializer):
    """Register `tagger(storage) -> location or None` (asked at save) and `deserializer(storage, location) ->
    storage or None` (asked at load), tried in ascending `priority` with the others until one answers."""
    _registry.append((priority, tagger, deserializer))
    _registry.sort(key=lambda e: e[0])


def custom_packages():
    """Whether a package beyond the built-in ones is registered."""
    return any(id(e) not in _builtin for e in _registry)


def location_tag(storage):
    """The location (as saved) of `storage` (or a tensor): the first registered tagger's answer."""
    for _, tagger, _ in _registry:
        location = tagger(storage)
        if location:
            return location
    raise RuntimeError("don't know how to determine data location of " + _typename(storage))


def default_restore_location(storage, location):
    """`storage` restored to `location` by the first registered deserializer that answers; RuntimeError when
    none does."""
    for _, _, fn in _registry:
        result = fn(storage, location)
        if result is not None:
            return result
    raise RuntimeError(f"don't know how to restore data location of {_typename(storage)} (tagged with {location})")


def _typename(obj):
    from .storage import UntypedStorage, TypedStorage
    from ._tensor import Tensor
    if isinstance(obj, (UntypedStorage, TypedStorage)):
        return f"torch.storage.{type(obj).__name__}"
    if isinstance(obj, Tensor):
        return obj.type()
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _validate_device(location, backend_name):
    from . import _device
    module = None
    if backend_name == "cuda":              # (glassgrad has no hpu / xpu / mtia device module)
        from . import cuda as module
    if module is None:
        raise RuntimeError(f"The {backend_name.upper()} device module is not registered. If you are running on a "
                           "CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map "
                           "your storages to the CPU.")
    dev = _device.device(location) if isinstance(location, str) else _device.device(backend_name, location)
    if dev.type != backend_name:
        raise ValueError(f"Expected a {backend_name} device, but got: {dev}")
    index = dev.index or 0
    if not module.is_available():
        raise RuntimeError(f"Attempting to deserialize object on a {backend_name.upper()} device but "
                           f"torch.{backend_name}.is_available() is False. If you are running on a CPU-only "
                           "machine, please use torch.load with map_location=torch.device('cpu') to map your "
                           "storages to the CPU.")
    count = module.device_count()
    if index >= count:
        raise RuntimeError(f"Attempting to deserialize object on {backend_name.upper()} device {index} but "
                           f"torch.{backend_name}.device_count() is {count}. Please use torch.load with "
                           "map_location to map your storages to an existing device.")
    return _device.device(backend_name, index)


def validate_cuda_device(location):
    """The index of the CUDA device `location` names, checked to exist (torch.load's errors otherwise)."""
    return _validate_device(location, "cuda").index


def validate_hpu_device(location):
    return _validate_device(location, "hpu").index


def _cpu_tag(obj):
    if obj.device.type == "cpu":
        return "cpu"


def _cpu_deserialize(obj, location):
    if location == "cpu":
        return obj


def _backend_tag(backend_name, obj):
    if obj.device.type == backend_name:
        return backend_name if obj.device.index is None else f"{backend_name}:{obj.device.index}"


def _deserialize(backend_name, obj, location):
    if location == backend_name or re.match(f"{backend_name}(:|[0-9]+)", location):
        device = _validate_device(location, backend_name)
        return obj.to(device=device)


def _mps_tag(obj):
    if obj.device.type == "mps":
        return "mps"


def _mps_deserialize(obj, location):
    if location.startswith("mps"):
        raise RuntimeError("torch.UntypedStorage(): Storage device not recognized: mps")


for _entry in [(10, _cpu_tag, _cpu_deserialize),
               (20, functools.partial(_backend_tag, "cuda"), functools.partial(_deserialize, "cuda")),
               (21, _mps_tag, _mps_deserialize)] + [
        (p, functools.partial(_backend_tag, b), functools.partial(_deserialize, b))
        for p, b in [(24, "hpu"), (25, "xpu"), (26, "mtia")]]:
    register_package(*_entry)
    _builtin.add(id(_registry[-1]))


def restore_registered(array, location, error):
    """Host storage `array` restored to `location` through the registry (load's path for a location other than
    cpu/cuda): each deserializer gets an UntypedStorage of its bytes and may return a storage or a tensor.  The
    built-in deserializers' refusals, and no answer at all, raise `error` (load's LocationError)."""
    import numpy as np
    from .storage import UntypedStorage, TypedStorage
    from ._tensor import Tensor
    storage, out = UntypedStorage._wrap(array.reshape(-1).view(np.uint8)), None
    for entry in list(_registry):
        try:
            out = entry[2](storage, location)
        except RuntimeError as e:
            if id(entry) not in _builtin:
                raise
            raise error(str(e)) from None
        if out is not None:
            break
    if out is None:
        raise error(f"don't know how to restore data location of torch.storage.UntypedStorage (tagged with "
                    f"{location})")
    if isinstance(out, Tensor):
        out = out.untyped_storage()
    if isinstance(out, TypedStorage):
        out = out.untyped()
    if not (isinstance(out, UntypedStorage) and out.nbytes() == array.nbytes):
        raise TypeError(f"the deserializer registered for location {location!r} must return a storage of "
                        f"{array.nbytes} bytes, not {type(out).__name__}")
    return out._bytes.view(array.dtype)


def normalize_storage_type(storage_type):
    from . import storage
    return getattr(storage, storage_type.__name__)


def storage_to_tensor_type(storage):
    storage_type = type(storage)
    module = importlib.import_module(storage_type.__module__)
    return getattr(module, storage_type.__name__.replace("Storage", "Tensor"))


_STORAGE_DTYPES = {"DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
                   "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16", "CharStorage": "int8",
                   "ByteStorage": "uint8", "BoolStorage": "bool", "BFloat16Storage": "bfloat16",
                   "ComplexDoubleStorage": "complex128", "ComplexFloatStorage": "complex64"}


class StorageType:
    """A pickled storage type by name ('FloatStorage', ...), with its dtype."""

    def __init__(self, name):
        from . import _dtype
        if name not in _STORAGE_DTYPES:
            raise KeyError(f'pickle storage type "{name}" is not recognized')
        self._dtype = getattr(_dtype, _STORAGE_DTYPES[name])

    @property
    def dtype(self):
        return self._dtype

    def __str__(self):
        return f"StorageType(dtype={self.dtype})"
