"""The fused attention softmax (_cuda_kernels/attention.py) against the array code of _sdpa_flash, through
nn.functional.scaled_dot_product_attention on CUDA tensors: values, gradients, and the double backward (whose
mask the fused forward never built).  exp is CUDA's (or, emulated, the host libm's) in the kernel and the array
module's in the array code, so float32 agrees to a few ulps, not bit for bit."""
import numpy as np
import pytest

import glassgrad as gg
import glassgrad.nn.functional as F

pytestmark = pytest.mark.usefixtures("fused_kernels")

TOL = {np.float32: (2e-6, 2e-6), np.float64: (1e-13, 1e-13)}


def _mask(kind, B, H, L, S, dtype, rng):
    if kind is None:
        return None
    if kind == "bool2":
        m = rng.random((L, S)) > 0.3
        m[L // 2] = False                               # a query that sees no key: a row of zeros
        return m
    if kind == "bool4":
        return rng.random((1, H, 1, S)) > 0.2
    if kind == "float":
        m = rng.standard_normal((B, 1, L, S)).astype(dtype)
        m[0, 0, L // 2, :] = -np.inf
        return m
    if kind == "float32":
        return rng.standard_normal((L, S)).astype(np.float32)   # torch's "float" mask on float64 scores


def _run(fused, monkeypatch, q, k, v, mask, causal, gqa, create_graph=False):
    monkeypatch.setenv("GLASSGRAD_FUSED", "1" if fused else "0")
    qs, ks, vs = (gg.from_numpy(a).cuda().requires_grad_(True) for a in (q, k, v))
    m = None if mask is None else gg.from_numpy(mask).cuda()
    out = F.scaled_dot_product_attention(qs, ks, vs, attn_mask=m, is_causal=causal, enable_gqa=gqa)
    assert type(out.grad_fn).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0"
    g = gg.from_numpy(np.random.default_rng(7).standard_normal(out.shape).astype(q.dtype)).cuda()
    grads = gg.autograd.grad(out, (qs, ks, vs), g, create_graph=create_graph)
    res = [out.detach().cpu().numpy()] + [t.detach().cpu().numpy() for t in grads]
    if create_graph:                                    # the double backward: through the tensor-mode graph
        res += [t.cpu().numpy() for t in gg.autograd.grad(sum((t * t).sum() for t in grads), (qs, ks, vs))]
    return res


_MASKS = [(None, False), (None, True), ("bool2", False), ("bool4", True), ("float", False), ("float", True)]


@pytest.mark.parametrize("dtype,mask,causal", [(np.float32, *m) for m in _MASKS] + [(np.float64, *m) for m in _MASKS]
                         + [(np.float64, "float32", False)])     # (a float32 mask on float64 scores: torch's "float")
@pytest.mark.parametrize("B,H,Hk,L,S,E", [(2, 3, 3, 5, 7, 4), (1, 4, 2, 9, 9, 8), (1, 1, 1, 1, 300, 3)])
def test_fused_attention_close_to_array_code(dtype, mask, causal, B, H, Hk, L, S, E, monkeypatch):
    rng = np.random.default_rng(B * 100 + L * 10 + S)
    q = rng.standard_normal((B, H, L, E)).astype(dtype)
    k = rng.standard_normal((B, Hk, S, E)).astype(dtype)
    v = rng.standard_normal((B, Hk, S, E)).astype(dtype)
    m = _mask(mask, B, H, L, S, dtype, rng)
    want = _run(False, monkeypatch, q, k, v, m, causal, Hk != H)
    got = _run(True, monkeypatch, q, k, v, m, causal, Hk != H)
    rtol, atol = TOL[dtype]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=rtol * 10, atol=atol * 10)


@pytest.mark.parametrize("mask,causal", [(None, True), ("bool2", False)])
def test_fused_attention_double_backward(mask, causal, monkeypatch):
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 2, 6, 4)) for _ in range(3))
    m = _mask(mask, 2, 2, 6, 6, np.float64, rng)
    want = _run(False, monkeypatch, q, k, v, m, causal, False, create_graph=True)
    got = _run(True, monkeypatch, q, k, v, m, causal, False, create_graph=True)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_fused_attention_fully_masked_rows_are_zero(monkeypatch):
    q = np.ones((1, 1, 3, 2), np.float32)
    m = np.zeros((3, 4), bool)
    m[0] = True
    out = _run(True, monkeypatch, q, q[:, :, :1].repeat(4, 2), q[:, :, :1].repeat(4, 2) * 3, m, False, False)[0]
    np.testing.assert_array_equal(out[0, 0, 1:], 0)
    np.testing.assert_allclose(out[0, 0, 0], 3, rtol=1e-6)
