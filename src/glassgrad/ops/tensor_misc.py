"""Tensor predicates and storage-level methods: is_nonzero is_same_size is_signed, new_empty_strided, dim_order,
as_strided_ (AsStridedBackward1), Tensor.resize / resize_as (torch's deprecated Resize Function).  (apply_ map_
map2_ resize_ resize_as_ are Tensor methods in _tensor_copy_methods.py, on storage.py's storages.)

ops: is_nonzero is_same_size is_signed as_strided_ (torch.*); Tensor methods new_empty_strided dim_order resize
     resize_as as_subclass set_ grad_dtype volatile record_stream
"""
import sys
import warnings

import numpy as np


from .. import _args, backend
from ._core import grad, check_inplace
from .creation import empty_strided
from .strided import as_strided, _AsStridedAccum
from .views import _inplace_meta
from ..autograd.function import Function
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["is_nonzero", "is_same_size", "is_signed", "as_strided_"]


def is_nonzero(input):
    n = input._data.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()) != 0)


def is_same_size(input, other):
    _args.tensor_arg(other, "is_same_size", "other", 2)
    return input._data.shape == other._data.shape


def is_signed(input):
    k = input._data.dtype.kind
    return k in "ifcV"


def prelu(input, weight):
    """Tensor.prelu: nn.functional.prelu's checks, the weight shaped to broadcast along dim 1."""
    if _acs.on:
        return _ac.lower(prelu, input, weight)
    from .activation import prelu as _prelu     # loads with nn.functional: imported when first called
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    nw = weight.numel()
    if nw != 1:
        ch = input.shape[1] if input.dim() >= 2 else 1
        if nw != ch:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{nw} and channel size = {ch}.")
    shape = [1] * input.dim()
    if nw != 1:
        shape[1] = nw
    return _prelu(input, weight if tuple(weight.shape) == tuple(shape) else weight.reshape(shape))


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, **kw):
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype, requires_grad=requires_grad)


# -- dim_order (torch's compute_elementwise_output_logical_to_physical_perm for one tensor) -------------------
def _should_swap(shape, strides, a, b):
    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0

    def ge(x, y):
        if y == 0:
            return True
        if x == 0:
            return False
        return x >= y or x % y == 0
    if sa == sb:
        return 0 if ge(shape[b], shape[a]) else 1
    if ge(sb, sa):
        return -1
    if ge(sa, sb):
        return 1
    return 0


def _perm(t, check):
    shape, strides = t._data.shape, t.stride()
    nd = len(shape)
    if nd == 0:
        return [], False
    if nd == 1:
        return [0], False
    if t._data.flags.c_contiguous:
        return list(range(nd)), False
    perm = list(reversed(range(nd)))
    for i in range(1, nd):
        d1 = i
        for d0 in reversed(range(i)):
            c = _should_swap(shape, strides, perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    amb = bool(check) and any(_should_swap(shape, strides, perm[i], perm[i + 1]) != -1 for i in range(nd - 1))
    return list(reversed(perm)), amb


def dim_order(self, *, ambiguity_check=False):
    if not isinstance(ambiguity_check, bool):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    shape, strides = self._data.shape, self.stride()
    multiple = any(a == b for a, b in zip(strides, strides[1:])) or any(s == 1 for s in shape)
    if ambiguity_check and multiple:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                           "memory formats.")
    perm, amb = _perm(self, ambiguity_check)
    if amb:
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(perm)


class AsStridedBackward1(_AsStridedAccum):
    __slots__ = ()


def as_strided_(input, size, stride, storage_offset=None):
    y = as_strided(input, size, stride, storage_offset)
    if not (grad.enabled and input._rg):
        check_inplace(input)
        input._data = y._data
        return input
    return _inplace_meta(input, y, AsStridedBackward1)





# -- Tensor.resize / resize_as (torch's deprecated autograd Function `Resize`) -----------------------------------------
class Resize(Function):
    @staticmethod
    def forward(ctx, tensor, sizes):
        n = 1
        for s in sizes:         # as torch's: a tuple among the sizes is not unpacked (and fails below)
            n = n * s
        ctx.numel, ctx.input_sizes = n, tensor.shape
        if tensor.numel() != n:
            raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in total), but the given "
                               f"tensor has a size of {'x'.join(map(str, tensor.shape))} ({tensor.numel()} elements). "
                               "autograd's resize can only change the shape of a given tensor, while preserving the "
                               "number of elements. ")
        return tensor.contiguous().clone().view(*sizes) if tensor.is_contiguous() else tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(ctx.input_sizes), None


def resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", stacklevel=3)
    return Resize.apply(self, sizes)


def resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=3)
    return Resize.apply(self, tuple(tensor.shape))


# -- as_subclass / module_load ------------------------------------------------------------------------------------------
def as_subclass(self, cls):
    """An alias of self (AliasBackward0: the same memory, attached to the graph) as an instance of `cls`."""
    from .indexing import AliasBackward0
    from .views import _view_op
    from .._tensor import Tensor
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    out = _view_op(self, self._data.view(), AliasBackward0, lambda b: b)
    if cls is not Tensor:
        out.__class__ = cls
    return out


# -- set_ (a Tensor as the source of storage) ---------------------------------------------------------------
def _storage(a):
    """The flat storage under array `a` (the outermost contiguous NumPy array it views) and a's offset in it."""
    if a.__class__ is not np.ndarray:           # a device array: backend's walk to the storage it views
        root = backend.owner(a)
        if root.flags.c_contiguous and root.size:
            return root.reshape(-1), (backend.data_ptr(a) - backend.data_ptr(root)) // a.itemsize
        return np.ascontiguousarray(a, like=a).reshape(-1), 0
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root.dtype == a.dtype and root.flags.c_contiguous and root.size:
        off = (a.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // a.itemsize
        return root.reshape(-1), off
    return np.ascontiguousarray(a).reshape(-1), 0


def _root(a):
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """self takes source's memory: all of it with its geometry, or (offset, size, stride) in its storage; set_()
    leaves self empty.  (A Storage source is not supported: glassgrad has no storage objects; and self does not
    become a view, so its storage_offset() reads 0.)"""
    from .._tensor import Tensor
    check_inplace(self)
    dt = self._data.dtype
    if source is None:
        new = np.zeros(0, dt, like=self._data)
    else:
        _args.tensor_arg(source, "set_", "source", 1)
        if source._data.dtype != dt:
            from .. import _dtype
            raise RuntimeError(f"Could not set tensor of type {_dtype.cpp_name(source._data.dtype)} to a tensor of "
                               f"type {_dtype.cpp_name(dt)}")
        if size is None:
            new = source._data
        else:
            size = tuple(_args.int_list(size, "set_", "size", 3))
            stride = tuple(_args.int_list(stride, "set_", "stride", 4)) if stride is not None else \
                tuple(int(np.prod(size[i + 1:], dtype=np.int64)) for i in range(len(size)))
            flat, off = _storage(source._data)
            off = off + _args.int_arg(storage_offset, "set_", "storage_offset", 2)   # from source's own offset, as torch
            need = off + 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else off
            if need > flat.size:            # the storage grows (the old elements first)
                grown = np.empty(need, dt, like=flat)
                grown[:flat.size] = flat
                flat = grown
            st = tuple(s * flat.itemsize for s in stride)
            new = np.lib.stride_tricks.as_strided(flat[off:], size, st) if flat.__class__ is np.ndarray else \
                backend.as_strided(flat[off:], size, st)
    if not isinstance(self, Tensor):
        raise TypeError("set_(): self must be a Tensor")
    src_rg = source is not None and source._rg
    if grad.enabled and (self._rg or src_rg):       # torch: no derivative for set_
        from ._core import NotImplementedNode, edge
        n = NotImplementedNode((edge(self),) + (() if source is None else (edge(source),)))
        n.what = "set_"
        self._grad_fn, self._out_nr, self._rg = n, 0, True
    self._data = new
    self._base = None
    self._view_fn = None
    self._vc[0] += 1
    return self


# -- grad_dtype (what AccumulateGrad casts a leaf's incoming gradients to: autograd/engine.py's _accumulate) ---------
def get_grad_dtype(self):
    from .. import _dtype
    if self._grad_fn is not None:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    extra = self._extra
    if extra is None or "grad_dtype" not in extra:
        return _dtype._FROM_NP[self._data.dtype]
    dt = extra["grad_dtype"]
    return None if dt is None else _dtype._FROM_NP[dt]


def set_grad_dtype(self, value):
    from .. import _dtype
    if self._grad_fn is not None:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    if value is not None and not isinstance(value, _dtype.dtype):
        raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got {_args.type_name(value)}")
    g = self._grad
    if value is not None and g is not None and g._data.dtype != value.np:
        raise RuntimeError(f"Cannot set grad_dtype to '{_dtype.c_name(value.np)}' because there is already a gradient "
                           f"with dtype '{_dtype.cpp_name(g._data.dtype)}'. Please clear the gradient (.grad = None) "
                           "before changing grad_dtype, or ensure the new grad_dtype matches the existing gradient's "
                           "dtype.")
    self._extra_dict()["grad_dtype"] = None if value is None else value.np


# -- what torch keeps of removed Variable features -------------------------------------------------------------------------
def get_volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=3)
    return False


def set_volatile(self, value):
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.", UserWarning,
                  stacklevel=3)


def record_stream(input, s):
    """Tensor.record_stream: marks a CUDA tensor's memory as used by stream `s` (a caching-allocator hint; CuPy's
    pool needs none, so nothing to do); torch's CPU build has no CPU kernel for it and raises."""
    streams = tuple(m.Stream for m in map(sys.modules.get, ("glassgrad.accelerator.streams", "glassgrad.cuda"))
                    if m is not None)           # (torch.Stream and torch.cuda.Stream, once loaded)
    if not isinstance(s, streams):
        raise RuntimeError("unknown parameter type")
    if input.is_sparse or input.device.type != "cuda":
        from .._sparse_tensor import not_on_sparse
        raise not_on_sparse("record_stream", "SparseCPU" if input.is_sparse else "CPU")
    return None
