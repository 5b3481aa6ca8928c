"""torch.func's differentiation transforms (grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian)
against torch.func: values, pytrees, argnums, has_aux, nesting, graphs kept for ordinary autograd, errors."""
import numpy as np
import pytest

import glassgrad as gg

import torch


def _np(x):
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return [_np(e) for e in x]
    if isinstance(x, (gg.Tensor, torch.Tensor)):
        return x.detach().numpy()
    return x


def _same(a, b, tol=1e-10):
    if isinstance(b, dict):
        assert isinstance(a, dict) and a.keys() == b.keys()
        for k in b:
            _same(a[k], b[k], tol)
        return
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, tol)
        return
    if not isinstance(b, np.ndarray):
        assert a == b
        return
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _both(make, tol=1e-10):
    """make(T) with T = torch and glassgrad: the same nested results."""
    _same(_np(make(gg)), _np(make(torch)), tol)


def _err(make, exact=True):
    """The same exception type and message (or message start, for messages that print a TreeSpec)."""
    with pytest.raises(Exception) as te:
        make(torch)
    with pytest.raises(Exception) as ge:
        make(gg)
    assert type(ge.value).__name__ == type(te.value).__name__, (ge.value, te.value)
    if exact:
        assert str(ge.value) == str(te.value)
    else:
        assert str(ge.value).split("TreeSpec")[0] == str(te.value).split("TreeSpec")[0]


def _x(T):
    return T.tensor([0.5, -1.0, 2.0], dtype=T.float64), T.tensor([1.5, 0.25, -0.75], dtype=T.float64)


def _f(T):
    return lambda a, b: (T.sin(a) * b).sum() + (a ** 3).sum() * b[0]


# -- grad ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argnums", [0, 1, -1, (0, 1), (1, 0)])
def test_grad_argnums(argnums):
    _both(lambda T: T.func.grad(_f(T), argnums=argnums)(*_x(T)))


def test_grad_and_value_has_aux_and_pytrees():
    def run(T):
        a, b = _x(T)

        def f(d, scale):
            out = (d["w"].exp() * d["v"][0] ** 2).sum() * scale
            return out, {"mean": d["w"].mean(), "n": (d["v"][1] * 0,)}
        g, (value, aux) = T.func.grad_and_value(f, has_aux=True)({"w": a, "v": (b, a)}, 2.0)
        return g, value, aux
    _both(run)


def test_grad_unused_input_is_zero_and_kwargs_pass_through():
    _both(lambda T: T.func.grad(lambda a, b, *, k: (a * k).sum(), argnums=(0, 1))(*_x(T), k=3.0))


def test_nested_grad_third_derivative():
    def run(T):
        x = T.tensor(0.7, dtype=T.float64)
        f = lambda x: T.sin(x) * x ** 3      # noqa: E731
        return [T.func.grad(f)(x), T.func.grad(T.func.grad(f))(x), T.func.grad(T.func.grad(T.func.grad(f)))(x)]
    _both(run)


def test_grad_of_closure_over_outer_variable():
    # d/dx [ x * d/dy (x * y^2) at y = x ] = d/dx [2 x^3] = 6 x^2  (no perturbation confusion)
    def run(T):
        inner = lambda x: T.func.grad(lambda y: x * y ** 2)(x)      # noqa: E731
        return T.func.grad(lambda x: x * inner(x))(T.tensor(1.5, dtype=T.float64))
    _both(run)


def test_grad_ignores_outer_no_grad_and_detaches_at_top():
    def run(T):
        a, b = _x(T)
        with T.no_grad():
            g = T.func.grad(_f(T))(a, b)
        return g, g.requires_grad, T.func.grad(_f(T))(a, b).requires_grad
    _both(run)


def test_grad_keeps_graph_for_ordinary_autograd():
    def run(T):
        a, b = _x(T)
        a.requires_grad_()
        g = T.func.grad(_f(T))(a, b)
        (g * g).sum().backward()
        return g.requires_grad, a.grad
    _both(run)


def test_gradient_penalty_reaches_closed_over_parameters():
    def run(T):
        T.manual_seed(0)
        critic = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 1)).double()
        x = T.tensor([[0.3, -0.2, 0.9], [1.0, 0.5, -1.5]], dtype=T.float64)
        gp = T.func.vmap(T.func.grad(lambda xi: critic(xi).sum()))(x)
        jac = T.func.jacrev(lambda xi: critic(xi))(x[0])
        ((gp.norm(dim=1) - 1) ** 2).mean().add(jac.sum()).backward()
        return gp, gp.requires_grad, [p.grad for p in critic.parameters()]
    _both(run)


# -- vjp / jvp / linearize ---------------------------------------------------------------------------
def test_vjp_pytree_outputs_and_repeated_calls():
    def run(T):
        a, b = _x(T)
        out, fn = T.func.vjp(lambda p, q: {"s": T.tanh(p).outer(q), "t": (p * q,)}, a, b)
        c1 = {"s": T.ones(3, 3, dtype=T.float64), "t": (b,)}
        c2 = {"s": a.outer(b), "t": (a,)}
        return out, fn(c1), fn(c2)
    _both(run)


def test_vjp_has_aux():
    _both(lambda T: (lambda r: (r[0], r[1](T.ones(3, dtype=T.float64)), r[2]))(
        T.func.vjp(lambda p: (p.exp(), p.sum()), _x(T)[0], has_aux=True)))


def test_jvp_values_and_has_aux():
    def run(T):
        a, b = _x(T)
        f = lambda p, q: ((T.tanh(p) * q, (p @ q).reshape(1)), p.max())       # noqa: E731
        return T.func.jvp(f, (a, b), (b, a), has_aux=True)
    _both(run)


def test_jvp_output_independent_of_input():
    _both(lambda T: T.func.jvp(lambda p: T.ones(2, dtype=T.float64), (_x(T)[0],), (_x(T)[1],)))
    _err(lambda T: T.func.jvp(lambda p: T.ones(2, dtype=T.float64), (_x(T)[0],), (_x(T)[1],), strict=True))


def test_jvp_and_jacrev_of_torch_return_types():
    def run(T):
        a = T.tensor([[2.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 1.5]], dtype=T.float64)
        b = T.tensor([[1.0, 0.2, 0.0], [0.2, -1.0, 0.3], [0.0, 0.3, 0.5]], dtype=T.float64)
        out, tangent = T.func.jvp(T.linalg.slogdet, (a,), (b,))
        return (list(out), tangent.logabsdet, bool((tangent.sign == 0).all()), type(out).__name__,
                T.func.jacrev(lambda m: T.linalg.slogdet(m).logabsdet)(a))
    _both(run)


def test_linearize_matches_jvp():
    def run(T):
        a, b = _x(T)
        out, fn = T.func.linearize(lambda p: (T.sin(p) * p).cumsum(0), a)
        return out, fn(b), fn(a)
    _both(run)


def test_jvp_of_grad_is_hessian_vector_product():
    def run(T):
        a, b = _x(T)
        return T.func.jvp(T.func.grad(lambda p: (p.sin() * p ** 2).sum()), (a,), (b,))
    _both(run)


# -- jacobians ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacobians(which, argnums):
    def run(T):
        a, b = _x(T)
        f = lambda p, q: {"outer": T.sin(p).outer(q), "dot": (p * q).sum(), "slice": p[:2] * q[1:]}   # noqa: E731
        return getattr(T.func, which)(f, argnums=argnums)(a, b)
    _both(run)


@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
def test_jacobian_has_aux_and_matrix_input(which):
    def run(T):
        m = T.tensor([[1.0, 2.0], [0.5, -0.5], [0.1, 0.3]], dtype=T.float64)
        return getattr(T.func, which)(lambda w: (T.tanh(w @ w.T), w.sum()), has_aux=True)(m)
    _both(run)


def _mlp_params(T):
    T.manual_seed(0)
    net = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 2)).double()
    return net, {k: v.detach() for k, v in net.named_parameters()}


@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
def test_mlp_jacobian_wrt_params(which):
    def run(T):
        net, params = _mlp_params(T)
        x = T.tensor([[0.3, -0.2, 0.9], [1.0, 0.5, -1.5]], dtype=T.float64)
        return getattr(T.func, which)(lambda p: T.func.functional_call(net, p, (x,)))(params)
    _both(run)


def test_hessian_small_function_and_argnums():
    _both(lambda T: T.func.hessian(_f(T), argnums=(0, 1))(*_x(T)))
    _both(lambda T: T.func.hessian(lambda p: (p.exp() * p[0]).sum())(_x(T)[0]))


def test_mlp_hessian_wrt_input():
    def run(T):
        net, _ = _mlp_params(T)
        x = T.tensor([0.3, -0.2, 0.9], dtype=T.float64)
        return T.func.hessian(lambda v: net(v).pow(2).sum())(x), T.func.jacrev(T.func.jacrev(lambda v: net(v).sum()))(x)
    _both(run)


def test_integer_outputs_and_arguments():
    def run(T):
        x = _x(T)[0]
        return (T.func.jacfwd(lambda a: (a.sum(), a.argmax()))(x), T.func.grad(lambda a: a.sum().long())(x),
                T.func.grad(lambda a, n: (a ** n).sum())(x, 3), T.func.jvp(lambda a: a.argmax(), (x,), (x,)))
    _both(run)


def test_jacrev_chunk_size_same_values():
    _both(lambda T: T.func.jacrev(lambda p: T.sin(p).outer(p), chunk_size=2)(_x(T)[0]))


# -- errors ------------------------------------------------------------------------------------------
def _scalar(T):
    return lambda p: (p * 2).sum()


ERRORS = [
    lambda T: T.func.grad(lambda p: p * 2)(_x(T)[0]),
    lambda T: T.func.grad(_scalar(T), argnums=1)(_x(T)[0]),
    lambda T: T.func.grad(_scalar(T), argnums=-2)(_x(T)[0]),
    lambda T: T.func.grad(_scalar(T), argnums=1.5)(_x(T)[0]),
    lambda T: T.func.grad(_scalar(T), argnums=())(_x(T)[0]),
    lambda T: T.func.grad(lambda p, q: p.sum(), argnums=(0, 0))(*_x(T)),
    lambda T: T.func.grad(_scalar(T), has_aux=True)(_x(T)[0]),
    lambda T: T.func.grad(lambda p: [p.sum(), 1], has_aux=True)(_x(T)[0]),
    lambda T: T.func.grad(lambda p: 3.0)(_x(T)[0]),
    lambda T: T.func.grad(lambda p: (p.sum(), 3), has_aux=True)(_x(T)[0]),
    lambda T: T.func.grad(_scalar(T))(3.0),
    lambda T: T.func.grad(_scalar(T))(T.arange(3)),
    lambda T: T.func.vjp(lambda p: p * 2, _x(T)[0])[1](T.ones(2, dtype=T.float64)),
    lambda T: T.func.vjp(lambda p: 3, _x(T)[0]),
    lambda T: T.func.vjp(lambda p: (p, p.argmax()), _x(T)[0]),
    lambda T: T.func.jacrev(lambda p: (p, p.argmax()))(_x(T)[0]),
    lambda T: T.func.jvp(lambda p: p * 2, _x(T)[0], _x(T)[1]),
    lambda T: T.func.jvp(lambda p: p * 2, (_x(T)[0],), (T.ones(2, dtype=T.float64),)),
    lambda T: T.func.jvp(lambda p: 2, (_x(T)[0],), (_x(T)[1],)),
    lambda T: T.func.jvp(lambda p: p, (), ()),
    lambda T: T.func.jvp(lambda p: p, (3.0,), (3.0,)),
    lambda T: T.func.jvp(lambda p: p, (_x(T)[0],), (_x(T)[1],), has_aux=True),
    lambda T: T.func.jacrev(_scalar(T), argnums=2)(_x(T)[0]),
    lambda T: T.func.jacfwd(_scalar(T), argnums=2)(_x(T)[0]),
    lambda T: T.func.jacrev(_scalar(T), chunk_size=0),
    lambda T: T.func.jacfwd(lambda p: 3)(_x(T)[0]),
    lambda T: T.func.jacrev(lambda p: 3)(_x(T)[0]),
    lambda T: T.func.jacrev(_scalar(T))(T.ones(2, dtype=T.complex128)),
    lambda T: T.func.jacfwd(_scalar(T), randomness="sometimes")(_x(T)[0]),
    lambda T: T.func.jacfwd(lambda p: p * T.rand(3, dtype=T.float64))(_x(T)[0]),
    lambda T: T.func.linearize(lambda p: p.sin(), _x(T)[0])[1](T.ones(2, dtype=T.float64)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_as_torch(i):
    _err(ERRORS[i])


def test_structure_errors_as_torch():
    _err(lambda T: T.func.vjp(lambda p: p * 2, _x(T)[0])[1]((T.ones(3, dtype=T.float64),)))
    _err(lambda T: T.func.jvp(lambda p: p * 2, (_x(T)[0],), (_x(T)[0], _x(T)[1])), exact=False)
