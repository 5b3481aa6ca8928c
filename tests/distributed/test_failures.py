"""A rank that fails, dies, is late or calls a different collective ends the job with a clear error instead of
leaving the others waiting: each case runs 2 ranks under mpiexec (_failure_worker.py) and must end well
before the late rank's 30 s sleep."""

import pytest
from _mpi_job import mpi_job

def job(case):
    code, out, elapsed = mpi_job("_failure_worker.py", case, timeout=60)
    assert code != 0, out
    assert "not reached" not in out, out
    assert elapsed < 20, f"the job took {elapsed:.1f}s: it waited for the late rank\n{out}"
    return out


@pytest.mark.parametrize("case, message", [
    ("timeout", "rank 0: DistBackendError after 1.0"),
    ("timeout_wait", "rank 0: DistBackendError after 0.5"),
])
def test_timeout_is_honoured(case, message):
    out = job(case)
    assert message in out, out
    assert "Timed out waiting" in out, out


def test_collectives_of_different_sizes_are_refused_on_every_rank():
    out = job("mismatch_size")
    for r, n, m in ((0, 4, 8), (1, 8, 4)):
        assert (f"rank {r}: DistBackendError after" in out and f"Rank {r} is running collective: "
                f"all_reduce(dtype=float32, numel={n}, op=SUM), but the group's ranks differ in numel ({n} here, "
                f"{m} on another rank)" in out), out


def test_different_collectives_are_refused():
    out = job("mismatch_collective")
    assert "Rank 0 is running collective: all_reduce(dtype=float32, numel=4, op=SUM), but the group's ranks differ in " \
        "collective (all_reduce here, broadcast on another rank)" in out, out


def test_different_object_collectives_are_refused():
    out = job("mismatch_object")
    assert "differ in collective (broadcast_object_list here, all_gather_object on another rank)" in out, out


def test_an_uncaught_error_on_one_rank_ends_the_job_under_plain_mpiexec():
    out = job("raise")
    assert "ValueError: rank 1 failed on purpose" in out, out


def test_a_killed_rank_ends_the_job():
    out = job("killed")
    assert "signal 9" in out or "Killed" in out, out
