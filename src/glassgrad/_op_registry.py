"""torch.ops: the operator registry that torch.library fills, as namespaces of callable operators.

``torch.ops.<ns>.<name>`` is an ``OpOverloadPacket`` and ``.default`` (or another overload name) its
``OpOverload``; calling either checks the arguments against the operator's schema (torch's errors: a missing
argument, a wrong type, too many positional arguments, an unknown keyword) and runs the kernel registered for
the inputs' device (``CPU`` / ``CUDA``), else the ``CompositeExplicitAutograd`` / ``CompositeImplicitAutograd``
one, else raises torch's "Could not run" error. An ``Autograd`` kernel, when registered, runs first.
``torch.ops.aten.<name>`` resolves to glassgrad's ``torch.<name>`` function (every overload calls it).

``glassgrad.ops`` is also the package of op families; ``install()`` gives that module a ``__getattr__`` (its
class becomes ``_OpsModule``), so an attribute that is no family module is an operator namespace and the
families stay untouched.
"""
import importlib.util
import re
import sys
import types

_OPS = {}            # "ns::name" -> {overload name: OpOverload}
_DEFINED_BY = {}     # namespace -> the Library that DEF-ined it


# -- schemas ---------------------------------------------------------------------------------------
class Argument:
    __slots__ = ("type", "name", "default", "kwarg_only", "mutable")

    def __init__(self, type, name, default, kwarg_only, mutable):
        self.type, self.name, self.default, self.kwarg_only, self.mutable = type, name, default, kwarg_only, mutable


def _fmt_default(text):
    """A default as torch's declaration prints it (floats the C++ way: 2.0 -> '2.')."""
    try:
        f = float(text)
    except ValueError:
        return text
    if re.fullmatch(r"-?\d+", text):
        return text
    return f"{int(f)}." if f.is_integer() else repr(f)


class FunctionSchema:
    """A parsed ``name.overload(Type arg=default, *, ...) -> Returns``."""

    def __init__(self, text, qualname=None):
        m = re.fullmatch(r"\s*([\w:]*)(?:\.(\w+))?\s*\((.*)\)\s*->\s*(.+?)\s*", text)
        if m is None:
            raise RuntimeError(f"Expected a function schema, got: {text!r}")
        self.name = qualname or m[1]
        self.overload_name = m[2] or ""
        self.arguments = []
        kw = False
        for part in _split(m[3]):
            if part == "*":
                kw = True
                continue
            am = re.fullmatch(r"(.+?)\s+(\w+)(?:\s*=\s*(.+))?", part)
            if am is None:
                raise RuntimeError(f"Could not parse the argument {part!r} of the schema {text!r}")
            self.arguments.append(Argument(am[1].strip(), am[2], am[3], kw, "!" in am[1]))
        self.returns = m[4]

    def __str__(self):
        ov = f".{self.overload_name}" if self.overload_name else ""
        parts, kw = [], False
        for a in self.arguments:
            if a.kwarg_only and not kw:
                parts.append("*")
                kw = True
            parts.append(f"{a.type} {a.name}" + ("" if a.default is None else f"={_fmt_default(a.default)}"))
        return f"{self.name}{ov}({', '.join(parts)}) -> {self.returns}"

    __repr__ = __str__


def _split(args):
    """Split an argument list at top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in args:
        depth += ch in "([" and 1 or (ch in ")]" and -1 or 0)
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _type_ok(ty, v):
    """Whether torch's argument parser takes ``v`` for schema type ``ty``."""
    from ._tensor import Tensor
    ty = re.sub(r"\([^)]*\)", "", ty)
    if ty.endswith("?"):
        return v is None or _type_ok(ty[:-1], v)
    if ty.endswith("[]"):
        return isinstance(v, (list, tuple)) and all(_type_ok(ty[:-2], x) for x in v)
    if ty == "Tensor":
        return isinstance(v, Tensor)
    if ty == "float":
        return isinstance(v, (int, float)) or (isinstance(v, Tensor) and v.dim() == 0)
    if ty in ("int", "SymInt", "bool"):
        return isinstance(v, int) or (isinstance(v, Tensor) and v.dim() == 0 and not v.is_floating_point())
    if ty == "str":
        return isinstance(v, str)
    return True


def _py_type(ty):
    """A schema type as torch's argument errors name it: Tensor? -> Optional[Tensor], int[] -> List[int]."""
    ty = re.sub(r"\([^)]*\)", "", ty)
    if ty.endswith("?"):
        return f"Optional[{_py_type(ty[:-1])}]"
    if ty.endswith("[]"):
        return f"List[{_py_type(ty[:-2])}]"
    return "int" if ty == "SymInt" else ty


def normalize(schema, args, kwargs):
    """The call's arguments as the kernel receives them (keywords given for positional parameters become
    positional), checked against the schema with torch's errors."""
    decl = str(schema)
    pos = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(pos):
        if len(pos) < len(schema.arguments):
            raise RuntimeError(f"{schema.name}() takes {len(pos)} positional argument(s) but {len(args)} was/were "
                               f"given.  Declaration: {decl}")
        raise RuntimeError(f"{schema.name}() expected at most {len(pos)} argument(s) but received {len(args)} "
                           f"argument(s). Declaration: {decl}")
    known = {a.name for a in schema.arguments}
    for k in kwargs:
        if k not in known:
            raise RuntimeError(f"Unknown keyword argument '{k}' for operator '{schema.name}'. Schema: {decl}")
    args, kwargs = list(args), dict(kwargs)
    for i, a in enumerate(pos[len(args):], len(args)):
        if a.name in kwargs:
            if len(args) != i:
                break
            args.append(kwargs.pop(a.name))
    given = dict(zip((a.name for a in pos), args)) | kwargs
    for i, a in enumerate(schema.arguments):
        if a.name not in given:
            if a.default is None:
                raise RuntimeError(f"{schema.name}() is missing value for argument '{a.name}'. Declaration: {decl}")
            continue
        v = given[a.name]
        if not _type_ok(a.type, v):
            from ._tensor import Tensor
            base = a.type.split("(")[0].rstrip("?") if "(" in a.type else a.type.rstrip("?")
            detail = f"Unable to cast {v!r} to Tensor" if base == "Tensor" and not isinstance(v, Tensor) \
                else f"Unable to cast Python instance of type {type(v)}"
            raise RuntimeError(f"{schema.name}() Expected a value of type '{_py_type(a.type)}' for argument '{a.name}' but "
                               f"instead found type '{type(v).__name__}'.\nPosition: {i}\nValue: {v!r}\n"
                               f"Declaration: {decl}\nCast error details: {detail}")
    return tuple(args), kwargs


# -- operators -------------------------------------------------------------------------------------
def _device_key(args, kwargs):
    from ._tensor import Tensor
    for v in (*args, *kwargs.values()):
        items = v if isinstance(v, (list, tuple)) else (v,)
        for t in items:
            if isinstance(t, Tensor):
                return "CUDA" if t.device.type == "cuda" else "CPU"
    return "CPU"


class OpOverload:
    """One overload of an operator: its schema and its kernels by dispatch key."""

    def __init__(self, packet, overload, schema):
        self._packet, self._overloadname, self._schema = packet, overload, schema
        self._kernels = {}
        self._autocast = {}           # device type -> the dtype register_autocast casts floating inputs to
        self.namespace = packet._ns
        self.__name__ = f"{packet._name}.{overload}"
        self.__qualname__ = self.__name__
        self.overloadpacket = packet
        self.op = self

    def name(self):
        return self._schema.name + (f".{self._schema.overload_name}" if self._schema.overload_name else "")

    def __repr__(self):
        return f"<OpOverload(op='{self._packet._ns}.{self._packet._name}', overload='{self._overloadname}')>"

    def __str__(self):
        return f"{self._packet._ns}.{self._packet._name}.{self._overloadname}"

    def __hash__(self):
        return id(self)

    def _kernel(self, args, kwargs):
        k = self._kernels
        for key in ("Autograd", _device_key(args, kwargs), "CompositeExplicitAutograd", "CompositeImplicitAutograd"):
            if key in k and k[key] is not fallthrough_kernel:
                return k[key]
        return None

    def __call__(self, *args, **kwargs):
        args, kwargs = normalize(self._schema, args, kwargs)
        if self._autocast:
            cast = _autocast_call(self, args, kwargs)
            if cast is not _NO_CAST:
                return cast
        fn = self._kernel(args, kwargs)
        if fn is None:
            key = _device_key(args, kwargs)
            raise NotImplementedError(
                f"Could not run '{self._schema.name}' with arguments from the '{key}' backend. This could be "
                "because the operator doesn't exist for this backend, or was omitted during the selective/custom "
                "build process (if using custom build).")
        return fn(*args, **kwargs)


def fallthrough_kernel():
    """A kernel that passes the call on to the next dispatch key (``Library.impl(name, fallthrough_kernel, key)``)."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


_NO_CAST = object()


def _cast(value, device_type, dtype):
    from ._tensor import Tensor
    if isinstance(value, Tensor):
        ok = value.is_floating_point() and value.device.type == device_type and str(value.dtype) != "torch.float64"
        return value.to(dtype) if ok else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def _autocast_call(op, args, kwargs):
    """register_autocast's rule: inside autocast for the device, floating inputs (not float64) cast to its dtype and
    the op run with autocast off."""
    from .amp._state import is_autocast_enabled
    from .amp.autocast_mode import autocast
    for dev, dtype in op._autocast.items():
        if is_autocast_enabled(dev):
            if kwargs:
                raise AssertionError("Custom ops do not support kwargs yet.")
            with autocast(dev, enabled=False):
                return op(*_cast(args, dev, dtype))
    return _NO_CAST


class OpOverloadPacket:
    """An operator by name: callable (its default overload) with its overloads as attributes."""

    def __init__(self, ns, name):
        self._ns, self._name = ns, name
        self._qualified_op_name = f"{ns}::{name}"
        self.__name__ = name
        self._overloads = {}

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._ns}.{self._name}')>"

    def __str__(self):
        return f"{self._ns}.{self._name}"

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        ov = self.__dict__["_overloads"].get(name)
        if ov is None:
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{name}'")
        return ov

    def __call__(self, *args, **kwargs):
        ov = self._overloads.get("default") or next(iter(self._overloads.values()))
        return ov(*args, **kwargs)


class _AtenOp:
    """torch.ops.aten.<name>: glassgrad's torch.<name>; its overloads (``.default``, ``.Tensor``) call it."""

    def __init__(self, name, fn, overload=None):
        self._name, self._fn, self._overload = name, fn, overload
        self.__name__ = name if overload is None else f"{name}.{overload}"

    def __repr__(self):
        if self._overload is None:
            return f"<OpOverloadPacket(op='aten.{self._name}')>"
        return f"<OpOverload(op='aten.{self._name}', overload='{self._overload}')>"

    def __str__(self):
        return f"aten.{self.__name__}"

    def __getattr__(self, name):
        if name.startswith("_") or self._overload is not None:
            raise AttributeError(name)
        return _AtenOp(self._name, self._fn, name)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)


class _OpNamespace(types.ModuleType):
    """torch.ops.<ns>: its operators as attributes."""

    def __init__(self, ns):
        super().__init__(f"torch.ops.{ns}")
        self.name = ns
        self._packets = {}

    def __repr__(self):
        return f"<module 'torch.ops.{self.name}' from 'torch.ops'>"

    def __getattr__(self, op):
        if op.startswith("__"):
            raise AttributeError(op)
        p = self.__dict__["_packets"].get(op)
        if p is not None:
            return p
        if self.name == "aten" and _ATEN_RESOLVER:
            fn = _ATEN_RESOLVER[0](op) if not op.startswith("_") else None
            if callable(fn) and not isinstance(fn, (type, types.ModuleType)):
                return _AtenOp(op, fn)
        raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op}'")


_NAMESPACES = {}
_ATEN_RESOLVER = []      # the torch namespace's name lookup (glassgrad/__init__ hands it to install())


def namespace(ns):
    if ns not in _NAMESPACES:
        _NAMESPACES[ns] = _OpNamespace(ns)
    return _NAMESPACES[ns]


def define(qualname, schema_text):
    """Register an operator (``ns::name``) with its schema; its OpOverload."""
    ns, _, rest = qualname.partition("::")
    name, _, overload = rest.partition(".")
    schema = FunctionSchema(schema_text, qualname if "(" not in qualname else None)
    schema.name, schema.overload_name = f"{ns}::{name}", overload
    key = f"{ns}::{name}"
    ovs = _OPS.setdefault(key, {})
    if (overload or "default") in ovs:
        raise RuntimeError(f"Tried to register an operator ({schema}) with the same name and overload name "
                           "multiple times. Each overload's schema should only be registered with a single call to "
                           "def(). Duplicate registration: registered at /dev/null:0. Original registration: "
                           "registered at /dev/null:0")
    nsobj = namespace(ns)
    packet = nsobj._packets.get(name) or OpOverloadPacket(ns, name)
    nsobj._packets[name] = packet
    op = OpOverload(packet, overload or "default", schema)
    packet._overloads[overload or "default"] = op
    ovs[overload or "default"] = op
    return op


def lookup(qualname):
    """The OpOverload of ``ns::name[.overload]`` or None."""
    ns_name, _, overload = qualname.partition(".")
    return _OPS.get(ns_name, {}).get(overload or "default")


# -- glassgrad.ops doubles as torch.ops ------------------------------------------------------------
class _OpsModule(types.ModuleType):
    """glassgrad.ops: the op-family package, and torch.ops's namespaces for any other attribute."""

    def __getattr__(self, name):
        if name.startswith("__") or importlib.util.find_spec(f"{self.__name__}.{name}") is not None:
            raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")
        ns = namespace(name)
        setattr(self, name, ns)          # found directly from now on
        return ns


def install(resolve_aten):
    """Make glassgrad.ops answer torch.ops's namespaces; ``resolve_aten(name)`` finds torch.<name>."""
    _ATEN_RESOLVER[:] = [resolve_aten]
    mod = sys.modules["glassgrad.ops"]
    if type(mod) is types.ModuleType:
        mod.__class__ = _OpsModule
