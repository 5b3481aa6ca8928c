"""Op table rows: torch.segment_reduce (ops/segment_reduce.py) for each reduction, by lengths and by offsets,
batched, with and without `initial`, prod with zeros; torch has no double backward (gradgrad off,
tests/test_segment_reduce.py checks its error)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, Idx, arr


def _distinct(rng, shape, dt):
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) / 4.0 - 1.5).astype(dt)


def _samples(gen=arr, empty=True):
    """Samples; without `empty`, no empty segment (mean's nan, max's -inf: no finite differences there)."""
    def f(rng, dt):
        if not empty:
            return [s for s in f_all(rng, dt) if s.name not in ("lengths", "offsets", "batched")] + [
                Sample(gen(rng, (9,), dt), Idx(np.array([3, 2, 4])), name="lengths"),
                Sample(gen(rng, (2, 6, 3), dt), Idx(np.array([[2, 1, 3], [3, 2, 1]])), axis=1, name="batched")]
        return f_all(rng, dt)

    def f_all(rng, dt):
        return [Sample(gen(rng, (9,), dt), Idx(np.array([3, 0, 4, 2])), name="lengths"),
                Sample(gen(rng, (9,), dt), Idx(np.array([3, 1, 4, 1])), initial=0.75, name="initial"),
                Sample(gen(rng, (7, 3), dt), offsets=Idx(np.array([0, 2, 2, 7])), name="offsets"),
                Sample(gen(rng, (2, 6, 3), dt), Idx(np.array([[2, 0, 4], [3, 3, 0]])), axis=1, name="batched"),
                Sample(gen(rng, (3, 5), dt), Idx(np.array([[2, 3], [4, 1], [1, 4]], np.int32)), axis=-1,
                       name="last_axis_int32")]
    return f


def _zeros(rng, dt):
    """prod's zeros: one alone in a segment-column, and two / three in one (the product of the others holds a
    zero), by lengths and by offsets."""
    x = arr(rng, (9, 2), dt)
    x[[1, 2, 6], 0] = 0
    x[[5, 8], 1] = 0
    return _samples()(rng, dt) + [Sample(x, Idx(np.array([4, 0, 5])), name="zeros"),
                                  Sample(x, offsets=Idx(np.array([1, 3, 9])), initial=-0.5, name="zeros_offsets")]


def _op(reduce):
    def op(T, x, lengths=None, **k):
        return T.segment_reduce(x, reduce, lengths=lengths, **k)
    return op


def _errors():
    x = np.arange(6.0)
    return [
        ErrorSample(Sample(x), RuntimeError, "segment_reduce(): Either lengths or offsets must be defined."),
        ErrorSample(Sample(x, Idx(np.array([3, 2]))), RuntimeError,
                    "Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) when !unsafe."),
        ErrorSample(Sample(x, Idx(np.array([7, -1]))), RuntimeError, "lengths contains negative value!"),
        ErrorSample(Sample(x, Idx(np.array([[6]]))), RuntimeError, "Expected data.dim() >= lengths_value.dim()"),
        ErrorSample(Sample(x.reshape(2, 3), Idx(np.array([3])), axis=1), RuntimeError,
                    "segment_reduce(): Expected axis to be the last dimension of lengths but got 1."),
        ErrorSample(Sample(x, Idx(np.array([6])), axis=2), IndexError, "Dimension out of range"),
        ErrorSample(Sample(x, offsets=Idx(np.array([0, 4, 2, 6]))), RuntimeError,
                    "Expected segment_length >= 0 to be true, but got false."),
    ]


OPS = [
    OpInfo("segment_reduce_sum", _op("sum"), _samples(), gradgrad=False, errors=_errors),
    OpInfo("segment_reduce_mean", _op("mean"), _samples(empty=False), gradgrad=False),
    OpInfo("segment_reduce_max", _op("max"), _samples(_distinct, empty=False), gradgrad=False),
    OpInfo("segment_reduce_amin", _op("amin"), _samples(_distinct, empty=False), gradgrad=False),
    OpInfo("segment_reduce_prod", _op("prod"), _zeros, gradgrad=False),
]
