"""DLPack: glassgrad exchanges memory with PyTorch and NumPy without copies (issue 6, array interop)."""
import numpy as np
import pytest
import torch

import glassgrad
import glassgrad.utils.dlpack
from glassgrad import backend

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool"]   # (glassgrad has no complex dtypes)


def _src(T, dt, layout):
    x = T.arange(12).reshape(3, 4)
    x = (x % 2 == 0) if dt == "bool" else x.to(getattr(T, dt))
    if layout == "transposed":
        x = x.t()
    elif layout == "sliced":
        x = x[:, 1::2]
    elif layout == "scalar":
        x = x[1, 2]
    return x


def _np(t):
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


def _shares(a, b):
    return np.shares_memory(_np(a), _np(b))


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "scalar"])
@pytest.mark.parametrize("dt", DTYPES)
def test_torch_to_glassgrad_shares_memory(dt, layout):
    t = _src(torch, dt, layout)
    g = glassgrad.from_dlpack(t)
    assert g.dtype == getattr(glassgrad, dt) and tuple(g.shape) == tuple(t.shape) and g.stride() == t.stride()
    np.testing.assert_array_equal(g.numpy(), t.numpy())
    assert _shares(g, t)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "scalar"])
@pytest.mark.parametrize("dt", DTYPES)
def test_glassgrad_to_torch_shares_memory(dt, layout):
    g = _src(glassgrad, dt, layout)
    t = torch.from_dlpack(g)
    assert t.dtype == getattr(torch, dt) and tuple(t.shape) == tuple(g.shape) and t.stride() == g.stride()
    np.testing.assert_array_equal(t.numpy(), g.numpy())
    assert _shares(g, t)


def test_writes_are_seen_both_ways():
    t = torch.zeros(2, 3)
    g = glassgrad.from_dlpack(t)
    g[0, 1] = 5.0
    t[1, 2] = 7.0
    assert t.tolist() == g.tolist() == [[0.0, 5.0, 0.0], [0.0, 0.0, 7.0]]
    g2 = glassgrad.zeros(3)
    t2 = torch.from_dlpack(g2)
    t2.add_(1)
    assert g2.tolist() == [1.0, 1.0, 1.0]


def test_numpy_both_ways():
    a = np.arange(6.0).reshape(2, 3)
    g = glassgrad.from_dlpack(a)
    assert np.shares_memory(g.numpy(), a)
    b = np.from_dlpack(g)
    assert np.shares_memory(a, b)


def test_capsules_both_ways():
    cap = glassgrad.utils.dlpack.to_dlpack(glassgrad.tensor([1.0, 2.0]))
    assert torch.utils.dlpack.from_dlpack(cap).tolist() == [1.0, 2.0]
    cap = torch.utils.dlpack.to_dlpack(torch.tensor([3, 4]))
    g = glassgrad.utils.dlpack.from_dlpack(cap)
    assert g.tolist() == [3, 4] and g.dtype == glassgrad.int64


def test_device_matches_torch():
    assert glassgrad.ones(2).__dlpack_device__() == torch.ones(2).__dlpack_device__()


@pytest.mark.parametrize("case", ["requires_grad", "not_an_array"])
def test_errors_match_torch(case):
    errs = []
    for T in (torch, glassgrad):
        with pytest.raises(Exception) as e:
            if case == "requires_grad":
                T.ones(2, requires_grad=True).__dlpack__()
            else:
                T.from_dlpack(5)
        errs.append((type(e.value), str(e.value)))
    assert errs[0] == errs[1]


def test_from_dlpack_of_a_glassgrad_tensor_shares_memory():
    g = glassgrad.arange(4.0)
    h = glassgrad.from_dlpack(g)
    h[0] = 10.0
    assert g.tolist() == [10.0, 1.0, 2.0, 3.0]


@pytest.mark.skipif(not backend.cuda_available(), reason="needs CuPy and a GPU (run on the device machine)")
def test_cupy_both_ways():
    import cupy
    c = cupy.arange(6.0)
    g = glassgrad.from_dlpack(c)
    assert g.device.type == "cuda"
    c2 = cupy.from_dlpack(g)
    c2[0] = 9.0
    assert float(c[0]) == 9.0
