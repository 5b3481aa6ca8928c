"""The GPU benchmark's glassgrad side (`bench/run.py --device cuda`) runs every workload on the device: here on the
strict stand-in, so a host array on a workload's path fails in CI, before a GPU session spends its time on it."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_bench_workloads_run_on_the_device():
    env = dict(os.environ, GLASSGRAD_STRICT_DEVICE="1", PYTHONPATH=os.path.join(ROOT, "src"))
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run.py"), "--smoke", "--device", "cuda"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "device cuda" in p.stdout and "errors:" not in p.stdout, p.stdout[-3000:]
    rows = [line.split()[0] for line in p.stdout.splitlines() if line[:1].isalpha() and "ms" in line.split()[1:2]]
    assert {"mlp", "cnn", "gpt", "resnet", "lstm"} <= set(rows), p.stdout
