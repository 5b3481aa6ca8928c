"""The seed documents' snippets run unchanged on glassgrad and print exactly what torch prints."""
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[1]
SNIPPETS = sorted((ROOT / "examples" / "seeds").glob("*.py"))


def _run(args):
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("path", SNIPPETS, ids=[p.stem for p in SNIPPETS])
def test_seed_snippet_prints_what_torch_prints(path):
    ours = _run([str(ROOT / "examples" / "run_as_glassgrad.py"), str(path)])
    theirs = _run([str(path)])
    assert ours == theirs


def test_demo_runs():
    out = _run([str(ROOT / "examples" / "demo.py")])
    assert "x.grad = tensor([[3., 7.]])" in out
