"""One comparison for checkpoint tests: objects loaded by glassgrad and by torch (either side either library)
must agree in container types and order, state_dict _metadata, and, for tensors, class (Parameter or not),
dtype, shape, strides, requires_grad and values."""
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
