"""torch.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp), differential against torch."""
import pytest

from test_autograd_engine import diff


def _in(T):
    return T.tensor([0.5, -1.0, 2.0]), T.tensor([[1.0, 2.0], [0.5, -0.5]])


def f1(T):
    return lambda x: (x ** 3) * 2 + x


def f2(T):
    return lambda x, w: ((x[:2] @ w).exp() * x[2:].sum(), (w * w).sum())


def fs(T):
    return lambda x: (x ** 3).sum() + (x[0:1] * x[1:2]).exp().sum()


def fs2(T):
    return lambda x, w: (x[:2] * (w @ x[:2]).exp()).sum() + (w ** 3).sum()


@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp(create_graph):
    def f(T):
        x, w = _in(T)
        F = T.autograd.functional
        a = F.vjp(f1(T), x, T.tensor([1.0, 0.5, 2.0]), create_graph=create_graph)
        b = F.vjp(f2(T), (x, w), (T.tensor([1.0, -1.0]), T.tensor(2.0)), create_graph=create_graph)
        c = F.vjp(fs(T), x)
        return a, b, c
    diff(f)


@pytest.mark.parametrize("create_graph", [False, True])
def test_jvp(create_graph):
    def f(T):
        x, w = _in(T)
        F = T.autograd.functional
        a = F.jvp(f1(T), x, T.tensor([1.0, 0.5, 2.0]), create_graph=create_graph)
        b = F.jvp(f2(T), (x, w), (T.ones(3), T.ones(2, 2)), create_graph=create_graph)
        return a, b
    diff(f)


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian(vectorize):
    def f(T):
        x, w = _in(T)
        F = T.autograd.functional
        a = F.jacobian(f1(T), x, vectorize=vectorize)
        b = F.jacobian(f2(T), (x, w), vectorize=vectorize)
        c = F.jacobian(lambda x: x.sum(), x, vectorize=vectorize)
        d = F.jacobian(f1(T), x, create_graph=True)
        e = F.jacobian(f1(T), x, vectorize=True, strategy="forward-mode")
        h = F.hessian(fs(T), x, vectorize=True, outer_jacobian_strategy="forward-mode")
        return a, b, c, d, e, h
    diff(f)


@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian(vectorize):
    def f(T):
        x, w = _in(T)
        F = T.autograd.functional
        return F.hessian(fs(T), x, vectorize=vectorize), F.hessian(fs2(T), (x, w), vectorize=vectorize)
    diff(f)


@pytest.mark.parametrize("create_graph", [False, True])
def test_vhp_hvp(create_graph):
    def f(T):
        x, w = _in(T)
        F = T.autograd.functional
        v = T.tensor([1.0, 0.0, -1.0])
        return (F.vhp(fs(T), x, v, create_graph=create_graph), F.hvp(fs(T), x, v, create_graph=create_graph),
                F.vhp(fs2(T), (x, w), (v, T.ones(2, 2))), F.hvp(fs2(T), (x, w), (v, T.ones(2, 2))))
    diff(f)


def test_strict_errors():
    def mk(kind):
        def f(T):
            F = T.autograd.functional
            x, w = _in(T)
            if kind == "vjp_indep":
                return F.vjp(lambda a, b: a * 2, (x, w), T.ones(3), strict=True)
            if kind == "vjp_const":
                return F.vjp(lambda a: T.ones(3), x, T.ones(3), strict=True)
            if kind == "jac_indep":
                return F.jacobian(lambda a, b: a * 2, (x, w), strict=True)
            if kind == "jac_vec_strict":
                return F.jacobian(lambda a: a * 2, x, strict=True, vectorize=True)
            if kind == "hess_linear":
                return F.hessian(lambda a: a.sum(), x, strict=True)
            if kind == "hvp_linear":
                return F.hvp(lambda a: (a * 2).sum(), x, T.ones(3), strict=True)
            if kind == "nonstrict":
                return F.vjp(lambda a, b: a * 2, (x, w), T.ones(3)), F.hessian(lambda a: a.sum(), x)
        return f
    for k in ("vjp_indep", "vjp_const", "jac_indep", "jac_vec_strict", "hess_linear", "hvp_linear", "nonstrict"):
        diff(mk(k))


def test_argument_errors():
    def mk(kind):
        def f(T):
            F = T.autograd.functional
            x, w = _in(T)
            if kind == "v_none":
                return F.vjp(f1(T), x)
            if kind == "v_size":
                return F.vjp(f1(T), x, T.ones(2))
            if kind == "v_len":
                return F.vjp(f2(T), (x, w), (T.ones(2),))
            if kind == "v_entry":
                return F.jvp(f2(T), (x, w), (T.ones(3), T.ones(2)))
            if kind == "bad_input":
                return F.vjp(f1(T), (x, 3), T.ones(3))
            if kind == "bad_input_single":
                return F.jacobian(f1(T), [x])
            if kind == "hess_tuple":
                return F.hessian(lambda a: (a.sum(), a.sum()), x)
            if kind == "hess_numel":
                return F.hessian(lambda a: a * 2, x)
            if kind == "vhp_numel":
                return F.vhp(lambda a: a * 2, x, T.ones(3))
            if kind == "jvp_v_none":
                return F.jvp(f1(T), x)
            if kind == "fwd_create":
                return F.jacobian(f1(T), x, create_graph=True, strategy="forward-mode")
        return f
    for k in ("v_none", "v_size", "v_len", "v_entry", "bad_input", "bad_input_single", "hess_tuple", "hess_numel",
              "vhp_numel", "jvp_v_none", "fwd_create"):
        diff(mk(k))


def test_create_graph_results_differentiable():
    def f(T):
        x, _ = _in(T)
        x.requires_grad_()
        F = T.autograd.functional
        _, g = F.vjp(fs(T), x, create_graph=True)
        g.sum().backward()
        h = F.hessian(fs(T), x, create_graph=True)
        return g, x.grad, h.requires_grad
    diff(f)


def test_inputs_not_modified():
    def f(T):
        x, _ = _in(T)
        x.requires_grad_()
        F = T.autograd.functional
        out, g = F.vjp(f1(T), x, T.ones(3))
        return out.requires_grad, g.requires_grad, x.grad
    diff(f)


# ======================================================================================
# gradcheck / gradgradcheck
# ======================================================================================
def _gc_fns(T):
    class Bad(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class NoMul(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return T.ones_like(g) * 2

    return Bad, NoMul


def _d(T, vals=(0.5, -1.0, 2.0)):
    return T.tensor(list(vals), dtype=T.float64, requires_grad=True)


def test_gradcheck_passes():
    def f(T):
        x = _d(T)
        w = T.tensor([[1.0, 2.0], [0.5, -0.5]], dtype=T.float64, requires_grad=True)
        g = T.autograd.gradcheck
        return (g(lambda a: (a ** 3).exp(), (x,)), g(lambda a: a * 2, x),
                g(lambda a, b: ((a[:2] @ b).exp(), (b * b).sum()), (x, w)),
                g(lambda a, b: a * b, (x, T.ones(3, dtype=T.float64))),
                g(lambda a: (a * 2).detach(), (x,)))
    diff(f)


def test_gradcheck_mismatch_message():
    def f(T):
        Bad, _ = _gc_fns(T)
        try:
            T.autograd.gradcheck(Bad.apply, (_d(T),))
        except RuntimeError as e:
            return type(e).__name__, str(e).split("\n")[0], issubclass(type(e), RuntimeError)
    diff(f)
    diff(lambda T: T.autograd.gradcheck(_gc_fns(T)[0].apply, (_d(T),), raise_exception=False))


def test_gradcheck_backward_not_multiplied():
    diff(lambda T: T.autograd.gradcheck(_gc_fns(T)[1].apply, (_d(T),)))


def test_gradcheck_input_errors_and_warning():
    diff(lambda T: T.autograd.gradcheck(lambda a: a * 2, (T.ones(2, dtype=T.float64),)))

    def f(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        return T.autograd.gradcheck(lambda a: a * 2, (x,), eps=1e-3, atol=1e-2)
    diff(f)


def test_gradgradcheck():
    def f(T):
        x = _d(T)
        g = T.autograd.gradgradcheck
        return (g(lambda a: (a ** 3).exp(), (x,)), g(lambda a: (a * a).sum(), (x,)),
                g(lambda a: a ** 4, (x,), (T.tensor([1.0, 0.5, -1.0], dtype=T.float64, requires_grad=True),)))
    diff(f)


def test_gradgradcheck_once_differentiable_fails():
    def f(T):
        class Once(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a ** 2

            @staticmethod
            @T.autograd.function.once_differentiable
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return 2 * a * g
        return T.autograd.gradcheck(Once.apply, (_d(T),)), T.autograd.gradgradcheck(Once.apply, (_d(T),))
    diff(f, msg="prefix:60")   # the random grad_outputs differ
