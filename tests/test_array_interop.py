"""NumPy interop against torch: from_numpy and .numpy() share memory, __array__ / __array_wrap__ make NumPy
functions take tensors (ufuncs give tensors back), and the errors for arrays torch refuses are torch's."""
import warnings

import numpy as np
import pytest
import torch

import glassgrad

DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_]


def _arrays(dt):
    base = (np.arange(24) % 5).astype(dt).reshape(2, 3, 4)
    return {"contiguous": base, "transposed": base.transpose(2, 0, 1), "sliced": base[:, ::2, 1:],
            "broadcast": np.broadcast_to(base[:1], (3, 3, 4)), "zero_d": np.array(base[1, 1, 1]),
            "empty": base[:, :0], "fortran": np.asfortranarray(base)}


def _result(fn):
    """What fn() gives: ('error', type name, message) or ('value', type name, dtype, values)."""
    try:
        r = fn()
    except Exception as e:                  # noqa: BLE001 -- compared between the libraries
        return "error", type(e).__name__, str(e)
    vals = np.asarray(r.detach().numpy() if hasattr(r, "detach") else r, dtype=object if isinstance(r, tuple) else None)
    return "value", type(r).__name__, str(getattr(r, "dtype", "")).replace("torch.", ""), vals.tolist()


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("layout", sorted(_arrays(np.float32)))
def test_from_numpy_shares_memory_both_ways(dt, layout):
    a = _arrays(dt)[layout]
    g, t = glassgrad.from_numpy(a), torch.from_numpy(a)
    assert str(g.dtype) == str(t.dtype) and tuple(g.shape) == tuple(t.shape) and g.stride() == t.stride()
    assert np.shares_memory(g.numpy(), a) or a.size == 0
    if a.size and a.flags.writeable:
        g.numpy()[...] = 0                   # a write through the tensor shows in the array ...
        assert not a.any()
        a[...] = 1                           # ... and the other way round
        assert g.all().item()


def test_numpy_shares_memory_and_keeps_strides():
    base = glassgrad.arange(12.0).reshape(3, 4)
    for g, t in [(base, torch.arange(12.0).reshape(3, 4)), (base.t(), torch.arange(12.0).reshape(3, 4).t())]:
        n = g.numpy()
        assert n.strides == t.numpy().strides
        g.add_(1)
        assert n[0, 0] == g[0, 0].item()     # the same memory, not a copy


@pytest.mark.parametrize("case", ["list", "np_scalar", "object", "negative_stride", "big_endian", "python_int"])
def test_from_numpy_refuses_what_torch_refuses(case):
    x = {"list": [1, 2], "np_scalar": np.float64(3), "object": np.array([1, None]),
         "negative_stride": np.arange(6.0)[::-1], "big_endian": np.array([1.0], ">f8"), "python_int": 3}[case]
    ours, theirs = _result(lambda: glassgrad.from_numpy(x)), _result(lambda: torch.from_numpy(x))
    assert ours[:2] == theirs[:2] == ("error", theirs[1])
    if case == "object":                     # torch also lists dtypes glassgrad lacks (uint16, complex ...)
        cut = "The only supported types"
        assert ours[2].split(cut)[0] == theirs[2].split(cut)[0]
    else:
        assert ours[2] == theirs[2]


def test_from_numpy_warns_once_about_read_only_arrays():
    from glassgrad.ops import creation
    a = np.arange(3.0)
    a.flags.writeable = False
    creation._warned_readonly.clear()
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        glassgrad.from_numpy(a)
        glassgrad.from_numpy(a)
    import subprocess
    import sys
    theirs = subprocess.run(                 # torch warns once per process: ask a fresh one
        [sys.executable, "-W", "always", "-c", "import numpy as np, torch; a = np.arange(3.0); "
         "a.flags.writeable = False; torch.from_numpy(a)"], capture_output=True, text=True).stderr
    assert [w.category for w in ours] == [UserWarning]
    assert "UserWarning: " + str(ours[0].message) in theirs


FUNCS = {
    "asarray": lambda m, t: np.asarray(t),
    "asarray_dtype": lambda m, t: np.asarray(t, dtype=np.float64),
    "array": lambda m, t: np.array(t),
    "exp": lambda m, t: np.exp(t),
    "exp_0d": lambda m, t: np.exp(t[0, 0]),
    "isnan": lambda m, t: np.isnan(t),
    "add_scalar": lambda m, t: np.add(t, 1),
    "maximum": lambda m, t: np.maximum(t, 2.5),
    "add_ndarray_first": lambda m, t: np.add(np.ones(3), t),
    "ufunc_out": lambda m, t: np.add(t, t, out=np.empty((2, 3), np.float32)),
    "concatenate": lambda m, t: np.concatenate([t, t]),
    "stack": lambda m, t: np.stack([t, t]),
    "dot": lambda m, t: np.dot(t, t.T),
    "allclose": lambda m, t: np.allclose(t, np.arange(6.0).reshape(2, 3)),
    "where": lambda m, t: np.where(t > 2),
    "shape": lambda m, t: tuple(np.shape(t)),
    "argmax": lambda m, t: np.argmax(t),
    "sum": lambda m, t: np.sum(t),
    "requires_grad": lambda m, t: np.asarray(m.ones(2, requires_grad=True)),
    "numpy_requires_grad": lambda m, t: m.ones(2, requires_grad=True).numpy(),
    "numpy_force": lambda m, t: m.ones(2, requires_grad=True).numpy(force=True),
    "float_of_0d": lambda m, t: np.float64(t[1, 2]),
}


@pytest.mark.parametrize("case", sorted(FUNCS))
def test_numpy_functions_take_tensors_as_in_torch(case):
    ours = _result(lambda: FUNCS[case](glassgrad, glassgrad.arange(6.0).reshape(2, 3)))
    with warnings.catch_warnings():          # torch's __array__/__array_wrap__ predate NumPy 2's signatures
        warnings.simplefilter("ignore", DeprecationWarning)
        theirs = _result(lambda: FUNCS[case](torch, torch.arange(6.0).reshape(2, 3)))
    assert ours[:2] == theirs[:2]
    if ours[0] == "error":
        assert case == "sum" or ours[2] == theirs[2]      # sum: both TypeError, the method's name differs
    else:
        assert ours == theirs


def test_asarray_shares_memory_and_copy_copies():
    g = glassgrad.arange(4.0)
    assert np.shares_memory(np.asarray(g), g.numpy())
    assert not np.shares_memory(np.array(g, copy=True), g.numpy())


@pytest.mark.parametrize("op", ["add", "mul", "lt", "matmul"])
def test_an_ndarray_on_the_left_gives_a_tensor(op):
    """Deliberate difference: glassgrad's __array_priority__ makes `ndarray OP tensor` a tensor, as with the
    tensor on the left.  torch 2.13 sets the same priority but its reflected operators reject ndarrays, so
    there the expression raises TypeError."""
    import operator
    f = getattr(operator, op)
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    b = a.T.copy() if op == "matmul" else a + 1
    ours = f(a, glassgrad.from_numpy(b))
    assert isinstance(ours, glassgrad.Tensor)
    np.testing.assert_array_equal(ours.numpy(), f(torch.from_numpy(a), torch.from_numpy(b)).numpy())
    with pytest.raises(TypeError):
        f(a, torch.from_numpy(b))
