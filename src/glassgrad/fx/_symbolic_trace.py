"""torch.fx.symbolic_trace and Tracer: run a module's forward on Proxies and record what it does."""

import collections
import copy
import inspect
import math
import types
import warnings

import glassgrad

from ._patch import Patcher, QUALNAMES
from .graph import Graph
from .node import has_side_effect
from .proxy import ParameterProxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "ProxyableClassMeta"]

_wrapped_fns_to_patch = []       # (globals dict, name) registered by wrap()


def _assert_is_none(value, msg):
    assert value is None, msg


has_side_effect(_assert_is_none)
has_side_effect(glassgrad._assert)
QUALNAMES[id(_assert_is_none)] = ("torch.fx._symbolic_trace._assert_is_none", _assert_is_none)


class PHBase:
    """A placeholder marker inside concrete_args: that leaf stays a graph input."""

    def __repr__(self):
        return "PH"


PH = PHBase()


class ProxyableClassMeta(type):
    """A metaclass whose classes, constructed with a Proxy argument while tracing, are recorded as one call."""

    def __call__(cls, *args, **kwargs):
        from ._patch import find_proxy
        proxy = find_proxy(args, kwargs)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_function", cls, args, kwargs)
        return super().__call__(*args, **kwargs)


def wrap(fn_or_name):
    """Called at module scope: calls of this global function are recorded as one call_function node while
    tracing (it is not traced through)."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    if callable(fn_or_name):
        if isinstance(fn_or_name, str):
            raise AssertionError("fn_or_name must be a global function or string name")
        fn_name = fn_or_name.__name__
    else:
        fn_name = fn_or_name
    currentframe = inspect.currentframe()
    f = currentframe.f_back
    if f.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch.append((f.f_globals, fn_name))
    return fn_or_name


QUALNAMES[id(wrap)] = ("torch.fx._symbolic_trace.wrap", wrap)


class Tracer(TracerBase):
    """Records the operations a module's forward performs on Proxies into a Graph.

    Subclass it and override ``is_leaf_module`` (which modules stay call_module nodes), ``call_module``,
    ``create_proxy`` / ``create_node`` or ``create_arg`` as torch.fx users do."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        # the public functions of these modules (and these functions) are recorded as one call_function node
        # when called with a Proxy from a traced forward's globals or through the module (math.sqrt(size))
        self._autowrap_function_ids = {id(value) for m in autowrap_modules for name, value in m.__dict__.items()
                                       if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root = None
        self.graph = None
        self.tensor_attrs = {}
        self._tensor_keep = []
        self.scope = None
        self.proxy_buffer_attributes = True
        self.module_stack = collections.OrderedDict()     # path -> (qualified name, type) of the modules entered
        self.num_calls = {}

    # ---- overridable policy
    def is_leaf_module(self, m, module_qualified_name):
        """Modules of glassgrad.nn (but Sequential) are leaves: one call_module node, not traced through."""
        from ..nn import Sequential
        mod = type(m).__module__
        return (mod.startswith("glassgrad.nn") or mod.startswith("torch.nn")) and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        """The qualified name of `mod` in the root module."""
        if self.submodule_paths:
            path = self.submodule_paths.get(id(mod))
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        """A leaf module becomes a call_module node; another is traced through (its forward runs on Proxies)."""
        module_qualified_name = self.path_of_module(m)
        num_calls = self.num_calls.get(module_qualified_name, 0)
        module_key = f"{module_qualified_name}@{num_calls}" if num_calls > 0 else module_qualified_name
        self.module_stack[module_key] = (module_qualified_name, type(m))
        self.num_calls[module_qualified_name] = num_calls + 1
        try:
            if not self.is_leaf_module(m, module_qualified_name):
                return forward(*args, **kwargs)
            return self.create_proxy("call_module", module_qualified_name, args, kwargs)
        finally:
            self.module_stack.popitem(last=True)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        """TracerBase.create_proxy, the node's ``meta["nn_module_stack"]`` recording the modules it is in."""
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)
        if self.module_stack and kind not in ("placeholder", "output"):
            proxy.node.meta["nn_module_stack"] = copy.copy(self.module_stack)
        return proxy

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """A parameter (or buffer) read in a traced forward becomes a get_attr node (one per name)."""
        from .._tensor import Tensor
        from ..nn import Parameter

        def lookup(collection):
            for n, p in collection:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        factory = None
                        if self.param_shapes_constant and isinstance(attr_val, Parameter):
                            def factory(node, n=n):
                                return ParameterProxy(self, node, n, attr_val)
                        parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {},
                                                                     proxy_factory_fn=factory)
                    return parameter_proxy_cache[n]
            return None
        if isinstance(attr_val, Parameter):
            found = lookup(self.root.named_parameters())
            if found is not None:
                return found
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            found = lookup(self.root.named_buffers())
            if found is not None:
                return found
        return attr_val

    def create_arg(self, a):
        """Parameters of the root become get_attr nodes; other tensors become ``_tensor_constant<i>``
        attributes of the root; modules are named by their path; the rest as TracerBase.create_arg."""
        from .._tensor import Tensor
        from ..nn import Module, Parameter
        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            return self._constant(a, "_param_constant")
        if isinstance(a, Module):
            for n, p in self.root.named_modules():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            return self._constant(a, "_tensor_constant")
        if isinstance(a, type) and a.__module__.startswith("glassgrad"):
            return a
        return super().create_arg(a)

    def _constant(self, a, prefix):
        qualname = self.tensor_attrs.get(id(a))
        if qualname is None:
            i = 0
            while hasattr(self.root, f"{prefix}{i}"):
                i += 1
            qualname = f"{prefix}{i}"
            self.tensor_attrs[id(a)] = qualname
            self._tensor_keep.append(a)
            setattr(self.root, qualname, a)
        return self.create_node("get_attr", qualname, (), {})

    # ---- the trace
    def _collect_tensor_attrs(self, m, prefix_atoms):
        from .._tensor import Tensor
        for k, v in m.__dict__.items():
            if isinstance(v, Tensor):
                self.tensor_attrs[id(v)] = ".".join(prefix_atoms + [k])
                self._tensor_keep.append(v)
        for k, v in m.named_children():
            self._collect_tensor_attrs(v, prefix_atoms + [k])

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """The Proxies (and concrete values) the root function is called with: one placeholder a parameter."""
        code = root_fn.__code__
        total_args = code.co_argcount + code.co_kwonlyargcount
        names_iter = iter(code.co_varnames)
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            next(names_iter)
            total_args -= 1
        sig = inspect.signature(root_fn)
        arg_names = [next(names_iter) for _ in range(total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got {len(concrete_args)} "
                                   f"concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))
        annotations = getattr(root_fn, "__annotations__", {})
        args = [self._proxy_placeholder(name, concrete_args, sig, annotations) for name in arg_names]
        if code.co_flags & inspect.CO_VARARGS:
            args.append(self.create_proxy("placeholder", "*" + next(names_iter), (), {}))
        if code.co_flags & inspect.CO_VARKEYWORDS:
            args.append(self.create_proxy("placeholder", "**" + next(names_iter), (), {}))
        if code.co_kwonlyargcount or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
            root_fn = _patch_function(root_fn, len(args) + (1 if is_module else 0))
        return root_fn, args

    def _proxy_placeholder(self, name, concrete_args, sig, annotations):
        if concrete_args is not None and name in concrete_args:
            cnt = [0]

            def replace_ph(x):
                cnt[0] += 1
                param = sig.parameters[name]
                default = () if param.default is inspect.Parameter.empty else (param.default,)
                out = self.create_proxy("placeholder", f"{name}_{cnt[0]}", default, {})
                if isinstance(x, PHBase):
                    return out
                if type(x) in (bool, int, float, complex, str):
                    import glassgrad
                    glassgrad._assert(out == x, f"{name} has been specialized to have value {x} but got another value")
                elif x is None:
                    self.create_proxy("call_function", _assert_is_none,
                                      (out, f"{name} has been specialized to have value None but got another value"),
                                      {})
                else:
                    warnings.warn(f"Was not able to add assertion to guarantee correct input {name} to specialized "
                                  f"function. It is up to the user to make sure that your inputs match the inputs "
                                  f"you specialized the function with.", stacklevel=2)
                return x
            return _tree_map(replace_ph, concrete_args[name])
        param = sig.parameters[name]
        default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {}, type_expr=annotations.get(name, None))

    def trace(self, root, concrete_args=None):
        """Trace `root` (a Module or a function) and return its Graph."""
        from ..nn import Module
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            self.submodule_paths = {id(mod): name for name, mod in root.named_modules()}
        else:
            self.root = Module()
            fn = root
        self.graph = Graph(tracer_cls=getattr(self, "__class__", None))
        self.tensor_attrs = {}
        self.module_stack = collections.OrderedDict()
        self.num_calls = {}
        self._collect_tensor_attrs(self.root, [])
        parameter_proxy_cache = {}
        patcher = Patcher()
        tracer = self
        autowrap_ids = self._autowrap_function_ids
        orig_getattr, orig_call = Module.__getattr__, Module.__call__

        def module_getattr_wrapper(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), parameter_proxy_cache)

        def module_call_wrapper(mod, *args, **kwargs):
            def forward(*args, **kwargs):
                return orig_call(mod, *args, **kwargs)
            fwd = getattr(type(mod), "forward", None)
            if fwd is not None and hasattr(fwd, "__globals__"):
                patcher.patch_globals(fwd.__globals__, _wrapped_fns_to_patch, autowrap_ids)
            return tracer.call_module(mod, forward, args, kwargs)
        try:
            patcher.patch_namespaces()
            patcher.patch_tensor_methods()
            patcher.patch_globals(getattr(fn, "__globals__", {}), _wrapped_fns_to_patch, autowrap_ids)
            for module in self._autowrap_search:
                patcher.patch_globals(module.__dict__, (), autowrap_ids)
            for globs, _ in _wrapped_fns_to_patch:
                patcher.patch_globals(globs, _wrapped_fns_to_patch, autowrap_ids)
            for m in self.root.modules():       # self.act = F.gelu: a module attribute holding a function
                patcher.patch_instance_functions(m)
            fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
            patcher.setattr(Module, "__getattr__", module_getattr_wrapper)
            patcher.setattr(Module, "__call__", module_call_wrapper)
            result = fn(self.root, *args) if isinstance(root, Module) else fn(*args)
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=getattr(fn, "__annotations__", {}).get("return", None))
        finally:
            patcher.restore()
        self.submodule_paths = None
        return self.graph


def _patch_function(fn, nargs):
    """`fn` taking its keyword-only, ``*args`` and ``**kwargs`` parameters positionally (each one Proxy)."""
    co = fn.__code__
    flags = co.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    new_code = co.replace(co_flags=flags, co_argcount=nargs, co_kwonlyargcount=0)
    out = types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    out.__annotations__ = getattr(fn, "__annotations__", {})
    return out


def _tree_map(fn, x):
    if isinstance(x, (list, tuple)):
        return type(x)(_tree_map(fn, e) for e in x)
    if isinstance(x, dict):
        return {k: _tree_map(fn, v) for k, v in x.items()}
    return fn(x)


def symbolic_trace(root, concrete_args=None):
    """Trace `root` (a Module or a function) into a GraphModule whose forward computes what root's did."""
    from .graph_module import GraphModule
    from ..nn import Module
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)


