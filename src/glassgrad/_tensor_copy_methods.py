"""The Tensor methods of ops/view_copies.py (the `*_scatter` ops, narrow_copy, slice_inverse), each a
one-line delegation to its op module; ``Tensor`` inherits them with those of ``_tensor_methods.py``.
"""
import numbers

import numpy as np

from . import _args, backend
from . import _memory_format as _mf
from . import ops as _ops
from . import storage as _storage


def _real(v):
    if not isinstance(v, (numbers.Real, np.bool_)):
        raise TypeError(f"must be real number, not {type(v).__name__}")
    return v


def _storage_bytes(base):
    """The bytes of base's storage: those resize_ recorded, else its array's memory; None for a strided array."""
    rec = base._extra.get("storage") if base._extra is not None else None
    a = base._data
    if rec is not None and a.__class__ is np.ndarray:
        lo, p = rec.ctypes.data, a.ctypes.data
        if lo <= p and p + a.nbytes <= lo + rec.size:      # (not replaced since, e.g. through .data)
            return rec
    try:
        return _storage.bytes_of(base._data)
    except RuntimeError:
        return None


def _resize_(t, shape):
    """torch's resize_: the first numel elements of the storage from t's offset, contiguous; a storage that is
    too small grows (its old bytes kept; the new elements as torch's empty: filled in deterministic mode)."""
    from ._globals import fill_uninitialized
    shape = tuple(int(s) for s in shape)
    if t.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(s < 0 for s in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    if shape == tuple(t.shape):
        return t
    a = t._data
    dt, isz = a.dtype, a.dtype.itemsize
    base = t if t._base is None else t._base
    off, n = t.storage_offset(), int(np.prod(shape))
    store = _storage_bytes(base)
    if store is not None and (off + n) * isz <= store.size:
        t._data = store[off * isz:(off + n) * isz].view(dt).reshape(shape)
        if t._base is None:
            t._extra_dict()["storage"] = store         # the storage keeps its size when the tensor shrinks
    else:
        grown = np.zeros((off + n) * isz, np.uint8, like=a)
        old = np.ascontiguousarray(a, like=a).reshape(-1).view(np.uint8) if store is None else store
        keep = min(old.size, grown.size - (off * isz if store is None else 0))
        start = off * isz if store is None else 0
        grown[start:start + keep] = old[:keep]
        flat = grown.view(dt)
        fill_uninitialized(flat[(start + keep) // isz:])
        t._data = flat[off:].reshape(shape)
        t._base = t._view_fn = t._vbase_fn = None       # the grown storage is this tensor's own
        t._extra_dict()["storage"] = grown
    t._vc[0] += 1
    return t


def _restride_(t, fmt):
    """resize_'s memory_format: the tensor's first numel elements of memory seen under the format's strides
    (its values reinterpreted, as torch's empty_tensor_restride)."""
    if _mf.check_arg(fmt, "resize_") is _mf.preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    a = t._data
    strides = _mf.format_strides(a.shape, fmt)
    if t.stride() != strides:
        isz = a.itemsize
        reach = 1 + sum((n - 1) * st for n, st in zip(a.shape, a.strides) if n) // isz
        if a.size and (min(a.strides) < 0 or reach < a.size):       # memory that does not hold numel elements
            flat = np.ascontiguousarray(a, like=a).reshape(-1)
        else:
            flat = backend.as_strided(a, (a.size,), (isz,))
        t._data = backend.as_strided(flat, a.shape, tuple(s * isz for s in strides))
    return t


def _elementwise_(t, name, fn, others):
    """t[i] = fn(t[i], other[i], ...) in place, element by element in Python (torch's CPU-only apply_/map_)."""
    if t.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    srcs = []
    for o in others:
        if o.dtype is not t.dtype:
            raise TypeError(f"{name}: expected torch.{t.dtype._legacy} for 'other' (got torch.{o.dtype._legacy})")
        srcs.append(o.expand(t.shape)._data)
    a = t._data
    for idx in np.ndindex(a.shape):
        a[idx] = _real(fn(a[idx].item(), *(s[idx].item() for s in srcs)))
    return t          # (torch's apply_ / map_ leave the version counter alone: so does this)


class TensorCopyMethods:
    __slots__ = ()

    # -- ops/view_copies.py -----------------------------------------------------------
    def narrow_copy(self, dim, start, length):
        return _ops.view_copies.narrow_copy(self, dim, start, length)
    def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
        return _ops.view_copies.diagonal_scatter(self, src, offset, dim1, dim2)
    def select_scatter(self, src, dim, index):
        return _ops.view_copies.select_scatter(self, src, dim, index)
    def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
        return _ops.view_copies.slice_scatter(self, src, dim, start, end, step)
    def as_strided_scatter(self, src, size, stride, storage_offset=None):
        return _ops.view_copies.as_strided_scatter(self, src, size, stride, storage_offset)
    def slice_inverse(self, src, dim=0, start=None, end=None, step=1):
        return _ops.view_copies.slice_inverse(self, src, dim, start, end, step)

    # -- storage.py: the memory under the tensor --------------------------------------------
    def untyped_storage(self):
        base = self if self._base is None else self._base
        b = _storage_bytes(base)
        return _storage.UntypedStorage._wrap(_storage.bytes_of(base._data) if b is None else b)

    def storage(self):
        from ._globals import warn_once
        warn_once("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                  "storage class. This should only matter to you if you are using storages directly.  To access "
                  "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")
        return _storage.TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)

    def storage_type(self):
        return _storage.storage_type_of(self.dtype)

    # -- element-by-element Python callables (CPU) and predicates ------------------------------------------
    def apply_(self, callable):
        return _elementwise_(self, "apply_", callable, ())

    def map_(self, tensor, callable):
        return _elementwise_(self, "map_", callable, (tensor,))

    def map2_(self, x, y, callable):
        return _elementwise_(self, "map2_", callable, (x, y))

    # -- resize_: a new geometry on the same storage (grown when it no longer fits) -----------------------------
    def resize_(self, *sizes, memory_format=None):
        t = _resize_(self, _args.sizes(sizes, "resize_"))
        return t if memory_format is None else _restride_(t, memory_format)

    def resize_as_(self, tensor, memory_format=None):
        _args.tensor_arg(tensor, "resize_as_", "the_template", 1)
        t = _resize_(self, tuple(tensor.shape))
        if memory_format is _mf.preserve_format:           # torch: the format the template's strides suggest
            memory_format = _mf.suggest(tensor.shape, tensor.stride())
        return t if memory_format is None else _restride_(t, memory_format)
