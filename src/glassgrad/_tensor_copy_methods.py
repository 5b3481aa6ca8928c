"""The Tensor methods of ops/view_copies.py (the `*_scatter` ops, narrow_copy, slice_inverse), each a
one-line delegation to its op module; ``Tensor`` inherits them with those of ``_tensor_methods.py``.
"""
from . import ops as _ops
from . import storage as _storage


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
