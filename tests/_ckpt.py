"""One comparison for checkpoint tests: objects loaded by glassgrad and by torch (either side either library)
must agree in container types and order, state_dict _metadata, and, for tensors, class (Parameter or not),
dtype, shape, strides, requires_grad and values.  Also the building blocks of forged torch pickles and archives."""
import io
import pickle
import warnings
import zipfile

import numpy as np


def _is_tensor(x):
    return type(x).__name__ in ("Tensor", "Parameter")


def assert_same(a, b):
    if _is_tensor(a) or _is_tensor(b):
        assert _is_tensor(a) and _is_tensor(b), (type(a), type(b))
        assert type(a).__name__ == type(b).__name__
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape) and a.stride() == b.stride()
        assert a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    elif isinstance(a, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in a:
            assert_same(a[k], b[k])
        assert getattr(a, "_metadata", None) == getattr(b, "_metadata", None)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        assert a == b and type(a) is type(b)


def error_of(fn):
    """The exception fn() raises (None if it returns): errors are compared between the two libraries."""
    try:
        fn()
    except Exception as e:                   # noqa: BLE001 -- the caller compares type and text
        return e
    return None


class Reduce:
    """An object that pickles as fn(*args): a forged pickle's building block."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


class TorchLike(pickle.Pickler):
    """Pickles like torch.save: tensors as _rebuild_tensor_v2 over persistent storage ids (`storages` maps
    id(marker object) -> the persistent id pickled in its place)."""

    def __init__(self, f, storages):
        super().__init__(f, protocol=2)
        self.storages = storages

    def persistent_id(self, obj):
        return self.storages.get(id(obj))


def zip_bytes(entries):
    """A zip archive of [(name, bytes, compress_type)] entries, duplicate names kept, as bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z, warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # "Duplicate name" is what some callers want
        for name, data, method in entries:
            z.writestr(name, data, compress_type=method)
    return out.getvalue()
