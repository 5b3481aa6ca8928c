"""nn.Parameter and nn.Buffer: Tensors that a Module registers when they are assigned to it."""
from .._tensor import Tensor, _make, _new
from .._dtype import _FROM_NP
from ..ops.creation import empty

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


def _alias(cls, data, requires_grad):
    """A new leaf of class `cls` sharing `data`'s memory (PyTorch's _make_subclass)."""
    t = _new(cls)
    Tensor.__init__(t)
    src = _make(data._data)
    for k in Tensor.__slots__:
        if k not in ("__weakref__", "__dict__"):
            setattr(t, k, getattr(src, k))
    t._rg = bool(requires_grad)
    return t


class Parameter(Tensor):
    """A Tensor that is a module parameter: a leaf that requires grad unless told otherwise."""
    _is_param = True

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if requires_grad and data._data.dtype.kind not in "fcV":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        return _alias(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return Tensor.__repr__(self)

    def __reduce_ex__(self, proto):
        return (Parameter, (self.detach(), self._rg))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        a = self._data
        new = Parameter(_make(a.copy() if a.flags.c_contiguous else a.copy(order="K")), self._rg)   # its layout
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new


class Buffer(Tensor):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = _alias(Tensor, data, data._rg)
        t.__class__ = cls
        t.persistent = persistent
        return t

    def __init__(self, data=None, *, persistent=True):
        pass


class UninitializedTensorMixin:
    """A parameter or buffer without a shape yet (the Lazy modules'), until ``materialize`` gives it one."""
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        dt = _udtype(dtype) if dtype is not None else _FROM_NP[self._data.dtype]   # (module.double() changes it)
        if isinstance(shape, int):
            shape = (shape,)
        data = empty(*shape, dtype=dt, device=self.device if device is None else device)   # (torch: self's device)
        self._data = data._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize the "
            "parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    """Whether ``param`` is an UninitializedParameter / UninitializedBuffer (torch.nn.parameter.is_lazy)."""
    return isinstance(param, UninitializedTensorMixin)


def _udtype(dtype):
    from .. import _dtype
    return _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        t = _alias(cls, empty(0, dtype=_udtype(dtype), device=device), requires_grad)
        return t

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, _FROM_NP[self._data.dtype])
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _alias(cls, empty(0, dtype=_udtype(dtype), device=device), requires_grad)
        t.persistent = persistent
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, _FROM_NP[self._data.dtype])
        return memo[id(self)]
