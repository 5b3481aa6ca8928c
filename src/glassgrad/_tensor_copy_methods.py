"""The Tensor methods of ops/view_copies.py (the `*_scatter` ops, narrow_copy, slice_inverse), each a
one-line delegation to its op module; ``Tensor`` inherits them with those of ``_tensor_methods.py``.
"""
import numbers

import numpy as np

from . import ops as _ops
from . import storage as _storage


def _real(v):
    if not isinstance(v, (numbers.Real, np.bool_)):
        raise TypeError(f"must be real number, not {type(v).__name__}")
    return v


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

    # -- metadata torch.* also exposes ---------------------------------------------------
    def is_distributed(self):
        return False

    # -- storage.py: the memory under the tensor --------------------------------------------
    def untyped_storage(self):
        base = self if self._base is None else self._base
        return _storage.UntypedStorage._wrap(_storage.bytes_of(base._data))

    def storage(self):
        from ._globals import warn_once
        warn_once("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                  "storage class. This should only matter to you if you are using storages directly.  To access "
                  "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")
        return _storage.TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)

    def storage_type(self):
        return _storage.storage_type_of(self.dtype)

    def const_data_ptr(self):
        return self.data_ptr()

    def is_set_to(self, tensor):
        """Whether both tensors view the same storage with the same offset, sizes and strides."""
        mine = self if self._base is None else self._base
        theirs = tensor if tensor._base is None else tensor._base
        return mine is theirs and self.storage_offset() == tensor.storage_offset() and \
            tuple(self.shape) == tuple(tensor.shape) and self.stride() == tensor.stride()

    def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                          requires_grad=False):
        return _ops.creation.empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                                           device=self.device if device is None else device,
                                           requires_grad=requires_grad)

    # -- element-by-element Python callables (CPU) and predicates ------------------------------------------
    def apply_(self, callable):
        return _elementwise_(self, "apply_", callable, ())

    def map_(self, tensor, callable):
        return _elementwise_(self, "map_", callable, (tensor,))

    def map2_(self, x, y, callable):
        return _elementwise_(self, "map2_", callable, (x, y))

    def is_nonzero(self):
        n = self._data.size
        if n != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} is "
                               f"ambiguous")
        return bool(self._data.reshape(-1)[0])

    def is_same_size(self, other):
        if not isinstance(other, type(self)) and not hasattr(other, "_data"):
            raise TypeError(f"is_same_size(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(other).__name__}")
        return tuple(self.shape) == tuple(other.shape)
