"""Searching (no gradients): argwhere (nonzero), unravel_index (torch's Python composite), searchsorted and
bucketize (torch's binary search, whose comparisons put NaN past every number), isin.

ops: argwhere nonzero_static unravel_index searchsorted bucketize isin
"""
import numpy as np

from .. import _args, _dtype
from ._core import make, Tensor, as_array
from .indexing import nonzero

__all__ = ["argwhere", "nonzero_static", "unravel_index", "searchsorted", "bucketize", "isin"]


def argwhere(input):
    return nonzero(input)


def nonzero_static(input, *, size, fill_value=-1):
    size = _args.int_arg(size, "nonzero_static", "size")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    fill_value = _args.int_arg(fill_value, "nonzero_static", "fill_value")
    idx = np.argwhere(input._data).astype(np.int64)[:size]
    out = np.full((size, input._data.ndim), fill_value, np.int64, like=input._data)
    out[:idx.shape[0]] = idx
    return make(out)


def unravel_index(indices, shape):
    d = indices._data
    if d.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {_dtype._FROM_NP[d.dtype]}")
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    elif isinstance(shape, (tuple, list)) or hasattr(shape, "__iter__"):
        shape = tuple(shape)
        for s in shape:
            if not isinstance(s, (int, np.integer)):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(s)}")
        shape = tuple(int(s) for s in shape)
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    coefs = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        coefs[i] = coefs[i + 1] * shape[i + 1]
    if not shape:
        coefs = [1]
    q = indices.unsqueeze(-1).floor_divide(make(np.asarray(coefs, np.int64, like=d)))
    return (q % make(np.asarray(shape, np.int64, like=d))).unbind(-1)


# -- searchsorted / bucketize -------------------------------------------------------------------------------------
def _bsearch(bd, v, right, sorter):
    """torch's cus_lower_bound / cus_upper_bound on every value: bd (..., n) against v (..., m) (or bd 1-d)."""
    n = bd.shape[-1]
    lo = np.zeros(v.shape, np.int64, like=bd)
    hi = np.full(v.shape, n, np.int64, like=bd)
    if n == 0:
        return lo
    flat = bd.ndim == 1
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = lo + ((hi - lo) >> 1)
        idx = np.minimum(mid, n - 1)
        if sorter is not None:
            idx = sorter[idx] if flat else np.take_along_axis(sorter, idx, -1)
        mv = bd[idx] if flat else np.take_along_axis(bd, idx, -1)
        with np.errstate(invalid="ignore"):
            go = ~(mv > v) if right else ~(mv >= v)
        lo = np.where(active & go, mid + 1, lo)
        hi = np.where(active & ~go, mid, hi)


def _common(fn, a, b):
    dt = _dtype.promote_types(_dtype._FROM_NP[a.dtype], _dtype._FROM_NP[b.dtype]).np
    if dt == np.bool_:
        raise NotImplementedError(f"\"{fn}\" not implemented for 'Bool'")
    return a.astype(dt, copy=False), b.astype(dt, copy=False)


def _value_array(v, like):
    if isinstance(v, Tensor):
        return v._data, False
    return np.asarray(_args.number_arg(v, "searchsorted", "self", 2), like=like), True


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None):
    if sorter is not None:
        _args.tensor_arg(sorter, "searchsorted", "sorter")
    if side is not None:
        if not isinstance(side, str):
            raise TypeError(f"searchsorted(): argument 'side' must be str, not {_args.type_name(side)}")
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    bd = sorted_sequence._data
    v, scalar = _value_array(input, bd)
    if bd.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if bd.ndim > 1 and (scalar or v.ndim != bd.ndim or v.shape[:-1] != bd.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got boundaries "
                           f"tensor {list(bd.shape)} and input value tensor {list(v.shape)}")
    s = None
    if sorter is not None:
        s = sorter._data
        if s.dtype != np.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{_dtype.c_name(s.dtype)}")
        if s.shape != bd.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(bd.shape)}and got sorter tensor {list(s.shape)}")
        if s.size and (s.min() < 0 or s.max() >= bd.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    bd, v = _common("searchsorted_out_cpu", bd, v)
    res = _bsearch(bd, v, right, s)
    return make(res.astype(np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    _args.tensor_arg(boundaries, "bucketize", "boundaries", 2)
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# -- isin -----------------------------------------------------------------------------------------------------
def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    _args.bool_arg(assume_unique, "isin", "assume_unique")
    _args.bool_arg(invert, "isin", "invert")
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got "
                        f"({_args.type_name(elements)}, {_args.type_name(test_elements)}), but expected one of:")
    for v, name, pos in ((elements, "elements", 1), (test_elements, "test_elements", 2)):
        if not isinstance(v, Tensor):
            _args.number_arg(v, "isin", name, pos)
    like = elements._data if isinstance(elements, Tensor) else test_elements._data
    e = elements._data if isinstance(elements, Tensor) else np.asarray(elements, like=like)
    t = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements, like=like)
    if isinstance(elements, Tensor) and isinstance(test_elements, Tensor):
        dt = _dtype.promote_types(_dtype._FROM_NP[e.dtype], _dtype._FROM_NP[t.dtype]).np
    else:       # a number and a tensor: torch's promotion of a wrapped number, except that torch's sorting
        # algorithm (a number against 10 or more test elements) concatenates the number as a float64 tensor
        tensor, number = (elements, test_elements) if isinstance(elements, Tensor) else (test_elements, elements)
        dt = _dtype.result_type(tensor, number).np
        if tensor is test_elements and t.size >= 10 and isinstance(number, float) and dt.kind in "fV":
            dt = np.dtype(np.float64)
    if dt == np.bool_:
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    r = np.isin(e.astype(dt), t.astype(dt).reshape(-1), invert=invert)
    return make(as_array(r, bool))
