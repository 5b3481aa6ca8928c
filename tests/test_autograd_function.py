"""Custom autograd.Function, differential against torch."""
import numpy as np
import torch

import glassgrad
from test_autograd_engine import diff


def _x(T, vals=(1.0, 2.0, 3.0)):
    return T.tensor(list(vals), requires_grad=True)


def _fns(T):
    """Define the same Functions on either library (class bodies reference T)."""
    ns = {}

    class Square(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return 2 * a * g

    class MulConst(T.autograd.Function):
        @staticmethod
        def forward(a, k):
            return a * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    class Needs(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, k):
            ctx.log = list(ctx.needs_input_grad)
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            return g, g, None

    class TwoOut(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            idx = (a > 1.5).long()
            ctx.mark_non_differentiable(idx)
            return a * 2, idx

        @staticmethod
        def backward(ctx, g, gi):
            return g * 2

    class NoMat(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 1, a * 2

        @staticmethod
        def backward(ctx, g1, g2):
            ns.setdefault("seen", []).append((g1 is None, g2 is None))
            r = T.zeros(3)
            if g1 is not None:
                r = r + g1
            if g2 is not None:
                r = r + 2 * g2
            return r

    class Mat(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1, a * 2

        @staticmethod
        def backward(ctx, g1, g2):
            ns.setdefault("mat", []).append((g1.tolist(), g2.tolist()))
            return g1 + 2 * g2

    class Dirty(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

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

    def bad(ret):
        class Bad(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, b=None):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return ret(g)
        return Bad

    ns.update(Square=Square, MulConst=MulConst, Needs=Needs, TwoOut=TwoOut, NoMat=NoMat, Mat=Mat,
              Dirty=Dirty, Once=Once, bad=bad)
    return ns


def test_square_save_for_backward():
    def f(T):
        F = _fns(T)
        x = _x(T)
        y = F["Square"].apply(x)
        y.sum().backward()
        return y, x.grad, y.grad_fn.name(), type(y.grad_fn).__name__, len(y.grad_fn.next_functions)
    diff(f)


def test_setup_context_style():
    def f(T):
        F = _fns(T)
        x = _x(T)
        y = F["MulConst"].apply(x, 3.0)
        y.sum().backward()
        return y, x.grad
    diff(f)


def test_needs_input_grad():
    def f(T):
        F = _fns(T)
        x = _x(T)
        w = T.ones(3)
        y = F["Needs"].apply(x, w, 2.0)
        y.sum().backward()
        return y.grad_fn.log, x.grad
    diff(f)


def test_mark_non_differentiable():
    def f(T):
        F = _fns(T)
        x = _x(T)
        y, idx = F["TwoOut"].apply(x)
        y.sum().backward()
        return idx, idx.requires_grad, y.requires_grad, x.grad
    diff(f)


def test_materialize_grads():
    def f(T):
        F = _fns(T)
        x = _x(T)
        a, b = F["NoMat"].apply(x)
        a.sum().backward()
        x2 = _x(T)
        c, d = F["Mat"].apply(x2)
        d.sum().backward()
        return F["seen"], F["mat"], x.grad, x2.grad
    diff(f)


def test_mark_dirty():
    def f(T):
        F = _fns(T)
        x = _x(T)
        h = x * 1
        r = F["Dirty"].apply(h)
        r.sum().backward()
        return r is h, r.grad_fn.name(), h._version, x.grad
    diff(f)
    diff(lambda T: _fns(T)["Dirty"].apply(_x(T)))


def test_once_differentiable():
    def f(T):
        F = _fns(T)
        x = _x(T)
        y = F["Once"].apply(x)
        v = T.ones(3, requires_grad=True)
        g, = T.autograd.grad(y, x, v, create_graph=True)
        r = (g, g.grad_fn.name())
        g.sum().backward()
        return r
    diff(f)

    def h(T):
        F = _fns(T)
        x = _x(T)
        y = F["Once"].apply(x).sum()
        g, = T.autograd.grad(y, x, create_graph=True)
        return g, g.grad_fn
    diff(h)


def test_wrong_number_of_grads():
    diff(lambda T: _fns(T)["bad"](lambda g: (g, g, g)).apply(_x(T)).sum().backward())
    diff(lambda T: _fns(T)["bad"](lambda g: (g, None, None)).apply(_x(T)).sum().backward())


def test_wrong_shape_grad():
    diff(lambda T: _fns(T)["bad"](lambda g: g[:2]).apply(_x(T)).sum().backward())


def test_broadcastable_grad_is_reduced():
    def f(T):
        x = T.ones(2, 3, requires_grad=True)
        _fns(T)["bad"](lambda g: (T.ones(3), None)).apply(x).sum().backward()
        return x.grad
    diff(f)


def test_non_tensor_grad():
    diff(lambda T: _fns(T)["bad"](lambda g: 1.0).apply(_x(T)).sum().backward())


def test_save_for_backward_non_tensor():
    def f(T):
        class S(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a, 3)
                return a * 2
        return S.apply(_x(T))
    diff(f)


def test_saved_tensors_freed():
    def f(T):
        F = _fns(T)
        x = _x(T)
        y = F["Square"].apply(x)
        y.sum().backward()
        return y.grad_fn.saved_tensors
    diff(f)


def test_saved_tensor_modified():
    def f(T):
        F = _fns(T)
        x = _x(T)
        h = x * 1
        y = F["Square"].apply(h)
        h.add_(1)
        y.sum().backward()
    diff(f)


def test_no_grad_inputs():
    def f(T):
        F = _fns(T)
        y = F["Square"].apply(T.ones(3))
        with T.no_grad():
            z = F["Square"].apply(_x(T))
        return y.requires_grad, y.grad_fn, z.requires_grad
    diff(f)


def test_double_backward_through_function():
    def f(T):
        F = _fns(T)
        x = _x(T)
        y = F["Square"].apply(x).sum()
        g, = T.autograd.grad(y, x, create_graph=True)
        gg, = T.autograd.grad(g.sum(), x)
        return g, gg
    diff(f)


def test_function_returns_input():
    def f(T):
        class Ident(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 3
        x = _x(T)
        y = Ident.apply(x)
        y.sum().backward()
        return y is x, y.grad_fn.name(), x.grad
    diff(f)


def _exp_fn(T):
    class Exp(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            r = a.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            r, = ctx.saved_tensors
            return g * r
    return Exp


def test_saved_output():
    def f(T):
        x = _x(T)
        y = _exp_fn(T).apply(x)
        y.sum().backward(retain_graph=True)
        g1 = x.grad.clone()
        s = y.grad_fn.saved_tensors[0]
        return g1, s, s.grad_fn is y.grad_fn, s.requires_grad
    diff(f)

    def g(T):
        x = _x(T)
        y = _exp_fn(T).apply(x)
        y.mul_(2)
        y.sum().backward()
    diff(g)

    def h(T):
        x = _x(T)
        y = _exp_fn(T).apply(x).sum()
        g, = T.autograd.grad(y, x, create_graph=True)
        return g, T.autograd.grad(g.sum(), x)
    diff(h)


def test_custom_function_graph_freed():
    import gc
    import weakref
    import glassgrad as T
    gc.disable()
    try:
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = _exp_fn(T).apply(x)
        r_node = weakref.ref(y.grad_fn)
        r_arr = weakref.ref(y._data)
        y.sum().backward()
        del y
        assert r_node() is None and r_arr() is None
    finally:
        gc.enable()


def test_grad_for_non_tensor_input():
    def f(T):
        class K(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, k):
                ctx.foo = k
                return a * k

            @staticmethod
            def backward(ctx, g):
                return g * ctx.foo, g
        x = _x(T)
        K.apply(x, 2.0).sum().backward()
    diff(f)


def test_ctx_attributes_and_grad_dtype_cast():
    def f(T):
        class K(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.foo = 5
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return (g * ctx.foo).double()
        x = _x(T)
        y = K.apply(x)
        y.sum().backward()
        return x.grad, y.grad_fn.foo, y.grad_fn.next_functions[0][0].name()
    diff(f)


def test_complex_outputs_of_a_function_are_differentiable_as_torch():
    for lib in (torch, glassgrad):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                return z * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        z = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        out = Twice.apply(z)
        assert out.requires_grad and type(out.grad_fn).__name__ == "TwiceBackward"
        out.abs().sum().backward()
        np.testing.assert_allclose(z.grad.numpy(), 2 * (z.detach() / z.detach().abs()).numpy(), rtol=1e-6)
