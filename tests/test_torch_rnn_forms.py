"""torch.lstm / gru / rnn_tanh / rnn_relu (the ATen entry points nn.LSTM & co. call, over a flat parameter list),
padded and packed, against torch: outputs, final states, grad_fn names and gradients."""
import numpy as np
import pytest
import torch

import glassgrad as gg

CASES = [  # (fn, mode, layers, bidirectional, batch_first, bias, proj, dtype)
    ("lstm", "LSTM", 2, True, True, True, 0, "float32"),
    ("lstm", "LSTM", 1, False, False, False, 0, "float64"),
    ("lstm", "LSTM", 2, False, False, True, 2, "float64"),
    ("gru", "GRU", 2, True, False, True, 0, "float64"),
    ("rnn_tanh", "RNN_TANH", 1, False, True, True, 0, "float32"),
    ("rnn_relu", "RNN_RELU", 2, True, False, False, 0, "float64"),
]


def _module(mode, L, bi, bf, bias, proj, dt):
    torch.manual_seed(0)
    kw = dict(num_layers=L, bidirectional=bi, batch_first=bf, bias=bias, dtype=getattr(torch, dt))
    if mode == "LSTM":
        return torch.nn.LSTM(3, 4, proj_size=proj, **kw)
    if mode == "GRU":
        return torch.nn.GRU(3, 4, **kw)
    return torch.nn.RNN(3, 4, nonlinearity="tanh" if mode == "RNN_TANH" else "relu", **kw)


def _run(T, fn, m, x, h, packed):
    params = [T.from_numpy(p.detach().numpy().copy()).requires_grad_() for p in m._flat_weights]
    X = T.from_numpy(x.copy()).requires_grad_()
    H = tuple(T.from_numpy(a.copy()) for a in h)
    hx = H if fn == "lstm" else H[0]
    args = (m.bias, m.num_layers, 0.0, False, m.bidirectional)
    if packed:
        bs = T.tensor([3, 2, 2, 1])
        out = getattr(T, fn)(X, bs, hx, params, *args)
    else:
        out = getattr(T, fn)(X, hx, params, *args, m.batch_first)
    cot = [np.random.default_rng(i).standard_normal(tuple(o.shape)).astype(x.dtype) for i, o in enumerate(out)]
    grads = T.autograd.grad(out, [X, params[0]], [T.from_numpy(c) for c in cot])
    return [o.detach().numpy() for o in out] + [g.numpy() for g in grads], [type(o.grad_fn).__name__ for o in out]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
@pytest.mark.parametrize("packed", [False, True])
def test_rnn_stack_functions_match_torch(case, packed):
    fn, mode, L, bi, bf, bias, proj, dt = case
    m = _module(mode, L, bi, bf, bias, proj, dt)
    rng = np.random.default_rng(1)
    D = 2 if bi else 1
    if packed:
        x = rng.standard_normal((8, 3)).astype(dt)           # lengths 4, 3, 1 -> batch sizes 3, 2, 2, 1
        B = 3
    else:
        x = rng.standard_normal((2, 5, 3) if bf else (5, 2, 3)).astype(dt)
        B = 2
    h = [rng.standard_normal((L * D, B, proj or 4)).astype(dt)]
    if fn == "lstm":
        h.append(rng.standard_normal((L * D, B, 4)).astype(dt))
    t_vals, t_names = _run(torch, fn, m, x, h, packed)
    g_vals, g_names = _run(gg, fn, m, x, h, packed)
    assert g_names == t_names
    tol = 1e-5 if dt == "float32" else 1e-10
    for a, b in zip(g_vals, t_vals):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
