"""torch.testing: `assert_close` (torch's default tolerances per dtype, its checks of type, shape, device, dtype,
layout and optionally stride, its messages; sequences and mappings compared item by item), the deprecated
`assert_allclose`, and `make_tensor` (torch's sampling: the same seed gives torch's tensor)."""
import collections.abc
import functools
import math
import numbers
import warnings

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..ops import creation as _cr, random as _rnd, compare as _cmp

__all__ = ["assert_close", "assert_allclose", "make_tensor"]

# torch's default (rtol, atol) per dtype; exact for the others
_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
        "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def _tolerances(*dtypes):
    rt, at = zip(*(_TOL.get(d.name, (0.0, 0.0)) for d in dtypes))
    return max(rt), max(at)


class _Mismatch(AssertionError):
    pass


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """torch.testing.assert_close: raise AssertionError (torch's message, or `msg`) unless close."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    opts = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                check_layout=check_layout, check_stride=check_stride)
    try:
        _compare(actual, expected, (), opts)
    except _Mismatch as e:
        if msg is not None:
            raise AssertionError(msg(str(e)) if callable(msg) else msg) from None
        raise AssertionError(str(e)) from None


def _compare(a, e, path, opts):
    if isinstance(a, (Tensor, np.ndarray)) and isinstance(e, (Tensor, np.ndarray)):
        return _tensors(_as_tensor(a), _as_tensor(e), path, opts)
    if _is_number(a) and _is_number(e):
        return _numbers(a, e, path, opts)
    if isinstance(a, collections.abc.Mapping) and isinstance(e, collections.abc.Mapping):
        if set(a) != set(e):
            raise _Mismatch(_at(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                                f"{sorted(set(e) - set(a))}\nExtra keys in the actual mapping: "
                                f"{sorted(set(a) - set(e))}", path))
        for k in e:
            _compare(a[k], e[k], path + (k,), opts)
        return
    if _is_seq(a) and _is_seq(e):
        if len(a) != len(e):
            raise _Mismatch(_at(f"The length of the sequences mismatch: {len(a)} != {len(e)}", path))
        for i, (x, y) in enumerate(zip(a, e)):
            _compare(x, y, path + (i,), opts)
        return
    if a is None and e is None:
        return
    raise TypeError(f"No comparison pair was able to handle inputs of type {_type_repr(a)} and {_type_repr(e)}.")


def _type_repr(x):
    return "<class 'torch.Tensor'>" if isinstance(x, Tensor) else str(type(x))


def _is_seq(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _is_number(x):
    return isinstance(x, (numbers.Number, np.number, bool)) and not isinstance(x, np.ndarray)


def _as_tensor(x):
    return x if isinstance(x, Tensor) else _cr.from_numpy(np.asarray(x))


def _at(text, path):
    return text if not path else text + f"\n\nThe failure occurred for item {''.join(f'[{p!r}]' for p in path)}"


def _attr(name, a, e, path):
    raise _Mismatch(_at(f"The values for attribute '{name}' do not match: {a} != {e}.", path))


def _tensors(a, e, path, opts):
    if tuple(a.shape) != tuple(e.shape):
        _attr("shape", a.shape, e.shape, path)
    if opts["check_device"] and a.device != e.device:
        _attr("device", a.device, e.device, path)
    if opts["check_layout"] and a.layout != e.layout:
        _attr("layout", a.layout, e.layout, path)
    if opts["check_dtype"] and a.dtype != e.dtype:
        _attr("dtype", a.dtype, e.dtype, path)
    if opts["check_stride"] and a.stride() != e.stride():
        _attr("stride()", a.stride(), e.stride(), path)
    rtol, atol = (opts["rtol"], opts["atol"]) if opts["rtol"] is not None else _tolerances(a.dtype, e.dtype)
    ad, ed = a.detach().to("cpu"), e.detach().to("cpu")
    if ad.dtype != ed.dtype:
        dt = _dtype.promote_types(ad.dtype, ed.dtype)
        ad, ed = ad.to(dt), ed.to(dt)
    if ad.layout != ed.layout or getattr(ad, "is_sparse", False):
        ad, ed = ad.to_dense(), ed.to_dense()
    if ad.dtype is _dtype.bool:
        ok = (ad == ed)
    else:
        ok = _cmp.isclose(ad, ed, rtol=rtol, atol=atol, equal_nan=opts["equal_nan"])
    okd = ok._data
    if okd.all():
        return
    exact = rtol == 0 and atol == 0
    if ad.dim() == 0:
        raise _Mismatch(_at(_scalar_message(ad.item(), ed.item(), rtol, atol, exact), path))
    raise _Mismatch(_at(_tensor_message(ad, ed, okd, rtol, atol, exact), path))


def _diffs(ad, ed):
    """torch's abs and relative differences: in the compared dtype (ints: abs int, relative float32)."""
    x, y = ad._data, ed._data
    if x.dtype == np.bool_:
        x, y = x.astype(np.int64), y.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_d = np.abs(x - y) if x.dtype.kind != "u" else np.abs(x.astype(np.int64) - y.astype(np.int64))
        if abs_d.dtype.kind in "iu":
            rel = abs_d.astype(np.float32) / np.abs(y).astype(np.float32)
        else:
            rel = abs_d / np.abs(y)
    return abs_d, rel


def _tensor_message(ad, ed, okd, rtol, atol, exact):
    abs_d, rel = _diffs(ad, ed)
    bad = ~okd
    n, total = int(bad.sum()), okd.size
    flat_bad = bad.reshape(-1)

    def greatest(d):
        v = np.where(flat_bad, d.reshape(-1), -np.inf if d.dtype.kind == "f" else np.iinfo(np.int64).min)
        if d.dtype.kind == "f" and np.isnan(d.reshape(-1)[flat_bad]).any():
            i = int(np.flatnonzero(flat_bad & np.isnan(d.reshape(-1)))[0])
        else:
            i = int(np.argmax(v))
        idx = tuple(int(k) for k in np.unravel_index(i, okd.shape))
        val = d.reshape(-1)[i].item()
        return val, idx
    (av, ai), (rv, ri) = greatest(abs_d), greatest(rel)
    head = "Tensor-likes are not equal!" if exact else "Tensor-likes are not close!"
    up_a = "" if exact else f" (up to {atol} allowed)"
    up_r = "" if exact else f" (up to {rtol} allowed)"
    return (f"{head}\n\nMismatched elements: {n} / {total} ({n / total:.1%})\n"
            f"Greatest absolute difference: {av} at index {ai}{up_a}\n"
            f"Greatest relative difference: {rv} at index {ri}{up_r}")


def _scalar_message(a, e, rtol, atol, exact):
    with np.errstate(all="ignore"):
        d = abs(a - e)
        r = d / abs(e) if e != 0 else (math.inf if d else math.nan)
    head = "Scalars are not equal!" if exact else "Scalars are not close!"
    up_a = "" if exact else f" (up to {atol} allowed)"
    up_r = "" if exact else f" (up to {rtol} allowed)"
    return (f"{head}\n\nExpected {e} but got {a}.\nAbsolute difference: {d}{up_a}\n"
            f"Relative difference: {r}{up_r}")


def _numbers(a, e, path, opts):
    if opts["check_dtype"] and type(a) is not type(e):
        raise _Mismatch(_at(f"The (d)types do not match: {type(a)} != {type(e)}.", path))
    if isinstance(a, (complex, float)) or isinstance(e, (complex, float)):
        rtol, atol = (opts["rtol"], opts["atol"]) if opts["rtol"] is not None else _TOL["float64"] if not (
            isinstance(a, complex) or isinstance(e, complex)) else _TOL["complex128"]
    else:
        rtol, atol = (opts["rtol"], opts["atol"]) if opts["rtol"] is not None else (0.0, 0.0)
    if a == e or (opts["equal_nan"] and a != a and e != e):
        return
    if abs(a - e) <= atol + rtol * abs(e):
        return
    raise _Mismatch(_at(_scalar_message(a, e, rtol, atol, rtol == 0 and atol == 0), path))


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The deprecated torch.testing.assert_allclose: assert_close with equal_nan=True and no dtype check."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
                  "Please use `torch.testing.assert_close()` instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = _cr.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _cr.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances(actual.dtype, expected.dtype)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)


_INTEGRAL = ("bool", "uint8", "int8", "int16", "int32", "int64")
_FLOATING = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """torch.testing.make_tensor: values drawn uniformly from [low, high) as torch draws them."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and dtype.name in _INTEGRAL:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    noncontiguous = noncontiguous and functools.reduce(lambda x, y: x * y, shape, 1) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype.name == "bool":
        lo, hi = _low_high(low, high, 0, 2, 0, 2, dtype)
        result = _rnd.randint(lo, hi, shape, dtype=dtype, device=device)
    elif dtype.name in _INTEGRAL:
        info = _dtype.iinfo(dtype)
        lo, hi = _low_high(low, high, info.min, info.max + (1 if dtype.name != "int64" else 0), -9, 10, dtype)
        result = _rnd.randint(lo, hi, shape, dtype=dtype, device=device)
    elif dtype.name in _FLOATING:
        fi = _dtype.finfo(dtype)
        lo, hi = _low_high(low, high, fi.min, fi.max, -9, 9, dtype)
        result = _cr.empty(shape, dtype=dtype, device=device)
        target = result.view_as_real() if dtype.is_complex else result
        if hi - lo >= _dtype.finfo(target.dtype).max:
            target.uniform_(lo / 2, hi / 2).mul_(2)
        else:
            target.uniform_(lo, hi)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). To request "
                        "support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    if exclude_zero:
        result[result == 0] = 1 if dtype.name in _INTEGRAL else _dtype.finfo(dtype).tiny
    if dtype.name in _FLOATING:
        result.requires_grad = requires_grad
    return result


def _low_high(low, high, lowest, highest, default_low, default_high, dtype):
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.name in _FLOATING:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is deprecated "
                      "since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.", FutureWarning,
                      stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype.name in _INTEGRAL:
        return math.ceil(low), math.ceil(high)
    return low, high
