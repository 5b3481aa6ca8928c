"""torch.signal.windows against torch: values (float64 to 1e-13, float32 to a few ulps), dtypes, shapes,
requires_grad graphs (grad_fn names, gradients) and torch's errors."""
import numpy as np
import pytest
import torch

import glassgrad as gg

NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
         "hamming", "hann", "kaiser", "nuttall"]
EXTRA = {"general_cosine": {"a": [0.3, 0.5, 0.2]}}


def _pair(name, *args, **kw):
    kw = {**EXTRA.get(name, {}), **kw}
    tkw = {k: getattr(torch, v.name) if isinstance(v, gg.dtype) else v for k, v in kw.items()}
    return getattr(torch.signal.windows, name)(*args, **tkw), getattr(gg.signal.windows, name)(*args, **kw)


def test_namespace():
    assert gg.signal.__all__ == torch.signal.__all__
    assert gg.signal.windows.__all__ == torch.signal.windows.__all__


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("M", [0, 1, 2, 3, 8, 11])
@pytest.mark.parametrize("sym", [True, False])
def test_values_float64(name, M, sym):
    t, g = _pair(name, M, sym=sym, dtype=gg.float64)
    assert g.dtype == gg.float64 and tuple(g.shape) == tuple(t.shape)
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", NAMES)
def test_values_default_float32(name):
    t, g = _pair(name, 9)
    assert g.dtype == gg.float32 and not g.requires_grad
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("kw", [{"tau": 2.5}, {"center": 1.0, "sym": False}, {"tau": 0.3, "sym": False}])
def test_exponential_kwargs(kw):
    t, g = _pair("exponential", 7, dtype=gg.float64, **kw)
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-13)


@pytest.mark.parametrize("name,kw", [("gaussian", {"std": 0.4}), ("kaiser", {"beta": 0.0}), ("kaiser", {"beta": 3.5}),
                                     ("general_hamming", {"alpha": 0.6}), ("general_cosine", {"a": (1.0,)})])
def test_shape_parameters(name, kw):
    for sym in (True, False):
        t, g = _pair(name, 6, dtype=gg.float64, sym=sym, **kw)
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", NAMES)
def test_requires_grad_graph(name):
    t, g = _pair(name, 6, dtype=gg.float64, requires_grad=True)
    assert g.requires_grad == t.requires_grad and g.is_leaf == t.is_leaf
    assert type(g.grad_fn).__name__ == type(t.grad_fn).__name__
    w = np.linspace(0.5, 2.0, 6)
    t.backward(torch.tensor(w))
    g.backward(gg.tensor(w))      # the leaves are inside the graph: backward must run through torch's nodes
    def names(fn):
        return [type(f).__name__ for f, _ in fn.next_functions if f is not None]
    assert names(g.grad_fn) == names(t.grad_fn)
    for M in (0, 1):
        t, g = _pair(name, M, requires_grad=True)
        assert g.requires_grad == t.requires_grad and g.is_leaf == t.is_leaf and tuple(g.shape) == (M,)


ERRORS = [
    ("hann", (-1,), {}, ValueError, "general_cosine requires non-negative window length, got M=-1"),
    ("general_cosine", (-2,), {"a": [1.0]}, ValueError, "general_cosine requires non-negative window length, got M=-2"),
    ("bartlett", (3,), {"dtype": "float16"}, ValueError, "bartlett expects float32 or float64 dtypes, got: torch.float16"),
    ("kaiser", (3,), {"dtype": "int64"}, ValueError, "kaiser expects float32 or float64 dtypes, got: torch.int64"),
    ("cosine", (3,), {"layout": "sparse_coo"}, ValueError, "cosine is implemented for strided tensors only, got: torch.sparse_coo"),
    ("exponential", (3,), {"tau": 0.0}, ValueError, "Tau must be positive, got: 0.0 instead."),
    ("exponential", (3,), {"center": 1.0}, ValueError, "Center must be None for symmetric windows"),
    ("gaussian", (3,), {"std": -1.0}, ValueError, "Standard deviation must be positive, got: -1.0 instead."),
    ("kaiser", (3,), {"beta": -0.5}, ValueError, "beta must be non-negative, got: -0.5 instead."),
    ("general_cosine", (3,), {"a": 5}, TypeError, "Coefficients must be a list/tuple"),
    ("general_cosine", (3,), {"a": []}, ValueError, "Coefficients cannot be empty"),
]


@pytest.mark.parametrize("name,args,kw,exc,msg", ERRORS)
def test_errors(name, args, kw, exc, msg):
    def conv(mod):
        return {k: getattr(mod, v) if k in ("dtype", "layout") else v for k, v in kw.items()}
    with pytest.raises(exc) as te:
        getattr(torch.signal.windows, name)(*args, **conv(torch))
    with pytest.raises(exc) as ge:
        getattr(gg.signal.windows, name)(*args, **conv(gg))
    assert msg in str(te.value) and msg in str(ge.value)
