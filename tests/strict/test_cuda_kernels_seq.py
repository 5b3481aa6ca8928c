"""The sequence models' fused CuPy kernels (_cuda_kernels/seq.py) against the array code they replace,
through the public ops on CUDA tensors: fused (GLASSGRAD_FUSED=1) vs array code (=0).  On a GPU through CuPy; on the
strict stand-in device through tests/strict/cuda_emu.py.

Where the arithmetic is exact IEEE operations in the array code's order (the embedding backward's sums, the LSTM
backward step) the results are asserted equal bit for bit.  Where a transcendental function enters (GELU's exp /
tanh / erf, the LSTM forward's tanh) the kernel calls CUDA's, as CuPy's ufuncs do on a GPU, but the emulation calls
the host C library's, which differs from NumPy's own float32 exp / tanh in the last bit: those tests allow a few
ulps of the terms involved.  Reductions (layer norm's backward) are in a tree order: a tolerance relative to the
result's scale."""
import numpy as np
import pytest

import glassgrad as gg
from glassgrad import backend
from glassgrad._cuda_kernels import seq
from glassgrad.ops import rnn

pytestmark = pytest.mark.usefixtures("fused_kernels")

DTYPES = [np.float32, np.float64]


def _both(monkeypatch, fn, used=()):
    """fn() with the array code, then with the fused kernels (those named in `used` must run)."""
    monkeypatch.setenv("GLASSGRAD_FUSED", "0")
    want = fn()
    monkeypatch.setenv("GLASSGRAD_FUSED", "1")
    names = _spy(monkeypatch)
    got = fn()
    for u in used:
        assert any(n.startswith(u) for n in names), (u, names)
    return got, want


def _spy(monkeypatch):
    """The list the names of the kernels the fused ops fetch (so, launch) will be appended to."""
    names = []
    real = seq._kernel

    def spy(name, build):
        names.append(name)
        return real(name, build)
    monkeypatch.setattr(seq, "_kernel", spy)
    return names


def _cuda(a, grad=False):
    t = gg.from_numpy(np.array(a)).cuda()
    return t.requires_grad_(True) if grad else t


def _within(got, want, bound):
    """Non-finite entries equal; finite ones within `bound` (elementwise)."""
    assert got.shape == want.shape and got.dtype == want.dtype
    fin = np.isfinite(want)
    np.testing.assert_array_equal(got[~fin], want[~fin])
    err = np.abs(got[fin].astype(np.float64) - want[fin])
    worst = np.argmax(err - bound[fin]) if err.size else 0
    assert (err <= bound[fin]).all(), (got[fin][worst], want[fin][worst])


def _scaled(got, want, rtol):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(float(np.abs(want).max(initial=0)), 1e-30))


# -- GELU ------------------------------------------------------------------------------------------------------
def _gelu_input(shape, dtype, layout):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 40.0, -40.0, 1e-30, -7.5, 3.2]
    flat = x.reshape(-1)
    flat[:min(len(special), flat.size)] = special[:flat.size]
    if layout == "transposed":
        x = np.ascontiguousarray(x.T).T
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("shape,layout", [((), "C"), ((1,), "C"), ((7,), "C"), ((3, 257), "C"), ((40, 33), "transposed"),
                                          ((6, 50), "sliced")])
def test_gelu_kernels_close_to_array_code(dtype, approximate, shape, layout, monkeypatch):
    x = _gelu_input(shape, dtype, layout)
    g = np.random.default_rng(4).standard_normal(x.shape).astype(dtype)

    def run():
        xs = _cuda(x, True)
        src = xs[:, ::2] if layout == "sliced" else xs
        y = gg.nn.functional.gelu(src, approximate=approximate)
        y.backward(_cuda(g[:, ::2] if layout == "sliced" else g))
        return y.detach().cpu().numpy(), xs.grad.cpu().numpy(), y.stride()

    used = ["gelu32" if (dtype, approximate) == (np.float32, "none") else "gelu_tanh32" if dtype == np.float32
            else "gelu64_" + approximate]
    if layout == "C" and (approximate == "tanh" or dtype == np.float64):
        used.append("gelu_bwd")
    (y, gx, stride), (y0, gx0, stride0) = _both(monkeypatch, run, used)
    assert stride == stride0
    eps = np.finfo(dtype).eps
    xs = np.abs(x[:, ::2] if layout == "sliced" else x).astype(np.float64)
    _within(y, y0, 4 * eps * (np.abs(y0) + xs))
    ax = np.abs(x).astype(np.float64)
    _within(gx, gx0, 8 * eps * np.abs(g) * (1 + ax) ** 2)


# -- layer norm backward ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("shape,k,w,b", [((4, 7), 1, True, True), ((3, 5, 300), 1, False, False),
                                         ((2, 6, 8, 64), 2, True, True), ((700, 40), 1, True, False),
                                         ((5, 1), 1, True, True), ((7,), 1, True, True), ((1, 1000), 1, False, True)])
@pytest.mark.parametrize("grad_layout", ["C", "transposed"])
def test_layer_norm_backward_close_to_array_code(dtype, rtol, shape, k, w, b, grad_layout, monkeypatch):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    weight = rng.standard_normal(shape[-k:]).astype(dtype) if w else None
    bias = rng.standard_normal(shape[-k:]).astype(dtype) if b else None
    g = rng.standard_normal(shape).astype(dtype)
    if grad_layout == "transposed":
        g = np.ascontiguousarray(g.T).T

    def run():
        xs = _cuda(x, True)
        ws = None if weight is None else _cuda(weight, True)
        bs = None if bias is None else _cuda(bias, True)
        y = gg.nn.functional.layer_norm(xs, shape[-k:], ws, bs, 1e-5)
        gt = gg.from_numpy(np.ascontiguousarray(g.T)).cuda().T if grad_layout == "transposed" else _cuda(g)
        y.backward(gt)
        return [y.detach().cpu().numpy(), xs.grad.cpu().numpy()] + [t.grad.cpu().numpy() for t in (ws, bs)
                                                                     if t is not None]

    got, want = _both(monkeypatch, run, ["glassgrad_ln_dx"] + (["glassgrad_ln_dwb"] if w or b else []))
    assert len(got) == len(want)
    for a, e in zip(got, want):
        _scaled(a, e, rtol)


def test_layer_norm_backward_input_only(monkeypatch):
    """Weight and bias that want no gradient: only the input's."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((9, 33)).astype(np.float32)
    w = rng.standard_normal(33).astype(np.float32)

    def run():
        xs = _cuda(x, True)
        y = gg.nn.functional.layer_norm(xs, (33,), _cuda(w), _cuda(w), 1e-5)
        (y * y).sum().backward()
        return xs.grad.cpu().numpy()

    got, want = _both(monkeypatch, run, ["glassgrad_ln_dx"])
    _scaled(got, want, 2e-5)


# -- embedding backward ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("padding_idx,scale", [(None, False), (3, False), (-1, False), (None, True), (5, True)])
@pytest.mark.parametrize("nw,d,idx_shape,high", [(50, 300, (7, 30), 20), (10, 3, (4, 5), 4), (1000, 16, (35, 20), 1000),
                                                 (6, 64, (200,), 2), (40, 20, (1,), 40)])
def test_embedding_backward_equals_array_code(dtype, padding_idx, scale, nw, d, idx_shape, high, monkeypatch):
    """Repeated indices (up to 100 repeats: the array code's np.add.at path too), padding rows, rows never used,
    scale_grad_by_freq: the same sums in the same order, bit for bit."""
    rng = np.random.default_rng(7)
    idx = rng.integers(0, high, idx_shape)
    g = rng.standard_normal(idx_shape + (d,)).astype(dtype)
    w = rng.standard_normal((nw, d)).astype(dtype)

    def run():
        ws = _cuda(w, True)
        y = gg.nn.functional.embedding(_cuda(idx), ws, padding_idx=padding_idx, scale_grad_by_freq=scale)
        y.backward(_cuda(g))
        return ws.grad.cpu().numpy()

    got, want = _both(monkeypatch, run, ["embedding_backward"])
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def test_embedding_backward_noncontiguous_grad(monkeypatch):
    rng = np.random.default_rng(8)
    idx = rng.integers(0, 9, (6, 11))
    g = rng.standard_normal((11, 6, 5)).astype(np.float32)
    w = rng.standard_normal((9, 5)).astype(np.float32)

    def run():
        ws = _cuda(w, True)
        y = gg.nn.functional.embedding(_cuda(idx), ws)
        y.backward(_cuda(g).transpose(0, 1))
        return ws.grad.cpu().numpy()

    got, want = _both(monkeypatch, run, ["embedding_backward"])
    np.testing.assert_array_equal(got, want)


# -- embedding forward -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("idx_dtype", [np.int64, np.int32])
@pytest.mark.parametrize("nw,d,idx_shape", [(50, 300, (7, 30)), (10, 3, (4, 5)), (6, 1, (200,)), (40, 20, ())])
def test_embedding_forward_equals_array_code(dtype, idx_dtype, nw, d, idx_shape, monkeypatch):
    rng = np.random.default_rng(9)
    idx = rng.integers(0, nw, idx_shape).astype(idx_dtype)
    w = rng.standard_normal((nw, d)).astype(dtype)

    def run():
        y = gg.nn.functional.embedding(_cuda(idx), _cuda(w))
        return y.cpu().numpy()

    got, want = _both(monkeypatch, run, ["embedding_forward"])
    np.testing.assert_array_equal(got, want)
    assert got.shape == idx.shape + (d,)


@pytest.mark.parametrize("bad", [-1, 10, 2 ** 40])
def test_embedding_forward_out_of_range_raises(bad, monkeypatch):
    idx = np.array([[0, 3], [bad, 9]])
    w = np.ones((10, 4), np.float32)
    for fused in ("0", "1"):
        monkeypatch.setenv("GLASSGRAD_FUSED", fused)
        names = _spy(monkeypatch)
        with pytest.raises(IndexError, match="index out of range in self"):
            gg.nn.functional.embedding(_cuda(idx), _cuda(w))
        assert any(n.startswith("embedding_forward") for n in names) == (fused == "1")


def test_embedding_forward_one_sync(monkeypatch):
    """The bounds check reads one flag back (the array code: a min and a max, two)."""
    if not backend.STRICT:
        pytest.skip("counts syncs on the strict device")
    from glassgrad import _strict
    idx, w = _cuda(np.arange(6).reshape(2, 3)), _cuda(np.ones((6, 5), np.float32))
    with _strict.counting() as c:
        gg.nn.functional.embedding(idx, w)
    assert sum(n for (name, _), n in c.items() if name.startswith("sync")) == 1, c


# -- LSTM ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("layers,bidirectional,bias,state", [(1, False, True, False), (2, False, True, True),
                                                             (2, True, False, True), (1, True, True, False)])
@pytest.mark.parametrize("T,B,I,H", [(9, 3, 5, 16), (1, 1, 2, 3), (4, 2, 7, 300)])
def test_lstm_close_to_array_code(dtype, rtol, layers, bidirectional, bias, state, T, B, I, H, monkeypatch):
    rng = np.random.default_rng(10)
    gg.manual_seed(0)
    m = gg.nn.LSTM(I, H, layers, bias=bias, bidirectional=bidirectional)
    m = (m.double() if dtype == np.float64 else m).cuda()
    dirs = 2 if bidirectional else 1
    x = rng.standard_normal((T, B, I)).astype(dtype)
    h0 = rng.standard_normal((layers * dirs, B, H)).astype(dtype)
    c0 = rng.standard_normal((layers * dirs, B, H)).astype(dtype)
    go = rng.standard_normal((T, B, dirs * H)).astype(dtype)

    def run():
        m.zero_grad()
        xs = _cuda(x, True)
        hx = (_cuda(h0, True), _cuda(c0, True)) if state else None
        out, (h, c) = m(xs, hx)
        ((out * _cuda(go)).sum() + h.sum() + (c * c).sum()).backward()
        res = [out.detach().cpu().numpy(), h.detach().cpu().numpy(), c.detach().cpu().numpy(), xs.grad.cpu().numpy()]
        res += [p.grad.cpu().numpy() for p in m.parameters()]
        return res + ([t.grad.cpu().numpy() for t in hx] if state else [])

    # nn.LSTM runs float32 through the fused layer op (torch's oneDNN path), float64 through per-step ops
    used = ["glassgrad_lstm_fwd", "glassgrad_lstm_bwd"] if dtype == np.float32 else []
    got, want = _both(monkeypatch, run, used)
    for a, e in zip(got, want):
        _scaled(a, e, rtol)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("biases", [(True, True), (True, False), (False, False)])
@pytest.mark.parametrize("T,B,I,H", [(7, 2, 3, 5), (1, 1, 1, 1), (3, 4, 6, 260)])
def test_lstm_layer_op_close_to_array_code(dtype, rtol, reverse, biases, T, B, I, H, monkeypatch):
    """The layer op itself (nn.LSTM's float32 path), float32 and float64: values and the gradients of all seven
    inputs."""
    rng = np.random.default_rng(13)

    def arr(*shape):
        return (rng.standard_normal(shape) * 0.7).astype(dtype)

    ins = [arr(T, B, I), arr(B, H), arr(B, H), arr(4 * H, I), arr(4 * H, H), arr(4 * H) if biases[0] else None,
           arr(4 * H) if biases[1] else None]
    gs = [arr(T, B, H), arr(B, H), arr(B, H)]

    def run():
        ts = [None if a is None else _cuda(a, True) for a in ins]
        x, h0, c0, w_ih, w_hh, b_ih, b_hh = ts
        outs = rnn.lstm_layer(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)
        sum((o * _cuda(g)).sum() for o, g in zip(outs, gs)).backward()
        return [o.detach().cpu().numpy() for o in outs] + [t.grad.cpu().numpy() for t in ts if t is not None]

    got, want = _both(monkeypatch, run, ["glassgrad_lstm_fwd", "glassgrad_lstm_bwd"])
    for a, e in zip(got, want):
        _scaled(a, e, rtol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("grads", ["all", "out_only", "states_only", "out_transposed"])
def test_lstm_backward_step_kernel_equals_array_code(dtype, reverse, grads, monkeypatch):
    """From one forward workspace, the backward's gate gradients through the step kernel and through the array
    code: exact arithmetic in the same steps, so equal bit for bit (the GEMMs are the same calls)."""
    rng = np.random.default_rng(11)
    T, B, I, H = 6, 3, 4, 5

    def dev(*shape):
        return gg.from_numpy(rng.standard_normal(shape).astype(dtype)).cuda()._data

    x, h0, c0, w_ih, w_hh, bias = dev(T, B, I), dev(B, H), dev(B, H), dev(4 * H, I), dev(4 * H, H), dev(4 * H)
    gout, ghn, gcn = dev(T, B, H), dev(B, H), dev(B, H)
    if grads == "out_transposed":
        gout = gg.from_numpy(rng.standard_normal((B, T, H)).astype(dtype)).cuda()._data.transpose(1, 0, 2)
    if grads in ("out_only", "out_transposed"):
        ghn = gcn = None
    if grads == "states_only":
        gout = None
    monkeypatch.setenv("GLASSGRAD_FUSED", "0")
    _, ws = rnn._forward(x, h0, c0, w_ih, w_hh, bias, reverse)
    need = [True] * 7
    want = rnn._backward(gout, ghn, gcn, x, w_ih, w_hh, ws, reverse, need)
    monkeypatch.setenv("GLASSGRAD_FUSED", "1")
    names = _spy(monkeypatch)
    got = rnn._backward(gout, ghn, gcn, x, w_ih, w_hh, ws, reverse, need)
    assert names.count("glassgrad_lstm_bwd_" + ("float" if dtype == np.float32 else "double")) == T
    for a, e in zip(got, want):
        np.testing.assert_array_equal(backend.to_host(a), backend.to_host(e))


def test_scaled_transpose_device_equals_cpu():
    rng = np.random.default_rng(12)
    w = rng.standard_normal((300, 70)).astype(np.float32)
    scale = np.repeat(np.array(rnn._GATE_SCALE, np.float32), 75)
    want = rnn._scaled_transpose(w, scale)
    got = rnn._scaled_transpose(_cuda(w)._data, _cuda(scale)._data)
    assert got.flags.c_contiguous
    np.testing.assert_array_equal(backend.to_host(got), want)
