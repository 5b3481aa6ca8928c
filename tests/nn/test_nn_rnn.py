"""Recurrent layers (nn/modules/rnn.py) and nn.utils.rnn, differential against torch: seeded parameters
bit-equal, state_dict keys, repr, forward outputs / final states and gradients (input, h0/c0, every
parameter) for each configuration (layers, bidirectional, batch_first, bias, projection, unbatched,
packed), inter-layer dropout in train mode (same RNG use as torch), cells, packing utilities, errors."""
import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)
TOL = dict(atol=2e-5, rtol=2e-4)


def A(t):
    return t.detach().numpy()


def _build(T, cls, kw, seed=0):
    T.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(T.nn, cls)(**kw)


# (class, constructor kwargs, expected repr as torch prints it)
CONFIGS = [
    ("RNN", dict(input_size=4, hidden_size=5), "RNN(4, 5)"),
    ("RNN", dict(input_size=4, hidden_size=5, nonlinearity="relu", num_layers=2), "RNN(4, 5, num_layers=2)"),
    ("RNN", dict(input_size=4, hidden_size=5, bias=False, bidirectional=True), "RNN(4, 5, bias=False, bidirectional=True)"),
    ("LSTM", dict(input_size=4, hidden_size=5), "LSTM(4, 5)"),
    ("LSTM", dict(input_size=4, hidden_size=5, num_layers=2, batch_first=True), "LSTM(4, 5, num_layers=2, batch_first=True)"),
    ("LSTM", dict(input_size=4, hidden_size=5, num_layers=2, bidirectional=True), "LSTM(4, 5, num_layers=2, bidirectional=True)"),
    ("LSTM", dict(input_size=4, hidden_size=5, proj_size=3, bidirectional=True, bias=False),
     "LSTM(4, 5, proj_size=3, bias=False, bidirectional=True)"),
    ("GRU", dict(input_size=4, hidden_size=5), "GRU(4, 5)"),
    ("GRU", dict(input_size=4, hidden_size=5, num_layers=2, bidirectional=True, batch_first=True),
     "GRU(4, 5, num_layers=2, batch_first=True, bidirectional=True)"),
    ("GRU", dict(input_size=4, hidden_size=5, num_layers=2, bias=False, dropout=0.25),
     "GRU(4, 5, num_layers=2, bias=False, dropout=0.25)"),
]
IDS = [c[2] for c in CONFIGS]


@pytest.mark.parametrize("cls,kw,rep", CONFIGS, ids=IDS)
def test_construction_matches_torch(cls, kw, rep):
    t, g = _build(torch, cls, kw), _build(glassgrad, cls, kw)
    assert repr(t) == repr(g) == rep
    assert list(t.state_dict()) == list(g.state_dict())
    for (nt, pt), (ng, pg) in zip(t.named_parameters(), g.named_parameters()):
        assert nt == ng and tuple(pt.shape) == tuple(pg.shape)
        assert np.array_equal(A(pt), A(pg)), nt            # bit-equal under the seed
    assert [[n for n in ws] for ws in t._all_weights] == g._all_weights


def _states(T, cls, kw, B, rng_np, unbatched):
    D = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1)
    H = kw["hidden_size"]
    P = kw.get("proj_size", 0) or H
    shp = (L * D, B) if not unbatched else (L * D,)
    h = rng_np.standard_normal(shp + (P,)).astype(np.float32)
    if cls != "LSTM":
        return [h]
    return [h, rng_np.standard_normal(shp + (H,)).astype(np.float32)]


def _run(T, cls, kw, x_np, states_np, mode, lengths=None):
    m = _build(T, cls, kw)
    m.train(mode == "train")
    x = T.from_numpy(x_np.copy()).requires_grad_()
    st = [T.from_numpy(s.copy()).requires_grad_() for s in states_np] if states_np is not None else None
    inp = x
    if lengths is not None:
        inp = T.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=kw.get("batch_first", False),
                                                  enforce_sorted=False)
    hx = None if st is None else (tuple(st) if cls == "LSTM" else st[0])
    T.manual_seed(123)                      # the dropout draws
    out, hn = m(inp, hx)
    if lengths is not None:
        assert isinstance(out, T.nn.utils.rnn.PackedSequence)
        out, out_len = T.nn.utils.rnn.pad_packed_sequence(out, batch_first=kw.get("batch_first", False))
    hs = list(hn) if isinstance(hn, tuple) else [hn]
    w = T.from_numpy(np.cos(np.arange(out.numel(), dtype=np.float32)).reshape(tuple(out.shape)))
    loss = (out * w).sum() + sum((h ** 2).sum() for h in hs)
    loss.backward()
    grads = [x.grad] + ([s.grad for s in st] if st else []) + [p.grad for p in m.parameters()]
    return [out] + hs, grads


CASES = []
for _c in CONFIGS:
    for _case in ("padded", "h0", "unbatched", "packed", "train"):
        CASES.append(pytest.param(_c[0], _c[1], _case, id=f"{_c[2]}-{_case}"))


@pytest.mark.parametrize("cls,kw,case", CASES)
def test_forward_and_gradients_match_torch(cls, kw, case):
    rng = np.random.default_rng(7)
    T_, B, I = 5, 3, kw["input_size"]
    bf = kw.get("batch_first", False)
    unbatched = case == "unbatched"
    if unbatched:
        shape = (T_, I)
    else:
        shape = (B, T_, I) if bf else (T_, B, I)
    x = rng.standard_normal(shape).astype(np.float32)
    states = _states(None, cls, kw, B, rng, unbatched) if case in ("h0", "unbatched", "packed") else None
    lengths = [3, 5, 2] if case == "packed" else None
    mode = "train" if case == "train" else "eval"
    res = [_run(T, cls, kw, x, states, mode, lengths) for T in LIBS]
    (to, tg), (go, gg) = res
    assert len(to) == len(go)
    for a, b in zip(go, to):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(A(a), A(b), **TOL)
    assert len(tg) == len(gg)
    for i, (a, b) in enumerate(zip(gg, tg)):
        assert (a is None) == (b is None), i
        if b is not None:
            np.testing.assert_allclose(A(a), A(b), err_msg=f"grad {i}", **TOL)


def test_dropout_between_layers_is_rng_exact():
    """dropout=0.5 in train mode zeroes the same elements as torch (its draws come from the shared RNG)."""
    kw = dict(input_size=3, hidden_size=4, num_layers=3, dropout=0.5)
    x = np.random.default_rng(0).standard_normal((6, 2, 3)).astype(np.float32)
    outs = []
    for T in LIBS:
        m = _build(T, "LSTM", kw)
        T.manual_seed(5)
        o, _ = m(T.from_numpy(x.copy()))
        o2, _ = m(T.from_numpy(x.copy()))
        m.eval()
        o3, _ = m(T.from_numpy(x.copy()))
        outs.append((A(o), A(o2), A(o3)))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, **TOL)
    assert not np.allclose(outs[0][0], outs[0][1])       # two train passes differ
    assert not np.allclose(outs[0][0], outs[0][2])       # eval differs from train


@pytest.mark.parametrize("cls,args,kw,rep", [
    ("RNNCell", (4, 5), {}, "RNNCell(4, 5)"),
    ("RNNCell", (4, 5), dict(bias=False, nonlinearity="relu"), "RNNCell(4, 5, bias=False, nonlinearity=relu)"),
    ("LSTMCell", (4, 5), {}, "LSTMCell(4, 5)"),
    ("GRUCell", (4, 5), dict(bias=False), "GRUCell(4, 5, bias=False)"),
])
@pytest.mark.parametrize("batched,with_h", [(True, True), (True, False), (False, True)])
def test_cells_match_torch(cls, args, kw, rep, batched, with_h):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4) if batched else (4,)).astype(np.float32)
    hs = [rng.standard_normal((3, 5) if batched else (5,)).astype(np.float32) for _ in range(2)]
    res = []
    for T in LIBS:
        T.manual_seed(1)
        m = getattr(T.nn, cls)(*args, **kw)
        xt = T.from_numpy(x.copy()).requires_grad_()
        st = [T.from_numpy(h.copy()).requires_grad_() for h in hs]
        hx = (tuple(st) if cls == "LSTMCell" else st[0]) if with_h else None
        out = m(xt, hx)
        outs = list(out) if isinstance(out, tuple) else [out]
        sum(((o * (i + 1.5)) ** 2).sum() for i, o in enumerate(outs)).backward()
        grads = [xt.grad] + ([s.grad for s in st] if with_h else []) + [p.grad for p in m.parameters()]
        res.append((repr(m), list(m.state_dict()), [A(p) for p in m.parameters()], outs, grads))
    (tr, tk, tp, to, tg), (gr, gk, gp, go, gg) = res
    assert tr == gr == rep and tk == gk
    assert all(np.array_equal(a, b) for a, b in zip(tp, gp))
    for a, b in zip(go + gg, to + tg):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(A(a), A(b), **TOL)


# -- errors -----------------------------------------------------------------------------------------
ERRORS = [
    ("LSTM", dict(input_size=10, hidden_size=20), lambda T: (T.zeros(3, 2, 5),), RuntimeError,
     "input.size(-1) must be equal to input_size. Expected 10, got 5"),
    ("GRU", dict(input_size=4, hidden_size=5), lambda T: (T.zeros(3, 2, 4), T.zeros(1, 3, 5)), RuntimeError,
     "Expected hidden size (1, 2, 5), got [1, 3, 5]"),
    ("LSTM", dict(input_size=4, hidden_size=5), lambda T: (T.zeros(3, 2, 4), (T.zeros(1, 2, 5), T.zeros(1, 2, 4))),
     RuntimeError, "Expected hidden[1] size (1, 2, 5), got [1, 2, 4]"),
    ("RNN", dict(input_size=4, hidden_size=5), lambda T: (T.zeros(2, 3, 2, 4),), ValueError,
     "RNN: Expected input to be 2D or 3D, got 4D tensor instead"),
    ("RNN", dict(input_size=4, hidden_size=5), lambda T: (T.zeros(3, 4), T.zeros(1, 2, 5)), RuntimeError,
     "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"),
    ("LSTM", dict(input_size=4, hidden_size=5), lambda T: (T.zeros(3, 4, dtype=T.float64),), ValueError,
     "RNN input dtype (torch.float64) does not match weight dtype (torch.float32)"),
]


@pytest.mark.parametrize("cls,kw,inputs,exc,msg", ERRORS, ids=[e[4][:40] for e in ERRORS])
def test_forward_errors_match_torch(cls, kw, inputs, exc, msg):
    for T in LIBS:
        m = _build(T, cls, kw)
        with pytest.raises(exc) as ei:
            m(*inputs(T))
        assert msg in str(ei.value), (T.__name__, str(ei.value))


@pytest.mark.parametrize("cls,kw,exc", [
    ("RNN", dict(input_size=4, hidden_size=5, nonlinearity="sigmoid"), ValueError),
    ("GRU", dict(input_size=4, hidden_size=5, proj_size=2), ValueError),
    ("LSTM", dict(input_size=4, hidden_size=5, proj_size=5), ValueError),
    ("LSTM", dict(input_size=4, hidden_size=5, dropout=1.5), ValueError),
    ("LSTM", dict(input_size=4, hidden_size=0), ValueError),
    ("LSTM", dict(input_size=4, hidden_size=5, bias=1), TypeError),
])
def test_constructor_errors_match_torch(cls, kw, exc):
    msgs = []
    for T in LIBS:
        with pytest.raises(exc) as ei:
            getattr(T.nn, cls)(**kw)
        msgs.append(str(ei.value))
    assert msgs[0] == msgs[1]


def test_dropout_with_one_layer_warns_like_torch():
    for T in LIBS:
        with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
            T.nn.GRU(3, 4, dropout=0.2)


# -- nn.utils.rnn -------------------------------------------------------------------------------------
def test_pack_pad_round_trip_and_gradients():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3, 2)).astype(np.float32)
    res = []
    for T in LIBS:
        R = T.nn.utils.rnn
        xt = T.from_numpy(x.copy()).requires_grad_()
        p = R.pack_padded_sequence(xt, T.tensor([3, 5, 2]), enforce_sorted=False)
        padded, lens = R.pad_packed_sequence(p, batch_first=True, padding_value=-1.0, total_length=6)
        (padded * T.arange(36.0).reshape(3, 6, 2)).sum().backward()
        res.append([p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices, padded, lens, xt.grad])
    for a, b in zip(*res):
        assert a.dtype.__repr__() == b.dtype.__repr__()
        np.testing.assert_array_equal(A(a), A(b))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_and_unpad(batch_first, side):
    rng = np.random.default_rng(1)
    seqs = [rng.standard_normal((n, 3)).astype(np.float32) for n in (2, 4, 1)]
    res = []
    for T in LIBS:
        R = T.nn.utils.rnn
        ts = [T.from_numpy(s.copy()).requires_grad_() for s in seqs]
        padded = R.pad_sequence(ts, batch_first=batch_first, padding_value=0.5, padding_side=side)
        (padded ** 2).sum().backward()
        out = [padded] + [t.grad for t in ts]
        if side == "right":
            out += R.unpad_sequence(padded.detach(), T.tensor([2, 4, 1]), batch_first=batch_first)
            out += R.unpack_sequence(R.pack_sequence([t.detach() for t in ts], enforce_sorted=False))
        res.append(out)
    assert len(res[0]) == len(res[1])
    for a, b in zip(*res):
        np.testing.assert_array_equal(A(a), A(b))


def test_packing_errors_match_torch():
    for T in LIBS:
        R = T.nn.utils.rnn
        with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
            R.pack_padded_sequence(T.zeros(5, 3, 2), [2, 5, 3])
        with pytest.raises(ValueError, match="Expected total_length to be at least"):
            R.pad_packed_sequence(R.pack_sequence([T.zeros(3, 1)]), total_length=2)
        with pytest.raises(RuntimeError, match="Expected padding_side to be one of left or right"):
            R.pad_sequence([T.zeros(2)], padding_side="middle")


def test_packed_input_to_lstm_keeps_order_of_unsorted_batch():
    """enforce_sorted=False: h_n comes back in the caller's batch order."""
    rng = np.random.default_rng(2)
    seqs = [rng.standard_normal((n, 3)).astype(np.float32) for n in (2, 4, 3)]
    res = []
    for T in LIBS:
        m = _build(T, "LSTM", dict(input_size=3, hidden_size=4, bidirectional=True))
        packed = T.nn.utils.rnn.pack_sequence([T.from_numpy(s.copy()) for s in seqs], enforce_sorted=False)
        out, (h, c) = m(packed)
        res.append([out.data, out.batch_sizes, h, c] + T.nn.utils.rnn.unpack_sequence(out))
    for a, b in zip(*res):
        np.testing.assert_allclose(A(a), A(b), **TOL)


@pytest.mark.parametrize("cls,kw", [
    ("RNN", dict(bidirectional=True)), ("GRU", dict(num_layers=2)), ("RNN", dict(nonlinearity="relu")),
    ("LSTM", dict(bidirectional=True)), ("LSTM", dict(proj_size=2)), ("LSTM", dict()),
    ("LSTM", dict(num_layers=2, batch_first=True)),
])
def test_grad_fn_names_match_torch(cls, kw):
    """Outputs, final states, unbatched outputs and packed data carry torch's grad_fn names (a float32
    LSTM without projection: the fused oneDNN-like layer node MkldnnRnnLayerBackward0; tests/nn/
    test_rnn_fused.py checks the whole structure).  (torch's batch_first RNN/GRU output an in-place
    transpose_; that is not reproduced.)"""
    names = []
    for T in LIBS:
        m = _build(T, cls, dict(input_size=3, hidden_size=4, **kw))
        out, h = m(T.ones(5, 2, 3, requires_grad=True))
        out_u, h_u = m(T.ones(5, 3, requires_grad=True))
        packed = T.nn.utils.rnn.pack_sequence([T.ones(3, 3, requires_grad=True), T.ones(2, 3)])
        out_p, h_p = m(packed)
        hs = [x for hh in (h, h_u, h_p) for x in (hh if isinstance(hh, tuple) else (hh,))]
        names.append([o.grad_fn.name() for o in [out, out_u, out_p.data, packed.data] + hs])
    assert names[0] == names[1]


def test_unpad_sequence_transposes_its_time_major_input_in_place_like_torch():
    res = []
    for T in LIBS:
        p = T.arange(24.0).reshape(4, 3, 2) * 1
        out = T.nn.utils.rnn.unpad_sequence(p, T.tensor([4, 2, 1]))
        res.append([tuple(p.shape)] + [A(o) for o in out])
    assert res[0][0] == res[1][0] == (3, 4, 2)
    for a, b in zip(res[0][1:], res[1][1:]):
        np.testing.assert_array_equal(a, b)
