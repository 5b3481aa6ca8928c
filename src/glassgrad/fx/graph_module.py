"""torch.fx.GraphModule: a Module whose forward is the Python code generated from its Graph."""

import copy
import itertools
import linecache

from ..nn import Module, Parameter
from .._tensor import Tensor
from .graph import Graph

__all__ = ["GraphModule"]

_next_id = itertools.count()


def _forward_from_src(src, globals_):
    """Exec the generated source (registered with linecache so tracebacks show it); its ``forward``."""
    key = f"<eval_with_key>.{next(_next_id)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    globals_copy = dict(globals_)
    exec(compile(src, key, "exec"), globals_copy)
    return globals_copy["forward"]


def _copy_attr(from_module, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return          # this submodule was already installed: everything below it is there
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def _rebuild_graph_module(body, graph):
    fake_mod = Module()
    fake_mod.__dict__.update(body)
    return GraphModule(fake_mod, graph, "GraphModule")


class GraphModule(Module):
    """A Module built from a Graph: the get_attr / call_module targets are copied from `root` (a Module or a
    dict from qualified name to object) and ``forward`` is generated from the graph (``code``)."""

    def __new__(cls, *args, **kwargs):
        # each instance gets its own class, so that its generated forward is its own
        for t in cls.__mro__:
            c = t.__qualname__.split(".")[-1]
            if c != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if not isinstance(node.target, str):
                        raise AssertionError(f"Expected node.target to be str, got {type(node.target)}")
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets_to_copy = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but that target was not "
                                           f"provided in ``root``!")
                    targets_to_copy.append(node.target)
            targets_to_copy.sort(key=lambda t: t.count("."))
            for target_to_copy in targets_to_copy:
                _assign_attr(root[target_to_copy], self, target_to_copy)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.meta = {}
        self._tracer_cls = graph._tracer_cls
        self.graph = graph

    @property
    def graph(self):
        """The Graph this module's code is generated from; setting it regenerates the code."""
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The Python source of this module's forward."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """Regenerate ``code`` and ``forward`` from the graph (after editing it)."""
        python_code = self._graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        cls = type(self)
        cls.forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    def print_readable(self, print_output=True, include_stride=False, include_device=False, colored=False):
        """The generated code as a class, with a comment where the nodes have no stack trace."""
        lines = self._graph.python_code(root_module="self", verbose=True).src.strip("\n").rstrip().split("\n")
        body = "\n".join("    " + line if line.strip() else "" for line in lines)
        module_code = f"class {type(self).__name__}(torch.nn.Module):\n{body}"
        sub = [""]
        for name, submodule in self.named_children():
            if isinstance(submodule, GraphModule):
                sub.append(submodule.print_readable(print_output=False).replace(
                    f"class {type(submodule).__name__}(", f"class {name}(", 1))
        output = module_code + "\n" + _addindent("\n".join(sub[1:]), 4)
        if print_output:
            print(output)
        return output

    def __str__(self):
        orig_str = super().__str__()
        return "\n".join([orig_str, self._code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])

    def __deepcopy__(self, memo):
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        fake_mod = Module()
        fake_mod.__dict__ = copy.deepcopy(self.__dict__, memo)
        GraphModule.__init__(res, fake_mod, fake_mod.__dict__["_graph"])      # named GraphModule, as torch's
        for k in ("training", "meta"):
            if k in fake_mod.__dict__:
                res.__dict__[k] = fake_mod.__dict__[k]
        return res

    def __reduce__(self):
        # pickled as its state and its graph (the targets by reference); unpickled as a class named
        # GraphModule, as torch's
        body = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        return (_rebuild_graph_module, (body, self._graph))

    def __copy__(self):
        res = GraphModule(self, self.graph, type(self).__name__)
        res.meta = getattr(self, "meta", {})
        return res

    def add_submodule(self, target, m):
        """Install module `m` at the dotted path `target`, creating empty Modules on the way; False if a
        non-Module is in the way."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = Module()
                setattr(mod, item, submod)
            if not isinstance(submod, Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        """Delete the submodule at `target`; False when there is none."""
        atoms = target.split(".")
        path, target_submod = atoms[:-1], atoms[-1]
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, target_submod):
            return False
        if not isinstance(getattr(mod, target_submod), Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self):
        """Delete the submodules no call_module / get_attr node uses."""
        used = []
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                fullpath = node.target.split(".")
                used.extend(".".join(fullpath[:i]) for i in range(1, len(fullpath)))
                used.append(node.target)
                if node.op == "call_module":
                    sub = self.get_submodule(node.target)
                    used.extend(f"{node.target}.{n}" for n, _ in sub.named_modules() if n)
        to_delete = [name for name, _ in self.named_modules() if name not in used and name]
        for name in to_delete:
            self.delete_submodule(name)
