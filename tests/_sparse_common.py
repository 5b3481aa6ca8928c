"""What the sparse tests share: the sample tensors and the comparisons against torch."""
import warnings

import numpy as np
import pytest
import torch

import glassgrad as gg

I = [[0, 1, 1, 0], [2, 0, 2, 2]]          # uncoalesced: (0, 2) twice
V = [3., 4., 5., 1.]


def sp(T, requires_grad=False, coalesced=False, dtype=None, values=V, size=(2, 3)):
    s = T.sparse_coo_tensor(T.tensor(I), T.tensor(values, dtype=dtype), size, requires_grad=requires_grad)
    return s.coalesce() if coalesced else s


def hyb(T, requires_grad=False):
    return T.sparse_coo_tensor(T.tensor(I), T.arange(8.).reshape(4, 2) - 3, (2, 3, 2), requires_grad=requires_grad)


def both(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(torch), f(gg)


def same(t, g, tol=1e-6):
    """Same layout, shape, dtype, pattern and (within tol) values."""
    if isinstance(t, (tuple, list)):
        for a, b in zip(t, g, strict=True):
            same(a, b, tol)
        return
    if not isinstance(t, torch.Tensor):
        assert t == g
        return
    assert isinstance(g, gg.Tensor)
    assert str(g.layout) == str(t.layout) and g.is_sparse == t.is_sparse
    assert tuple(g.shape) == tuple(t.shape) and str(g.dtype) == str(t.dtype)
    if t.is_sparse:
        assert g.is_coalesced() == t.is_coalesced() and g._nnz() == t._nnz()
        assert (g.sparse_dim(), g.dense_dim()) == (t.sparse_dim(), t.dense_dim())
        np.testing.assert_array_equal(g._indices().numpy(), t._indices().numpy())
        np.testing.assert_allclose(g._values().detach().numpy(), t._values().detach().numpy(), rtol=tol, atol=tol)
    else:
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)
    tf, gf = t.grad_fn, g.grad_fn
    assert (None if tf is None else type(tf).__name__) == (None if gf is None else gf.name().rsplit("::")[-1])


def same_error(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as te:
            f(torch)
        with pytest.raises(Exception) as ge:
            f(gg)
    assert type(ge.value) is type(te.value), (ge.value, te.value)
    assert str(te.value).startswith(str(ge.value)), (str(ge.value), str(te.value))




D = [[0., 1., 0.], [2., 0., 3.]]
W6 = [[1., -2., 3.], [0.5, 4., -1.]]


def _dense(T, *shape):
    return T.tensor(np.random.default_rng(1).standard_normal(shape), dtype=T.float32)


CROW, COL, CV = [0, 1, 3], [1, 0, 2], [1., 2., 3.]


def csr(T, requires_grad=False, **kw):
    return T.sparse_csr_tensor(CROW, COL, CV, (2, 3), requires_grad=requires_grad, **kw)
