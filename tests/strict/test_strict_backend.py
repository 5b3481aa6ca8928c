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


def test_launch_counting_counts_kernels_not_views():
    from glassgrad import _strict
    a = _dev(np.arange(12.0).reshape(3, 4))
    with _strict.counting() as c:
        b = a + 1.0                       # a ufunc: one kernel
        a.reshape(4, 3)                   # a view: none
        a.T                               # a view: none
        a[1:]                             # basic indexing, a view: none
        a[_dev(np.array([0, 2]))]         # fancy indexing: a gather kernel
        np.where(a > 2, a, b)             # a comparison and a where: two
        a.sum()                           # a reduction: one
        a[0] = 5.0                        # a write: one
        _strict.xp.empty((3,))            # an allocation: none
    names = sorted(name for (name, where), n in c.items() for _ in range(n))
    assert names == sorted(["add", "getitem", "greater", "where", "sum", "setitem"]), names
    assert all(where.startswith("?") or "test" not in where for (name, where) in c)


def test_bench_launches_counts_a_training_step():
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.run([sys.executable, os.path.join(root, "bench", "launches.py"), "--only", "mlp", "--top", "3"],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=os.path.join(root, "src")))
    assert p.returncode == 0, p.stderr[-2000:]
    row = [line for line in p.stdout.splitlines() if line.startswith("| mlp |")]
    assert row and int(row[0].split("|")[2]) > 10, p.stdout          # a step is tens of launches, not none


def test_leaf_adopts_its_first_gradient_on_the_device_without_aliasing():
    """The engine's first .grad takes a fresh gradient array as it is (no copy kernel) on the device as on the
    CPU -- and copies one that another leaf already holds."""
    import glassgrad as gg
    from glassgrad import _strict
    lin = gg.nn.Linear(3, 4, device="cuda")
    loss = lin(gg.ones(5, 3, device="cuda")).sum()
    with _strict.counting() as c:
        loss.backward()
    assert not [k for k in c if "engine" in k[1]], c
    a = gg.ones(3, device="cuda", requires_grad=True)
    b = gg.ones(3, device="cuda", requires_grad=True)
    (a + b).sum().backward()                      # one gradient array reaches both leaves
    a.grad.add_(1)
    assert b.grad.cpu().tolist() == [1.0, 1.0, 1.0]


def test_str_of_a_device_array_is_its_values_as_cupy():
    assert str(_dev(np.array(5))) == "5"
    assert f"{_dev(np.array([1.5, 2.0]))}" == str(np.array([1.5, 2.0]))


def test_nll_target_error_names_the_target_on_the_device(monkeypatch):
    import glassgrad as gg
    monkeypatch.setenv("GLASSGRAD_FUSED", "0")
    with pytest.raises(IndexError, match=r"^Target 5 is out of bounds\.$"):
        gg.nn.functional.nll_loss(gg.zeros(2, 3, device="cuda"), gg.tensor([0, 5], device="cuda"))
