"""Op table rows: loss functions (nn/functional/_loss.py, ops/loss.py, ops/loss_bce.py, ops/loss_margin.py,
ops/loss_ctc.py).

Every sample is run with reduction 'none', 'mean' and 'sum' (where the loss has a reduction).
"""
import numpy as np

from .core import functional, OpInfo, Sample, ErrorSample, Idx, NoGrad, arr, noncontig

REDS = ("none", "mean", "sum")


_F = functional


def _reds(base):
    """Expand base samples (a function rng, dt -> [Sample]) over the three reductions."""
    def f(rng, dt):
        out = []
        for s in base(rng, dt):
            for r in REDS:
                out.append(Sample(*s.args, name=f"{s.name}_{r}", reduction=r, **s.kwargs))
        return out
    return f


def _idx(rng, C, shape):
    return Idx(rng.integers(0, C, size=shape).astype(np.int64))


def _probs(rng, shape, dt):
    a = rng.uniform(0.05, 1.0, size=shape)
    return (a / a.sum(axis=1 if len(shape) > 1 else 0, keepdims=True)).astype(dt)


# -- nll / cross entropy ----------------------------------------------------------------------------
def _nll(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    t_ign = rng.integers(0, 5, size=6)
    t_ign[[1, 4]] = -100
    t_ign2 = rng.integers(0, 5, size=6)
    t_ign2[[0, 2]] = 3
    return [Sample(A(4, 5), _idx(rng, 5, (4,)), name="2d"),
            Sample(A(6, 5), Idx(t_ign), name="ignore_default"),
            Sample(A(6, 5), Idx(t_ign2), ignore_index=3, name="ignore_index"),
            Sample(A(6, 5), _idx(rng, 5, (6,)), weight=NoGrad(arr(rng, (5,), dt, 0.2, 2.0)), name="weight"),
            Sample(A(6, 5), Idx(t_ign), weight=NoGrad(arr(rng, (5,), dt, 0.2, 2.0)), name="weight_ignore"),
            Sample(A(5), Idx(np.array(2)), name="unbatched"),
            Sample(A(2, 4, 3), _idx(rng, 4, (2, 3)), name="3d"),
            Sample(A(2, 4, 3, 2), _idx(rng, 4, (2, 3, 2)), name="4d"),
            Sample(A(2, 3, 2, 2, 2), _idx(rng, 3, (2, 2, 2, 2)), weight=NoGrad(arr(rng, (3,), dt, 0.2, 2.0)),
                   name="5d_weight"),
            Sample(A(0, 5), Idx(np.zeros(0, np.int64)), name="empty"),
            Sample(noncontig(A(4, 3)), _idx(rng, 3, (4,)), name="noncontig")]


def _all_ignored(rng, dt):
    return [Sample(arr(rng, (2, 3), dt), Idx(np.array([-100, -100])), name="2d"),
            Sample(arr(rng, (2, 3, 2), dt), Idx(np.array([[1, 1], [1, 1]])), ignore_index=1, name="3d")]


def _nll_errors():
    x = np.zeros((3, 5), np.float32)
    return [ErrorSample(Sample(x, Idx(np.array([1, 5, 0]))), IndexError, "Target 5 is out of bounds."),
            ErrorSample(Sample(x, Idx(np.array([1, -3, 0]))), IndexError, "Target -3 is out of bounds."),
            ErrorSample(Sample(x, Idx(np.array([1, 0]))), ValueError,
                        "Expected input batch_size (3) to match target batch_size (2)."),
            ErrorSample(Sample(x, NoGrad(np.array([1., 0., 2.], np.float32))), RuntimeError,
                        "expected target dtype to be Long or Byte, but got Float"),
            ErrorSample(Sample(x, Idx(np.array([1, 0, 2], np.int32))), RuntimeError,
                        "expected target dtype to be Long or Byte, but got Int"),
            ErrorSample(Sample(x, Idx(np.zeros((3, 2), np.int64))), RuntimeError,
                        "0D or 1D target tensor expected, multi-target not supported"),
            ErrorSample(Sample(x, Idx(np.array([1, 0, 2])), weight=NoGrad(np.ones(3, np.float32))), RuntimeError,
                        "weight tensor should be defined either for all 5 classes or no classes"),
            ErrorSample(Sample(np.zeros((2, 5, 3, 3), np.float32), Idx(np.full((2, 3, 3), 7))), IndexError,
                        "Target 7 is out of bounds."),
            ErrorSample(Sample(np.zeros((2, 5, 3, 3), np.float32), Idx(np.zeros((2, 3, 4), np.int64))), RuntimeError,
                        "size mismatch (got input: [2, 5, 3, 3] , target: [2, 3, 4]"),
            ErrorSample(Sample(np.zeros((2, 5, 3), np.float32), Idx(np.zeros((2, 4), np.int64))), RuntimeError,
                        "Expected target size [2, 3], got [2, 4]"),
            ErrorSample(Sample(np.zeros((5,), np.float32), Idx(np.zeros((3,), np.int64))), ValueError,
                        "For 1D input, 1D target must have size 1, but got target size: 3"),
            ErrorSample(Sample(np.zeros((3, 5), np.float32), Idx(np.array([1, 0, 2])), reduction="foo"), ValueError,
                        "foo is not a valid value for reduction"),
            ErrorSample(Sample(x, Idx(np.array([1, 0, 2])), weight=NoGrad(np.ones(5))), RuntimeError,
                        "expected scalar type Float but found Double"),
            ErrorSample(Sample(Idx(np.zeros((3, 5), np.int64)), Idx(np.array([1, 0, 2]))), NotImplementedError,
                        "\"nll_loss_out_frame\" not implemented for 'Long'")]


def _ce_ls(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    t = rng.integers(0, 5, size=6)
    t[2] = -100
    w = NoGrad(arr(rng, (5,), dt, 0.2, 2.0))
    return [Sample(A(4, 5), _idx(rng, 5, (4,)), label_smoothing=0.1, name="2d"),
            Sample(A(6, 5), Idx(t), label_smoothing=0.3, name="ignore"),
            Sample(A(6, 5), Idx(t), weight=w, label_smoothing=0.2, name="weight_ignore"),
            Sample(A(5), Idx(np.array(1)), label_smoothing=0.25, name="unbatched"),
            Sample(A(4, 5), _idx(rng, 5, (4,)), label_smoothing=-0.5, name="negative_is_off"),
            Sample(A(2, 4, 3, 2), _idx(rng, 4, (2, 3, 2)), label_smoothing=0.15, name="4d"),
            Sample(A(2, 4, 3), _idx(rng, 4, (2, 3)), weight=NoGrad(arr(rng, (4,), dt, 0.2, 2.0)),
                   label_smoothing=1.0, name="3d_weight_full")]


def _ce_probs(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    w = NoGrad(arr(rng, (5,), dt, 0.2, 2.0))
    return [Sample(A(4, 5), _probs(rng, (4, 5), dt), name="2d"),
            Sample(A(4, 5), _probs(rng, (4, 5), dt), weight=w, name="weight"),
            Sample(A(4, 5), _probs(rng, (4, 5), dt), weight=w, label_smoothing=0.2, name="weight_ls"),
            Sample(A(5), _probs(rng, (5,), dt), name="unbatched"),
            Sample(A(2, 3, 4), _probs(rng, (2, 3, 4), dt), label_smoothing=0.1, name="3d_ls"),
            Sample(noncontig(A(4, 3)), _probs(rng, (4, 3), dt), name="noncontig"),
            Sample(A(0, 5), _probs(rng, (0, 5), dt), name="empty")]


def _ce_errors():
    x = np.zeros((3, 5), np.float32)
    return [ErrorSample(Sample(x, Idx(np.array([1, 0, 2])), label_smoothing=1.5), RuntimeError,
                        "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
            ErrorSample(Sample(x, NoGrad(np.full((3, 5), 0.2, np.float32)), ignore_index=1), RuntimeError,
                        "ignore_index is not supported for floating point target"),
            ErrorSample(Sample(np.zeros((3, 5), np.int64), Idx(np.zeros((3, 5), np.int64))), RuntimeError,
                        "Expected floating point type for target with class probabilities, got Long"),
            ErrorSample(Sample(x, NoGrad(np.ones((3, 4), np.float32))), RuntimeError,
                        "0D or 1D target tensor expected, multi-target not supported"),
            ErrorSample(Sample(x, NoGrad(np.array([1., 0., 2.], np.float32))), RuntimeError,
                        "expected target dtype to be Long or Byte, but got Float"),
            ErrorSample(Sample(x, Idx(np.array([1, 0]))), ValueError,
                        "Expected input batch_size (3) to match target batch_size (2)."),
            ErrorSample(Sample(x, Idx(np.array([1, 7, 0]))), IndexError, "Target 7 is out of bounds."),
            ErrorSample(Sample(x, NoGrad(np.full((3, 5), 0.2, np.float32)), weight=NoGrad(np.ones(3, np.float32))),
                        RuntimeError, "cross_entropy: weight tensor should be defined either for all 5 classes or no "
                                      "classes but got weight tensor of shape: [3]"),
            ErrorSample(Sample(x, NoGrad(np.full((3, 5), 0.2, np.float32)), label_smoothing=1.5), RuntimeError,
                        "label_smoothing must be between 0.0 and 1.0. Got: 1.5")]


# -- regression -------------------------------------------------------------------------------------
def _regr(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A(3, 4), A(3, 4), name="2d"), Sample(A(5), A(5), name="1d"), Sample(A(), A(), name="0d"),
            Sample(A(0, 3), A(0, 3), name="empty"), Sample(noncontig(A(4, 3)), A(4, 3), name="noncontig"),
            Sample(A(2, 3, 4), A(2, 3, 4), name="3d")]


def _regr_bcast(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A(3, 4), A(4), name="bcast_target"), Sample(A(4), A(3, 4), name="bcast_input")]


def _regr_all(rng, dt):
    return _regr(rng, dt) + _regr_bcast(rng, dt)


def _regr_weight(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A(3, 4), A(3, 4), weight=arr(rng, (3, 4), dt, 0.1, 2.0), name="weight")]


def _with(base, **kw):
    def f(rng, dt):
        return [Sample(*s.args, name=s.name, **{**s.kwargs, **kw}) for s in base(rng, dt)]
    return f


def _regr_errors(name, **kw):
    def f():
        x = np.zeros((3, 4), np.float32)
        out = [ErrorSample(Sample(np.zeros(4, np.float32), np.zeros((3, 5), np.float32)), RuntimeError,
                           "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1"),
               ErrorSample(Sample(x, x, reduction="foo", **kw), ValueError, "foo is not a valid value for reduction")]
        if name == "mse_loss":
            out.append(ErrorSample(Sample(Idx(np.ones(3, np.int64)), Idx(np.ones(3, np.int64))), NotImplementedError,
                                   "\"mse_cpu\" not implemented for 'Long'"))
        if name == "smooth_l1_loss":
            out.append(ErrorSample(Sample(x, x, beta=-1.0), RuntimeError,
                                   "smooth_l1_loss does not support negative values for beta."))
        if name == "huber_loss":
            out.append(ErrorSample(Sample(x, x, delta=0.0), RuntimeError,
                                   "huber_loss does not support non-positive values for delta."))
        if name in ("mse_loss", "l1_loss", "huber_loss"):
            out.append(ErrorSample(Sample(x, x, weight=np.ones(4, np.float32)), ValueError,
                                   "Weights and input must have the same size."))
        return out
    return f


# -- binary -----------------------------------------------------------------------------------------
def _bce(rng, dt):
    P = lambda *s: arr(rng, s, dt, 0.05, 0.95)  # noqa: E731
    return [Sample(P(3, 4), P(3, 4), name="2d"), Sample(P(5), P(5), name="1d"), Sample(P(), P(), name="0d"),
            Sample(P(0, 2), P(0, 2), name="empty"), Sample(noncontig(P(4, 3)), P(4, 3), name="noncontig"),
            Sample(P(3, 4), P(3, 4), NoGrad(arr(rng, (4,), dt, 0.2, 2.0)), name="weight_bcast"),
            Sample(P(3, 4), NoGrad(rng.integers(0, 2, (3, 4)).astype(dt)), name="hard_targets")]


def _bce_errors():
    x = np.full((3, 5), 0.5, np.float32)
    return [ErrorSample(Sample(np.full((3, 5), 1.5, np.float32), x), RuntimeError,
                        "all elements of input should be between 0 and 1"),
            ErrorSample(Sample(x, np.full((5,), 0.5, np.float32)), ValueError,
                        "Using a target size (torch.Size([5])) that is different to the input size "
                        "(torch.Size([3, 5])) is deprecated. Please ensure they have the same size."),
            ErrorSample(Sample(x, x, NoGrad(np.ones(4, np.float32))), RuntimeError,
                        "Attempting to broadcast a dimension of length 4 at -1!"),
            ErrorSample(Sample(x, NoGrad(np.full((3, 5), 0.5))), RuntimeError, "Found dtype Double but expected Float")]


def _bcel(rng, dt):
    A = lambda *s: arr(rng, s, dt, -4, 4)  # noqa: E731
    P = lambda *s: arr(rng, s, dt, 0.0, 1.0)  # noqa: E731
    W = lambda *s: NoGrad(arr(rng, s, dt, 0.2, 2.0))  # noqa: E731
    big = np.array([-60.0, -20.0, 0.5, 20.0, 60.0], dt)
    return [Sample(A(3, 4), P(3, 4), name="2d"), Sample(A(), P(), name="0d"), Sample(A(0, 3), P(0, 3), name="empty"),
            Sample(noncontig(A(4, 3)), P(4, 3), name="noncontig"),
            Sample(big, P(5), name="large_logits"),
            Sample(A(3, 4), P(3, 4), W(3, 1), name="weight"),
            Sample(A(3, 4), P(3, 4), pos_weight=W(4), name="pos_weight"),
            Sample(A(2, 3, 4), P(2, 3, 4), W(4), pos_weight=W(3, 1), name="weight_pos_weight_3d")]


def _bcel_errors():
    x = np.zeros((3, 5), np.float32)
    return [ErrorSample(Sample(x, np.zeros(5, np.float32)), ValueError,
                        "Target size (torch.Size([5])) must be the same as input size (torch.Size([3, 5]))"),
            ErrorSample(Sample(x, x, pos_weight=NoGrad(np.ones(4, np.float32))), RuntimeError,
                        "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1")]


# -- kl_div -----------------------------------------------------------------------------------------
def _kl(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    P = lambda *s: arr(rng, s, dt, 0.05, 1.0)  # noqa: E731
    out = [Sample(A(3, 4), P(3, 4), name="2d"), Sample(A(5), P(5), name="1d"),
           Sample(A(3, 4), A(3, 4), log_target=True, name="log_target"),
           Sample(noncontig(A(4, 3)), P(4, 3), name="noncontig"), Sample(A(3, 4), P(4), name="bcast")]
    res = []
    for s in out:
        for r in ("none", "mean", "sum", "batchmean"):
            res.append(Sample(*s.args, name=f"{s.name}_{r}", reduction=r, **s.kwargs))
    return res


# -- margin / embedding -----------------------------------------------------------------------------
def _pm(rng, shape, dt):
    return np.where(rng.integers(0, 2, size=shape) == 1, 1.0, -1.0).astype(dt)


def _cosine(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A(4, 5), A(4, 5), NoGrad(_pm(rng, (4,), dt)), name="2d"),
            Sample(A(4, 5), A(4, 5), NoGrad(_pm(rng, (4,), dt)), margin=0.3, name="margin"),
            Sample(A(5), A(5), NoGrad(np.array(-1.0, dt)), margin=-0.5, name="unbatched")]


def _cosine_errors():
    x = np.zeros((3, 5), np.float32)
    return [ErrorSample(Sample(x, x, NoGrad(np.ones((3, 1), np.float32))), RuntimeError,
                        "0D or 1D target tensor expected, multi-target not supported"),
            ErrorSample(Sample(x, np.zeros((3, 4), np.float32), NoGrad(np.ones(3, np.float32))), RuntimeError,
                        "The size of tensor a (5) must match the size of tensor b (4)")]


def _ranking(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A(6), A(6), _pm(rng, (6,), dt), name="1d"),
            Sample(A(6), A(6), _pm(rng, (6,), dt), margin=0.5, name="margin"),
            Sample(A(3, 2), A(3, 2), _pm(rng, (3, 2), dt), margin=0.2, name="2d"),
            Sample(A(), A(), np.array(1.0, dt), margin=0.1, name="0d")]


def _ranking_errors():
    x = np.zeros((3, 5), np.float32)
    return [ErrorSample(Sample(x, x, np.ones(3, np.float32)), RuntimeError,
                        "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                        "input1: torch.Size([3, 5]), input2: torch.Size([3, 5]), target: torch.Size([3]) ")]


def _triplet(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A(4, 5), A(4, 5), A(4, 5), name="2d"),
            Sample(A(4, 5), A(4, 5), A(4, 5), margin=2.0, swap=True, name="swap"),
            Sample(A(4, 5), A(4, 5), A(4, 5), p=1, eps=1e-3, name="p1"),
            Sample(A(5), A(5), A(5), margin=3.0, name="unbatched")]


def _triplet_errors():
    x = np.zeros((3, 5), np.float32)
    return [ErrorSample(Sample(x, x, np.zeros((3, 5, 2), np.float32)), RuntimeError,
                        "The anchor, positive, and negative tensors are expected to have the same number of "
                        "dimensions, but got: anchor 2D, positive 2D, and negative 3D inputs"),
            ErrorSample(Sample(x, x, x, margin=-1.0), ValueError, "margin must be greater than 0, got -1.0")]


def _triplet_dist(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A(4, 5), A(4, 5), A(4, 5), name="2d"),
            Sample(A(4, 5), A(4, 5), A(4, 5), margin=2.0, swap=True, name="swap"),
            Sample(A(4, 5), A(4, 5), A(4, 5), margin=1.5, cosine=True, name="cosine_distance")]


def _triplet_dist_op(T, a, p, n, cosine=False, **kw):
    if cosine:
        kw["distance_function"] = lambda x, y: 1.0 - (x * y).sum(-1) / ((x * x).sum(-1) * (y * y).sum(-1)).sqrt()
    return T.nn.functional.triplet_margin_with_distance_loss(a, p, n, **kw)


def _hinge(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A(4, 5), NoGrad(_pm(rng, (4, 5), dt)), name="2d"),
            Sample(A(4, 5), NoGrad(_pm(rng, (4, 5), dt)), margin=0.5, name="margin"),
            Sample(A(6), NoGrad(_pm(rng, (6,), dt)), name="1d"), Sample(A(0, 2), NoGrad(np.zeros((0, 2), dt)),
                                                                         name="empty")]


def _poisson(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    P = lambda *s: arr(rng, s, dt, 0.2, 3.0)  # noqa: E731
    return [Sample(A(3, 4), P(3, 4), name="log_input"),
            Sample(P(3, 4), P(3, 4), log_input=False, name="rate"),
            Sample(A(3, 4), P(3, 4), full=True, name="full"),
            Sample(P(3, 4), P(3, 4), log_input=False, full=True, eps=1e-4, name="rate_full"),
            Sample(A(5), P(5), name="1d")]


def _gaussian(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    V = lambda *s: arr(rng, s, dt, 0.2, 2.0)  # noqa: E731
    return [Sample(A(3, 4), A(3, 4), V(3, 4), name="hetero"),
            Sample(A(3, 4), A(3, 4), V(3), name="var_one_short"),
            Sample(A(3, 4), A(3, 4), V(3, 1), full=True, name="var_bcast_full"),
            Sample(A(2, 3, 4), A(2, 3, 4), V(2, 1, 4), name="var_mid_bcast"),
            Sample(A(3, 4), A(3, 4), 0.7, name="float_var")]


def _gaussian_clamped(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A(3, 4), A(3, 4), arr(rng, (3, 4), dt, 0.1, 2.0) * 1e-3, eps=1e-3, name="clamped_var")]


def _gaussian_errors():
    x = np.zeros((3, 5), np.float32)
    return [ErrorSample(Sample(x, x, np.ones((3, 4), np.float32)), ValueError, "var is of incorrect size"),
            ErrorSample(Sample(x, x, np.ones((5,), np.float32)), ValueError, "var is of incorrect size"),
            ErrorSample(Sample(x, x, -np.ones((3, 5), np.float32)), ValueError, "var has negative entry/entries"),
            ErrorSample(Sample(x, x, -1.0), ValueError, "var has negative entry/entries"),
            ErrorSample(Sample(x, x, np.ones((3, 5), np.float32), reduction="x"), ValueError, "x is not valid")]


def _mlsm(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    Y = lambda *s: NoGrad(rng.integers(0, 2, size=s).astype(dt))  # noqa: E731
    return [Sample(A(3, 4), Y(3, 4), name="2d"), Sample(A(3, 4), Y(3, 4), arr(rng, (4,), dt, 0.2, 2.0),
                                                         name="weight"),
            Sample(A(5), Y(5), name="1d"), Sample(A(3, 4), arr(rng, (3, 4), dt, 0, 1), name="soft_targets")]


def _soft_margin(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A(3, 4), NoGrad(_pm(rng, (3, 4), dt)), name="2d"), Sample(A(5), NoGrad(_pm(rng, (5,), dt)), name="1d"),
            Sample(A(), NoGrad(np.array(-1.0, dt)), name="0d"), Sample(A(0, 3), NoGrad(np.zeros((0, 3), dt)),
                                                                      name="empty")]


def _multi_margin(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    return [Sample(A(4, 5), _idx(rng, 5, (4,)), name="2d"),
            Sample(A(4, 5), _idx(rng, 5, (4,)), p=2, margin=0.7, name="p2"),
            Sample(A(4, 5), _idx(rng, 5, (4,)), weight=NoGrad(arr(rng, (5,), dt, 0.2, 2.0)), name="weight"),
            Sample(A(5), Idx(np.array(3)), name="unbatched"),
            Sample(A(), Idx(np.array(0)), name="0d"),
            Sample(noncontig(A(4, 3)), _idx(rng, 3, (4,)), name="noncontig")]


def _multi_margin_errors():
    x = np.zeros((3, 5), np.float32)
    return [ErrorSample(Sample(x, Idx(np.array([1, 0, 2])), p=3), ValueError, "only p == 1 and p == 2 supported"),
            ErrorSample(Sample(x, Idx(np.array([1, 5, 0]))), RuntimeError, "target out of range"),
            ErrorSample(Sample(x, Idx(np.array([1, 0]))), RuntimeError,
                        "multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                        "samples (batch size). Expected target size [3], but got [2]. Input has shape [3, 5]."),
            ErrorSample(Sample(x, Idx(np.array([1, 0, 2])), weight=NoGrad(np.ones((5, 1), np.float32))), ValueError,
                        "weight must be one-dimensional")]


def _ml_margin(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    t = np.array([[1, 2, -1, 0, 0], [0, -1, 0, 0, 0], [4, 3, 2, 1, 0], [-1, 2, 2, 2, 2]])
    return [Sample(A(4, 5), Idx(t), name="2d"),
            Sample(A(2, 4), Idx(np.array([[1, 1, -1, 3], [3, 0, 2, -1]])), name="duplicates"),
            Sample(A(4), Idx(np.array([3, 0, -1, 1])), name="unbatched")]


def _ml_margin_errors():
    x = np.zeros((3, 5), np.float32)
    return [ErrorSample(Sample(x, Idx(np.array([1, 0]))), RuntimeError,
                        "inconsistent target size: [2] for input of size: [3, 5]"),
            ErrorSample(Sample(x, Idx(np.full((3, 5), 7))), RuntimeError, "argument #2 'target' is out of range"),
            ErrorSample(Sample(np.zeros((2, 3, 4), np.float32), Idx(np.zeros((2, 3, 4), np.int64))), RuntimeError,
                        "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [2, 3, 4]")]


# -- ctc ----------------------------------------------------------------------------------------------
def _ctc(rng, dt):
    A = lambda *s: arr(rng, s, dt)  # noqa: E731
    padded = Idx(np.array([[1, 2, 0], [3, 3, 1], [2, 0, 0]]))
    return [Sample(A(6, 3, 4), padded, (6, 5, 4), (2, 3, 1), name="padded"),
            Sample(A(6, 3, 4), Idx(np.array([1, 2, 3, 3, 1, 2])), (6, 5, 4), (2, 3, 1), name="concat"),
            Sample(A(5, 2, 4), Idx(np.array([[1, 2], [3, 3]])), Idx(np.array([5, 4])), Idx(np.array([2, 0])),
                   name="tensor_lengths_empty_target"),
            Sample(A(6, 3, 4), Idx(np.array([[1, 2, 0], [2, 2, 1], [1, 0, 0]])), (6, 5, 4), (2, 3, 1), blank=3,
                   name="blank3"),
            Sample(A(6, 3, 4), Idx(np.array([[1, 1, 0], [3, 3, 1], [1, 0, 0]])), (2, 5, 4), (2, 3, 1),
                   zero_infinity=True, name="zero_infinity"),
            Sample(A(6, 4), Idx(np.array([1, 2])), Idx(np.array(6)), Idx(np.array(2)), name="unbatched")]


def _ctc_op(T, x, targets, il, tl, **kw):
    # through log_softmax: PyTorch's CTC gradient is the one of a log_softmax output
    return T.nn.functional.ctc_loss(x.log_softmax(-1), targets, il, tl, **kw)


def _ctc_errors():
    x = np.zeros((6, 2, 4), np.float32)
    t = Idx(np.array([[1, 2], [3, 3]]))
    return [ErrorSample(Sample(x, t, (7, 5), (2, 2)), RuntimeError,
                        "Expected input_lengths to have value at most 6, but got value 7"),
            ErrorSample(Sample(x, t, (6, 5), (2, 3)), RuntimeError,
                        "Expected tensor to have size at least 3 at dimension 1, but got size 2 for argument #2 "
                        "'targets' (while checking arguments for ctc_loss_allocate_outputs)")]


_no2 = dict(gradgrad=False)   # PyTorch: "derivative for aten::..._backward is not implemented"

OPS = [
    OpInfo("nn.functional.nll_loss", _F("nll_loss"), _reds(_nll), errors=_nll_errors),
    OpInfo("nn.functional.cross_entropy", _F("cross_entropy"), _reds(_nll), errors=_ce_errors),
    # mean over no target is nan (0/0): no finite differences
    OpInfo("nn.functional.nll_loss_all_ignored", _F("nll_loss"), _reds(_all_ignored), gradcheck=False),
    OpInfo("nn.functional.cross_entropy_all_ignored", _F("cross_entropy"), _reds(_all_ignored), gradcheck=False),
    OpInfo("nn.functional.cross_entropy_label_smoothing", _F("cross_entropy"), _reds(_ce_ls)),
    OpInfo("nn.functional.cross_entropy_probs", _F("cross_entropy"), _reds(_ce_probs)),
    OpInfo("nn.functional.mse_loss", _F("mse_loss"), _reds(_regr_all), errors=_regr_errors("mse_loss")),
    OpInfo("nn.functional.mse_loss_weight", _F("mse_loss"), _reds(_regr_weight)),
    OpInfo("nn.functional.l1_loss", _F("l1_loss"), _reds(_regr_all), errors=_regr_errors("l1_loss")),
    OpInfo("nn.functional.l1_loss_weight", _F("l1_loss"), _reds(_regr_weight)),
    OpInfo("nn.functional.smooth_l1_loss", _F("smooth_l1_loss"), _reds(_regr_all),
           errors=_regr_errors("smooth_l1_loss")),
    OpInfo("nn.functional.smooth_l1_loss_beta", _F("smooth_l1_loss"), _reds(_with(_regr, beta=0.6))),
    OpInfo("nn.functional.smooth_l1_loss_beta0", _F("smooth_l1_loss"), _reds(_with(_regr, beta=0.0))),
    OpInfo("nn.functional.huber_loss", _F("huber_loss"), _reds(_regr_all), errors=_regr_errors("huber_loss")),
    OpInfo("nn.functional.huber_loss_delta", _F("huber_loss"), _reds(_with(_regr, delta=0.4))),
    OpInfo("nn.functional.huber_loss_weight", _F("huber_loss"), _reds(_regr_weight)),
    OpInfo("nn.functional.binary_cross_entropy", _F("binary_cross_entropy"), _reds(_bce), errors=_bce_errors),
    OpInfo("nn.functional.binary_cross_entropy_with_logits", _F("binary_cross_entropy_with_logits"),
           _reds(_bcel), errors=_bcel_errors),
    OpInfo("nn.functional.kl_div", _F("kl_div"), _kl),
    OpInfo("nn.functional.cosine_embedding_loss", _F("cosine_embedding_loss"), _reds(_cosine),
           errors=_cosine_errors),
    OpInfo("nn.functional.margin_ranking_loss", _F("margin_ranking_loss"), _reds(_ranking),
           errors=_ranking_errors),
    OpInfo("nn.functional.triplet_margin_loss", _F("triplet_margin_loss"), _reds(_triplet),
           errors=_triplet_errors),
    OpInfo("nn.functional.triplet_margin_with_distance_loss", _triplet_dist_op, _reds(_triplet_dist)),
    OpInfo("nn.functional.hinge_embedding_loss", _F("hinge_embedding_loss"), _reds(_hinge)),
    OpInfo("nn.functional.poisson_nll_loss", _F("poisson_nll_loss"), _reds(_poisson)),
    OpInfo("nn.functional.gaussian_nll_loss", _F("gaussian_nll_loss"), _reds(_gaussian), errors=_gaussian_errors),
    # var clamped at eps without grad (as PyTorch): the gradient is not the finite difference there
    OpInfo("nn.functional.gaussian_nll_loss_clamped", _F("gaussian_nll_loss"), _reds(_gaussian_clamped),
           gradcheck=False),
    OpInfo("nn.functional.multilabel_soft_margin_loss", _F("multilabel_soft_margin_loss"), _reds(_mlsm)),
    OpInfo("nn.functional.soft_margin_loss", _F("soft_margin_loss"), _reds(_soft_margin)),
    OpInfo("nn.functional.multi_margin_loss", _F("multi_margin_loss"), _reds(_multi_margin),
           errors=_multi_margin_errors, **_no2),
    OpInfo("nn.functional.multilabel_margin_loss", _F("multilabel_margin_loss"), _reds(_ml_margin),
           errors=_ml_margin_errors, **_no2),
    OpInfo("nn.functional.ctc_loss", _ctc_op, _reds(_ctc), errors=_ctc_errors, **_no2),
]
