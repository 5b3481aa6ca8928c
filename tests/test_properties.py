"""Property tests (hypothesis): broadcasting and reduction shapes, values and gradients agree with torch."""
import numpy as np
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import torch

import glassgrad as gg

SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def broadcastable_pair(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4))
    return shapes.input_shapes


@SETTINGS
@given(broadcastable_pair(), st.sampled_from(["add", "sub", "mul", "div"]), st.integers(0, 2 ** 31))
def test_broadcasting_binary_ops(shapes, name, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2, shapes[0]).astype(np.float32)
    b = rng.uniform(0.5, 2, shapes[1]).astype(np.float32)
    res = []
    for T in (torch, gg):
        ta = T.from_numpy(a.copy()).requires_grad_()
        tb = T.from_numpy(b.copy()).requires_grad_()
        y = getattr(T, name)(ta, tb)
        y.sum().backward()
        res.append((y.detach().numpy(), ta.grad.numpy(), tb.grad.numpy()))
    for x, y in zip(res[0], res[1]):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_allclose(y, x, rtol=1e-5, atol=1e-6)


@SETTINGS
@given(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4), st.data())
def test_reduction_shapes(shape, data):
    nd = len(shape)
    dims = data.draw(st.one_of(st.none(), st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd, unique_by=lambda d: d % nd)
                               if nd else st.none()))
    keepdim = data.draw(st.booleans())
    name = data.draw(st.sampled_from(["sum", "mean"]))
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    res = []
    for T in (torch, gg):
        t = T.from_numpy(a.copy()).requires_grad_()
        y = getattr(t, name)() if dims is None else getattr(t, name)(dims, keepdim=keepdim)
        (y * y).sum().backward()
        res.append((y.detach().numpy(), t.grad.numpy()))
    for x, y in zip(res[0], res[1]):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_allclose(y, x, rtol=1e-4, atol=1e-5)


@SETTINGS
@given(st.sampled_from(["float32", "float64", "int64", "int32", "uint8", "bool", "float16"]),
       st.sampled_from(["float32", "float64", "int64", "int32", "uint8", "bool", "float16"]),
       st.booleans(), st.booleans())
def test_type_promotion(d1, d2, zero_a, zero_b):
    res = []
    for T in (torch, gg):
        a = T.ones(() if zero_a else (2,), dtype=getattr(T, d1))
        b = T.ones(() if zero_b else (2,), dtype=getattr(T, d2))
        res.append(str(T.result_type(a, b)))
        if not (d1 == "bool" and d2 == "bool"):
            res.append(str((a + b).dtype))
        res.append(str((a * 2.5).dtype))
        res.append(str((a * 2).dtype))
    n = len(res) // 2
    assert res[:n] == res[n:]
