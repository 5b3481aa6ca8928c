"""Differential tests (against torch, and against float64 math where torch is itself approximate) for the
fast paths of GELU (float32 kernel), the fused CPU attention, boolean-mask indexing and keyed sorting / topk,
each together with the general code it falls back to."""
import math

import numpy as np
import pytest
import torch

import glassgrad as G
from glassgrad.ops import gelu as _gelu_op
from glassgrad.ops import sorting as _sorting


def _erfc(z):
    return np.vectorize(math.erfc)(z)


# -- GELU ---------------------------------------------------------------------------------------------
def _gelu_ref(x):
    """gelu and its derivative in float64 (exact up to float64 rounding)."""
    h = x.astype(np.float64)
    phi = 0.5 * _erfc(-h / math.sqrt(2.0))
    return h * phi, phi + h * np.exp(-h * h / 2) / math.sqrt(2 * math.pi)


def _dense_grid():
    return np.concatenate([np.linspace(-20, 20, 200001), -np.logspace(-40, 1.5, 3000),
                           np.logspace(-40, 1.5, 3000)]).astype(np.float32)


def test_gelu_float32_kernel_accuracy_against_float64():
    x = _dense_grid()
    y, d = _gelu_op._gelu32(x, True)
    assert y.dtype == d.dtype == np.float32
    yr, dr = _gelu_ref(x)
    rel = np.abs(y - yr) / np.maximum(np.abs(yr), 1e-30)
    assert rel[np.abs(x) < 5].max() < 4e-6          # a few float32 ulp
    assert rel[np.abs(yr) > 1e-36].max() < 2e-5     # the negative tail keeps its relative accuracy
    assert np.abs(d - dr).max() < 5e-7
    assert np.array_equal(np.signbit(y), np.signbit(yr.astype(np.float32)))   # -0.0 where x q underflows
    y2, none = _gelu_op._gelu32(x, False)
    assert none is None and np.array_equal(y, y2)


def _gelu_both(T, x, approximate, dtype=None):
    t = T.tensor(x, requires_grad=True, dtype=dtype)
    y = T.nn.functional.gelu(t, approximate=approximate)
    y.backward(T.ones_like(y))
    return y.detach().numpy(), t.grad.numpy(), type(y.grad_fn).__name__


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_float32_matches_torch(approximate):
    x = _dense_grid()[::7]
    (ty, tg, tn), (gy, gg, gn) = _gelu_both(torch, x, approximate), _gelu_both(G, x, approximate)
    assert gn == tn == "GeluBackward0"
    np.testing.assert_allclose(gy, ty, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(gg, tg, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_float32_special_values_are_float64s(approximate):
    """torch's float32 GELU at the specials depends on the CPU (gelu(inf) is nan with its AVX-512 kernels, inf
    on an AMD AVX2 machine): glassgrad gives what float64 gives, torch's float64 result rounded."""
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30, -1e-30, -30.0, 30.0, 1e30, -1e30], np.float32)
    if approximate == "tanh":       # its derivative overflows x**3 in float32 at 1e30, in both libraries
        x = x[:-2]
    ry, rg, _ = _gelu_both(torch, x.astype(np.float64), approximate)
    gy, gg, _ = _gelu_both(G, x, approximate)
    np.testing.assert_array_equal(gy, ry.astype(np.float32))
    np.testing.assert_array_equal(np.signbit(gy), np.signbit(ry.astype(np.float32)))
    np.testing.assert_allclose(gg, rg.astype(np.float32), rtol=1e-6, atol=1e-30, equal_nan=True)


@pytest.mark.parametrize("n", [1, 32768, 32768 * 2 + 5])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "0d"])
def test_gelu_blocks_and_layouts(n, layout):
    rng = np.random.default_rng(n)
    a = (rng.standard_normal(n) * 3).astype(np.float32)
    if layout == "transposed":
        a = np.ascontiguousarray(np.tile(a, (3, 1)).T).T            # (3, n), non-contiguous
    elif layout == "0d":
        a = a[0].reshape(())
    res = []
    for T in (torch, G):
        t = T.tensor(a, requires_grad=True)
        y = T.nn.functional.gelu(t)
        (gx,) = T.autograd.grad(y, t, T.full(tuple(y.shape), 0.5), create_graph=False)
        res.append((y.detach().numpy(), gx.numpy()))
    for g, t in zip(res[1], res[0]):
        assert g.shape == t.shape
        np.testing.assert_allclose(g, t, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_float32_keeps_the_input_layout(approximate):
    a = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)
    views = [lambda t: t, lambda t: t.permute(2, 0, 1), lambda t: t.transpose(0, 2), lambda t: t[:, ::2],
             lambda t: t[0].t(), lambda t: t[0, 0, 0]]
    for mk in views:
        ys = [T.nn.functional.gelu(mk(T.tensor(a)), approximate=approximate) for T in (torch, G)]
        assert tuple(ys[1].stride()) == tuple(ys[0].stride())
        np.testing.assert_allclose(ys[1].numpy(), ys[0].numpy(), rtol=1e-5, atol=2e-6)


def test_gelu_float32_double_backward_retain_and_inplace():
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((4, 5)) * 2).astype(np.float32)
    res = []
    for T in (torch, G):
        x = T.tensor(a, requires_grad=True)
        y = T.nn.functional.gelu(x)
        g1, = T.autograd.grad(y.sum(), x, create_graph=True)
        g2, = T.autograd.grad(g1.sum(), x)
        y2 = T.nn.functional.gelu(x)
        y2.sum().backward(retain_graph=True)
        y2.sum().backward()                      # twice: the saved derivative is reused
        res.append((g1.detach().numpy(), g2.numpy(), x.grad.numpy()))
    for g, t in zip(res[1], res[0]):
        np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)
    for T in (torch, G):                          # the input modified in place: backward still refuses
        x = T.tensor(a, requires_grad=True)
        z = x * 1
        y = T.nn.functional.gelu(z)
        z.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_gelu_float64_and_float16_keep_the_general_path():
    a = np.linspace(-6, 6, 101)
    for dt, tol in ((np.float64, 1e-12), (np.float16, 2e-3)):
        ys = [T.nn.functional.gelu(T.tensor(a.astype(dt))).numpy().astype(np.float64) for T in (torch, G)]
        np.testing.assert_allclose(ys[1], ys[0], rtol=tol, atol=tol)


# -- scaled_dot_product_attention (fused path) -----------------------------------------------------------
def _sdpa_case(mask_kind, is_causal):
    rng = np.random.default_rng(11)
    q, k, v = (rng.standard_normal((2, 3, 6, 4)).astype(np.float32) for _ in range(3))
    mask = None
    if mask_kind == "bool_dead_row":
        mask = rng.random((6, 6)) > 0.4
        mask[2] = False                             # a row that attends to nothing: zeros, not NaN
    elif mask_kind == "float":
        mask = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    elif mask_kind == "float64":
        mask = rng.standard_normal((6, 6))
    return q, k, v, mask, is_causal


@pytest.mark.parametrize("mask_kind,is_causal", [(None, True), (None, False), ("bool_dead_row", False),
                                                  ("float", False), ("bool_dead_row", True)])
def test_sdpa_fused_path_matches_torch(mask_kind, is_causal):
    q, k, v, mask, causal = _sdpa_case(mask_kind, is_causal)
    res = []
    for T in (torch, G):
        ts = [T.tensor(a, requires_grad=True) for a in (q, k, v)]
        m = None if mask is None else T.tensor(mask)
        y = T.nn.functional.scaled_dot_product_attention(*ts, attn_mask=m, is_causal=causal)
        y.backward(T.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)).astype(np.float32)))
        res.append((type(y.grad_fn).__name__, y.detach().numpy(), [t.grad.numpy() for t in ts]))
    assert res[0][0] == res[1][0]
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5, atol=1e-6)
    assert not np.isnan(res[1][1]).any()
    for g, t in zip(res[1][2], res[0][2]):
        np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)


def test_sdpa_float64_mask_on_float32_is_refused_like_torch():
    q, k, v, mask, _ = _sdpa_case("float64", False)
    for T in (torch, G):
        with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float or to match query"):
            T.nn.functional.scaled_dot_product_attention(T.tensor(q), T.tensor(k), T.tensor(v), attn_mask=T.tensor(mask))


def _torch_math_sdpa(q, k, v, is_causal):
    att = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    L = q.shape[-2]
    att = att.masked_fill(~torch.ones(L, L, dtype=torch.bool).tril(), float("-inf"))
    return torch.softmax(att, -1) @ v


def test_sdpa_fused_double_backward():
    """torch's fused CPU kernel has no double backward; glassgrad's gives the math path's."""
    q, k, v, _, _ = _sdpa_case(None, True)
    res = []
    for T in (torch, G):
        ts = [T.tensor(a, requires_grad=True) for a in (q, k, v)]
        if T is torch:
            y = _torch_math_sdpa(*ts, True)
        else:
            y = T.nn.functional.scaled_dot_product_attention(*ts, is_causal=True)
            assert type(y.grad_fn).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0"
        gq, = T.autograd.grad((y * y).sum(), ts[0], create_graph=True)
        gk, = T.autograd.grad(gq.sum(), ts[1])
        res.append((gq.detach().numpy(), gk.numpy()))
    for g, t in zip(res[1], res[0]):
        np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)


# -- boolean-mask indexing ----------------------------------------------------------------------------------
_MASK_CASES = [
    ((50, 2), (50,), "bool"),            # rows of two: the fast path's record assignment
    ((50,), (50,), "uint8"),             # 1-d
    ((4, 5, 3), (4, 5), "bool"),         # a 2-d mask over the leading dims
    ((6, 0), (6,), "bool"),              # empty rows
    ((6, 3), (6,), "none_true"),         # nothing selected
    ((3, 4), (3, 4), "noncontig"),       # a non-contiguous input
]


@pytest.mark.parametrize("shape,mshape,kind", _MASK_CASES)
def test_bool_mask_getitem_matches_torch(shape, mshape, kind):
    rng = np.random.default_rng(5)
    a = rng.standard_normal(shape).astype(np.float32)
    if kind == "noncontig":
        a = np.ascontiguousarray(a.T).T
    m = rng.random(mshape) > 0.5
    if kind == "none_true":
        m[:] = False
    m = m.astype(np.uint8) if kind == "uint8" else m
    res = []
    for T in (torch, G):
        x = T.tensor(a, requires_grad=True)
        with pytest.warns(UserWarning) if kind == "uint8" else _nullcontext():
            y = x[T.tensor(m)]
        gy = np.arange(y.numel(), dtype=np.float32).reshape(tuple(y.shape)) + 1
        y.backward(T.tensor(gy))
        gg, = T.autograd.grad((x[T.tensor(m).bool()] ** 2).sum(), x, create_graph=True)
        gg2, = T.autograd.grad(gg.sum(), x) if y.numel() else (None,)
        res.append((type(y.grad_fn).__name__, y.detach().numpy(), x.grad.numpy(), gg.detach().numpy(),
                    None if gg2 is None else gg2.numpy()))
    assert res[0][0] == res[1][0] == "IndexBackward0"
    for g, t in zip(res[1][1:], res[0][1:]):
        if t is None:
            continue
        assert g.shape == t.shape
        np.testing.assert_array_equal(g, t)


def test_bool_mask_getitem_broadcast_gradient():
    """The gradient that reaches the fast path may be a broadcast (non-contiguous) array."""
    a = np.arange(12, dtype=np.float32).reshape(6, 2)
    m = np.array([1, 0, 1, 1, 0, 1], bool)
    res = []
    for T in (torch, G):
        x = T.tensor(a, requires_grad=True)
        x[T.tensor(m)].sum().backward()
        res.append(x.grad.numpy())
    np.testing.assert_array_equal(res[1], res[0])


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# -- keyed sort / topk --------------------------------------------------------------------------------------
def _stable_argsort(a, axis, descending):
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    i = np.flip(np.argsort(np.flip(a, axis), axis=axis, kind="stable"), axis)
    return a.shape[axis] - 1 - i


def _tie_array(rng, dt, shape, variant):
    if dt == np.bool_:
        return rng.random(shape) > 0.5
    if np.dtype(dt).kind == "f":
        a = rng.integers(-3, 4, size=shape).astype(dt)
        if variant == 1:
            a[rng.random(shape) < 0.3] = -0.0
        elif variant == 2:
            a[rng.random(shape) < 0.3] = np.inf
            a[rng.random(shape) < 0.2] = -np.inf
        elif variant == 3:
            a[rng.random(shape) < 0.2] = np.nan            # the general (stable argsort) path
        return a
    info = np.iinfo(dt)
    if variant == 1:
        return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dt)
    return rng.integers(max(info.min, -2), 3, size=shape).astype(dt)


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.float64, np.int32, np.int16, np.int8, np.uint8,
                                np.int64, np.bool_])
def test_keyed_argsort_is_the_stable_sort(dt):
    rng = np.random.default_rng(2)
    for trial in range(40):
        shape = tuple(int(s) for s in rng.integers(1, 9, size=int(rng.integers(1, 4))))
        a = _tie_array(rng, dt, shape, trial % 4)
        axis, desc = int(rng.integers(0, a.ndim)), bool(trial % 2)
        np.testing.assert_array_equal(_sorting._argsort(a, axis, desc), _stable_argsort(a, axis, desc))
        if dt != np.bool_:
            k = int(rng.integers(0, a.shape[axis] + 1))
            r = G.topk(G.tensor(a), k, axis, largest=desc)
            want = np.take(_stable_argsort(a, axis, desc), np.arange(k), axis=axis)
            np.testing.assert_array_equal(r.indices.numpy(), want)
            np.testing.assert_array_equal(r.values.numpy(), np.take_along_axis(a, want, axis))


@pytest.mark.parametrize("k", [1, 7, 60, 249, 250, 600, 1000])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_partition_path_with_ties_matches_torch_values(k, largest):
    rng = np.random.default_rng(k)
    a = rng.integers(0, 40, size=(3, 1000)).astype(np.float32)
    res = []
    for T in (torch, G):
        x = T.tensor(a, requires_grad=True)
        r = T.topk(x, k, 1, largest=largest)
        r.values.sum().backward()
        res.append((r.values.detach().numpy(), r.indices.numpy(), x.grad.numpy(), type(r.values.grad_fn).__name__))
    (tv, ti, tg, tn), (gv, gi, gg, gn) = res
    assert gn == tn == "TopkBackward0"
    np.testing.assert_array_equal(gv, tv)                    # torch breaks ties its own way: compare values,
    np.testing.assert_array_equal(np.take_along_axis(a, gi, 1), gv)    # and that the indices point at them,
    np.testing.assert_array_equal(gi, _stable_argsort(a, 1, largest)[:, :k])   # first index first
    np.testing.assert_array_equal(gg.sum(1), tg.sum(1))
    x = np.arange(1000, dtype=np.float32)[None].repeat(2, 0)
    rng.shuffle(x[1])
    for T_res in (torch.topk(torch.tensor(x), k, 1, largest=largest), G.topk(G.tensor(x), k, 1, largest=largest)):
        res.append(T_res.indices.numpy())
    np.testing.assert_array_equal(res[-1], res[-2])          # distinct values: the same indices as torch


# -- index_add-style backward (embedding, index_select): one fancy add per occurrence rank -------------------
@pytest.mark.parametrize("V,N,D,dim", [(50, 600, 32, 0), (7, 40, 130, 0), (20, 300, 24, 1), (300, 300, 16, 0),
                                       (5, 400, 20, 0), (10, 100, 2, 0)])
def test_index_add_by_rank_is_add_at_bit_for_bit(V, N, D, dim):
    from glassgrad.ops import gather_scatter as M
    from glassgrad.ops.namespaces import ARR
    rng = np.random.default_rng(V + N)
    idx = np.arange(N) % V if V == N else rng.integers(0, V, N)
    shape = (V, D) if dim == 0 else (D, V)
    g = rng.standard_normal((N, D) if dim == 0 else (D, N)).astype(np.float32)
    want = np.zeros(shape, np.float32)
    np.add.at(want, (slice(None),) * dim + (idx,), g)
    got = M._index_add_zeros(ARR, shape, dim, idx, g)
    np.testing.assert_array_equal(got, want)


def test_embedding_and_index_select_grads_match_torch():
    rng = np.random.default_rng(4)
    w = rng.standard_normal((40, 24)).astype(np.float32)
    idx = rng.integers(0, 40, (16, 30))
    res = []
    for T in (torch, G):
        wt = T.tensor(w, requires_grad=True)
        y = T.nn.functional.embedding(T.tensor(idx), wt)
        z = T.index_select(wt, 0, T.tensor(idx[0]))
        ((y * y).sum() + (z * 3).sum()).backward()
        res.append(wt.grad.numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-5, atol=1e-5)
