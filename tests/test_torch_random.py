"""torch.random (fork_rng, the seed / state functions, thread_safe_generator) and torch.cuda's RNG functions
without a GPU, against torch."""
import pytest
import torch

import glassgrad as gg


def test_fork_rng_restores_the_cpu_stream_as_torch():
    for T in (torch, gg):
        T.manual_seed(3)
    with gg.random.fork_rng():
        a = gg.rand(4)
    with torch.random.fork_rng():
        ta = torch.rand(4)
    assert a.tolist() == ta.tolist()
    assert gg.rand(4).tolist() == torch.rand(4).tolist()      # the stream was rewound in both
    with gg.random.fork_rng(enabled=False):
        gg.rand(2)
    with torch.random.fork_rng(enabled=False):
        torch.rand(2)
    assert gg.rand(3).tolist() == torch.rand(3).tolist()


def test_module_functions_are_the_global_ones():
    assert gg.random.manual_seed(5) is gg.default_generator
    assert gg.random.initial_seed() == torch.random.manual_seed(5).initial_seed() == 5
    st = gg.random.get_rng_state()
    assert st.tolist() == torch.random.get_rng_state().tolist()
    gg.rand(3)
    gg.random.set_rng_state(st)
    assert gg.rand(3).tolist() == torch.rand(3).tolist()
    assert gg.random.thread_safe_generator() is None is torch.random.thread_safe_generator()
    with pytest.raises(RuntimeError, match="torch has no module of `xpu`"):
        with gg.random.fork_rng(device_type="xpu"):
            pass


def test_cuda_rng_functions_without_a_gpu_answer_as_torchs_cpu_build():
    for T in (torch, gg):
        T.cuda.manual_seed(1)            # queued / nothing to seed: no error
        T.cuda.manual_seed_all(1)
        T.cuda.seed()
        T.cuda.seed_all()
        assert T.cuda.default_generators == ()
        for f in (T.cuda.get_rng_state, T.cuda.initial_seed):
            with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
                f()
    with pytest.raises(RuntimeError, match="Cannot get CUDA generator without ATen_cuda library"):
        gg.Generator(device="cuda")
    with pytest.raises(RuntimeError, match="Cannot get CUDA generator without ATen_cuda library"):
        torch.Generator(device="cuda")
    for T in (torch, gg):
        with pytest.raises(RuntimeError, match="CPU Generator does not use offset"):
            T.Generator().get_offset()
