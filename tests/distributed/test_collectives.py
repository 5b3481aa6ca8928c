"""torch.distributed on MPI: the collectives on two processes (mpiexec -n 2), and the process-group API's
behaviour and errors in one process, compared with torch (gloo, one process, a file:// rendezvous)."""

import numpy as np
import pytest
from _mpi_job import mpi_job
import torch
import torch.distributed as tdist

import glassgrad
import glassgrad.distributed as gdist
from glassgrad.distributed import _comm



def test_collectives_on_two_processes():
    """Every collective, async Work, send/recv (from any source), object collectives and a subgroup, on 2 ranks:
    each result is the exact value torch defines (the worker checks and aborts the job on a difference)."""
    code, out, _ = mpi_job("_collectives_worker.py")
    assert code == 0, out
    assert "rank 0: all collectives as torch" in out and "rank 1: all collectives as torch" in out, out


def _run(lib, fn):
    try:
        return "ok", fn()
    except Exception as e:          # noqa: BLE001 -- the error is what is compared
        return type(e).__name__, str(e).split("\n")[0]


def _same(fn):
    a = _run("torch", lambda: fn(torch, tdist))
    b = _run("glassgrad", lambda: fn(glassgrad, gdist))
    assert a[0] == b[0], (a, b)
    if a[0] != "ok":
        assert a[1] == b[1], (a, b)
    return a, b


@pytest.mark.parametrize("case", [
    lambda T, d: d.broadcast(T.arange(4.0), src=5),
    lambda T, d: d.reduce(T.arange(4.0), dst=3),
    lambda T, d: d.send(T.arange(4.0), dst=0),
    lambda T, d: d.init_process_group("gloo"),
    lambda T, d: d.all_gather([T.zeros(3)], T.arange(4.0)),
    lambda T, d: d.all_reduce([T.arange(4.0)]),
    lambda T, d: (d.get_rank(), d.get_world_size(), d.get_backend()),
], ids=["broadcast-bad-root", "reduce-bad-root", "send-to-self", "init-twice", "all_gather-bad-size",
        "all_reduce-list", "rank-size-backend"])
def test_errors_and_answers_match_torch(both_worlds_of_one, case):
    a, b = _same(case)
    if a[0] == "ok":
        assert a[1] == b[1]


def test_one_process_results_match_torch(both_worlds_of_one):
    for op in ("SUM", "AVG", "MAX", "PRODUCT"):
        x, y = torch.arange(5.0), glassgrad.arange(5.0)
        tdist.all_reduce(x, op=getattr(tdist.ReduceOp, op))
        gdist.all_reduce(y, op=getattr(gdist.ReduceOp, op))
        assert np.array_equal(x.numpy(), y.numpy()), op
    x, y = torch.arange(6.0).view(2, 3).t(), glassgrad.arange(6.0).view(2, 3).t()
    tdist.all_reduce(x)
    gdist.all_reduce(y)
    assert np.array_equal(x.numpy(), y.numpy())
    work = gdist.all_reduce(y, async_op=True)
    assert work.wait() is True and work.is_completed() and work.is_success()
    objs = [None]
    gdist.all_gather_object(objs, {"a": 1})
    assert objs == [{"a": 1}]


def test_errors_before_init_match_torch(tmp_path):
    assert not gdist.is_initialized() and gdist.is_available()
    a = _run("torch", tdist.get_rank)
    b = _run("glassgrad", gdist.get_rank)
    assert a == b
    a = _run("torch", lambda: tdist.init_process_group("nccl", init_method=f"file://{tmp_path / 'rdv'}", rank=0,
                                                        world_size=1))
    b = _run("glassgrad", lambda: gdist.init_process_group("nccl"))
    assert a == b
    assert not gdist.is_initialized()


@pytest.mark.parametrize("env, init_method", [({}, None), ({"RANK": "0"}, None),
                                              ({"RANK": "0", "MASTER_ADDR": "127.0.0.1"}, "env://"),
                                              ({}, "tcp://127.0.0.1:29599")])
def test_what_a_process_started_alone_lacks_is_named_as_torch_names_it(monkeypatch, env, init_method):
    """A process of a job of one asking for world_size=2 meets the others through env:// or tcp:// (as one
    started by torch.multiprocessing.spawn does): without its rank or rank 0's address, torch's ValueError."""
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    errors = []
    for lib in (tdist, gdist):
        with pytest.raises(ValueError) as e:
            lib.init_process_group("gloo", init_method=init_method, world_size=2)
        errors.append(str(e.value))
        assert not lib.is_initialized()
    assert errors[0] == errors[1]


def test_one_process_needs_no_mpi(monkeypatch):
    monkeypatch.setattr(_comm, "mpi", lambda: None)
    monkeypatch.setattr(_comm, "launched_by_mpi", lambda: False)
    gdist.init_process_group("gloo")
    try:
        assert isinstance(gdist.distributed_c10d._group(None).comm, _comm.SelfComm)
        t = glassgrad.arange(3.0)
        gdist.all_reduce(t, op=gdist.ReduceOp.AVG)
        gdist.broadcast(t, src=0)
        out = [glassgrad.zeros(3)]
        gdist.all_gather(out, t)
        assert np.array_equal(out[0].numpy(), [0.0, 1.0, 2.0]) and np.array_equal(t.numpy(), [0.0, 1.0, 2.0])
    finally:
        gdist.destroy_process_group()
    with pytest.raises(RuntimeError, match="pip install glassgrad\\[dist\\]"):
        gdist.init_process_group("gloo", world_size=2)
