"""Transformer, TransformerEncoder(Layer), TransformerDecoder(Layer).

Submodule names and construction order are PyTorch's (self_attn, [multihead_attn,] linear1, dropout,
linear2, norm1, norm2, [norm3,] dropout1, dropout2, [dropout3]), so state_dicts load by name and a
seeded model equals PyTorch's.  Encoder/decoder stacks deep-copy the given layer.  PyTorch's fused
inference paths compute the same values as the layer-by-layer code used here; the one visible effect
of its nested-tensor path (padded positions of an encoder's output come back as zeros) is reproduced.
"""
import copy
import warnings

from .module import Module
from .container import ModuleList
from .linear import Linear
from .attention import MultiheadAttention
from ...ops.creation import full
from ...ops.shape import triu

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _F():
    from .. import functional
    return functional


def _FA():
    from ..functional import _attention
    return _attention


def _dropout(p):
    from .dropout import Dropout
    return Dropout(p)


def _layer_norm(d_model, eps, bias, fk):
    from .normalization import LayerNorm
    return LayerNorm(d_model, eps=eps, bias=bias, **fk)


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """(sz, sz) float mask: -inf above the diagonal, 0 elsewhere."""
    return triu(full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_seq_len(src, batch_first):
    size = src.size()
    if len(size) == 2:
        return size[0]
    return size[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
        if tuple(mask.size()) == tuple(causal.size()):
            make_causal = bool((mask == causal).all())
        else:
            make_causal = False
    return make_causal


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return _F().relu
    if activation == "gelu":
        return _F().gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _activation_kind(activation):
    """PyTorch's activation_relu_or_gelu flag: 1 relu, 2 gelu, 0 anything else."""
    from . import activation as A
    F = _F()
    if activation is getattr(F, "relu", None) or (hasattr(A, "ReLU") and isinstance(activation, A.ReLU)):
        return 1
    if activation is getattr(F, "gelu", None) or (hasattr(A, "GELU") and isinstance(activation, A.GELU)):
        return 2
    return 0


def _grad_needed(tensors):
    from ...autograd.grad_mode import is_grad_enabled
    return is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


class Transformer(Module):
    """Encoder-decoder transformer (Vaswani et al.), each stack ending in a LayerNorm."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **fk), num_encoder_layers,
                                              _layer_norm(d_model, layer_norm_eps, bias, fk))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **fk), num_decoder_layers,
                                              _layer_norm(d_model, layer_norm_eps, bias, fk))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.size(0) != tgt.size(0) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self):
        from .. import init
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)


class TransformerEncoder(Module):
    """A stack of num_layers deep copies of encoder_layer, then an optional norm."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = ""
        el = "encoder_layer"
        if not isinstance(encoder_layer, TransformerEncoderLayer):
            why = f"{el} was not TransformerEncoderLayer"
        elif encoder_layer.norm_first:
            why = f"{el}.norm_first was True"
        elif not encoder_layer.self_attn.batch_first:
            why = f"{el}.self_attn.batch_first was not True(use batch_first for better inference performance)"
        elif not encoder_layer.self_attn._qkv_same_embed_dim:
            why = f"{el}.self_attn._qkv_same_embed_dim was not True"
        elif encoder_layer.self_attn.in_proj_bias is None:
            why = f"{el}.self_attn was passed bias=False"
        elif not encoder_layer.activation_relu_or_gelu:
            why = f"{el}.activation_relu_or_gelu was not True"
        elif encoder_layer.norm1.eps != encoder_layer.norm2.eps:
            why = f"{el}.norm1.eps was not equal to {el}.norm2.eps"
        elif encoder_layer.self_attn.num_heads % 2 == 1:
            why = f"{el}.self_attn.num_heads is odd"
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def _nested_valid(self, src, kpm, mask):
        """The (N, L) bool 'kept' mask when PyTorch would run its nested-tensor path, else None."""
        first = self.layers[0]
        if not getattr(self, "use_nested_tensor", False) or first.training or src.dim() != 3 or kpm is None:
            return None
        if mask is not None:
            return None
        valid = kpm.logical_not()
        v = valid._data
        if getattr(self, "mask_check", True):
            # left aligned: every row is True...True False...False
            if v.shape[1] > 1 and (v[:, 1:] & ~v[:, :-1]).any():
                return None
        sa = first.self_attn
        args = (src, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight, sa.out_proj.bias, first.norm1.weight,
                first.norm1.bias, first.norm2.weight, first.norm2.bias, first.linear1.weight, first.linear1.bias,
                first.linear2.weight, first.linear2.bias)
        if _grad_needed(args):
            return None
        return valid

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        FA = _FA()
        src_key_padding_mask = FA._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                  FA._none_or_dtype(mask), "mask", src.dtype)
        mask = FA._canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        valid = self._nested_valid(src, src_key_padding_mask, mask)
        batch_first = self.layers[0].self_attn.batch_first
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if valid is not None:       # PyTorch's nested tensor comes back padded with zeros
            w = valid.unsqueeze(-1) if batch_first else valid.transpose(0, 1).unsqueeze(-1)
            output = output.masked_fill(w.logical_not(), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """A stack of num_layers deep copies of decoder_layer, then an optional norm."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                         memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class _TransformerLayer(Module):
    """The sublayers shared by encoder and decoder layers, built in PyTorch's order: self_attn,
    [multihead_attn,] linear1, dropout, linear2, then one norm<i> and dropout<i> per residual block (the
    last of them closes the feed-forward block), then the activation."""
    _blocks = 2

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        attention = ["self_attn"] + (["multihead_attn"] if self._blocks == 3 else [])
        for name in attention:
            setattr(self, name, MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                   batch_first=batch_first, **fk))
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = _dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        for i in range(1, self._blocks + 1):
            setattr(self, f"norm{i}", _layer_norm(d_model, layer_norm_eps, bias, fk))
        for i in range(1, self._blocks + 1):
            setattr(self, f"dropout{i}", _dropout(dropout))
        self._set_activation(_get_activation_fn(activation) if isinstance(activation, str) else activation)

    def _set_activation(self, activation):
        self.activation = activation

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return getattr(self, f"dropout{self._blocks}")(x)


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then a feed-forward block, each with dropout, residual and LayerNorm (post- or pre-norm)."""
    _blocks = 2

    def _set_activation(self, activation):
        self.activation_relu_or_gelu = _activation_kind(activation)
        self.activation = activation

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = _F().relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        FA = _FA()
        src_key_padding_mask = FA._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                  FA._none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = FA._canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention, cross-attention over memory, then feed-forward; dropout, residuals and LayerNorms."""
    _blocks = 3

    def __setstate__(self, state):
        if "activation" not in state:
            state["activation"] = _F().relu
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)
