"""Python data -> arrays, as torch.tensor reads it: PyTorch's dtype inference (bools, ints, floats, NumPy
scalars inside lists), its errors for ragged or mixed data and for values a dtype cannot hold.

Used by ops/creation.py (tensor, as_tensor, legacy constructors) and ops/_core.py (as_tensor_arg: a list
operand of a binary op); it imports only leaves, so both can use it without an import cycle.
"""
import numpy as np

from .. import _dtype, backend
from .._tensor import Tensor


def _ragged_error(data):
    def length_at(seq, depth, want):
        if depth == len(want):
            if isinstance(seq, (list, tuple)):
                raise TypeError(f"'{type(seq).__name__}' object cannot be interpreted as an integer")
            return
        if not isinstance(seq, (list, tuple)):
            raise TypeError("not a sequence")
        if len(seq) != want[depth]:
            raise ValueError(f"expected sequence of length {want[depth]} at dim {depth} (got {len(seq)})")
        for s in seq:
            length_at(s, depth + 1, want)
    want, cur = [], data
    while isinstance(cur, (list, tuple)):
        want.append(len(cur))
        if not cur:
            break
        cur = cur[0]
    length_at(data, 0, want)
    raise ValueError("could not infer a tensor shape from the given data")


def _check_leaves(data, dtype):
    """torch's errors for the elements of tensor(data) NumPy could not make numbers of: strings, None,
    arbitrary objects, ints beyond int64."""
    for x in (data if isinstance(data, list) else [data]):
        if isinstance(x, list):
            _check_leaves(x, dtype)
        elif isinstance(x, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
        elif isinstance(x, int) and not -2 ** 63 <= x < 2 ** 63 and (dtype is None or not dtype.is_floating_point):
            raise ValueError("Overflow when unpacking long long")
        elif not isinstance(x, (int, float, complex, np.generic, np.ndarray)):
            if dtype is not None:
                raise TypeError(f"must be real number, not {type(x).__name__}")
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _check_fits(arr, dtype):
    """torch's check that Python numbers fit an integer dtype (unsigned types take negatives down to -max)."""
    if dtype.np.kind not in "iu" or arr.size == 0 or arr.dtype.kind not in "iufV":
        return
    info = np.iinfo(dtype.np)
    lo = -info.max if info.min == 0 else info.min
    if arr.dtype.kind in "fV" and not np.isfinite(arr).all() or arr.max() > info.max or arr.min() < lo:
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")


def _uint64_from_ints(data):
    """torch.tensor(ints, dtype=torch.uint64): the whole range [0, 2**64), with torch's OverflowErrors beyond it;
    None when data holds anything but Python ints."""
    flat, todo = [], [data]
    while todo:
        d = todo.pop()
        if isinstance(d, (list, tuple)):
            todo.extend(d)
        elif isinstance(d, int) and not isinstance(d, bool):
            flat.append(d)
        else:
            return None
    if any(v < 0 for v in flat):
        raise OverflowError("can't convert negative int to unsigned")
    if any(v >= 2 ** 64 for v in flat):
        raise OverflowError("int too big to convert")
    try:
        return np.array(data, dtype=np.uint64)
    except ValueError:
        return None


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        return data._data if data._data.ndim else data._data.item()
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(d) for d in data]
    return data


def _sequence_dtype_with_numpy_scalars(data):
    """PyTorch's dtype for a nested list holding NumPy scalars: each NumPy scalar keeps its dtype,
    Python numbers count as int64 / the default float / bool, and all are promoted together.
    None when the list holds no NumPy scalar (the common case, left to NumPy's inference)."""
    found = []

    def walk(d):
        for x in d:
            if isinstance(x, list):
                walk(x)
            else:
                found.append(x)
    walk(data)
    if not any(isinstance(x, np.generic) for x in found):
        return None
    out = None
    for x in found:
        if isinstance(x, np.generic):
            dt = _dtype.from_numpy_dtype(x.dtype)
        elif isinstance(x, bool):
            dt = _dtype.bool
        elif isinstance(x, int):
            dt = _dtype.int64
        elif isinstance(x, float):
            dt = _dtype._default[0]
        else:
            return None
        out = dt if out is None else _dtype.promote_types(out, dt)
    return out


def _array_from_data(data, dtype):
    """An ndarray for torch.tensor(data): PyTorch's dtype inference."""
    if isinstance(data, Tensor):
        arr = backend.to_host(data._data)
        return arr if dtype is None else _dtype.cast(arr, dtype.np)
    if isinstance(data, np.ndarray):
        _dtype.from_numpy_dtype(data.dtype, user=True)
        return data if dtype is None else _dtype.cast(data, dtype.np)
    if isinstance(data, np.generic):
        arr = np.asarray(data)
        return arr if dtype is None else _dtype.cast(arr, dtype.np)
    scalar_dt = None
    if isinstance(data, (list, tuple)):
        data = _unwrap_nested(data)
        if dtype is None:
            scalar_dt = _sequence_dtype_with_numpy_scalars(data)
    if dtype is _dtype.uint64 and scalar_dt is None:
        arr = _uint64_from_ints(data)
        if arr is not None:
            return arr
    try:
        arr = np.array(data)
    except ValueError:
        _check_leaves(data, dtype)
        _ragged_error(data)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    if arr.dtype == object or arr.dtype.kind in "US":
        _check_leaves(data, dtype)
        if arr.dtype == object and dtype is not None and dtype.is_floating_point:
            arr = np.array(data, dtype=np.float64)       # ints beyond int64 for a floating dtype
        if arr.dtype == object:
            _ragged_error(data)
    if scalar_dt is not None:
        dtype = scalar_dt
    if arr.dtype == np.uint64 and (dtype is None or not dtype.is_floating_point):
        raise ValueError("Overflow when unpacking long long")
    if dtype is not None:
        if arr.dtype.kind == "c" and dtype.np.kind != "c":     # Python complex numbers for a real dtype
            raise TypeError("must be real number, not complex" if dtype.is_floating_point else
                            "'complex' object cannot be interpreted as an integer")
        _check_fits(arr, dtype)
        return _dtype.cast(arr, dtype.np)
    k = arr.dtype.kind
    if k == "f":
        return arr.astype(_dtype._default[0].np)
    if k in "iu":
        return arr.astype(np.int64)
    if k == "b":
        return arr
    if k == "c":
        return arr.astype(_dtype._default[0].to_complex().np)
    return arr.astype(_dtype._default[0].np)
