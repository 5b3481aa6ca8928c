"""torch.utils._pytree: nested containers flattened to a list of leaves and a TreeSpec, and rebuilt.

The node types are torch's: tuple, list, dict (insertion order), namedtuple (every namedtuple class, under
the one node type ``collections.namedtuple``), OrderedDict, defaultdict, deque and the ``torch.return_types``
result tuples; everything else -- None included -- is a leaf. ``register_pytree_node`` adds a container type.
A TreeSpec prints, compares, hashes and serializes (``treespec_dumps`` / ``treespec_loads``, protocol 1) as
torch's does; the functions raise torch's errors with torch's messages.
"""
import dataclasses
import functools
import threading
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, Callable

__all__ = ["PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext", "ToDumpableContextFn",
           "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec", "keystr", "key_get",
           "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_flatten_with_path", "tree_unflatten",
           "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure", "tree_map", "tree_map_with_path",
           "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any", "tree_all_only",
           "tree_any_only", "treespec_dumps", "treespec_loads", "treespec_pprint", "is_namedtuple",
           "is_namedtuple_class", "is_namedtuple_instance", "is_structseq", "is_structseq_class",
           "is_structseq_instance"]

Context = Any
PyTree = Any
FlattenFn = Callable[[PyTree], "tuple[list[Any], Context]"]
UnflattenFn = Callable[[Any, Context], PyTree]
DumpableContext = Any
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
FlattenWithKeysFn = Callable[[PyTree], Any]

DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"


NodeDef = namedtuple("NodeDef", "type flatten_fn unflatten_fn flatten_with_keys_fn")  # a node type's functions
_LOCK = threading.RLock()
SUPPORTED_NODES = {}                 # type -> NodeDef
SUPPORTED_SERIALIZED_TYPES = {}      # type -> (serialized name, to_dumpable_context, from_dumpable_context)
SERIALIZED_TYPE_TO_PYTHON_TYPE = {}  # serialized name -> type


# -- key paths -------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True, slots=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    """A key path printed: ``[0]['a'].x``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The value at a key path."""
    for k in kp:
        obj = k.get(obj)
    return obj


# -- registration ----------------------------------------------------------------------------------
def _register(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
              from_dumpable_context=None, flatten_with_keys_fn=None):
    with _LOCK:
        if cls in SUPPORTED_NODES:
            warnings.warn(f"{cls} is already registered as pytree node. Overwriting the previous registration.",
                          stacklevel=3)
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        if (to_dumpable_context is None) != (from_dumpable_context is None):
            raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must be None or "
                             "registered.")
        name = NO_SERIALIZED_TYPE_NAME_FOUND if serialized_type_name is None else serialized_type_name
        SUPPORTED_SERIALIZED_TYPES[cls] = (name, to_dumpable_context, from_dumpable_context)
        SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Make ``cls`` a container: ``flatten_fn(x) -> (children, context)``, ``unflatten_fn(children, context)``."""
    with _LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
    _register(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
              to_dumpable_context=to_dumpable_context, from_dumpable_context=from_dumpable_context,
              flatten_with_keys_fn=flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None, *,
                          serialized_type_name=None, to_dumpable_context=None, from_dumpable_context=None,
                          flatten_with_keys_fn=None):
    """The older spelling: re-registering warns and overwrites; the string functions are deprecated."""
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn("`to_str_fn` and `maybe_from_str_fn` is deprecated. Please use `to_dumpable_context` and "
                      "`from_dumpable_context` instead.", FutureWarning, stacklevel=2)
    _register(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
              to_dumpable_context=to_dumpable_context, from_dumpable_context=from_dumpable_context,
              flatten_with_keys_fn=flatten_with_keys_fn)


def _deregister_pytree_node(cls):
    with _LOCK:
        del SUPPORTED_NODES[cls]
        name = SUPPORTED_SERIALIZED_TYPES.pop(cls)[0]
        del SERIALIZED_TYPE_TO_PYTHON_TYPE[name]
        CONSTANT_NODES.discard(cls)


CONSTANT_NODES = set()


@dataclasses.dataclass(frozen=True, slots=True)
class ConstantNode:
    """The context of a register_constant node: the instance itself."""
    value: Any


def is_constant_class(cls):
    return isinstance(cls, type) and cls in CONSTANT_NODES


# -- the type predicates ---------------------------------------------------------------------------
def is_namedtuple_class(cls):
    """Whether ``cls`` is a namedtuple class (a tuple subclass with string ``_fields``, ``_make``, ``_asdict``)."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields)
            and callable(getattr(cls, "_make", None)) and callable(getattr(cls, "_asdict", None)))


def is_namedtuple(obj):
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def is_structseq_class(cls):
    """Whether ``cls`` is a C struct-sequence class (``time.struct_time``, ``torch.return_types.max``)."""
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and all(isinstance(getattr(cls, a, None), int) for a in ("n_fields", "n_sequence_fields",
                                                                     "n_unnamed_fields"))
            and (not cls.__flags__ & (1 << 10) or cls.__module__ == "torch.return_types"))


def is_structseq(obj):
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj):
    return is_structseq_class(type(obj))


def _return_type_node(cls):
    """torch registers each torch.return_types class as a node; glassgrad makes those classes on first use."""
    if cls.__module__ != "torch.return_types" or not is_structseq_class(cls):
        return None
    _register(cls, lambda x: (list(x), None), lambda values, ctx: cls(values),
              flatten_with_keys_fn=lambda x: ([(SequenceKey(i), v) for i, v in enumerate(x)], None))
    return cls


def _node_type(tree):
    """torch's _get_node_type: ``namedtuple`` for every namedtuple, else the type."""
    cls = type(tree)
    if is_namedtuple_class(cls):
        return namedtuple
    if cls not in SUPPORTED_NODES and cls.__module__ == "torch.return_types":
        _return_type_node(cls)
    return cls


_get_node_type = _node_type


def tree_is_leaf(tree, is_leaf=None):
    """Whether ``tree`` is a leaf: ``is_leaf`` says so, or its type is no registered node."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


# -- TreeSpec --------------------------------------------------------------------------------------
_BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})
_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})


@dataclasses.dataclass(init=False, frozen=True, eq=True, repr=False, slots=True)
class TreeSpec:
    """A pytree's structure: the root's node type, its context and the children's specs."""
    type: Any
    _context: Context
    _children: list
    num_nodes: int = dataclasses.field(init=False)
    num_leaves: int = dataclasses.field(init=False)
    num_children: int = dataclasses.field(init=False)

    def __init__(self, type, context, children_specs):
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_children", children_specs)
        self.__post_init__()

    def __post_init__(self):
        if self.type is None:
            if self._context is not None:
                raise AssertionError("leaf node should not have a context")
            if self._children:
                raise AssertionError("leaf node should not have children")
            nodes, leaves = 1, 1
        else:
            nodes = 1 + sum(c.num_nodes for c in self._children)
            leaves = sum(c.num_leaves for c in self._children)
        object.__setattr__(self, "num_nodes", nodes)
        object.__setattr__(self, "num_leaves", leaves)
        object.__setattr__(self, "num_children", len(self._children))

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        inner = ""
        if self._children:
            indent += 2
            inner = (",\n" + " " * indent).join(c.__repr__(indent) for c in self._children)
        return f"TreeSpec({self.type.__name__}, {self._context}, [{inner}])"

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        t, ctx = self.type, self._context
        if t is defaultdict:
            ctx = (ctx[0], tuple(ctx[1]))
        elif t in (dict, OrderedDict):
            ctx = tuple(ctx)
        elif isinstance(ctx, ConstantNode):
            ctx = ctx.value
        elif not (t is None or t in _BUILTIN_TYPES):
            ctx = None                     # a custom node's context may not hash
        return hash((t, ctx, tuple(self._children)))

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self):
        warnings.warn("`treespec.children_specs` is deprecated. Use `treespec.child(index)` to access a single "
                      "child, or `treespec.children()` to get all children.", FutureWarning, stacklevel=2)
        return self._children

    def is_leaf(self):
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        return list(self._children)

    def child(self, index):
        return self._children[index]

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have this spec as a prefix)."""
        out = []
        _up_to(self, tree, out)
        return out

    def unflatten(self, leaves):
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
                             f"to a pytree that holds {self.num_leaves} items ({self}).")
        if self.is_leaf():
            return leaves[0]
        parts, start = [], 0
        for c in self._children:
            parts.append(c.unflatten(leaves[start:start + c.num_leaves]))
            start += c.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(parts, self._context)


def _up_to(spec, node, out):
    if spec.is_leaf():
        out.append(node)
        return
    t = _node_type(node)
    if spec.type not in _BUILTIN_TYPES:
        if t != spec.type:
            raise ValueError(f"Type mismatch; expected {spec.type!r}, but got {t!r}.")
        children, ctx = SUPPORTED_NODES[t].flatten_fn(node)
        if len(children) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}.")
        if ctx != spec._context:
            raise ValueError(f"Node context mismatch for custom node type {spec.type!r}.")
    else:
        dicts = spec.type in _DICT_TYPES and t in _DICT_TYPES
        if not dicts and t != spec.type:
            raise ValueError(f"Node type mismatch; expected {spec.type!r}, but got {t!r}.")
        if len(node) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(node)}.")
        if dicts:
            keys = spec._context[1] if spec.type is defaultdict else spec._context
            got, want = set(node), set(keys)
            if got != want:
                msg = f"; missing key(s): {want - got}" if want - got else ""
                msg += f"; extra key(s): {got - want}" if got - want else ""
                raise ValueError(f"Node keys mismatch{msg}.")
            children = [node[k] for k in keys]
        else:
            children, ctx = SUPPORTED_NODES[t].flatten_fn(node)
            if t is not deque and ctx != spec._context:
                raise ValueError(f"Node context mismatch for node type {spec.type!r}; expected "
                                 f"{spec._context!r}, but got {ctx!r}.")
    for sub, c in zip(children, spec._children):
        _up_to(c, sub, out)


PyTreeSpec = TreeSpec


@dataclasses.dataclass(init=False, frozen=True, eq=False, repr=False, slots=True)
class LeafSpec(TreeSpec):
    """The spec of a leaf (deprecated in torch: a leaf is ``TreeSpec.is_leaf()``)."""

    def __init__(self):
        if _LEAF is not None:
            warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use `isinstance(treespec, TreeSpec) "
                          "and treespec.is_leaf()` instead.", FutureWarning, stacklevel=2)
        TreeSpec.__init__(self, None, None, [])

    def __repr__(self, indent=0):
        return "*"


_LEAF = None
_LEAF = LeafSpec.__new__(LeafSpec)
TreeSpec.__init__(_LEAF, None, None, [])


def treespec_leaf():
    return _LEAF


def treespec_tuple(iterable=(), /):
    children = list(iterable)
    if any(not isinstance(c, TreeSpec) for c in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs):
    d = dict(mapping, **kwargs)
    if any(not isinstance(c, TreeSpec) for c in d.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {d!r}.")
    return TreeSpec(dict, list(d.keys()), list(d.values()))


# -- flatten / unflatten / map ---------------------------------------------------------------------
def tree_flatten(tree, is_leaf=None):
    """(the leaves left to right, the TreeSpec that rebuilds the tree from them)."""
    leaves = []

    def walk(node):
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF
        t = _node_type(node)
        children, ctx = SUPPORTED_NODES[t].flatten_fn(node)
        return TreeSpec(t, ctx, [walk(c) for c in children])

    return leaves, walk(tree)


def tree_unflatten(leaves, treespec):
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                            f"{type(treespec)}.")
        leaves, treespec = treespec, leaves        # torch takes the two either way round
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """``func`` applied leafwise; the trees in ``rests`` need ``tree``'s structure as a prefix."""
    leaves, spec = tree_flatten(tree, is_leaf)
    return spec.unflatten(map(func, leaves, *[spec.flatten_up_to(r) for r in rests]))


def tree_map_(func, tree, *rests, is_leaf=None):
    """``func`` called on each leaf for its side effect; returns ``tree`` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    for _ in map(func, leaves, *[spec.flatten_up_to(r) for r in rests]):
        pass
    return tree


def map_only(type_or_types_or_pred, /):
    """A decorator: the function applies to the leaves of the given type(s) (or passing the predicate), other
    leaves pass through."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def arg_tree_leaves(*args, **kwargs):
    """tree_leaves((args, kwargs)), the leaves of every argument in order."""
    return [x for a in (*args, *kwargs.values()) for x in tree_iter(a)]


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """``tree`` (a prefix of ``treespec``'s structure) flattened with each leaf repeated over its subtree;
    None when it is no prefix."""
    full = treespec.unflatten([0] * treespec.num_leaves)
    out = []
    try:
        tree_map_(lambda x, sub: out.extend([x] * tree_structure(sub, is_leaf).num_leaves), tree, full,
                  is_leaf=is_leaf)
    except ValueError:
        return None
    return out


# -- the built-in node types -----------------------------------------------------------------------
def _seq_keys(x):
    return [(SequenceKey(i), v) for i, v in enumerate(x)]


def _namedtuple_dump(cls):
    name = SUPPORTED_SERIALIZED_TYPES.get(cls, (None,))[0]
    if name is None or name == NO_SERIALIZED_TYPE_NAME_FOUND:
        why = "didn't register" if name is None else "couldn't find"
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {cls} because we {why} a "
                                  "serializated_type_name. Please register using `_register_namedtuple`.")
    return name


def _namedtuple_load(name):
    if name not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class {name} because we couldn't "
                                  "find a serializated name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[name]


def _defaultdict_dump(ctx):
    return {"default_factory_module": ctx[0].__module__, "default_factory_name": ctx[0].__qualname__,
            "dict_context": ctx[1]}


def _defaultdict_load(d):
    import importlib
    return [getattr(importlib.import_module(d["default_factory_module"]), d["default_factory_name"]),
            d["dict_context"]]


def _register_namedtuple(cls, *, serialized_type_name):
    """Give a namedtuple class a serialized name (so treespec_dumps can write specs holding it)."""
    _register(cls, lambda x: (list(x), type(x)), lambda values, ctx: ctx(*values),
              serialized_type_name=serialized_type_name, to_dumpable_context=_namedtuple_dump,
              from_dumpable_context=_namedtuple_load,
              flatten_with_keys_fn=lambda x: ([(GetAttrKey(f), v) for f, v in zip(x._fields, x)], type(x)))


# the tuple / list / dict node functions under torch's names (libraries register their own types with them,
# e.g. transformers' ModelOutput with flatten_with_keys_fn=_dict_flatten_with_keys)
def _tuple_flatten(d): return list(d), None                                                  # noqa: E704
def _tuple_flatten_with_keys(d): return _seq_keys(d), None                                   # noqa: E704
def _tuple_unflatten(values, context): return tuple(values)                                  # noqa: E704
def _list_flatten(d): return d, None                                                         # noqa: E704
def _list_flatten_with_keys(d): return _seq_keys(d), None                                    # noqa: E704
def _list_unflatten(values, context): return list(values)                                    # noqa: E704
def _dict_flatten(d): return list(d.values()), list(d.keys())                                # noqa: E704
def _dict_flatten_with_keys(d): return [(MappingKey(k), v) for k, v in d.items()], list(d.keys())  # noqa: E704
def _dict_unflatten(values, context): return dict(zip(context, values, strict=True))         # noqa: E704


_register(tuple, _tuple_flatten, _tuple_unflatten, serialized_type_name="builtins.tuple",
          flatten_with_keys_fn=_tuple_flatten_with_keys)
_register(list, _list_flatten, _list_unflatten, serialized_type_name="builtins.list",
          flatten_with_keys_fn=_list_flatten_with_keys)
_register(dict, _dict_flatten, _dict_unflatten, serialized_type_name="builtins.dict",
          flatten_with_keys_fn=_dict_flatten_with_keys)
_register(namedtuple, lambda x: (list(x), type(x)), lambda v, c: c(*v), serialized_type_name="collections.namedtuple",
          to_dumpable_context=_namedtuple_dump, from_dumpable_context=_namedtuple_load,
          flatten_with_keys_fn=lambda x: ([(GetAttrKey(f), v) for f, v in zip(x._fields, x)], type(x)))
_register(OrderedDict, lambda x: (list(x.values()), list(x.keys())), lambda v, c: OrderedDict(zip(c, v)),
          serialized_type_name="collections.OrderedDict",
          flatten_with_keys_fn=lambda x: ([(MappingKey(k), v) for k, v in x.items()], list(x.keys())))
_register(defaultdict, lambda x: (list(x.values()), [x.default_factory, list(x.keys())]),
          lambda v, c: defaultdict(c[0], zip(c[1], v)), serialized_type_name="collections.defaultdict",
          to_dumpable_context=_defaultdict_dump, from_dumpable_context=_defaultdict_load,
          flatten_with_keys_fn=lambda x: ([(MappingKey(k), v) for k, v in x.items()],
                                          [x.default_factory, list(x.keys())]))
_register(deque, lambda x: (list(x), x.maxlen), lambda v, c: deque(v, maxlen=c),
          serialized_type_name="collections.deque", flatten_with_keys_fn=lambda x: (_seq_keys(x), x.maxlen))


# -- serialization, dataclasses and constants (utils/_pytree_extra.py); pretty-printing ---------------
from ._pytree_extra import (treespec_dumps, treespec_loads, register_dataclass, register_constant,  # noqa: E402,F401
                            tree_flatten_with_path, tree_leaves_with_path, tree_map_with_path)


class _Asterisk(str):
    __slots__ = ()

    def __repr__(self):
        return "*"


def treespec_pprint(treespec):
    """The tree with ``*`` at each leaf, as Python prints it."""
    return repr(treespec.unflatten([_Asterisk("*")] * treespec.num_leaves))
