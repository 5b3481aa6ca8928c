"""Grad modes (no_grad, enable_grad, set_grad_enabled, inference_mode), differential against torch."""
from test_autograd_engine import diff


def _x(T):
    return T.tensor([1.0, 2.0, 3.0], requires_grad=True)


def test_no_grad_ctx():
    def f(T):
        x = _x(T)
        with T.no_grad():
            y = x * 2
            inner = T.is_grad_enabled()
        return y.requires_grad, y.grad_fn, inner, T.is_grad_enabled()
    diff(f)


def test_enable_grad_inside_no_grad():
    def f(T):
        x = _x(T)
        with T.no_grad():
            with T.enable_grad():
                y = x * 2
            z = x * 2
        return y.requires_grad, z.requires_grad
    diff(f)


def test_set_grad_enabled_function_and_ctx():
    def f(T):
        x = _x(T)
        T.set_grad_enabled(False)
        a = (x * 2).requires_grad
        T.set_grad_enabled(True)
        b = (x * 2).requires_grad
        with T.set_grad_enabled(False):
            c = (x * 2).requires_grad
        d = (x * 2).requires_grad
        return a, b, c, d, T.is_grad_enabled()
    diff(f)


def test_decorators():
    def f(T):
        x = _x(T)

        @T.no_grad()
        def g1(t):
            return t * 2

        @T.no_grad
        def g2(t):
            return t * 2

        @T.enable_grad()
        def g3(t):
            return t * 2

        @T.set_grad_enabled(False)
        def g4(t):
            return t * 2

        @T.inference_mode()
        def g5(t):
            return t * 2

        with T.no_grad():
            r3 = g3(x).requires_grad
        return g1(x).requires_grad, g2(x).requires_grad, r3, g4(x).requires_grad, g5(x).requires_grad, \
            T.is_grad_enabled(), g1.__name__
    diff(f)


def test_generator_decorator():
    def f(T):
        x = _x(T)

        @T.no_grad()
        def gen():
            for _ in range(2):
                yield (x * 2).requires_grad, T.is_grad_enabled()
        out = list(gen())
        return out, T.is_grad_enabled()
    diff(f)


def test_inference_mode():
    def f(T):
        x = _x(T)
        with T.inference_mode():
            y = x * 2
            a = (T.is_inference_mode_enabled(), T.is_grad_enabled())
        with T.inference_mode(False):
            b = T.is_inference_mode_enabled()
        return a, b, y.requires_grad, T.is_inference_mode_enabled()
    diff(f)


def test_is_inference():
    def f(T):
        x = T.ones(2)
        with T.inference_mode():
            y = x * 2
        return y.is_inference(), x.is_inference()
    diff(f)


def test_inference_tensor_inplace_outside():
    def f(T):
        with T.inference_mode():
            y = T.ones(3)
        y.add_(1)
    diff(f)


def test_no_grad_restored_after_exception():
    def f(T):
        try:
            with T.no_grad():
                raise ValueError("x")
        except ValueError:
            pass
        return T.is_grad_enabled()
    diff(f)


def test_backward_under_no_grad():
    def f(T):
        x = _x(T)
        y = (x * x).sum()
        with T.no_grad():
            y.backward()
        return x.grad
    diff(f)


def test_create_graph_under_no_grad():
    def f(T):
        x = _x(T)
        y = (x ** 3).sum()
        with T.no_grad():
            g, = T.autograd.grad(y, x, create_graph=True)
        return g, g.requires_grad
    diff(f)
