import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))

# tests/strict runs in its own process, with GLASSGRAD_STRICT_DEVICE=1 (read when glassgrad's backend is imported):
# `make test` runs it after the main suite on the strict stand-in device; on a GPU machine, where CuPy takes
# precedence over the stand-in, the same variable collects it to run on the real device (scripts/gpu_check.sh).
collect_ignore = [] if os.environ.get("GLASSGRAD_STRICT_DEVICE") == "1" else ["strict"]

# The suite runs glassgrad as a plain install runs it: NumPy's OpenBLAS, even where the test extra installed
# the optional mkl wheel (tests/test_blas.py switches MKL on for its own tests).
os.environ.setdefault("GLASSGRAD_BLAS", "openblas")

# Property tests draw the same examples on every run and machine: a failure comes back when rerun.
import pytest  # noqa: E402
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("glassgrad", derandomize=True, database=None)
_hypothesis_settings.load_profile("glassgrad")


def _coverage():
    """Distinct torch functions and Tensor methods (operators included) exercised by the op table."""
    import torch
    from opinfo import ALL_OPS
    here = os.path.join(os.path.dirname(__file__), "opinfo")
    src = "\n".join(open(os.path.join(here, f)).read() for f in os.listdir(here)
                    if f.endswith(".py") and f not in ("core.py", "__init__.py", "expected_failures.py"))
    called = set(re.findall(r"T\.(\w+)\(", src)) | set(re.findall(r"\.(\w+)\(", src))
    fns = {n for n in called if callable(getattr(torch, n, None)) and not n[0].isupper()}
    meths = {n for n in called if hasattr(torch.Tensor, n)}
    ops = {"+": "__add__", "-": "__sub__", "*": "__mul__", "/": "__truediv__", "**": "__pow__", "@": "__matmul__",
           "//": "__floordiv__", "%": "__mod__", "[": "__getitem__"}
    meths |= {m for sym, m in ops.items() if re.search(r"\w\s*" + re.escape(sym) + r"\s*[\w(\d]", src)}
    nnf = {o.name.split(".")[2] for o in ALL_OPS if o.name.startswith("nn.functional.")}
    nnf = {n for n in nnf if callable(getattr(torch.nn.functional, n, None))}
    return len(ALL_OPS), len(fns), len(meths), len(nnf)


def pytest_terminal_summary(terminalreporter):
    """Print how many torch functions / Tensor methods the op table covers."""
    try:
        n, f, m, nnf = _coverage()
    except Exception as e:  # pragma: no cover
        terminalreporter.write_line(f"op table: not loaded ({e})")
        return
    terminalreporter.write_line(f"op table: {n} entries (tests/opinfo) exercising {f} torch functions, {m} Tensor "
                                f"methods and {nnf} nn.functional functions, each checked against torch 2.13.0")


@pytest.fixture
def both_worlds_of_one(tmp_path):
    """torch.distributed and glassgrad.distributed, each with a default group of one process."""
    import torch.distributed as tdist
    import glassgrad.distributed as gdist
    tdist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rdv'}", rank=0, world_size=1)
    gdist.init_process_group("gloo")
    yield
    tdist.destroy_process_group()
    gdist.destroy_process_group()
