"""default_collate / default_convert: turning fetched samples into batches, with torch's rules.

Tensors are stacked along a new dim 0; NumPy arrays become tensors and are stacked; NumPy scalars become
a tensor of their dtype; Python floats a float64 tensor, ints an int64 one (bools a bool one); strings
and bytes stay a list; Mappings, namedtuples and sequences are collated field by field.
"""
import collections.abc
import copy
import re

import numpy as np

from ... import _dtype
from ..._tensor import Tensor
from ...ops.creation import as_tensor, tensor
from ...ops.shape import stack

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map",
           "default_collate_err_msg_format"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")
default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, "
                                  "dicts or lists; found {}")


def _rebuild_like(proto, values):
    """A container of proto's type holding ``values`` (positional for sequences, a dict for mappings);
    a plain list/dict when that type cannot be rebuilt that way."""
    try:
        if isinstance(proto, collections.abc.MutableMapping):
            out = copy.copy(proto)
            out.update(values)
            return out
        if isinstance(proto, collections.abc.Mapping):
            return type(proto)(values)
        if isinstance(proto, collections.abc.MutableSequence):
            out = copy.copy(proto)
            for pos, item in enumerate(values):
                out[pos] = item
            return out
        return type(proto)(values)
    except TypeError:
        return dict(values) if isinstance(proto, collections.abc.Mapping) else list(values)


def default_convert(data):
    """Convert NumPy arrays/scalars in ``data`` to tensors, recursing into containers (no batching)."""
    t = type(data)
    if isinstance(data, Tensor):
        return data
    if t.__module__ == "numpy" and t.__name__ not in ("str_", "string_"):
        if t.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_like(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return t(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(part) for part in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_like(data, [default_convert(d) for d in data])
    return data


def _collate_tensors(batch, *, collate_fn_map=None):
    return stack(batch, 0)


def _collate_ndarrays(batch, *, collate_fn_map=None):
    if np_str_obj_array_pattern.search(batch[0].dtype.str):
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def _collate_np_scalars(batch, *, collate_fn_map=None):
    # NumPy keeps the scalars' common dtype (int32 stays int32), as torch.as_tensor does
    return as_tensor(np.asarray(batch))


def _collate_floats(batch, *, collate_fn_map=None):
    return tensor(batch, dtype=_dtype.float64)


def _collate_ints(batch, *, collate_fn_map=None):
    return tensor(batch)


def _collate_strs(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: _collate_tensors,
    np.ndarray: _collate_ndarrays,
    (np.bool_, np.number, np.object_): _collate_np_scalars,
    float: _collate_floats,
    int: _collate_ints,
    str: _collate_strs,
    bytes: _collate_strs,
}


def collate(batch, *, collate_fn_map=None):
    """Collate a list of samples: a handler from ``collate_fn_map`` (exact type first, then the first
    isinstance match in insertion order), else recurse into Mappings, namedtuples and sequences."""
    elem = batch[0]
    t = type(elem)
    if collate_fn_map is not None:
        if t in collate_fn_map:
            return collate_fn_map[t](batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_like(elem, {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                                    for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return t(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)]  # columns are tuples
        if isinstance(elem, tuple):
            return columns
        return _rebuild_like(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(t))


def default_collate(batch):
    """torch's default collate_fn (see the module docstring)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
