"""Whole objects in torch's checkpoint format: ``save(model, f)`` and ``load(f, weights_only=False)``.

Saving.  What _pt_writer.py's opcode emitter cannot express -- a module, an optimizer, any picklable object --
is pickled by Python's own pickler (protocol 2, as torch.save does) with torch's conventions, into the same zip
archive: tensors through ``torch._utils._rebuild_tensor_v2``/``_v3`` over persistent storage ids (one
serialization.StorageTable, so views keep sharing storages), parameters through ``_rebuild_parameter``, dtypes
as ``torch.<name>``, and glassgrad's own classes and functions under torch's names
(``glassgrad.nn.modules.linear.Linear`` is written ``torch.nn.modules.linear.Linear``; glassgrad's module paths
are torch's).  So torch.load(f, weights_only=False) builds torch's own classes from glassgrad's file.

Loading.  ``_FullUnpickler`` is Python's Unpickler: it imports and calls whatever the file names, so it runs
only when the caller passes ``weights_only=False`` -- exactly torch's contract.  ``torch.*`` globals resolve to
glassgrad's object of the same path; the tensor rebuild functions and storage types are the restricted
reader's (_pt_pickle.py).

The names a file may use under ``weights_only=True`` beyond tensors and containers are the user's allow-list
(torch.serialization.add_safe_globals / safe_globals / get_safe_globals / clear_safe_globals), kept here and
read by _pt_pickle._Machine.
"""
import pickle
import threading
import types
from collections import OrderedDict

__all__ = ["add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals", "torch_name",
           "user_allowed", "pickle_object", "FullUnpickler"]


# -- the allow-list of weights_only=True ---------------------------------------------------------------
_USER = []                         # what add_safe_globals was given, in order (get_safe_globals returns it)
_LOCAL = threading.local()         # safe_globals' context entries (per thread, as torch's)


def torch_name(obj):
    """The dotted name `obj` (a class or function) has in a checkpoint: torch's path for glassgrad's own."""
    module, name = _global_of(obj)
    return f"{module}.{name}"


def _global_of(obj):
    from . import _dtype
    from ._device import device
    from ._tensor import Size, Tensor
    from .nn.parameter import Parameter
    fixed = {id(Size): ("torch", "Size"), id(device): ("torch", "device"), id(Tensor): ("torch", "Tensor"),
             id(Parameter): ("torch.nn.parameter", "Parameter")}
    if id(obj) in fixed:
        return fixed[id(obj)]
    if isinstance(obj, _dtype.dtype):
        return "torch", obj.name
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        raise TypeError(f"{obj!r} has no __qualname__ to name it by")
    if module == "glassgrad" or module.startswith("glassgrad."):
        home = _home_tables()[0].get(id(obj))
        module = home or "torch" + _public_module(obj, module, name)[len("glassgrad"):]
    elif "<locals>" in name:          # as the C pickler (torch.save's) says it
        raise AttributeError(f"Can't pickle local object {name!r}")
    return module, name


# glassgrad classes defined in another file than torch's: (glassgrad namespace, torch's module) -> names
_TORCH_HOMES = {
    ("distributions", "torch.distributions.beta"): ["Beta"],
    ("distributions", "torch.distributions.chi2"): ["Chi2"],
    ("distributions.transforms", "torch.distributions.transforms"): [
        "CatTransform", "ComposeTransform", "CorrCholeskyTransform", "IndependentTransform",
        "PositiveDefiniteTransform", "ReshapeTransform", "StackTransform", "Transform", "_InverseTransform"],
    ("nn", "torch.nn.modules.activation"): ["MultiheadAttention"],
    ("nn", "torch.nn.modules.batchnorm"): ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"],
    ("nn", "torch.nn.modules.conv"): ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
                                      "LazyConvTranspose2d", "LazyConvTranspose3d"],
    ("nn", "torch.nn.modules.distance"): ["CosineSimilarity", "PairwiseDistance"],
    ("nn", "torch.nn.modules.instancenorm"): ["LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"],
    ("nn", "torch.nn.modules.linear"): ["LazyLinear"],
    ("nn", "torch.nn.modules.pixelshuffle"): ["PixelShuffle", "PixelUnshuffle"],
    ("optim", "torch.optim"): ["Adafactor", "Muon"],
    ("optim", "torch.optim.adamw"): ["AdamW"],
    ("utils.data", "torch.utils.data.dataloader"): ["_DatasetKind"],
}
_homes = None


def _home_tables():
    """({id(glassgrad class): torch's module}, {(torch's module, name): glassgrad class}), built once."""
    global _homes
    if _homes is None:
        import importlib
        by_id, by_name = {}, {}
        for (ns, module), names in _TORCH_HOMES.items():
            m = importlib.import_module("glassgrad." + ns)
            for n in names:
                cls = getattr(m, n)
                by_id[id(cls)], by_name[module, n] = module, cls
        _homes = by_id, by_name
    return _homes


def _public_module(obj, module, name):
    """`module`, or where it is private (F.relu is defined in glassgrad.nn.functional._activation) the
    longest public prefix of it that has `obj` as `name` -- torch's path (torch.nn.functional.relu)."""
    import sys
    parts = module.split(".")
    public = next((i for i, p in enumerate(parts) if p.startswith("_")), len(parts))
    if public == len(parts):
        return module
    for n in range(public, 0, -1):
        m = sys.modules.get(".".join(parts[:n]))
        if m is not None and getattr(m, name, None) is obj:
            return ".".join(parts[:n])
    return module


def _entries(items, who):
    out = []
    for item in items:
        if isinstance(item, tuple):
            if len(item) != 2 or not isinstance(item[1], str):
                raise ValueError(f"{who}: expected (callable, str) tuple, got {item!r}")
            out.append((item[1], item[0]))
        elif callable(item):
            out.append((torch_name(item), item))
        else:
            raise TypeError(f"{who}: expected a callable or a (callable, str) tuple, got {type(item).__name__}")
    return out


def add_safe_globals(safe_globals):
    """Mark the given classes / functions (or ``(obj, "module.name")`` pairs) as safe for weights_only load."""
    _entries(safe_globals, "add_safe_globals")
    _USER.extend(safe_globals)


def get_safe_globals():
    """The user-added safe globals (add_safe_globals' list, in order)."""
    return list(_USER)


def clear_safe_globals():
    """Forget every user-added safe global."""
    _USER.clear()


class safe_globals:
    """Context manager: the given globals are safe for weights_only load inside the block."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        stack = getattr(_LOCAL, "stack", None)
        if stack is None:
            stack = _LOCAL.stack = []
        stack.append(list(self.safe_globals))
        return self

    def __exit__(self, *exc):
        _LOCAL.stack.pop()
        return False


def user_allowed():
    """{"module.name": object} of every user-allowed global now (add_safe_globals and open safe_globals blocks)."""
    items = list(_USER)
    for block in getattr(_LOCAL, "stack", None) or ():
        items.extend(block)
    return dict(_entries(items, "safe_globals"))


# -- saving any picklable object in torch's format --------------------------------------------------------
class _Global:
    """Pickled as the global ``module.name`` (a torch name glassgrad need not import)."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):          # pickle's save_reduce asks for a callable; this one is only a name
        raise TypeError(f"{self.module}.{self.name} is a name in a torch checkpoint, not callable in glassgrad")


class _StorageRef:
    """Pickled as a persistent storage id (BINPERSID), as torch.save writes storages."""
    __slots__ = ("pid",)

    def __init__(self, pid):
        self.pid = pid


_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_V3 = _Global("torch._utils", "_rebuild_tensor_v3")
_PARAM = _Global("torch._utils", "_rebuild_parameter")
_DEVICE = _Global("torch", "device")


class _Pickler(pickle._Pickler):
    """Python's pickler (the pure-Python one: its globals can be renamed) writing torch's conventions."""
    dispatch = dict(pickle._Pickler.dispatch)     # functions too go through save_global below
    dispatch[types.FunctionType] = lambda self, obj: self.save_global(obj)

    def __init__(self, f, table, protocol):
        super().__init__(f, protocol)
        self.table = table

    def persistent_id(self, obj):
        return obj.pid if type(obj) is _StorageRef else None

    def reducer_override(self, obj):
        from . import _dtype
        from ._device import device
        from ._tensor import Tensor, _make
        from .nn.parameter import Parameter
        if type(obj) is _Global or isinstance(obj, _dtype.dtype):
            return "global"                     # -> save_global below
        if isinstance(obj, device):
            return _DEVICE, (str(obj),)
        if isinstance(obj, Parameter):
            return _PARAM, (_make(obj._data), bool(obj._rg), OrderedDict())
        if isinstance(obj, Tensor):
            return self.tensor(obj)
        return NotImplemented

    def tensor(self, t):
        from ._pt_writer import storage_id
        if t.is_sparse or t.is_sparse_csr:
            raise TypeError("glassgrad.save in torch's format cannot store a sparse tensor inside an object "
                            "(save it in a dict, or use the glassgrad format)")
        pid, v3, off, shape, strides = storage_id(self.table, t)
        args = (_StorageRef(pid), off, shape, strides, bool(t._rg), OrderedDict())
        if v3:
            return _V3, args + (t.dtype,)
        return _V2, args

    def save_global(self, obj, name=None):
        if type(obj) is _Global:
            module, name = obj.module, obj.name
        else:
            module, name = _global_of(obj)
            if module == getattr(obj, "__module__", None):
                return super().save_global(obj, name)     # not glassgrad's: as pickle writes it
        self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")
        self.memoize(obj)


def pickle_object(obj, table, protocol=2):
    """The data.pkl bytes of `obj`, its storages registered in `table` (serialization.StorageTable)."""
    import io
    buf = io.BytesIO()
    _Pickler(buf, table, protocol).dump(obj)
    return buf.getvalue()


# -- loading with weights_only=False --------------------------------------------------------------------
def _glassgrad_global(module, name):
    """torch's `module.name` as glassgrad's object of the same path."""
    import importlib
    cls = _home_tables()[1].get((module, name))
    if cls is not None:
        return cls
    gmodule = "glassgrad" + module[len("torch"):]
    try:
        obj = importlib.import_module(gmodule)
    except ImportError:
        raise ModuleNotFoundError(f"the checkpoint needs {module}.{name}, and glassgrad has no module "
                                  f"{module}") from None
    for part in name.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AttributeError(f"Can't get attribute '{name}' on <module '{module}'>: the checkpoint needs "
                                 f"{module}.{name}, which glassgrad does not have") from None
    return obj


class FullUnpickler(pickle.Unpickler):
    """Python's Unpickler over a torch archive's data.pkl: any global the file names is imported (torch.* from
    glassgrad); `storage(pid)` gives each persistent storage."""

    def __init__(self, file, storage, **kwargs):
        super().__init__(file, **kwargs)
        self._storage = storage

    def persistent_load(self, pid):
        return self._storage(pid)

    def find_class(self, module, name):
        from ._pt_pickle import _ALLOWED
        obj = _ALLOWED.get((module, name))
        if obj is not None:
            return obj
        if module == "torch" or module.startswith("torch."):
            return _glassgrad_global(module, name)
        return super().find_class(module, name)
