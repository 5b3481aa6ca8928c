"""Processes started apart (torch.multiprocessing.spawn) that meet through a store rather than MASTER_ADDR:
init_process_group's file:// init_method (a FileStore) and its store= argument (a TCPStore made by the
script); run unchanged under `glassgrad run` and under torch, the results are torch's, exactly."""
import re
import socket
import subprocess
import sys

import pytest

SCRIPT = '''
import datetime, sys
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def work(rank, world_size, how, where):
    if how == "file":
        dist.init_process_group("gloo", init_method="file://" + where, rank=rank, world_size=world_size)
    else:
        store = dist.TCPStore("127.0.0.1", int(where), world_size, rank == 0, datetime.timedelta(seconds=60))
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size)
    t = torch.arange(3) + 10 * rank
    dist.all_reduce(t)
    objs = [None, None]
    dist.all_gather_object(objs, rank * 7)
    sys.stdout.write(f"rank {rank}: {t.tolist()} {objs}\\n")
    sys.stdout.flush()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(work, args=(2, sys.argv[1], sys.argv[2]), nprocs=2, join=True)
'''


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@pytest.mark.parametrize("how", ["file", "store"])
def test_spawned_processes_meet_through_a_store(tmp_path, how):
    script = tmp_path / "spawned.py"
    script.write_text(SCRIPT)
    outs = {}
    for lib, cmd in (("glassgrad", [sys.executable, "-m", "glassgrad", "run"]), ("torch", [sys.executable])):
        where = str(tmp_path / f"rdv_{lib}") if how == "file" else _free_port()
        r = subprocess.run(cmd + [str(script), how, where], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        outs[lib] = sorted(re.findall(r"rank \d: .*", r.stdout))
    assert outs["glassgrad"] == outs["torch"] == ["rank 0: [10, 12, 14] [0, 7]", "rank 1: [10, 12, 14] [0, 7]"]
