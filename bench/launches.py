"""Kernel launches per training step on the GPU path, counted without a GPU.

    python bench/launches.py [--only mlp,gpt] [--top 12] [--fused] [--torch]

On a GPU a small model's step is bound by kernel launches, not arithmetic: each CuPy call costs its launch
(~5-10 µs of host time) however little it computes.  This runs each bench workload's training step on the
strict stand-in device (GLASSGRAD_STRICT_DEVICE=1, in a child process) and counts the kernels it would launch
(``glassgrad._strict.counting``: every ufunc call, and every other device call that writes an array or returns
fresh memory -- views launch nothing), after one warm-up step, with the glassgrad functions that made the most;
and the host syncs, each read of device data by the host (``.item()``, ``bool()`` of a device array, a host
copy), where the host waits for the GPU to finish everything queued before it -- worse than a launch.
``--fused`` counts with the fused kernels of ``_cuda_kernels`` switched on, run through the CPU emulation of
tests/strict/cuda_emu.py (each counts as one launch), as they would run on a GPU.

``--torch`` adds, as a reference, the kernels PyTorch's CPU dispatcher runs for the same step: the innermost
ATen ops of the profiler's trace, less those that only make views or metadata.  torch on CUDA launches about as
many, with two known differences: its optimizers default to the multi-tensor (foreach) kernels there, a handful
of launches for all parameters instead of a few per parameter, and its RNNs go to cuDNN (a few launches per
layer instead of per time step) -- so on CUDA torch launches fewer than this reference, not more.
"""
import argparse
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from run import MODULES  # noqa: E402

WORKLOADS = ["mlp", "mlp_large", "cnn", "resnet", "gpt", "lstm"]

# ATen ops that make a view, metadata or nothing on the device (no kernel)
_TORCH_NO_KERNEL = {
    "aten::view", "aten::_unsafe_view", "aten::as_strided", "aten::reshape", "aten::t", "aten::transpose",
    "aten::permute", "aten::expand", "aten::unsqueeze", "aten::squeeze", "aten::slice", "aten::select",
    "aten::detach", "aten::detach_", "aten::alias", "aten::empty", "aten::empty_like", "aten::empty_strided",
    "aten::resize_", "aten::unbind", "aten::split", "aten::split_with_sizes", "aten::chunk", "aten::narrow",
    "aten::lift_fresh", "aten::result_type", "aten::item", "aten::_local_scalar_dense", "aten::is_nonzero",
    "aten::numpy_T", "aten::flatten", "aten::expand_as", "aten::view_as", "aten::contiguous", "aten::_reshape_alias",
    "aten::set_", "aten::_has_compatible_shallow_copy_type", "aten::is_same_size", "aten::size", "aten::stride",
    "aten::unflatten", "aten::movedim", "aten::diagonal", "aten::indices", "aten::values", "aten::resolve_conj",
    "aten::resolve_neg",
}


def _load(name):
    import importlib
    return importlib.import_module("workloads." + MODULES[name])


def child_glassgrad(name, fused, top):
    sys.path.insert(0, os.path.join(ROOT, "src"))
    import glassgrad
    from glassgrad import _strict, _torch_alias
    _torch_alias.install()
    import torch
    if fused:
        sys.path.insert(0, os.path.join(ROOT, "tests", "strict"))
        import cuda_emu
        from glassgrad import _cuda_kernels
        _cuda_kernels._kit = cuda_emu.Kit()
    else:
        os.environ["GLASSGRAD_FUSED"] = "0"
    torch.set_default_device("cuda")
    step, per = _load(name).setup(True)
    step()
    with _strict.counting() as c:
        step()
    by_where, syncs = collections.Counter(), collections.Counter()
    for (fn, where), n in c.items():
        if fn.startswith("sync "):
            syncs[f"{where} ({fn[5:]})"] += n
        else:
            by_where[where] += n
    assert glassgrad.backend.STRICT
    return {"total": sum(by_where.values()), "top": by_where.most_common(top),
            "syncs": sum(syncs.values()), "sync_top": syncs.most_common(top)}


def child_torch(name, top):
    import torch
    from torch.profiler import ProfilerActivity, profile
    step, per = _load(name).setup(True)
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    def kernel(e):
        return e.name.startswith("aten::") and e.name not in _TORCH_NO_KERNEL

    def below(e):                       # a kernel op somewhere under e
        return any(kernel(c) or below(c) for c in e.cpu_children)

    ops = collections.Counter()
    for e in prof.events():
        if kernel(e) and not below(e):  # the innermost kernel ops: each is one kernel
            ops[e.name] += 1
    return {"total": sum(ops.values()), "top": ops.most_common(top)}


def _child(args):
    if args.child == "glassgrad":
        out = child_glassgrad(args.name, args.fused, args.top)
    else:
        out = child_torch(args.name, args.top)
    print("@@LAUNCHES@@ " + json.dumps(out))


def _run(lib, name, args):
    env = dict(os.environ, GLASSGRAD_STRICT_DEVICE="1", PYTHONWARNINGS="ignore")
    cmd = [sys.executable, __file__, "--child", lib, "--name", name, "--top", str(args.top)]
    if args.fused:
        cmd.append("--fused")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    for line in p.stdout.splitlines():
        if line.startswith("@@LAUNCHES@@ "):
            return json.loads(line.split(" ", 1)[1])
    raise RuntimeError(f"{lib} {name} failed:\n{p.stderr[-3000:]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated workloads: " + ",".join(WORKLOADS))
    ap.add_argument("--top", type=int, default=10, help="callers (glassgrad) / ops (torch) listed per workload")
    ap.add_argument("--fused", action="store_true", help="with the fused CUDA kernels (their CPU emulation)")
    ap.add_argument("--torch", action="store_true", help="also count torch's CPU kernels for the same step")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--name", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args)
        return 0
    names = args.only.split(",") if args.only else WORKLOADS
    rows = []
    for name in names:
        g = _run("glassgrad", name, args)
        t = _run("torch", name, args) if args.torch else None
        rows.append((name, g, t))
        print(f"\n{name}: glassgrad {g['total']} launches and {g['syncs']} host syncs per step"
              + (f", torch {t['total']} (ratio {g['total'] / t['total']:.2f})" if t else ""))
        for where, n in g["top"]:
            print(f"    {n:6d}  {where}")
        for where, n in g["sync_top"]:
            print(f"    {n:6d}  sync: {where}")
        if t:
            print("  torch:", ", ".join(f"{op[6:]} {n}" for op, n in t["top"]))
    print("\n| workload | glassgrad launches/step | host syncs/step" + (" | torch kernels/step | ratio |" if args.torch
                                                                    else " |"))
    print("| --- | --- | ---" + (" | --- | --- |" if args.torch else " |"))
    for name, g, t in rows:
        print(f"| {name} | {g['total']} | {g['syncs']}"
              + (f" | {t['total']} | {g['total'] / t['total']:.2f} |" if t else " |"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
