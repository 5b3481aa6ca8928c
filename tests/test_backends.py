"""torch.backends and torch.version: the switches programs set at their top (cudnn.benchmark = True, ...) behave
as torch's (typed, with torch's errors, flags() restoring them), and the availability queries answer truthfully
for glassgrad on this machine: no cuDNN / MPS / oneDNN / OpenMP here, CUDA only through CuPy on a GPU."""
import contextlib

import pytest
import torch

import glassgrad
from glassgrad import backend


@contextlib.contextmanager
def _restored(mod, *names):
    old = {n: getattr(mod, n) for n in names}
    try:
        yield
    finally:
        for n, v in old.items():
            setattr(mod, n, v)


@pytest.mark.parametrize("name", ["enabled", "benchmark", "deterministic", "allow_tf32"])
def test_cudnn_switches_as_torch(name):
    for T in (torch, glassgrad):
        cd = T.backends.cudnn
        with _restored(cd, name):
            setattr(cd, name, True)
            assert getattr(cd, name) is True
            setattr(cd, name, False)
            assert getattr(cd, name) is False
            with pytest.raises(RuntimeError, match="expects a bool, but got str"):
                setattr(cd, name, "yes")
    assert glassgrad.backends.cudnn.benchmark == torch.backends.cudnn.benchmark is False


def test_cudnn_flags_restores_and_availability():
    import torch.backends.cudnn as tcd
    import glassgrad.backends.cudnn as gcd            # importable as a submodule, as torch's
    for cd in (tcd, gcd):
        with cd.flags(enabled=False, benchmark=True, deterministic=True):
            assert (cd.enabled, cd.benchmark, cd.deterministic) == (False, True, True)
        assert (cd.enabled, cd.benchmark, cd.deterministic) == (True, False, False)
    # no GPU here: neither has cuDNN (torch's CPU build; glassgrad without CuPy on a GPU)
    assert gcd.is_available() is tcd.is_available() is False and gcd.version() is tcd.version() is None
    assert gcd.is_available() == backend.cuda_available() and gcd.benchmark_limit == tcd.benchmark_limit


def test_cuda_matmul_and_sdp_switches_as_torch():
    for T in (torch, glassgrad):
        m = T.backends.cuda.matmul
        assert m.allow_tf32 is False and m.allow_fp16_reduced_precision_reduction is True
        with _restored(m, "allow_tf32"):
            m.allow_tf32 = True
            assert m.allow_tf32 is True
        with pytest.raises(AttributeError, match="Unknown attribute nonsense"):
            m.nonsense = 1
        c = T.backends.cuda
        assert c.flash_sdp_enabled() is True and c.math_sdp_enabled() is True
        c.enable_math_sdp(False)
        assert c.math_sdp_enabled() is False
        c.enable_math_sdp(True)


def test_availability_is_truthful_for_glassgrad():
    b = glassgrad.backends
    assert b.mps.is_available() is b.mps.is_built() is False
    assert b.mkldnn.is_available() is False and b.openmp.is_available() is False      # glassgrad uses neither
    assert b.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    try:
        import cupy  # noqa: F401
        has_cupy = True
    except ImportError:
        has_cupy = False
    assert b.cuda.is_built() is has_cupy
    assert b.opt_einsum.is_available() is False and b.opt_einsum.enabled is False


def test_version_module():
    import glassgrad.version as v
    assert v.__version__ == glassgrad.__version__ and glassgrad.version.debug is False
    assert v.hip is None and (v.cuda is None) == (not glassgrad.backends.cuda.is_built())
    # a script's usual gate runs unchanged
    assert isinstance(glassgrad.version.cuda, (str, type(None)))


def test_a_script_setting_backends_runs_unchanged_through_glassgrad_run(tmp_path):
    """The lines that head many training scripts, run by `glassgrad run` (torch served by glassgrad) and by
    python with torch: the same output."""
    import subprocess
    import sys
    script = tmp_path / "train_head.py"
    script.write_text(
        "import torch\nimport torch.backends.cudnn as cudnn\nfrom torch.testing import assert_close\n"
        "cudnn.benchmark = True\ncudnn.deterministic = False\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
        "print(cudnn.benchmark, torch.backends.mps.is_available(), torch.version.cuda)\n"
        "x = torch.arange(3.0)\nassert_close(x * 1, x)\nprint('ok')\n")
    outs = []
    for cmd in ([sys.executable, "-m", "glassgrad", "run", str(script)], [sys.executable, str(script)]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1] == "True False None\nok\n"


def test_the_other_backends_as_torch():
    import glassgrad.backends as gb
    import torch.backends.mha
    import torch.backends.miopen
    import torch.backends.nnpack
    import torch.backends.quantized
    for lib in (torch, glassgrad):
        b = lib.backends
        assert b.mha.get_fastpath_enabled() is True
        b.mha.set_fastpath_enabled(False)
        assert b.mha.get_fastpath_enabled() is False
        b.mha.set_fastpath_enabled(True)
        assert b.miopen.immediate is False
        with b.miopen.flags(True):
            assert b.miopen.immediate is True
        assert b.miopen.immediate is False
        with pytest.raises(RuntimeError, match="is not a valid value for quantized engine"):
            b.quantized.engine = "bogus"
        with pytest.raises(RuntimeError, match="Assignment not supported"):
            b.quantized.supported_engines = []
        assert b.cusparselt.version() is None and b.cusparselt.is_available() is False
        assert b.kleidiai.is_available() is False
    # truthful for glassgrad: no NNPACK, no quantized engine
    assert gb.nnpack.is_available() is False and gb.quantized.supported_engines == ["none"]
    assert gb.nnpack.set_flags(False) == (True,) and gb.nnpack.set_flags(True) == (False,)
    with pytest.raises(RuntimeError, match="not supported"):
        gb.quantized.engine = "x86"
