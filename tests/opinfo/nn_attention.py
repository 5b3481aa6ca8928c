"""Op table rows: F.scaled_dot_product_attention (nn/functional/_attention.py).

torch's CPU dispatch picks the fused kernel (grad_fn ScaledDotProductFlashAttentionForCpuBackward0) for 4-D
inputs of one head size with no dropout and a mask that needs no gradient, and the composite math path
otherwise (grad_fn UnsafeViewBackward0 / MmBackward0 of its last matmul).  torch has no double backward
for the fused kernel, so those rows skip the second-derivative comparison.
"""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, Idx, NoGrad, arr, noncontig


def _sdpa(T, q, k, v, **kw):
    return T.nn.functional.scaled_dot_product_attention(q, k, v, **kw)


def _sdpa_bhle(T, q, k, v, **kw):
    """Inputs given as (B, L, H, E) and transposed to (B, H, L, E): non-contiguous, last dim still dense."""
    return T.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                        **kw)


def _qkv(rng, dt, q, k, v):
    return arr(rng, q, dt), arr(rng, k, dt), arr(rng, v, dt)


def _fused_samples(rng, dt):
    B, H, L, S, E = 2, 3, 4, 5, 6
    q4, k4, v4 = (B, H, L, E), (B, H, S, E), (B, H, S, E)
    dead = np.ones((L, S), bool)
    dead[2] = False                                              # a row that attends to nothing -> zeros
    return [
        Sample(*_qkv(rng, dt, q4, k4, v4), name="plain"),
        Sample(*_qkv(rng, dt, q4, k4, v4), is_causal=True, name="causal"),
        Sample(*_qkv(rng, dt, (B, H, 5, E), (B, H, 3, E), (B, H, 3, E)), is_causal=True, name="causal_L_gt_S"),
        Sample(*_qkv(rng, dt, q4, k4, v4), attn_mask=Idx(rng.random((L, S)) > 0.4), name="bool_mask_2d"),
        Sample(*_qkv(rng, dt, q4, k4, v4), attn_mask=Idx(dead), name="fully_masked_row"),
        Sample(*_qkv(rng, dt, q4, k4, v4), attn_mask=NoGrad(arr(rng, (1, H, L, S), dt)), name="float_mask_4d"),
        Sample(*_qkv(rng, dt, q4, k4, v4), attn_mask=NoGrad(arr(rng, (L, S), dt)), scale=0.3,
               name="float_mask_scale"),
        Sample(*_qkv(rng, dt, (B, 4, L, E), (B, 2, S, E), (B, 2, S, E)), enable_gqa=True, name="gqa"),
        Sample(*_qkv(rng, dt, (1, 1, 1, E), (1, 1, 1, E), (1, 1, 1, E)), dropout_p=0.0, name="single"),
    ]


def _math_samples(rng, dt):
    L, S, E = 4, 5, 6
    dead = np.ones((L, S), bool)
    dead[0] = False
    return [
        Sample(*_qkv(rng, dt, (3, L, E), (3, S, E), (3, S, E)), name="3d"),
        Sample(*_qkv(rng, dt, (L, E), (S, E), (S, 2)), name="2d_vdim"),
        Sample(*_qkv(rng, dt, (3, L, E), (3, S, E), (3, S, E)), is_causal=True, name="3d_causal"),
        Sample(*_qkv(rng, dt, (3, L, E), (3, S, E), (3, S, E)), attn_mask=Idx(rng.random((3, L, S)) > 0.3),
               name="3d_bool_mask"),
        Sample(*_qkv(rng, dt, (3, L, E), (3, S, E), (3, S, E)), attn_mask=Idx(dead), name="3d_fully_masked_row"),
        Sample(*_qkv(rng, dt, (2, 2, L, E), (2, 2, S, E), (2, 2, S, E)), attn_mask=NoGrad(arr(rng, (2, 1, S), dt)),
               name="4d_float_mask_broadcast"),
        Sample(*_qkv(rng, dt, (2, 2, L, E), (2, 2, S, E), (2, 2, S, E)), attn_mask=arr(rng, (L, S), dt),
               name="4d_mask_requires_grad"),
        Sample(*_qkv(rng, dt, (2, 2, L, E), (2, 2, S, E), (2, 2, S, 3)), name="4d_vdim"),
        Sample(*_qkv(rng, dt, (2, 2, L, E), (1, 2, S, E), (1, 2, S, E)), name="4d_batch_broadcast"),
        Sample(*_qkv(rng, dt, (3, L, E), (3, S, E), (3, S, E)), scale=-0.4, name="negative_scale"),
        Sample(noncontig(arr(rng, (2, 2, L, E), dt)), arr(rng, (2, 2, S, E), dt), arr(rng, (2, 2, S, E), dt),
               name="4d_last_dim_strided"),
        Sample(*_qkv(rng, dt, (2, 4, L, E), (2, 2, S, E), (2, 2, S, 3)), enable_gqa=True, dropout_p=0.0,
               name="gqa_vdim"),
    ]


def _transposed_samples(rng, dt):
    return [Sample(*_qkv(rng, dt, (2, 4, 3, 6), (2, 5, 3, 6), (2, 5, 3, 6)), name="bhle"),
            Sample(*_qkv(rng, dt, (2, 4, 3, 6), (2, 5, 3, 6), (2, 5, 3, 6)), is_causal=True, name="bhle_causal")]


def _errors():
    z = np.zeros
    f8, f4 = np.float64, np.float32
    return [
        ErrorSample(Sample(z(4, f8), z((5, 4), f8), z((5, 4), f8)), RuntimeError, "at least 2 dimensional"),
        ErrorSample(Sample(z((2, 4, 3), f8), z((2, 5, 3), f4), z((2, 5, 3), f4)), RuntimeError,
                    "Expected query, key, and value to have the same dtype, but got query.dtype: double key.dtype: "
                    "float and value.dtype: float instead."),
        ErrorSample(Sample(z((2, 4, 3), f8), z((2, 5, 3), f8), z((2, 5, 3), f8), attn_mask=Idx(z((4, 5), np.int64))),
                    RuntimeError, "Expected attn_mask dtype to be bool or float or to match query dtype"),
        ErrorSample(Sample(z((2, 4, 3), f8), z((2, 5, 3), f8), z((2, 5, 3), f8), attn_mask=Idx(z((4, 5), bool)),
                           is_causal=True),
                    RuntimeError, "Explicit attn_mask should not be set when is_causal=True"),
        ErrorSample(Sample(z((2, 2, 4, 3), f8), z((2, 2, 5, 3), f8), z((2, 2, 5, 3), f8),
                           attn_mask=Idx(z((3, 5), bool))),
                    RuntimeError, "The size of tensor a (4) must match the size of tensor b (3) at non-singleton "
                                  "dimension 2"),
    ]


OPS = [
    OpInfo("nn.functional.scaled_dot_product_attention", _sdpa, _math_samples, errors=_errors, atol=1e-5,
           rtol=1e-5),
    OpInfo("nn.functional.scaled_dot_product_attention_fused", _sdpa, _fused_samples, gradgrad=False, atol=1e-5,
           rtol=1e-5),
    OpInfo("nn.functional.scaled_dot_product_attention_fused_strided", _sdpa_bhle, _transposed_samples,
           gradgrad=False, atol=1e-5, rtol=1e-5),
]
