"""glassgrad vs PyTorch on the same workloads, measured side by side.

    python bench/run.py --compare [--quick] [--json out.json] [--only chain,mlp] [--repeat N]

Every measurement runs in a fresh child process (this file with ``--child``): for glassgrad the child
installs ``glassgrad._torch_alias`` so the workload's ``import torch`` gets glassgrad; for PyTorch it
imports the real torch.  For each workload the children run interleaved, glassgrad, torch, glassgrad,
torch, ... (``--repeat`` rounds), all with the same thread count (OMP/MKL/OPENBLAS_NUM_THREADS and
``torch.set_num_threads``).  A child times each iteration separately after a warm-up and reports the
times and its peak RSS (``ru_maxrss``).  The table shows, per workload, the median and the minimum of
all iterations of all processes of each library, the ratio of the medians (glassgrad / torch), the
median peak RSS of the processes and its ratio, the BLAS floor (NumPy matmul on the same GEMMs alone)
for the compute-bound workloads, and whether the issue's target is met.  See bench/README.md.
"""
import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MARK = "@@BENCH@@ "

# name -> module in bench/workloads ("import" is a keyword, so its module is import_time)
MODULES = {"import": "import_time", "chain": "chain", "seed003": "seed003", "mlp": "mlp",
           "mlp_large": "mlp_large", "cnn": "cnn", "resnet": "resnet", "gpt": "gpt", "lstm": "lstm",
           "ohem": "ohem", "gemm": "gemm"}
RSS_TARGET = 1.0

# iteration policy per mode: warm-up iterations; then iterations until both min_iters and the time
# budget (s) are reached, or max_iters, or (for slow workloads, after at least 2) max_time seconds
MODES = {
    "full": dict(warmup=3, budget=2.0, min_iters=5, max_time=30.0, max_iters=20000, repeat=5, import_procs=2),
    "quick": dict(warmup=1, budget=0.3, min_iters=3, max_time=1.5, max_iters=5000, repeat=2, import_procs=2),
    "smoke": dict(warmup=0, budget=0.0, min_iters=1, max_time=0.0, max_iters=1, repeat=1, import_procs=1),
}


# ----------------------------------------------------------------------------------------------------
# child side: imports nothing heavy before the library itself (the import workload times that import)

def _peak_rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def _emit(payload):
    sys.stdout.write(MARK + json.dumps(payload) + "\n")
    sys.stdout.flush()


def _measure(step, pol):
    import gc
    for _ in range(pol["warmup"]):
        step()
    gc.collect()
    times = []
    clock = time.perf_counter
    start = clock()
    while len(times) < pol["max_iters"]:
        elapsed = clock() - start
        if len(times) >= pol["min_iters"] and elapsed >= pol["budget"]:
            break
        if len(times) >= 2 and elapsed >= pol["max_time"]:
            break
        t0 = clock()
        step()
        times.append(clock() - t0)
    return times


def child_main(lib, name, pol, threads, gemms):
    import warnings
    warnings.simplefilter("ignore")
    device = pol.get("device", "cpu")
    if lib == "numpy":  # the BLAS floor: the workload's GEMMs alone through numpy.matmul (CuPy's on cuda)
        import numpy as np
        xp = np
        if device != "cpu":
            import cupy as xp
        rng = np.random.default_rng(0)
        bufs = [(xp.asarray(rng.standard_normal((m, k), dtype=np.float32)),
                 xp.asarray(rng.standard_normal((k, n), dtype=np.float32)), xp.empty((m, n), np.float32))
                for m, k, n in gemms]

        def step():
            for a, b, out in bufs:
                xp.matmul(a, b, out=out)
            if xp is not np:
                xp.cuda.runtime.deviceSynchronize()
        _emit({"samples": _measure(step, pol), "rss_kib": _peak_rss_kib(),
               "flop": sum(2 * m * k * n for m, k, n in gemms)})
        return
    t0 = time.perf_counter()
    if lib == "glassgrad":
        sys.path.insert(0, os.path.join(ROOT, "src"))
        import glassgrad
        t_import = time.perf_counter() - t0
        from glassgrad import _torch_alias
        _torch_alias.install()
        if hasattr(glassgrad, "set_num_threads"):
            glassgrad.set_num_threads(threads)
    else:
        import torch
        t_import = time.perf_counter() - t0
        torch.set_num_threads(threads)
    rss_import = _peak_rss_kib()
    if name == "import":
        _emit({"samples": [t_import], "rss_kib": rss_import, "rss_import_kib": rss_import, "per": 1})
        return
    import importlib
    sys.path.insert(0, HERE)
    mod = importlib.import_module("workloads." + MODULES[name])
    torch = sys.modules["torch"]
    if device != "cpu":                 # the same workload on the GPU: its tensors and models made there
        torch.set_default_device(device)
    step, per = mod.setup(pol.get("quick", False))
    if device != "cpu":
        inner = step

        def step():                     # a step ends when the device has finished it
            out = inner()
            torch.cuda.synchronize()
            return out
    _emit({"samples": _measure(step, pol), "rss_kib": _peak_rss_kib(), "rss_import_kib": rss_import,
           "per": per, "lib_file": sys.modules["torch"].__file__})


# ----------------------------------------------------------------------------------------------------
# parent side

def _meta(name):
    """TITLE / UNIT / TARGET / gemms of a workload, read with glassgrad standing in for torch (the
    parent never imports PyTorch)."""
    import importlib
    sys.path.insert(0, os.path.join(ROOT, "src"))
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    from glassgrad import _torch_alias
    _torch_alias.install()
    mod = importlib.import_module("workloads." + MODULES[name])
    gemms = mod.gemms(False) if hasattr(mod, "gemms") else None
    return {"title": mod.TITLE, "unit": mod.UNIT, "target": dict(mod.TARGET), "gemms": gemms}


def _run_child(lib, name, pol, threads, gemms, timeout):
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                "NUMEXPR_NUM_THREADS"):
        env[var] = str(threads)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", lib, name, "--threads", str(threads),
           "--policy", json.dumps(pol)]
    if gemms:
        cmd += ["--gemms", json.dumps(gemms)]
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    for line in p.stdout.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    tail = [ln for ln in (p.stderr or p.stdout).strip().splitlines() if ln.strip()]
    return {"error": f"exit {p.returncode}: " + (tail[-1] if tail else "no output")}


def _summary(procs):
    """Pool the per-iteration samples of all processes of one library."""
    ok = [p for p in procs if "error" not in p]
    if not ok:
        return {"error": procs[0]["error"] if procs else "not run", "processes": procs}
    per = ok[0].get("per", 1)
    samples = [s / per for p in ok for s in p["samples"]]
    rss = [p["rss_kib"] for p in ok]
    out = {"median_s": statistics.median(samples), "min_s": min(samples), "n_samples": len(samples),
           "n_processes": len(ok), "per": per, "rss_mib": statistics.median(rss) / 1024,
           "rss_mib_max": max(rss) / 1024, "processes": procs}
    if "flop" in ok[0]:
        out["gflops"] = ok[0]["flop"] / out["median_s"] / 1e9
    if "rss_import_kib" in ok[0]:
        out["rss_import_mib"] = statistics.median(p["rss_import_kib"] for p in ok) / 1024
    errs = [p["error"] for p in procs if "error" in p]
    if errs:
        out["errors"] = errs
    return out


def _status(row):
    t = row["target"]
    missed = []
    r = row.get("ratio")
    if r is None:
        return "error" if any("error" in row.get(k, {}) for k in ("glassgrad", "torch")) else "n/a"
    if r > t["time"]:
        missed.append("time")
    if row.get("rss_ratio") is not None and row["rss_ratio"] > RSS_TARGET:
        missed.append("rss")
    if "floor" in t and row.get("floor_ratio") is not None and row["floor_ratio"] > t["floor"]:
        missed.append("floor")
    return "met" if not missed else "MISSED " + ",".join(missed)


def _fmt_time(seconds, unit):
    if seconds is None:
        return "-"
    v = seconds * (1e3 if unit == "ms" else 1e6)
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def _fmt(v, spec=".2f"):
    return "-" if v is None else format(v, spec)


def print_table(rows, compare, out=sys.stdout):
    cols = ["workload", "unit", "gg med", "gg min"]
    if compare:
        cols += ["torch med", "torch min", "ratio"]
    cols += ["gg MiB"]
    if compare:
        cols += ["torch MiB", "RSS ratio"]
    cols += ["floor", "gg/floor"]
    if compare:
        cols += ["target", "status"]
    table = [cols]
    notes = []
    for name, row in rows.items():
        unit = row["unit"]
        g, t, f = row.get("glassgrad", {}), row.get("torch", {}), row.get("floor")
        line = [name, unit.replace("us", "µs"), _fmt_time(g.get("median_s"), unit), _fmt_time(g.get("min_s"), unit)]
        if compare:
            line += [_fmt_time(t.get("median_s"), unit), _fmt_time(t.get("min_s"), unit), _fmt(row.get("ratio"))]
        line += [_fmt(g.get("rss_mib"), ".0f")]
        if compare:
            line += [_fmt(t.get("rss_mib"), ".0f"), _fmt(row.get("rss_ratio"))]
        line += [_fmt_time(f.get("median_s") if f else None, unit), _fmt(row.get("floor_ratio"))]
        if compare:
            tgt = row["target"]
            txt = f"≤{tgt['time']:g}" + (f" fl≤{tgt['floor']:g}" if "floor" in tgt else "")
            line += [txt, row.get("status", "n/a")]
        table.append(line)
        for lib, s in (("glassgrad", g), ("torch", t), ("floor", f or {})):
            if "error" in s:
                notes.append(f"  {name} [{lib}]: {s['error']}")
            for e in s.get("errors", []):
                notes.append(f"  {name} [{lib}] (one process): {e}")
    widths = [max(len(str(r[i])) for r in table) for i in range(len(cols))]
    for k, r in enumerate(table):
        out.write("  ".join(str(c).rjust(w) if i > 1 else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
                  .rstrip() + "\n")
        if k == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")
    if compare:
        out.write(f"ratio = glassgrad median / torch median; RSS ratio = median peak RSS glassgrad / torch "
                  f"(target ≤ {RSS_TARGET:g} everywhere); gg/floor = glassgrad median / BLAS floor median.\n")
    if notes:
        out.write("errors:\n" + "\n".join(notes) + "\n")


def _compile_sources():
    """Byte-compile glassgrad's sources once, as `pip install` does for an installed package (and did
    for torch): otherwise a child with PYTHONDONTWRITEBYTECODE set (as on this project's machines)
    compiles every module on import, and the import workload measures the compiler."""
    import compileall
    compileall.compile_dir(os.path.join(ROOT, "src", "glassgrad"), quiet=1)


def _has_cupy():
    try:
        import cupy  # noqa: F401
        return True
    except ImportError:
        return False


def parent_main(args):
    _compile_sources()
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    pol = dict(MODES[mode])
    repeat = args.repeat or pol.pop("repeat")
    pol.pop("repeat", None)
    import_procs = pol.pop("import_procs")
    pol["quick"] = mode != "full"
    pol["device"] = args.device
    names = list(MODULES)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        bad = [n for n in names if n not in MODULES]
        if bad:
            sys.exit(f"unknown workload(s) {bad}; known: {', '.join(MODULES)}")
    threads = args.threads or os.cpu_count() or 1
    os.environ["GLASSGRAD_BLAS"] = args.blas        # inherited by the glassgrad children
    if args.blas == "mkl":
        sys.path.insert(0, os.path.join(ROOT, "src"))
        from glassgrad._blas import _find_mkl
        if _find_mkl() is None:
            sys.exit("--blas mkl: the mkl wheel is not installed (pip install glassgrad[mkl])")
    timeout = 120 if mode != "full" else 900
    libs = ["glassgrad", "torch"] if args.compare else ["glassgrad"]
    t_start = time.time()
    meta = {"command": " ".join([os.path.basename(sys.executable)] + sys.argv), "mode": mode, "repeat": repeat,
            "threads": threads, "blas": args.blas, "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "policy": pol, "loadavg_start": list(os.getloadavg()),
            "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t_start))}
    meta["device"] = args.device
    print(f"# {meta['command']}  | device {args.device}, mode {mode}, {repeat} round(s), {threads} thread(s), "
          f"glassgrad BLAS {args.blas}, "
          f"{os.cpu_count()} cpu(s), load avg {os.getloadavg()[0]:.2f}", flush=True)
    rows = {}
    for name in names:
        try:
            m = _meta(name)
        except Exception as e:  # a workload module that glassgrad cannot even import
            m = {"title": name, "unit": "ms", "target": {"time": 1.0}, "gemms": None, "meta_error": repr(e)}
        procs = {lib: [] for lib in libs}
        floor_procs = []
        rounds = import_procs * repeat if name == "import" else repeat
        for _ in range(rounds):  # interleaved: glassgrad, torch, glassgrad, torch, ...
            for lib in libs:
                if procs[lib] and all("error" in p for p in procs[lib]):
                    continue  # it failed once: do not waste the budget on it
                procs[lib].append(_run_child(lib, name, pol, threads, None, timeout))
            if m["gemms"] and (args.device == "cpu" or _has_cupy()):
                floor_procs.append(_run_child("numpy", name, pol, threads, m["gemms"], timeout))
        row = {"title": m["title"], "unit": m["unit"], "target": m["target"]}
        for lib in libs:
            row[lib] = _summary(procs[lib])
        if floor_procs:
            row["floor"] = _summary(floor_procs)
            row["floor"]["gemms"] = m["gemms"]
        g, t, f = row["glassgrad"], row.get("torch", {}), row.get("floor", {})
        if "median_s" in g and "median_s" in t:
            row["ratio"] = g["median_s"] / t["median_s"]
            row["ratio_min"] = g["min_s"] / t["min_s"]
            row["rss_ratio"] = g["rss_mib"] / t["rss_mib"]
        if "median_s" in g and "median_s" in f:
            row["floor_ratio"] = g["median_s"] / f["median_s"]
            if "median_s" in t:
                row["torch_floor_ratio"] = t["median_s"] / f["median_s"]
        row["status"] = _status(row) if args.compare else "n/a"
        rows[name] = row
        if args.verbose:
            print(f"  {name}: done ({time.time() - t_start:.0f} s)", file=sys.stderr, flush=True)
    meta["seconds"] = time.time() - t_start
    meta["loadavg_end"] = list(os.getloadavg())
    print_table(rows, args.compare)
    print(f"# {meta['seconds']:.0f} s; load avg at end {os.getloadavg()[0]:.2f} "
          f"(timings are only comparable within one run on a quiet machine)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"meta": meta, "workloads": rows}, fh, indent=1)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compare", action="store_true", help="also run PyTorch and print ratios and targets")
    ap.add_argument("--quick", action="store_true", help="short runs (whole suite < 2 min on 2 cores)")
    ap.add_argument("--smoke", action="store_true", help="one iteration per process, no warm-up (for tests)")
    ap.add_argument("--json", metavar="FILE", help="write every number (all samples) as JSON")
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda: both libraries run the workloads on the "
                    "GPU (glassgrad through CuPy; set GLASSGRAD_STRICT_DEVICE=1 to try glassgrad's side without one)")
    ap.add_argument("--only", metavar="NAMES", help="comma-separated workloads: " + ",".join(MODULES))
    ap.add_argument("--repeat", type=int, metavar="N", help="rounds of interleaved processes (default 5, quick 2)")
    ap.add_argument("--threads", type=int, metavar="N", help="threads for both libraries (default: all cores)")
    ap.add_argument("--blas", choices=["openblas", "mkl", "numpy"], default="openblas",
                    help="glassgrad's GEMM/axpy path (GLASSGRAD_BLAS): NumPy's OpenBLAS (default, what a plain "
                         "install gets), Intel MKL's GEMMs (pip install glassgrad[mkl]), or plain NumPy")
    ap.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    ap.add_argument("--child", nargs=2, metavar=("LIB", "NAME"), help=argparse.SUPPRESS)
    ap.add_argument("--policy", help=argparse.SUPPRESS)
    ap.add_argument("--gemms", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child_main(args.child[0], args.child[1], json.loads(args.policy), args.threads,
                   json.loads(args.gemms) if args.gemms else None)
    else:
        parent_main(args)


if __name__ == "__main__":
    main()
