"""What symbolic tracing patches while it runs, and restores afterwards (also on error).

glassgrad's functions do not dispatch through ``__torch_function__``; so that ``torch.relu(proxy)``,
``F.relu(proxy)`` or ``torch.cat([p, q])`` are recorded, the public callables of glassgrad, nn.functional,
special, linalg and fft are replaced by wrappers that record a call_function node (target: the original
function) when an argument holds a Proxy, and call through otherwise. The same is done to the globals of each
traced ``forward`` (``from glassgrad import relu``), to every glassgrad module's global and glassgrad.nn class
attribute bound to such a function (so nn's own forwards, traced through, record too), to module attributes
holding one (``self.act = F.gelu``), and to Tensor's methods and binary operators (``tensor + proxy``).
"""

import functools
import importlib
import inspect
import sys
import types

from ._functional_args import FUNCTIONAL_AS_METHOD, FUNCTIONAL_CALL_FORMS, normalize_call
from .proxy import Proxy

# id(original function) -> (torch's qualified name, the function), for printing and generated code
QUALNAMES = {}
_WRAPPERS = {}          # (id(original), options) -> (wrapper, original, call)
_NAMESPACES = (("glassgrad.nn.functional", "torch.nn.functional"), ("glassgrad.special", "torch.special"),
               ("glassgrad.linalg", "torch.linalg"), ("glassgrad.fft", "torch.fft"), ("glassgrad", "torch"),
               ("glassgrad.functional", "torch.functional"))
# functions that look at a value rather than compute on it: torch does not record them either
_NOT_RECORDED = {"is_tensor", "is_storage", "is_grad_enabled", "get_default_dtype", "set_grad_enabled",
                 "is_inference_mode_enabled", "typename", "compile", "vmap", "no_grad", "enable_grad"}
# nn.functional functions torch writes in Python without handing the call to __torch_function__: traced through
_TRACED_THROUGH = {"upsample", "upsample_bilinear", "upsample_nearest"}
# Tensor operators with a Tensor on the left and a Proxy on the right (or as the index / value of tensor[i] = v):
# recorded as the Tensor method torch names
_TENSOR_BINARY = {"__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div",
                  "__matmul__": "matmul", "__pow__": "pow", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
                  "__ge__": "ge", "__eq__": "eq", "__ne__": "ne", "__and__": "__and__", "__or__": "__or__",
                  "__xor__": "__xor__", "__floordiv__": "__floordiv__", "__mod__": "remainder",
                  "__lshift__": "__lshift__", "__rshift__": "__rshift__", "__getitem__": "__getitem__",
                  "__setitem__": "__setitem__"}


def find_proxy(args, kwargs):
    """The first Proxy nested in args / kwargs, or None."""
    found = []

    def visit(a):
        if found:
            return
        if isinstance(a, Proxy):
            found.append(a)
        elif isinstance(a, (tuple, list)):
            for e in a:
                visit(e)
        elif isinstance(a, dict):
            for e in a.values():
                visit(e)
        elif isinstance(a, slice):
            visit((a.start, a.stop, a.step))
    visit(args)
    visit(kwargs)
    return found[0] if found else None


def recording_wrapper(fn, is_wrapped=False, functional=None, node_name=None, call=None):
    """A function that records a call_function node of `fn` when given a Proxy, else calls `fn`
    (`functional`: its torch name, by which torch's Python functions record their calls in a fixed form
    (``torch.nn.functional.relu``: ``inplace`` always a keyword); `node_name`: the name
    torch gives the node, ``linalg_vector_norm`` for torch.linalg.vector_norm; `call`: what a call without a
    Proxy runs, when not `fn`)."""
    key = (id(fn), is_wrapped, functional, node_name, id(call))
    run = fn if call is None else call
    cached = _WRAPPERS.get(key)
    if cached is not None and cached[1] is fn and cached[2] is call:
        return cached[0]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        proxy = find_proxy(args, kwargs)
        if proxy is None:
            return run(*args, **kwargs)
        if functional is not None:
            if functional in FUNCTIONAL_AS_METHOD and len(args) == 1 and not kwargs:
                return proxy.tracer.create_proxy("call_method", FUNCTIONAL_AS_METHOD[functional], args, {})
            args, kwargs = normalize_call(fn, functional, args, kwargs)
        out = proxy.tracer.create_proxy("call_function", fn, args, kwargs, name=node_name)
        if is_wrapped:
            out.node.meta["is_wrapped"] = True
        return out
    wrapper.__fx_original__ = fn
    _WRAPPERS[key] = (wrapper, fn, call)
    return wrapper


_INNER = {}     # id(function a public one wraps, e.g. ops.unary.tanh under glassgrad.tanh) -> (it, the public one)


def wrapper_for(fn):
    """The recording wrapper of one of the patched namespaces' functions (as its torch name says), or None.
    A function a public one wraps records the public one (``node.target is glassgrad.tanh``)."""
    call = None
    inner = _INNER.get(id(fn))
    if inner is not None and inner[0] is fn:
        call, fn = fn, inner[1]
    q = QUALNAMES.get(id(fn))
    if q is None or q[1] is not fn:
        return None
    path, _, name = q[0].rpartition(".")
    functional = q[0]
    short = path.rpartition(".")[2]
    node_name = f"{short}_{name}" if path in ("torch.special", "torch.linalg", "torch.fft") else None
    return recording_wrapper(fn, functional=functional, node_name=node_name, call=call)


def _recordable(obj):
    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, functools.partial)) and \
        not isinstance(obj, type)


_CACHE = []


def _namespace_functions():
    """[(module, name, function, nn.functional name, node name)] of every public function of the patched
    namespaces (computed once); fills QUALNAMES."""
    if not _CACHE:
        _CACHE.append(_collect_namespace_functions())
    return _CACHE[0]


def qualified(fn):
    """torch's qualified name of one of the patched namespaces' functions, or None."""
    _namespace_functions()
    q = QUALNAMES.get(id(fn))
    return q[0] if q is not None and q[1] is fn else None


def torch_type_name(cls):
    """How torch names a class of its own: ``torch.Tensor`` for glassgrad.Tensor (torch's top-level classes
    live in module ``torch``), ``torch.nn.modules.linear.Linear`` for glassgrad.nn.Linear (its module path);
    None for a class not glassgrad's."""
    import glassgrad
    name = getattr(cls, "__name__", None)
    if name is None:
        return None
    if getattr(glassgrad, name, None) is cls:
        return f"torch.{name}"
    mod = getattr(cls, "__module__", "") or ""
    if mod.startswith("glassgrad."):
        return f"torch.{mod[len('glassgrad.'):]}.{cls.__qualname__}"
    return None


def _collect_namespace_functions():
    import glassgrad
    out = []
    for modname, torchname in _NAMESPACES:
        mod = importlib.import_module(modname)
        names = [n for n in dir(mod) if not n.startswith("_")]
        if mod is glassgrad:
            names += list(glassgrad._LAZY_OPS) + list(glassgrad._TORCH_NN) + list(glassgrad._FROM_FUNCTIONAL)
            names.append("_assert")
        for name in dict.fromkeys(names):
            if name in _NOT_RECORDED or (torchname == "torch.nn.functional" and name in _TRACED_THROUGH):
                continue
            try:
                fn = getattr(mod, name)
            except AttributeError:
                continue
            fn = getattr(fn, "__fx_original__", fn)
            if _recordable(fn):
                prev = QUALNAMES.get(id(fn))
                # a function glassgrad shares between torch.* and F that torch keeps apart: F's name
                if not (prev is not None and prev[1] is fn and prev[0] == f"torch.nn.functional.{name}"
                        and name in FUNCTIONAL_CALL_FORMS):
                    QUALNAMES[id(fn)] = (f"{torchname}.{name}", fn)
                inner = getattr(fn, "__wrapped__", None)
                if inner is not None and id(inner) not in QUALNAMES:
                    _INNER[id(inner)] = (inner, fn)
                short = torchname.rpartition(".")[2]
                out.append((mod, name, fn, f"{torchname}.{name}",
                            f"{short}_{name}" if short in ("special", "linalg", "fft") else None))
    return out


class Patcher:
    """Sets attributes and dict entries, remembering how to undo each; ``restore`` undoes them in reverse."""

    def __init__(self):
        self._undo = []
        self._seen_globals = set()

    def setattr(self, obj, name, value):
        had = name in vars(obj)
        old = vars(obj).get(name)
        setattr(obj, name, value)
        self._undo.append(lambda: setattr(obj, name, old) if had else delattr(obj, name))

    def setitem(self, d, key, value):
        had, old = key in d, d.get(key)
        d[key] = value

        def undo():
            if had:
                d[key] = old
            else:
                d.pop(key, None)
        self._undo.append(undo)

    def patch_namespaces(self):
        """The public namespaces, then every glassgrad module's global bound to one of their functions (so
        that a forward of glassgrad.nn traced through, ``_U.tanh(input)``, records it too) and the
        ``staticmethod`` class attributes of glassgrad.nn's classes (``Conv2d._fn``)."""
        for mod, name, fn, functional, node_name in _namespace_functions():
            final = QUALNAMES[id(fn)][0]
            if final.startswith("torch.functional."):       # torch.split is torch.functional.split
                functional = final
            self.setattr(mod, name, recording_wrapper(fn, functional=functional, node_name=node_name))
        for modname, mod in list(sys.modules.items()):
            if not modname.startswith("glassgrad.") or modname.startswith("glassgrad.fx") or mod is None:
                continue
            for name, value in list(vars(mod).items()):
                kind = type(value)      # (not isinstance: an object's __class__ read may warn, as reduce_op's)
                if kind is types.FunctionType or kind is types.BuiltinFunctionType:
                    w = wrapper_for(value)
                    if w is not None:
                        self.setattr(mod, name, w)
                elif issubclass(kind, type) and modname.startswith("glassgrad.nn.") and value.__module__ == modname:
                    for attr, sm in list(vars(value).items()):
                        if isinstance(sm, staticmethod):
                            w = wrapper_for(sm.__func__)
                            if w is not None:
                                self.setattr(value, attr, staticmethod(w))

    def patch_globals(self, globs, extra=(), autowrap_ids=frozenset()):
        """Swap, in a function's globals, the glassgrad functions, the `wrap`-ed names in `extra` and the
        functions whose ids are in `autowrap_ids` (math's, by default) for recording wrappers."""
        if id(globs) in self._seen_globals:
            return
        self._seen_globals.add(id(globs))
        for name, value in list(globs.items()):
            q = QUALNAMES.get(id(value))
            if q is not None and q[1] is value:
                self.setitem(globs, name, wrapper_for(value))
            elif id(value) in autowrap_ids and not name.startswith("_") and callable(value):
                self.setitem(globs, name, recording_wrapper(value, is_wrapped=True))
        for g, name in extra:
            if g is globs:
                import builtins
                orig = globs.get(name, getattr(builtins, name, None))
                orig = getattr(orig, "__fx_original__", orig)
                if orig is not None:
                    self.setitem(globs, name, recording_wrapper(orig, is_wrapped=True))

    def patch_instance_functions(self, obj):
        """An object's attributes bound to one of the recorded functions (``self.act = F.gelu``)."""
        d = vars(obj)
        for name, value in list(d.items()):
            if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
                w = wrapper_for(value)
                if w is not None:
                    self.setitem(d, name, w)

    def patch_tensor_methods(self):
        """Tensor's methods and binary operators, called on a Tensor with a Proxy argument, record the
        call_method torch records (``tensor.add(proxy)``, ``tensor * proxy`` -> ``mul``)."""
        from .._tensor import Tensor
        for dunder, method in _TENSOR_BINARY.items():
            orig = getattr(Tensor, dunder, None)
            if orig is not None:
                self.setattr(Tensor, dunder, _tensor_method(orig, method))
        for name in dir(Tensor):
            if name.startswith("_"):
                continue
            orig = inspect.getattr_static(Tensor, name, None)
            if isinstance(orig, types.FunctionType):
                self.setattr(Tensor, name, _tensor_method(orig, name))

    def restore(self):
        while self._undo:
            self._undo.pop()()


def _tensor_method(orig, method):
    @functools.wraps(orig)
    def op(self, *args, **kwargs):
        proxy = find_proxy(args, kwargs)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_method", method, (self,) + args, kwargs)
        return orig(self, *args, **kwargs)
    return op
