"""torch.fx.Proxy: the stand-in value symbolic tracing passes through user code; each operation on it records a
Node in the tracer's graph."""

import dis
import inspect
import operator

from .node import Node, map_aggregate

__all__ = ["Proxy", "Attribute", "ParameterProxy", "TraceError", "TracerBase", "GraphAppendingTracer"]


class TraceError(ValueError):
    pass


class TracerBase:
    """What a Proxy needs of its tracer: create_proxy / create_node / create_arg and the control-flow hooks."""
    graph = None

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        """Record a node of `kind` calling `target` on the recorded form of `args` / `kwargs`; its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise AssertionError("create_proxy: args must be a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """The graph form of a value: Proxies become their Nodes, containers are mapped, constants kept."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, tuple):
            if hasattr(a, "_fields"):
                return type(a)(*(self.create_arg(e) for e in a))
            return tuple(self.create_arg(e) for e in a)
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot contain a Node. Got key: {k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, Node) or a is None or a is ... or isinstance(a, (str, int, float, bool, complex)):
            return a
        from .._dtype import dtype
        from .._device import device
        if isinstance(a, (dtype, device)) or type(a).__name__ in ("memory_format", "layout", "Size"):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop or"
                         " as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
                         "more detailed explanation of what types of control flow can be traced, and check out the"
                         " Proxy docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj):
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing graph (for building graphs with Proxies by hand)."""

    def __init__(self, graph):
        self.graph = graph


class Proxy:
    """The value of a Node while tracing: operators, attribute reads and method calls on it record nodes."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k in ("node", "tracer"):      # not yet set (unpickling, copying): no recorded attribute
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        raise RuntimeError("Proxy objects cannot be deep-copied while tracing")

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe().f_back
        calling = frame.f_code
        inst = next((i for i in dis.get_instructions(calling) if i.offset >= frame.f_lasti), None)
        if inst is not None and inst.opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(inst.argval))
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")


class Attribute(Proxy):
    """``proxy.attr``: a getattr node made when the value is used, or a call_method node when it is called."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """The Proxy of a parameter when the tracer's ``param_shapes_constant`` is set: its shape, size, dim, ndim,
    numel and nelement are the parameter's (so tests on them do not stop the trace)."""

    def __init__(self, tracer, node, name, param):
        from ..nn import Parameter
        super().__init__(node, tracer)
        if not isinstance(param, Parameter):
            raise AssertionError(f"Expected Parameter, got {type(param)}")
        self.param = param
        self.name = name

    def __repr__(self):
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self):
        return self.param.size()

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


# operator name -> the format that generated code writes it with (torch's magic_methods)
reflectable_magic_methods = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}", "truediv": "{} / {}",
    "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}", "lshift": "{} << {}", "rshift": "{} >> {}",
    "and_": "{} & {}", "or_": "{} | {}", "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
magic_methods = dict(reflectable_magic_methods, eq="{} == {}", ne="{} != {}", lt="{} < {}", gt="{} > {}",
                     le="{} <= {}", ge="{} >= {}", pos="+{}", neg="-{}", invert="~{}")
inplace_methods = {"iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}",
                   "imod": "{} %= {}", "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}",
                   "ipow": "{} **= {}", "irshift": "{} >>= {}", "isub": "{} -= {}", "itruediv": "{} /= {}",
                   "ixor": "{} ^= {}", "setitem": "{}[{}] = {}"}


def _magic(name):
    target = getattr(operator, name)

    def impl(*args, **kwargs):
        return args[0].tracer.create_proxy("call_function", target, args, kwargs)
    impl.__name__ = name
    return impl


def _reflected(name):
    target = getattr(operator, name)

    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})
    impl.__name__ = f"__r{name.strip('_')}__"
    return impl


for _name in magic_methods:
    if _name == "div":
        continue        # operator has no div in Python 3: truediv is the one
    setattr(Proxy, f"__{_name.strip('_')}__", _magic(_name))
for _name in reflectable_magic_methods:
    if _name == "div":
        continue
    setattr(Proxy, f"__r{_name.strip('_')}__", _reflected(_name))


def map_proxy(fn, a):
    """Apply `fn` to every Proxy in a nested structure."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Proxy) else x)
