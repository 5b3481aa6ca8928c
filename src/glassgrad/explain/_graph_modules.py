"""Which module call created which backward node: ``explain.trace_modules(model)``.

Inside ``with explain.trace_modules(model) as trace:`` every submodule carries a forward
pre-hook and a forward hook (both only read and return None).  For each module *call* the
trace keeps the graph nodes the call created: the nodes reachable from the call's outputs
but not from its inputs.  The walk is bounded: it descends only into nodes whose sequence
number lies in the range of nodes created between the call's start and end, and stops at
the inputs' nodes, so it costs about as much as the nodes the call made.  A node belongs to
the innermost call that made it (children finish before their parent and claim first).
"""

from .._tensor import Tensor
from ..autograd.graph import AccumulateGrad
from ..autograd.traversal import next_sequence_nr, sequence_nr

__all__ = ["trace_modules", "ModuleTrace", "ModuleCall"]

def _current_seq():
    """The sequence number the next node will get, read without taking it."""
    return next_sequence_nr()


def _tensors(obj, out, depth=0):
    """Tensors inside (nested) tuples / lists / dicts of a module's inputs or outputs."""
    if isinstance(obj, Tensor):
        out.append(obj)
    elif depth < 4:
        if isinstance(obj, (tuple, list)):
            for o in obj:
                _tensors(o, out, depth + 1)
        elif isinstance(obj, dict):
            for o in obj.values():
                _tensors(o, out, depth + 1)
    return out


def _meta_of(t):
    return tuple(t.shape), str(t.dtype).replace("torch.", "")


class ModuleCall:
    """One call of one module: its name, class, nesting depth and the nodes it created."""
    __slots__ = ("index", "module", "name", "cls", "depth", "parent", "nodes", "start", "end",
                 "_inputs", "_in_max", "ordinal")

    def __init__(self, index, module, name, parent, start, inputs):
        self.index = index
        self.module = module
        self.name = name
        self.cls = type(module).__name__
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.nodes = []
        self.start = start
        self.end = None
        self._inputs = inputs
        self._in_max = max((sequence_nr(n) for n in inputs if n.__class__ is not AccumulateGrad), default=-1)
        self.ordinal = 1          # 2, 3, ... for the second, third call of the same module

    @property
    def label(self):
        base = f"{self.cls} ({self.name})" if self.name else self.cls
        return base if self.ordinal == 1 else f"{base} #{self.ordinal}"

    def __repr__(self):
        return f"<ModuleCall {self.label}: depth {self.depth}, {len(self.nodes)} nodes>"


class ModuleTrace:
    """The record of ``trace_modules``: ``calls`` (in order of start) and ``node_call``."""

    def __init__(self, model):
        self.model = model
        self.calls = []
        self.node_call = {}      # Node -> innermost ModuleCall that created it
        self.meta = {}           # (Node, output_nr) -> (shape, dtype) of module inputs / outputs
        self._stack = []
        self._handles = []
        self._counts = {}

    # -- context manager --------------------------------------------------------------------------
    def __enter__(self):
        for name, mod in self.model.named_modules():
            self._handles.append(mod.register_forward_pre_hook(self._make_pre(name)))
            self._handles.append(mod.register_forward_hook(self._make_post(), always_call=True))
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Remove the hooks (done on leaving the ``with`` block)."""
        for h in self._handles:
            h.remove()
        self._handles = []
        self._stack = []

    # -- hooks ----------------------------------------------------------------------------------------
    def _make_pre(self, name):
        def pre(module, args):
            ins = []
            for t in _tensors(args, []):
                fn = t.grad_fn
                if fn is not None:
                    ins.append(fn)
                    self.meta.setdefault((fn, t.output_nr), _meta_of(t))
            parent = self._stack[-1] if self._stack else None
            call = ModuleCall(len(self.calls), module, name, parent, _current_seq(), frozenset(ins))
            n = self._counts.get(id(module), 0) + 1
            self._counts[id(module)] = n
            call.ordinal = n
            self.calls.append(call)
            self._stack.append(call)
            return None
        return pre

    def _make_post(self):
        def post(module, args, output):
            stack = self._stack
            # pop to this module's call (a child that raised left its call on the stack)
            while stack and stack[-1].module is not module:
                stack.pop()
            if not stack:
                return None
            call = stack.pop()
            call.end = _current_seq()
            outs = []
            for t in _tensors(output, []):
                fn = t.grad_fn
                if fn is not None:
                    outs.append(fn)
                    self.meta.setdefault((fn, t.output_nr), _meta_of(t))
            self._claim(call, outs)
            return None
        return post

    def _claim(self, call, outs):
        lo, hi = call.start, call.end
        ins = call._inputs
        in_max = call._in_max
        node_call = self.node_call
        seen = set()
        stack = list(outs)
        while stack:
            node = stack.pop()
            if node in seen or node in ins:
                continue
            seen.add(node)
            if node.__class__ is AccumulateGrad:
                continue                 # leaves go to the module that owns the parameter
            s = sequence_nr(node)
            if lo is not None and hi is not None:
                if not lo <= s < hi:
                    continue
            elif s <= in_max:
                continue
            if node not in node_call:
                node_call[node] = call
                call.nodes.append(node)
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt not in seen:
                    stack.append(nxt)

    def __repr__(self):
        return f"<ModuleTrace of {type(self.model).__name__}: {len(self.calls)} module calls>"


def trace_modules(model):
    """Context manager recording which module call created which backward node.

    Use it around the forward pass, then pass it to ``explain.graph(loss, modules=trace)``
    to draw one nested cluster per module call::

        with explain.trace_modules(model) as trace:
            loss = criterion(model(x), y)
        explain.graph(loss, model, modules=trace, max_depth=2).render("graph.svg")
    """
    return ModuleTrace(model)
