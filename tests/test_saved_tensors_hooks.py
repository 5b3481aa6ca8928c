"""torch.autograd.graph.saved_tensors_hooks / save_on_cpu / disable_saved_tensors_hooks against torch: which
tensors an op packs (count, shapes, requires_grad), when pack and unpack run, nesting, no_grad, custom
Functions, double backward, and torch's errors.

Where glassgrad's ops save other tensors than torch's (documented in docs/architecture.md, autograd table),
the op is not in OPS below: mul, div and mm save the same tensors in another order (compared as multisets), addmm /
linear also save the bias, mul saves both operands even when one needs no gradient (dropout, a mul by a mask,
so also packs its input), layer_norm / batch_norm keep their mean / rstd as arrays on the node, nll_loss /
cross_entropy and indexing keep the target / indices as arrays (not packed)."""
import gc
import weakref

import numpy as np
import pytest

import torch
import glassgrad

LIBS = (torch, glassgrad)


def _x(T, shape, seed, rg=True):
    return T.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=T.float32, requires_grad=rg)


def _packs(T, f, shapes):
    log = []

    def pack(t):
        log.append((tuple(t.shape), t.requires_grad, t.grad_fn.name() if t.grad_fn is not None else None))
        return t

    xs = [_x(T, s, i) for i, s in enumerate(shapes)]
    with T.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = f(T, *xs)
    return log, out, xs


OPS = {
    "exp": (lambda T, a: a.exp(), [(2, 3)]),
    "relu": (lambda T, a: a.relu(), [(2, 3)]),
    "tanh": (lambda T, a: a.tanh(), [(4, 3)]),
    "sigmoid": (lambda T, a: a.sigmoid(), [(4, 3)]),
    "sin": (lambda T, a: a.sin(), [(4, 3)]),
    "softmax": (lambda T, a: a.softmax(-1), [(4, 3)]),
    "log_softmax": (lambda T, a: a.log_softmax(-1), [(4, 3)]),
    "pow": (lambda T, a: a ** 2, [(4, 3)]),
    "mse_loss": (lambda T, a, b: T.nn.functional.mse_loss(a, b), [(4, 3), (4, 3)]),
    "conv2d": (lambda T, a, w, b: T.nn.functional.conv2d(a, w, b), [(1, 2, 5, 5), (3, 2, 3, 3), (3,)]),
    "max_pool2d": (lambda T, a: T.nn.functional.max_pool2d(a, 2), [(1, 2, 4, 4)]),
    "gelu": (lambda T, a: T.nn.functional.gelu(a), [(4, 3)]),
    "sum": (lambda T, a: a.sum(), [(4, 3)]),
    "mean": (lambda T, a: a.mean(), [(4, 3)]),
    "view": (lambda T, a: a.view(12), [(4, 3)]),
    "chain": (lambda T, a, b: (a + b).relu().tanh().exp().sum(), [(4, 3), (3,)]),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_packed_tensors_match_torch(name):
    f, shapes = OPS[name]
    assert _packs(glassgrad, f, shapes)[0] == _packs(torch, f, shapes)[0]


@pytest.mark.parametrize("name,f,shapes", [("mul", lambda T, a, b: a * b, [(2, 3), (3,)]),
                                           ("div", lambda T, a, b: a / b, [(4, 3), (3,)]),
                                           ("mm", lambda T, a, b: a @ b, [(4, 3), (3, 5)]),
                                           ("mlp", lambda T, a, w: (a @ w).relu().tanh().sum(), [(4, 3), (3, 5)])])
def test_packed_tensors_same_multiset(name, f, shapes):
    assert sorted(_packs(glassgrad, f, shapes)[0]) == sorted(_packs(torch, f, shapes)[0])


@pytest.mark.parametrize("T", LIBS, ids=["torch", "glassgrad"])
def test_pack_gets_the_saved_tensor_itself_and_unpack_what_pack_returned(T):
    x = _x(T, (3,), 0)
    seen, unpacked = [], []
    with T.autograd.graph.saved_tensors_hooks(lambda t: (seen.append(t), ("box", len(seen)))[1],
                                              lambda p: (unpacked.append(p), seen[p[1] - 1])[1]):
        y = x * x          # saves x twice
        z = y.exp()        # saves its result z
    assert seen[0] is x and seen[1] is x and seen[2] is z
    assert unpacked == []                       # nothing unpacked in forward
    z.sum().backward()
    assert sorted(p[1] for p in unpacked) == [1, 2, 3]


def _grads_with_hooks(T, hooks):
    x, w = _x(T, (4, 3), 0), _x(T, (3, 5), 1)
    with hooks(T):
        out = ((x @ w).tanh() * x.sum(1, keepdim=True)).exp().mean()
    out.backward()
    return out.detach().numpy(), x.grad.numpy(), w.grad.numpy()


@pytest.mark.parametrize("hooks", [
    lambda T: T.autograd.graph.save_on_cpu(),
    lambda T: T.autograd.graph.save_on_cpu(pin_memory=True),
    lambda T: T.autograd.graph.saved_tensors_hooks(lambda t: t.detach().numpy().copy(),
                                                   lambda a: T.from_numpy(a))],
    ids=["save_on_cpu", "save_on_cpu_pinned", "numpy_roundtrip"])
def test_gradients_through_hooks_match_torch_and_no_hooks(hooks):
    import contextlib
    want = _grads_with_hooks(torch, lambda T: contextlib.nullcontext())
    for T in LIBS:
        got = _grads_with_hooks(T, hooks)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _nesting_log(T):
    x = _x(T, (3,), 0)
    log = []

    def hooks(name):
        return T.autograd.graph.saved_tensors_hooks(lambda t: (log.append("pack " + name), t)[1],
                                                    lambda t: (log.append("unpack " + name), t)[1])
    with hooks("outer"):
        with hooks("inner"):
            y = x.exp()
        w = x.sin()
    with T.no_grad(), hooks("no_grad"):
        x.cos()
    (y.sum() + w.sum()).backward()
    return log


def test_nesting_innermost_wins_and_no_grad_packs_nothing():
    assert _nesting_log(glassgrad) == _nesting_log(torch) == ["pack inner", "pack outer", "unpack outer",
                                                              "unpack inner"]


def _unpack_counts(T):
    x = _x(T, (3,), 0)
    log = []
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: (log.append(1), t)[1]):
        y = x.exp().sum()
    T.autograd.grad(y, x, retain_graph=True)
    T.autograd.grad(y, x, retain_graph=True)
    n_backward = len(log)
    assert y.grad_fn.next_functions[0][0]._saved_result.shape == (3,)
    return n_backward, len(log)


def test_unpack_runs_on_every_read():
    assert _unpack_counts(glassgrad) == _unpack_counts(torch) == (2, 3)


def _custom_function(T):
    class Square(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            b = a * a
            ctx.save_for_backward(a, b)
            return b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return 2 * a * g

    x = _x(T, (3,), 0)
    log = []
    with T.autograd.graph.saved_tensors_hooks(lambda t: (log.append(("pack", t is x)), t)[1],
                                              lambda t: (log.append("unpack"), t)[1]):
        y = Square.apply(x)
    y.sum().backward()
    return log, x.grad.numpy()


def test_custom_function_save_for_backward_goes_through_hooks():
    (lg, gg), (lt, gt) = _custom_function(glassgrad), _custom_function(torch)
    assert lg == lt == [("pack", True), ("pack", False), "unpack", "unpack"]
    np.testing.assert_allclose(gg, gt, rtol=1e-6)


def _double_backward(T):
    x = _x(T, (4,), 0)
    with T.autograd.graph.saved_tensors_hooks(lambda t: (t.device, t.detach().clone()), lambda p: p[1]):
        y = (x.exp() * x.sin()).sum()
    g, = T.autograd.grad(y, x, create_graph=True)
    gg, = T.autograd.grad(g.sum(), x)
    return g.detach().numpy(), gg.numpy()


def test_double_backward_through_unpacked_tensors():
    for a, b in zip(_double_backward(glassgrad), _double_backward(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("T", LIBS, ids=["torch", "glassgrad"])
def test_hooked_tensor_is_not_version_checked_and_is_freed_by_backward(T):
    class Box:
        pass
    x = _x(T, (3,), 0)
    boxes = []
    with T.autograd.graph.saved_tensors_hooks(lambda t: (boxes.append(Box()), (boxes[-1], t))[1],
                                              lambda p: p[1]):
        y = x.clone().exp()
    ref = weakref.ref(boxes.pop())
    y.mul_(2)               # without hooks: "modified by an inplace operation"
    y.sum().backward()
    gc.collect()
    assert ref() is None    # the packed object died with the node's saved tensors


@pytest.mark.parametrize("T", LIBS, ids=["torch", "glassgrad"])
def test_errors(T):
    G = T.autograd.graph
    x = _x(T, (3,), 0)
    with G.saved_tensors_hooks(lambda t: 1, lambda p: p):
        y = x.exp()
    with pytest.raises(TypeError, match="^Output of saved tensor unpack_hook expected to be a Tensor but got result "
                                        "of type int$"):
        y.sum().backward()

    def bad(t):
        t.add_(1)
        return t
    with G.saved_tensors_hooks(bad, lambda t: t):
        with pytest.raises(RuntimeError, match="^A saved tensor pack hook is modifying its input in place. Tensors "
                                               "provided as input to pack hook cannot be modified by in-place"):
            x.clone().exp()
    with G.disable_saved_tensors_hooks("no hooks here"):
        x.exp().sum().backward()                      # ops still save
        with pytest.raises(RuntimeError, match="^no hooks here$"):
            with G.save_on_cpu():
                pass
    with G.saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="^entered$"):
            with G.disable_saved_tensors_hooks("entered"):
                pass
    with G.saved_tensors_hooks(lambda t: t, lambda t: t):   # usable again: the disable was undone
        x.exp()


def test_torch_alias_names():
    for name in ("saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"):
        assert hasattr(glassgrad.autograd.graph, name)
    assert issubclass(glassgrad.autograd.graph.save_on_cpu, glassgrad.autograd.graph.saved_tensors_hooks)


def _F(T):
    return T.nn.functional


# backward must read every saved value through the unpack hook (no copy of its own kept on the node): a pack hook
# that changes the values (x1.5) changes the gradients exactly as in torch.  Not here (documented): layer_norm /
# batch_norm / group_norm (their mean / rstd are arrays on the node, torch packs them), cross_entropy (torch packs
# total_weight), LSTM (torch packs its gate workspace; glassgrad rebuilds it from the unpacked inputs)
ALTERED = {
    "linear": (lambda T, a, w, b: _F(T).linear(a, w, b), [(4, 3), (5, 3), (5,)]),
    "conv2d": (lambda T, a, w, b: _F(T).conv2d(a, w, b, padding=1), [(2, 3, 6, 6), (4, 3, 3, 3), (4,)]),
    "gelu": (lambda T, a: _F(T).gelu(a), [(4, 5)]),
    "gelu_tanh": (lambda T, a: _F(T).gelu(a, approximate="tanh"), [(4, 5)]),
    "silu": (lambda T, a: _F(T).silu(a), [(4, 5)]),
    "softmax": (lambda T, a: _F(T).softmax(a, -1), [(4, 5)]),
    "log_softmax": (lambda T, a: _F(T).log_softmax(a, -1), [(4, 5)]),
    "max_pool2d": (lambda T, a: _F(T).max_pool2d(a, 2), [(1, 2, 4, 4)]),
    "elu": (lambda T, a: _F(T).elu(a), [(4, 5)]),
    "softplus": (lambda T, a: _F(T).softplus(a), [(4, 5)]),
    "bce_logits": (lambda T, a: _F(T).binary_cross_entropy_with_logits(a, T.ones(4, 5)), [(4, 5)]),
    "bmm": (lambda T, a, b: a @ b, [(2, 4, 3), (2, 3, 5)]),
    "div": (lambda T, a, b: a / b, [(4, 3), (4, 3)]),
    "pow": (lambda T, a: a ** 3, [(4, 3)]),
    "norm": (lambda T, a: a.norm(), [(4, 3)]),
    "prod": (lambda T, a: a.prod(1), [(4, 3)]),
    "cumprod": (lambda T, a: a.cumprod(1), [(4, 3)]),
    "std": (lambda T, a: a.std(1), [(4, 3)]),
    "sdpa": (lambda T, q, k, v: _F(T).scaled_dot_product_attention(q, k, v), [(2, 4, 3)] * 3),
    "gru": (lambda T, x: T.nn.GRU(3, 4)(x)[0], [(5, 2, 3)]),
    "dropout": (lambda T, a: _F(T).dropout(a, 0.5), [(4, 3)]),
}


def _altered_grads(T, f, shapes):
    T.manual_seed(0)
    xs = [_x(T, s, i) for i, s in enumerate(shapes)]
    with T.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 1.5 if t.dtype.is_floating_point else t,
                                              lambda t: t):
        y = f(T, *xs)
    (y * T.tensor(np.random.default_rng(9).standard_normal(tuple(y.shape)), dtype=T.float32)).sum().backward()
    return [x.grad.numpy() for x in xs]


@pytest.mark.parametrize("name", sorted(ALTERED))
def test_backward_reads_saved_values_only_through_the_hooks(name):
    for a, b in zip(_altered_grads(glassgrad, *ALTERED[name]), _altered_grads(torch, *ALTERED[name])):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _versions(T):
    x = T.ones(2)
    T.autograd.graph.increment_version(x)
    T.autograd.graph.increment_version([x, x])
    out = [x._version]
    for bad in (3, [3]):
        try:
            T.autograd.graph.increment_version(bad)
        except RuntimeError as e:
            out.append(str(e))
    b = T.ones(3, requires_grad=True).clone().exp()
    T.autograd.graph.increment_version(b)
    try:
        b.sum().backward()
    except RuntimeError as e:
        out.append(str(e)[:100])
    return out


def test_increment_version_matches_torch():
    assert _versions(glassgrad) == _versions(torch)


def _mutation(T, case):
    G = T.autograd.graph
    try:
        if case == "nested":
            with G.allow_mutation_on_saved_tensors():
                with G.allow_mutation_on_saved_tensors():
                    pass
        with G.allow_mutation_on_saved_tensors():
            a = T.ones(3, requires_grad=True)
            b = a * 2
            c = b * b           # saves b (version 0)
            b.mul_(3)
            d = b * b           # saves b again (version 1)
            b.sin_()
            out = c.sum() + d.sum()
            if case == "inside":
                out.backward()
        if case == "outside":
            out.backward()
        return a.grad.tolist()
    except (RuntimeError, AssertionError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("case", ["inside", "outside", "nested"])
def test_allow_mutation_on_saved_tensors_matches_torch(case):
    assert _mutation(glassgrad, case) == _mutation(torch, case)


def _raw_saved(T):
    out = []

    def attempt(f):
        try:
            out.append(f())
        except (RuntimeError, TypeError, AttributeError) as e:
            out.append((type(e).__name__, str(e).splitlines()[0]))
    x = _x(T, (3,), 0)
    y = x.exp()
    r = y.grad_fn._raw_saved_result
    log = []
    r.register_hooks(lambda t: (log.append("pack"), t * 2)[1], lambda p: (log.append("unpack"), p)[1])
    out.append(list(log))                                                      # packed at once
    attempt(lambda: np.round(y.grad_fn._saved_result.detach().numpy(), 4).tolist())
    attempt(lambda: r.register_hooks(lambda t: t, lambda t: t))                # one pair only
    y.sum().backward()
    out.append((np.round(x.grad.numpy(), 4).tolist(), log))
    attempt(lambda: r.register_hooks(lambda t: t, lambda t: t))                # freed
    z = x.sin()
    attempt(lambda: z.grad_fn._raw_saved_self.register_hooks(lambda t: t, 3))
    m = x * x
    m.grad_fn._raw_saved_self.register_hooks(lambda t: t.detach() * 0, lambda t: t)
    x.grad = None
    m.sum().backward()
    out.append(np.round(x.grad.numpy(), 4).tolist())
    attempt(lambda: x.exp().grad_fn._raw_saved_foo)
    return out


def test_raw_saved_tensor_register_hooks_matches_torch():
    assert _raw_saved(glassgrad) == _raw_saved(torch)
