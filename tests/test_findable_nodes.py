"""Every backward node can be found by its PyTorch name.

A newcomer who sees ``grad_fn=<BmmBackward0>`` greps for ``class BmmBackward0`` (or ``BmmBackward0 =``) and
lands on it.  So:
  (a) every Node subclass whose name is a grad_fn name is declared under that name at the top level of
      its module;
  (b) ops/ and nn/ make no classes with ``type(name, bases, ns)`` and touch no ``globals()``;
  (c) every string literal in src/glassgrad that is a grad_fn name (``[A-Z]\\w*Backward\\d+``) names such
      a class.
PENDING lists what other branches of issue 13 are fixing right now; each entry must still be needed, so
the list can only shrink.
"""
import ast
import importlib
import inspect
import pathlib
import pkgutil
import re
import sys

import glassgrad
from glassgrad.autograd import graph

SRC = pathlib.Path(glassgrad.__file__).parent
# grad_fn names (c, and a where their class exists) and files (b) still made the old way elsewhere
PENDING = {
    # not a class factory: the module wraps its own functions in place at import (architecture.md §7,
    # "Whole namespaces wrapped at import")
    "nn/functional/__init__.py": "namespace wrapped at import (architecture.md §7)",
}

_GRAD_FN = re.compile(r"[A-Z]\w*Backward\d+")
# PyTorch's node names that do not end in Backward<n>: its C++ nodes (graph.py prefixes them with
# torch::autograd::) and a few others
_TORCH_NODES = {"AccumulateGrad", "CopySlices", "GraphRoot", "Error", "DelayedError", "Identity", "NotImplemented",
                "UndefinedGrad", "UndefinedGradBackward", "CopyBackwards", "DiagonalBackward0_copy"}


def _import_all():
    for m in pkgutil.walk_packages(glassgrad.__path__, "glassgrad."):
        if not m.name.endswith("__main__"):
            importlib.import_module(m.name)


def _subclasses(cls):
    """glassgrad's subclasses of `cls`, recursively (not those tests or users define)."""
    seen, todo = [], [cls]
    while todo:
        for s in todo.pop().__subclasses__():
            if s not in seen:
                seen.append(s)
                todo.append(s)
    return [c for c in seen if c.__module__.split(".")[0] == "glassgrad"]


def _declared(name, source):
    """`class <name>` or `<name> =` at the top level of a module's source."""
    return re.search(rf"^(class {re.escape(name)}\b|{re.escape(name)} =)", source, re.M) is not None


def _is_node_name(name):
    return _GRAD_FN.fullmatch(name) is not None or name.split("::")[-1] in _TORCH_NODES


def _findable(cls):
    name = cls.__name__
    source = inspect.getsource(sys.modules[cls.__module__])
    if _declared(name, source):
        return True
    # names a class statement cannot carry ("torch::autograd::NotImplemented", the builtin NotImplemented)
    # are found by their __name__ assignment
    return _GRAD_FN.fullmatch(name) is None and f'__name__ = "{name}"' in source


def _unfindable_nodes():
    _import_all()
    return {c.__name__: f"{c.__module__}.{c.__qualname__}" for c in _subclasses(graph.Node)
            if _is_node_name(c.__name__) and not _findable(c)}


def _findable_names():
    _import_all()
    return {c.__name__ for c in _subclasses(graph.Node) if _is_node_name(c.__name__) and _findable(c)}


def _factory_calls(path):
    """3-argument type(...) and globals() calls in one file: [(line, what)]."""
    out = []
    for n in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            if (n.func.id == "type" and len(n.args) == 3) or n.func.id == "globals":
                out.append((n.lineno, n.func.id))
    return out


def _factory_files():
    return {str(p.relative_to(SRC)): calls for sub in ("ops", "nn") for p in sorted((SRC / sub).rglob("*.py"))
            if (calls := _factory_calls(p))}


def _grad_fn_literals():
    """{name: [file:line]} for every string literal in src/glassgrad that is a grad_fn name."""
    found = {}
    for p in sorted(SRC.rglob("*.py")):
        for n in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and _GRAD_FN.fullmatch(n.value):
                found.setdefault(n.value, []).append(f"{p.relative_to(SRC)}:{n.lineno}")
    return found


def test_every_node_class_is_declared_under_its_name():
    bad = {k: v for k, v in _unfindable_nodes().items() if k not in PENDING}
    assert not bad, f"node classes not declared as `class X` / `X =` at module level: {bad}"


def test_no_class_factories_in_ops_and_nn():
    bad = {k: v for k, v in _factory_files().items() if k not in PENDING}
    assert not bad, f"type(name, bases, ns) or globals() in: {bad}"


def test_grad_fn_name_literals_name_findable_classes():
    known = _findable_names()
    bad = {k: v for k, v in _grad_fn_literals().items() if k not in known and k not in PENDING}
    assert not bad, f"grad_fn names used as strings with no findable class: {bad}"


def test_pending_entries_are_still_needed():
    unfindable = _unfindable_nodes()
    files = _factory_files()
    literals = _grad_fn_literals()
    known = _findable_names()
    stale = []
    for key in PENDING:
        if key.endswith(".py"):
            needed = key in files
        else:
            needed = key in unfindable or (key in literals and key not in known)
        if not needed:
            stale.append(key)
    assert not stale, f"PENDING entries no longer needed (remove them): {stale}"
