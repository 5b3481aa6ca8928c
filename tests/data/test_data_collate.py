"""default_collate / default_convert against torch.utils.data (dtypes, structure, container types, errors)."""
import collections

import numpy as np
import pytest

import torch
import glassgrad  # noqa: E402

Point = collections.namedtuple("Point", ["x", "y"])


class MyDict(dict):
    pass


class FrozenMap(collections.abc.Mapping):
    """A read-only Mapping that can be rebuilt from a dict."""

    def __init__(self, d):
        self._d = dict(d)

    def __getitem__(self, k):
        return self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)


class Seq(collections.abc.Sequence):
    """An immutable Sequence whose constructor does not take a list (falls back to list)."""

    def __init__(self, *items):
        self._items = items

    def __getitem__(self, i):
        return self._items[i]

    def __len__(self):
        return len(self._items)


def py(x):
    if hasattr(x, "tolist") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
        return ("T", str(x.dtype), tuple(x.shape), x.tolist(), x.requires_grad)
    if isinstance(x, np.ndarray):
        return ("np", str(x.dtype), x.tolist())
    if isinstance(x, collections.abc.Mapping):
        return (type(x).__name__, {k: py(v) for k, v in x.items()})
    if isinstance(x, (tuple, list, Seq)):
        return (type(x).__name__,) + tuple(py(v) for v in x)
    return (type(x).__name__, x)


def both(make_batch, fn_name="default_collate"):
    """Collate the batch made by make_batch(T) with both libraries; results or errors must agree."""
    out = []
    for T in (torch, glassgrad):
        fn = getattr(T.utils.data, fn_name)
        try:
            out.append(("ok", py(fn(make_batch(T)))))
        except Exception as e:  # noqa: BLE001 -- the error is what is compared
            out.append(("err", type(e).__name__, str(e)))
    assert out[0] == out[1]
    return out[0]


BATCHES = {
    "tensors_f32": lambda T: [T.arange(6).float().reshape(2, 3) + i for i in range(3)],
    "tensors_i32": lambda T: [T.tensor([i, i + 1], dtype=T.int32) for i in range(4)],
    "tensors_0d": lambda T: [T.tensor(1.5), T.tensor(2.5)],
    "tensors_bool": lambda T: [T.tensor([True, False]), T.tensor([False, False])],
    "tensors_f64_f16": lambda T: [T.ones(2, dtype=T.float64), T.zeros(2, dtype=T.float64)],
    "tensors_bad_shape": lambda T: [T.zeros(2), T.zeros(3)],
    "ints": lambda T: [1, 2, 3],
    "floats": lambda T: [1.0, 2.5],
    "bools": lambda T: [True, False, True],
    "strings": lambda T: ["a", "bc"],
    "bytes": lambda T: [b"a", b"bc"],
    "np_f32": lambda T: [np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)],
    "np_i16": lambda T: [np.arange(3, dtype=np.int16), np.arange(3, dtype=np.int16)],
    "np_u8": lambda T: [np.arange(3, dtype=np.uint8), np.arange(3, dtype=np.uint8) * 2],
    "np_scalars_i32": lambda T: [np.int32(1), np.int32(5)],
    "np_scalars_f64": lambda T: [np.float64(1.5), np.float64(-2.0)],
    "np_scalars_f32": lambda T: [np.float32(1.5), np.float32(-2.0)],
    "np_scalars_bool": lambda T: [np.bool_(True), np.bool_(False)],
    "np_str_array": lambda T: [np.array(["a"]), np.array(["b"])],
    "np_obj_array": lambda T: [np.array([1, None], dtype=object)] * 2,
    "dicts": lambda T: [{"x": T.tensor([1.0]), "y": 1, "name": "a"}, {"x": T.tensor([2.0]), "y": 2, "name": "b"}],
    "dict_subclass": lambda T: [MyDict(a=1), MyDict(a=2)],
    "frozen_map": lambda T: [FrozenMap({"a": 1.0}), FrozenMap({"a": 2.0})],
    "nested": lambda T: [{"p": (T.zeros(2), [1, 2.0]), "q": {"r": "s"}}] * 3,
    "tuples": lambda T: [(T.tensor([1, 2]), 0, "a"), (T.tensor([3, 4]), 1, "b")],
    "lists": lambda T: [[1, 2.0, "x"], [3, 4.0, "y"]],
    "namedtuples": lambda T: [Point(T.tensor(1.0), 2), Point(T.tensor(3.0), 4)],
    "custom_seq": lambda T: [Seq(1, 2), Seq(3, 4)],
    "ragged_lists": lambda T: [[1, 2], [3]],
    "unsupported": lambda T: [object(), object()],
    "none": lambda T: [None, None],
    "parameters": lambda T: [T.nn.Parameter(T.ones(2)), T.nn.Parameter(T.zeros(2))],
}


@pytest.mark.parametrize("name", list(BATCHES))
def test_default_collate(name):
    both(BATCHES[name])


def test_collate_errors_are_errors():
    assert both(BATCHES["ragged_lists"])[0] == "err"
    assert both(BATCHES["unsupported"])[0] == "err"
    assert both(BATCHES["np_str_array"])[0] == "err"


CONVERTS = {
    "tensor": lambda T: T.arange(3),
    "np_array": lambda T: np.arange(4, dtype=np.float32).reshape(2, 2),
    "np_scalar": lambda T: np.int16(7),
    "np_str": lambda T: np.str_("hello"),
    "np_str_array": lambda T: np.array(["a", "b"]),
    "int": lambda T: 3,
    "string": lambda T: "abc",
    "dict": lambda T: {"a": np.ones(2), "b": [np.float64(1.0), "s"]},
    "dict_subclass": lambda T: MyDict(a=np.zeros(1)),
    "frozen_map": lambda T: FrozenMap({"a": np.zeros(1)}),
    "tuple": lambda T: (np.ones(1), 2),
    "namedtuple": lambda T: Point(np.ones(1), 2),
    "list": lambda T: [np.ones(1), (np.int64(3),)],
    "custom_seq": lambda T: Seq(np.ones(1), 2),
    "bytes": lambda T: b"xy",
}


@pytest.mark.parametrize("name", list(CONVERTS))
def test_default_convert(name):
    both(CONVERTS[name], "default_convert")


def test_dict_subclass_type_kept():
    out = glassgrad.utils.data.default_collate([MyDict(a=1), MyDict(a=2)])
    assert type(out) is MyDict
    out = glassgrad.utils.data.default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert type(out) is Point and out.y.dtype == glassgrad.float64
