"""torch._foreach_*: generated from glassgrad._foreach's tables, each function against torch (values, dtypes,
the tuple / in-place return, in-place effects and version bumps, gradients, errors)."""
import math

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import _foreach as FE

SHAPES = [(3,), (2, 2)]


def _arrays(seed, lo=0.1, hi=0.9):
    rs = np.random.RandomState(seed)
    return [rs.uniform(lo, hi, s) for s in SHAPES]


def mk(T, seed=0, dtype="float32", rg=False, lo=0.1, hi=0.9):
    arrs = _arrays(seed, lo, hi)
    if dtype == "int64":
        return [T.tensor((a * 10).astype(np.int64) + 1) for a in arrs]
    return [T.tensor(a.astype(dtype), requires_grad=rg) for a in arrs]


def _close(got, exp, tol=1e-5):
    assert isinstance(got, tuple) and isinstance(exp, tuple) and len(got) == len(exp)
    for g, e in zip(got, exp):
        assert str(g.dtype).split(".")[-1] == str(e.dtype).split(".")[-1]
        assert tuple(g.shape) == tuple(e.shape)
        np.testing.assert_allclose(np.asarray(g.detach().tolist(), dtype=float),
                                   np.asarray(e.detach().tolist(), dtype=float), rtol=tol, atol=tol)


def _err(fn):
    try:
        fn()
    except Exception as e:      # noqa: BLE001
        return type(e).__name__, str(e).split(" - ")[0].split("\n")[0]
    return None


def _both(call, inplace=False):
    """call(T, lists) on glassgrad and torch; in place: returns self, writes each tensor, bumps versions."""
    out = []
    for T in (glassgrad, torch):
        args = call(T)
        if inplace:
            v0 = [t._version for t in args[0]]
            r = args[1]()
            assert r is args[0]
            assert all(t._version > v for t, v in zip(args[0], v0))
            out.append(tuple(args[0]))
        else:
            out.append(args[1]())
    return out


UNARY_CASES = [(op, inp) for op in FE._UNARY for inp in (False, True)] + [("zero", True), ("clone", False)]


@pytest.mark.parametrize("op,inplace", UNARY_CASES)
def test_unary(op, inplace):
    name = f"_foreach_{op}{'_' if inplace else ''}"
    lo, hi = (-0.9, 0.9) if op in ("abs", "neg", "sign", "round", "trunc", "frac", "floor", "ceil") else (0.1, 0.9)

    def call(T):
        x = mk(T, lo=lo, hi=hi)
        return x, lambda: getattr(T, name)(x)
    g, e = _both(call, inplace)
    _close(g, e)


BINARY_FORMS = {"L": lambda T: (mk(T, 1, lo=0.5, hi=2.0),), "S": lambda T: (1.5,), "s": lambda T: ([1.5, 2.5],),
                "T": lambda T: (T.tensor(1.5),)}
BINARY_CASES = [(op, f, inp) for op, (_, forms) in FE._BINARY.items() for f in forms if f != "A"
                for inp in (False, True)]
BINARY_CASES += [(op, f + "A", inp) for op, (_, forms) in FE._BINARY.items() if "A" in forms
                 for f in "LT" if f in forms for inp in (False, True)]


@pytest.mark.parametrize("op,form,inplace", BINARY_CASES)
def test_binary(op, form, inplace):
    name = f"_foreach_{op}{'_' if inplace else ''}"

    def call(T):
        x = mk(T, 0, lo=0.2, hi=1.5)
        other = BINARY_FORMS[form[0]](T)[0]
        kw = {"alpha": 0.5} if "A" in form else {}
        return x, lambda: getattr(T, name)(x, other, **kw)
    g, e = _both(call, inplace)
    _close(g, e)


PROMOTION = [
    lambda T: T._foreach_add(mk(T, dtype="int64"), 2.5), lambda T: T._foreach_add(mk(T, dtype="int64"), 2),
    lambda T: T._foreach_div(mk(T, dtype="int64"), mk(T, 1, dtype="int64")),
    lambda T: T._foreach_maximum(mk(T, dtype="int64"), 4.5), lambda T: T._foreach_clamp_max(mk(T, dtype="int64"), 3),
    lambda T: T._foreach_pow(2, mk(T, dtype="int64")), lambda T: T._foreach_pow(2.5, mk(T, dtype="int64")),
    lambda T: T._foreach_pow(mk(T, dtype="int64"), 0.5), lambda T: T._foreach_mul(mk(T, dtype="int64"), T.tensor(2.5)),
    lambda T: T._foreach_add(mk(T, dtype="int64"), T.tensor(2.5), alpha=2),
    lambda T: T._foreach_add(mk(T), mk(T, 1, dtype="float64")), lambda T: T._foreach_sqrt(mk(T, dtype="int64")),
    lambda T: T._foreach_exp(mk(T, dtype="float64")), lambda T: T._foreach_sub(mk(T), [1, 2]),
    lambda T: T._foreach_maximum(mk(T), mk(T, 1)), lambda T: T._foreach_minimum(mk(T), [0.3, 0.5]),
    lambda T: T._foreach_pow(mk(T), mk(T, 1)), lambda T: T._foreach_pow(mk(T), [2, 3]),
    lambda T: T._foreach_pow(1.5, mk(T)), lambda T: T._foreach_pow(2, [T.tensor([True, False]), T.arange(3)]),
    lambda T: T._foreach_pow(2.5, [T.arange(3).to(T.int32), T.arange(3).to(T.uint8)]),
    lambda T: T._foreach_addcmul(mk(T), mk(T, 1), mk(T, 2), value=0.5),
    lambda T: T._foreach_addcdiv(mk(T), tensor1=mk(T, 1), tensor2=mk(T, 2), scalars=[0.5, 2]),
    lambda T: T._foreach_addcmul(mk(T), mk(T, 1), mk(T, 2), scalars=T.tensor([0.5, 3.0])),
    lambda T: T._foreach_mul(mk(T), scalar=2), lambda T: T._foreach_mul(mk(T), scalars=[2, 3]),
    lambda T: T._foreach_add(mk(T), other=mk(T, 1), alpha=2), lambda T: T._foreach_maximum(mk(T), other=mk(T, 1)),
    lambda T: T._foreach_lerp(mk(T), tensors1=mk(T, 1), weight=0.5), lambda T: T._foreach_lerp(mk(T), mk(T, 1), weights=mk(T)),
    lambda T: T._foreach_pow(mk(T), exponent=2), lambda T: T._foreach_pow(self=2, exponent=mk(T)),
    lambda T: T._foreach_norm(mk(T), ord=1), lambda T: T._foreach_sqrt(self=mk(T)), lambda T: T._foreach_add(self=mk(T), scalar=1),
    lambda T: T._foreach_add(mk(T), True), lambda T: T._foreach_add(mk(T), [1, True]),
    lambda T: T._foreach_sub(mk(T, dtype="int64"), T.tensor(2.5)), lambda T: T._foreach_maximum(mk(T), T.tensor(0.5)),
]


@pytest.mark.parametrize("k", range(len(PROMOTION)))
def test_promotion_and_forms(k):
    _close(PROMOTION[k](glassgrad), PROMOTION[k](torch))


TERNARY = [
    lambda T, n: getattr(T, f"_foreach_addcmul{n}")(mk(T), mk(T, 1), mk(T, 2)),
    lambda T, n: getattr(T, f"_foreach_addcmul{n}")(mk(T), mk(T, 1), mk(T, 2), 0.5),
    lambda T, n: getattr(T, f"_foreach_addcmul{n}")(mk(T), mk(T, 1), mk(T, 2), [0.5, -2]),
    lambda T, n: getattr(T, f"_foreach_addcmul{n}")(mk(T), mk(T, 1), mk(T, 2), T.tensor([0.5, 3.0])),
    lambda T, n: getattr(T, f"_foreach_addcdiv{n}")(mk(T), mk(T, 1), mk(T, 2)),
    lambda T, n: getattr(T, f"_foreach_addcdiv{n}")(mk(T), mk(T, 1), mk(T, 2), -0.5),
    lambda T, n: getattr(T, f"_foreach_addcdiv{n}")(mk(T), mk(T, 1), mk(T, 2), [0.5, 2]),
    lambda T, n: getattr(T, f"_foreach_addcdiv{n}")(mk(T), mk(T, 1), mk(T, 2), T.tensor([0.5, 3.0])),
    lambda T, n: getattr(T, f"_foreach_lerp{n}")(mk(T), mk(T, 1), 0.3),
    lambda T, n: getattr(T, f"_foreach_lerp{n}")(mk(T), mk(T, 1), [0.3, 0.7]),
    lambda T, n: getattr(T, f"_foreach_lerp{n}")(mk(T), mk(T, 1), mk(T, 2)),
]


@pytest.mark.parametrize("k", range(len(TERNARY)))
@pytest.mark.parametrize("inplace", [False, True])
def test_ternary(k, inplace):
    if not inplace:
        _close(TERNARY[k](glassgrad, ""), TERNARY[k](torch, ""))
        return
    g, e = TERNARY[k](glassgrad, "_"), TERNARY[k](torch, "_")
    assert isinstance(g, list) and isinstance(e, list)
    _close(tuple(g), tuple(e))


REDUCE = [
    lambda T: T._foreach_norm(mk(T)), lambda T: T._foreach_norm(mk(T), 1), lambda T: T._foreach_norm(mk(T), math.inf),
    lambda T: T._foreach_norm(mk(T), 3.0), lambda T: T._foreach_norm(mk(T), 0),
    lambda T: T._foreach_norm(mk(T), -math.inf), lambda T: T._foreach_norm(mk(T), 2, T.float64),
    lambda T: T._foreach_norm(mk(T), dtype=T.float64), lambda T: T._foreach_max(mk(T)),
    lambda T: T._foreach_max(mk(T, dtype="int64")),
    *[lambda T, o=o: T._foreach_powsum([T.tensor([-2.0, 0.0, 1.5]), T.ones(2, 2)], o)
      for o in (1, 2, 3, 0, 0.5, 2.5, -1, math.inf, -math.inf)],
    lambda T: T._foreach_powsum(mk(T), 2, T.float64), lambda T: T._foreach_powsum(mk(T, dtype="float64"), dtype=None),
    lambda T: T._foreach_mm([T.ones(2, 3), T.ones(1, 2) * 2], [T.ones(3, 2) * 3, T.ones(2, 4)]),
]


@pytest.mark.parametrize("k", range(len(REDUCE)))
def test_reductions(k):
    _close(REDUCE[k](glassgrad), REDUCE[k](torch))


def test_copy_returns_self_and_writes():
    for T in (glassgrad, torch):
        x = mk(T)
        r = T._foreach_copy_(x, mk(T, 1, dtype="float64"))
        assert r is x and x[0].dtype == T.float32
    _close(tuple(glassgrad._foreach_copy_(mk(glassgrad), mk(glassgrad, 1))),
           tuple(torch._foreach_copy_(mk(torch), mk(torch, 1))))


GRADS = [
    lambda T, x, y: T._foreach_add(x, y, alpha=2), lambda T, x, y: T._foreach_sub(x, 0.5),
    lambda T, x, y: T._foreach_mul(x, y), lambda T, x, y: T._foreach_div(y, x),
    lambda T, x, y: T._foreach_pow(x, 3), lambda T, x, y: T._foreach_pow(2.0, x),
    lambda T, x, y: T._foreach_sqrt(x), lambda T, x, y: T._foreach_sigmoid(x),
    lambda T, x, y: T._foreach_norm(x), lambda T, x, y: T._foreach_max(x),
    lambda T, x, y: T._foreach_addcmul(x, y, x, [0.5, 2]), lambda T, x, y: T._foreach_lerp(x, y, y),
    lambda T, x, y: T._foreach_maximum(x, y), lambda T, x, y: T._foreach_clamp_min(x, 0.5),
    lambda T, x, y: T._foreach_clone(x),
]


@pytest.mark.parametrize("k", range(len(GRADS)))
def test_grads(k):
    res = []
    for T in (glassgrad, torch):
        x, y = mk(T, rg=True), mk(T, 1, rg=True)
        out = GRADS[k](T, x, y)
        sum((o * (i + 1)).sum() for i, o in enumerate(out)).backward()
        res.append(tuple(t.grad if t.grad is not None else T.zeros(t.shape) for t in x + y))
    _close(*res)


ERRORS = [
    lambda T: T._foreach_add([], []), lambda T: T._foreach_add([], 1), lambda T: T._foreach_sqrt([]),
    lambda T: T._foreach_add(mk(T), mk(T)[:1]), lambda T: T._foreach_mul_(mk(T), mk(T)[:1]),
    lambda T: T._foreach_add(mk(T), [1.0]), lambda T: T._foreach_lerp(mk(T), mk(T), [0.5]),
    lambda T: T._foreach_addcmul(mk(T), mk(T), mk(T)[:1]), lambda T: T._foreach_addcmul(mk(T), mk(T), mk(T), [1.0]),
    lambda T: T._foreach_addcmul(mk(T), mk(T), mk(T), T.tensor([1.0, 2.0, 3.0])),
    lambda T: T._foreach_addcdiv(mk(T), mk(T), mk(T), T.tensor([[1.0, 2.0]])),
    lambda T: T._foreach_mul(mk(T), T.ones(2)), lambda T: T._foreach_add(mk(T), mk(T), 2.0),
    lambda T: T._foreach_add(T.ones(2), 1), lambda T: T._foreach_add([T.ones(2), 3], 1),
    lambda T: T._foreach_add(mk(T), [T.ones(3), 3]), lambda T: T._foreach_add(mk(T), [1, 2], alpha=2),
    lambda T: T._foreach_sub(mk(T), T.ones(2)), lambda T: T._foreach_maximum(mk(T), T.ones(1)),
    lambda T: T._foreach_norm(mk(T), "fro"), lambda T: T._foreach_norm([T.ones(2, dtype=T.int32)]),
    lambda T: T._foreach_max([T.ones(0)]), lambda T: T._foreach_add([T.ones(2)], [T.ones(3)]),
    lambda T: T._foreach_add_([T.ones(2, dtype=T.int64)], 2.5), lambda T: T._foreach_neg([T.ones(2, dtype=T.bool)]),
    lambda T: T._foreach_sub([T.ones(2, dtype=T.bool)], [T.ones(2, dtype=T.bool)]),
    lambda T: T._foreach_add_([T.ones(2, requires_grad=True)], 1), lambda T: T._foreach_sqrt_(mk(T, rg=True)),
    lambda T: T._foreach_mm([T.ones(2, 3)], [T.ones(2, 3)]), lambda T: T._foreach_copy_(mk(T), mk(T)[:1]),
    lambda T: T._foreach_sign([T.ones(2, dtype=T.complex64)]), lambda T: T._foreach_lerp(mk(T), mk(T), "x"),
    lambda T: T._foreach_mul(mk(T), scalar=[1, 2]), lambda T: T._foreach_mul(mk(T), 2, scalar=2),
    lambda T: T._foreach_powsum([T.arange(3)]), lambda T: T._foreach_powsum(mk(T), "fro"),
    lambda T: T._foreach_powsum(mk(T, rg=True))[1].backward(),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    e = _err(lambda: ERRORS[k](torch))
    assert e is not None
    assert _err(lambda: ERRORS[k](glassgrad)) == e


def test_powsum_grad_fn():
    for T in (glassgrad, torch):
        r = T._foreach_powsum(mk(T, rg=True))
        assert [type(x.grad_fn).__name__ for x in r] == ["NotImplemented"] * 2
        assert T._foreach_powsum(mk(T))[0].grad_fn is None


def test_names_match_torch():
    """Every name built is one torch has; the ones left out are listed here."""
    ours = {n for n in dir(glassgrad._foreach) if n.startswith("_foreach_")}
    theirs = {n for n in dir(torch) if n.startswith("_foreach_")}
    assert ours <= theirs
    assert theirs == ours
    assert all(getattr(glassgrad, n) is getattr(FE, n) for n in ours)
