"""torch.fx.Graph: the list of Nodes of a traced program, its naming, editing, checks and its Python source."""

import builtins
import copy
import inspect
import keyword
import math
import re
import warnings

from ._codegen import gen_python_code
from .node import Node, map_arg

__all__ = ["Graph", "PythonCode"]

_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)       # a generated name never shadows a builtin
_illegal_names.update(inf=math.inf, nan=math.nan, NoneType=type(None), torch=object(), device=object())
_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])")


def _snake_case(s):
    return _snake_case_sub.sub(r"_\1", s).lower()


class _Namespace:
    """Unique names for objects: each object one name, each name once, no builtin shadowed."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate, obj):
        if obj is not None and id(obj) in self._obj_to_name:
            return self._obj_to_name[id(obj)]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[id(obj)] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        self._obj_to_name.setdefault(id(obj), name)


class PythonCode:
    """The generated source of a graph (``src``) and the globals it runs with (``globals``)."""

    def __init__(self, src, globals_):
        self.src = src
        self.globals = globals_


class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self.graph._insert = self.orig_insert


class _NodeList:
    def __init__(self, graph, direction="_next"):
        self._graph = graph
        self._dir = direction

    def __len__(self):
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        cur = getattr(root, self._dir)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self._dir)

    def __reversed__(self):
        return _NodeList(self._graph, "_prev" if self._dir == "_next" else "_next")


class _NodeRef:
    def __init__(self, name):
        self.name = name


def _rebuild_graph(records):
    import glassgrad
    from .node import map_aggregate
    g = Graph()
    by_name = {}
    for name, op, (kind, target), args, kwargs, type_expr in records:
        if kind == "torch_name":
            obj = glassgrad
            for atom in target.split(".")[1:]:
                obj = getattr(obj, atom)
            target = obj

        def resolve(a):
            return by_name[a.name] if isinstance(a, _NodeRef) else a
        by_name[name] = g.create_node(op, target, map_aggregate(args, resolve), map_aggregate(kwargs, resolve), name,
                                      type_expr)
    return g


class Graph:
    """The nodes of a program in order: placeholders, get_attr / call_* nodes and one output."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._used_names = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._co_fields = {}

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        return _NodeList(self)

    def find_nodes(self, *, op, target=None, sort=True):
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ---- building
    def _target_to_str(self, target):
        if callable(target):
            op = target.__name__
        else:
            op = target
            if op.startswith("__") and op.endswith("__"):
                op = op[2:-2]
        return _snake_case(op)

    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Create a node and insert it at the current insert point (the end unless inserting_before/after)."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        mod = self.owning_module
        if mod is not None:
            obj = mod
            for atom in qualified_name.split("."):
                obj = getattr(obj, atom, None)
                if obj is None:
                    warnings.warn("Attempted to insert a get_attr Node with no underlying reference in the owning "
                                  "GraphModule! Call GraphModule.add_submodule to add the necessary submodule, "
                                  "GraphModule.add_parameter to add the necessary Parameter, or nn.Module.register_buffer "
                                  "to add the necessary buffer", stacklevel=2)
                    break
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of `node` (from another graph) in this graph, its Node arguments mapped by `arg_transform`."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy every node of `g` but its output into this graph (`val_map`: old node -> new); the output's value."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return rv if not return_output_node else (rv, node)
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        if output_vals is not None:
            out_val, old_output = output_vals
            new_output = g.output(out_val, type_expr=old_output.type)
            new_output.meta = copy.copy(old_output.meta)
        return g

    def __reduce__(self):
        # nodes as records: Node arguments by name, the torch namespace's functions by their torch name
        from ._patch import qualified

        def target_record(t):
            q = qualified(t) if callable(t) else None
            return ("torch_name", q) if q is not None else ("object", t)
        records = [(n.name, n.op, target_record(n.target), map_arg(n.args, lambda a: _NodeRef(a.name)),
                    map_arg(n.kwargs, lambda a: _NodeRef(a.name)), n.type) for n in self.nodes]   # not meta
        return (_rebuild_graph, (records,))

    # ---- editing
    def inserting_before(self, n=None):
        """Context manager: new nodes go before `n` (the start of the graph when None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        """Context manager: new nodes go right after `n` (the end of the graph when None)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    def erase_node(self, to_erase):
        """Remove a node that has no users."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                               f"users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs(map_arg(to_erase._args, lambda n: None),
                                     map_arg(to_erase._kwargs, lambda n: None))

    def eliminate_dead_code(self, is_impure_node=None):
        """Erase the nodes with no users and no side effect, last first; whether anything changed."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        """Check the graph's invariants: nodes belong here, names are unique, arguments defined before use,
        get_attr / call_module targets exist in the owning module."""
        seen_names, seen_values = set(), set()
        for node in self.nodes:
            if node.op not in ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to this Graph, "
                                       f"but was used as an argument! If you are copying nodes from another "
                                       f"graph, make sure to use ``arg_transform`` on node_copy() to remap values\n"
                                       f"{self}")
                if arg not in seen_values:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                                       f"Please check that Nodes in the graph are topologically ordered\n{self}")
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
            seen_values.add(node)
        if self.owning_module is None:
            return
        for node in self.nodes:
            if node.op in ("get_attr", "call_module"):
                m_itr = self.owning_module
                atoms = node.target.split(".")
                for i, atom in enumerate(atoms):
                    if not hasattr(m_itr, atom):
                        seen_qualname = ".".join(atoms[:i])
                        raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute "
                                           f"{atom} of {seen_qualname}")
                    m_itr = getattr(m_itr, atom)
                from ..nn import Module
                if node.op == "call_module" and not isinstance(m_itr, Module):
                    raise RuntimeError(f"Node {node} target {node.target} {atom} of {'.'.join(atoms[:-1])} "
                                       f"does not reference an nn.Module")

    # ---- printing and code
    def __str__(self):
        placeholder_names = []
        maybe_return_typename = [""]
        node_strs = [node.format_node(placeholder_names) for node in self.nodes]
        s = f"graph({', '.join(placeholder_names)}){maybe_return_typename[0]}:"
        for node_str in node_strs:
            if node_str:
                s += "\n    " + node_str
        return s

    def print_tabular(self):
        """Print the nodes as a table (opcode, name, target, args, kwargs); needs the `tabulate` package."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found on this machine. "
                  "Run `pip install tabulate` to install the library.")
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))

    def python_code(self, root_module, *, verbose=False, **kwargs):
        """The Python source of a function computing this graph (``root_module`` names its module argument)."""
        src, globals_ = gen_python_code(self, root_module, verbose=verbose)
        return PythonCode(src, globals_)

    def _new_namespace(self):
        return _Namespace()
