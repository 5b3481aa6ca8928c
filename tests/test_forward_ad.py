"""torch.autograd.forward_ad (dual_level, make_dual, unpack_dual, enter / exit_dual_level) against torch's
forward AD: tangents of composite functions, modules, views and in-place ops, errors."""
import numpy as np
import pytest

import glassgrad as gg

from test_func_transforms import _both, _err


def _xv(T):
    return (T.tensor([0.5, -1.0, 2.0], dtype=T.float64), T.tensor([1.5, 0.25, -0.75], dtype=T.float64))


def _unpacked(T, f):
    fw = T.autograd.forward_ad
    x, v = _xv(T)
    with fw.dual_level():
        y = f(fw.make_dual(x, v))
        u = fw.unpack_dual(y)
        return u.primal, u.tangent


FUNCS = [
    lambda T, d: T.sin(d) * d.exp(),
    lambda T, d: (d ** 2).sum(),
    lambda T, d: T.softmax(d, 0).outer(d),
    lambda T, d: d[1:].cumprod(0) / (1 + d[:2] ** 2),
    lambda T, d: T.nn.functional.gelu(d).max(),
    lambda T, d: T.linalg.norm(d.reshape(1, 3) * d.reshape(3, 1)),
    lambda T, d: T.where(d > 0, d.log1p(), d.tanh()),
    lambda T, d: T.stack([d, d * 2]).T @ T.tensor([1.0, -1.0], dtype=T.float64),
]


@pytest.mark.parametrize("i", range(len(FUNCS)))
def test_tangents_match_torch(i):
    _both(lambda T: _unpacked(T, lambda d: FUNCS[i](T, d)))


def test_unpack_dual_of_the_dual_and_of_unrelated_tensors():
    def run(T):
        fw = T.autograd.forward_ad
        x, v = _xv(T)
        with fw.dual_level():
            d = fw.make_dual(x, v)
            own, other, ints = fw.unpack_dual(d), fw.unpack_dual(x * 2), fw.unpack_dual(d.argmax())
            return own.primal, own.tangent, other.tangent, ints.tangent, type(own).__name__, own._fields
    _both(run)


def test_module_and_several_duals():
    def run(T):
        fw = T.autograd.forward_ad
        T.manual_seed(0)
        net = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 2)).double()
        x, v = _xv(T)
        with fw.dual_level():
            a = fw.make_dual(x, v)
            b = fw.make_dual(x * 3, v.flip(0))
            out = net(a) * net(b).sum()
            return fw.unpack_dual(out).tangent, fw.unpack_dual(out).primal
    _both(run)


def test_inplace_and_views():
    def run(T):
        fw = T.autograd.forward_ad
        x, v = _xv(T)
        with fw.dual_level():
            d = fw.make_dual(x, v)
            y = d.clone()
            y[1:].mul_(d[:2])
            y.exp_()
            return fw.unpack_dual(y).tangent, fw.unpack_dual(y.view(3, 1)[1]).tangent
    _both(run)


def test_reverse_mode_still_works_on_duals():
    def run(T):
        fw = T.autograd.forward_ad
        x, v = _xv(T)
        x.requires_grad_()
        with fw.dual_level():
            d = fw.make_dual(x, v)
            y = (T.sin(d) * d).sum()
            tangent = fw.unpack_dual(y).tangent
            y.backward()
        return tangent, x.grad
    _both(run)


def test_tangent_differentiable_in_the_tangent():
    def run(T):
        fw = T.autograd.forward_ad
        x, v = _xv(T)
        v.requires_grad_()
        with fw.dual_level():
            t = fw.unpack_dual((fw.make_dual(x, v) ** 3).sum()).tangent
        t.backward()
        return t, v.grad
    _both(run)


def test_levels_enter_exit_and_decorator():
    def run(T):
        fw = T.autograd.forward_ad
        x, v = _xv(T)
        lvl = fw.enter_dual_level()
        d = fw.make_dual(x, v)
        inside = fw.unpack_dual(d * 2).tangent
        fw.exit_dual_level(level=lvl)
        after = fw.unpack_dual(d * 2).tangent

        @fw.dual_level()
        def decorated():
            return fw.unpack_dual(fw.make_dual(x, v).exp()).tangent
        return lvl, inside, after, decorated()
    _both(run)


def test_jvp_agrees_with_autograd_functional_jvp():
    x, v = _xv(gg)
    f = lambda a: gg.tanh(a).cumsum(0) * a        # noqa: E731
    with gg.autograd.forward_ad.dual_level():
        t = gg.autograd.forward_ad.unpack_dual(f(gg.autograd.forward_ad.make_dual(x, v))).tangent
    np.testing.assert_allclose(t.numpy(), gg.autograd.functional.jvp(f, x, v)[1].numpy(), rtol=1e-12)
    np.testing.assert_allclose(t.numpy(), gg.func.jvp(f, (x,), (v,))[1].numpy(), rtol=1e-12)


ERRORS = [
    lambda T: T.autograd.forward_ad.make_dual(*_xv(T)),
    lambda T: T.autograd.forward_ad.exit_dual_level(),
]


def _in_level(body):
    def run(T):
        with T.autograd.forward_ad.dual_level():
            body(T)
    return run


LEVEL_ERRORS = [
    lambda T: T.autograd.forward_ad.make_dual(_xv(T)[0], T.ones(2, dtype=T.float64)),
    lambda T: T.autograd.forward_ad.make_dual(T.arange(3), T.ones(3)),
    lambda T: T.autograd.forward_ad.make_dual(_xv(T)[0], T.arange(3)),
    lambda T: T.autograd.forward_ad.enter_dual_level(),
]


@pytest.mark.parametrize("i", range(len(ERRORS) + len(LEVEL_ERRORS)))
def test_errors_as_torch(i):
    _err(ERRORS[i] if i < len(ERRORS) else _in_level(LEVEL_ERRORS[i - len(ERRORS)]))


def test_complex_tangents_match_torch():
    """Holomorphic and non-holomorphic functions, complex -> real and real -> complex: the double-vjp trick on
    glassgrad's conjugate-Wirtinger gradients gives torch's tangents."""
    def run(T):
        z = T.tensor([1 + 2j, -0.5 + 0.3j], dtype=T.complex128)
        v = T.tensor([1 + 0.5j, 1j], dtype=T.complex128)
        x = T.tensor([0.5, 1.5], dtype=T.float64)
        fs = [lambda a: a.exp() * a, lambda a: a.conj() * 2 + a.real, lambda a: a * a.abs(), lambda a: a.angle() * a,
              lambda a: a.abs()]
        out = [T.func.jvp(f, (z,), (v,))[1] for f in fs]
        out.append(T.func.jvp(lambda r: T.polar(r, r * 2) * (1 + 1j), (x,), (x,))[1])
        fw = T.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(z, v)
            out.append(fw.unpack_dual((d.conj() * d).real).tangent)
        out.append(T.func.vjp(lambda a: a.sin() * a, z)[1](v)[0])
        return out
    _both(run)


def test_inplace_on_the_dual_and_on_jvp_primals():
    def run(T):
        fw = T.autograd.forward_ad
        x, v = _xv(T)
        with fw.dual_level():
            d = fw.make_dual(x, v)
            d.mul_(2).add_(d.detach().sin())
            u = fw.unpack_dual(d)
            y = fw.unpack_dual(d.exp().sum())
        p, t = _xv(T)
        out, tangent = T.func.jvp(lambda a: a.mul_(3).cos_(), (p,), (t,))
        return x, u.tangent, u.primal, y.tangent, out, tangent, p
    _both(run)
