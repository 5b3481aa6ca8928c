"""DistributedDataParallel on 2 processes (mpiexec -n 2) against one process on the global batch, and its
one-process surface (module attribute, state_dict keys, DataParallel) against torch."""

import pytest
from _mpi_job import mpi_job
import torch

import glassgrad
import glassgrad.distributed as gdist
from glassgrad.nn.parallel import DistributedDataParallel



def test_ddp_on_two_processes_matches_one_process_on_the_global_batch():
    """Broadcast of rank 0's parameters, 5 SGD-momentum steps in several buckets, no_sync accumulation,
    find_unused_parameters and DistributedSampler's shares: parameters and gradients within rtol 1e-5 of one
    process training on the global batch (the worker checks and aborts the job on a difference)."""
    code, out, _ = mpi_job("_ddp_worker.py")
    assert code == 0, out
    assert out.count("DDP matches one process on the global batch") == 2, out


def test_ddp_needs_a_process_group():
    m = glassgrad.nn.Linear(2, 1)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedDataParallel(m)


def test_one_process_ddp_and_data_parallel_keep_torchs_surface(tmp_path):
    import torch.distributed as tdist
    tdist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rdv'}", rank=0, world_size=1)
    gdist.init_process_group("gloo")
    try:
        tm, gm = torch.nn.Linear(3, 2), glassgrad.nn.Linear(3, 2)
        tk = list(torch.nn.parallel.DistributedDataParallel(tm).state_dict())
        gd = DistributedDataParallel(gm)
        assert list(gd.state_dict()) == tk and gd.module is gm
        assert list(glassgrad.nn.DataParallel(gm).state_dict()) == list(torch.nn.DataParallel(tm).state_dict())
        x = glassgrad.randn(4, 3)
        gd(x).sum().backward()
        ref = glassgrad.nn.Linear(3, 2)
        ref.load_state_dict(gm.state_dict())
        ref(x).sum().backward()
        assert glassgrad.allclose(gm.weight.grad, ref.weight.grad)
    finally:
        tdist.destroy_process_group()
        gdist.destroy_process_group()
