"""torch's CUDA generator on the device (issue 17): CUDA tensors draw from their device's Philox generator, on the
device, never from the CPU stream; seeds, states, offsets and generator checks behave as torch's.  The values
themselves are checked against an independent reference in tests/test_philox.py; here: the wiring."""
import numpy as np
import pytest

import glassgrad as gg
from glassgrad import backend

pytestmark = pytest.mark.cuda_rng
SM = backend.sm_layout(0)


def _no_copies():
    if not backend.STRICT:
        import contextlib
        return contextlib.nullcontext([])
    from glassgrad import _strict
    return _strict.recording()


def _u_float(w):
    return np.float32(w) * np.float32(2.0 ** -32) + np.float32(2.0 ** -33)


def test_rand_on_device_is_the_philox_stream_and_leaves_the_cpu_generator_alone():
    gg.manual_seed(1234)
    cpu_state = gg.get_rng_state().clone()
    with _no_copies() as copies:
        x = gg.rand(1000, device="cuda")
    assert not copies and x.device.type == "cuda" and x.dtype == gg.float32
    assert gg.equal(gg.get_rng_state(), cpu_state)            # the CPU stream did not move
    from test_philox import ref_place, ref_words
    got = x.cpu().numpy()
    for li in (0, 1, 255, 256, 999):
        thread, call, ii = ref_place(li, 1000, 4, SM)
        assert got[li] == _u_float(ref_words(1234, 0, thread, call)[ii])
    assert gg.cuda.get_rng_state()[8:].tolist() == [4, 0, 0, 0, 0, 0, 0, 0]     # one curand4 call a thread


def test_seed_state_and_fork_rng():
    gg.cuda.manual_seed(5)
    assert gg.cuda.initial_seed() == 5
    st = gg.cuda.get_rng_state()
    assert st.device.type == "cpu" and st.dtype == gg.uint8 and st.shape == (16,)
    a = gg.randn(3, 4, device="cuda")
    gg.cuda.set_rng_state(st)
    assert gg.equal(gg.randn(3, 4, device="cuda"), a)
    with gg.random.fork_rng():
        gg.rand(10, device="cuda")
    b = gg.randn(2, device="cuda")
    gg.cuda.set_rng_state(st)
    gg.randn(3, 4, device="cuda")
    assert gg.equal(gg.randn(2, device="cuda"), b)
    gg.manual_seed(7)                                            # torch.manual_seed seeds the CUDA generators too
    assert gg.cuda.initial_seed() == 7 and gg.cuda.default_generators[0].get_offset() == 0


def test_generator_objects_and_device_checks():
    g = gg.Generator(device="cuda").manual_seed(3)
    assert g.device.type == "cuda" and g.get_state().shape == (16,)
    x = gg.rand(5, generator=g, device="cuda")
    assert g.get_offset() == 4
    g.set_offset(0)
    assert gg.equal(gg.rand(5, generator=g, device="cuda"), x)
    with pytest.raises(RuntimeError, match="multiple of 4"):
        g.set_offset(3)
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        gg.rand(3, generator=g)
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        gg.rand(3, generator=gg.Generator(), device="cuda")
    with pytest.raises(RuntimeError, match="CPU Generator does not use offset"):
        gg.Generator().get_offset()


@pytest.mark.parametrize("draw", [
    lambda: gg.randn(64, 3, device="cuda"), lambda: gg.randint(0, 9, (40,), device="cuda"),
    lambda: gg.randperm(50, device="cuda"), lambda: gg.empty(33, device="cuda").uniform_(-1, 2),
    lambda: gg.empty(33, device="cuda").normal_(1, 3), lambda: gg.empty(33, device="cuda").bernoulli_(0.3),
    lambda: gg.bernoulli(gg.full((5, 7), 0.4, device="cuda")), lambda: gg.empty(9, device="cuda").exponential_(),
    lambda: gg.empty(9, device="cuda").geometric_(0.2), lambda: gg.empty(9, device="cuda").log_normal_(),
    lambda: gg.empty(9, device="cuda").cauchy_(), lambda: gg.empty(9, dtype=gg.int32, device="cuda").random_(),
    lambda: gg.multinomial(gg.rand(4, 6, device="cuda"), 3),
    lambda: gg.multinomial(gg.rand(4, 6, device="cuda"), 8, replacement=True),
    lambda: gg.normal(gg.zeros(6, device="cuda"), gg.ones(6, device="cuda")),
    lambda: gg.randn(3, dtype=gg.complex64, device="cuda"), lambda: gg.rand(6, dtype=gg.float16, device="cuda"),
], ids=["randn", "randint", "randperm", "uniform_", "normal_", "bernoulli_", "bernoulli", "exponential_",
        "geometric_", "log_normal_", "cauchy_", "random_", "multinomial", "multinomial_repl", "normal_tensors",
        "randn_complex", "rand_half"])
def test_draws_stay_on_device_and_repeat_with_the_seed(draw):
    gg.manual_seed(11)
    with _no_copies() as copies:
        a = draw()
    assert not copies and a.device.type == "cuda"
    gg.manual_seed(11)
    assert gg.equal(draw(), a)


def test_distribution_statistics():
    gg.manual_seed(0)
    x = gg.randn(200000, device="cuda").cpu().numpy()
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01
    u = gg.rand(200000, dtype=gg.float64, device="cuda").cpu().numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.005
    k = gg.randint(0, 10, (100000,), device="cuda").cpu().numpy()
    assert np.bincount(k, minlength=10).min() > 9500
    p = gg.randperm(1000, device="cuda").cpu().numpy()
    assert sorted(p.tolist()) == list(range(1000)) and (p != np.arange(1000)).sum() > 900
    e = gg.empty(100000, device="cuda").exponential_(2.0).cpu().numpy()
    assert abs(e.mean() - 0.5) < 0.01 and e.min() > 0


def test_dropout_on_device_is_torchs_fused_kernel():
    gg.manual_seed(2)
    x = gg.ones(4096, device="cuda", requires_grad=True)
    y = gg.nn.functional.dropout(x, 0.25, True)
    assert y.grad_fn.name() == "NativeDropoutBackward0"
    v = y.detach().cpu().numpy()
    assert set(np.unique(v).tolist()) <= {0.0, np.float32(1 / 0.75)}
    assert 0.2 < (v == 0).mean() < 0.3
    y.sum().backward()
    assert gg.equal(x.grad, y.detach())
    gg.manual_seed(2)
    assert gg.equal(gg.nn.Dropout(0.25)(gg.ones(4096, device="cuda")), y.detach())


def test_modules_built_on_the_device_initialise_there():
    gg.manual_seed(4)
    cpu_state = gg.get_rng_state().clone()
    with _no_copies() as copies:
        m = gg.nn.Linear(30, 20, device="cuda")
    assert not copies and m.weight.device.type == "cuda"
    assert gg.equal(gg.get_rng_state(), cpu_state)
    gg.manual_seed(4)
    assert gg.equal(gg.nn.Linear(30, 20, device="cuda").weight, m.weight)
    bound = 1 / np.sqrt(30)
    w = m.weight.detach().cpu().numpy()
    assert np.abs(w).max() <= bound and w.std() > bound / 3
