"""The fused LSTM layer (ops/rnn.py, grad_fn MkldnnRnnLayerBackward0) that float32 padded LSTMs without
projection run through -- where torch's CPU LSTM uses its oneDNN kernel -- against torch and against the
per-step composite (nn/modules/rnn.py), which the other cases (float64, packed, proj_size) still run:
forward values, every gradient, torch's graph structure, float64 gradcheck / gradgradcheck of the node
itself, create_graph, retain_graph, saved-tensor version checks."""
import warnings

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.autograd import gradcheck, gradgradcheck
from glassgrad.nn.modules.rnn import RNNBase
from glassgrad.ops.rnn import lstm_layer

TOL = dict(atol=2e-5, rtol=2e-4)


def A(t):
    return t.detach().numpy()


def _build(T, kw, seed=0):
    T.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return T.nn.LSTM(**kw)


CONFIGS = [
    dict(input_size=4, hidden_size=5),
    dict(input_size=4, hidden_size=5, num_layers=2),
    dict(input_size=4, hidden_size=5, num_layers=2, batch_first=True),
    dict(input_size=4, hidden_size=5, bidirectional=True),
    dict(input_size=4, hidden_size=5, num_layers=2, bidirectional=True, bias=False),
    dict(input_size=4, hidden_size=5, num_layers=3, dropout=0.5),
]


def _run(T, kw, x_np, states, train=False, dtype="float32", composite=False, monkeypatch=None):
    m = _build(T, kw).to(getattr(T, dtype))
    m.train(train)
    x = T.from_numpy(x_np.astype(dtype)).requires_grad_()
    st = None if states is None else tuple(T.from_numpy(s.astype(dtype)).requires_grad_() for s in states)
    if composite:
        monkeypatch.setattr(RNNBase, "_fused", lambda *a: False)
    T.manual_seed(123)
    out, (h, c) = m(x, st)
    if composite:
        monkeypatch.undo()
    w = T.from_numpy(np.cos(np.arange(out.numel())).astype(dtype).reshape(tuple(out.shape)))
    ((out * w).sum() + (h ** 2).sum() + (c * 0.5).sum()).backward()
    grads = [x.grad] + ([s.grad for s in st] if st else []) + [p.grad for p in m.parameters()]
    return [out, h, c], grads, out


def _case(kw, unbatched=False, with_states=True):
    rng = np.random.default_rng(3)
    T_, B, I, H = 6, 3, kw["input_size"], kw["hidden_size"]
    D = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1)
    P = kw.get("proj_size") or H
    lead = (L * D,) if unbatched else (L * D, B)
    shape = (T_, I) if unbatched else ((B, T_, I) if kw.get("batch_first") else (T_, B, I))
    x = rng.standard_normal(shape)
    states = [rng.standard_normal(lead + (P,)), rng.standard_normal(lead + (H,))] if with_states else None
    return x, states


def _compare(a_res, b_res, tol=TOL):
    (ao, ag, _), (bo, bg, _) = a_res, b_res
    for a, b in zip(ao, bo):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(A(a), A(b), **tol)
    assert len(ag) == len(bg)
    for i, (a, b) in enumerate(zip(ag, bg)):
        assert (a is None) == (b is None), i
        if b is not None:
            np.testing.assert_allclose(A(a), A(b), err_msg=f"grad {i}", **tol)


@pytest.mark.parametrize("kw", CONFIGS, ids=[str(sorted(k.items())) for k in CONFIGS])
@pytest.mark.parametrize("mode", ["states", "no_states", "unbatched", "train"])
def test_fused_and_composite_match_torch(kw, mode, monkeypatch):
    """Both paths of glassgrad (fused, and the composite forced) give torch's values and gradients."""
    x, states = _case(kw, unbatched=mode == "unbatched", with_states=mode != "no_states")
    train = mode == "train"
    ref = _run(torch, kw, x, states, train)
    fused = _run(glassgrad, kw, x, states, train)
    assert fused[2].grad_fn is not None
    _compare(fused, ref)
    comp = _run(glassgrad, kw, x, states, train, composite=True, monkeypatch=monkeypatch)
    _compare(comp, ref)


@pytest.mark.parametrize("kw", [CONFIGS[1], CONFIGS[3]])
def test_float64_runs_the_composite_like_torch(kw):
    x, states = _case(kw)
    ref = _run(torch, kw, x, states, dtype="float64")
    got = _run(glassgrad, kw, x, states, dtype="float64")
    _compare(got, ref, dict(atol=1e-10, rtol=1e-9))
    assert got[2].grad_fn.name() == ref[2].grad_fn.name()


def _structure(fn, depth=3):
    """grad_fn names and output numbers down `depth` levels of next_functions."""
    if fn is None:
        return None
    if depth == 0:
        return fn.name()
    return (fn.name(), [(None if n is None else _structure(n, depth - 1), nr) for n, nr in fn.next_functions])


@pytest.mark.parametrize("kw", CONFIGS + [dict(input_size=4, hidden_size=5, batch_first=True)])
def test_graph_structure_matches_torch(kw):
    """MkldnnRnnLayerBackward0 per layer and direction with torch's edges (input, w_ih, w_hh, b_ih, b_hh, hx,
    cx) and outputs (output 0, h_n 1, c_n 2); a batch_first input reaches it through a contiguous clone."""
    res = []
    for T in (torch, glassgrad):
        m = _build(T, kw)
        m.train(False)
        x, states = _case(kw)
        x = T.from_numpy(x.astype(np.float32)).requires_grad_()
        st = tuple(T.from_numpy(s.astype(np.float32)).requires_grad_() for s in states)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out, (h, c) = m(x, st)
        res.append([_structure(t.grad_fn, 4) for t in (out, h, c)])
    assert res[0] == res[1]


def test_node_saved_tensors_and_attributes_like_torch():
    res = []
    for T in (torch, glassgrad):
        m = _build(T, dict(input_size=3, hidden_size=4))
        x = T.ones(5, 2, 3)
        out, (h, c) = m(x)
        n = out.grad_fn
        res.append([tuple(n._saved_input.shape), tuple(n._saved_weight0.shape), tuple(n._saved_weight1.shape),
                    tuple(n._saved_weight2.shape), tuple(n._saved_hx_.shape), tuple(n._saved_cx_.shape),
                    tuple(n._saved_result0.shape), tuple(n._saved_result1.shape), tuple(n._saved_result2.shape),
                    n._saved_reverse, n._saved_hidden_size, n._saved_has_biases, n._saved_mode,
                    n._saved_num_layers, n._saved_batch_first, n._saved_bidirectional, n._saved_train])
        assert np.array_equal(A(n._saved_result0), A(out))
        assert np.array_equal(A(n._saved_result2), A(c[0]))
        out.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            n._saved_input
    assert res[0] == res[1]


def test_retain_graph_and_inplace_modified_output():
    for T in (torch, glassgrad):
        m = _build(T, dict(input_size=3, hidden_size=4))
        x = T.ones(5, 2, 3, requires_grad=True)
        out, _ = m(x)
        out.sum().backward(retain_graph=True)
        g1 = A(x.grad).copy()
        out.sum().backward()
        np.testing.assert_allclose(A(x.grad), 2 * g1, rtol=1e-6)
        out2, _ = m(x)
        out2.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out2.sum().backward()


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", ["both", "none", "ih_only"])
def test_fused_node_gradcheck_float64(reverse, bias):
    """Finite differences of the fused layer itself (the module only uses it for float32) w.r.t. input,
    initial states and every weight, and the second derivatives through its create_graph backward."""
    rng = np.random.default_rng(0)
    T_, B, I, H = 4, 2, 3, 2

    def t(*shape):
        return glassgrad.tensor(rng.standard_normal(shape) * 0.7, dtype=glassgrad.float64, requires_grad=True)

    ins = [t(T_, B, I), t(B, H), t(B, H), t(4 * H, I), t(4 * H, H)]
    ins += {"both": [t(4 * H), t(4 * H)], "none": [], "ih_only": [t(4 * H)]}[bias]

    def f(x, h0, c0, wi, wh, *b):
        b = b + (None,) * (2 - len(b))
        return lstm_layer(x, h0, c0, wi, wh, *b, reverse=reverse)

    assert f(*ins)[0].grad_fn.name() == "MkldnnRnnLayerBackward0"
    assert gradcheck(f, ins)
    assert gradgradcheck(f, ins)


def test_double_backward_matches_torch():
    """create_graph through the fused node: second-order gradients equal torch's."""
    res = []
    for T in (torch, glassgrad):
        m = _build(T, dict(input_size=3, hidden_size=4, num_layers=2))
        x = T.from_numpy(np.random.default_rng(1).standard_normal((5, 2, 3)).astype(np.float32)).requires_grad_()
        out, (h, c) = m(x)
        gx, = T.autograd.grad((out ** 2).sum() + c.sum(), x, create_graph=True)
        (gx ** 2).sum().backward()
        res.append([A(gx), A(x.grad)] + [A(p.grad) for p in m.parameters()])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=1e-3)


def test_same_tensor_as_both_initial_states():
    """h0 is c0: each edge of the node gets its own gradient (the engine sums them)."""
    res = []
    for T in (torch, glassgrad):
        m = _build(T, dict(input_size=3, hidden_size=4))
        s = T.full((1, 2, 4), 0.3, requires_grad=True)
        out, (h, c) = m(T.ones(5, 2, 3), (s, s))
        gs, = T.autograd.grad((out ** 2).sum() + c.sum(), s, create_graph=True)
        gs.sum().backward()
        res.append([A(gs), A(s.grad)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=1e-4)


def test_no_grad_forward_matches():
    kw = dict(input_size=4, hidden_size=5, num_layers=2, bidirectional=True)
    x, states = _case(kw)
    outs = []
    for T in (torch, glassgrad):
        m = _build(T, kw)
        with T.no_grad():
            out, (h, c) = m(T.from_numpy(x.astype(np.float32)))
        assert out.grad_fn is None and not out.requires_grad
        outs.append([A(out), A(h), A(c)])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, **TOL)


@pytest.mark.parametrize("create_graph", [False, True])
def test_clip_grad_norm_scales_in_place_like_torch(create_graph):
    """clip_grad_norm_ (the LM's step): same total norm, scaled gradients and version bumps as torch, for
    plain gradients (scaled in place directly) and gradients with a graph (create_graph: through mul_)."""
    res = []
    for T in (torch, glassgrad):
        m = _build(T, dict(input_size=3, hidden_size=4))
        out, _ = m(T.ones(5, 2, 3))
        (out ** 2).sum().backward(create_graph=create_graph)
        gs = [p.grad for p in m.parameters()]
        v0 = [g._version for g in gs]
        total = T.nn.utils.clip_grad_norm_(m.parameters(), 0.05)
        res.append([A(total)] + [A(g) for g in gs] + [[g._version - v for g, v in zip(gs, v0)]]
                   + [[g.requires_grad for g in gs]])
    (t_total, *t_grads, t_versions, t_rg), (g_total, *g_grads, g_versions, g_rg) = res
    assert g_versions == t_versions and g_rg == t_rg
    # torch's LSTM gradients come from oneDNN, whose float32 kernels differ per CPU (1 ulp-level changes with its
    # AVX2 path already use 0.2 of the old rtol=1e-6/atol=1e-8, which was 7e-7 of the gradients' scale).  The
    # total norm within rtol 1e-5, each clipped gradient within rtol 1e-5 plus 1e-5 of its scale: a wrong clip
    # coefficient (max_norm / (total + 1e-6)) or an unscaled gradient is off by a factor, far outside that.
    np.testing.assert_allclose(g_total, t_total, rtol=1e-5)
    for a, b in zip(g_grads, t_grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * np.abs(b).max())


@pytest.mark.parametrize("which", ["h0", "c0", "x"])
def test_gradient_of_only_one_input(which):
    """Only h0, only c0 or only the input requires grad: each alone gets torch's gradient."""
    rng = np.random.default_rng(5)
    arrs = [rng.standard_normal(s).astype(np.float32) for s in ((4, 2, 3), (1, 2, 5), (1, 2, 5))]
    res = []
    for T in (torch, glassgrad):
        m = _build(T, dict(input_size=3, hidden_size=5))
        m.requires_grad_(False)
        x, h0, c0 = (T.from_numpy(a.copy()) for a in arrs)
        t = {"x": x, "h0": h0, "c0": c0}[which].requires_grad_()
        out, (h, c) = m(x, (h0, c0))
        assert out.grad_fn.name() == "MkldnnRnnLayerBackward0"
        ((out ** 2).sum() + c.sum() + h.sum()).backward()
        res.append(A(t.grad))
    np.testing.assert_allclose(res[1], res[0], **TOL)
