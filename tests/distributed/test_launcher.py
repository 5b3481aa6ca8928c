"""glassgrad run: an unmodified `import torch` script on 1 and 2 processes with torchrun's environment, and
a failing rank ending the whole job with its error instead of leaving the other rank waiting."""
import subprocess
import sys
import time

import pytest

from glassgrad._launch import parse

SCRIPT = '''
import os, sys
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(2) * (dist.get_rank() + 1)
dist.all_reduce(t)
line = " ".join(str(v) for v in ("out", os.environ["RANK"], os.environ["WORLD_SIZE"], os.environ["LOCAL_RANK"],
                                  os.environ["MASTER_PORT"], t.tolist(), sys.argv[1:]))
sys.stdout.write(line + "\\n")   # one write: the two ranks share the pipe
sys.stdout.flush()
dist.destroy_process_group()
'''

FAILING = '''
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
if dist.get_rank() == 1:
    raise ValueError("rank 1 breaks")
t = torch.ones(2)
dist.all_reduce(t)          # rank 0 waits here for a rank that is gone
'''


def _run(tmp_path, source, *argv):
    script = tmp_path / "script.py"
    script.write_text(source)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "glassgrad", "run", *argv, str(script), "--lr", "3"],
                       capture_output=True, text=True, timeout=120)
    return r, time.perf_counter() - t0


def test_two_processes_get_torchruns_environment(tmp_path):
    r, _ = _run(tmp_path, SCRIPT, "--nproc-per-node", "2")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    for rank in (0, 1):
        assert f"out {rank} 2 {rank} 29500 [3.0, 3.0] ['--lr', '3']" in out, out


def test_one_process_needs_no_launcher(tmp_path):
    r, _ = _run(tmp_path, SCRIPT, "--master-port", "29611")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "out 0 1 0 29611 [1.0, 1.0] ['--lr', '3']" in r.stdout


def test_a_failing_rank_ends_the_job_with_its_error(tmp_path):
    r, seconds = _run(tmp_path, FAILING, "--nproc-per-node", "2")
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "ValueError: rank 1 breaks" in out, out
    assert seconds < 60, f"the job took {seconds:.1f} s to end"


def test_torchrun_flags_parse():
    opts, script, args = parse(["--standalone", "--nproc_per_node=2", "--master-port", "1234", "s.py", "--x", "1"])
    assert (opts["nproc"], opts["master_port"], script, args) == (2, "1234", "s.py", ["--x", "1"])
    with pytest.raises(SystemExit, match="unknown option '--bogus'"):
        parse(["--bogus", "s.py"])
    with pytest.raises(SystemExit, match="no script given"):
        parse(["--nproc-per-node", "2"])
