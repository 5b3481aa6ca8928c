"""explain.record / Tape / jacobian_story / gate_story against torch (the oracle)."""
import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import explain
from glassgrad.explain import _record as R


# -- computations written once, run on torch and on glassgrad --------------------------------------------
def _seed003_mm(T, d):
    x = T.tensor(d["x12"], requires_grad=True)
    M = T.tensor([[1., 2.], [3., 4.]])
    y = T.mm(x, M)
    return y, T.tensor([[1., 0.]]), [x]


def _seed003_chain(T, d):
    T.manual_seed(3)
    x = T.randn(3, requires_grad=True)
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    return y, T.tensor([0.1, 1.0, 0.0001]), [x]


def _diamond(T, d):
    x = T.tensor(d["x3"], requires_grad=True)
    w = T.tensor(d["w3"], requires_grad=True)
    a = x * w
    b, c = a.exp(), a.sin()
    return (b * c + a).sum(), None, [x, w]


def _multi_output(T, d):
    x = T.tensor(d["x23"], requires_grad=True)
    u0, u1 = x.unbind(0)
    p, q = x.split([1, 2], 1)
    return (u0 * u1).sum() + (p.tanh().sum() * q).sum(), None, [x]


def _unused_output(T, d):
    x = T.tensor(d["x23"], requires_grad=True)
    u0, u1 = x.unbind(0)          # u1 never used: UnbindBackward0 receives (g, None)
    return (u0 ** 2).sum(), None, [x]


def _mlp(T, d):
    T.manual_seed(0)
    m = T.nn.Sequential(T.nn.Linear(4, 5), T.nn.ReLU(), T.nn.Linear(5, 2))
    x = T.tensor(d["x34"])
    return T.nn.functional.mse_loss(m(x), T.tensor(d["t32"])), None, list(m.parameters())


CASES = {"seed003_mm": _seed003_mm, "seed003_chain": _seed003_chain, "diamond": _diamond,
         "multi_output": _multi_output, "unused_output": _unused_output, "mlp": _mlp}


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    f = lambda *s: rng.standard_normal(s).astype(np.float32).tolist()
    return {"x12": [[2., 1.]], "x3": f(3), "w3": f(3), "x23": f(2, 3), "x34": f(3, 4), "t32": f(3, 2)}


def _torch_trace(y, v):
    """The engine's execution order and the gradients each node received/sent, from torch's own hooks."""
    seen, stack, order, handles = set(), [y.grad_fn], [], []
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)

        def pre(g, n=n):
            order.append([n.name(), [None if t is None else t.detach().numpy().copy() for t in g], None])

        def post(gi, go, n=n):
            for rec in reversed(order):
                if rec[0] == n.name() and rec[2] is None:
                    rec[2] = [None if t is None else t.detach().numpy().copy() for t in gi]
                    break
        handles += [n.register_prehook(pre), n.register_hook(post)]
        stack.extend(m for m, _ in n.next_functions)
    y.backward(v)
    for h in handles:
        h.remove()
    return order


def _close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("case", sorted(CASES))
def test_tape_matches_torch_engine_order_and_grads(case, data):
    ty, tv, _ = CASES[case](torch, data)
    expect = _torch_trace(ty, tv)
    gy, gv, _ = CASES[case](glassgrad, data)
    with explain.record(max_numel=10**6) as tape:
        gy.backward(gv)
    assert tape.nodes() == [e[0] for e in expect]
    for step, (name, gin, gout) in zip(tape.steps, expect):
        got_in = [None if g is None else g.value for g in step.grads_in]
        assert len(got_in) == len(gin) and all(_close(a, b) for a, b in zip(got_in, gin)), step
        if step.kind == "node":
            got_out = [None if g is None else g.value for _, g in step.grads_out]
            assert all(_close(a, b) for a, b in zip(got_out, gout)), step


@pytest.mark.parametrize("case", sorted(CASES))
def test_grads_bit_identical_with_and_without_record(case, data):
    y1, v1, leaves1 = CASES[case](glassgrad, data)
    y1.backward(v1)
    y2, v2, leaves2 = CASES[case](glassgrad, data)
    with explain.record() as tape:
        y2.backward(v2)
        print(tape)           # telling the story reads only
    assert len(tape) > 0
    for a, b in zip(leaves1, leaves2):
        assert a.grad.numpy().tobytes() == b.grad.numpy().tobytes()


def test_hooks_removed_and_engine_entry_restored(data):
    entry = glassgrad.autograd.run_backward
    y, v, (x,) = _seed003_mm(glassgrad, data)
    with explain.record() as tape:
        assert glassgrad.autograd.run_backward is not entry
        y.backward(v, retain_graph=True)
    assert glassgrad.autograd.run_backward is entry
    node = y.grad_fn
    for n in (node, node.next_functions[0][0]):
        assert n._hooks is None or (not n._hooks.pre and not n._hooks.post)
    y.backward(v)             # outside the block: nothing more is recorded
    assert len(tape.runs) == 1


def test_seed003_story_text_and_values_match_torch(data):
    ty, tv, (tx,) = _seed003_mm(torch, data)
    ty.backward(tv)
    y, v, (x,) = _seed003_mm(glassgrad, data)
    with explain.record() as tape:
        y.backward(v)
    mm, acc = tape.steps
    np.testing.assert_array_equal(mm.grads_out[0][1].value, tx.grad.numpy())
    np.testing.assert_array_equal(acc.grad_after.value, tx.grad.numpy())
    sent = R._fmt(tx.grad.numpy())
    story = tape.story()
    assert f"MmBackward0 (y) received grad [[1., 0.]] and sent {sent} to x (AccumulateGrad)" in story
    assert f"AccumulateGrad added {sent} into x.grad" in story
    assert "1 input needs no gradient" in story           # M does not require grad


@pytest.mark.parametrize("v", [[[1., 0.]], [[0., 1.]], [[1., 1.]], [[0.5, -2.]]])
def test_seed003_jacobian_vjp_equals_torch_grad(v, data):
    ty, _, (tx,) = _seed003_mm(torch, data)
    ty.backward(torch.tensor(v))
    tJ = torch.autograd.functional.jacobian(lambda a: torch.mm(a, torch.tensor([[1., 2.], [3., 4.]])),
                                            torch.tensor(data["x12"])).reshape(2, 2)
    y, _, (x,) = _seed003_mm(glassgrad, data)
    with explain.record() as tape:
        y.backward(glassgrad.tensor(v), retain_graph=True)
    st = tape.jacobian(y, x)
    np.testing.assert_allclose(st.J, tJ.numpy(), rtol=1e-6)
    np.testing.assert_allclose(st.vjp, tx.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(st.grad, tx.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(st.recorded, tx.grad.numpy(), rtol=1e-6)
    assert st.matches
    assert "vᵀJ" in str(st) and "equal" in str(st)
    assert len(tape.runs) == 1          # building J (autograd.grad per row) is not put on the tape


def test_seed003_chain_jacobian_story(data):
    ty, tv, (tx,) = _seed003_chain(torch, data)
    ty.backward(tv)
    y, v, (x,) = _seed003_chain(glassgrad, data)
    st = explain._record.jacobian_story(y, x, v)
    np.testing.assert_allclose(st.grad, tx.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(st.vjp, tx.grad.numpy(), rtol=1e-6)
    # y = 2^k x: J is diagonal, every off-diagonal entry exactly zero
    assert np.all(st.J[~np.eye(3, dtype=bool)] == 0)


def test_jacobian_after_freed_graph_explains(data):
    y, v, (x,) = _seed003_mm(glassgrad, data)
    y.backward(v)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        R.jacobian(y, x)


def _torch_gate(x, mask, v, build):
    xl = torch.tensor(x, requires_grad=True)
    out = build(xl, torch.tensor(mask))
    (g,) = torch.autograd.grad(out, xl, torch.tensor(v))
    J = torch.autograd.functional.jacobian(lambda a: build(a, torch.tensor(mask)), torch.tensor(x))
    return out.detach().numpy(), g.numpy(), J.numpy()


NAN = float("nan")


@pytest.mark.parametrize("x,mask,v,branch", [
    ([1., NAN, 3.], [True, False, True], [1., NAN, 1.], None),       # NaN in the unselected branch (seed 000)
    ([1., 2., float("inf")], [True, True, False], [1., 1., 1.], None),
    ([1., -1., 4.], [True, False, True], [1., 1., 1.], "sqrt"),      # NaN created inside the branch
    ([1., 0., 2.], [True, False, True], [1., 1., 1.], "log"),
])
def test_gate_story_matches_torch(x, mask, v, branch):
    st = R.gate_story(glassgrad.tensor(x), glassgrad.tensor(mask), glassgrad.tensor(v),
                      branch=getattr(glassgrad, branch) if branch else None)
    fn = (lambda t: getattr(torch, branch)(t)) if branch else (lambda t: t)
    builds = [lambda a, m: m.to(a.dtype) * fn(a),
              lambda a, m: torch.where(m, fn(a), torch.zeros(()))]
    if branch:
        builds.append(lambda a, m: torch.where(m, fn(torch.where(m, a, torch.ones(()))), torch.zeros(())))
    assert len(st.variants) == len(builds)
    for (name, got), build in zip(st.variants.items(), builds):
        fw, g, J = _torch_gate(x, mask, v, build)
        np.testing.assert_array_equal(got["forward"], fw, err_msg=name)
        np.testing.assert_array_equal(got["grad"], g, err_msg=name)
        np.testing.assert_array_equal(got["J"], J, err_msg=name)
    text = str(st)
    assert "zeroes the rows" in text
    if branch:
        assert "double where" in text
        assert np.isfinite(list(st.variants.values())[-1]["grad"]).all()


def test_seed000_mask_vs_where_nan_trap():
    # y = mask * x lets the NaN through (forward and, with a NaN loss gradient, backward); where does not
    x, mask, v = [1., NAN, 3.], [True, False, True], [1., NAN, 1.]
    st = R.gate_story(glassgrad.tensor(x), glassgrad.tensor(mask), glassgrad.tensor(v))
    mul, wh = st["mask * x"], st["where(mask, x, 0)"]
    tx = torch.tensor(x, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.tensor(mask).float() * tx, tx, torch.tensor(v))
    np.testing.assert_array_equal(mul["grad"], tg.numpy())
    assert np.isnan(mul["forward"][1]) and np.isnan(mul["grad"][1])
    assert wh["forward"][1] == 0 and wh["grad"][1] == 0
    assert "mask * x" in str(st).split("Forward NaN/Inf in:")[1].splitlines()[0]


def test_autograd_grad_and_create_graph_are_recorded(data):
    x = glassgrad.tensor(data["x3"], requires_grad=True)
    tx = torch.tensor(data["x3"], requires_grad=True)
    with explain.record() as tape:
        (g,) = glassgrad.autograd.grad((x ** 3).sum(), x, create_graph=True)
        g.sum().backward()
    (tg,) = torch.autograd.grad((tx ** 3).sum(), tx, create_graph=True)
    tg.sum().backward()
    assert [r.kind for r in tape.runs] == ["grad", "backward"]
    assert tape.runs[0].create_graph
    lab, res = tape.runs[0].results[0]
    assert lab == "x"
    np.testing.assert_allclose(res.value, tg.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    acc = [s for s in tape.runs[1].steps if s.kind == "accumulate"]
    np.testing.assert_allclose(acc[-1].grad_after.value, tx.grad.numpy(), rtol=1e-6)
    assert "autograd.grad returns" in tape.story()


def test_nested_records_and_names(data):
    y, v, (x,) = _seed003_mm(glassgrad, data)
    with explain.record(names={"inp": x}) as outer:
        with explain.record() as inner:
            y.backward(v)
    assert outer.nodes() == inner.nodes() == ["MmBackward0", "torch::autograd::AccumulateGrad"]
    assert "into inp.grad" in outer.story() and "into x.grad" in inner.story()


def test_large_gradients_kept_as_norm_only():
    torch.manual_seed(1)
    glassgrad.manual_seed(1)
    tx = torch.randn(50, 50, requires_grad=True)
    x = glassgrad.randn(50, 50, requires_grad=True)
    (tx.tanh() * 3).sum().backward()
    with explain.record(max_numel=100) as tape:
        (x.tanh() * 3).sum().backward()
    acc = tape.steps[-1]
    assert acc.grads_in[0].value is None
    assert acc.grads_in[0].norm == pytest.approx(float(tx.grad.norm()), rel=1e-5)
    assert "<grad [50, 50], norm" in tape.story()


def test_empty_tape_story():
    with explain.record() as tape:
        pass
    assert "empty" in str(tape) and len(tape) == 0


def test_model_parameter_names_label_the_leaves(data):
    glassgrad.manual_seed(0)
    m = glassgrad.nn.Sequential(glassgrad.nn.Linear(4, 5), glassgrad.nn.ReLU(), glassgrad.nn.Linear(5, 2))
    loss = m(glassgrad.tensor(data["x34"])).pow(2).mean()
    with explain.record(model=m) as tape:
        loss.backward()
    story = tape.story()
    for name, p in m.named_parameters():
        assert f"into {name}.grad" in story
        acc = [s for s in tape.steps if s.kind == "accumulate" and s.label == name]
        assert len(acc) == 1 and np.array_equal(acc[0].grad_after.value, p.grad.numpy())
    assert "ReluBackward0" in story


def test_error_inside_record_restores_engine_and_keeps_partial_tape(data):
    entry = glassgrad.autograd.run_backward
    y, v, (x,) = _seed003_mm(glassgrad, data)
    y.backward(v)                       # frees the graph
    with pytest.raises(RuntimeError, match="second time"):
        with explain.record() as tape:
            y.backward(v)
    assert glassgrad.autograd.run_backward is entry
    assert len(tape.runs) == 1
    node = y.grad_fn
    assert node._hooks is None or (not node._hooks.pre and not node._hooks.post)
