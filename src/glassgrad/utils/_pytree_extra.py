"""torch.utils._pytree's treespec_dumps / treespec_loads, register_dataclass / register_constant and the key-path
functions (tree_flatten_with_path, tree_leaves_with_path, tree_map_with_path).

A TreeSpec as JSON (protocol 1, torch's format): each node type is written under its registered serialized
name with its context as JSON (or through the type's to_dumpable_context); a type registered without a name,
or a context JSON cannot hold, raises torch's error. register_dataclass makes a dataclass-like type a node (its
non-None fields the children), register_constant a leafless node whose context is the instance.
"""
import dataclasses
import json

from . import _pytree as _p


def _to_json(spec):
    if spec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    if spec.type not in _p.SUPPORTED_SERIALIZED_TYPES:
        raise NotImplementedError(f"Serializing {spec.type} in pytree is not registered.")
    name, dump, _ = _p.SUPPORTED_SERIALIZED_TYPES[spec.type]
    if name == _p.NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"No registered serialization name for {spec.type} found. Please update your "
                                  "_register_pytree_node call with a `serialized_type_name` kwarg.")
    if dump is None:
        try:
            ctx = json.dumps(spec._context)
        except TypeError as e:
            raise TypeError("Unable to serialize context. Please make the context json dump-able, or register a "
                            "custom serializer using _register_pytree_node.") from e
    else:
        ctx = dump(spec._context)
    return {"type": name, "context": ctx, "children_spec": [_to_json(c) for c in spec._children]}


def _from_json(d):
    if d["type"] is None and d["context"] is None and not d["children_spec"]:
        return _p._LEAF
    if d["type"] not in _p.SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Deserializing {d['type']} in pytree is not registered.")
    cls = _p.SERIALIZED_TYPE_TO_PYTHON_TYPE[d["type"]]
    load = _p.SUPPORTED_SERIALIZED_TYPES[cls][2]
    ctx = json.loads(d["context"]) if load is None else load(d["context"])
    return _p.TreeSpec(cls, ctx, [_from_json(c) for c in d["children_spec"]])


def treespec_dumps(treespec, protocol=None):
    """The spec as a JSON string, ``[protocol, schema]``."""
    if not isinstance(treespec, _p.TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                        f"{type(treespec)}.")
    protocol = _p.DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL if protocol is None else protocol
    if protocol != 1:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")
    return json.dumps((protocol, _to_json(treespec)))


def treespec_loads(serialized):
    protocol, schema = json.loads(serialized)
    if protocol != 1:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")
    return _from_json(schema)


def register_dataclass(cls, *, field_names=None, drop_field_names=None, serialized_type_name=None):
    """Make a dataclass (or a class built from keyword fields) a node: the fields' non-None values its children."""
    drop = drop_field_names or []
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError("field_names must be specified with a list of all fields used to initialize "
                             f"{cls}, as it is not a dataclass.")
    elif field_names is None:
        field_names = [f.name for f in dataclasses.fields(cls) if f.init]
    else:
        init = {f.name for f in dataclasses.fields(cls) if f.init} - set(drop)
        if init != set(field_names):
            msg = "field_names does not include all dataclass fields.\n"
            if init - set(field_names):
                msg += (f"Missing fields in `field_names`: {init - set(field_names)}. If you want to include these "
                        "fields in the pytree, please add them to `field_names`, otherwise please add them to "
                        "`drop_field_names`.\n")
            if set(field_names) - init:
                msg += (f"Unexpected fields in `field_names`: {set(field_names) - init}. Please remove these fields, "
                        "or add them to `drop_field_names`.\n")
            raise ValueError(msg)

    def flatten(obj):
        vals, names, nones = [], [], []
        for n in field_names:
            v = getattr(obj, n)
            (nones if v is None else names).append(n)
            if v is not None:
                vals.append(v)
        return vals, [names, nones]

    def unflatten(values, ctx):
        return cls(**dict(zip(ctx[0], values)), **dict.fromkeys(ctx[1]))

    def with_keys(obj):
        vals, (names, _) = flatten(obj)
        return [(_p.GetAttrKey(k), v) for k, v in zip(names, vals)], names
    _p._register(cls, flatten, unflatten, serialized_type_name=serialized_type_name, flatten_with_keys_fn=with_keys)


def register_constant(cls):
    """Make ``cls`` a node with no leaves: its spec holds the instance (which must hash and compare)."""
    if cls.__eq__ is object.__eq__:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__eq__` implementation.")
    if cls.__hash__ is None:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__hash__` implementation.")

    def flatten(x):
        return [], _p.ConstantNode(x)
    _p._register(cls, flatten, lambda _, ctx: ctx.value, flatten_with_keys_fn=flatten)
    _p.CONSTANT_NODES.add(cls)


# -- key paths of leaves ---------------------------------------------------------------------------
def _key_paths(path, tree, is_leaf):
    if is_leaf and is_leaf(tree):
        yield path, tree
        return
    node = _p.SUPPORTED_NODES.get(_p._node_type(tree))
    if node is None:
        yield path, tree
        return
    if node.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node.type}. Please pass a "
                         "flatten_with_keys_fn argument to register_pytree_node.")
    for k, c in node.flatten_with_keys_fn(tree)[0]:
        yield from _key_paths((*path, k), c, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    spec = _p.tree_flatten(tree, is_leaf)[1]
    return list(_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree, is_leaf=None):
    return list(_key_paths((), tree, is_leaf))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """``func(keypath, leaf, *rest_leaves)`` at each leaf."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    columns = [[p for p, _ in pairs], [v for _, v in pairs]] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(*columns))
