"""torch.library: user-defined operators, eager.

``custom_op("ns::name", mutates_args=...)`` turns a typed Python function into an operator (its schema inferred
from the annotations, as torch's ``infer_schema``), callable directly and as ``torch.ops.ns.name``;
``register_autograd(backward, setup_context=...)`` gives it a gradient (an autograd node named as torch's,
``GeneratedBackwardFor_ns_name_defaultBackward``), ``register_kernel`` a per-device implementation,
``register_fake`` its shape function (kept: glassgrad never traces, so it is not called). ``Library(ns, kind)``,
``define`` and ``impl`` are the lower-level registration. The registry is ``_op_registry``.
"""
import re
import warnings

from . import _op_registry as _reg
from ._op_registry import fallthrough_kernel  # noqa: F401
from ._device import device as _device_cls

__all__ = ["Library", "impl", "define", "fallthrough_kernel", "impl_abstract", "register_autocast", "register_fake",
           "register_kernel", "register_autograd", "custom_op", "infer_schema"]

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "default": "CompositeExplicitAutograd", None: "CompositeExplicitAutograd"}
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_PENDING = {}          # kernels registered before their operator's def(): qualname -> {key: fn}


def _split_qualname(qualname):
    if not isinstance(qualname, str) or "::" not in qualname:
        raise ValueError(f'Expected `qualname` to be of the form "namespace::name", but got {qualname}. The qualname '
                         "passed to the torch.library APIs must consist of a namespace and a name, e.g. aten::sin")
    return qualname.split("::", 1)


class Library:
    """A handle for registering operators of namespace ``ns``: kind "DEF" (the namespace's one definition
    block), "IMPL" (kernels only) or "FRAGMENT" (both, any number of times)."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        if kind == "DEF" and (ns == "aten" or ns in _reg._DEFINED_BY):
            raise RuntimeError(
                f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all of your "
                "definitions in a single TORCH_LIBRARY block.  If you were trying to specify implementations, "
                "consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to define "
                "operators for a single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to "
                "explicitly indicate this.")
        if kind == "DEF":
            _reg._DEFINED_BY[ns] = self
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._op_defs = set()

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Define an operator of this namespace from ``"name(Type arg, ...) -> Ret"``; its name."""
        name = schema.split("(", 1)[0].strip()
        if self.kind == "IMPL":
            raise RuntimeError(f'def("{name}"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL block.  '
                               "All def()s should be placed in the (unique) TORCH_LIBRARY block for their namespace.")
        op = _reg.define(f"{self.ns}::{name}", schema)
        base = name.split(".")[0]
        for key, fn in _PENDING.pop(f"{self.ns}::{base}", {}).items():
            op._kernels[key] = fn
        self._op_defs.add(f"{self.ns}::{name}")
        return base

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        """Register ``fn`` as the kernel of ``op_name`` (this namespace's) for ``dispatch_key`` ("CPU", "CUDA",
        "CompositeImplicitAutograd", "CompositeExplicitAutograd", "Autograd"; default: the library's key)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        name = op_name if isinstance(op_name, str) else op_name._schema.name.split("::")[1]
        _register_kernel(f"{self.ns}::{name}" if "::" not in name else name, key, fn)

    def _destroy(self):
        if _reg._DEFINED_BY.get(self.ns) is self:
            del _reg._DEFINED_BY[self.ns]


def _register_kernel(qualname, key, fn):
    op = _reg.lookup(qualname)
    if op is None:
        _PENDING.setdefault(qualname.split(".")[0], {})[key] = fn
    else:
        op._kernels[key] = fn


def define(qualname, schema, *, lib=None, tags=()):
    """Define the operator ``ns::name`` with schema ``"(Tensor x) -> Tensor"``."""
    ns, name = _split_qualname(qualname)
    if not re.fullmatch(r"\s*\(.*\)\s*->.+", schema or ""):
        raise ValueError(f'define(qualname, schema, ...): expected schema to look like e.g. "(Tensor x) -> Tensor" '
                         f'but got "{schema}"')
    (lib or Library(ns, "FRAGMENT")).define(name + schema, tags=tags)


def _keys(types):
    types = [types] if isinstance(types, str) or types is None else list(types)
    out = []
    for t in types:
        if t in _DEVICE_KEYS:
            out.append(_DEVICE_KEYS[t])
        elif isinstance(t, str) and t[:1].isupper():
            out.append(t)                             # a dispatch key
        else:
            _device_cls(t)                            # torch's error for an unknown device type
            out.append(t.upper())
    return out


def impl(qualname, types, func=None, *, lib=None):
    """Register a kernel of ``ns::name`` for device types ("cpu", "cuda", "default") or dispatch keys; also
    the older ``impl(lib, name, dispatch_key)`` decorator form."""
    if isinstance(qualname, Library):
        library, name, key = qualname, types, func

        def register_lib(fn):
            library.impl(name, fn, key or "")
            return fn
        return register_lib
    _split_qualname(qualname)

    def register(fn):
        for key in _keys(types):
            _register_kernel(qualname, key, fn)
        return fn
    return register if func is None else register(func)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1):
    """Register the operator's fake (meta) implementation; glassgrad runs eagerly and never calls it."""
    if isinstance(op, CustomOpDef):
        return op.register_fake(func) if func is not None else op.register_fake
    qualname = op if isinstance(op, str) else op._schema.name
    _split_qualname(qualname)

    def register(fn):
        _FAKES[qualname] = fn
        return fn
    return register if func is None else register(func)


_FAKES = {}


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    warnings.warn("`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. Please use that "
                  "instead; we will remove `torch.library.impl_abstract` in a future version of PyTorch.",
                  FutureWarning, stacklevel=2)
    return register_fake(qualname, func, lib=lib)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """A kernel of a custom op for the given device type(s)."""
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    return impl(op if isinstance(op, str) else op._schema.name, device_types, func, lib=lib)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """The gradient formula of a custom op (see CustomOpDef.register_autograd)."""
    if isinstance(op, str):
        op = _CUSTOM.get(op.split(".")[0])
    elif not isinstance(op, CustomOpDef):
        op = _CUSTOM.get(op._schema.name)
    if op is None:
        raise RuntimeError("register_autograd: glassgrad registers gradients for torch.library.custom_op "
                           "operators only")
    op.register_autograd(backward, setup_context=setup_context)


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """Inside ``autocast(device_type)``, the op's floating inputs (float64 excepted) are cast to ``cast_inputs``
    and the op runs with autocast off."""
    from .amp.autocast_mode import is_autocast_available
    if isinstance(op, str):
        ns, name = _split_qualname(op)
        getattr(_reg.namespace(ns), name.split(".")[0])            # torch's AttributeError for an unknown op
        op = _CUSTOM.get(op.split(".")[0]) or _reg.lookup(op)
    if not isinstance(device_type, str):
        raise TypeError(f"_is_autocast_available(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    if not is_autocast_available(device_type):
        raise ValueError(f"Device type '{device_type}' does not support autocast.")
    if isinstance(op, CustomOpDef):
        return op.register_autocast(device_type, cast_inputs)
    op._autocast[device_type] = cast_inputs
    return None


from ._custom_op import CustomOpDef, custom_op, infer_schema, _CUSTOM  # noqa: E402,F401
