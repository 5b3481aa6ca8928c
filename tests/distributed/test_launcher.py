"""glassgrad run: an unmodified `import torch` script on 1 and 2 processes with torchrun's environment, and
a failing rank ending the whole job with its error instead of leaving the other rank waiting."""
import socket
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


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_nodes_started_apart_join_one_world(tmp_path):
    """torchrun's multi-node form: each node runs the launcher with its --node-rank; the nodes' MPI jobs meet
    through node 0 at --master-addr:--master-port (node 1 started first: it waits for node 0)."""
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    port = str(_free_port())

    def node(rank):
        return subprocess.Popen([sys.executable, "-m", "glassgrad", "run", "--nnodes", "2", "--node-rank", str(rank),
                                 "--master-addr", "127.0.0.1", "--master-port", port, str(script), "--lr", "3"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    second = node(1)
    time.sleep(0.5)
    first = node(0)
    outs = [p.communicate(timeout=120)[0] for p in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, outs
    for rank in (0, 1):     # RANK, WORLD_SIZE, LOCAL_RANK; the all-reduce spans both nodes
        assert f"out {rank} 2 0 {port} [3.0, 3.0] ['--lr', '3']" in outs[rank], outs


def test_a_node_without_node_0_times_out(tmp_path):
    script = tmp_path / "script.py"
    script.write_text("import datetime, torch.distributed as dist\n"
                      "dist.init_process_group('gloo', timeout=datetime.timedelta(seconds=1))\n")
    r = subprocess.run([sys.executable, "-m", "glassgrad", "run", "--nnodes", "2", "--node-rank", "1", "--master-port",
                        str(_free_port()), str(script)], capture_output=True, text=True, timeout=60)
    error = "DistNetworkError: The client socket has timed out after 1s while trying to connect to (127.0.0.1, "
    assert r.returncode != 0 and error in r.stderr, r.stderr


def test_multi_node_flags_parse():
    opts, _, _ = parse(["--nnodes=2", "--node_rank", "1", "--rdzv-endpoint", "10.0.0.1:29400", "--rdzv-backend",
                        "c10d", "--rdzv-id", "7", "s.py"])
    assert (opts["nnodes"], opts["node_rank"], opts["master_addr"], opts["master_port"]) == (2, 1, "10.0.0.1", "29400")
    with pytest.raises(SystemExit, match="elastic MIN:MAX"):
        parse(["--nnodes", "1:4", "s.py"])
    with pytest.raises(SystemExit, match="--node-rank 2 is outside 0..1"):
        parse(["--nnodes", "2", "--node-rank", "2", "s.py"])
    with pytest.raises(SystemExit, match="not restarted"):
        parse(["--max-restarts", "3", "s.py"])
