"""Run by tests/distributed/test_failures.py under ``mpiexec -n 2 python _failure_worker.py CASE``: each case
makes one rank misbehave; the test checks that the job ends, and with which error."""
import datetime
import os
import signal
import sys
import time

import glassgrad as torch
import glassgrad.distributed as dist


def main(case):
    timeout = datetime.timedelta(seconds=1) if case.startswith("timeout") else None
    dist.init_process_group("gloo", timeout=timeout)
    r = dist.get_rank()
    t = torch.ones(4)
    dist.all_reduce(t)                       # both ranks are up
    start = time.monotonic()
    try:
        misbehave(case, r, t)
    except dist.DistBackendError as e:
        print(f"rank {r}: {type(e).__name__} after {time.monotonic() - start:.2f}s: {e}", flush=True)
        raise


def misbehave(case, r, t):
    if case == "timeout":                    # rank 1 arrives 30 s late: rank 0 gives up after 1 s
        if r == 1:
            time.sleep(30)
        dist.all_reduce(t)
    elif case == "timeout_wait":             # Work.wait's own timeout
        if r == 1:
            time.sleep(30)
        dist.broadcast(t, 1, async_op=True).wait(timeout=datetime.timedelta(seconds=0.5))
    elif case == "mismatch_size":            # MPI alone returns garbage here
        dist.all_reduce(torch.ones(4 if r == 0 else 8))
    elif case == "mismatch_collective":      # MPI alone hangs here
        if r == 0:
            dist.all_reduce(t)
        else:
            dist.broadcast(t, 1)
    elif case == "mismatch_object":
        if r == 0:
            dist.broadcast_object_list([1], src=0)
        else:
            dist.all_gather_object([None, None], 1)
    elif case == "raise":                    # plain mpiexec: the uncaught error ends the job
        if r == 1:
            raise ValueError("rank 1 failed on purpose")
        time.sleep(0.2)
        dist.all_reduce(t)
    elif case == "killed":
        if r == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        dist.all_reduce(t)
    print(f"rank {r}: not reached", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
