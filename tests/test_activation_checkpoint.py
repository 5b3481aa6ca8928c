"""torch.utils.checkpoint against torch: checkpoint (reentrant and non-reentrant) and checkpoint_sequential give
the gradients of the model run without them (dropout included: the RNG state is restored for the rerun), they
really drop the segment's activations, and the warnings and errors are torch's."""
import contextlib
import gc
import warnings
import weakref

import numpy as np
import pytest

import torch
import torch.utils.checkpoint as tcp
import glassgrad
import glassgrad.utils.checkpoint as gcp

LIBS = ((torch, tcp), (glassgrad, gcp))
IDS = ["torch", "glassgrad"]
MODES = ["plain", "seq_reentrant", "seq_nonreentrant", "whole_reentrant", "whole_nonreentrant", "nested"]


def _model(T):
    T.manual_seed(0)
    nn = T.nn
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 16), nn.Tanh(),
                         nn.Dropout(0.3), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 4))


def _run(T, C, model, x, mode):
    T.manual_seed(1)
    if mode == "plain":
        y = model(x)
    elif mode.startswith("seq"):
        y = C.checkpoint_sequential(model, 3, x, use_reentrant=mode == "seq_reentrant")
    elif mode.startswith("whole"):
        y = C.checkpoint(model, x, use_reentrant=mode == "whole_reentrant")
    else:       # a checkpoint inside a checkpoint
        def outer(a):
            h = C.checkpoint(model[:4], a, use_reentrant=False)
            return model[4:](h)
        y = C.checkpoint(outer, x, use_reentrant=False)
    T.manual_seed(5)            # the RNG moves on before backward: the rerun must restore it
    (y * y).sum().backward()
    return [y.detach().numpy()] + [t.grad.numpy().copy() for t in [x, *model.parameters()]]


def _grads(T, C, mode):
    model = _model(T)
    x = T.tensor(np.random.default_rng(0).standard_normal((5, 8)), dtype=T.float32, requires_grad=True)
    return _run(T, C, model, x, mode)


@pytest.mark.parametrize("mode", MODES[1:])
def test_gradients_equal_the_unchecked_model_with_dropout(mode):
    want_t = _grads(torch, tcp, "plain")
    want_g = _grads(glassgrad, gcp, "plain")
    got_t = _grads(torch, tcp, mode)
    got_g = _grads(glassgrad, gcp, mode)
    for a, b in zip(got_g, want_g):             # glassgrad: the same computation again, bit for bit
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got_t, want_t):             # (torch agrees with itself too)
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got_g, got_t):              # and with torch (same dropout masks: same RNG stream)
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _drop_check(T, C, reentrant):
    refs = []

    def f(a):
        h = a.sin()
        refs.append(weakref.ref(h))
        return (h * h).exp()
    x = T.ones(3, requires_grad=True)
    y = C.checkpoint(f, x, use_reentrant=reentrant)
    gc.collect()
    dropped = refs[0]() is None
    y.sum().backward()
    plain = f(x)
    gc.collect()
    return dropped, refs[-1]() is None, plain is not None


@pytest.mark.parametrize("reentrant", [True, False])
def test_activations_are_dropped(reentrant):
    # the intermediate h (saved by the mul) is gone after a checkpointed forward, alive without checkpoint
    assert _drop_check(glassgrad, gcp, reentrant) == _drop_check(torch, tcp, reentrant) == (True, False, True)


def test_non_reentrant_holds_no_array_of_the_segment():
    x = glassgrad.randn(64, 64, requires_grad=True)
    y = gcp.checkpoint(lambda a: a.sin().exp().tanh().sum(0), x, use_reentrant=False)
    node, arrays = y.grad_fn, []
    seen = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        for s in n._saved or ():
            arrays.extend(v for v in s if isinstance(v, np.ndarray) or isinstance(v, glassgrad.Tensor))
        stack.extend(m for m, _ in n.next_functions)
    assert arrays == []


def _outcome(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = f()
        except Exception as e:
            r = (type(e).__name__, str(e))
    return r, [(x.category.__name__, str(x.message)) for x in w]


def _seeded(T):
    T.manual_seed(0)
    return T.randn(3, requires_grad=True)


def _grad_nonreentrant(T, C):
    x = _seeded(T)
    y = C.checkpoint(lambda a: a.sin() * 2, x, use_reentrant=False)
    return np.round(T.autograd.grad(y.sum(), x)[0].numpy(), 5).tolist()


def _retain(T, C):
    x = _seeded(T)
    y = C.checkpoint(lambda a: a.sin().exp(), x, use_reentrant=False)
    g1 = T.autograd.grad(y.sum(), x, retain_graph=True)[0]
    g2 = T.autograd.grad(y.sum(), x)[0]
    return bool(T.equal(g1, g2))


def _twice(T, C):
    y = C.checkpoint(lambda a: a.sin().exp(), _seeded(T), use_reentrant=False)
    y.sum().backward()
    y.sum().backward()


def _create_graph(T, C):
    x = _seeded(T)
    y = C.checkpoint(lambda a: a.sin().exp(), x, use_reentrant=False)
    g, = T.autograd.grad(y.sum(), x, create_graph=True)
    return np.round(T.autograd.grad(g.sum(), x)[0].numpy(), 4).tolist()


def _inplace_input(T, C):
    a = _seeded(T).clone()
    y = C.checkpoint(lambda a: a.sin(), a, use_reentrant=False)
    a.mul_(2)
    y.sum().backward()


def _nondeterministic(early_stop, shape_change):
    def case(T, C):
        calls = []

        def f(a):
            calls.append(1)
            if len(calls) == 1:
                return a.sin()
            return a[:2].sin() if shape_change else a.sin().exp()
        with C.set_checkpoint_early_stop(early_stop):
            y = C.checkpoint(f, _seeded(T), use_reentrant=False)
        y.sum().backward()
    return case


def _backward_error(reentrant_inputs):
    def case(T, C):
        x = _seeded(T)
        y = C.checkpoint(lambda a: a.sin() * 2, x, use_reentrant=True)
        if reentrant_inputs:
            y.sum().backward(inputs=[x])
        else:
            T.autograd.grad(y.sum(), x)
    return case


def _no_output_grad(T, C):
    C.checkpoint(lambda a: a.detach() * 2, _seeded(T), use_reentrant=True).sum().backward()


CASES = {
    "missing_use_reentrant": lambda T, C: C.checkpoint(lambda a: a.sin(), _seeded(T)).requires_grad,
    "sequential_missing_use_reentrant": lambda T, C: C.checkpoint_sequential([T.nn.Tanh(), T.nn.Tanh()], 2,
                                                                             _seeded(T)).requires_grad,
    "no_input_requires_grad_reentrant": lambda T, C: C.checkpoint(T.nn.Linear(3, 3), T.randn(3),
                                                                  use_reentrant=True).requires_grad,
    "no_input_requires_grad_nonreentrant": lambda T, C: C.checkpoint(T.nn.Linear(3, 3), T.randn(3),
                                                                     use_reentrant=False).requires_grad,
    "kwargs_reentrant": lambda T, C: C.checkpoint(lambda a, b=1: a, _seeded(T), use_reentrant=True, b=2, c=3),
    "kwargs_nonreentrant": lambda T, C: round(C.checkpoint(lambda a, b=1: a.sin() * b, _seeded(T),
                                                           use_reentrant=False, b=2).sum().item(), 5),
    "context_fn_reentrant": lambda T, C: C.checkpoint(lambda a: a, _seeded(T), use_reentrant=True,
                                                      context_fn=lambda: (None, None)),
    "debug_reentrant": lambda T, C: C.checkpoint(lambda a: a, _seeded(T), use_reentrant=True, debug=True),
    "determinism_check": lambda T, C: C.checkpoint(lambda a: a, _seeded(T), use_reentrant=False,
                                                   determinism_check="x"),
    "sequential_kwargs": lambda T, C: C.checkpoint_sequential([T.nn.Tanh()], 1, _seeded(T), use_reentrant=False,
                                                              foo=1),
    "grad_reentrant": _backward_error(False),
    "backward_inputs_reentrant": _backward_error(True),
    "grad_nonreentrant": _grad_nonreentrant,
    "no_output_requires_grad": _no_output_grad,
    "retain_graph": _retain,
    "backward_twice": _twice,
    "create_graph": _create_graph,
    "inplace_input": _inplace_input,
    "metadata_mismatch": _nondeterministic(True, True),
    "more_saved_no_early_stop": _nondeterministic(False, False),
    "more_saved_early_stop": _nondeterministic(True, False),
    "no_grad": lambda T, C: _no_grad(T, C),
    "multi_output_reentrant": lambda T, C: [getattr(v, "requires_grad", v) for v in
                                            C.checkpoint(lambda a, b: (a.sin(), b * 2), _seeded(T), 3,
                                                         use_reentrant=True)],
}


def _no_grad(T, C):
    with T.no_grad():
        return C.checkpoint(lambda a: a.sin(), _seeded(T), use_reentrant=False).requires_grad


@pytest.mark.parametrize("case", sorted(CASES))
def test_behaviour_warnings_and_errors_match_torch(case):
    got = _outcome(lambda: CASES[case](glassgrad, gcp))
    want = _outcome(lambda: CASES[case](torch, tcp))
    assert got == want


def test_reentrant_warning_points_at_the_caller():
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly") as rec:
        gcp.checkpoint(lambda a: a.sin(), glassgrad.ones(2, requires_grad=True))
    assert rec[0].filename == __file__


def test_preserve_rng_state_false_matches_torch():
    res = []
    for T, C in LIBS:
        model = _model(T)
        x = T.tensor(np.random.default_rng(0).standard_normal((5, 8)), dtype=T.float32, requires_grad=True)
        T.manual_seed(1)
        y = C.checkpoint(model, x, use_reentrant=False, preserve_rng_state=False)
        T.manual_seed(7)
        y.sum().backward()
        res.append(x.grad.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-4, atol=1e-5)


def test_torch_utils_checkpoint_through_the_alias(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "s.py"
    script.write_text("import torch\nfrom torch.utils.checkpoint import checkpoint_sequential\n"
                      "m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))\n"
                      "x = torch.randn(3, 4, requires_grad=True)\n"
                      "checkpoint_sequential(m, 2, x, use_reentrant=False).sum().backward()\n"
                      "with torch.autograd.graph.save_on_cpu():\n    y = m(x)\n"
                      "print(type(torch).__name__, torch.__name__, x.grad.shape)\n")
    import os
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    p = subprocess.run([sys.executable, "-m", "glassgrad", "run", str(script)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().endswith("torch.Size([3, 4])")


def _lstm_grads(T, C, mode):
    T.manual_seed(0)
    m = T.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    x = T.tensor(np.random.default_rng(1).standard_normal((5, 2, 3)), dtype=T.float32, requires_grad=True)
    if mode == "plain":
        y = m(x)[0]
    else:
        y = C.checkpoint(lambda a: m(a)[0], x, use_reentrant=mode == "reentrant")
    (y * y).sum().backward()
    return [x.grad.numpy()] + [p.grad.numpy() for p in m.parameters()]


@pytest.mark.parametrize("mode", ["reentrant", "nonreentrant"])
def test_lstm_under_checkpoint(mode):
    # glassgrad's LSTM keeps no gate workspace under saved-tensor hooks: backward rebuilds it from the inputs
    for a, b in zip(_lstm_grads(glassgrad, gcp, mode), _lstm_grads(glassgrad, gcp, "plain")):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(_lstm_grads(glassgrad, gcp, mode), _lstm_grads(torch, tcp, mode)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _exec_group(T, C, group, overlap):
    x = _seeded(T)
    calls = []

    def f(a):
        calls.append(1)
        return a[:2].exp(), a[1:].sin() if not overlap else a[:2].exp().cos()
    u, v = C.checkpoint(f, x, use_reentrant=False)
    ctx = C.GraphExecGroup() if group else contextlib.nullcontext()
    try:
        with ctx:
            u.sum().backward(retain_graph=True)
            v.sum().backward(retain_graph=True)
    except Exception as e:
        return type(e).__name__, str(e)
    return len(calls), np.round(x.grad.numpy(), 5).tolist()


@pytest.mark.parametrize("group,overlap", [(False, False), (True, False), (True, True)])
def test_graph_exec_group_recomputes_once(group, overlap):
    got, want = _exec_group(glassgrad, gcp, group, overlap), _exec_group(torch, tcp, group, overlap)
    assert got == want
    if group and not overlap:
        assert got[0] == 2        # the forward and one recomputation for both backward calls


def test_graph_exec_group_does_not_nest():
    for C in (tcp, gcp):
        with C.GraphExecGroup():
            with pytest.raises(RuntimeError, match="^GraphExecGroup contexts cannot be nested. Already inside group"):
                with C.GraphExecGroup():
                    pass


def _context_fn_log(T, C, debug):
    log = []

    @contextlib.contextmanager
    def cm(name):
        log.append("enter " + name)
        yield
        log.append("exit " + name)

    x = _seeded(T)
    kw = {"debug": True} if debug else {"context_fn": lambda: (cm("forward"), cm("recompute"))}
    y = C.checkpoint(lambda a: (log.append("run"), a.sin().exp())[1], x, use_reentrant=False, **kw)
    log.append("backward")
    y.sum().backward()
    return log, np.round(x.grad.numpy(), 5).tolist()


@pytest.mark.parametrize("debug", [False, True], ids=["context_fn", "debug"])
def test_context_fn_and_debug(debug):
    assert _context_fn_log(glassgrad, gcp, debug) == _context_fn_log(torch, tcp, debug)


def _inplace_segment(T, C, mode):
    def f(a):
        h = a * 2
        h.sin_()                # saves its input: the old values of h
        h = h.exp()
        k = h * 3
        k.relu_()               # saves its result
        k2 = k + 1
        k2.tanh_()
        k3 = k2 * 1.0
        k3.mul_(a)
        return k3 * h
    x = _seeded(T)
    if mode == "plain":
        y = f(x)
    elif mode == "detach_hooks":
        with T.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
            y = f(x)
    else:
        y = C.checkpoint(f, x, use_reentrant=mode == "reentrant")
    y.sum().backward()
    return x.grad.numpy()


@pytest.mark.parametrize("mode", ["reentrant", "nonreentrant", "detach_hooks"])
def test_inplace_ops_in_a_checkpointed_segment(mode):
    want = _inplace_segment(torch, tcp, "plain")
    np.testing.assert_allclose(_inplace_segment(torch, tcp, mode), want, rtol=1e-6)
    np.testing.assert_allclose(_inplace_segment(glassgrad, gcp, mode), want, rtol=1e-5, atol=1e-6)


def _transformer_grads(T, C, mode):
    T.manual_seed(0)
    layer = T.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.2, batch_first=True)
    emb = T.nn.Embedding(10, 16)
    T.manual_seed(3)
    h = emb(T.tensor([[1, 2, 3, 4, 5], [6, 7, 8, 9, 0]]))
    y = layer(h) if mode == "plain" else C.checkpoint(layer, h, use_reentrant=mode == "reentrant")
    T.manual_seed(9)
    (y * y).mean().backward()
    return [emb.weight.grad.numpy()] + [p.grad.numpy() for p in layer.parameters()]


@pytest.mark.parametrize("mode", ["reentrant", "nonreentrant"])
def test_transformer_layer_with_dropout(mode):
    got = _transformer_grads(glassgrad, gcp, mode)
    for a, b in zip(got, _transformer_grads(glassgrad, gcp, "plain")):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got, _transformer_grads(torch, tcp, mode)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_recomputation_runs_under_the_forwards_autocast_as_torch():
    """The segment recomputed in backward (outside the autocast block) runs in the forward's dtypes."""
    grads = {}
    for lib in (torch, glassgrad):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(8, 8), lib.nn.GELU(), lib.nn.Linear(8, 4))
        x = lib.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(3, 8), requires_grad=True)
        out = []
        for reentrant in (True, False, None):
            with lib.autocast("cpu", dtype=lib.bfloat16):
                y = net(x) if reentrant is None else lib.utils.checkpoint.checkpoint(net, x, use_reentrant=reentrant)
            assert y.dtype == lib.bfloat16
            x.grad = None
            y.float().sum().backward()          # (the reentrant variant refuses autograd.grad)
            out.append(x.grad.float().numpy())
        np.testing.assert_array_equal(out[0], out[2])       # checkpointed == plain, bit for bit
        np.testing.assert_array_equal(out[1], out[2])
        grads[lib.__name__] = out[2]
    np.testing.assert_allclose(grads["glassgrad"], grads["torch"], rtol=2e-2, atol=1e-3)   # bf16 products
