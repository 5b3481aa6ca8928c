"""nn.functional: scaled_dot_product_attention and multi_head_attention_forward.

scaled_dot_product_attention follows PyTorch's CPU dispatch: 4-D query/key/value of one head size,
no dropout and a mask that needs no gradient go to the fused kernel (one node,
ScaledDotProductFlashAttentionForCpuBackward0); everything else runs the composite "math" path
(scale, matmul, add mask, safe softmax, dropout, matmul), whose last op names the grad_fn.
A row whose keys are all masked out gives zeros (PyTorch's _safe_softmax), not NaN.  The two primitives,
the safe softmax and the fused kernel, are in ops/attention.py.
"""
import math
import warnings

import numpy as np

from ... import _dtype
from .. import attention as _attn
from ..._tensor import Tensor
from ...ops._core import broadcast_error
from ...ops.attention import _safe_softmax, _flash_ok, _sdpa_flash
from ...ops.creation import zeros, ones, empty_like
from ...ops.linalg import matmul, bmm
from ...ops.addmm import baddbmm, linear as _linear
from ...ops.softmax import softmax
from ...ops.shape import cat
from ..._autocast_state import state as _acs
from ...ops import _autocast as _ac

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _at_dropout(x, p, train=True):
    """ATen's CPU dropout: input * bernoulli(1-p) / (1-p) (the RNG use of torch.dropout)."""
    if p == 0 or not train or x.numel() == 0:
        return x
    if p == 1:
        return x * zeros((), dtype=x.dtype, device=x.device)
    noise = empty_like(x).bernoulli_(1 - p)
    noise.div_(1 - p)
    return x * noise


# -- scaled_dot_product_attention -----------------------------------------------------------------------


def _dt_name(t):
    return _dtype.cpp_name(t.dtype)


def _check_sdpa(q, k, v, attn_mask):
    if q.dim() < 2 or k.dim() < 2 or v.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{q.dim()} key.dim: {k.dim()} and value.dim: {v.dim()} instead.")
    if not (q.dtype == k.dtype == v.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_dt_name(q)} key.dtype: {_dt_name(k)} and value.dtype: {_dt_name(v)} instead.")
    if attn_mask is not None and attn_mask.dtype not in (_dtype.bool, _dtype.float32):    # "float": float32
        if attn_mask.dtype != q.dtype:
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_dt_name(attn_mask)} and  query.dtype: {_dt_name(q)} instead.")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(Q K^T * scale + mask) V; a bool mask marks the positions that take part (True = attend)."""
    if _acs.on:
        return _ac.lower(scaled_dot_product_attention, query, key, value, attn_mask, dropout_p, is_causal, scale,
                         enable_gqa)
    q, k, v = query, key, value
    _check_sdpa(q, k, v, attn_mask)
    sc = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    if _attn.enabled(_attn.SDPBackend.FLASH_ATTENTION) and _flash_ok(q, k, v, attn_mask, dropout_p, enable_gqa):
        return _sdpa_flash(q, k, v, attn_mask, is_causal, sc)
    if not _attn.enabled(_attn.SDPBackend.MATH):      # nn.attention.sdpa_kernel left no kernel that runs here
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    # the composite path
    neg = scale is not None and sc < 0
    sf = math.sqrt(abs(sc))
    qs = q * (-sf if neg else sf)
    mask = attn_mask
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        L, S = q.shape[-2], k.shape[-2]
        mask = ones((L, S), dtype=_dtype.bool, device=q.device).tril()
    if mask is not None and mask.dtype == _dtype.bool:
        mask = zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(mask.logical_not(), float("-inf"))
    if enable_gqa and q.dim() >= 3 and k.shape[-3] != q.shape[-3]:
        if k.shape[-3] == 0 or q.shape[-3] % k.shape[-3]:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
        r = q.shape[-3] // k.shape[-3]
        k, v = k.repeat_interleave(r, -3), v.repeat_interleave(r, -3)
    att = matmul(qs, k.transpose(-2, -1) * sf)
    if mask is not None:
        try:
            np.broadcast_shapes(tuple(att.shape), tuple(mask.shape))
        except ValueError:
            raise broadcast_error(tuple(att.shape), tuple(mask.shape)) from None
        if tuple(np.broadcast_shapes(tuple(att.shape), tuple(mask.shape))) != tuple(att.shape):
            raise broadcast_error(tuple(att.shape), tuple(mask.shape))
        att = att + mask
    att = _safe_softmax(att, -1)
    if dropout_p > 0.0:
        att = _at_dropout(att, dropout_p, True)
    return matmul(att, v)


# -- multi-head attention ----------------------------------------------------------------------------------
def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched; AssertionError (PyTorch's text) for inconsistent ranks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                                 f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                want = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != want:
                    raise AssertionError(f"Expected `attn_mask` shape to be {want} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask becomes an additive float mask (-inf where True); float masks pass through."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype != _dtype.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if not is_float:
        mask = zeros(mask.shape, dtype=target_type, device=mask.device).masked_fill(mask, float("-inf"))
    return mask


def _none_or_dtype(t):
    if t is None:
        return None
    if isinstance(t, Tensor):
        return t.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _in_projection_packed(q, k, v, w, b=None):
    E = q.size(-1)
    if k is v:
        if q is k:
            p = _linear(q, w, b).unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return p[0], p[1], p[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        kv = _linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return _linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """Separate q/k/v projections (kdim/vdim differ from embed_dim), with PyTorch's shape checks."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for what, w, want in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)), ("value", w_v, (Eq, Ev))):
        if tuple(w.shape) != want:
            raise AssertionError(f"expecting {what} weights shape of {want}, but got {w.shape}")
    for what, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (Eq,):
            raise AssertionError(f"expecting {what} bias shape of {(Eq,)}, but got {b.shape}")
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _pad_last(m):
    """Append one zero column on the last dim (F.pad(m, (0, 1)))."""
    return cat([m, zeros(tuple(m.shape[:-1]) + (1,), dtype=m.dtype, device=m.device)], -1)


def _mha_masks(query, key_padding_mask, attn_mask, is_causal, need_weights):
    """The key padding and attention masks as additive float masks; returns (key_padding_mask, attn_mask,
    is_causal)."""
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None      # SDPA builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    return key_padding_mask, attn_mask, is_causal


def _mha_in_projection(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight, q_proj_weight,
                       k_proj_weight, v_proj_weight):
    """q, k, v projected by the packed in_proj_weight or by the three separate weights."""
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        for nm, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {nm}_proj_weight is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        return _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)
    if tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if in_proj_weight is None:
        raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
    return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)


def _mha_attn_mask_3d(attn_mask, tgt_len, src_len, bsz, num_heads):
    """attn_mask checked against the shapes and made 3-D, (1 or bsz * num_heads, tgt_len, src_len)."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _mha_bias_kv(k, v, bias_k, bias_v, static_k, static_v, bsz, attn_mask, key_padding_mask):
    """bias_k / bias_v appended to the keys and values as one more position (the masks grow a column)."""
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    return k, v, attn_mask, key_padding_mask


def _mha_zero_attn(k, v, bsz, num_heads, head_dim, attn_mask, key_padding_mask):
    """add_zero_attn: one more key/value position of zeros (the masks grow a column)."""
    zshape = (bsz * num_heads, 1, head_dim)
    k = cat([k, zeros(zshape, dtype=k.dtype, device=k.device)], dim=1)
    v = cat([v, zeros(zshape, dtype=v.dtype, device=v.device)], dim=1)
    if attn_mask is not None:
        attn_mask = _pad_last(attn_mask)
    if key_padding_mask is not None:
        key_padding_mask = _pad_last(key_padding_mask)
    return k, v, attn_mask, key_padding_mask


def _mha_merge_padding(key_padding_mask, attn_mask, bsz, num_heads, src_len):
    """attn_mask plus the key padding mask broadcast over the heads, (bsz * num_heads, 1 or tgt_len, src_len)."""
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                             f"{key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
        bsz * num_heads, 1, src_len)
    return kpm if attn_mask is None else attn_mask + kpm


def _mha_with_weights(q, k, v, attn_mask, is_causal, dropout_p, out_proj_weight, out_proj_bias, num_heads,
                      average_attn_weights, batched):
    """The attention with its weights (need_weights): softmax(Q K^T / sqrt(E) + mask) V, then out_proj."""
    tgt_len, src_len = q.shape[1], k.shape[1]
    bsz = q.shape[0] // num_heads
    embed_dim = q.shape[-1] * num_heads
    E = q.shape[-1]
    q_scaled = q * math.sqrt(1.0 / float(E))
    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    if attn_mask is not None:
        w = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
    else:
        w = bmm(q_scaled, k.transpose(-2, -1))
    w = softmax(w, dim=-1)
    if dropout_p > 0.0:
        w = _at_dropout(w, dropout_p, True)
    out = bmm(w, v)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    w = w.view(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        w = w.mean(dim=1)
    if not batched:
        out, w = out.squeeze(1), w.squeeze(0)
    return out, w


def _mha_sdpa(q, k, v, attn_mask, is_causal, dropout_p, out_proj_weight, out_proj_bias, num_heads, batched):
    """The attention without weights: scaled_dot_product_attention over (bsz, heads, L, head_dim), then
    out_proj."""
    tgt_len, src_len, head_dim = q.shape[1], k.shape[1], q.shape[-1]
    bsz = q.shape[0] // num_heads
    embed_dim = head_dim * num_heads
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    if not batched:
        out = out.squeeze(1)
    return out, None


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention on (L, N, E) inputs (or unbatched (L, E)); returns (output, weights or None)."""
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask, attn_mask, is_causal = _mha_masks(query, key_padding_mask, attn_mask, is_causal, need_weights)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    q, k, v = _mha_in_projection(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                                 q_proj_weight, k_proj_weight, v_proj_weight)
    if attn_mask is not None:
        attn_mask = _mha_attn_mask_3d(attn_mask, tgt_len, src_len, bsz, num_heads)
    k, v, attn_mask, key_padding_mask = _mha_bias_kv(k, v, bias_k, bias_v, static_k, static_v, bsz, attn_mask,
                                                     key_padding_mask)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k)
    v = (v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v)
    if add_zero_attn:
        k, v, attn_mask, key_padding_mask = _mha_zero_attn(k, v, bsz, num_heads, head_dim, attn_mask,
                                                           key_padding_mask)
    if key_padding_mask is not None:
        attn_mask = _mha_merge_padding(key_padding_mask, attn_mask, bsz, num_heads, k.size(1))
    if not training:
        dropout_p = 0.0
    if need_weights:
        return _mha_with_weights(q, k, v, attn_mask, is_causal, dropout_p, out_proj_weight, out_proj_bias,
                                 num_heads, average_attn_weights, batched)
    return _mha_sdpa(q, k, v, attn_mask, is_causal, dropout_p, out_proj_weight, out_proj_bias, num_heads, batched)
