"""Processes started apart that meet in init_process_group through their rank, world size and rank 0's
address -- torch.multiprocessing.spawn with MASTER_ADDR/MASTER_PORT, PyTorch's own DDP tutorial pattern --
run unchanged under `glassgrad run` and give torch's numbers; a missing peer times out with torch's error."""
import re
import socket
import subprocess
import sys

import pytest

TUTORIAL = '''
import os, sys
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def demo_basic(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = port
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 5))
    ddp_model = DDP(model)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        nn.MSELoss()(ddp_model(torch.randn(20, 10) + rank), torch.randn(20, 5)).backward()
        optimizer.step()
    sys.stdout.write(f"rank {rank} of {dist.get_world_size()}: {model[0].weight.sum().item():.8f}\\\\n")
    sys.stdout.flush()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(demo_basic, args=(2, sys.argv[1]), nprocs=2, join=True)
'''

ALONE = '''
import datetime, sys
import torch.distributed as dist
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[1], rank=int(sys.argv[2]), world_size=2,
                        timeout=datetime.timedelta(seconds=1))
'''


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def _sums(out):
    return {int(r): float(v) for r, v in re.findall(r"rank (\d) of 2: (-?[\d.]+)", out)}


def test_the_ddp_tutorials_spawn_pattern_runs_unchanged_and_gives_torchs_numbers(tmp_path):
    script = tmp_path / "tutorial.py"
    script.write_text(TUTORIAL)
    runs = {}
    for lib, cmd in (("glassgrad", [sys.executable, "-m", "glassgrad", "run"]), ("torch", [sys.executable])):
        r = subprocess.run(cmd + [str(script), _free_port()], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        runs[lib] = _sums(r.stdout)
    assert sorted(runs["glassgrad"]) == [0, 1], runs
    assert runs["glassgrad"][0] == runs["glassgrad"][1]        # DDP kept the replicas equal
    for rank in (0, 1):
        assert runs["glassgrad"][rank] == pytest.approx(runs["torch"][rank], abs=1e-5), runs


@pytest.mark.parametrize("rank, error", [
    (0, "DistStoreError: Timed out after 1 seconds waiting for clients. 1/2 clients joined."),
    (1, "DistNetworkError: The client socket has timed out after 1s while trying to connect to (127.0.0.1, "),
])
def test_a_process_whose_peer_never_comes_times_out(tmp_path, rank, error):
    script = tmp_path / "alone.py"
    script.write_text(ALONE)
    r = subprocess.run([sys.executable, "-m", "glassgrad", "run", str(script), _free_port(), str(rank)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and error in r.stderr, r.stderr
