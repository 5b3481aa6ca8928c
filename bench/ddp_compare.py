"""DDP correctness, side by side in one run: glassgrad's DistributedDataParallel against torch's (torchrun,
gloo) on the same program (bench/ddp_program.py), and against one process on the global batch.

    .venv/bin/python bench/ddp_compare.py [--dtype float32] [--variants torch,single-nobn,single-syncbn]

Prints, per comparison and per rank, the largest difference in the per-step losses and the largest relative
difference over every parameter and buffer (running statistics included) at the end.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "ddp_program.py")
BIN = os.path.dirname(sys.executable)


def run(launcher, prefix, flags):
    """Run the program; `launcher` is "torch" (torchrun, 2 processes), "glassgrad" (glassgrad run, 2 processes)
    or "glassgrad-single" (one process, no DDP)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.path.join(HERE, os.pardir, "src"))
    if launcher == "torch":
        cmd = [os.path.join(BIN, "torchrun"), "--standalone", "--nproc-per-node", "2", PROGRAM, prefix]
    else:
        cmd = [sys.executable, "-m", "glassgrad", "run", "--nproc-per-node", "1" if launcher.endswith("single")
               else "2", PROGRAM, prefix] + (["--single"] if launcher.endswith("single") else [])
    r = subprocess.run(cmd + list(flags), capture_output=True, text=True, env=env, timeout=300)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")


def load(prefix, rank):
    with open(f"{prefix}.rank{rank}.json") as f:
        return json.load(f)


def differences(a, b):
    """(max |loss difference| over steps, the largest over parameters and buffers of max|x - y| / max|y| within
    the tensor, the name of that tensor)."""
    if len(a["losses"]) != len(b["losses"]) or list(a["state"]) != list(b["state"]):
        raise AssertionError("the runs differ in steps or in state_dict keys")
    dloss = float(np.max(np.abs(np.subtract(a["losses"], b["losses"]))))
    worst, name = 0.0, ""
    for k in a["state"]:
        x, y = np.array(a["state"][k]), np.array(b["state"][k])
        rel = float(np.max(np.abs(x - y)) / max(np.max(np.abs(y)), 1e-12)) if x.size else 0.0  # per tensor, normwise
        if rel >= worst:
            worst, name = rel, k
    return dloss, worst, name


def compare(variant, dtype, tmp):
    """[(rank, dloss, drel, name)] for one comparison: "torch" (glassgrad DDP vs torch DDP, BatchNorm),
    "single-nobn" / "single-syncbn" (glassgrad DDP vs one glassgrad process on the global batch; the
    reference's state is compared with each rank's, its losses with the mean of the ranks' losses)."""
    flags = ["--dtype", dtype] + {"torch": [], "single-nobn": ["--no-bn"], "single-syncbn": ["--sync-bn"]}[variant]
    mine, ref = os.path.join(tmp, variant + ".g"), os.path.join(tmp, variant + ".ref")
    run("glassgrad", mine, flags)
    run("torch" if variant == "torch" else "glassgrad-single", ref, flags)
    rows = []
    for rank in (0, 1):
        a = load(mine, rank)
        if variant == "torch":
            b = load(ref, rank)
        else:
            b = dict(load(ref, 0))
            a = dict(a, losses=list(np.mean([load(mine, 0)["losses"], load(mine, 1)["losses"]], axis=0)))
        rows.append((rank,) + differences(a, b))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--variants", default="torch,single-nobn,single-syncbn")
    args = ap.parse_args()
    print(f"DDP on 2 processes, {args.dtype}: 12 steps of SGD (momentum 0.9), DistributedSampler over 3 epochs")
    print(f"{'comparison':<44} {'rank':>4} {'max |dloss|':>12} {'max rel dparam/buffer':>22}  worst")
    names = {"torch": "glassgrad DDP vs torch DDP (torchrun, gloo), BN",
             "single-nobn": "glassgrad DDP vs 1 process global batch, no BN",
             "single-syncbn": "glassgrad DDP+SyncBN vs 1 process BN global"}
    with tempfile.TemporaryDirectory() as tmp:
        for variant in args.variants.split(","):
            for rank, dloss, drel, name in compare(variant, args.dtype, tmp):
                print(f"{names[variant]:<44} {rank:>4} {dloss:>12.3g} {drel:>22.3g}  {name}")


if __name__ == "__main__":
    main()
