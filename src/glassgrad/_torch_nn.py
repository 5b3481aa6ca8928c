"""torch.* functions that are nn.functional's under ATen's signatures (reductions as ints, positional flags,
enums for modes), and the RNN cells as torch composes them (aten/src/ATen/native/RNN.cpp).

torch.kl_div(input, target, reduction=0) is F.kl_div(input, target, reduction="mean") without the warning;
torch.max_pool1d_with_indices returns the (values, indices) pair; torch.grid_sampler takes its modes as ints.
`glassgrad/__init__` serves these names on first use (they load nn.functional).
"""
import warnings

from .nn import functional as F
from .ops import unary as _un

__all__ = ["binary_cross_entropy_with_logits", "cosine_embedding_loss", "ctc_loss", "hinge_embedding_loss", "kl_div",
           "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss", "max_pool3d", "max_pool1d_with_indices",
           "adaptive_max_pool1d", "channel_shuffle", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
           "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell",
           "gru_cell", "lstm", "gru", "rnn_tanh", "rnn_relu", "embedding_bag"]


def _red(reduction):
    """ATen's Reduction enum: 1 mean, 2 sum, anything else none (as apply_loss_reduction).  torch's Python
    binding of these functions defaults the reduction to 0 (none), though the schemas say Mean: so here."""
    return {1: "mean", 2: "sum"}.get(int(reduction), "none")


# -- losses ------------------------------------------------------------------------------------------------------
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_red(reduction), pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_red(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _red(reduction), zero_infinity)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin, reduction=_red(reduction))


def kl_div(input, target, reduction=0, *, log_target=False):
    with warnings.catch_warnings():       # ATen's kl_div does not warn about 'mean'
        warnings.simplefilter("ignore", UserWarning)
        return F.kl_div(input, target, reduction=_red(reduction), log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_red(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_red(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_red(reduction))


# -- pooling, shuffling, sampling --------------------------------------------------------------------------------
def _stride(stride):
    return None if isinstance(stride, (list, tuple)) and len(stride) == 0 else stride


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode, return_indices=True)


def adaptive_max_pool1d(input, output_size):
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def channel_shuffle(input, groups):
    return F.channel_shuffle(input, groups)


_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.dim() != 4 or grid.dim() != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.dim() != 5 or grid.dim() != 5:
        raise RuntimeError(f"grid_sampler(): expected 5D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    return F.grid_sample(input, grid, _MODES.get(int(interpolation_mode), interpolation_mode),
                         _PADDING.get(int(padding_mode), padding_mode), bool(align_corners))


# -- RNN cells (RNN.cpp's composites, so the nodes are torch's) ---------------------------------------------------
def _gates(x, w, b):
    return F.linear(x, w, b)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _un.tanh(_gates(hx, w_hh, b_hh) + _gates(input, w_ih, b_ih))


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _un.relu(_gates(hx, w_hh, b_hh) + _gates(input, w_ih, b_ih))


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """(hy, cy) = (o * tanh(cy), f * cx + i * g) from the four gate chunks of the summed projections."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    gates = _gates(input, w_ih, b_ih) + _gates(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """hy = (hx - n) * z + n with r, z from the summed chunks and n = tanh(i_n + r * h_n)."""
    i_r, i_z, i_n = _gates(input, w_ih, b_ih).chunk(3, 1)
    h_r, h_z, h_n = _gates(hx, w_hh, b_hh).chunk(3, 1)
    r = (h_r + i_r).sigmoid()
    z = (h_z + i_z).sigmoid()
    n = (i_n + h_n * r).tanh()
    return (hx - n) * z + n


# -- whole RNN stacks: torch.lstm / gru / rnn_tanh / rnn_relu over flat parameter lists -----------------------------
class _Stack:
    """What RNNBase's multi-layer driver reads from its module, from torch.lstm's arguments: the parameters
    per layer and direction (w_ih, w_hh[, b_ih, b_hh][, w_hr]) in torch's flat order."""

    def __init__(self, mode, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        D = 2 if bidirectional else 1
        n = len(params) // (num_layers * D)
        if n * num_layers * D != len(params) or n not in (2, 3, 4, 5):
            raise RuntimeError(f"{mode.lower()}: expected {num_layers * D} groups of parameters, got {len(params)} "
                               f"parameters")
        self.mode, self.num_layers, self.bidirectional = mode, int(num_layers), bool(bidirectional)
        self.bias, self.dropout, self.training, self.batch_first = bool(has_biases), float(dropout), bool(train), \
            bool(batch_first)
        self.proj_size = params[n - 1].shape[0] if n - (4 if has_biases else 2) == 1 else 0
        self._all_weights, self._w = [], {}
        for k in range(num_layers * D):
            names = [f"p{k}_{i}" for i in range(n)]
            self._w.update(zip(names, params[k * n:(k + 1) * n]))
            self._all_weights.append(names)
        self._flat_weights = list(params)

    def __getattr__(self, name):
        try:
            return self.__dict__["_w"][name]
        except KeyError:
            raise AttributeError(name) from None


def _rnn(mode, input, hx, cx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first,
         batch_sizes=None):
    from .nn.modules.rnn import RNNBase
    s = _Stack(mode, list(params), has_biases, num_layers, dropout, train, bidirectional, batch_first)
    bs = None if batch_sizes is None else [int(b) for b in batch_sizes.tolist()]
    x = input.transpose(0, 1) if batch_first and bs is None else input
    s._step = lambda: RNNBase._step(s)
    s._fused = lambda *a: RNNBase._fused(s, *a)
    out, h, c = RNNBase._run(s, x, bs, hx, cx)
    if batch_first and bs is None:      # ATen transposes RNN/GRU outputs in place, LSTM's out of place
        out = out.transpose(0, 1) if mode == "LSTM" else out.transpose_(0, 1)
    return out, h, c


def _packed(args):
    """torch's .data overload: (data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
    bidirectional) -- the second argument is the batch sizes, not the hidden state."""
    return len(args) > 3 and isinstance(args[3], (list, tuple))


def lstm(*args):
    """torch.lstm(input, (h0, c0), params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    -> (output, h_n, c_n); or the packed form (data, batch_sizes, (h0, c0), params, ..., bidirectional)."""
    if _packed(args):
        data, bs, hx, *rest = args
        return _rnn("LSTM", data, hx[0], hx[1], *rest, False, batch_sizes=bs)
    input, hx, *rest = args
    return _rnn("LSTM", input, hx[0], hx[1], *rest)


def _single(mode, args):
    if _packed(args):
        data, bs, hx, *rest = args
        out, h, _ = _rnn(mode, data, hx, None, *rest, False, batch_sizes=bs)
    else:
        input, hx, *rest = args
        out, h, _ = _rnn(mode, input, hx, None, *rest)
    return out, h


def gru(*args):
    return _single("GRU", args)


def rnn_tanh(*args):
    return _single("RNN_TANH", args)


def rnn_relu(*args):
    return _single("RNN_RELU", args)


# -- torch.embedding_bag: the output and the three bookkeeping tensors ATen returns with it ---------------------------
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """(output, offset2bag, bag_size, max_indices) as ATen's CPU kernel fills them: offset2bag is each index's
    bag (empty for mode sum without padding_idx), bag_size each bag's count of non-padding indices (zeros for
    sum), max_indices the weight row of each maximum (mode max), a copy of bag_size (mean), zeros (sum)."""
    import numpy as np
    from .ops import embedding as _E
    from .ops.creation import from_numpy
    out = _E._embedding_bag(weight, indices, offsets, scale_grad_by_freq, int(mode), sparse, per_sample_weights,
                            include_last_offset, padding_idx)
    idx = indices._data.astype(np.int64).reshape(-1)
    offs = offsets._data.astype(np.int64)
    nw = weight.shape[0]
    nb = offs.size - 1 if include_last_offset else offs.size
    n = idx.size
    bag = np.searchsorted(offs[:nb], np.arange(n), side="right") - 1 if nb else np.zeros(n, np.int64)
    bag = np.clip(bag, 0, max(nb - 1, 0))
    pad = -1 if padding_idx is None else (padding_idx + nw if padding_idx < 0 else padding_idx)
    valid = idx != pad
    if mode == 0:
        o2b = bag if padding_idx is not None else np.zeros(0, np.int64)
        return out, from_numpy(o2b), from_numpy(np.zeros(nb, np.int64)), from_numpy(np.zeros(nb, np.int64))
    size = np.bincount(bag[valid], minlength=nb)[:nb].astype(np.int64)
    if mode == 1:
        return out, from_numpy(bag), from_numpy(size), from_numpy(size.copy())
    w = weight._data
    maxi = np.zeros((nb, w.shape[1]), np.int64)
    for b in range(nb):
        rows = idx[(bag == b) & valid]
        if rows.size:
            maxi[b] = rows[np.argmax(w[rows], axis=0)]      # the first row reaching each column's maximum
    return out, from_numpy(bag), from_numpy(size), from_numpy(maxi)
