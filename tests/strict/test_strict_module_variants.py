"""More of each nn module on the device (issue 17): the options and call forms test_strict_modules.py's one
configuration per class does not reach -- eval mode, masks, class weights, padding modes, interpolation modes,
packed sequences, initial states, extra methods -- each compared with the same module on the CPU."""
import pytest

import glassgrad as gg
from glassgrad import nn
from test_strict_modules import X1, X2, X3, compare, run_case

SEQ, TGT = (5, 2, 8), (4, 2, 8)


def _m(cls, *args, **kwargs):
    return lambda: getattr(nn, cls)(*args, **kwargs)


def _packed(m, x, h0=None):
    """A PackedSequence through the RNN; its packed data compared (pad_packed_sequence, in nn/utils, pads on the
    host: it is not part of this file's modules)."""
    p = nn.utils.rnn.pack_padded_sequence(x, gg.tensor([5, 3, 2]), batch_first=True)
    out, h = m(p) if h0 is None else m(p, h0)
    return out.data, h


def _nograd(m, *args, **kwargs):
    """An inference call (eval + no_grad: torch's fast path for attention and transformer layers)."""
    with gg.no_grad():
        return m(*args, **kwargs)


# id: (module factory, input specs, call(m, *xs) or None, train mode)
VARIANTS = {
    "BatchNorm2d-eval": (_m("BatchNorm2d", 4), [X2], None, False),
    "BatchNorm1d-cumulative": (_m("BatchNorm1d", 4, momentum=None), [(3, 4)], lambda m, x: (m(x), m(x * 2)), True),
    "BatchNorm2d-no-stats": (_m("BatchNorm2d", 4, track_running_stats=False, affine=False), [X2], None, False),
    "InstanceNorm1d-eval": (_m("InstanceNorm1d", 4, track_running_stats=True), [X1], None, False),
    "GroupNorm-noaffine": (_m("GroupNorm", 4, 4, affine=False), [X2], None, True),
    "LayerNorm-nobias": (_m("LayerNorm", 6, bias=False, elementwise_affine=True), [X2], None, True),
    "RMSNorm-eps": (_m("RMSNorm", (7, 6), eps=1e-3), [X2], None, True),
    "Dropout-eval": (_m("Dropout", 0.5), [X2], None, False), "RReLU-eval": (_m("RReLU"), [X2], None, False),
    "AlphaDropout-eval": (_m("AlphaDropout", 0.5), [X2], None, False),
    "Conv2d-reflect": (_m("Conv2d", 4, 6, 3, padding=2, padding_mode="reflect"), [X2], None, True),
    "Conv1d-circular": (_m("Conv1d", 4, 6, 3, padding=1, padding_mode="circular"), [X1], None, True),
    "Conv3d-replicate": (_m("Conv3d", 4, 2, 2, padding=1, padding_mode="replicate"), [X3], None, True),
    "Conv2d-same": (_m("Conv2d", 4, 6, (3, 2), padding="same", dilation=2, bias=False), [X2], None, True),
    "ConvTranspose2d-output_size": (_m("ConvTranspose2d", 4, 3, 3, stride=2), [X2],
                                    lambda m, x: m(x, output_size=(16, 14)), True),
    "Conv1d-unbatched": (_m("Conv1d", 4, 6, 3), [(4, 9)], None, True),
    "MaxPool2d-indices": (_m("MaxPool2d", 3, 2, 1, dilation=1, return_indices=True, ceil_mode=True), [X2], None, True),
    "MaxPool1d-dilation": (_m("MaxPool1d", 2, dilation=2), [X1], None, True),
    "AvgPool2d-divisor": (_m("AvgPool2d", 3, 2, 1, divisor_override=4), [X2], None, True),
    "AdaptiveMaxPool2d-indices": (_m("AdaptiveMaxPool2d", (4, 5), return_indices=True), [X2], None, True),
    "FractionalMaxPool2d-indices": (_m("FractionalMaxPool2d", 2, output_ratio=(0.5, 0.7), return_indices=True),
                                    [X2], None, True),
    "LPPool2d-inf": (_m("LPPool2d", float("inf"), 2), [X2], None, True),
    "Upsample-nearest": (_m("Upsample", scale_factor=(1.5, 2.0), mode="nearest"), [X2], None, True),
    "Upsample-nearest-exact": (_m("Upsample", size=(9, 4), mode="nearest-exact"), [X2], None, True),
    "Upsample-linear": (_m("Upsample", scale_factor=2, mode="linear", align_corners=True), [X1], None, True),
    "Upsample-bicubic": (_m("Upsample", size=(10, 11), mode="bicubic"), [X2], None, True),
    "Upsample-trilinear": (_m("Upsample", scale_factor=1.7, mode="trilinear", recompute_scale_factor=True),
                           [X3], None, True),
    "Embedding-plain": (_m("Embedding", 10, 3, scale_grad_by_freq=True), [("int", 10, (4, 5))], None, True),
    "EmbeddingBag-offsets": (_m("EmbeddingBag", 10, 3, mode="sum", padding_idx=0),
                             [("int", 10, (9,)), ("t", [0, 2, 2, 7]), ("pos", (9,))],
                             lambda m, i, o, w: m(i, o, per_sample_weights=w), True),
    "EmbeddingBag-mean-last": (_m("EmbeddingBag", 10, 3, mode="mean", include_last_offset=True),
                               [("int", 10, (9,)), ("t", [0, 4, 9])], None, True),
    "RNN-tanh-h0": (_m("RNN", 5, 6, 2, batch_first=True), [(3, 4, 5), (2, 3, 6)], None, True),
    "LSTM-h0c0": (_m("LSTM", 5, 6, 1), [(4, 3, 5), (1, 3, 6), (1, 3, 6)], lambda m, x, h, c: m(x, (h, c)), True),
    "LSTM-packed": (_m("LSTM", 5, 6, 2, batch_first=True, bidirectional=True), [(3, 5, 5)], _packed, True),
    "GRU-packed-h0": (_m("GRU", 5, 6, batch_first=True), [(3, 5, 5), (1, 3, 6)], _packed, True),
    "RNN-dropout": (_m("RNN", 5, 6, 3, dropout=0.4), [(4, 3, 5)], None, True),
    "LSTMCell-hc": (_m("LSTMCell", 5, 6, bias=False), [(3, 5), (3, 6), (3, 6)], lambda m, x, h, c: m(x, (h, c)), True),
    "GRUCell-unbatched": (_m("GRUCell", 5, 6), [(5,)], None, True),
    "MHA-masks": (_m("MultiheadAttention", 8, 2, batch_first=True, add_bias_kv=True, add_zero_attn=True),
                  [(2, 5, 8), (2, 4, 8), (2, 4, 8), ("bool", 0.3, (2, 4)), ("bool", 0.2, (5, 4))],
                  lambda m, q, k, v, kpm, am: m(q, k, v, key_padding_mask=kpm, attn_mask=am,
                                                average_attn_weights=False), True),
    "MHA-kvdim-float-mask": (_m("MultiheadAttention", 8, 4, kdim=6, vdim=3, bias=False),
                             [SEQ, (3, 2, 6), (3, 2, 3), (5, 3)], lambda m, q, k, v, am: m(q, k, v, attn_mask=am),
                             True),
    "MHA-eval-noweights": (_m("MultiheadAttention", 8, 2, dropout=0.3), [SEQ, SEQ, SEQ],
                           lambda m, q, k, v: m(q, k, v, need_weights=False), False),
    "Transformer-causal": (_m("Transformer", d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
                              dim_feedforward=16, dropout=0.1, batch_first=True),
                           [(2, 5, 8), (2, 4, 8), ("bool", 0.3, (2, 5))],
                           lambda m, s, t, kpm: m(s, t, tgt_mask=nn.Transformer.generate_square_subsequent_mask(
                               4, device=t.device), src_key_padding_mask=kpm, tgt_is_causal=True), True),
    "TransformerEncoderLayer-eval-mask": (_m("TransformerEncoderLayer", 8, 2, 16, batch_first=True, norm_first=True),
                                          [(2, 5, 8), ("bool", 0.3, (2, 5))],
                                          lambda m, s, kpm: m(s, src_key_padding_mask=kpm), False),
    "TransformerDecoderLayer-memmask": (_m("TransformerDecoderLayer", 8, 2, 16, 0.2), [TGT, SEQ, ("bool", 0.3, (2, 5))],
                                        lambda m, t, s, mk: m(t, s, memory_key_padding_mask=mk), True),
    "TransformerEncoder-inference": (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True),
                                                                   2, enable_nested_tensor=True),
                                     [(2, 5, 8), ("t", [[False] * 5, [False, False, False, True, True]])],
                                     lambda m, s, kpm: _nograd(m, s, src_key_padding_mask=kpm), False),
    "MHA-inference": (_m("MultiheadAttention", 8, 2, batch_first=True), [(2, 5, 8)],
                      lambda m, x: _nograd(m, x, x, x), False),
    "CrossEntropyLoss-weight": (_m("CrossEntropyLoss", weight=gg.tensor([0.5, 1.0, 2.0, 0.1, 1.5]), ignore_index=2),
                                [(6, 5), ("int", 5, (6,))], None, True),
    "CrossEntropyLoss-probs": (_m("CrossEntropyLoss", label_smoothing=0.2, reduction="sum"),
                               [(6, 5), ("prob", (6, 5))], None, True),
    "NLLLoss-weight-none": (_m("NLLLoss", weight=gg.tensor([0.5, 1.0, 2.0, 0.1, 1.5]), reduction="none"),
                            [(6, 5), ("int", 5, (6,))], None, True),
    "BCELoss-weight": (_m("BCELoss", weight=gg.tensor([0.5, 1.0, 2.0, 0.1, 1.5])),
                       [("prob", (4, 5)), ("prob", (4, 5))], None, True),
    "BCEWithLogitsLoss-pos_weight": (_m("BCEWithLogitsLoss", pos_weight=gg.tensor([0.5, 1.0, 2.0, 0.1, 1.5])),
                                     [(4, 5), ("prob", (4, 5))], None, True),
    "MultiMarginLoss-weight": (_m("MultiMarginLoss", weight=gg.tensor([0.5, 1.0, 2.0, 0.1, 1.5])),
                               [(4, 5), ("int", 5, (4,))], None, True),
    "MultiLabelSoftMarginLoss-weight": (_m("MultiLabelSoftMarginLoss", weight=gg.tensor([0.5, 1.0, 2.0, 0.1, 1.5])),
                                        [(4, 5), ("int", 2, (4, 5))], None, True),
    "PoissonNLLLoss-nolog-full": (_m("PoissonNLLLoss", log_input=False, full=True),
                                  [("pos", (4, 5)), ("pos", (4, 5))], None, True),
    "GaussianNLLLoss-full": (_m("GaussianNLLLoss", full=True, reduction="sum"), [(4, 5), (4, 5), ("pos", (4, 1))],
                             None, True),
    "KLDivLoss-logtarget": (_m("KLDivLoss", log_target=True), [(4, 5), (4, 5)], None, True),
    "CTCLoss-zero_infinity": (_m("CTCLoss", blank=4, reduction="sum", zero_infinity=True),
                              [(6, 2, 5), ("int", 4, (2, 5)), ("t", [6, 2]), ("t", [5, 3])], None, True),
    "CTCLoss-concat-targets": (_m("CTCLoss", reduction="none"),
                               [(6, 2, 5), ("t", [1, 2, 3, 2, 1]), ("t", [6, 5]), ("t", [3, 2])], None, True),
    "TripletMarginWithDistanceLoss-fn": (_m("TripletMarginWithDistanceLoss",
                                            distance_function=nn.CosineSimilarity(), swap=True),
                                         [(4, 6), (4, 6), (4, 6)], None, True),
    "AdaptiveLogSoftmax-log_prob": (_m("AdaptiveLogSoftmaxWithLoss", 8, 12, [4, 8], head_bias=True), [(6, 8)],
                                    lambda m, x: (m.log_prob(x), m.predict(x)), True),
    "Fold-stride": (_m("Fold", (5, 6), 2, dilation=1, padding=1, stride=2), [(2, 12, 12)], None, True),
    "Unflatten-named": (_m("Unflatten", -1, (3, 2)), [X2], None, True),
    "Flatten-range": (_m("Flatten", 0, 2), [X2], None, True),
    "Softmax-neg-dim": (_m("Softmax", -2), [X2], None, True),
    "PReLU-single": (_m("PReLU", init=0.1), [X2], None, True),
    "CircularPad2d-asym": (_m("CircularPad2d", (2, 1, 0, 3)), [X2], None, True),
    "ReflectionPad2d-unbatched": (_m("ReflectionPad2d", (1, 2, 2, 0)), [(4, 7, 6)], None, True),
}


@pytest.mark.parametrize("vid", sorted(VARIANTS))
def test_module_variant_on_device_equals_cpu(vid):
    make, specs, call, train = VARIANTS[vid]

    def build():
        gg.manual_seed(0)
        return make(), specs
    compare(vid, run_case(build, "cpu", call, train), run_case(build, "cuda", call, train))


class _F(nn.Module):
    """An nn.functional call as a module (the functions that no module above, nor the op table, reaches)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


F = nn.functional
FUNCTIONAL = {
    "gumbel_softmax": (lambda x: F.gumbel_softmax(x, tau=0.7), [(4, 5)]),
    "gumbel_softmax-hard": (lambda x: F.gumbel_softmax(x, hard=True, dim=0), [(4, 5)]),
    "interpolate-area": (lambda x: F.interpolate(x, size=(3, 4), mode="area"), [X2]),
    "interpolate-nearest-3d": (lambda x: F.interpolate(x, scale_factor=(2, 1, 0.5)), [X3]),
    "upsample_nearest": (lambda x: F.upsample_nearest(x, scale_factor=2), [X2]),
    "upsample_bilinear": (lambda x: F.upsample_bilinear(x, size=(9, 9)), [X2]),
    "max_pool2d_with_indices": (lambda x: F.max_pool2d_with_indices(x, 2, return_indices=True), [X2]),
    "fractional_max_pool3d": (lambda x: F.fractional_max_pool3d(x, 2, output_size=(2, 3, 2)), [X3]),
    "max_unpool3d": (lambda x: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2, output_size=x.shape[2:]), [X3]),
    "lp_pool3d": (lambda x: F.lp_pool3d(x.abs() + 0.1, 3, 2), [X3]),
    "channel_shuffle": (lambda x: F.channel_shuffle(x, 2), [X2]),
    "batch_norm-train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [X2, (4,), (4,)]),
    "embedding_bag-max": (lambda i, w: F.embedding_bag(i, w, mode="max"), [("int", 10, (4, 3)), (10, 3)]),
    "normalize": (lambda x: F.normalize(x, p=3, dim=1), [X2]),
    "one_hot": (lambda i: F.one_hot(i, 6), [("int", 6, (4, 3))]),
    "multi_head_attention_forward": (
        lambda q, w, b, ow, ob: F.multi_head_attention_forward(q, q, q, 8, 2, w, b, None, None, False, 0.0, ow, ob,
                                                               need_weights=True),
        [SEQ, (24, 8), (24,), (8, 8), (8,)]),
}


@pytest.mark.parametrize("fid", sorted(FUNCTIONAL))
def test_functional_on_device_equals_cpu(fid):
    fn, specs = FUNCTIONAL[fid]

    def build():
        return _F(fn), specs
    compare(fid, run_case(build, "cpu"), run_case(build, "cuda"))
