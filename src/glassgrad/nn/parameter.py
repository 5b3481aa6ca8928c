"""nn.Parameter and nn.Buffer: Tensors that a Module registers when they are assigned to it."""
from .._tensor import Tensor, _make, _new
from ..ops.creation import empty

__all__ = ["Parameter", "Buffer"]


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
        new = Parameter(_make(self._data.copy()), self._rg)
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
