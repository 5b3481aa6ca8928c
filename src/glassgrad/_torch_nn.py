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
           "adaptive_max_pool1d", "channel_shuffle", "grid_sampler", "grid_sampler_2d", "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell",
           "gru_cell"]


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
    if input.dim() != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
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
