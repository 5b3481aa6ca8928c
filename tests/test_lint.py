"""The house rules a reviewer checks first, made executable: pyflakes' checks (through ruff, configured in
pyproject.toml: unused imports and variables, redefinitions, undefined names, f-strings without
placeholders) pass over the library and the tests."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_pyflakes_checks_pass():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", "src", "tests"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
