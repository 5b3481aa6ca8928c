"""torch.testing against torch: assert_close's verdicts and messages (default tolerances per dtype, attribute
checks, scalars, sequences and mappings, exact dtypes), the deprecated assert_allclose, and make_tensor's values
for the same seed."""
import warnings

import pytest
import torch
import torch.testing

import glassgrad
import glassgrad.testing

NAN = float("nan")
CASES = {
    "close_1d": lambda T: ((T.tensor([1., 2., 3.]), T.tensor([1., 2.5, 3.])), {}),
    "close_2d": lambda T: ((T.tensor([[1., 2.], [3., 4.]]), T.tensor([[1., 2.], [3., 4.1]])), {}),
    "int_exact": lambda T: ((T.tensor([1, 2]), T.tensor([1, 3])), {}),
    "uint8": lambda T: ((T.tensor([1, 2], dtype=T.uint8), T.tensor([3, 2], dtype=T.uint8)), {}),
    "bool": lambda T: ((T.tensor([True, False]), T.tensor([True, True])), {}),
    "dtype": lambda T: ((T.tensor([1., 2.]), T.tensor([1., 2.], dtype=T.float64)), {}),
    "dtype_unchecked": lambda T: ((T.tensor([1., 2.]), T.tensor([1., 2.], dtype=T.float64)), {"check_dtype": False}),
    "shape": lambda T: ((T.tensor([1., 2.]), T.tensor([1., 2., 3.])), {}),
    "stride": lambda T: ((T.ones(2, 3).t(), T.ones(3, 2)), {"check_stride": True}),
    "nan": lambda T: ((T.tensor([NAN]), T.tensor([NAN])), {}),
    "nan_equal": lambda T: ((T.tensor([NAN]), T.tensor([NAN])), {"equal_nan": True}),
    "within_default": lambda T: ((T.ones(2), T.ones(2) + 1e-6), {}),
    "explicit_tol": lambda T: ((T.ones(2), T.ones(2) * 1.1), {"rtol": 0.2, "atol": 0}),
    "one_tol_only": lambda T: ((T.ones(2), T.ones(2)), {"rtol": 0.1}),
    "scalar_tensor": lambda T: ((T.tensor(1.), T.tensor(2.)), {}),
    "custom_msg": lambda T: ((T.ones(2), T.ones(2) + 1), {"msg": "custom"}),
    "complex": lambda T: ((T.tensor([1. + 1j]), T.tensor([1. + 2j])), {}),
    "requires_grad": lambda T: ((T.tensor([1., 2.], requires_grad=True), T.tensor([1., 2.])), {}),
    "greatest_of_two": lambda T: ((T.tensor([1., 5., 2.]), T.tensor([1.5, 2., 2.])), {}),
    "atol_at_zero": lambda T: ((T.tensor([0.]), T.tensor([1e-6])), {}),
    "python_floats": lambda T: ((1.0, 1.1), {}),
    "int_vs_float": lambda T: ((1, 1.0), {}),
    "python_ints": lambda T: ((1, 2), {}),
    "list_item": lambda T: (([T.ones(2)], [T.zeros(2)]), {}),
    "dict_item": lambda T: (({"a": T.ones(2)}, {"a": T.zeros(2)}), {}),
    "tuple_mixed": lambda T: (((T.ones(1), 2), (T.ones(1), 3)), {}),
    "seq_length": lambda T: (([1, 2], [1, 2, 3]), {}),
    "tensor_vs_list": lambda T: ((T.ones(2), [1., 1.]), {}),
}


def _outcome(T, mod, name):
    args, kw = CASES[name](T)
    try:
        mod.assert_close(*args, **kw)
        return "ok"
    except Exception as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("name", sorted(CASES))
def test_assert_close_as_torch(name):
    assert _outcome(glassgrad, glassgrad.testing, name) == _outcome(torch, torch.testing, name)


def test_assert_allclose_deprecated_and_lenient_as_torch():
    for T, mod in ((torch, torch.testing), (glassgrad, glassgrad.testing)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            mod.assert_allclose(T.tensor([NAN, 1.0]), [NAN, 1.0])
            with pytest.raises(AssertionError, match="Tensor-likes are not close"):
                mod.assert_allclose(T.tensor([1.0]), T.tensor([2.0], dtype=T.float64))
        assert w and issubclass(w[0].category, FutureWarning) and "assert_allclose()` is deprecated" in str(w[0].message)


@pytest.mark.parametrize("spec", [
    ((3, 2), {"dtype": "float32"}), (((4,),), {"dtype": "int64"}), ((5,), {"dtype": "bool"}),
    ((2,), {"dtype": "complex64"}), ((3,), {"dtype": "uint8", "exclude_zero": True}),
    ((2, 3), {"dtype": "float64", "noncontiguous": True, "low": -1, "high": 1}),
    ((4,), {"dtype": "int32", "low": 3, "high": 5}), ((2, 2), {"dtype": "float16", "requires_grad": True}),
])
def test_make_tensor_same_seed_same_tensor_as_torch(spec):
    shape, kw = spec
    out = []
    for T, mod in ((torch, torch.testing), (glassgrad, glassgrad.testing)):
        T.manual_seed(0)
        k = dict(kw, dtype=getattr(T, kw["dtype"]))
        t = mod.make_tensor(*shape, device="cpu", **k)
        out.append((t.detach().tolist(), str(t.dtype), t.stride(), t.requires_grad))
    assert out[0] == out[1]


def test_make_tensor_errors_as_torch():
    for T, mod in ((torch, torch.testing), (glassgrad, glassgrad.testing)):
        with pytest.raises(ValueError, match="`low` must be less than `high`, but got 3 >= 2"):
            mod.make_tensor(2, dtype=T.int64, device="cpu", low=3, high=2)
        with pytest.raises(ValueError, match="`requires_grad=True` is not supported for boolean and integral"):
            mod.make_tensor(2, dtype=T.int64, device="cpu", requires_grad=True)
