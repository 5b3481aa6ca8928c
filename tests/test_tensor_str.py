"""glassgrad._tensor_str must print exactly like torch's Tensor.__repr__."""

import contextlib
import math
import os
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassgrad import _tensor_str

nan, inf = math.nan, math.inf


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


@contextlib.contextmanager
def both_options(**kwargs):
    """Apply the same print options to torch and glassgrad, then restore."""
    old_torch = torch._tensor_str.get_printoptions()
    old_mine = _tensor_str.get_printoptions()
    torch.set_printoptions(**kwargs)
    _tensor_str.set_printoptions(**kwargs)
    try:
        yield
    finally:
        torch.set_printoptions(**old_torch)
        _tensor_str.set_printoptions(**old_mine)


@pytest.fixture(autouse=True)
def _restore_options():
    yield
    torch.set_printoptions(profile="default")
    _tensor_str.set_printoptions(profile="default")


def _default_dtypes():
    default = torch.get_default_dtype()
    cdefault = torch.complex128 if default == torch.float64 else torch.complex64
    return (default, cdefault, torch.int64, torch.bool)


def my_repr(t, arr=None, device=None):
    """glassgrad's repr for the torch tensor ``t`` (data given as numpy)."""
    if arr is None:
        arr = t.detach().numpy()
    grad_fn = t.grad_fn
    return _tensor_str.tensor_repr(
        arr,
        dtype_name=str(t.dtype),
        dtype_is_default=t.dtype in _default_dtypes(),
        device=device,
        grad_fn_name=None if grad_fn is None else type(grad_fn).__name__,
        requires_grad=t.requires_grad,
        is_parameter=isinstance(t, torch.nn.Parameter),
    )


def check(t, arr=None, device=None):
    expected = repr(t)
    got = my_repr(t, arr, device)
    assert got == expected, f"\n--- got ---\n{got}\n--- expected ---\n{expected}"
    assert str(t) == expected


def check_np(arr):
    """Check a numpy array (any layout) against torch built from a copy."""
    arr = np.asarray(arr)
    t = torch.from_numpy(np.array(arr, copy=True))
    check(t, arr)


# ---------------------------------------------------------------------------
# explicit cases
# ---------------------------------------------------------------------------

FLOAT_CASES = [
    [1.12345],
    [1.0, 2.0, 3.0],
    [[1.0, -2.5], [100.25, 3.0]],
    [0.1, 0.25, -0.3333333],
    [123456.789, 1.5],
    [9.99996, 1.0],
    [99999.5, 0.5],
    [1e-5, 1e3],
    [1e-5],
    [1e-4, 1.0],
    [1.5e-4, 0.1],
    [1e8],
    [1e9],
    [1e8 + 0.5, 1.0],
    [1e8, 1.0],
    [1e3, 1.0],
    [1001.0, 1.0],
    [1e10, -1e-10, 0.0],
    [1e30, 1e-30],
    [1e300, 1e-300],
    [1.5, nan, -inf, inf],
    [1.0, nan],
    [nan, inf, 0.0],
    [nan],
    [-inf, inf],
    [0.0, 0.0],
    [0.0, -0.0, 1.0],
    [-0.0, 1.0],
    [-0.0, 1.5],
    [-0.0, 1e-6],
    [-1.0, -2.0, 10.0],
    [-123.0, 45.0, nan, -inf],
    [3.0, 1e5, -7.0],
    [2.5, -1e-6, nan],
]


@pytest.mark.parametrize("values", FLOAT_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_float_values(values, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.tensor(values, dtype=dtype)
    check(t)


@pytest.mark.parametrize(
    "value",
    [3.5, 0.0, -0.0, 1.0, -2.0, 1e-5, 1e10, 123.456, nan, inf, -inf, 1e8, 0.1],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_zero_dim_float(value, dtype):
    check(torch.tensor(value, dtype=dtype))


def test_zero_dim_misc():
    check(torch.tensor(3.5))
    check(torch.tensor(7))
    check(torch.tensor(-7, dtype=torch.int8))
    check(torch.tensor(True))
    check(torch.tensor(False))
    check(torch.tensor(255, dtype=torch.uint8))
    # numpy scalar / 0-d input
    t = torch.tensor(2.25, dtype=torch.float64)
    check(t, np.float64(2.25))
    check(t, np.array(2.25))


def test_ints_and_bools():
    check(torch.tensor([1, 2, 3]))
    check(torch.tensor([-1, 20, -300]))
    check(torch.tensor([[1, -2], [30, 4]]))
    check(torch.tensor([2**62, -(2**63)]))
    for dtype in (torch.int8, torch.int16, torch.int32, torch.uint8):
        check(torch.tensor([[1, 2, 3], [4, 5, 100]], dtype=dtype))
    check(torch.tensor([True, False]))
    check(torch.tensor([True, True]))
    check(torch.tensor([False]))
    check(torch.tensor([[True, False], [False, True]]))
    check(torch.arange(300))
    check(torch.arange(2000))
    check(torch.arange(5000, dtype=torch.int32).reshape(50, 100))
    check(torch.zeros(2000, dtype=torch.bool))
    check(torch.ones(30, 40, dtype=torch.bool))


def test_empty():
    check(torch.tensor([]))
    check(torch.zeros(0, 3))
    check(torch.zeros(2, 0, 4))
    check(torch.zeros(0, dtype=torch.float64))
    check(torch.zeros(0, 3, dtype=torch.float16))
    check(torch.zeros(0, dtype=torch.int64))
    check(torch.zeros(3, 0, dtype=torch.int64))
    check(torch.zeros(0, dtype=torch.bool))
    check(torch.zeros(0, dtype=torch.int32))
    check(torch.zeros(0, 2, dtype=torch.uint8))
    check(torch.zeros(0, requires_grad=True))
    check(torch.zeros(0, 5, dtype=torch.float64, requires_grad=True) * 2)


def test_nested_dims():
    torch.manual_seed(0)
    check(torch.randn(2, 3))
    check(torch.randn(2, 3, 4))
    check(torch.randn(2, 2, 3, 4))
    check(torch.randn(1, 1, 1, 1))
    check(torch.randn(2, 1, 3, 1, 2))
    check(torch.arange(24.0).reshape(2, 3, 4))
    check(torch.arange(24).reshape(1, 2, 3, 4) - 12)
    check(torch.randn(4, 3, dtype=torch.float64) * 1e6)
    check(torch.randn(3, 5).half() * 10)


def test_line_wrapping():
    torch.manual_seed(1)
    check(torch.randn(30))
    check(torch.arange(100.0))
    check(torch.randn(3, 25))
    check(torch.randn(2, 3, 20, dtype=torch.float64))
    check(torch.randn(2, 3, 2, 30) * 1e-6)
    check(torch.arange(60) * 12345)
    check(torch.randn(1, 200))


def test_summarization():
    torch.manual_seed(2)
    check(torch.arange(2000.0))
    check(torch.arange(1001.0) / 7)
    check(torch.randn(50, 50))
    check(torch.randn(10, 10, 20))
    check(torch.randn(5, 5, 5, 10))
    check(torch.randn(2, 600))
    check(torch.randn(600, 2))
    check(torch.randn(7, 7, 7, 7, dtype=torch.float64))
    # the formatter only sees the shown edges: huge/tiny values hidden inside
    x = torch.ones(40, 40)
    x[20, 20] = 1e12
    x[10, 5] = 1e-12
    check(x)
    x = torch.full((2000,), 1.5)
    x[1000] = nan
    x[0] = -inf
    check(x)


def test_non_contiguous():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 8)).astype(np.float32)
    check_np(a.T)
    check_np(a[::2, 1::3])
    check_np(a[::-1])
    check_np(np.broadcast_to(a[0], (3, 8)))
    b = rng.standard_normal((40, 50))
    check_np(b.T)
    check_np(b[:, ::-2])
    check_np(np.arange(3000).reshape(30, 100)[:, ::-1])
    check_np(np.asfortranarray(rng.standard_normal((5, 4, 3))))


def test_numpy_dtypes():
    rng = np.random.default_rng(4)
    for dt in (np.float16, np.float32, np.float64):
        check_np((rng.standard_normal((3, 4)) * 50).astype(dt))
    for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8):
        check_np(rng.integers(0, 100, size=(3, 4)).astype(dt))
    check_np(rng.integers(0, 2, size=(3, 4)).astype(bool))


def test_complex():
    check(torch.tensor([1 + 2j, -3.5 - 0j, 0.25j]))
    check(torch.tensor(1 - 2j))
    check(torch.tensor([[1e-5 + 1j, 3 + 1e4j]], dtype=torch.complex128))
    check(torch.zeros(0, dtype=torch.complex64))


# ---------------------------------------------------------------------------
# suffixes: device / size / dtype / grad_fn / requires_grad / Parameter
# ---------------------------------------------------------------------------


def test_requires_grad_and_grad_fn():
    torch.manual_seed(5)
    check(torch.randn(3, requires_grad=True))
    check(torch.randn(3, requires_grad=True) * 2)
    a = torch.randn(3, 4, requires_grad=True)
    b = torch.randn(4, 2)
    check(a @ b)
    check((a @ b).sum())
    check(a + 1)
    check(a.t())
    check(torch.randn(2, 2, dtype=torch.float64, requires_grad=True))
    check(torch.randn(2, 2, dtype=torch.float64, requires_grad=True).exp())
    check(torch.tensor(2.0, requires_grad=True))
    check(torch.tensor(2.0, dtype=torch.float16, requires_grad=True) * 3)
    check(torch.randn(40, 40, dtype=torch.float64, requires_grad=True).relu())


@pytest.mark.parametrize("n", range(1, 16))
def test_suffix_wrapping(n):
    # rows whose last line ends at various columns, with 1-3 suffixes
    base = torch.arange(n, dtype=torch.float64) * 1.5 - 3
    check(base)
    check(base.clone().requires_grad_())
    check(base.clone().requires_grad_() * 1)
    check(base.float().requires_grad_())
    check(base.to(torch.int32))
    check(base.reshape(1, n).half().requires_grad_().sum(0))


def test_device_suffix(monkeypatch):
    # Pretend the default device is cuda so torch prints device='cpu' for CPU
    # tensors; this exercises suffix order and wrapping with a device.
    monkeypatch.setattr(torch._C, "_get_default_device", lambda: "cuda")
    torch.manual_seed(6)
    check(torch.randn(3), device="cpu")
    check(torch.randn(3, dtype=torch.float64), device="cpu")
    check(torch.zeros(0, 3, dtype=torch.int64), device="cpu")
    check(torch.zeros(0), device="cpu")
    check(torch.tensor(1.5), device="cpu")
    check(torch.randn(3, 4, requires_grad=True) * 2, device="cpu")
    for n in range(1, 12):
        check(torch.arange(n, dtype=torch.float64).requires_grad_() + 1, device="cpu")
    with both_options(edgeitems=0):
        check(torch.randn(50, 50, dtype=torch.float64).requires_grad_(), device="cpu")
    # the string is taken verbatim
    got = _tensor_str.tensor_repr(
        np.array([1.0, 2.0], np.float32), dtype_name="torch.float32",
        dtype_is_default=True, device="cuda:0",
    )
    assert got == "tensor([1., 2.], device='cuda:0')"


def test_parameter():
    torch.manual_seed(7)
    check(torch.nn.Parameter(torch.randn(3, 3)))
    check(torch.nn.Parameter(torch.randn(4, dtype=torch.float64)))
    check(torch.nn.Parameter(torch.randn(2, 3), requires_grad=False))
    check(torch.nn.Parameter(torch.randn(100, 30)))
    check(torch.nn.Parameter(torch.tensor(1.0)))
    check(torch.nn.Parameter(torch.zeros(0, 4)))


def test_default_dtype_float64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        check(torch.tensor([1.5, 2.0]))
        check(torch.tensor([1.5, 2.0], dtype=torch.float32))
        check(torch.zeros(0))
        check(torch.zeros(0, dtype=torch.float32))
        check(torch.tensor([1 + 1j]))
    finally:
        torch.set_default_dtype(old)


# ---------------------------------------------------------------------------
# print options
# ---------------------------------------------------------------------------

OPTION_TENSORS = [
    lambda: torch.tensor([1.12345, -2.5, 100.0]),
    lambda: torch.tensor([1e-5, 1e3, nan]),
    lambda: torch.tensor([1.0, 2.0, -3.0]),
    lambda: torch.tensor([0.0, -0.0, inf]),
    lambda: torch.tensor([1e9, 1.0]),
    lambda: torch.arange(2000.0).reshape(20, 100) / 3,
    lambda: torch.arange(1200).reshape(2, 3, 200),
    lambda: torch.randn(10, 10, 12, generator=torch.Generator().manual_seed(0)),
    lambda: torch.tensor(3.14159),
    lambda: torch.arange(40.0, dtype=torch.float64).requires_grad_() * 1.5,
    lambda: torch.tensor([True, False] * 10),
]

OPTIONS = [
    dict(precision=2),
    dict(precision=0),
    dict(precision=8),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(precision=2, sci_mode=True),
    dict(profile="full"),
    dict(profile="short"),
    dict(profile="default"),
    dict(profile="short", precision=6),
    dict(linewidth=40),
    dict(linewidth=120),
    dict(linewidth=10),
    dict(threshold=5),
    dict(threshold=0),
    dict(threshold=5, edgeitems=1),
    dict(threshold=5, edgeitems=0),
    dict(edgeitems=0),
]


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: repr(o))
@pytest.mark.parametrize("make", range(len(OPTION_TENSORS)))
def test_print_options(opts, make):
    t = OPTION_TENSORS[make]()
    with both_options(**opts):
        assert _tensor_str.get_printoptions() == torch._tensor_str.get_printoptions()
        check(t)


def test_profile_full_large():
    torch.manual_seed(8)
    with both_options(profile="full"):
        check(torch.randn(2100))
        check(torch.arange(1500).reshape(30, 50))


def test_get_set_printoptions():
    assert _tensor_str.get_printoptions() == torch._tensor_str.get_printoptions()
    for kwargs in OPTIONS + [dict(profile="full", threshold=10, linewidth=33)]:
        torch.set_printoptions(**kwargs)
        _tensor_str.set_printoptions(**kwargs)
        assert _tensor_str.get_printoptions() == torch._tensor_str.get_printoptions()
    # sci_mode is reset when not given, like torch
    _tensor_str.set_printoptions(sci_mode=True)
    _tensor_str.set_printoptions(precision=3)
    assert _tensor_str.get_printoptions()["sci_mode"] is None


def test_printoptions_context_manager():
    before = _tensor_str.get_printoptions()
    arr = np.array([1.23456789], np.float32)
    kw = dict(dtype_name="torch.float32", dtype_is_default=True)
    with _tensor_str.printoptions(precision=2):
        assert _tensor_str.tensor_repr(arr, **kw) == "tensor([1.23])"
    assert _tensor_str.get_printoptions() == before
    with pytest.raises(RuntimeError):
        with _tensor_str.printoptions(precision=6, sci_mode=True):
            raise RuntimeError
    assert _tensor_str.get_printoptions() == before
    assert _tensor_str.tensor_repr(arr, **kw) == "tensor([1.2346])"


# ---------------------------------------------------------------------------
# property tests
# ---------------------------------------------------------------------------

_SIZE_CHOICES = [0, 1, 2, 3, 4, 5, 6, 7, 9, 13, 25, 40]


@st.composite
def shapes(draw):
    ndim = draw(st.integers(0, 4))
    shape = []
    for _ in range(ndim):
        shape.append(draw(st.sampled_from(_SIZE_CHOICES)))
    # occasionally one long dim (row wrapping / summarisation along it)
    if ndim and draw(st.booleans()) and draw(st.booleans()):
        shape[draw(st.integers(0, ndim - 1))] = draw(st.sampled_from([60, 400, 1100]))
    if math.prod(shape) > 6000:
        shape = [min(s, 13) for s in shape]
    return tuple(shape)


def make_values(rng, shape, dtype, spec):
    n = math.prod(shape)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        digits = spec["int_digits"]
        hi = min(int(info.max), 10**digits)
        lo = max(int(info.min), -(10**digits))
        if spec["nonneg"]:
            lo = max(lo, 0)
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    exps = spec["base_exp"] + spec["spread"] * rng.random(n)
    signs = np.where(rng.random(n) < spec["neg_frac"], -1.0, 1.0)
    vals = signs * 10.0**exps
    round_mask = rng.random(n) < spec["int_frac"]
    vals[round_mask] = np.round(vals[round_mask])
    special = rng.random(n) < spec["special_frac"]
    vals[special] = rng.choice(np.array([nan, inf, -inf, 0.0, -0.0]), size=int(special.sum()))
    with np.errstate(over="ignore"):
        return vals.astype(dtype).reshape(shape)


value_specs = st.fixed_dictionaries(
    {
        "base_exp": st.integers(-12, 12),
        "spread": st.sampled_from([0.0, 0.5, 2.0, 3.5, 8.0, 20.0]),
        "neg_frac": st.sampled_from([0.0, 0.3, 1.0]),
        "int_frac": st.sampled_from([0.0, 0.5, 1.0]),
        "special_frac": st.sampled_from([0.0, 0.0, 0.05, 0.5, 1.0]),
        "int_digits": st.integers(0, 18),
        "nonneg": st.booleans(),
    }
)


@settings(
    max_examples=int(os.environ.get("TS_N1", 400)),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    shape=shapes(),
    dtype=st.sampled_from([np.float32, np.float64, np.int64, np.float32, np.float64,
                           np.float16, np.int32, np.uint8, np.bool_]),
    spec=value_specs,
    seed=st.integers(0, 2**32 - 1),
    transpose=st.booleans(),
    requires_grad=st.booleans(),
)
def test_property_random_tensors(shape, dtype, spec, seed, transpose, requires_grad):
    rng = np.random.default_rng(seed)
    arr = make_values(rng, shape, dtype, spec)
    if transpose:
        arr = arr.T  # non-contiguous view
    t = torch.from_numpy(np.ascontiguousarray(arr).reshape(arr.shape))
    if requires_grad and t.is_floating_point():
        t = t.clone().requires_grad_()
    check(t, arr)


@settings(
    max_examples=int(os.environ.get("TS_N2", 200)),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    shape=shapes(),
    dtype=st.sampled_from([np.float32, np.float64, np.int64]),
    spec=value_specs,
    seed=st.integers(0, 2**32 - 1),
    precision=st.integers(0, 8),
    threshold=st.sampled_from([0, 1, 10, 50, 1000, inf]),
    edgeitems=st.integers(0, 4),
    linewidth=st.integers(10, 160),
    sci_mode=st.sampled_from([None, True, False]),
)
def test_property_random_options(shape, dtype, spec, seed, precision, threshold,
                                 edgeitems, linewidth, sci_mode):
    rng = np.random.default_rng(seed)
    arr = make_values(rng, shape, dtype, spec)
    t = torch.from_numpy(arr.copy())
    if t.is_floating_point() and seed % 3 == 0:
        t = t.requires_grad_() * 1
    with both_options(precision=precision, threshold=threshold, edgeitems=edgeitems,
                      linewidth=linewidth, sci_mode=sci_mode):
        check(t, arr)
