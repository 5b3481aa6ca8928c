"""torch.fx.Node: one operation of a Graph, with its arguments, its users and its place in the graph's list."""

import builtins
import operator
import types
import typing

from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect"]

# call_function targets that eliminate_dead_code keeps (torch._assert, the concrete-args checks, has_side_effect)
_side_effectful_functions = {operator.setitem}
# the random functions, kept because they advance the generator's state
_RANDOM_NAMES = ("rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal",
                 "poisson", "bernoulli", "multinomial")


def _is_random_function(fn):
    import glassgrad
    return any(getattr(glassgrad, name, None) is fn for name in _RANDOM_NAMES)


def has_side_effect(fn):
    """Mark `fn` as having a side effect: a call_function node of it is never removed as dead code."""
    _side_effectful_functions.add(fn)
    return fn


def map_aggregate(a, fn):
    """Apply `fn` to every leaf of the nested tuples / lists / dicts / slices in `a`."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(elem, fn) for elem in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)        # a namedtuple keeps its type
    if isinstance(a, list):
        return immutable_list(map_aggregate(elem, fn) for elem in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply `fn` to every Node in the nested structure `a` (other values are kept)."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _qualified_name(func):
    """torch's printed name of a call_function target: operator.add, builtins.getattr, torch.relu, mod.fn."""
    from ._patch import qualified
    q = qualified(func)
    if q is not None:
        return q
    name = func.__name__
    if getattr(builtins, name, None) is func:
        return name
    mod = getattr(func, "__module__", None)
    if mod is None and getattr(operator, name, None) is func:
        mod = "_operator"
    return f"{mod}.{name}" if mod else name


def _format_arg(arg):
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, tuple):
        return "(" + ", ".join(_format_arg(a) for a in arg) + ("," if len(arg) == 1 else "") + ")"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


def _type_repr(t):
    """How torch prints a node's type: builtins by name, classes by their module path (glassgrad's public
    classes by their torch name), typing constructs by their repr."""
    from ._patch import torch_type_name
    if isinstance(t, type):
        if t.__module__ == "builtins":
            return t.__qualname__
        return torch_type_name(t) or f"{t.__module__}.{t.__qualname__}"
    if t is ...:
        return "..."
    if isinstance(t, types.FunctionType):
        return t.__name__
    text = repr(t)
    stack = list(typing.get_args(t))
    while stack:
        a = stack.pop()
        stack.extend(typing.get_args(a))
        name = torch_type_name(a) if isinstance(a, type) else None
        if name is not None:
            text = text.replace(f"{a.__module__}.{a.__qualname__}", name)
    return text


class Node:
    """A node of a Graph: ``op`` (placeholder, get_attr, call_function, call_method, call_module, output),
    ``target``, ``args``, ``kwargs``, a unique ``name``, its ``users`` and a ``meta`` dict for passes."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root"):
            raise AssertionError(f"Unknown op {op}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target).__name__} but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr", "output") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target).__name__} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self.users = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta = {}
        self._args = ()
        self._kwargs = {}
        self._update_args_kwargs(args, kwargs)

    # ---- the linked list
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def prepend(self, x):
        """Insert node `x` before this node (moving it when it is already in the graph)."""
        if self == x:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Insert node `x` after this node."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ---- arguments and uses
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """The Nodes this node's args and kwargs name, in order, each once."""
        return list(self._input_nodes)

    def _update_args_kwargs(self, new_args, new_kwargs):
        for old_use in self._input_nodes:
            old_use.users.pop(self)
        self._input_nodes = {}

        def collect(n):
            self._input_nodes.setdefault(n)
            return n
        self._args = tuple(map_arg(tuple(new_args), collect))
        self._kwargs = map_arg(immutable_dict(new_kwargs), collect)
        for new_use in self._input_nodes:
            new_use.users.setdefault(self)

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx, arg):
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        self.kwargs = {**self.kwargs, key: arg}

    def replace_input_with(self, old_input, new_input):
        """Replace every use of `old_input` among this node's arguments with `new_input`."""
        def swap(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *, propagate_meta=False):
        """Make every user of this node use `replace_with` instead (those `delete_user_cb` accepts); return
        the users changed."""
        if propagate_meta:
            if len(replace_with.meta) != 0:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                                     "but replace_with already has .meta keys")
            replace_with.meta.update(self.meta)
        to_process = list(self.users)
        skipped = []
        for use_node in to_process:
            if not delete_user_cb(use_node):
                skipped.append(use_node)
                continue
            use_node.replace_input_with(self, replace_with)
        return [n for n in to_process if n not in skipped]

    def is_impure(self, impure_random=True):
        """Whether dead-code elimination must keep this node (placeholders, output, side-effecting calls and
        the random functions; torch counts an in-place Tensor method as pure)."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _side_effectful_functions or _is_random_function(self.target)
        if self.op == "call_module":
            mod = self.graph.owning_module
            if mod is not None:
                return getattr(mod.get_submodule(self.target), "_is_impure", False)
        return False

    # ---- printing
    def __repr__(self):
        return self.name

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace", None)

    def _pretty_print_target(self, target):
        if isinstance(target, str):
            return target
        mod, name = getattr(target, "__module__", None), getattr(target, "__name__", None)
        if name is not None and mod == "builtins":
            return f"builtins.{name}"
        if name is not None and mod == "_operator":
            return f"operator.{name}"
        return _qualified_name(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """The node as Graph's str() prints it: ``%name : [num_users=N] = op[target=...](args = ..., kwargs = ...)``."""
        typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        head = f"%{self.name} : {typename}[num_users={len(self.users)}] = "
        if self.op == "placeholder":
            if placeholder_names:
                placeholder_names.append(self.target)
                return None
            default_val = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return f"{head}{self.op}[target={self.target}]{default_val}"
        if self.op == "get_attr":
            return f"{head}{self.op}[target={self._pretty_print_target(self.target)}]"
        if self.op == "output":
            if self.type and maybe_return_typename:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        return (f"{head}{self.op}[target={self._pretty_print_target(self.target)}]"
                f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")
