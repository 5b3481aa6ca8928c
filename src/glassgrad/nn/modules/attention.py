"""MultiheadAttention (PyTorch keeps it in activation.py) and its output projection class.

Parameters and their initialisation order follow PyTorch: in_proj_weight (or q/k/v_proj_weight when
kdim/vdim differ from embed_dim) xavier-uniform, in_proj_bias and out_proj.bias zero, out_proj.weight
from Linear's own reset, bias_k/bias_v xavier-normal.  The forward is F.multi_head_attention_forward
(PyTorch's CPU inference fast path computes the same values, so it is not reproduced).
"""
from .module import Module
from .linear import NonDynamicallyQuantizableLinear
from ..parameter import Parameter
from .. import init
from ...ops.creation import empty

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention over num_heads subspaces of size embed_dim // num_heads, projected back by out_proj."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **fk))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **fk))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **fk))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **fk))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **fk))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **fk)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **fk))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **fk))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        from ..functional import _attention as FA
        is_batched = query.dim() == 3
        key_padding_mask = FA._canonical_mask(key_padding_mask, "key_padding_mask", FA._none_or_dtype(attn_mask),
                                              "attn_mask", query.dtype)
        attn_mask = FA._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        extra = {}
        if not self._qkv_same_embed_dim:
            extra = dict(use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight,
                         k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight)
        out, weights = FA.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal, **extra)
        if self.batch_first and is_batched:
            return out.transpose(1, 0), weights
        return out, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """Combine an (L, L) attn_mask and a (N, L) key_padding_mask into one (N, H, L, L) mask; returns
        (mask, mask_type) with mask_type 0 (attn_mask only), 1 (padding only), 2 (both)."""
        mask_type, merged = None, None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            bsz, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                a = attn_mask.view(bsz, -1, seq_len, seq_len)
            else:
                a = attn_mask.view(1, 1, seq_len, seq_len).expand(bsz, self.num_heads, -1, -1)
            merged = a
            if key_padding_mask is not None:
                merged = a + key_padding_mask.view(bsz, 1, 1, seq_len).expand(-1, self.num_heads, -1, -1)
        return merged, mask_type
