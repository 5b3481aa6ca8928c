"""Smoke test of bench/activation_checkpoint.py: it runs both libraries in every mode and prints its table.
No memory or time assertions beyond what must hold on any machine (the numbers are measured, not checked)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_activation_checkpoint_bench_runs(tmp_path):
    out = tmp_path / "r.json"
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "activation_checkpoint.py"), "--smoke", "--json",
                        str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("mlp: MLP")
    assert lines[1].split()[:3] == ["mode", "gg", "held"]
    assert [ln.split()[0] for ln in lines[2:5]] == ["plain", "seq_nonreentrant", "seq_reentrant"]
    data = json.loads(out.read_text())["mlp"]
    for mode in ("plain", "seq_nonreentrant", "seq_reentrant"):
        for lib in ("glassgrad", "torch", "glassgrad_trace"):
            row = data[mode][lib]
            assert row["time"] > 0 and row["peak"] >= row["held"] - (1 << 20)
    # NumPy bytes held by glassgrad's graph: exact (tracemalloc), so checkpointing must keep less than plain
    assert data["seq_nonreentrant"]["glassgrad_trace"]["np_held"] < data["plain"]["glassgrad_trace"]["np_held"]
    assert data["seq_reentrant"]["glassgrad_trace"]["np_held"] < data["plain"]["glassgrad_trace"]["np_held"]
