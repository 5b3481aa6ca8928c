"""torch.library and torch.ops against torch's: custom_op (schema inference, calling, torch.ops access,
register_autograd gradients and node names, register_kernel, aliasing and argument errors), Library / define /
impl, and infer_schema. Each scenario runs the same user code on torch and on glassgrad (separate registries,
the same names) and compares what it records."""
import re
import typing
import warnings

import pytest
import torch

import glassgrad


def _rec(out, label, fn):
    try:
        r = fn()
    except Exception as e:
        msg = re.sub(r"\(with implementation in <module [^>]*>\)", "(...)", str(e).split("\n")[0])
        out.append((label, "raise", type(e).__name__, msg[:150]))
        return None
    out.append((label, _val(r)))
    return r


def _val(r):
    if isinstance(r, (torch.Tensor, glassgrad.Tensor)):
        vals = [round(v, 5) if isinstance(v, float) else v for v in r.detach().reshape(-1).tolist()]
        return ("T", str(r.dtype).replace("glassgrad", "torch"), tuple(r.shape), vals, r.requires_grad,
                type(r.grad_fn).__name__ if r.grad_fn is not None else None)
    if isinstance(r, (list, tuple)):
        return (type(r).__name__, [_val(v) for v in r])
    return r if isinstance(r, (int, float, str, bool, type(None))) else repr(r)


def _custom_op_scenario(m, ns):
    out = []
    T = m.Tensor

    @m.library.custom_op(f"{ns}::mysin", mutates_args=())
    def mysin(x: T) -> T:
        return x.sin()
    ops = getattr(m.ops, ns)
    out.append(("repr", repr(mysin), repr(ops.mysin), repr(ops.mysin.default), str(ops.mysin.default._schema),
                ops.mysin.overloads(), mysin._name, mysin._namespace, mysin._qualname))
    x = m.tensor([1., 2.], requires_grad=True)
    y = _rec(out, "y", lambda: mysin(x))
    _rec(out, "no formula", lambda: y.sum().backward())

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        return grad * ctx.saved_tensors[0].cos()
    mysin.register_autograd(backward, setup_context=setup_context)
    y = _rec(out, "y2", lambda: ops.mysin(x))
    y.sum().backward()
    out.append(("grad", _val(x.grad)))
    _rec(out, "no grad input", lambda: mysin(m.ones(2)))
    with m.no_grad():
        _rec(out, "no_grad", lambda: mysin(x))

    @m.library.custom_op(f"{ns}::f", mutates_args=())
    def f(x: T, y: T, s: float) -> tuple[T, T]:
        return x * s, x * y

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], inputs[1])
        ctx.s = inputs[2]

    def bwd(ctx, g1, g2):
        x, y = ctx.saved_tensors
        out.append(("needs", ctx.needs_input_grad))
        return g1 * ctx.s + g2 * y, g2 * x, None
    f.register_autograd(bwd, setup_context=setup)
    x.grad = None
    a, b = _rec(out, "f", lambda: f(x, m.tensor([3., 4.]), 2.0))
    (a.sum() + b.sum()).backward()
    out.append(("f grad", _val(x.grad), a.grad_fn is b.grad_fn))
    f.register_autograd(lambda ctx, g1, g2: g1, setup_context=setup)
    a, b = f(x, m.tensor([3., 4.]), 2.0)
    _rec(out, "wrong count", lambda: a.sum().backward())

    @m.library.custom_op(f"{ns}::g", mutates_args=())
    def g(x: T, *, k: float = 1.0) -> T:
        return x * k

    def setup_kw(ctx, inputs, keyword_only_inputs, output):
        ctx.k = keyword_only_inputs["k"]
    g.register_autograd(lambda ctx, gr: gr * ctx.k, setup_context=setup_kw)
    x.grad = None
    g(x, k=3.0).sum().backward()
    out.append(("kw grad", _val(x.grad)))
    g.register_kernel("cpu")(lambda x, *, k=1.0: x * k * 10)
    _rec(out, "cpu kernel", lambda: g(m.ones(1), k=2.0))
    _rec(out, "bad device", lambda: g.register_kernel("tpu")(lambda x, *, k=1.0: x))

    @m.library.custom_op(f"{ns}::alias", mutates_args=())
    def alias(x: T) -> T:
        return x[:1]
    _rec(out, "alias", lambda: alias(m.ones(2)))

    @m.library.custom_op(f"{ns}::mut", mutates_args=["x"])
    def mut(x: T, y: T) -> None:
        x.add_(y)
    z = m.zeros(2)
    out.append(("mut", str(ops.mut.default._schema), mut(z, m.ones(2)), _val(z)))

    @m.library.custom_op(f"{ns}::cop", mutates_args=())
    def cop(x: T, n: int = 2) -> T:
        return x * n
    _rec(out, "cop kw", lambda: cop(m.ones(1), n=3))
    _rec(out, "cop ops", lambda: ops.cop(m.ones(1), 4))
    _rec(out, "cop default", lambda: cop(m.ones(1)))
    for label, call in (("too many", lambda: cop(m.ones(1), 2, 3)), ("bad type", lambda: cop(3)),
                        ("missing", lambda: cop()), ("unknown kw", lambda: cop(m.ones(1), q=1)),
                        ("no op", lambda: ops.nothere), ("no overload", lambda: ops.cop.nothere)):
        _rec(out, label, call)

    @m.library.custom_op(f"{ns}::multi", mutates_args=(), schema="(Tensor x, float s) -> Tensor")
    def multi(x, s):
        return x * s
    _rec(out, "schema=", lambda: multi(m.ones(2), 3.0))
    out.append(("schema", str(ops.multi.default._schema)))

    @m.library.custom_op(f"{ns}::lst", mutates_args=())
    def lst(x: T, n: int) -> list[T]:
        return [x * i for i in range(n)]
    _rec(out, "list out", lambda: lst(m.ones(1), 2))
    _rec(out, "no annotation", lambda: m.library.custom_op(f"{ns}::h", mutates_args=())(lambda x: x))
    _rec(out, "mutates unseen", lambda: m.library.custom_op(f"{ns}::h2", mutates_args=("x",))(lambda: None))
    return out


def test_custom_op():
    got, want = _custom_op_scenario(glassgrad, "gg_lib_a"), _custom_op_scenario(torch, "gg_lib_a")
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == w


def _library_scenario(m, ns):
    out = []
    calls = []
    lib = m.library.Library(ns, "DEF")
    out.append((repr(lib), lib.define("foo(Tensor x, float a=2.0, *, int k=3) -> Tensor")))
    ops = getattr(m.ops, ns)
    _rec(out, "no kernel", lambda: ops.foo(m.ones(2), 2.0))
    lib.impl("foo", lambda *a, **k: calls.append((len(a), sorted(k))) or a[0] * 2, "CPU")
    _rec(out, "foo", lambda: ops.foo(m.ones(1)))
    ops.foo(m.ones(1), a=5.0, k=7)
    ops.foo(x=m.ones(1), a=5.0)
    out.append(("calls", calls))
    for label, call in (("missing", lambda: ops.foo()), ("bad type", lambda: ops.foo(3)),
                        ("too many", lambda: ops.foo(m.ones(1), 1.0, 2)), ("unknown kw", lambda: ops.foo(m.ones(1), q=1)),
                        ("bad float", lambda: ops.foo(m.ones(1), "a")), ("no op", lambda: ops.nope)):
        _rec(out, label, call)
    f = ops.foo
    out.append((repr(f), repr(f.default), str(f.default), f.default.__name__, f.__name__, f.default.namespace,
                f.default._overloadname, f._qualified_op_name, f.default.name(), f.overloads()))
    lib.define("bar(Tensor x) -> Tensor")
    lib.impl("bar", lambda x: x.sin(), "CompositeImplicitAutograd")
    x = m.tensor([3.], requires_grad=True)
    y = _rec(out, "implicit autograd", lambda: ops.bar(x))
    y.backward()
    out.append(("bar grad", _val(x.grad)))
    _rec(out, "dup def", lambda: lib.define("foo(Tensor x) -> Tensor"))
    _rec(out, "dup DEF", lambda: m.library.Library(ns, "DEF"))
    _rec(out, "aten DEF", lambda: m.library.Library("aten", "DEF"))
    _rec(out, "kind", lambda: m.library.Library(ns, "XYZ"))
    frag = m.library.Library(ns, "FRAGMENT")
    out.append(repr(frag))
    _rec(out, "IMPL define", lambda: m.library.Library(ns, "IMPL").define("q(Tensor x) -> Tensor"))
    m.library.define(f"{ns}::baz", "(Tensor x) -> Tensor")
    m.library.impl(f"{ns}::baz", "cpu")(lambda x: x + 1)
    _rec(out, "baz", lambda: ops.baz(m.ones(1)))
    _rec(out, "no qualname", lambda: m.library.define("nons", "(Tensor x) -> Tensor"))
    _rec(out, "bad schema", lambda: m.library.define(f"{ns}::yy", "Tensor a -> Tensor"))
    m.library.define(f"{ns}::cube", "(Tensor x) -> Tensor", lib=frag)
    m.library.impl(f"{ns}::cube", "default")(lambda x: x ** 3)
    _rec(out, "cube", lambda: ops.cube(m.tensor([2.])))
    m.library.define(f"{ns}::c2", "(Tensor x) -> Tensor")
    m.library.impl(f"{ns}::c2", ["cpu", "cuda"])(lambda x: x ** 3)
    _rec(out, "c2", lambda: ops.c2(m.tensor([2.])))
    m.library.impl(frag, "c3")(lambda x: x - 1)            # a kernel before its definition
    frag.define("c3(Tensor x) -> Tensor")
    _rec(out, "c3", lambda: ops.c3(m.ones(1)))
    out.append((lib.define("w(Tensor a) -> Tensor"), lib.define("w.ov(Tensor a, int b) -> Tensor"),
                ops.w.overloads(), str(ops.w.ov._schema)))
    lib.impl("w.ov", lambda a, b: a * b, "CPU")
    _rec(out, "overload", lambda: ops.w.ov(m.ones(1), 3))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.library.impl_abstract(f"{ns}::c2")(lambda a: a)
    out.append([(x.category.__name__, str(x.message)) for x in w])
    _rec(out, "aten", lambda: m.ops.aten.add(m.ones(1), m.ones(1)))
    _rec(out, "aten overload", lambda: m.ops.aten.add.Tensor(m.ones(1), 2))
    out.append((repr(m.ops.aten.add), str(m.ops.aten.add.Tensor)))
    return out


def test_library_define_impl():
    got, want = _library_scenario(glassgrad, "gg_lib_b"), _library_scenario(torch, "gg_lib_b")
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == w


def _schemas(m):
    T, Opt, Seq = m.Tensor, typing.Optional, typing.Sequence

    def a(x: T, y: Opt[T], z: list[T], n: int, f: float, b: bool, s: str, li: list[int], lf: list[float],
          ot: Opt[int] = None, d: m.dtype = m.float32, sc: m.types.Number = 2, *, k: float = 1.5, flag: bool = True,
          name: str = "hi", seq: Seq[int] = None, l2: list[Opt[T]] = None, ol: Opt[list[int]] = None
          ) -> tuple[T, T]:
        pass

    def b(x: T, y: T) -> None:
        pass

    def c(x: T) -> list[T]:
        pass

    def d(x: T, y: int | None = 3, z: T | None = None) -> tuple[T, int]:
        pass

    def one(x: T) -> tuple[T]:
        pass

    def bad_default(x: T, s: Seq[int] = (1, 2)) -> T:
        pass

    def bad_type(x: T, y: dict) -> T:
        pass

    def tup(x: T, y: tuple[int, int]) -> T:
        pass

    def varargs(x: T, *args) -> T:
        pass

    def noret(x: T):
        pass

    def badret(x: T) -> dict:
        pass
    out = []
    for fn, mut in ((a, ()), (b, ("x", "y")), (b, "unknown"), (c, ()), (d, ()), (one, ()), (b, ("q",)),
                    (b, "x"), (bad_default, ()), (bad_type, ()), (tup, ()), (varargs, ()), (noret, ()), (badret, ())):
        try:
            out.append(m.library.infer_schema(fn, mutates_args=mut))
        except ValueError as e:
            out.append(("ValueError", str(e).split(" Got func")[0][:90]))
    out.append(m.library.infer_schema(d, mutates_args=(), op_name="foo"))
    return out


def test_infer_schema():
    assert _schemas(glassgrad) == _schemas(torch)


def test_ops_namespace_keeps_op_families():
    """glassgrad.ops is also the op-family package: family modules stay reachable."""
    from glassgrad.ops import arithmetic
    assert glassgrad.ops.arithmetic is arithmetic
    assert type(glassgrad.ops.some_new_ns).__name__ == "_OpNamespace"
    with pytest.raises(AttributeError, match="'_OpNamespace' 'aten' object has no attribute 'not_an_op'"):
        glassgrad.ops.aten.not_an_op


def _autocast_scenario(m, ns):
    out = []
    T = m.Tensor

    @m.library.custom_op(f"{ns}::add", mutates_args=())
    def add(a: T, b: T) -> T:
        out.append(("inside", str(a.dtype), str(b.dtype), m.is_autocast_enabled("cpu")))
        return a + b
    out.append(("reg", m.library.register_autocast(f"{ns}::add", "cpu", m.float16).__qualname__))
    x = m.ones(2, 2)
    with m.autocast("cpu", dtype=m.bfloat16):
        _rec(out, "cast", lambda: add(x, x.double()))
        _rec(out, "int", lambda: add(x, m.ones(2, 2, dtype=m.int64)))
        _rec(out, "kw", lambda: add(x, b=x))
    _rec(out, "outside", lambda: add(x, x))
    for args in [("cpu", m.int32), ("meta", m.float16), (3, m.float16)]:
        _rec(out, "reg", lambda: m.library.register_autocast(f"{ns}::add", *args) and None)
    _rec(out, "method", lambda: add.register_autocast(3, m.float16))
    _rec(out, "unknown", lambda: m.library.register_autocast(f"{ns}::nope", "cpu", m.float16))
    _rec(out, "fallthrough call", lambda: m.library.fallthrough_kernel())
    lib = m.library.Library(ns, "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x * 2, "CompositeExplicitAutograd")
    lib.impl("f", m.library.fallthrough_kernel, "CPU")
    _rec(out, "fallthrough", lambda: getattr(m.ops, ns).f(m.ones(1)))
    lib.define("h(Tensor x, float s) -> Tensor")
    lib.impl("h", lambda x, s: x * s, "CPU")
    m.library.register_autocast(f"{ns}::h", "cpu", m.float64)
    with m.autocast("cpu"):
        _rec(out, "h", lambda: getattr(m.ops, ns).h(m.ones(1), 2.0))
        _rec(out, "h int", lambda: getattr(m.ops, ns).h(m.ones(1, dtype=m.int64), 2.0))
    return [tuple(str(v).replace("glassgrad", "torch") for v in o) if isinstance(o, tuple) else o for o in out]


def test_register_autocast_and_fallthrough():
    got, want = _autocast_scenario(glassgrad, "gg_lib_c"), _autocast_scenario(torch, "gg_lib_c")
    assert got == want


def _mutation_and_lists(m, ns):
    out = []
    T = m.Tensor

    @m.library.custom_op(f"{ns}::mut", mutates_args=["x"])
    def mut(x: T, y: T) -> None:
        x.add_(y)
    z = m.zeros(2)
    mut(z, m.ones(2))
    out.append(("inplace op", z._version, _val(z)))

    @m.library.custom_op(f"{ns}::mut2", mutates_args=["x"])
    def mut2(x: T) -> None:
        x.numpy()[:] = 5
    z = m.zeros(2)
    mut2(z)
    out.append(("numpy write", z._version, _val(z)))

    def kwonly(x: T, *, out: T) -> None:
        out.copy_(x)
    _rec(out, "kwarg-only tensor", lambda: m.library.custom_op(f"{ns}::kw", mutates_args=["out"])(kwonly))

    @m.library.custom_op(f"{ns}::lst", mutates_args=())
    def lst(xs: list[T], s: float) -> T:
        return xs[0] * xs[1] * s

    def setup(ctx, inputs, output):
        ctx.a, ctx.b = inputs[0]
        ctx.s = inputs[1]
    lst.register_autograd(lambda ctx, g: ([g * ctx.b * ctx.s, g * ctx.a * ctx.s], None), setup_context=setup)
    a, b = m.tensor([2.], requires_grad=True), m.tensor([3.], requires_grad=True)
    r = _rec(out, "list input", lambda: lst([a, b], 2.0))
    r.backward()
    out.append(("list grads", _val(a.grad), _val(b.grad)))
    r = lst([a, m.tensor([4.])], 1.0)
    r.backward()
    out.append(("one requires grad", _val(a.grad)))
    lst.register_autograd(lambda ctx, g: [g, g], setup_context=setup)
    _rec(out, "wrong structure", lambda: lst([a, b], 1.0).backward())
    return out


def test_mutated_args_and_tensor_lists():
    got, want = _mutation_and_lists(glassgrad, "gg_lib_d"), _mutation_and_lists(torch, "gg_lib_d")
    assert got == want


def _device_types_scenario(m, ns):
    out = []
    T = m.Tensor

    @m.library.custom_op(f"{ns}::f", mutates_args=(), device_types="cuda")
    def f(x: T) -> T:
        return x + 1
    _rec(out, "cuda-only op on cpu", lambda: f(m.ones(1)))
    f.register_kernel("cpu")(lambda x: x + 2)
    _rec(out, "cpu kernel added", lambda: f(m.ones(1)))

    @m.library.custom_op(f"{ns}::g", mutates_args=(), device_types=("cpu", "cuda"))
    def g(x: T) -> T:
        return x + 1
    _rec(out, "cpu listed", lambda: g(m.ones(1)))

    @m.library.custom_op(f"{ns}::h", mutates_args=())
    def h(n: int) -> T:
        return m.ones(n)
    _rec(out, "no tensor args", lambda: h(2))

    def h2(n: int) -> T:
        return m.ones(n)
    _rec(out, "device_types without tensors", lambda: m.library.custom_op(f"{ns}::h2", mutates_args=(),
                                                                           device_types="cpu")(h2))

    def h3(n: int, device: m.device) -> T:
        return m.ones(n, device=device)
    op = m.library.custom_op(f"{ns}::h3", mutates_args=(), device_types="cpu")(h3)
    _rec(out, "device argument", lambda: op(2, m.device("cpu")))

    @m.library.custom_op(f"{ns}::k", mutates_args=())
    def k(x: T) -> tuple[T, int]:
        return x * 2, 3
    _rec(out, "tensor and int out", lambda: k(m.ones(1, requires_grad=True)))

    @m.library.custom_op(f"{ns}::o", mutates_args=())
    def o(x: T, y: T | None = None) -> T:
        return x * 2 if y is None else x * y
    _rec(out, "optional none", lambda: o(m.ones(1)))
    _rec(out, "optional given", lambda: o(m.ones(1), m.ones(1) * 3))
    _rec(out, "optional bad", lambda: o(m.ones(1), 3))
    return out


def test_device_types():
    got, want = _device_types_scenario(glassgrad, "gg_lib_e"), _device_types_scenario(torch, "gg_lib_e")
    assert got == want


def _argument_types(m, ns):
    out = []
    T = m.Tensor

    @m.library.custom_op(f"{ns}::l", mutates_args=())
    def lop(xs: list[T], n: list[int], f: float, b: bool, s: str) -> T:
        return xs[0].clone()
    one = [m.ones(1)]
    for args in [(3, [1], 1.0, True, "a"), (one, 3, 1.0, True, "a"), (one, [1], "x", True, "a"),
                 (one, [1], 1.0, 3, "a"), (one, [1], 1.0, True, 3), (one, [1], 2, True, "a"),
                 (one, [1], True, True, "a"), (one, [1], m.tensor(1.), True, "a"), ([m.ones(1), 2], [1], 1.0, True, "a")]:
        _rec(out, "call", lambda: lop(*args))
    return out


def test_argument_types():
    assert _argument_types(glassgrad, "gg_lib_f") == _argument_types(torch, "gg_lib_f")
