"""Op table rows: nn.functional normalisation, dropout and embedding (ops/norm.py, ops/dropout.py,
ops/embedding.py, nn/functional/_norm.py, _dropout.py, _sparse.py)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, Idx, NoGrad, arr, noncontig


def _F(T):
    return T.nn.functional


def _pos(rng, shape, dt):
    return arr(rng, shape, dt, 0.5, 2.0)


# -- batch norm: the running stats are returned too (they are updated in place) ---------------------------
def _bn(T, x, rm=None, rv=None, w=None, b=None, **k):
    y = _F(T).batch_norm(x, rm, rv, w, b, **k)
    return (y,) + tuple(t for t in (rm, rv) if t is not None)


def _bn_train(rng, dt):
    A = lambda s: arr(rng, s, dt)  # noqa: E731
    S = lambda c: NoGrad(arr(rng, (c,), dt))  # noqa: E731
    V = lambda c: NoGrad(_pos(rng, (c,), dt))  # noqa: E731
    return [Sample(A((4, 3, 5)), S(3), V(3), A((3,)), A((3,)), training=True, name="3d_affine"),
            Sample(A((6, 4)), S(4), V(4), training=True, momentum=0.3, name="2d_noaffine"),
            Sample(noncontig(A((3, 2, 2, 3))), S(2), V(2), A((2,)), A((2,)), training=True, name="4d_noncontig"),
            Sample(A((2, 3, 2, 2, 2)), S(3), V(3), A((3,)), None, training=True, eps=1e-3, name="5d_weight_only"),
            Sample(A((5, 3)), None, None, A((3,)), A((3,)), training=True, name="no_running_stats"),
            Sample(A((4, 2, 3)), None, None, training=True, name="no_stats_no_affine"),
            Sample(A((0, 3)), S(3), V(3), A((3,)), A((3,)), training=True, name="empty_batch")]


def _bn_eval(rng, dt):
    A = lambda s: arr(rng, s, dt)  # noqa: E731
    S = lambda c: NoGrad(arr(rng, (c,), dt))  # noqa: E731
    V = lambda c: NoGrad(_pos(rng, (c,), dt))  # noqa: E731
    return [Sample(A((4, 3, 5)), S(3), V(3), A((3,)), A((3,)), name="3d_affine"),
            Sample(A((6, 4)), S(4), V(4), A((4,)), None, eps=0.1, name="2d_weight"),
            Sample(noncontig(A((3, 2, 2, 3))), S(2), V(2), A((2,)), A((2,)), training=False, name="4d_noncontig")]


def _bn_errors():
    x = np.ones((4, 3), np.float32)
    return [ErrorSample(Sample(x, np.zeros(4, np.float32), np.ones(4, np.float32)), RuntimeError,
                        "running_mean should contain 3 elements not 4"),
            ErrorSample(Sample(x, np.zeros(3, np.float32), np.ones(3, np.float32), np.ones(4, np.float32)),
                        RuntimeError, "weight should contain 3 elements not 4"),
            ErrorSample(Sample(np.ones((1, 3), np.float32), None, None, training=True), ValueError,
                        "Expected more than 1 value per channel when training, got input size torch.Size([1, 3])"),
            ErrorSample(Sample(x, None, None, training=True, eps=0.0), ValueError,
                        "batch_norm eps must be positive during training"),
            ErrorSample(Sample(x, None, None), RuntimeError, "running_mean must be defined in evaluation mode"),
            ErrorSample(Sample(x, np.zeros(3, np.float64), np.ones(3, np.float32)), RuntimeError,
                        "mixed dtype (CPU): expect parameter to have scalar type of Float"),
            ErrorSample(Sample(x.astype(np.float64), np.zeros(3, np.float32), np.ones(3, np.float32)), RuntimeError,
                        "mixed dtype (CPU): all inputs must share same datatype."),
            ErrorSample(Sample(x, None, None, np.ones(3, np.float32), np.ones(3, np.float64), training=True),
                        RuntimeError, "expected scalar type Float but found Double")]


# -- layer / group / instance / rms / local response norm ---------------------------------------------
def _ln(T, x, ns, w=None, b=None, **k):
    return _F(T).layer_norm(x, ns, w, b, **k)


def _ln_samples(rng, dt):
    A = lambda s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A((3, 4)), (4,), name="2d"),
            Sample(A((2, 3, 4)), (3, 4), A((3, 4)), A((3, 4)), name="two_dims_affine"),
            Sample(A((5,)), (5,), A((5,)), None, eps=1e-3, name="1d_weight_only"),
            Sample(A((2, 3)), [2, 3], A((2, 3)), A((2, 3)), name="whole"),
            Sample(noncontig(A((4, 3))), (3,), A((3,)), A((3,)), name="noncontig"),
            Sample(A((0, 4)), (4,), A((4,)), A((4,)), name="empty_batch")]


def _ln_errors():
    x = np.ones((4, 3), np.float32)
    return [ErrorSample(Sample(x, (4,)), RuntimeError, "Given normalized_shape=[4], expected input with shape [*, 4]"),
            ErrorSample(Sample(x, (3,), np.ones(4, np.float32)), RuntimeError,
                        "Expected weight to be of same shape as normalized_shape"),
            ErrorSample(Sample(x, 3), TypeError, "must be tuple of ints, not int"),
            ErrorSample(Sample(x, (3,), np.ones(3, np.float64)), RuntimeError,
                        "mixed dtype (CPU): expect parameter to have scalar type of Float"),
            ErrorSample(Sample(x.astype(np.float64), (3,), np.ones(3, np.float32)), RuntimeError,
                        "mixed dtype (CPU): all inputs must share same datatype.")]


def _gn(T, x, g, w=None, b=None, **k):
    return _F(T).group_norm(x, g, w, b, **k)


def _gn_samples(rng, dt):
    A = lambda s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A((4, 6, 5)), 3, A((6,)), A((6,)), name="3d_affine"),
            Sample(A((3, 8)), 2, name="2d"),
            Sample(A((2, 6, 2, 3)), 2, A((6,)), None, eps=1e-3, name="4d_weight_only"),
            Sample(A((2, 4, 3)), 1, A((4,)), None, name="one_group"),
            Sample(A((2, 4, 5)), 4, A((4,)), A((4,)), name="group_per_channel"),
            Sample(noncontig(A((3, 8))), 2, A((8,)), A((8,)), name="noncontig")]


def _gn_errors():
    return [ErrorSample(Sample(np.ones((4, 3, 2), np.float32), 2), RuntimeError,
                        "Expected number of channels in input to be divisible by num_groups"),
            ErrorSample(Sample(np.ones((4,), np.float32), 2), RuntimeError, "Expected at least 2 dimensions"),
            ErrorSample(Sample(np.ones((1, 4), np.float32), 4), ValueError,
                        "Expected more than 1 value per channel when training, got input size [1, 4]"),
            ErrorSample(Sample(np.ones((4, 3, 2), np.float32), 3, np.ones(4, np.float32)), RuntimeError,
                        "Expected weight to be a vector of size equal to the number of channels")]


def _in(T, x, rm=None, rv=None, w=None, b=None, **k):
    y = _F(T).instance_norm(x, rm, rv, w, b, **k)
    return (y,) + tuple(t for t in (rm, rv) if t is not None)


def _in_samples(rng, dt):
    A = lambda s: arr(rng, s, dt)  # noqa: E731
    S = lambda c: NoGrad(arr(rng, (c,), dt))  # noqa: E731
    V = lambda c: NoGrad(_pos(rng, (c,), dt))  # noqa: E731
    return [Sample(A((2, 3, 5)), name="3d"),
            Sample(A((2, 3, 2, 3)), None, None, A((3,)), A((3,)), name="4d_affine"),
            Sample(A((3, 2, 4)), S(2), V(2), momentum=0.2, name="running_stats"),
            Sample(A((2, 2, 4)), S(2), V(2), A((2,)), A((2,)), use_input_stats=False, name="use_running_stats"),
            Sample(noncontig(A((2, 3, 4))), None, None, A((3,)), None, name="noncontig")]


def _in_errors():
    return [ErrorSample(Sample(np.ones((4, 3, 1), np.float32)), ValueError,
                        "Expected more than 1 spatial element when training"),
            ErrorSample(Sample(np.ones((4, 3, 2), np.float32), use_input_stats=False), RuntimeError,
                        "Expected running_mean and running_var to be defined when use_input_stats is false")]


def _rms(T, x, ns, w=None, **k):
    return _F(T).rms_norm(x, ns, w, **k)


def _rms_samples(rng, dt):
    A = lambda s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A((3, 4)), (4,), name="2d"),
            Sample(A((2, 3, 4)), (3, 4), A((3, 4)), name="two_dims_weight"),
            Sample(A((5,)), (5,), A((5,)), eps=1e-3, name="1d_eps"),
            Sample(noncontig(A((4, 3))), (3,), A((3,)), name="noncontig"),
            Sample(A((0, 4)), (4,), name="empty")]


def _rms_errors():
    return [ErrorSample(Sample(np.ones((4, 3), np.float32), (4,)), RuntimeError,
                        "Given normalized_shape=[4], expected input with shape [*4]"),
            ErrorSample(Sample(np.ones((4, 3), np.float32), (3,), np.ones(4, np.float32)), RuntimeError,
                        "Expected weight to be of same shape as normalized_shape")]


def _lrn_samples(rng, dt):
    A = lambda s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A((2, 5, 4)), 2, name="3d_size2"),
            Sample(A((2, 5, 4)), 3, alpha=0.5, beta=0.6, k=2.0, name="3d_size3"),
            Sample(A((2, 4, 3, 3)), 3, alpha=0.3, name="4d"),
            Sample(A((1, 4, 2, 2, 2)), 5, alpha=0.2, name="5d_wide"),
            Sample(noncontig(A((2, 3, 4))), 2, alpha=0.1, name="noncontig")]


# -- dropout: seeded, so both libraries draw the same mask ------------------------------------------------
def _seeded(fname):
    def op(T, x, *a, **k):
        T.manual_seed(1234)
        return getattr(_F(T), fname)(x, *a, **k)
    return op


def _do_samples(shapes, alpha=False):
    def f(rng, dt):
        out = []
        for i, s in enumerate(shapes):
            out.append(Sample(arr(rng, s, dt), 0.3, True, name=f"p03_{len(s)}d"))
            out.append(Sample(arr(rng, s, dt), p=0.7, training=True, name=f"p07_{len(s)}d"))
        s = shapes[0]
        out += [Sample(arr(rng, s, dt), 0.0, True, name="p0"), Sample(arr(rng, s, dt), 1.0, True, name="p1"),
                Sample(arr(rng, s, dt), 0.5, False, name="eval"),
                Sample(noncontig(arr(rng, (6, 4), dt)), 0.4, True, name="noncontig"),
                Sample(arr(rng, (0,) + tuple(s[1:]), dt), 0.5, True, name="empty")]
        return out
    return f


def _p_error():
    return [ErrorSample(Sample(np.ones((4, 3), np.float32), 1.5), ValueError,
                        "dropout probability has to be between 0 and 1, but got 1.5"),
            ErrorSample(Sample(np.ones((4, 3), np.float32), -0.1), ValueError, "dropout probability")]


# -- embedding ---------------------------------------------------------------------------------------
def _emb(T, idx, w, **k):
    return _F(T).embedding(idx, w, **k)


def _emb_renorm(T, idx, w, **k):
    y = _F(T).embedding(idx, w, **k)
    return y, w.detach().clone()


def _emb_samples(rng, dt):
    W = lambda: arr(rng, (10, 3), dt)  # noqa: E731
    I = lambda s: Idx(rng.integers(0, 10, s))  # noqa: E731, E741
    return [Sample(I((5,)), W(), name="1d"),
            Sample(I((2, 4)), W(), name="2d_repeats"),
            Sample(Idx(np.array(3)), W(), name="0d_index"),
            Sample(Idx(np.zeros((0,), np.int64)), W(), name="empty"),
            Sample(Idx(np.array([1, 2, 2, 9, 1], np.int32)), W(), name="int32_index"),
            Sample(I((6,)), noncontig(arr(rng, (10, 3), dt)), name="noncontig_weight")]


def _emb_pad_samples(rng, dt):
    W = lambda: arr(rng, (10, 3), dt)  # noqa: E731
    return [Sample(Idx(np.array([[1, 2, 2], [0, 2, 7]])), W(), padding_idx=2, name="padding"),
            Sample(Idx(np.array([1, 9, 9, 3])), W(), padding_idx=-1, scale_grad_by_freq=True, name="neg_padding"),
            Sample(Idx(np.array([[1, 2, 2], [0, 2, 7]])), W(), scale_grad_by_freq=True, name="scale_by_freq")]


def _emb_renorm_samples(rng, dt):
    W = lambda: arr(rng, (10, 3), dt)  # noqa: E731
    return [Sample(Idx(np.array([[1, 2, 2], [0, 2, 7]])), W(), max_norm=1.0, name="max_norm"),
            Sample(Idx(np.array([1, 5, 5])), W(), max_norm=0.5, norm_type=1.0, name="max_norm_l1"),
            Sample(Idx(np.array([4, 3])), W(), max_norm=0.5, norm_type=float("inf"), name="max_norm_inf")]


def _emb_errors():
    w = np.ones((10, 3), np.float32)
    return [ErrorSample(Sample(np.array([1.0], np.float32), w), RuntimeError,
                        "Expected tensor for argument #1 'indices' to have one of the following scalar types"),
            ErrorSample(Sample(Idx(np.array([10])), w), IndexError, "index out of range in self"),
            ErrorSample(Sample(Idx(np.array([-1])), w), IndexError, "index out of range in self"),
            ErrorSample(Sample(Idx(np.array([1])), w, padding_idx=10), AssertionError,
                        "Padding_idx must be within num_embeddings"),
            ErrorSample(Sample(Idx(np.array([1])), np.ones(3, np.float32)), RuntimeError, "'weight' must be 2-D")]


def _bag(T, idx, w, offsets=None, **k):
    return _F(T).embedding_bag(idx, w, offsets, **k)


def _bag_samples(mode, freq=False):
    def f(rng, dt):
        W = lambda: arr(rng, (10, 3), dt)  # noqa: E731
        idx = Idx(np.array([1, 2, 2, 0, 9, 1, 3]))
        return [Sample(idx, W(), Idx(np.array([0, 2, 2, 5])), mode=mode, name="empty_bag"),
                Sample(Idx(np.array([[1, 2, 4], [4, 3, 2]])), W(), mode=mode, name="2d_input"),
                Sample(idx, W(), Idx(np.array([0, 3, 7])), mode=mode, include_last_offset=True, name="last_offset"),
                Sample(idx, W(), Idx(np.array([0, 4])), mode=mode, padding_idx=2, name="padding"),
                Sample(Idx(np.array([3, 3, 5], np.int32)), W(), Idx(np.array([0, 1], np.int32)), mode=mode,
                       name="int32"),
                Sample(Idx(np.zeros((0,), np.int64)), W(), Idx(np.array([0, 0])), mode=mode, name="empty_input")] \
            if not freq else \
            [Sample(idx, W(), Idx(np.array([0, 2, 2, 5])), mode=mode, scale_grad_by_freq=True, name="freq"),
             Sample(idx, W(), Idx(np.array([0, 3])), mode=mode, scale_grad_by_freq=True, padding_idx=1,
                    name="freq_padding")]
    return f


def _bag_psw_samples(rng, dt):
    W = lambda: arr(rng, (10, 3), dt)  # noqa: E731
    idx = np.array([1, 2, 2, 0, 9, 1, 3])
    return [Sample(Idx(idx), W(), Idx(np.array([0, 2, 2, 5])), mode="sum", per_sample_weights=arr(rng, (7,), dt),
                   name="psw"),
            Sample(Idx(idx), W(), Idx(np.array([0, 5])), mode="sum", per_sample_weights=arr(rng, (7,), dt),
                   padding_idx=2, name="psw_padding"),
            Sample(Idx(idx.reshape(1, 7)), W(), mode="sum", per_sample_weights=arr(rng, (1, 7), dt), name="psw_2d")]


def _bag_errors():
    w = np.ones((10, 3), np.float32)
    i = Idx(np.array([1, 2, 3]))
    return [ErrorSample(Sample(i, w, Idx(np.array([0])), mode="min"), ValueError, "mode has to be one of sum, mean or max"),
            ErrorSample(Sample(i, w, Idx(np.array([1]))), RuntimeError, "offsets[0] has to be 0"),
            ErrorSample(Sample(i, w, None), ValueError, "offsets has to be a 1D Tensor but got None"),
            ErrorSample(Sample(i, w, Idx(np.array([0])), mode="mean", per_sample_weights=np.ones(3, np.float32)),
                        NotImplementedError, "per_sample_weights was not None"),
            ErrorSample(Sample(i, w, Idx(np.array([0])), mode="max", scale_grad_by_freq=True), ValueError,
                        "max mode does not support scaling the gradient by the frequency"),
            ErrorSample(Sample(Idx(np.array([[1, 2]])), w, Idx(np.array([0]))), ValueError,
                        "if input is 2D, then offsets has to be None"),
            ErrorSample(Sample(i, np.ones(3, np.float32), Idx(np.array([0]))), ValueError, "weight has to be a 2D Tensor"),
            ErrorSample(Sample(i, w, Idx(np.array([0])), padding_idx=12), RuntimeError,
                        "padding_idx must be within the number of embeddings, -10 through 9, but got 12"),
            ErrorSample(Sample(i, w, Idx(np.array([0, 4]))), RuntimeError,
                        "offsets[-1] can not be greater than input's length 3 but got offsets[-1] of 4"),
            ErrorSample(Sample(Idx(np.array([1, 12])), w, Idx(np.array([0]))), RuntimeError,
                        "Index 1 of input takes value 12 which is not in the valid range [0, 10)")]


def _one_hot_samples(rng, dt):
    return [Sample(Idx(np.array([0, 3, 1])), name="infer"), Sample(Idx(np.array([[0, 2], [1, 1]])), 5, name="2d"),
            Sample(Idx(np.array(2)), 4, name="0d"), Sample(Idx(np.zeros((0,), np.int64)), 3, name="empty")]


def _one_hot_errors():
    return [ErrorSample(Sample(Idx(np.array([1, -1]))), RuntimeError, "Class values must be non-negative."),
            ErrorSample(Sample(Idx(np.array([1, 3])), 3), RuntimeError, "Class values must be smaller than num_classes."),
            ErrorSample(Sample(np.array([1.0], np.float32)), RuntimeError, "one_hot is only applicable to index tensor"),
            ErrorSample(Sample(Idx(np.zeros((0,), np.int64))), RuntimeError, "Can not infer total number of classes")]


OPS = [
    OpInfo("nn.functional.batch_norm_train", _bn, _bn_train, errors=_bn_errors, grad_atol=2e-4),
    OpInfo("nn.functional.batch_norm_eval", _bn, _bn_eval),
    OpInfo("nn.functional.layer_norm", _ln, _ln_samples, errors=_ln_errors),
    OpInfo("nn.functional.group_norm", _gn, _gn_samples, errors=_gn_errors),
    # torch 2.13 cannot differentiate these (group_norm with a bias but no weight: "tensor does not have a
    # device"; layer_norm's double backward with a bias but no weight: "Expected a proper Tensor but got None")
    OpInfo("nn.functional.group_norm_bias_only", _gn, lambda rng, dt: [
        Sample(arr(rng, (2, 4, 3), dt), 2, None, arr(rng, (4,), dt))], differentiable=False),
    OpInfo("nn.functional.layer_norm_bias_only", _ln, lambda rng, dt: [
        Sample(arr(rng, (2, 3), dt), (2, 3), None, arr(rng, (2, 3), dt)),
        Sample(arr(rng, (4, 3), dt), (3,), None, arr(rng, (3,), dt))], gradgrad=False),
    OpInfo("nn.functional.instance_norm", _in, _in_samples, errors=_in_errors),
    OpInfo("nn.functional.rms_norm", _rms, _rms_samples, errors=_rms_errors),
    OpInfo("nn.functional.local_response_norm", lambda T, x, *a, **k: _F(T).local_response_norm(x, *a, **k),
           _lrn_samples),
    OpInfo("nn.functional.dropout", _seeded("dropout"), _do_samples([(4, 5), (2, 3, 4)]), errors=_p_error),
    OpInfo("nn.functional.dropout1d", _seeded("dropout1d"), _do_samples([(3, 4, 5), (4, 5)]), errors=lambda: [
        ErrorSample(Sample(np.ones(4, np.float32), 0.5), RuntimeError, "dropout1d: Expected 2D or 3D input")]),
    OpInfo("nn.functional.dropout2d", _seeded("dropout2d"), _do_samples([(2, 3, 4, 2)]), errors=_p_error),
    OpInfo("nn.functional.dropout3d", _seeded("dropout3d"), _do_samples([(2, 3, 2, 2, 2), (3, 2, 2, 2)])),
    OpInfo("nn.functional.alpha_dropout", _seeded("alpha_dropout"), _do_samples([(4, 5), (2, 3, 4)]),
           errors=_p_error),
    OpInfo("nn.functional.feature_alpha_dropout", _seeded("feature_alpha_dropout"),
           _do_samples([(2, 3, 4), (3, 4, 2, 2)]), errors=lambda: [
               ErrorSample(Sample(np.ones(4, np.float32), 0.5, True), RuntimeError,
                           "Feature dropout requires at least 2 dimensions in the input")]),
    OpInfo("nn.functional.embedding", _emb, _emb_samples, errors=_emb_errors),
    # the padding row gets no gradient although the forward reads it, and scale_grad_by_freq rescales the
    # gradient: finite differences disagree by design
    OpInfo("nn.functional.embedding_padding_freq", _emb, _emb_pad_samples, gradcheck=False),
    # max_norm rewrites the weight in place (returned too), so finite differences through it are meaningless
    OpInfo("nn.functional.embedding_max_norm", _emb_renorm, _emb_renorm_samples, gradcheck=False),
    OpInfo("nn.functional.embedding_bag_sum", _bag, _bag_samples("sum"), errors=_bag_errors),
    OpInfo("nn.functional.embedding_bag_mean", _bag, _bag_samples("mean")),
    OpInfo("nn.functional.embedding_bag_max", _bag, _bag_samples("max")),
    # scale_grad_by_freq rescales the gradient (not a true derivative)
    OpInfo("nn.functional.embedding_bag_sum_freq", _bag, _bag_samples("sum", True), gradcheck=False),
    OpInfo("nn.functional.embedding_bag_mean_freq", _bag, _bag_samples("mean", True), gradcheck=False),
    # torch: "derivative for aten::_embedding_bag_per_sample_weights_backward is not implemented"
    OpInfo("nn.functional.embedding_bag_per_sample_weights", _bag, _bag_psw_samples, gradgrad=False),
    OpInfo("nn.functional.one_hot", lambda T, x, *a: _F(T).one_hot(x, *a), _one_hot_samples, differentiable=False,
           outputs_int=True, dtypes=("int64",), errors=_one_hot_errors),
]
