"""Op table rows: the torch.* forms of nn.functional's functions under ATen's signatures (_torch_nn.py), the
native_* entry points and the primitives of ops/native.py, torch.convolution / constant_pad_nd /
affine_grid_generator / grid_sampler_2d -- values, grad_fn names and gradients against torch."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, NoGrad, Idx, arr, noncontig


def _e(*items):
    return lambda: [ErrorSample(Sample(*args), err, msg) for args, err, msg in items]


def _fn(name, *fixed):
    return lambda T, *a: getattr(T, name)(*a, *fixed)


def _gen(*specs):
    """specs: lists of argument makers f(rng, dt) -> value, one list per sample."""
    def gen(rng, dt):
        return [Sample(*[m(rng, dt) if callable(m) else m for m in sp]) for sp in specs]
    return gen


def A(*shape, low=-2.0, high=2.0, nc=False):
    def f(rng, dt):
        a = arr(rng, shape, dt, low, high)
        return noncontig(a) if nc else a
    return f


def N(*shape, low=-2.0, high=2.0):
    return lambda rng, dt: NoGrad(arr(rng, shape, dt, low, high))


def S(*shape):       # a ±1 target
    return lambda rng, dt: NoGrad(np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0).astype(dt))


def P(*shape):       # probabilities in (0, 1)
    return lambda rng, dt: NoGrad(rng.uniform(0.05, 0.95, size=shape).astype(dt))


def _first(name, *fixed):
    return lambda T, *a: getattr(T, name)(*a, *fixed)[0]


OPS = [
    # -- losses: reduction as ATen's int (0 none, 1 mean, 2 sum) --
    OpInfo("torch.binary_cross_entropy_with_logits", _fn("binary_cross_entropy_with_logits"),
           _gen([A(3, 4), P(3, 4)], [A(3, 4), P(3, 4), N(4, low=0.5), N(4, low=0.5), 0], [A(5), P(5), None, None, 2], [A(3, 4), P(3, 4), None, None, 1])),
    OpInfo("torch.cosine_embedding_loss", _fn("cosine_embedding_loss"),
           _gen([A(3, 4), A(3, 4), S(3)], [A(3, 4), A(3, 4), S(3), 0.2, 0], [A(3, 4), A(3, 4), S(3), -0.1, 2], [A(3, 4), A(3, 4), S(3), 0.0, 1])),
    OpInfo("torch.hinge_embedding_loss", _fn("hinge_embedding_loss"),
           _gen([A(3, 4), S(3, 4)], [A(3, 4), S(3, 4), 0.5, 0], [A(5), S(5), 2.0, 2], [A(5), S(5), 1.0, 1])),
    OpInfo("torch.kl_div", _fn("kl_div"),
           _gen([A(3, 4), P(3, 4)], [A(3, 4), P(3, 4), 0], [A(3, 4), P(3, 4), 2], [A(3, 4), P(3, 4), 1])),
    OpInfo("torch.kl_div_log_target", lambda T, a, b, r: T.kl_div(a, b, r, log_target=True),
           _gen([A(3, 4), N(3, 4, low=-3, high=-0.1), 1], [A(3, 4), N(3, 4, low=-3, high=-0.1), 0])),
    OpInfo("torch.margin_ranking_loss", _fn("margin_ranking_loss"),
           _gen([A(5), A(5), S(5)], [A(5), A(5), S(5), 0.3, 0], [A(5), A(5), S(5), 0.1, 2], [A(5), A(5), S(5), 0.1, 1])),
    OpInfo("torch.poisson_nll_loss", _fn("poisson_nll_loss"),
           _gen([A(3, 4), P(3, 4), True, False, 1e-8, 1], [A(3, 4, low=0.2), P(3, 4), False, True, 1e-8, 0],
                [A(3, 4), N(3, 4, low=1.5, high=4), True, True, 1e-8, 2])),
    OpInfo("torch.triplet_margin_loss", _fn("triplet_margin_loss"),
           _gen([A(3, 4), A(3, 4), A(3, 4)], [A(3, 4), A(3, 4), A(3, 4), 0.5, 1.0, 1e-6, True, 0],
                [A(3, 4), A(3, 4), A(3, 4), 1.0, 2.0, 1e-6, False, 2],
                [A(3, 4), A(3, 4), A(3, 4), 1.0, 2.0, 1e-6, False, 1])),
    OpInfo("torch.ctc_loss", lambda T, lp, t, il, tl, *a: T.ctc_loss(lp.log_softmax(2), t, il, tl, *a),
           lambda rng, dt: [Sample(arr(rng, (6, 2, 4), dt), Idx(np.array([[1, 2], [1, 3]])), [6, 5], [2, 1]),
                            Sample(arr(rng, (6, 2, 4), dt), Idx(np.array([[1, 2], [1, 3]])), [6, 6], [2, 2], 0, 1),
                            Sample(arr(rng, (6, 2, 4), dt), Idx(np.array([[1, 2], [3, 3]])), [6, 6], [2, 2], 0, 2)],
           gradgrad=False),
    # -- pooling, shuffling, sampling, convolution, padding --
    OpInfo("torch.max_pool3d", _fn("max_pool3d"),
           _gen([A(1, 2, 4, 4, 4), 2], [A(1, 2, 5, 4, 4), (3, 2, 2), (), 1], [A(1, 2, 5, 5, 5), 2, 1, 0, 1, True])),
    OpInfo("torch.max_pool1d_with_indices", _fn("max_pool1d_with_indices"),
           _gen([A(2, 3, 7), 2], [A(2, 3, 7), 3, 2, 1], [A(2, 3, 8), 2, (), 0, 2, True])),
    OpInfo("torch.adaptive_max_pool1d", _fn("adaptive_max_pool1d"), _gen([A(2, 3, 7), 3], [A(2, 3, 8), (4,)])),
    OpInfo("torch.channel_shuffle", _fn("channel_shuffle"), _gen([A(2, 6, 3), 3], [A(1, 4, 2, 2), 2])),
    OpInfo("torch.native_channel_shuffle", _fn("native_channel_shuffle"), _gen([A(2, 6, 3), 3], [A(1, 4, 2, 2), 2]),
           differentiable=False),     # no derivative in torch (tests/test_torch_surface.py checks the error)
    OpInfo("torch.constant_pad_nd", _fn("constant_pad_nd"),
           _gen([A(2, 3), [1, 2]], [A(2, 3), [1, 0, 0, 2], 1.5], [A(2, 3, 4), [-1, 1], -2.0])),
    OpInfo("torch.convolution", _fn("convolution"),
           _gen([A(2, 3, 7), A(4, 3, 3), A(4), [1], [1], [1], False, [0], 1],
                [A(1, 4, 5, 5), A(4, 2, 3, 3), None, [2, 1], [1, 0], [1, 1], False, [0, 0], 2],
                [A(2, 3, 5), A(3, 2, 3), A(2), [2], [1], [1], True, [1], 1])),
    OpInfo("torch.conv_transpose3d", _fn("conv_transpose3d"),
           _gen([A(1, 2, 3, 3, 2), A(2, 3, 2, 2, 2), A(3)], [A(1, 2, 2, 3, 2), A(2, 1, 2, 2, 1), None, 2, 1, 1, 2])),
    OpInfo("torch.affine_grid_generator", _fn("affine_grid_generator"),
           _gen([A(2, 2, 3), [2, 1, 3, 4], False], [A(1, 2, 3), [1, 3, 4, 4], True])),
    OpInfo("torch.grid_sampler_2d", _fn("grid_sampler_2d"),
           _gen([A(1, 2, 4, 5), N(1, 3, 3, 2, low=-1.1, high=1.1), 0, 0, False],
                [A(1, 2, 4, 5), N(1, 3, 3, 2, low=-1.1, high=1.1), 0, 1, True]), gradgrad=False),
    OpInfo("torch.grid_sampler", _fn("grid_sampler"),
           _gen([A(1, 2, 4, 5), N(1, 3, 3, 2, low=-1.1, high=1.1), 0, 2, False],
                [A(1, 2, 4, 5), N(1, 3, 3, 2, low=-1.1, high=1.1), 1, 0, True]), gradgrad=False),
    OpInfo("torch.conv_tbc", _fn("conv_tbc"),
           _gen([A(5, 2, 3), A(3, 3, 4), A(4)], [A(5, 2, 3), A(2, 3, 4), A(4), 2], [A(4, 1, 2, nc=True), A(1, 2, 3), A(3), 1]),
           gradgrad=False,      # glassgrad's ConvTbcBackward0 has no double backward
           errors=lambda: [ErrorSample(Sample(np.zeros((5, 2)), np.zeros((3, 3, 4)), np.zeros(4)), RuntimeError,
                                       "Input must have 3 dims: time, batch, in_channel"),
                           ErrorSample(Sample(np.zeros((5, 2, 3)), np.zeros((3, 2, 4)), np.zeros(4)), RuntimeError,
                                       "Input dim 2 (input channels) is not == dim 1 in the weight tensor"),
                           ErrorSample(Sample(np.zeros((5, 2, 3)), np.zeros((3, 3, 4)), np.zeros(3)), RuntimeError,
                                       "Bias size must equal dim 2 in the weight tensor (output channels)."),
                           ErrorSample(Sample(np.zeros((5, 2, 3)), np.zeros((9, 3, 4)), np.zeros(4)), RuntimeError,
                                       "Trying to create tensor with negative dimension -3: [-3, 2, 4]")]),
    OpInfo("F.conv_tbc", lambda T, *a: T.nn.functional.conv_tbc(*a), _gen([A(5, 2, 3), A(3, 3, 4), A(4), 1]),
           gradgrad=False),
    OpInfo("torch.grid_sampler_3d", _fn("grid_sampler_3d"),
           _gen([A(1, 2, 3, 4, 5), N(1, 2, 3, 2, 3, low=-1.1, high=1.1), 0, 0, False],
                [A(2, 1, 3, 3, 4), N(2, 2, 2, 3, 3, low=-1.2, high=1.2), 0, 1, True],
                [A(1, 2, 3, 4, 3), N(1, 2, 2, 2, 3, low=-1.5, high=1.5), 0, 2, False],
                [A(1, 2, 3, 4, 3), N(1, 2, 2, 2, 3, low=-1.1, high=1.1), 1, 0, True],
                [A(1, 2, 3, 4, 3), N(1, 2, 2, 2, 3, low=-1.5, high=1.5), 1, 2, True]),
           errors=lambda: [ErrorSample(Sample(np.zeros((1, 2, 3, 3)), np.zeros((1, 2, 2, 2)), 0, 0, False),
                                       RuntimeError, "expected 5D input and grid with same number of dimensions")]),
    OpInfo("torch.grid_sampler_3d_grid_grad", lambda T, x, g, *a: T.grid_sampler_3d(x, g, *a),
           _gen([N(1, 2, 3, 4, 5), A(1, 2, 3, 2, 3, low=-1.1, high=1.1), 0, 0, False],
                [A(1, 2, 3, 4, 3), A(1, 2, 2, 2, 3, low=-1.5, high=1.5), 0, 2, True])),
    OpInfo("F.grid_sample_5d", lambda T, x, g, **k: T.nn.functional.grid_sample(x, g, align_corners=False, **k),
           _gen([A(1, 2, 3, 4, 5), N(1, 2, 3, 2, 3, low=-1.1, high=1.1)])),
    # -- native norms and dropout, norm_except_dim --
    OpInfo("torch.native_batch_norm", _fn("native_batch_norm"),
           _gen([A(4, 3, 5), A(3), A(3), None, None, True, 0.1, 1e-5], [A(4, 3), None, None, None, None, True, 0.1, 1e-5])),
    # eval mode: the gradient is linear in the cotangent; torch's still records a graph, glassgrad's (as
    # F.batch_norm's) does not, so there is no second derivative to compare
    OpInfo("torch.native_batch_norm_eval", _fn("native_batch_norm"),
           _gen([A(4, 3), A(3), None, N(3), N(3, low=0.5), False, 0.1, 1e-5]), gradgrad=False),
    OpInfo("torch.native_layer_norm", _fn("native_layer_norm"),
           _gen([A(2, 3, 5), [5], A(5), A(5), 1e-5], [A(2, 3, 4), (3, 4), None, None, 1e-5])),
    OpInfo("torch.native_group_norm", _first("native_group_norm"),
           _gen([A(2, 6, 5), A(6), A(6), 2, 6, 5, 3, 1e-5], [A(2, 4, 2, 3), None, None, 2, 4, 6, 2, 1e-5])),
    OpInfo("torch.native_dropout_eval", _fn("native_dropout"), _gen([A(3, 4), 0.5, False])),
    OpInfo("torch.norm_except_dim", _fn("norm_except_dim"),
           _gen([A(3, 4, 2)], [A(3, 4, 2), 2, 1], [A(3, 4, 2), 3, 2], [A(3, 4), 2, -1], [A(3, 4, 2), 1, 0])),
    # -- RNN cells --
    OpInfo("torch.rnn_tanh_cell", _fn("rnn_tanh_cell"),
           _gen([A(2, 3), A(2, 4), A(4, 3), A(4, 4), A(4), A(4)], [A(2, 3), A(2, 4), A(4, 3), A(4, 4)])),
    OpInfo("torch.rnn_relu_cell", _fn("rnn_relu_cell"),
           _gen([A(2, 3), A(2, 4), A(4, 3), A(4, 4), A(4), A(4)], [A(2, 3), A(2, 4), A(4, 3), A(4, 4)])),
    OpInfo("torch.lstm_cell", lambda T, x, h, c, *w: T.lstm_cell(x, (h, c), *w),
           _gen([A(2, 3), A(2, 4), A(2, 4), A(16, 3), A(16, 4), A(16), A(16)], [A(2, 3), A(2, 4), A(2, 4), A(16, 3), A(16, 4)])),
    OpInfo("torch.gru_cell", _fn("gru_cell"),
           _gen([A(2, 3), A(2, 4), A(12, 3), A(12, 4), A(12), A(12)], [A(2, 3), A(2, 4), A(12, 3), A(12, 4)])),
]
