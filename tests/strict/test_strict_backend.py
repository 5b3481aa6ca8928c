"""backend helpers on the device: ufunc_at's rounds (CuPy has ufunc.at only for add / subtract / maximum /
minimum) against NumPy's ufunc.at, bit for bit, repeated indices and their order included."""
import numpy as np
import pytest

from glassgrad import backend

pytestmark = pytest.mark.skipif(not backend.STRICT, reason="the strict stand-in device's arrays")


def _dev(a):
    from glassgrad import _strict
    return _strict.wrap(a.copy())


@pytest.mark.parametrize("ufunc", [np.multiply, np.add, np.maximum, np.fmax, np.true_divide])
def test_ufunc_at_rounds_equal_numpy(ufunc):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2.0, (6, 5))
    idx = (rng.integers(0, 6, 40), rng.integers(-5, 5, 40))          # many repeats, negative indices
    vals = rng.uniform(0.5, 2.0, 40)
    want = a.copy()
    ufunc.at(want, idx, vals)
    got = _dev(a)
    backend.ufunc_at(ufunc, got, tuple(_dev(i) for i in idx), _dev(vals))
    np.testing.assert_array_equal(got.get(), want)
    rows = rng.integers(0, 6, 15)                                     # one index array into the first axis
    v2 = rng.uniform(0.5, 2.0, (15, 5))
    want = a.copy()
    ufunc.at(want, rows, v2)
    got = _dev(a)
    backend.ufunc_at(ufunc, got, _dev(rows), _dev(v2))
    np.testing.assert_array_equal(got.get(), want)


def test_strict_device_refuses_ufunc_at_as_cupy_does():
    with pytest.raises(NotImplementedError, match="only for add, subtract"):
        np.multiply.at(_dev(np.ones(3)), _dev(np.array([0, 1])), 2.0)
