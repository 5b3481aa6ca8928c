"""Checkpoint throughput: save and load a ~100 MB state_dict with glassgrad (its default, torch's zip format, and
reading a file torch.save wrote) next to torch.save / torch.load(weights_only=True), in one process per
library, best of N.  Prints MB/s.

    python bench/checkpoint.py [--mb 100] [--repeat 5] [--dir /tmp]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _state(T, mb):
    """A ResNet-ish state_dict: a few big float32 matrices, many small tensors, int64 counters."""
    T.manual_seed(0)
    sd, total, i = {}, 0, 0
    while total < mb * 2 ** 20:
        n = 1024 * (256 if i % 4 == 0 else 16)
        sd[f"layer{i}.weight"] = T.randn(n // 1024, 1024)
        sd[f"layer{i}.bias"] = T.randn(1024)
        sd[f"layer{i}.num_batches_tracked"] = T.tensor(i)
        total += (n + 1024) * 4 + 8
        i += 1
    return sd, total


def child(lib, mb, repeat, folder):
    if lib == "torch":
        import torch as T
        save, load = T.save, lambda p, **kw: T.load(p, weights_only=True, **kw)
    else:
        sys.path.insert(0, os.path.join(HERE, "..", "src"))
        import glassgrad as T
        save, load = T.save, T.load
    sd, nbytes = _state(T, mb)
    path = os.path.join(folder, f"ck_{lib}.pt")
    best = {"save": float("inf"), "load": float("inf")}
    for _ in range(repeat):
        t = time.perf_counter()
        save(sd, path)
        best["save"] = min(best["save"], time.perf_counter() - t)
        t = time.perf_counter()
        load(path)
        best["load"] = min(best["load"], time.perf_counter() - t)
    out = {k: nbytes / v / 1e6 for k, v in best.items()}
    b = float("inf")
    for _ in range(repeat):                  # mmap=True: the open is lazy, so this is a time, not a rate
        t = time.perf_counter()
        load(path, mmap=True)
        b = min(b, time.perf_counter() - t)
    out["mmap_open_ms"] = b * 1e3
    if lib == "glassgrad":                   # glassgrad reading a file torch wrote
        import torch
        tp = os.path.join(folder, "ck_from_torch.pt")
        torch.save(_state(torch, mb)[0], tp)
        b = float("inf")
        for _ in range(repeat):
            t = time.perf_counter()
            load(tp)
            b = min(b, time.perf_counter() - t)
        out["load_torch_file"] = nbytes / b / 1e6
    out["file_mb"] = os.path.getsize(path) / 1e6
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--child")
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.mb, a.repeat, a.dir)
    res = {}
    for lib in ("glassgrad", "torch"):
        p = subprocess.run([sys.executable, __file__, "--child", lib, "--mb", str(a.mb), "--repeat", str(a.repeat),
                            "--dir", a.dir], capture_output=True, text=True)
        if p.returncode:
            sys.exit(p.stderr)
        res[lib] = json.loads(p.stdout)
    g, t = res["glassgrad"], res["torch"]
    print(f"# {a.mb:g} MB state_dict, best of {a.repeat}, files in {a.dir}; MB/s (higher is better)")
    print(f"{'':28} {'glassgrad':>10} {'torch':>10} {'gg/torch':>9}   (mmap row: ms, lower is better)")
    print(f"{'save':28} {g['save']:10.0f} {t['save']:10.0f} {g['save'] / t['save']:9.2f}")
    print(f"{'load (own format)':28} {g['load']:10.0f} {t['load']:10.0f} {g['load'] / t['load']:9.2f}")
    print(f"{'load a torch.save file':28} {g['load_torch_file']:10.0f} {t['load']:10.0f} "
          f"{g['load_torch_file'] / t['load']:9.2f}")
    print(f"{'open with mmap=True (ms)':28} {g['mmap_open_ms']:10.1f} {t['mmap_open_ms']:10.1f} "
          f"{g['mmap_open_ms'] / t['mmap_open_ms']:9.2f}")
    print(f"{'file size (MB)':28} {g['file_mb']:10.1f} {t['file_mb']:10.1f}")


if __name__ == "__main__":
    main()
