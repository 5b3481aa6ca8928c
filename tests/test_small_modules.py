"""torch.types, torch.torch_version, torch.futures, torch.functional, torch.to_dlpack, the layout `*_copy`
functions (values_copy, crow_indices_copy, ...) and torch.cond / torch.while_loop, against torch."""
import importlib
import warnings

import numpy as np
import pytest
import torch

import glassgrad

MODS = (torch, glassgrad)


def _rec(out, label, fn):
    try:
        r = fn()
    except Exception as e:
        out.append((label, "raise", type(e).__name__, str(e).split("\n")[0][:160]))
        return None
    out.append((label, _val(r)))
    return r


def _val(r):
    if isinstance(r, (torch.Tensor, glassgrad.Tensor)):
        vals = r.detach().reshape(-1).tolist()
        vals = [round(v, 5) if isinstance(v, float) else v for v in vals]
        return ("T", str(r.dtype).replace("glassgrad", "torch"), tuple(r.shape), vals, r.requires_grad,
                type(r.grad_fn).__name__ if r.grad_fn is not None else None, str(r.layout))
    if isinstance(r, dict):
        return {k: _val(v) for k, v in r.items()}
    if isinstance(r, (list, tuple)):
        return (type(r).__name__, [_val(v) for v in r])
    return r if isinstance(r, (int, float, str, bool, type(None))) else repr(r)


def _same(scenario):
    got, want = scenario(glassgrad), scenario(torch)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == w


# -- torch.types -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["Number", "Device", "FileLike", "_size", "_TensorOrTensors", "_symsize"])
def test_types_aliases(name):
    want = str(getattr(torch.types, name)).replace("torch.", "T.").replace("typing.", "")
    got = str(getattr(glassgrad.types, name)).replace("glassgrad._device.", "T.").replace("glassgrad._tensor.", "T.")
    got = got.replace("typing.", "")
    if name == "_symsize":                    # glassgrad has no SymInt
        want = want.replace("int | T.SymInt", "int")
    assert got == want


@pytest.mark.parametrize("name", ["IntLikeType", "FloatLikeType", "BoolLikeType", "_dispatchkey"])
def test_types_without_symbolic_types(name):
    """torch's unions less the types glassgrad has not (SymInt / SymFloat / SymBool, DispatchKey)."""
    args = [a for a in getattr(torch.types, name).__args__ if a.__module__ == "builtins"]
    assert [getattr(glassgrad.types, name)] == args


def test_types_names():
    for n in ("_int", "_float", "_bool", "_complex", "_str", "_bytes", "_Number"):
        assert getattr(glassgrad.types, n) == getattr(torch.types, n)
    assert glassgrad.types._dtype is glassgrad.dtype and glassgrad.types._device is glassgrad.device
    assert glassgrad.types._layout is glassgrad.layout and glassgrad.types.Size is glassgrad.Size
    assert glassgrad.types.Tensor is glassgrad.Tensor and glassgrad.types.__all__ == torch.types.__all__
    assert set(glassgrad.types.Storage.__annotations__) == set(torch.types.Storage.__annotations__)


# -- torch.torch_version ---------------------------------------------------------------------------
def _versions(m):
    T = importlib.import_module(m.__name__ + ".torch_version").TorchVersion
    v = T("2.13.0+cpu")
    out = [v > "2.1", v > (2, 13), v == (2, 13, 0), v == "2.13.0+cpu", v < "2.13.1", v >= "2.13.0", v == "abc",
           v > "abc", v < "3", v == (2, 13), v != "2.13.0", isinstance(v, str), str(T("1.0")), hash(v) == hash(str(v))]
    for other in (1.5, object(), ("a", "b")):
        _rec(out, "cmp", lambda: v > other)
    out += [T("2.0.0a0") < "2.0.0", T("2.0.0.dev1") < T("2.0.0a0"), T("1.10") > "1.9", T("2.0.0rc1") > "2.0.0b2",
            T("2.0.0.post1") > "2.0.0", T("2.0") == "2.0.0", T("1.0+a") < T("1.0+b"), T("1.0+1") > T("1.0+a"),
            T("1!0.1") > "2.0", T("1.0.post1.dev0") < "1.0.post1", T("1.0a1.dev0") < "1.0a1", T("v1.0") == "1.0",
            T("1.0-1") == "1.0.post1", T("1.0c1") == "1.0rc1"]
    out.append([str(x) for x in sorted(map(T, ["1.0", "1.0a1", "1.0.dev0", "1.0.post0", "1.0rc1", "0.9", "1.0+x",
                                                "1.0b2", "1.0.post0.dev1"]))])
    return out


def test_torch_version():
    _same(_versions)
    assert type(glassgrad.__version__).__name__ == "TorchVersion" and glassgrad.__version__ == glassgrad.version.__version__
    # the torch release glassgrad implements (the oracle's), glassgrad's own release as the local label
    from packaging.version import Version
    assert Version(glassgrad.__version__).base_version == Version(torch.__version__).base_version
    assert Version(glassgrad.__version__).local == "glassgrad." + glassgrad.version.glassgrad_version
    assert glassgrad.__version__ >= "2.2" and glassgrad.__version__ > (2, 0)
    assert glassgrad.torch_version.internal_version == glassgrad.version.__version__


# -- torch.futures ---------------------------------------------------------------------------------
def _futures(m):
    fu = m.futures
    Future, collect_all, wait_all = fu.Future, fu.collect_all, fu.wait_all
    out = []
    f = Future()
    out.append(f.done())
    f.set_result(3)
    out += [f.done(), f.wait(), f.value(), m.jit.Future is Future]
    _rec(out, "twice", lambda: f.set_result(4))
    g = Future()
    g.set_exception(ValueError("bad"))
    for label, fn in (("wait", g.wait), ("value", g.value), ("not exc", lambda: Future().set_exception(3)),
                      ("wait_all", lambda: wait_all([f, g])), ("collect err", lambda: collect_all([f, g]).wait()),
                      ("incomplete", lambda: Future().value()), ("cuda", lambda: Future(devices=["cuda:0"])),
                      ("no index", lambda: Future(devices=["cpu"])), ("not futures", lambda: collect_all([1]))):
        _rec(out, label, fn)
    out += [collect_all([f]).wait()[0].wait(), f.then(lambda x: x.wait() + 1).wait()]
    for label, t in (("then err", g.then(lambda x: x.wait() + 1)), ("then raise", f.then(lambda x: 1 / 0))):
        _rec(out, label, t.wait)
    k, seen = Future(), []
    k.add_done_callback(lambda x: seen.append(x.value()))
    k.set_result(5)
    out.append(seen)
    a, b = Future(), Future()
    c = collect_all([a, b])
    out.append(c.done())
    a.set_result(1)
    out.append(c.done())
    b.set_result(2)
    out += [c.done(), [x.value() for x in c.value()], wait_all([]), collect_all([]).wait()]
    for order in ("ab", "ba"):
        a, b = Future(), Future()
        c = collect_all([a, b])
        for n in order:
            (a.set_exception(ValueError("x")) if n == "a" else b.set_exception(KeyError("y")))
        _rec(out, "first error", c.wait)
    k2 = Future()
    k2.add_done_callback(lambda x: 1 / 0)          # a failing callback is logged, not raised
    k2.set_result(1)
    out.append(k2.value())
    return out


def test_futures(capfd):
    _same(_futures)


# -- torch.functional, torch.to_dlpack -----------------------------------------------------------
def test_functional_names():
    assert sorted(glassgrad.functional.__all__) == sorted(torch.functional.__all__)
    for n in glassgrad.functional.__all__:
        assert getattr(glassgrad.functional, n) is getattr(glassgrad, n)
    a = np.arange(6.0).reshape(2, 3)
    for m in MODS:
        assert m.functional.einsum("ij->j", m.tensor(a)).tolist() == [3.0, 5.0, 7.0]
    g = [t.tolist() for t in glassgrad.functional.split(glassgrad.tensor(a), 1)]
    assert g == [t.tolist() for t in torch.functional.split(torch.tensor(a), 1)]


def test_to_dlpack_roundtrip():
    x = glassgrad.arange(6.0).reshape(2, 3)
    cap = glassgrad.to_dlpack(x)
    assert type(cap).__name__ == "PyCapsule"
    y = torch.from_dlpack(cap)                        # torch reads glassgrad's capsule
    assert y.tolist() == x.tolist()
    z = glassgrad.from_dlpack(torch.to_dlpack(torch.ones(2)))
    assert z.tolist() == [1.0, 1.0]


# -- the layout *_copy functions ---------------------------------------------------------------------
def _copies(m):
    out = []
    def D():
        return m.tensor([[0, 1.], [2, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layouts = {"coo": lambda: D().to_sparse(), "csr": lambda: D().to_sparse_csr(), "dense": D}
        for f in ("indices_copy", "values_copy", "crow_indices_copy", "col_indices_copy"):
            for name, make in layouts.items():
                _rec(out, f"{f} {name}", lambda: getattr(m, f)(make()))
        cs = D().to_sparse_csr().requires_grad_()
        v = _rec(out, "values_copy grad", lambda: m.values_copy(cs))
        (v * m.tensor([3., 5.])).sum().backward()
        out.append(("csr grad", str(cs.grad.layout), _val(cs.grad.to_dense())))
        c = m.crow_indices_copy(D().to_sparse_csr())
        out.append(c.is_contiguous())
    x = m.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    _rec(out, "vac grad", lambda: m.view_as_complex_copy(x))
    with m.no_grad():
        _rec(out, "vac no_grad", lambda: m.view_as_complex_copy(x))
    r = _rec(out, "vac", lambda: m.view_as_complex_copy(x.detach()))
    out.append((r._base is None, r.is_contiguous()))
    _rec(out, "var", lambda: m.view_as_real_copy(r))
    for label, fn in (("vac size", lambda: m.view_as_complex_copy(m.ones(2, 3))),
                      ("vac dtype", lambda: m.view_as_complex_copy(m.ones(2, dtype=m.int64))),
                      ("vac stride", lambda: m.view_as_complex_copy(m.ones(2, 4)[:, ::2])),
                      ("var real", lambda: m.view_as_real_copy(m.ones(2))),
                      ("not tensor", lambda: m.view_as_real_copy([1.0]))):
        _rec(out, label, fn)
    y = m.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    z = _rec(out, "var grad", lambda: m.view_as_real_copy(y))
    (z * m.tensor([[1., 2.], [3., 4.]])).sum().backward()
    out.append((str(y.grad.tolist()), z._base is None))
    return out


def test_layout_copies():
    _same(_copies)


# -- torch.cond / torch.while_loop ------------------------------------------------------------------
def _hops(m):
    out = []
    x = m.tensor([1., 2.], requires_grad=True)
    r = _rec(out, "cond", lambda: m.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,)))
    r.sum().backward()
    out.append(_val(x.grad))
    calls = (
        ("bool pred", lambda: m.cond(True, lambda x: x * 2, lambda x: x * 3, (x,))),
        ("int pred", lambda: m.cond(1, lambda x: x * 2, lambda x: x * 3, (x,))),
        ("list ops", lambda: m.cond(True, lambda x: x * 2, lambda x: x * 3, [x])),
        ("no ops", lambda: m.cond(m.tensor(False), lambda: m.ones(1), lambda: m.zeros(1))),
        ("2elem pred", lambda: m.cond(m.tensor([True, False]), lambda x: x, lambda x: x, (x,))),
        ("float pred", lambda: m.cond(m.tensor(1.0), lambda x: x * 1, lambda x: x * 2, (x,))),
        ("noncallable", lambda: m.cond(m.tensor(True), 1, lambda x: x, (x,))),
        ("int operand", lambda: m.cond(m.tensor(True), lambda x, n: x * n, lambda x, n: x, (x, 3))),
        ("tensor operands", lambda: m.cond(m.tensor(True), lambda x: x * 2, lambda x: x * 3, x)),
        ("str pred", lambda: m.cond("a", lambda x: x, lambda x: x, (x,))),
        ("alias", lambda: m.cond(m.tensor(True), lambda x: x, lambda x: x * 1, (x,))),
        ("dict out", lambda: m.cond(m.tensor(True), lambda x: {"a": x * 2, "b": [x + 1]},
                                    lambda x: {"a": x * 1, "b": [x * 1]}, (x,))),
        ("detached", lambda: m.cond(m.tensor(False), lambda x: x * 2, lambda x: x * 3, (x.detach(),))),
        ("dict operand", lambda: m.cond(m.tensor(True), lambda d: d["k"] * 2, lambda d: d["k"] * 3, ({"k": x},))),
        ("while", lambda: m.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s * 2), (m.tensor(0), m.ones(2)))),
        ("while int", lambda: m.while_loop(lambda i: i < 5, lambda i: (i + 1,), (0,))),
        ("while single", lambda: m.while_loop(lambda i: i < 5, lambda i: i + 1, (m.tensor(0),))),
        ("while list", lambda: m.while_loop(lambda i: i < 5, lambda i: (i + 1,), [m.tensor(0)])),
        ("while zero", lambda: m.while_loop(lambda i: i < 0, lambda i: (i + 1,), [m.tensor(0)])),
        ("while nonbool", lambda: m.while_loop(lambda i: i + 1, lambda i: (i + 1,), (m.tensor(0),))),
        ("while shape", lambda: m.while_loop(lambda i: i.sum() < 5, lambda i: (m.cat([i, i]),), (m.ones(1),))),
        ("while dtype", lambda: m.while_loop(lambda i: i < 3, lambda i: (i + 1.5,), (m.tensor(0),))),
        ("while noncallable", lambda: m.while_loop(1, lambda i: (i + 1,), (m.tensor(0),))),
        ("while float", lambda: m.while_loop(lambda i: i < 3, lambda i: (i + 1,), (1.5,))),
        ("while mixed", lambda: m.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1, j + i), (0, m.tensor(1)))),
    )
    for label, fn in calls:
        _rec(out, label, fn)
    w = m.tensor(2., requires_grad=True)
    x.grad = None
    r = _rec(out, "closure", lambda: m.cond(m.tensor(True), lambda x: x * w, lambda x: x * 1, (x,)))
    r.sum().backward()
    out.append((_val(x.grad), _val(w.grad)))
    x.grad = w.grad = None
    i, s = m.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * w), (m.tensor(0), x))
    s.sum().backward()
    out.append((_val(s), _val(w.grad), _val(x.grad)))
    return out


def test_cond_while_loop():
    got, want = _hops(glassgrad), _hops(torch)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if len(g) == 4 and g[1] == "raise" and w[2] == "UncapturedHigherOrderOpError":   # torch's dynamo text
            assert g[2] == w[2] and g[3].split(":")[0] == w[3].split(":")[0]
        else:
            assert g == w
