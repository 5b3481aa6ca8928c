"""torch.masked (glassgrad/masked) against torch beyond the op table's rows: fully masked-out slices, integer
and complex inputs, dtype=, no mask, non-bool / sparse / broadcast masks, zero gradients where masked out,
and torch's errors. (The op table, tests/opinfo/masked.py, checks values, grad_fn, gradients and finite
differences of every function on partly masked inputs.)"""
import math

import numpy as np
import pytest
import torch

import glassgrad as gg

X = np.array([[1.5, -2.0, 0.25, 3.0], [0.5, 4.0, -1.0, 2.0], [-3.0, 1.0, 2.5, -0.5]])
M = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])


def _both(fn, x=X, mask=M, dtype=None, **kw):
    out = []
    for lib in (torch, gg):
        t = lib.tensor(x) if dtype is None else lib.tensor(x, dtype=getattr(lib, dtype))
        m = None if mask is None else lib.tensor(mask)
        out.append(fn(lib, t, m, **kw))
    return out


def _same(t, g, exact=False):
    assert str(g.dtype) == str(t.dtype) and tuple(g.shape) == tuple(t.shape)
    if exact:
        np.testing.assert_array_equal(g.detach().numpy(), t.detach().numpy())
    else:
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-14, equal_nan=True)


def test_namespace():
    missing = set(torch.masked.__all__) - set(gg.masked.__all__)
    assert missing == {"MaskedTensor", "masked_tensor", "as_masked_tensor", "is_masked_tensor"}
    assert set(gg.masked.__all__) <= set(torch.masked.__all__)


REDUCTIONS = ["sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "logsumexp", "norm", "var", "std"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_fully_masked_row(name, keepdim):
    """Row 1 is all masked out: each reduction's identity (0, 1, -inf, inf), nan (mean, median, var, std)."""
    t, g = _both(lambda T, x, m: getattr(T.masked, name)(x, dim=1, keepdim=keepdim, mask=m))
    _same(t, g)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin", "cumsum", "cumprod"])
def test_fully_masked_normalisation(name):
    t, g = _both(lambda T, x, m: getattr(T.masked, name)(x, 1, mask=m))
    _same(t, g)
    t, g = _both(lambda T, x, m: T.masked.normalize(x, 2.0, 1, mask=m))
    _same(t, g)


@pytest.mark.parametrize("name", REDUCTIONS + ["softmax", "log_softmax", "softmin", "cumsum", "cumprod"])
def test_gradient_zero_where_masked(name):
    grads = []
    for lib in (torch, gg):
        x = lib.tensor(X, requires_grad=True)
        if name in ("argmax", "argmin"):
            continue
        args = (1,) if name not in ("norm",) else (2.0, 1)
        y = getattr(lib.masked, name)(x, *args, mask=lib.tensor(M))
        y = y.where(y.isfinite(), lib.tensor(0.0, dtype=y.dtype))
        (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        grads.append(x.grad.numpy())
    if grads:
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-14, equal_nan=True)
        keep = M.any(axis=1)        # a fully masked-out row of var / std has nan gradients in torch too (mean nan)
        assert not np.any(grads[1][keep][~M[keep]])


@pytest.mark.parametrize("name", REDUCTIONS)
def test_no_mask_is_plain(name):
    t, g = _both(lambda T, x, m: getattr(T.masked, name)(x, 0), mask=None)
    _same(t, g)
    if name not in ("median", "argmax", "argmin"):
        t, g = _both(lambda T, x, m: getattr(T.masked, name)(x), mask=None)
        _same(t, g)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64", "bool"])
@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "argmax", "argmin", "cumsum"])
def test_integer_inputs(name, dtype):
    x = np.abs(X * 2).astype(np.int64) % 5
    if dtype == "bool" and name in ("amax", "amin", "argmax", "argmin", "cumsum"):
        return          # torch: no identity for bool (torch.where(mask, x, None)); cumsum_out_cpu has no Bool
    mask = M.copy()
    mask[1, 0] = True
    t, g = _both(lambda T, a, m: getattr(T.masked, name)(a, 1, mask=m), x=x, mask=mask, dtype=dtype)
    _same(t, g, exact=True)


def test_integer_median_and_mean():
    x = (X * 2).astype(np.int64)
    mask = M.copy()
    mask[1, 2] = True
    t, g = _both(lambda T, a, m: T.masked.median(a, 1, mask=m), x=x, mask=mask)
    _same(t, g, exact=True)
    for lib in (torch, gg):
        with pytest.raises(ValueError, match="masked median expects no fully masked out rows if dtype is not"):
            lib.masked.median(lib.tensor(x), 1, mask=lib.tensor(M))
        with pytest.raises(ValueError, match="mean\\(\\): Could not infer output dtype. Input dtype must be either a "
                                             "floating point or complex dtype. Got: torch.int64"):
            lib.masked.mean(lib.tensor(x), 1, mask=lib.tensor(M))
    t, g = _both(lambda T, a, m: T.masked.mean(a, 1, mask=m, dtype=T.float64), x=x, mask=mask)
    _same(t, g)
    t, g = _both(lambda T, a, m: T.masked.var(a, 1, mask=m), x=x, mask=mask)     # integers: a float32 variance
    assert str(g.dtype) == "torch.float32"
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name,kw", [("sum", {"dtype": "float32"}), ("softmax", {"dtype": "float32"}),
                                     ("amax", {"dtype": "float32"}), ("norm", {"dtype": "float64"}),
                                     ("var", {"correction": 0}), ("std", {"unbiased": True}),
                                     ("logsumexp", {"dtype": "float32"})])
def test_keyword_arguments(name, kw):
    def fn(T, x, m):
        k = {a: getattr(T, v) if a == "dtype" else v for a, v in kw.items()}
        if name == "norm":
            return T.masked.norm(x, 2.0, 1, mask=m, **k)
        return getattr(T.masked, name)(x, 1, mask=m, **k)
    t, g = _both(fn)
    assert str(g.dtype) == str(t.dtype)
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("mask", [np.array([True, False, True, True]), np.array([[True], [False], [True]]),
                                  np.array(True), (M * 3).astype(np.int64)])
def test_mask_broadcast_and_non_bool(mask):
    for name in ("sum", "mean", "amax", "softmax"):
        t, g = _both(lambda T, x, m: getattr(T.masked, name)(x, 1, mask=m), mask=mask)
        _same(t, g)


def test_sparse_mask_of_dense_input():
    t, g = _both(lambda T, x, m: T.masked.sum(x, 1, mask=m.to_sparse()))
    _same(t, g)
    t, g = _both(lambda T, x, m: T.masked.amax(x, 0, mask=m.to_sparse()))
    _same(t, g)


def test_complex_var_and_sum():
    rs = np.random.RandomState(0)
    z = rs.randn(3, 4) + 1j * rs.randn(3, 4)
    for name in ("var", "std", "sum", "mean"):
        t, g = _both(lambda T, x, m: getattr(T.masked, name)(x, 1, mask=m), x=z)
        _same(t, g)


def test_logaddexp_masks():
    y = X[::-1].copy()
    for lib in (torch, gg):
        r = lib.masked.logaddexp(lib.tensor(X), lib.tensor(y), input_mask=lib.tensor(M), other_mask=lib.tensor(M))
        if lib is torch:
            t = r
    _same(t, r)
    assert math.isinf(r[1, 0].item())


def test_norm_ords():
    for ord_ in (0, 1, 2.0, 3, float("inf"), float("-inf")):
        t, g = _both(lambda T, x, m: T.masked.norm(x, ord_, 1, mask=m))
        _same(t, g)


ERRORS = [
    (lambda T, x, m: T.masked.sum(x, (0, 0), mask=m), RuntimeError, "dim=0 appears multiple times in the list of dims"),
    (lambda T, x, m: T.masked.amax(x, 3, mask=m), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 3)"),
    (lambda T, x, m: T.masked.softmax(x, -3, mask=m), IndexError, "but got -3)"),
    (lambda T, x, m: T.masked.sum(x, 1, mask=m[None]), IndexError, "got mask dimensionality higher than of the input"),
    (lambda T, x, m: T.masked.var(x, 1, unbiased=True, correction=1, mask=m), AssertionError,
     "Only one of unbiased and correction may be given"),
    (lambda T, x, m: T.masked.mean(x, 1, dtype=T.int32, mask=m), ValueError,
     "mean(): Could not infer output dtype. Optional dtype must be either a floating point or complex dtype. Got: "
     "torch.int32"),
    (lambda T, x, m: T.masked.amax(x > 0, 1, mask=m), NotImplementedError, "identity of amax on torch.bool input"),
    (lambda T, x, m: T.masked.logsumexp(x > 0, 1, mask=m), NotImplementedError,
     "identity of logsumexp on torch.bool input"),
    (lambda T, x, m: T.masked.var(x > 0, 1, mask=m), RuntimeError,
     "Subtraction, the `-` operator, with a bool tensor is not supported."),
    (lambda T, x, m: T.masked.sum(x, 1, mask=m[:, :2]), RuntimeError, "The expanded size of the tensor (4) must match the existing size (2)"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, exc, msg = ERRORS[i]
    for lib in (torch, gg):
        with pytest.raises(exc) as e:
            fn(lib, lib.tensor(X), lib.tensor(M))
        assert msg in str(e.value), (lib.__name__, str(e.value))


def test_sparse_input_refused():
    """torch's sparse COO / CSR branches are not built: a sparse input raises a ValueError naming the layout."""
    x = gg.tensor(X).to_sparse()
    with pytest.raises(ValueError, match="sparse_coo"):
        gg.masked.sum(x, 1, mask=gg.tensor(M))
