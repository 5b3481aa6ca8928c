"""torch.utils.weak: weak references and weak-keyed dictionaries that go by object identity, not by ``==`` and
``hash`` (a Tensor's ``==`` is elementwise, so the standard library's WeakKeyDictionary cannot hold tensors).

An entry lives as long as its key: when the key is collected the entry goes (iteration works on a snapshot, so
a key collected meanwhile does not disturb it)."""
import weakref
from collections.abc import Mapping, MutableMapping

from .._tensor import Tensor

__all__ = ["TensorWeakRef", "WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary"]

WeakRef = weakref.ref


class WeakIdRef(weakref.ref):
    """A weak reference hashed by its referent's id() and equal to another only while both referents are alive
    and the same object (a dead one equals only itself)."""
    __slots__ = ["_id"]

    def __init__(self, key, callback=None):
        self._id = id(key)
        super().__init__(key, callback)

    def __hash__(self):
        return self._id

    def __eq__(self, other):
        a, b = self(), other()
        if a is not None and b is not None:
            return a is b
        return self is other


class WeakIdKeyDictionary(MutableMapping):
    """A dict whose keys are held weakly and compared by identity (`ref_type`: the weak reference class)."""

    def __init__(self, dict=None, ref_type=WeakIdRef):
        self.data = {}
        self.ref_type = ref_type
        selfref = weakref.ref(self)

        def remove(k):
            owner = selfref()
            if owner is not None:
                owner.data.pop(k, None)
        self._remove = remove
        if dict is not None:
            self.update(dict)

    def _ref(self, key):
        return self.ref_type(key, self._remove)

    def __delitem__(self, key):
        del self.data[self.ref_type(key)]

    def __getitem__(self, key):
        return self.data[self.ref_type(key)]

    def __setitem__(self, key, value):
        self.data[self._ref(key)] = value

    def __len__(self):
        return len(self.data)

    def __contains__(self, key):
        try:
            r = self.ref_type(key)
        except TypeError:
            return False
        return r in self.data

    def __repr__(self):
        return f"<{self.__class__.__name__} at {id(self):#x}>"

    def _pairs(self):
        for r, v in list(self.data.items()):
            k = r()
            if k is not None:
                yield k, v

    def __iter__(self):
        return (k for k, _ in self._pairs())

    def keys(self):
        return list(self)

    def items(self):
        return list(self._pairs())

    def values(self):
        return [v for _, v in self._pairs()]

    def keyrefs(self):
        """The weak references to the keys (some may be dead by the time they are used)."""
        return list(self.data)

    def get(self, key, default=None):
        return self.data.get(self.ref_type(key), default)

    def copy(self):
        return self.__class__(dict(self.items()), ref_type=self.ref_type)

    __copy__ = copy

    def __deepcopy__(self, memo):
        from copy import deepcopy
        new = self.__class__(ref_type=self.ref_type)
        for k, v in self.items():
            new[k] = deepcopy(v, memo)
        return new

    def popitem(self):
        while True:
            r, v = self.data.popitem()
            k = r()
            if k is not None:
                return k, v

    def pop(self, key, *args):
        return self.data.pop(self.ref_type(key), *args)

    def setdefault(self, key, default=None):
        return self.data.setdefault(self._ref(key), default)

    def update(self, dict=None, **kwargs):
        if dict is not None:
            for k, v in (dict.items() if hasattr(dict, "items") else dict):
                self[k] = v
        for k, v in kwargs.items():
            self[k] = v

    def __ior__(self, other):
        self.update(other)
        return self

    def __or__(self, other):
        if isinstance(other, Mapping):
            c = self.copy()
            c.update(other)
            return c
        return NotImplemented

    def __ror__(self, other):
        if isinstance(other, Mapping):
            c = self.__class__(ref_type=self.ref_type)
            c.update(other)
            c.update(self)
            return c
        return NotImplemented

    def __eq__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        return {id(k): v for k, v in self.items()} == {id(k): v for k, v in other.items()}


WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a Tensor."""

    def __init__(self, tensor):
        if not isinstance(tensor, Tensor):
            raise AssertionError(f"expected torch.Tensor, got {type(tensor)}.")
        self.ref = weakref.ref(tensor)

    def __call__(self):
        out = self.ref()
        if out is not None and not isinstance(out, Tensor):
            raise AssertionError(f"expected torch.Tensor, got {type(out)}.")
        return out
