"""torch.utils._pytree against torch's: leaves, TreeSpec repr / equality / hash / counts, unflatten, maps,
key paths, registration, JSON serialization and the errors, for the same structures."""
import re
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest
import torch
import torch.utils._pytree as tp

import glassgrad
import glassgrad.utils._pytree as gp

P = namedtuple("P", "x y")


def _tree(m):
    return [1, (2, 3), {"b": 4, "a": 5}, P(6, 7), OrderedDict(z=8, y=9), defaultdict(list, {"k": 10}),
            deque([11, 12], maxlen=3), None, m.return_types.max((13, 14)), [], (), {}, "s", 2.5]


TREES = {
    "mixed": _tree,
    "leaf": lambda m: 3,
    "none": lambda m: None,
    "nested": lambda m: {"a": [(1, {"c": None})], "b": OrderedDict(q=[[], [2]])},
    "deque": lambda m: deque([deque([1]), (2,)]),
}


def _pair(name):
    return TREES[name](torch), TREES[name](glassgrad)


@pytest.mark.parametrize("name", sorted(TREES))
def test_flatten_spec_and_roundtrip(name):
    t, g = _pair(name)
    tl, ts = tp.tree_flatten(t)
    gl, gs = gp.tree_flatten(g)
    assert gl == tl
    assert repr(gs) == repr(ts) and str(gs) == str(ts)
    assert (gs.num_leaves, gs.num_nodes, gs.num_children, gs.is_leaf()) == \
        (ts.num_leaves, ts.num_nodes, ts.num_children, ts.is_leaf())
    assert repr(gp.tree_unflatten(gl, gs)) == repr(tp.tree_unflatten(tl, ts))
    assert repr(gs.unflatten(gl)) == repr(ts.unflatten(tl))
    assert gp.treespec_pprint(gs) == tp.treespec_pprint(ts)
    assert gp.tree_leaves(g) == tp.tree_leaves(t) == list(gp.tree_iter(g))
    assert gp.tree_structure(g) == gs and hash(gs) == hash(gp.tree_structure(g))
    assert repr(gp.tree_leaves_with_path(g)) == repr(tp.tree_leaves_with_path(t))
    assert [gp.keystr(p) for p, _ in gp.tree_flatten_with_path(g)[0]] == \
        [tp.keystr(p) for p, _ in tp.tree_flatten_with_path(t)[0]]


def test_spec_equality_and_children():
    for m in (tp, gp):
        assert m.tree_structure({"a": 1, "b": 2}) != m.tree_structure({"b": 1, "a": 2})
        assert m.tree_structure([1, 2]) != m.tree_structure((1, 2))
        assert m.tree_structure(P(1, 2)) == m.tree_structure(P(3, 4))
        assert m.tree_structure(1) != m.TreeSpec(None, None, [])      # LeafSpec vs TreeSpec: classes differ
        assert m.tree_structure((1,)) == m.TreeSpec(tuple, None, [m.tree_structure(1)])
    gs, ts = gp.tree_structure({"a": [1, 2]}), tp.tree_structure({"a": [1, 2]})
    assert repr(gs.child(0)) == repr(ts.child(0)) and len(gs.children()) == len(ts.children()) == 1
    assert gs.context == ts.context == ["a"] and gs.type is dict
    with pytest.warns(FutureWarning, match="children_specs"):
        gs.children_specs
    with pytest.raises(AttributeError):
        gs.type = list


def test_leafspec_deprecated():
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        tls = tp.LeafSpec()
    with warnings.catch_warnings(record=True) as gw:
        warnings.simplefilter("always")
        gls = gp.LeafSpec()
    assert [str(w.message) for w in gw] == [str(w.message) for w in tw]
    assert [w.category for w in gw] == [FutureWarning]
    assert repr(gls) == repr(tls) == "*" and gls == gp.tree_structure(1) and isinstance(gp.tree_structure(0), gp.LeafSpec)


def test_maps():
    for m in (tp, gp):
        assert m.tree_map(lambda a, b: a + b, [1, {"x": 2}], [10, {"x": 20}]) == [11, {"x": 22}]
        assert m.tree_map(lambda a, b: (a, b), [1, 2], [[5, 6], 7]) == [(1, [5, 6]), (2, 7)]    # prefix
        assert m.tree_map(lambda x: x, [1, [2]], is_leaf=lambda x: x == [2]) == [1, [2]]
        assert m.tree_map_only(int, lambda x: x * 2, [1, "a", 2.0, True]) == [2, "a", 2.0, 2]
        assert m.tree_map_only((int, str), lambda x: x * 2, [1, "a", 2.0]) == [2, "aa", 2.0]
        assert m.tree_map_only(lambda x: x == 2.0, lambda x: 0, [1, 2.0]) == [1, 0]
        seen = []
        t = [1, (2,)]
        assert m.tree_map_(seen.append, t) is t and seen == [1, 2]
        seen.clear()
        m.tree_map_only_(int, seen.append, [1, "z", (2,)])
        assert seen == [1, 2]
        assert m.tree_all(bool, [1, {"a": 2}]) and not m.tree_all(bool, {"a": 0})
        assert m.tree_any(lambda x: x is None, [1, None]) and not m.tree_any(bool, [0, (0,)])
        assert m.tree_all_only(int, lambda x: x > 0, [1, "a", -1.0])
        assert not m.tree_any_only(str, lambda x: x == "b", ["a", 1])
        assert m.tree_map_with_path(lambda p, x: m.keystr(p) + str(x), {"a": [1]}) == {"a": ["['a'][0]1"]}
        assert m.tree_is_leaf(None) and not m.tree_is_leaf([]) and m.tree_is_leaf((1,), is_leaf=lambda x: True)


def test_tensors_are_leaves():
    gt = glassgrad.ones(2)
    out = gp.tree_map_only(glassgrad.Tensor, lambda x: x * 2, {"w": gt, "n": 3})
    assert out["n"] == 3 and out["w"].tolist() == [2.0, 2.0]


def _err(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value), str(e.value)


@pytest.mark.parametrize("case", ["keys", "type", "arity", "len", "spec_type", "ctx", "nt", "structseq", "proto"])
def test_errors(case):
    def run(m):
        return {
            "keys": lambda: m.tree_map(lambda a, b: a, [1, {"x": 2}], [10, {"y": 20}]),
            "type": lambda: m.tree_map(lambda a, b: a, [1, 2], (1, 2)),
            "arity": lambda: m.tree_map(lambda a, b: a, [1, 2], [1, 2, 3]),
            "len": lambda: m.tree_unflatten([1, 2], m.tree_structure([1])),
            "spec_type": lambda: m.tree_unflatten([1, 2], 3),
            "ctx": lambda: m.tree_map(lambda a, b: a, P(1, 2), namedtuple("Q", "x y")(1, 2)),
            "nt": lambda: m.treespec_dumps(m.tree_structure(P(1, 2))),
            "structseq": lambda: m.treespec_dumps(m.tree_structure(
                (torch if m is tp else glassgrad).return_types.max((1, 2)))),
            "proto": lambda: m.treespec_dumps(m.tree_structure([1]), protocol=7),
        }[case]()
    got, want = _err(lambda: run(gp)), _err(lambda: run(tp))
    assert got[0] is want[0]
    assert got[1].replace("glassgrad", "torch") == want[1]


def test_dumps_loads():
    tree = [1, (2,), {"a": 3, "b": None}, OrderedDict(q=1), deque([1], maxlen=4), defaultdict(int, {1: 2})]
    ts, gs = tp.tree_structure(tree), gp.tree_structure(tree)
    assert gp.treespec_dumps(gs) == tp.treespec_dumps(ts)
    assert gp.treespec_loads(tp.treespec_dumps(ts)) == gs
    assert tp.treespec_loads(gp.treespec_dumps(gs)) == ts
    assert gp.treespec_dumps(gp.tree_structure(5)) == tp.treespec_dumps(tp.tree_structure(5))


class _Box:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __repr__(self):
        return f"Box({self.a!r}, {self.b!r})"


class _GBox(_Box):
    pass


def _reg(m, cls, **kw):
    m.register_pytree_node(cls, lambda x: ([x.a, x.b], "ctx"), lambda v, c: cls(*v), **kw)


def test_register_pytree_node():
    try:
        _reg(tp, _Box, serialized_type_name="test.Box",
             flatten_with_keys_fn=lambda x: ([(tp.GetAttrKey("a"), x.a), (tp.GetAttrKey("b"), x.b)], "ctx"))
        _reg(gp, _GBox, serialized_type_name="test.Box",
             flatten_with_keys_fn=lambda x: ([(gp.GetAttrKey("a"), x.a), (gp.GetAttrKey("b"), x.b)], "ctx"))
        tl, ts = tp.tree_flatten([_Box(1, (2, 3))])
        gl, gs = gp.tree_flatten([_GBox(1, (2, 3))])
        assert gl == tl and repr(gs).replace("_GBox", "_Box") == repr(ts)
        assert repr(gp.tree_unflatten(gl, gs)) == repr(tp.tree_unflatten(tl, ts))
        assert gp.treespec_dumps(gs) == tp.treespec_dumps(ts)
        assert [gp.keystr(p) for p, _ in gp.tree_leaves_with_path(_GBox(1, 2))] == [".a", ".b"]
        with pytest.raises(ValueError, match="is already registered as pytree node"):
            _reg(gp, _GBox)
        with pytest.warns(UserWarning, match="Overwriting the previous registration"):
            gp._register_pytree_node(_GBox, lambda x: ([x.a], None), lambda v, c: _GBox(v[0], None))
        assert gp.tree_leaves(_GBox(5, 6)) == [5]
    finally:
        tp._deregister_pytree_node(_Box)
        gp._deregister_pytree_node(_GBox)
    assert gp.tree_leaves(_GBox(5, 6)) != [5]


def test_predicates():
    for m, mod in ((tp, torch), (gp, glassgrad)):
        mx = mod.return_types.max((1, 2))
        assert m.is_structseq_instance(mx) and m.is_structseq(type(mx)) and not m.is_namedtuple(mx)
        assert m.is_namedtuple(P) and m.is_namedtuple_instance(P(1, 2)) and not m.is_structseq(P)
        assert m.is_namedtuple_class(P) and not m.is_namedtuple_class(tuple)


def _dataclass_scenario(m):
    import dataclasses

    @dataclasses.dataclass
    class Point:
        x: object
        y: object = None
        tag: str = "p"

    class Plain:
        def __init__(self, a, b):
            self.a, self.b = a, b

    @dataclasses.dataclass(frozen=True)
    class Config:
        norm: str

    out = []
    m.register_dataclass(Point, field_names=["x", "y"], drop_field_names=["tag"], serialized_type_name="t.Point")
    leaves, spec = m.tree_flatten([Point(1, (2, 3)), Point(4)])
    out += [leaves, repr(spec).replace(Point.__qualname__, "Point"), spec.num_leaves]
    back = m.tree_unflatten([10, 20, 30, 40], spec)
    out.append([(p.x, p.y, p.tag) for p in back])
    out.append([m.keystr(k) for k, _ in m.tree_leaves_with_path(Point(1, 2))])
    for kw in (dict(), dict(field_names=["x"]), dict(field_names=["x", "y", "tag", "zz"])):
        try:
            m.register_dataclass(type("NotDC", (), {}) if not kw else Point, **kw)
        except ValueError as e:
            msg = str(e).replace("NotDC", "X")
            out.append(("ValueError", re.sub(r"\{[^}]*\}", lambda g: str(sorted(eval(g[0]))), msg)))
    m.register_dataclass(Plain, field_names=["a", "b"], serialized_type_name="t.Plain")
    out.append(m.tree_leaves({"k": Plain(1, [2])}))
    m.register_constant(Config)
    leaves, spec = m.tree_flatten([Config("l2"), 5])
    out += [leaves, spec.num_leaves, spec.num_nodes, m.tree_unflatten([6], spec)[0] == Config("l2"),
            hash(spec) == hash(m.tree_structure([Config("l2"), 7]))]
    for bad in (type("NoEq", (), {}), type("NoHash", (), {"__eq__": lambda s, o: True})):
        try:
            m.register_constant(bad)
        except TypeError as e:
            out.append(("TypeError", str(e)))
    for cls in (Point, Plain, Config):
        m._deregister_pytree_node(cls)
    return out


def test_register_dataclass_and_constant():
    assert _dataclass_scenario(gp) == _dataclass_scenario(tp)
