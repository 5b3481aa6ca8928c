"""The collectives and groups of distributed/collectives_more.py on two processes (mpiexec -n 2); each result
is checked against the exact value torch defines by the worker, which ends the job on a difference."""
from _mpi_job import mpi_job


def test_more_collectives_on_two_processes():
    code, out, _ = mpi_job("_more_worker.py")
    assert code == 0, out
    assert "rank 0: more collectives as torch" in out and "rank 1: more collectives as torch" in out, out
