"""10,000 training steps of the `mlp` workload (784-512-512-10, batch 128, SGD momentum) in one process:
peak and current RSS every 1,000 steps, for glassgrad (default) or torch (`--torch`).  A leak through
graphs, hooks or caches shows as RSS growing after the first steps.

    python bench/leak.py [--steps 10000] [--every 1000] [--torch] [--no-gc]
"""
import argparse
import gc
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--every", type=int, default=1000)
    ap.add_argument("--torch", action="store_true")
    ap.add_argument("--no-gc", action="store_true", help="disable the cyclic garbage collector (graphs must "
                                                         "be freed by reference counting alone)")
    a = ap.parse_args()
    if not a.torch:
        sys.path.insert(0, os.path.join(HERE, "..", "src"))
        from glassgrad import _torch_alias
        _torch_alias.install()
    sys.path.insert(0, HERE)
    from workloads import mlp
    step, _ = mlp.setup(False)
    if a.no_gc:
        gc.disable()
    t0 = time.perf_counter()
    first = None
    print(f"{'step':>6} {'RSS MiB':>8} {'growth':>7} {'s':>6}")
    for i in range(1, a.steps + 1):
        step()
        if i % a.every == 0 or i == 1:
            r = rss_mib()
            first = r if first is None else first
            print(f"{i:>6} {r:8.1f} {r - first:+7.1f} {time.perf_counter() - t0:6.1f}", flush=True)


if __name__ == "__main__":
    main()
