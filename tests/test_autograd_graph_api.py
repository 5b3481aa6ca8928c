"""The public read-only traversal API (glassgrad.autograd.traversal), against torch where torch has the
same concept: the order backward runs the nodes in (torch's own pre-hooks record it), sequence numbers,
torch.autograd.graph.get_gradient_edge, calling a node (``grad_fn(grad)``), saved tensors."""
import numpy as np
import pytest

import torch
import glassgrad
from glassgrad.autograd import traversal as tv
from glassgrad.autograd.graph import AccumulateGrad, Node
from glassgrad.ops.namespaces import ARR, TEN

LIBS = (torch, glassgrad)


def _leaf(T, shape, seed):
    return T.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def _chain(T):
    x = _leaf(T, (3,), 0)
    y = x
    for _ in range(5):
        y = (y * 1.5).exp().sin()
    return y.sum(), [x]


def _diamond(T):
    x, w = _leaf(T, (2, 3), 1), _leaf(T, (3, 4), 2)
    h = x @ w
    a, b = h.relu(), h.tanh()
    return (a * b + a).mean(), [x, w]


def _mlp(T):
    x, w1, b1, w2 = _leaf(T, (4, 5), 3), _leaf(T, (6, 5), 4), _leaf(T, (6,), 5), _leaf(T, (2, 6), 6)
    h = T.nn.functional.linear(x, w1, b1).relu()
    out = T.nn.functional.linear(h, w2).log_softmax(1)
    return -out[:, 0].mean() + (w1 * w1).sum() * 0.01, [x, w1, b1, w2]


def _multi_output(T):
    x = _leaf(T, (6, 2), 7)
    p, q, r = x.split(2)
    u = x.unbind(1)
    return (p * q).sum() + r.exp().sum() + u[0].sum() * u[1].sum(), [x]


def _two_roots(T):
    x, y = _leaf(T, (3,), 8), _leaf(T, (3,), 9)
    a = (x * y).sin()
    return [(a * 2).sum(), (a + y).prod()], [x, y]


GRAPHS = {"chain": _chain, "diamond": _diamond, "mlp": _mlp, "multi_output": _multi_output,
          "two_roots": _two_roots}


def _roots(out):
    return out if isinstance(out, list) else [out]


def _label(n, leaves):
    """A node's name; for an AccumulateGrad, which leaf (they all have the same sequence number)."""
    if hasattr(n, "variable"):
        return ("leaf", [i for i, t in enumerate(leaves) if t is n.variable])
    return n.name()


def _torch_run_order(T, out, leaves):
    """The nodes in the order torch's (or glassgrad's) engine runs them: pre-hooks on every node."""
    roots = [r.grad_fn for r in _roots(out)]
    seen, stack, order = set(), list(roots), []
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        n.register_prehook(lambda g, n=n: order.append(_label(n, leaves)))
        stack.extend(m for m, _ in n.next_functions)
    outs = _roots(out)
    T.autograd.backward(outs, [T.ones_like(o) for o in outs])
    return order


@pytest.mark.parametrize("case", sorted(GRAPHS))
def test_execution_order_is_the_order_backward_runs_nodes(case):
    want = _torch_run_order(torch, *GRAPHS[case](torch))
    out, leaves = GRAPHS[case](glassgrad)
    got = [_label(n, leaves) for n in tv.execution_order(_roots(out))]
    assert got == want
    assert _torch_run_order(glassgrad, *GRAPHS[case](glassgrad)) == want   # and glassgrad's engine agrees


@pytest.mark.parametrize("case", sorted(GRAPHS))
def test_iter_nodes_and_sequence_numbers_match_torch(case):
    res = {}
    for T in LIBS:
        out, _ = GRAPHS[case](T)
        roots = _roots(out)
        if T is torch:
            nodes, seen, stack = [], set(), [r.grad_fn for r in roots]
            while stack:
                n = stack.pop()
                if n is None or n in seen:
                    continue
                seen.add(n)
                nodes.append(n)
                stack.extend(m for m, _ in n.next_functions)
            seq = {n: n._sequence_nr() for n in nodes}
        else:
            nodes = list(tv.iter_nodes(roots))
            assert len(set(nodes)) == len(nodes)
            seq = {n: tv.sequence_nr(n) for n in nodes}
            assert all(tv.sequence_nr(n) == n._sequence_nr() for n in nodes)
        # the nodes by creation order (AccumulateGrad: 2**64 - 1 in both, ties by name)
        res[T] = sorted((seq[n], n.name()) for n in nodes)
        res[T] = ([nm for s, nm in res[T] if s < 2 ** 64 - 1], sorted(nm for s, nm in res[T] if s == 2 ** 64 - 1))
    assert res[glassgrad] == res[torch]


def test_iter_nodes_is_iterative_and_accepts_nodes_edges_and_tensors():
    x = _leaf(glassgrad, (2,), 0)
    y = x
    for _ in range(20000):
        y = y + 1.0
    nodes = list(tv.iter_nodes([y]))
    assert len(nodes) == 20001 and tv.is_accumulate_grad(nodes[-1]) and nodes[-1].variable is x
    assert list(tv.iter_nodes([(y.grad_fn, 0)])) == nodes == list(tv.iter_nodes([y.grad_fn]))
    assert len(tv.execution_order([y])) == 20001


def test_next_sequence_nr_is_the_number_of_the_next_node():
    x = _leaf(glassgrad, (2,), 0)
    n0 = tv.next_sequence_nr()
    assert tv.next_sequence_nr() == n0              # reading does not take it
    y = x * 2
    z = y.exp()
    assert tv.sequence_nr(y.grad_fn) == n0 and tv.sequence_nr(z.grad_fn) == n0 + 1
    assert tv.next_sequence_nr() == n0 + 2
    # torch: nodes made later have higher numbers, leaves' accumulators the largest
    a = torch.ones(2, requires_grad=True)
    b = a * 2
    c = b.exp()
    assert c.grad_fn._sequence_nr() > b.grad_fn._sequence_nr()
    acc = b.grad_fn.next_functions[0][0]
    assert acc._sequence_nr() == 2 ** 64 - 1 == tv.sequence_nr(y.grad_fn.next_functions[0][0])


def test_gradient_edge_and_grad_accumulator_match_get_gradient_edge():
    for T in LIBS:
        x = T.ones(3, requires_grad=True)
        c = T.ones(3)
        if T is glassgrad:
            assert tv.grad_accumulator(x) is None                  # never used in a graph
            edge = tv.gradient_edge(x)
            assert tv.grad_accumulator(x) is edge[0]
        else:
            edge = torch.autograd.graph.get_gradient_edge(x)
        assert type(edge[0]).__name__ == "AccumulateGrad" and edge[1] == 0 and edge[0].variable is x
        y = x * 2
        assert (y.grad_fn.next_functions[0][0] is edge[0])
        parts = (x * 1).split(1)
        e2 = tv.gradient_edge(parts[2]) if T is glassgrad else torch.autograd.graph.get_gradient_edge(parts[2])
        assert e2[0] is parts[2].grad_fn and e2[1] == 2 and e2[0].name() == "SplitBackward0"
        if T is glassgrad:
            assert tv.gradient_edge(c) == (None, 0)
            assert tv.is_accumulate_grad(edge[0]) and not tv.is_accumulate_grad(y.grad_fn)


def test_nodes_on_path_and_dependency_counts():
    x, w, u = _leaf(glassgrad, (2, 3), 1), _leaf(glassgrad, (3,), 2), _leaf(glassgrad, (3,), 3)
    h = x * w
    loss = h.sum() + (u * 2).sum()
    acc_x = tv.gradient_edge(x)[0]
    on = tv.nodes_on_path([loss], {acc_x})
    assert sorted(n.name() for n in on) == ["AddBackward0", "MulBackward0", "SumBackward0",
                                            "torch::autograd::AccumulateGrad"]
    assert tv.gradient_edge(u)[0] not in on
    deps = tv.dependency_counts([loss])
    assert deps[h.grad_fn] == 1 and deps[acc_x] == 1
    assert all(deps[n] == sum(1 for m in tv.iter_nodes([loss]) for k, _ in m.next_functions if k is n)
               for n in deps)
    within = tv.dependency_counts([loss], within=on)
    assert set(within) == on - {loss.grad_fn}
    # a node reached twice waits for both gradients
    a = x.exp()
    y = (a * a).sum()
    assert tv.dependency_counts([y])[a.grad_fn] == 2


def test_saved_values_names_and_release():
    x, y = _leaf(glassgrad, (2,), 1), _leaf(glassgrad, (2,), 2)
    a = x * 2
    m = a * y
    e = m.exp()
    sv = tv.saved_values(m.grad_fn)
    assert sv[0][0] is a and sv[0][1] == (a.grad_fn, 0)
    assert sv[1][0] is y and sv[1][1] is None                  # a leaf: no producing node
    (val, edge), = tv.saved_values(e.grad_fn)                # exp saves its own output
    assert edge == (e.grad_fn, 0) and np.array_equal(val, e.detach().numpy())
    # the names are torch's _saved_<name> attributes
    assert tv.saved_names(m.grad_fn) == ("self", "other")
    tm = torch.ones(2, requires_grad=True) * torch.ones(2)
    assert all(hasattr(tm.grad_fn, "_saved_" + n) for n in tv.saved_names(m.grad_fn))
    assert not tv.is_released(e.grad_fn)
    e.sum().backward()
    assert tv.is_released(e.grad_fn) and tv.saved_values(e.grad_fn) == ()
    with pytest.raises(RuntimeError) as ours:
        tv.call_backward(e.grad_fn, [np.ones(2)])
    te = torch.ones(2, requires_grad=True).exp()
    te.sum().backward()
    with pytest.raises(RuntimeError) as theirs:
        te.grad_fn(torch.ones(2))
    assert str(ours.value) == str(theirs.value)


def _received(T, out):
    """(node, the gradient it received) for every node, in run order, from a retained backward."""
    got, seen, stack = [], set(), [r.grad_fn for r in _roots(out)]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        n.register_prehook(lambda g, n=n: got.append((n, g)))
        stack.extend(m for m, _ in n.next_functions)
    outs = _roots(out)
    T.autograd.backward(outs, [T.ones_like(o) for o in outs], retain_graph=True)
    return got


@pytest.mark.parametrize("case", sorted(GRAPHS))
def test_call_backward_equals_calling_the_torch_node(case):
    res = {}
    for T in LIBS:
        vals = []
        for n, g in _received(T, GRAPHS[case](T)[0]):
            if n.name().endswith("AccumulateGrad") or len(g) != 1 or g[0] is None:
                continue
            if T is torch:
                gs = n(g[0])
                gs = gs if isinstance(gs, tuple) else (gs,)
                gs = [None if v is None else v.detach() for v in gs]
            else:
                gs = tv.call_backward(n, [g[0].numpy()])
                gt = tv.call_backward(n, [g[0]], TEN)           # in Tensors: the same values
                for a, b in zip(gs, gt):
                    assert (a is None) == (b is None)
                    if a is not None:
                        assert isinstance(b, glassgrad.Tensor) and np.array_equal(a, b.detach().numpy())
            vals.append((n.name(), gs))
        res[T] = vals
    assert [v[0] for v in res[glassgrad]] == [v[0] for v in res[torch]]
    for (name, ours), (_, theirs) in zip(res[glassgrad], res[torch]):
        assert len(ours) == len(theirs), name
        for a, b in zip(ours, theirs):
            assert (a is None) == (b is None), name
            if a is not None:     # torch's engine sums a node's result to the input's shape after the call
                np.testing.assert_allclose(a, b.sum_to_size(a.shape).numpy(), rtol=1e-12, atol=1e-15,
                                           err_msg=name)


def test_accumulate_grad_adds_like_accumulate_grad_node():
    x = glassgrad.zeros(2, 3, dtype=glassgrad.float32, requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
    g = np.ones((2, 3), np.float64)
    tv.accumulate_grad(x, g)
    assert x.grad.dtype == glassgrad.float32 and tuple(x.grad.shape) == (2, 3)
    assert np.array_equal(x.grad.numpy(), np.ones((2, 3), np.float32))
    g[...] = 7                                   # the first .grad is a copy
    tv.accumulate_grad(x, np.full((2, 3), 2.0, np.float32))
    assert np.array_equal(x.grad.numpy(), np.full((2, 3), 3, np.float32)) and len(seen) == 2
    # the same as a backward that delivers those gradients, in torch
    t = torch.zeros(2, 3, requires_grad=True)
    (t * 1).backward(torch.ones(2, 3))
    (t * 1).backward(torch.full((2, 3), 2.0))
    assert np.array_equal(t.grad.numpy(), x.grad.numpy())


def test_stack_rule_is_declared_on_node_classes():
    from glassgrad.ops import reduction, conv, conversion
    assert Node.stack_rule is None and AccumulateGrad.stack_rule is None
    assert reduction.SumBackward0.stack_rule == "generic" and conv.ConvolutionBackward0.stack_rule == "conv"
    assert conversion._ToCopyDevice.stack_rule is None          # a device copy is not stacked
    x = _leaf(glassgrad, (2, 3), 0)
    from glassgrad.explain._attribute_stack import rule_for
    assert rule_for(x.sum().grad_fn) is not None and rule_for((x * 2).grad_fn) is not None
    assert rule_for(x.cumsum(0).grad_fn) is None


def test_array_namespace_is_public():
    assert isinstance(ARR, glassgrad.ops.namespaces.ArrayNamespace)
    t = ARR.to_tensor(np.arange(3.0))
    assert isinstance(t, glassgrad.Tensor) and not t.requires_grad and t.grad_fn is None


def test_tensor_at_names_an_edge_without_running_it():
    x = glassgrad.randn(2, 3, requires_grad=True)
    y = (x * 2).sum(0)
    node = y.grad_fn
    t = tv.tensor_at((node, 0), (3,), np.float32)
    assert t.grad_fn is node and t.output_nr == 0 and t.requires_grad
    assert t.shape == (3,) and t.dtype == glassgrad.float32 and not t.detach().numpy().any()
    assert x.grad is None        # nothing ran


@pytest.mark.parametrize("T", [torch, glassgrad], ids=["torch", "glassgrad"])
def test_bincount_weights_give_a_not_implemented_node(T):
    """bincount has no derivative: weights that require grad give torch's NotImplemented grad_fn, whose
    backward raises."""
    w = T.ones(3, requires_grad=True)
    r = T.bincount(T.tensor([1, 1, 3]), weights=w)
    assert r.requires_grad and type(r.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::bincount is not implemented"):
        r.sum().backward()


@pytest.mark.parametrize("T", [torch, glassgrad], ids=["torch", "glassgrad"])
def test_histogram_of_a_grad_input_gives_not_implemented_nodes(T):
    h, e = T.histogram(T.ones(3, requires_grad=True), 3)
    assert h.requires_grad and e.requires_grad
    assert type(h.grad_fn).__name__ == type(e.grad_fn).__name__ == "NotImplemented"
    assert T.histogram(T.ones(3), 3).hist.grad_fn is None


def test_not_implemented_grad_fn_prints_as_torchs():
    def show(T):
        w = T.ones(3, requires_grad=True)
        return repr(T.bincount(T.tensor([1, 1, 3]), weights=w))
    assert show(glassgrad) == show(torch)


def test_saved_attributes_of_a_product_with_a_number_as_torch():
    # torch: _saved_self is None (only other's gradient is needed), _saved_other the number (as tensor(2))
    for lib in (torch, glassgrad):
        x = lib.ones(2, requires_grad=True)
        n = (x * 2).grad_fn
        assert n._saved_self is None
        assert float(n._saved_other) == 2.0


def test_gradient_edges_as_torch():
    for lib in (torch, glassgrad):
        get = lib.autograd.graph.get_gradient_edge
        x = lib.ones(2, requires_grad=True)
        y = x * 3
        z = (y ** 2).sum()
        e = get(y)
        assert isinstance(e, lib.autograd.graph.GradientEdge) and e.node is y.grad_fn and e.output_nr == 0
        assert type(get(x).node).__name__ == "AccumulateGrad"
        gx, gy = lib.autograd.grad(z, [get(x), y], retain_graph=True)
        np.testing.assert_array_equal(gx.numpy(), [18.0, 18.0])
        np.testing.assert_array_equal(gy.numpy(), [6.0, 6.0])
        (ge,) = lib.autograd.grad(z, e)
        np.testing.assert_array_equal(ge.numpy(), [6.0, 6.0])
        with pytest.raises(RuntimeError, match="not possible to get the gradient edge"):
            get(lib.ones(2))
        w = (x * 2).sum()
        unused = get(lib.ones(2, requires_grad=True))
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            lib.autograd.grad(w, [unused], retain_graph=True)
        assert lib.autograd.grad(w, [unused], allow_unused=True) == (None,)
