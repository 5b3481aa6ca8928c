"""The Python source of a Graph, written as torch.fx writes it: one statement a node, values set to None after
their last use, operators written as operators, torch functions by their ``torch.`` names."""

import math
import types
import typing

from .node import _qualified_name, _type_repr, map_arg
from .proxy import inplace_methods, magic_methods


def _format_target(base, target):
    r = base
    for e in target.split("."):
        r = f'getattr({r}, "{e}")' if not e.isidentifier() else f"{r}.{e}"
    return r


def _get_repr(arg):
    return repr(arg)


def _format_args(args, kwargs):
    args_s = ", ".join(_get_repr(a) for a in args)
    kwargs_s = ", ".join(f"{k} = {_get_repr(v)}" for k, v in kwargs.items())
    if args_s and kwargs_s:
        return f"{args_s}, {kwargs_s}"
    return args_s or kwargs_s


class _Globals:
    def __init__(self, namespace):
        import glassgrad
        from .._device import device
        self.namespace = namespace
        self.globals = {"inf": math.inf, "nan": math.nan, "NoneType": type(None), "torch": glassgrad,
                        "device": device}

    def add(self, name_hint, obj):
        from ._patch import qualified, torch_type_name
        q = qualified(obj) if not isinstance(obj, type) else torch_type_name(obj)
        if q is not None:
            return q
        if obj is None:
            return "None"
        name = self.namespace.create_name(name_hint, obj)
        self.globals[name] = obj
        return name


_origin_type_map = {list: typing.List, dict: typing.Dict, set: typing.Set, frozenset: typing.FrozenSet,  # noqa: UP006
                    tuple: typing.Tuple}  # noqa: UP006


def _type_expr(o, glob):
    """A type annotation as generated code writes it, its names added to the globals."""
    if o == ():
        return "()"
    typename = _type_repr(o)
    if isinstance(o, types.UnionType) and "|" in typename:
        return "|".join(_type_expr(a, glob) for a in typing.get_args(o))
    origin = getattr(o, "__origin__", None)
    if origin:
        if isinstance(o, typing._GenericAlias):
            origin = _origin_type_map.get(origin, origin)
        origin_name = glob.add(_type_repr(origin), origin)
        type_args = typing.get_args(o)
        if type_args:
            return f"{origin_name}[{','.join(_type_expr(a, glob) for a in type_args)}]"
        return origin_name
    return glob.add(typename, o)


def _last_uses(nodes):
    node_to_last_use, user_to_last_uses = {}, {}

    def register(n, user):
        if n not in node_to_last_use:
            node_to_last_use[n] = user
            user_to_last_uses.setdefault(user, []).append(n)
    for node in reversed(nodes):
        for a in (node.args, node.kwargs):
            map_arg(a, lambda n: register(n, node))
    return user_to_last_uses


def _emit(node, body, free_vars, glob, wrapped_fns, return_annotation):
    args, kwargs, target = node.args, node.kwargs, node.target
    annotation = "" if node.type is None else f" : {_type_expr(node.type, glob)}"
    if node.op == "placeholder":
        default = f" = {_get_repr(args[0])}" if args else ""
        free_vars.append(f"{target}{annotation}{default}")
        raw_name = target.replace("*", "")
        if raw_name != repr(node):
            body.append(f"{repr(node)} = {raw_name}\n")
        return
    if node.op == "call_method":
        body.append(f"{repr(node)}{annotation} = "
                    f"{_format_target(repr(args[0]), target)}({_format_args(args[1:], kwargs)})")
        return
    if node.op == "call_function":
        mod, fname = getattr(target, "__module__", ""), getattr(target, "__name__", "")
        if mod == "_operator" and fname in magic_methods and not kwargs:
            body.append(f"{repr(node)}{annotation} = {magic_methods[fname].format(*(repr(a) for a in args))}")
            return
        if mod == "_operator" and fname in inplace_methods and not kwargs:
            body.append(f"{inplace_methods[fname].format(*(repr(a) for a in args))};  "
                        f"{repr(node)} = {repr(args[0])}")
            return
        qualified = _qualified_name(target)
        if (qualified == "getattr" and len(args) == 2 and isinstance(args[1], str) and args[1].isidentifier()
                and not kwargs):
            body.append(f"{repr(node)}{annotation} = {_format_target(repr(args[0]), args[1])}")
            return
        global_name = glob.add(qualified, target)
        if node.meta.get("is_wrapped", False):
            wrapped_fns.setdefault(global_name)
        body.append(f"{repr(node)}{annotation} = {global_name}({_format_args(args, kwargs)})")
        return
    if node.op == "call_module":
        body.append(f"{repr(node)}{annotation} = {_format_target('self', target)}({_format_args(args, kwargs)})")
        return
    if node.op == "get_attr":
        body.append(f"{repr(node)}{annotation} = {_format_target('self', target)}")
        return
    if node.op == "output":
        if node.type is not None:
            return_annotation[0] = f" -> {_type_expr(node.type, glob)}"
        body.append(f"return {repr(args[0])}")
        return
    raise NotImplementedError(f"node: {node.op} {target}")


def gen_python_code(graph, root_module, verbose=False):
    """(source, globals) of `graph` as a function ``forward(self, ...)`` (``root_module`` names ``self``)."""
    namespace = graph._new_namespace()
    nodes = list(graph.nodes)
    for node in nodes:
        namespace.create_name(node.name, node)
    glob = _Globals(namespace)
    body, free_vars, wrapped_fns = [], [root_module], {}
    user_to_last_uses = _last_uses(nodes)
    commented = not verbose
    return_annotation = [""]
    for node in nodes:
        if not commented and node.op not in ("placeholder", "output"):
            body.append("\n# No stacktrace found for following nodes\n")     # nodes record no stack trace
            commented = True
        _emit(node, body, free_vars, glob, wrapped_fns, return_annotation)
        if node.op == "placeholder":
            continue
        if node.op == "output":
            body.append("\n")
            continue
        to_delete = list(user_to_last_uses.get(node, []))
        if len(node.users) == 0:
            to_delete.append(node)
        body.append(f";  {' = '.join(repr(n) for n in to_delete)} = None\n" if to_delete else "\n")
    if len(body) == 0:
        body.append("pass\n")
    if wrapped_fns:
        from ._symbolic_trace import wrap
        wrap_name = glob.add("wrap", wrap)
        wrap_stmts = "\n".join(f'{wrap_name}("{name}")' for name in wrapped_fns)
    else:
        wrap_stmts = ""
    code = "".join(body).lstrip("\n")
    code = "\n".join("    " + line for line in code.split("\n"))
    prologue = f"def forward({', '.join(free_vars)}){return_annotation[0]}:"
    return f"\n{wrap_stmts}\n\n{prologue}\n{code}", glob.globals
