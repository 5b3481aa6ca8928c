"""torch.segment_reduce against torch beyond the op table's rows: empty segments (with and without initial),
ties of max / min, zeros of prod, NaN data, dtypes, unsafe, offsets over lengths, the missing double backward,
and torch's errors."""
import numpy as np
import pytest
import torch

import glassgrad as gg

X = np.array([3.0, 1, 3, 2, 0, 5, 0, 2, 0, 0, 1.5])
LEN = np.array([3, 2, 0, 3, 3])


def _both(x, reduce, dtype="float64", **kw):
    out = []
    for lib in (torch, gg):
        t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=dtype in ("float64", "float32"))
        k = {a: lib.tensor(v) if isinstance(v, np.ndarray) else v for a, v in kw.items()}
        y = lib.segment_reduce(t, reduce, **k)
        gx = None
        if t.requires_grad:
            w = lib.arange(1, y.numel() + 1, dtype=y.dtype).reshape(y.shape)
            gx, = lib.autograd.grad(y, t, w)
        out.append((y, gx))
    return out


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod", "amax", "amin"])
@pytest.mark.parametrize("initial", [None, 2.0, -1.0])
@pytest.mark.parametrize("by", ["lengths", "offsets"])
def test_empty_segments_ties_zeros(reduce, initial, by):
    kw = {"lengths": LEN} if by == "lengths" else {"offsets": np.concatenate([[0], np.cumsum(LEN)])}
    (ty, tg), (gy, gg_) = _both(X, reduce, initial=initial, **kw)
    assert type(gy.grad_fn).__name__ == "SegmentReduceBackward0" == type(ty.grad_fn).__name__
    assert str(gy.dtype) == str(ty.dtype)
    np.testing.assert_allclose(gy.detach().numpy(), ty.detach().numpy(), rtol=1e-14, equal_nan=True)
    np.testing.assert_allclose(gg_.numpy(), tg.numpy(), rtol=1e-14, equal_nan=True)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_nan_data(reduce):
    x = np.array([np.nan, 1.0, 2.0, 3.0, np.nan, np.nan])
    (ty, tg), (gy, gg_) = _both(x, reduce, lengths=np.array([2, 2, 2]))
    np.testing.assert_allclose(gy.detach().numpy(), ty.detach().numpy(), equal_nan=True)
    np.testing.assert_allclose(gg_.numpy(), tg.numpy(), equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_dtypes(dtype):
    (ty, _), (gy, _) = _both(X, "sum", dtype=dtype, lengths=LEN.astype(np.int32))
    assert str(gy.dtype) == str(ty.dtype)
    np.testing.assert_allclose(gy.float().detach().numpy(), ty.float().detach().numpy(), rtol=1e-3)


def test_offsets_win_and_unsafe():
    (ty, tg), (gy, gg_) = _both(X, "sum", lengths=LEN, offsets=np.array([0, 1, 4]))
    np.testing.assert_array_equal(gy.detach().numpy(), ty.detach().numpy())
    np.testing.assert_array_equal(gg_.numpy(), tg.numpy())
    (ty, tg), (gy, gg_) = _both(X, "max", lengths=np.array([3, 2, 2]), unsafe=True)
    np.testing.assert_array_equal(gy.detach().numpy(), ty.detach().numpy())
    np.testing.assert_array_equal(gg_.numpy(), tg.numpy())


def test_no_double_backward():
    for lib in (torch, gg):
        x = lib.tensor(X, requires_grad=True)
        y = lib.segment_reduce(x, "sum", lengths=lib.tensor(LEN))
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        assert g.requires_grad and type(g.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::_segment_reduce_backward is not implemented"):
            lib.autograd.grad(g.sum(), x)


ERRORS = [
    (lambda T: T.segment_reduce(T.tensor(X), "foo", lengths=T.tensor(LEN)), RuntimeError,
     "reduce argument must be either sum, prod, mean, amax or amin, got foo"),
    (lambda T: T.segment_reduce(T.tensor(X), "sum", indices=T.tensor(LEN)), RuntimeError,
     "segment_reduce(): indices based reduction is not supported yet."),
    (lambda T: T.segment_reduce(T.tensor(X).long(), "sum", lengths=T.tensor(LEN)), NotImplementedError,
     "\"_segment_reduce_cpu\" not implemented for 'Long'"),
    (lambda T: T.segment_reduce(T.tensor(X).cfloat(), "sum", lengths=T.tensor(LEN)), NotImplementedError,
     "\"_segment_reduce_cpu\" not implemented for 'ComplexFloat'"),
    (lambda T: T.segment_reduce(T.tensor(X), "sum", lengths=T.tensor(LEN).float()), NotImplementedError,
     "\"_segment_reduce_lengths_cpu_kernel1\" not implemented for 'Float'"),
    (lambda T: T.segment_reduce(T.tensor(X), "sum", offsets=T.tensor([0.0, 11.0])), NotImplementedError,
     "\"_segment_reduce_offsets_cpu_kernel1\" not implemented for 'Float'"),
    (lambda T: T.segment_reduce(T.tensor(X), "sum", lengths=T.tensor([], dtype=T.long)), RuntimeError,
     "min(): Expected reduction dim to be specified for input.numel() == 0."),
    (lambda T: T.segment_reduce(T.tensor(2.0), "sum", lengths=T.tensor([1])), RuntimeError,
     "Expected data.dim() >= lengths_value.dim() to be true"),
    (lambda T: T.segment_reduce([1.0, 2.0], "sum", lengths=T.tensor([2])), TypeError,
     "segment_reduce(): argument 'data' (position 1) must be Tensor, not list"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, exc, msg = ERRORS[i]
    for lib in (torch, gg):
        with pytest.raises(exc) as e:
            fn(lib)
        assert msg in str(e.value), (lib.__name__, str(e.value))
