"""GEMM throughput on this machine: NumPy's bundled BLAS (what glassgrad uses), Intel MKL through its C
interface (when the `mkl` wheel is installed: `pip install mkl`), and torch.mm, on the float32 GEMMs of
the mlp_large workload (forward, grad-weight, grad-input shapes), each in a fresh process with the same
thread count.  Prints GFLOP/s per shape and library.

    python bench/gemm.py [--threads 2] [--repeat 15]
"""
import argparse
import ctypes
import glob
import json
import os
import subprocess
import sys
import sysconfig

SHAPES = [(256, 784, 4096), (256, 4096, 4096), (4096, 256, 4096), (4096, 256, 784), (256, 4096, 10)]


def _mkl_path():
    for d in {sysconfig.get_config_var("LIBDIR"), os.path.join(sys.prefix, "lib")}:
        hits = sorted(glob.glob(os.path.join(d or "", "libmkl_rt.so*")))
        if hits:
            return hits[0]
    return None


def child(lib, repeat):
    import time
    import numpy as np
    rng = np.random.default_rng(0)
    out = []
    if lib == "mkl":
        mkl = ctypes.CDLL(_mkl_path())
        g = mkl.cblas_sgemm
        ci, cf, cp = ctypes.c_int, ctypes.c_float, ctypes.c_void_p
        g.argtypes = [ci, ci, ci, ci, ci, ci, cf, cp, ci, cp, ci, cf, cp, ci]
    elif lib == "torch":
        import torch
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    for m, k, n in SHAPES:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        c = np.empty((m, n), np.float32)
        if lib == "numpy":
            def f():
                np.matmul(a, b, out=c)
        elif lib == "mkl":
            def f():
                g(101, 111, 111, m, n, k, 1.0, a.ctypes.data, k, b.ctypes.data, n, 0.0, c.ctypes.data, n)
        else:
            ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c)

            def f():
                torch.mm(ta, tb, out=tc)
        f()
        best = float("inf")
        for _ in range(repeat):
            t = time.perf_counter()
            f()
            best = min(best, time.perf_counter() - t)
        out.append(2 * m * n * k / best / 1e9)
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--child")
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.repeat)
    env = dict(os.environ, **{v: str(a.threads) for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                                          "OPENBLAS_NUM_THREADS")})
    libs = ["numpy", "torch"] + (["mkl"] if _mkl_path() else [])
    res = {}
    for rnd in range(2):                       # two interleaved rounds; best of both
        for lib in libs:
            p = subprocess.run([sys.executable, __file__, "--child", lib, "--repeat", str(a.repeat)],
                               env=env, capture_output=True, text=True)
            if p.returncode:
                res[lib] = None
                print(f"{lib}: {p.stderr.strip().splitlines()[-1]}", file=sys.stderr)
                continue
            vals = json.loads(p.stdout)
            res[lib] = vals if res.get(lib) is None else [max(x, y) for x, y in zip(res[lib], vals)]
    print(f"# GFLOP/s, float32, {a.threads} thread(s); mkl: {_mkl_path() or 'not installed'}")
    print(f"{'m x k x n':>18} " + " ".join(f"{lib:>7}" for lib in libs))
    for i, (m, k, n) in enumerate(SHAPES):
        print(f"{f'{m}x{k}x{n}':>18} " + " ".join(f"{res[lib][i]:7.0f}" if res[lib] else "      -"
                                                  for lib in libs))


if __name__ == "__main__":
    main()
