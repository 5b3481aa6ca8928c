"""All-reduce bandwidth: glassgrad.distributed vs raw mpi4py on the same buffers, in one run.

    .venv/bin/mpiexec -n 2 .venv/bin/python bench/dist_allreduce.py [--sizes 1,4,16,64,256] [--repeat 5]

Sizes in MB of float32.  Each point is the minimum over `repeat` timed all-reduces (after a warm-up), with
ranks synchronised by a barrier before each; bandwidth is the buffer size over that time (algorithm
bandwidth, as nccl-tests reports it).  Rank 0 prints the table; ratio = glassgrad time / mpi4py time.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src"))

import glassgrad as torch  # noqa: E402
import glassgrad.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402


def timed(fn, comm, repeat):
    fn()
    best = float("inf")
    for _ in range(repeat):
        comm.Barrier()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return comm.allreduce(best, op=MPI.MAX)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,4,16,64,256")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    dist.init_process_group("mpi")
    comm = MPI.COMM_WORLD
    rows = []
    for mb in (float(s) for s in args.sizes.split(",")):
        n = int(mb * 1024 * 1024 / 4)
        arr = np.ones(n, np.float32)
        t = torch.ones(n)
        t_mpi = timed(lambda: comm.Allreduce(MPI.IN_PLACE, arr), comm, args.repeat)
        t_gg = timed(lambda: dist.all_reduce(t), comm, args.repeat)
        rows.append((mb, t_gg, t_mpi))
    if comm.Get_rank() == 0:
        print(f"# all-reduce, {comm.Get_size()} processes, float32, min of {args.repeat} ({MPI.Get_library_version().splitlines()[0]})")
        print(f"{'MB':>6} {'glassgrad ms':>13} {'GB/s':>6} {'mpi4py ms':>10} {'GB/s':>6} {'ratio':>6}")
        for mb, a, b in rows:
            gb = mb / 1024
            print(f"{mb:>6g} {a * 1e3:>13.2f} {gb / a:>6.2f} {b * 1e3:>10.2f} {gb / b:>6.2f} {a / b:>6.2f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
