"""autograd.functional and gradcheck, differential against torch (values) and able to fail."""
import numpy as np
import pytest

import glassgrad as gg

import torch


def fns(T):
    f1 = lambda x: (x ** 3) * 2 + x.sin()                        # noqa: E731
    f2 = lambda x, w: ((x[:2] @ w).exp() * x[2:].sum(), (w * w).sum())  # noqa: E731
    fs = lambda x: (x ** 3).sum() + (x[0:1] * x[1:2]).exp().sum()  # noqa: E731
    return f1, f2, fs


def _inputs(T):
    return T.tensor([0.5, -1.0, 2.0], dtype=T.float64), T.tensor([[1.0, 2.0], [0.5, -0.5]], dtype=T.float64)


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(e) for e in x]
    return x.detach().numpy()


def _same(a, b):
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _both(make):
    return _np(make(torch)), _np(make(gg))


@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_jvp_vhp_hvp(create_graph):
    def run(T):
        F = T.autograd.functional
        f1, f2, fs = fns(T)
        x, w = _inputs(T)
        v3 = T.tensor([1.0, 0.5, 2.0], dtype=T.float64)
        return (F.vjp(f1, x, v3, create_graph=create_graph),
                F.vjp(f2, (x, w), (T.ones(2, dtype=T.float64), T.tensor(2.0, dtype=T.float64))),
                F.vjp(fs, x),
                F.jvp(f1, x, v3, create_graph=create_graph),
                F.jvp(f2, (x, w), (T.ones(3, dtype=T.float64), T.ones(2, 2, dtype=T.float64))),
                F.vhp(fs, x, v3, create_graph=create_graph), F.hvp(fs, x, v3, create_graph=create_graph))
    a, b = _both(run)
    _same(b, a)


def test_jacobian_hessian():
    def run(T):
        F = T.autograd.functional
        f1, f2, fs = fns(T)
        x, w = _inputs(T)
        return (F.jacobian(f1, x), F.jacobian(f2, (x, w)), F.jacobian(lambda a: a.sum(), x),
                F.hessian(fs, x), F.hessian(lambda a, b: (a[:2] * (b @ a[:2]).exp()).sum() + (b ** 3).sum(), (x, w)))
    a, b = _both(run)
    _same(b, a)


def test_strict_and_argument_errors_match_torch_types():
    cases = [
        lambda T: T.autograd.functional.vjp(lambda a, b: a * 2, _inputs(T), T.ones(3, dtype=T.float64), strict=True),
        lambda T: T.autograd.functional.vjp(fns(T)[0], _inputs(T)[0]),
        lambda T: T.autograd.functional.vjp(fns(T)[0], _inputs(T)[0], T.ones(2, dtype=T.float64)),
        lambda T: T.autograd.functional.jacobian(fns(T)[0], [_inputs(T)[0]]),
        lambda T: T.autograd.functional.hessian(lambda a: a * 2, _inputs(T)[0]),
    ]
    for c in cases:
        with pytest.raises(Exception) as te:
            c(torch)
        with pytest.raises(type(te.value)) as ge:
            c(gg)
        assert str(ge.value) == str(te.value)


def test_gradcheck_accepts_correct_and_rejects_wrong_gradients():
    x = gg.tensor([0.3, -0.7, 1.1], dtype=gg.float64, requires_grad=True)
    assert gg.autograd.gradcheck(lambda a: (a.exp() * a.sin()).sum() + a ** 2, (x,))
    assert gg.autograd.gradgradcheck(lambda a: (a ** 3 * a.cos()), (x,))

    class Bad(gg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3
    with pytest.raises(gg.autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0,"):
        gg.autograd.gradcheck(Bad.apply, (x,))
    assert gg.autograd.gradcheck(Bad.apply, (x,), raise_exception=False) is False
    assert issubclass(gg.autograd.GradcheckError, RuntimeError)
