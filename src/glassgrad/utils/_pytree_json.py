"""torch.utils._pytree's treespec_dumps / treespec_loads: a TreeSpec as JSON (protocol 1), torch's format.

Each node type is written under its registered serialized name with its context as JSON (or through the
type's to_dumpable_context); a type registered without a name, or a context JSON cannot hold, raises torch's
error.
"""
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
