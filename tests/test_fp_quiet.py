"""PyTorch never warns or raises about inf / nan; glassgrad's ops must not either, whatever NumPy's
floating-point settings are (ops/_core.quiet skips np.errstate when the settings are NumPy's defaults)."""
import warnings

import numpy as np
import pytest
import torch

import glassgrad

VALUES = [-1.0, 0.0, 1e30, -1e30, float("nan"), float("inf")]
OPS = ["log", "exp", "sqrt", "tanh", "sigmoid", "log1p", "reciprocal", "rsqrt", "expm1", "relu"]


def _run(T, name):
    x = T.tensor(VALUES, requires_grad=True)
    y = getattr(T, name)(x) * 1e30
    (y / 0.0).sum().backward()
    return y.detach().numpy().copy(), x.grad.numpy().copy()


@pytest.mark.parametrize("settings", ["default", "raise", "warn_as_error"])
@pytest.mark.parametrize("name", OPS)
def test_special_values_are_silent(name, settings):
    want = _run(torch, name)
    with warnings.catch_warnings():
        if settings == "warn_as_error":
            warnings.simplefilter("error")      # replaces every filter, glassgrad's own included
            with np.errstate(all="warn"):
                got = _run(glassgrad, name)
        elif settings == "raise":
            with np.errstate(all="raise"):
                got = _run(glassgrad, name)
        else:
            got = _run(glassgrad, name)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6)
