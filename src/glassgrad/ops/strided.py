"""as_strided: a view of a tensor's storage with any geometry that stays inside it.

Every view is checked against its storage as torch's setStorage checks it -- lengths, negative strides and
offsets, 64-bit overflow, bytes past the end -- so no input reaches memory outside a tensor's storage.  The
backward works on storage positions, as torch's as_strided_backward: the output's gradient is scattered
onto the storage (summed where the output overlaps itself) and read back at the input's positions
(averaged where the input overlaps itself).
"""
import numpy as np

from .. import backend
from .._tensor import Size
from ._core import make, edge, grad
from .slicing import SliceBackward0

__all__ = ["as_strided"]


class AsStridedBackward0(SliceBackward0):
    __slots__ = ()
    stack_rule = None     # not verified for stacked gradients (explain.attribute calls it per term)


def _int_tuple(v, arg, pos):
    """torch's parse of an int-list argument of as_strided (TypeError naming the offending element)."""
    if isinstance(v, int) and not isinstance(v, bool):
        v = (v,)
    if not isinstance(v, (tuple, list, Size)):
        raise TypeError(f"as_strided(): argument '{arg}' (position {pos}) must be tuple of ints, "
                        f"not {type(v).__name__}")
    out = []
    for i, e in enumerate(v):
        if hasattr(e, "__index__") and not isinstance(e, bool):
            e = e.__index__()
            if not -2 ** 63 <= e < 2 ** 63:
                raise TypeError(f"as_strided(): argument '{arg}' failed to unpack the object at pos {i} with error "
                                f"\"Overflow when unpacking long long\"")
            out.append(e)
        else:
            raise TypeError(f"as_strided(): argument '{arg}' (position {pos}) must be tuple of ints, but found "
                            f"element of type {type(e).__name__} at pos {i}")
    return tuple(out)


def check_strided(size, stride, offset, itemsize, storage_bytes):
    """torch's setStorage checks: a view of `size`/`stride` (elements) at element `offset` must address only
    bytes inside a storage of `storage_bytes`; sizes that overflow 64 bits are refused before any arithmetic
    reaches memory."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(sz < 0 for sz in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    if 0 in size:
        return
    need = (offset + 1 + sum((sz - 1) * st for sz, st in zip(size, stride))) * itemsize
    if need >= 2 ** 64:                     # torch computes the byte count in uint64 with overflow checks
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    if need > storage_bytes:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {need} are out of bounds for storage "
                           f"of size {storage_bytes}")


def _strided_fn(size, stride, off):
    """The view of a flat storage array at element `off` with element strides `stride` (any dtype)."""
    def fn(b):
        flat = b.reshape(-1, order="A")         # memory order: a view for C- and Fortran-ordered storages
        return backend.as_strided(flat[off:], size, tuple(s * flat.itemsize for s in stride))
    return fn


def as_strided(x, size, stride, storage_offset=None):
    """A view of x's storage with any geometry that stays inside it (checked as torch does: no input can
    reach memory outside the storage).  storage_offset=None keeps x's own offset, as torch."""
    size, stride = _int_tuple(size, "size", 1), _int_tuple(stride, "stride", 2)
    if storage_offset is None:
        off = x.storage_offset()
    elif hasattr(storage_offset, "__index__") and not isinstance(storage_offset, bool):
        off = storage_offset.__index__()
    else:
        raise TypeError(f"as_strided(): argument 'storage_offset' (position 3) must be int, not "
                        f"{type(storage_offset).__name__}")
    base = x if x._base is None else x._base
    storage = base._data
    if not (storage.flags.c_contiguous or storage.flags.f_contiguous):
        raise RuntimeError("as_strided: glassgrad supports it on tensors whose storage is one dense block "
                           "(this one views a strided NumPy array); call .contiguous() first")
    isz = x._data.itemsize
    check_strided(size, stride, off, isz, storage.nbytes)
    if storage.dtype != x._data.dtype:             # x views its storage with another dtype
        storage = storage.reshape(-1, order="A").view(x._data.dtype)
        fn = (lambda b, f=_strided_fn(size, stride, off), dt=x._data.dtype: f(b.reshape(-1, order="A").view(dt)))
    else:
        fn = _strided_fn(size, stride, off)
    arr = fn(base._data)
    if x._rg and grad.enabled:
        n = _AsStridedAccum((edge(x),))
        n.in_shape = x._data.shape
        n.args = (storage.size, (x.storage_offset(), x.stride()), (off, size, stride))
        out = make(arr, True, n)
    else:
        out = make(arr)
    out._base = base
    out._vc = base._vc
    out._vbase_fn = base._grad_fn
    out._view_fn = fn
    return out


class _AsStridedAccum(AsStridedBackward0):
    """torch's as_strided backward, on storage positions: the output's gradient is scattered (summed where the
    output overlaps itself) onto the storage, then read back at the input's positions (averaged where the
    input overlaps itself); storage the input does not cover gets nothing."""
    __slots__ = ()

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            raise RuntimeError("double backward through as_strided is not supported by glassgrad")
        n_storage, (in_off, in_stride), (off, size, stride) = self.args
        pos = np.arange(n_storage, dtype=np.int64, like=g)
        out_pos = _strided_fn(size, stride, off)(pos).reshape(-1)
        in_pos = _strided_fn(self.in_shape, in_stride, in_off)(pos)
        acc = np.zeros(n_storage, g.dtype, like=g)
        np.add.at(acc, out_pos, g.reshape(-1))
        count = np.bincount(in_pos.reshape(-1), minlength=n_storage)
        dx = acc[in_pos]
        if count.max(initial=0) > 1:
            dx = dx / count[in_pos].astype(g.dtype)
        return (dx,)


_AsStridedAccum.__name__ = "AsStridedBackward0"
