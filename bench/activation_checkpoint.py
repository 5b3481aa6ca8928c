"""Activation memory with and without checkpointing: glassgrad vs PyTorch (CPU), side by side.

    .venv/bin/python bench/activation_checkpoint.py                 # deep MLP and CNN, both libraries
    .venv/bin/python bench/activation_checkpoint.py --quick         # smaller models (seconds)
    .venv/bin/python bench/activation_checkpoint.py --json out.json --out bench/results/activation_checkpoint.txt

Each cell is one fresh child process running one training step (forward, loss, backward) of the same
workload, written once in torch idiom (the glassgrad child serves ``import torch`` from glassgrad), in three
modes: ``plain``, ``checkpoint_sequential(model, segments, x, use_reentrant=False)`` and the same with
``use_reentrant=True``.

What is measured, the same way for both libraries:
  * ``held``: resident memory (RSS, /proc/self/statm) after the forward minus before it: what the graph keeps
    for backward (the activations) plus the output;
  * ``peak``: the process's peak RSS during forward + backward (VmHWM, reset through /proc/self/clear_refs
    just before the step) minus the RSS before it: activations, recomputed segments, gradients, temporaries.
Both children run with ``MALLOC_MMAP_THRESHOLD_=65536``: every block above 64 KiB is its own mmap, handed back
to the kernel when freed, so RSS follows the live large buffers of both libraries (glibc's adaptive threshold
would otherwise keep freed blocks in the heap and blur the comparison; ``GLASSGRAD_MALLOC=system`` stops
glassgrad from raising the threshold itself, see _malloc.py).  Small allocations (Python objects,
nodes) count too, as they do in a real run.
For glassgrad a third child repeats the step under ``tracemalloc``, which NumPy reports its array buffers to:
``np held`` / ``np peak`` are the exact bytes of live NumPy arrays (not RSS).  Torch's CPU allocator reports
to nothing comparable, so torch has RSS only.
One warm-up step runs first (lazy imports -- torch.utils.checkpoint pulls in ~70 MB of torch._dynamo --, the
``.grad`` buffers), so the measured step allocates only what a training step does.
``time`` is the median of 3 further steps (after the measured one): the recomputation's cost.
"""
import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODES = ("plain", "seq_nonreentrant", "seq_reentrant")
MIB = 1 << 20


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def _reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _hwm():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


def _build(torch, model, quick):
    torch.manual_seed(0)
    nn = torch.nn
    if model == "mlp":
        depth, width, batch = (8, 128, 512) if quick else (16, 256, 4096)
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        return nn.Sequential(*layers), torch.randn(batch, width), 4, f"MLP {depth}x(Linear {width}+ReLU), batch {batch}"
    depth, ch, batch, hw = (4, 8, 8, 16) if quick else (8, 16, 32, 32)
    layers = [nn.Conv2d(3, ch, 3, padding=1), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU()]
    return (nn.Sequential(*layers), torch.randn(batch, 3, hw, hw), 4,
            f"CNN {depth}x(Conv3x3 {ch}ch+ReLU), batch {batch}, {hw}x{hw}")


def _step(torch, model, x, mode, segments):
    from torch.utils.checkpoint import checkpoint_sequential
    x = x.detach().requires_grad_()
    if mode == "plain":
        out = model(x)
    else:
        out = checkpoint_sequential(model, segments, x, use_reentrant=mode == "seq_reentrant")
    return out


def child(lib, model_name, mode, quick, trace):
    if lib == "glassgrad":
        sys.path.insert(0, os.path.join(ROOT, "src"))
        from glassgrad import _torch_alias
        _torch_alias.install()
    import torch
    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "1")))
    model, x, segments, title = _build(torch, model_name, quick)
    _step(torch, model, x, mode, segments).square().mean().backward()     # warm-up: lazy imports, .grad buffers
    gc.collect()
    if trace:
        import tracemalloc
        tracemalloc.start()
    base = _rss()
    _reset_peak()
    out = _step(torch, model, x, mode, segments)
    loss = out.square().mean()
    held = _rss() - base
    np_held = tracemalloc.get_traced_memory()[0] if trace else None
    loss.backward()
    peak = _hwm() - base
    np_peak = tracemalloc.get_traced_memory()[1] if trace else None
    if trace:
        tracemalloc.stop()
    del out, loss
    times = []
    for _ in range(3):
        model.zero_grad()
        t = time.perf_counter()
        _step(torch, model, x, mode, segments).square().mean().backward()
        times.append(time.perf_counter() - t)
    return {"title": title, "held": held, "peak": peak, "np_held": np_held, "np_peak": np_peak,
            "time": statistics.median(times)}


def _spawn(lib, model, mode, quick, trace):
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536", GLASSGRAD_MALLOC="system", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", BENCH_THREADS="1")
    cmd = [sys.executable, __file__, "--child", lib, model, mode] + (["--quick"] if quick else []) + \
        (["--trace"] if trace else [])
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"{lib} {model} {mode} failed:\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def _mib(v):
    return "-" if v is None else f"{v / MIB:.1f}"


def table(results):
    lines = []
    for model, rows in results.items():
        lines.append(f"{model}: {rows['plain']['glassgrad']['title']}")
        lines.append(f"{'mode':<18}{'gg held':>9}{'gg peak':>9}{'np held':>9}{'np peak':>9}{'torch held':>12}"
                     f"{'torch peak':>12}{'gg time':>9}{'torch time':>12}")
        for mode in MODES:
            g, t, tr = rows[mode]["glassgrad"], rows[mode]["torch"], rows[mode]["glassgrad_trace"]
            lines.append(f"{mode:<18}{_mib(g['held']):>9}{_mib(g['peak']):>9}{_mib(tr['np_held']):>9}"
                         f"{_mib(tr['np_peak']):>9}{_mib(t['held']):>12}{_mib(t['peak']):>12}"
                         f"{g['time'] * 1e3:>7.0f}ms{t['time'] * 1e3:>10.0f}ms")
        lines.append("")
    lines.append("MiB. held: RSS kept from the end of the forward until backward (activations + output); peak: peak "
                 "RSS during forward+backward, both over the RSS before the step; np held / np peak: glassgrad's live "
                 "NumPy bytes (tracemalloc). One thread each; MALLOC_MMAP_THRESHOLD_=65536 for both "
                 "(GLASSGRAD_MALLOC=system).")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", nargs=3, metavar=("LIB", "MODEL", "MODE"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="tiny MLP only (the test suite's check that it runs)")
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--json")
    ap.add_argument("--out", help="also write the table to this file")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(*a.child, a.quick, a.trace)))
        return
    if a.smoke:
        a.quick, a.models = True, "mlp"
    results = {}
    for model in a.models.split(","):
        results[model] = {m: {"glassgrad": _spawn("glassgrad", model, m, a.quick, False),
                               "torch": _spawn("torch", model, m, a.quick, False),
                               "glassgrad_trace": _spawn("glassgrad", model, m, a.quick, True)} for m in MODES}
    text = table(results)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(f"$ python bench/activation_checkpoint.py{' --quick' if a.quick else ''}\n{text}\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
