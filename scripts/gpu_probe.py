#!/usr/bin/env python3
"""Where glassgrad's CUDA path stands, in one run: the environment, basics on device "cuda", every row of the op
table (tests/opinfo) on cuda against glassgrad on cpu, and a little timing.  From the repository root:
    PYTHONPATH=src python3 scripts/gpu_probe.py --out DIR [--budget 200] [--entry-timeout 20] [--dry-run-cpu]
writes DIR/probe.json (everything) and DIR/summary.txt (also printed).  Needs NumPy and CuPy, not pytest or torch.
No check starts after --budget s, each runs under an alarm of --entry-timeout s, and a watchdog writes what there
is and exits at --budget + 30 s.  --dry-run-cpu runs it all on device "cpu": the harness tested without a GPU."""
import argparse
import collections
import faulthandler
import inspect
import io
import json
import os
import platform
import re
import signal
import sys
import threading
import time
import traceback
import warnings
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))                      # the op table (tests/opinfo)
sys.path.append(str(ROOT / "src"))                           # PYTHONPATH=src wins where given

import glassgrad as gg  # noqa: E402
from glassgrad import backend  # noqa: E402
from opinfo import ALL_OPS  # noqa: E402
from opinfo.core import Idx, NoGrad, TList  # noqa: E402

RTOL, ATOL, MAX_JSON = 1e-4, 1e-5, 900_000                  # value tolerances; most bytes in probe.json
GG_DIR = os.path.realpath(os.path.dirname(gg.__file__))      # frames in here are glassgrad's
TRANSFER = [lambda t, dev: t.to(dev)]                        # how the op table puts inputs on the device


class Timeout(BaseException):
    """The per-check alarm (a BaseException: no `except Exception` in the code under test swallows it)."""

def _alarm(signum, frame):
    raise Timeout("check ran past --entry-timeout")


# -- helpers: failures, tensors and arrays --------------------------------------------------------------------------
def _rel(fname):
    p = Path(fname)
    try:
        return p.resolve().relative_to(ROOT).as_posix()
    except (ValueError, OSError):
        return "/".join(p.parts[-3:]).lstrip("/")

def error_info(exc):
    """Type, first line of the message, innermost glassgrad frame (file:line) and the last 3 frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.name != "_alarm"]
    tail = [f"{_rel(f.filename)}:{f.lineno} {f.name}" for f in frames[-3:]]
    mine = [f for f in frames if os.path.realpath(f.filename).startswith(GG_DIR + os.sep)]
    where = f"{_rel(mine[-1].filename)}:{mine[-1].lineno}" if mine else (tail[-1].split()[0] if tail else "?")
    msg = str(exc).strip().splitlines()
    return {"type": type(exc).__name__, "msg": (msg[0] if msg else "")[:240], "where": where, "tail": tail}

def guarded(fn, limit):
    """(ok, value or error_info, seconds) of fn() under an alarm of `limit` seconds; only ^C escapes."""
    t0 = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, max(limit, 0.01))
    try:
        value, ok = fn(), True
    except KeyboardInterrupt:
        raise
    except BaseException as e:                                    # a probe records everything
        value, ok = error_info(e), False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return ok, value, round(time.perf_counter() - t0, 4)

def host(t):
    """A tensor's values as a NumPy array, not through Tensor.cpu() (which the basics check)."""
    return np.asarray(backend.to_host(t._data))

def where_is(t):
    return backend.device_of(t._data).type

def on(t, dev):
    if where_is(t) != dev or t.device.type != dev:
        raise AssertionError(f"result lives on {where_is(t)} (t.device says {t.device}), expected {dev}")
    return t

def differ(a, b, atol=ATOL, rtol=RTOL):
    """None when arrays a (device result) and b (cpu reference) agree, else what differs."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"{a.dtype}{list(a.shape)} != cpu {b.dtype}{list(b.shape)}"
    if a.dtype.kind not in "fc":
        return None if np.array_equal(a, b) else f"{int((a != b).sum())}/{a.size} values differ"
    bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return None
    with np.errstate(all="ignore"):
        err = float(np.nanmax(np.abs(a.astype(np.float64) - b.astype(np.float64))[bad]))
    return f"{int(bad.sum())}/{a.size} values differ, max abs err {err:.3g}"

def match(got, ref, dev):
    """Check a device tensor against a cpu tensor or array; a short description when they agree."""
    b = ref if isinstance(ref, np.ndarray) else host(ref)
    d = differ(host(on(got, dev)), b)
    if d:
        raise AssertionError(d)
    return f"{b.dtype}{list(b.shape)}"

def expect(ok, what):
    if not ok:
        raise AssertionError(what)
    return what


# -- 1. environment -----------------------------------------------------------------------------------------------
def environment():
    env = {"python": platform.python_version(), "numpy": np.__version__, "platform": platform.platform(),
           "glassgrad_file": _rel(gg.__file__), "cupy_imported": backend._cupy is not None}
    try:
        import cupy
        env["cupy"], rt = cupy.__version__, cupy.cuda.runtime
        name = rt.getDeviceProperties(0)["name"]
        env["device_name"] = name.decode() if isinstance(name, bytes) else str(name)
        env["cuda_runtime"], env["cuda_driver"] = rt.runtimeGetVersion(), rt.driverGetVersion()
        env["gpu_mem_free_total_gib"] = [round(m / 2 ** 30, 1) for m in cupy.cuda.Device(0).mem_info]
    except Exception as e:
        env["cupy_error"] = error_info(e)
    for key, fn in (("cuda_is_available", gg.cuda.is_available), ("device_count", gg.cuda.device_count)):
        env[key] = guarded(fn, 30)[1]
    return env


# -- 2. basics ----------------------------------------------------------------------------------------------------
def _creation_checks(dev):
    x, f32 = np.arange(12, dtype=np.float32).reshape(3, 4), np.float32
    to_dev = (lambda t: t.cuda()) if dev == "cuda" else (lambda t: t.cpu())
    shape = lambda t: f"{list(on(t, dev).shape)}"                # noqa: E731
    t2 = lambda: gg.tensor(x).to(dev)                            # noqa: E731

    def numpy_raises():
        try:
            t2().numpy()
        except TypeError as e:
            return f"TypeError, as torch: {str(e)[:60]}"
        raise AssertionError(".numpy() of a cuda tensor gave an array (torch raises TypeError)")

    def save_load():
        buf = io.BytesIO()
        gg.save({"w": t2()}, buf)
        buf.seek(0)
        return match(gg.load(buf)["w"], x, dev)
    return [
        ("randn(3,4,device=)", lambda: shape(gg.randn(3, 4, device=dev))),
        ("zeros(device=)", lambda: match(gg.zeros(2, 3, device=dev), np.zeros((2, 3), f32), dev)),
        ("ones(device=)", lambda: match(gg.ones(2, 3, device=dev), np.ones((2, 3), f32), dev)),
        ("arange(device=)", lambda: match(gg.arange(5, device=dev), np.arange(5), dev)),
        ("tensor(...,device=)", lambda: match(gg.tensor([[1.0, 2.0]], device=dev), np.array([[1, 2]], f32), dev)),
        ("tensor(device=device(dev:0))", lambda: match(
            gg.tensor([1, 2], device=gg.device(dev + ":0" if dev == "cuda" else dev)), np.array([1, 2]), dev)),
        ("full(device=)", lambda: match(gg.full((2, 2), 7.0, device=dev), np.full((2, 2), 7.0, f32), dev)),
        ("empty(device=)", lambda: shape(gg.empty(4, device=dev))),
        ("eye(device=)", lambda: match(gg.eye(3, device=dev), np.eye(3, dtype=f32), dev)),
        ("linspace(device=)", lambda: match(gg.linspace(0, 1, 5, device=dev), np.linspace(0, 1, 5).astype(f32), dev)),
        ("rand(device=)", lambda: shape(gg.rand(4, device=dev))),
        ("randint(device=)", lambda: shape(gg.randint(0, 5, (3,), device=dev))),
        ("zeros_like(device tensor)", lambda: match(gg.zeros_like(gg.ones(2, device=dev)), np.zeros(2, f32), dev)),
        (".cuda()" if dev == "cuda" else ".cpu() (dry run: for .cuda())", lambda: match(to_dev(gg.tensor(x)), x, dev)),
        (".to(dev)", lambda: match(t2(), x, dev)),
        (".to(device=,dtype=float64)", lambda: match(gg.tensor(x).to(device=gg.device(dev), dtype=gg.float64),
                                                     x.astype(np.float64), dev)),
        (".cpu() round trip", lambda: match(t2().cpu(), x, "cpu")),
        (".item()", lambda: expect((v := t2().sum().item()) == 66.0 and type(v) is float, f"{v!r}")),
        (".tolist()", lambda: expect((v := t2()[0].tolist()) == [0.0, 1.0, 2.0, 3.0], f"{v!r}")),
        (".numpy() raises TypeError" if dev == "cuda" else ".numpy()",
         numpy_raises if dev == "cuda" else lambda: type(t2().numpy()).__name__),
        ("print / repr", lambda: expect(dev != "cuda" or "device='cuda:0'" in repr(t2()),
                                        " ".join(repr(t2() * 2).split())[:80])),
        ("cuda.synchronize()", lambda: repr(gg.cuda.synchronize())),
        (".half() on device", lambda: match(t2().half(), x.astype(np.float16), dev)),
        ("save/load device tensor", save_load),
    ]

def _math_checks(dev):
    rng = np.random.default_rng(0)
    a, b, m = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (3, 4), (4, 5)))
    F = gg.nn.functional

    def both(fn, *arrs):
        return match(fn(*[gg.tensor(q).to(dev) for q in arrs]), fn(*[gg.tensor(q) for q in arrs]), dev)

    def setitem(p):
        q = p.clone()
        q[gg.tensor([0, 2]).to(p.device)] = 0.0
        return q

    def backward():
        t = gg.tensor(a).to(dev).requires_grad_(True)
        (t * t).sum().backward()
        return match(t.grad, 2 * a, dev)
    return [
        ("a+b", lambda: both(lambda p, q: p + q, a, b)), ("a-b", lambda: both(lambda p, q: p - q, a, b)),
        ("a*b", lambda: both(lambda p, q: p * q, a, b)), ("a/b", lambda: both(lambda p, q: p / q, a, b)),
        ("a**2, a+1.5, 2*a", lambda: both(lambda p: p ** 2 + (p + 1.5) * 2, a)),
        ("exp/sin/tanh", lambda: both(lambda p: p.exp() + gg.sin(p) + p.tanh(), a)),
        ("relu/softmax", lambda: both(lambda p: F.relu(p) + F.softmax(p, dim=1), a)),
        ("a>0, where", lambda: both(lambda p, q: gg.where(p > 0, p, q), a, b)),
        ("broadcast a+row", lambda: both(lambda p, q: p + q[0], a, b)),
        ("matmul a@m", lambda: both(lambda p, q: p @ q, a, m)),
        ("mm / bmm", lambda: both(lambda p, q: gg.mm(p, q).sum() + gg.bmm(q.expand(2, 4, 5).transpose(1, 2),
                                                                         q.expand(2, 4, 5)).sum(), a, m)),
        ("F.linear", lambda: both(lambda p, q: F.linear(p, q.t()), a, m)),
        ("sum()", lambda: both(lambda p: p.sum(), a)), ("mean(dim=1)", lambda: both(lambda p: p.mean(dim=1), a)),
        ("max(dim=0) values, indices", lambda: both(lambda p: p.max(dim=0).values, a)
         + both(lambda p: p.max(dim=0).indices, a)),
        ("argmax, var, logsumexp", lambda: both(lambda p: p.argmax(), a)
         + both(lambda p: p.var(dim=0) + gg.logsumexp(p, 0), a)),
        ("x[0], x[:,1], x[idx]", lambda: both(lambda p: p[0].sum() + p[:, 1].sum()
                                              + p[gg.tensor([2, 0]).to(p.device)].sum(), a)),
        ("boolean mask x[x>0]", lambda: both(lambda p: p[p > 0], a)),
        ("setitem x[idx]=0", lambda: both(setitem, a)),
        ("in-place add_/mul_", lambda: both(lambda p: p.clone().add_(1).mul_(2), a)),
        ("cat/stack", lambda: both(lambda p, q: gg.cat([p, q]).sum(0) + gg.stack([p, q]).sum((0, 1)), a, b)),
        ("backward (x*x).sum()", backward),
    ]

def _mlp_check(dev, optimizer):
    """One model on cpu, its copy on dev (model.cuda()): loss, gradients and parameters agree over 2 steps."""
    mods = []
    for _ in range(2):
        gg.manual_seed(0)
        mods.append(gg.nn.Sequential(gg.nn.Linear(4, 8), gg.nn.ReLU(), gg.nn.Linear(8, 2)))
    ref, mod = mods[0], (mods[1].cuda() if dev == "cuda" else mods[1].to(dev))
    x, y = (np.random.default_rng(k).standard_normal((16, c)).astype(np.float32) for k, c in ((1, 4), (2, 2)))
    opts = [getattr(gg.optim, optimizer)(m.parameters(), lr=0.1) for m in (ref, mod)]
    for _ in range(2):
        losses = []
        for m, opt, d in ((ref, opts[0], "cpu"), (mod, opts[1], dev)):
            opt.zero_grad()
            loss = gg.nn.functional.mse_loss(m(gg.tensor(x).to(d)), gg.tensor(y).to(d))
            loss.backward()
            losses.append(loss)
        match(losses[1], losses[0].detach(), dev)
        for opt in opts:
            opt.step()
        for p, q in zip(mod.parameters(), ref.parameters()):           # a step leaves the gradients as they are
            match(p.grad, q.grad, dev), match(p.detach(), q.detach(), dev)
    return f"loss {losses[0].item():.4f}; grads and params match over 2 {optimizer} steps"

def basics(probe):
    dev = probe.dev
    checks = _creation_checks(dev) + _math_checks(dev) + [
        (f"MLP backward + {o}", lambda o=o: _mlp_check(dev, o)) for o in ("SGD", "Adam")]
    out = []
    for name, fn in checks:
        if probe.out_of_time():
            out.append({"name": name, "ok": None, "detail": "not run: budget"})
            continue
        probe.current = f"basics: {name}"
        ok, value, secs = guarded(fn, probe.args.entry_timeout)
        out.append({"name": name, "ok": ok, "secs": secs, **({"detail": str(value)[:160]} if ok else {"error": value})})
    return out


# -- 3. the op table ----------------------------------------------------------------------------------------------
def _from_np(a, dev):
    a = np.array(a, order="F") if a.ndim and not a.flags.c_contiguous else np.array(a)   # keep the layout
    return TRANSFER[0](gg.from_numpy(a), dev)

def _pick_transfer(dev):
    """.to(dev) for the op table's inputs; where that fails, the backend's copy wrapped as a tensor."""
    try:
        for a in (np.asfortranarray(np.arange(6.0).reshape(2, 3)), np.arange(3), np.array([True, False])):
            match(gg.from_numpy(a).to(dev), a, dev)
        return ".to(dev)"
    except Exception as e:
        from glassgrad._tensor import _make
        TRANSFER[0] = lambda t, d: _make(backend.to_device(t._data, gg.device(d)))
        return {"used": "backend.to_device + _make, since .to(dev) failed", "error": error_info(e)}

def _build(arg, diff, dev):
    """One sample argument as a glassgrad value on dev: (value, [leaves requiring grad])."""
    if isinstance(arg, (Idx, NoGrad)):
        return _from_np(arg.arr, dev), []
    if isinstance(arg, TList):
        built = [_build(a, diff, dev) for a in arg.arrs]
        return [t for t, _ in built], [leaf for _, r in built for leaf in r]
    if isinstance(arg, np.ndarray):
        t = _from_np(arg, dev)
        return (t.requires_grad_(True), [t]) if diff and arg.dtype.kind == "f" else (t, [])
    return arg, []

def _flat(out):
    return [x for o in out for x in _flat(o)] if isinstance(out, (tuple, list)) else [out]

def run_sample(op, s, dev, diff):
    """One sample on dev: [output or (host values, device, requires_grad)], [None or (host grad, device)] or None."""
    built = [_build(a, diff, dev) for a in s.args]
    kw = {k: _build(a, diff, dev) for k, a in s.kwargs.items()}
    leaves = [leaf for _, r in built + list(kw.values()) for leaf in r]
    outs = _flat(op.op(gg, *[v for v, _ in built], **{k: v for k, (v, _) in kw.items()}))
    vals = [(host(o), where_is(o), o.requires_grad) if isinstance(o, gg.Tensor) else o for o in outs]
    g_outs = [o for o in outs if isinstance(o, gg.Tensor) and o.requires_grad]
    if not (diff and g_outs and leaves):
        return vals, None
    rng = np.random.default_rng(zlib.crc32(s.name.encode()))
    cts = [TRANSFER[0](gg.from_numpy(rng.standard_normal(o.shape).astype(host(o).dtype)), dev) for o in g_outs]
    gs = gg.autograd.grad(g_outs, leaves, cts, allow_unused=True)
    return vals, [None if g is None else (host(g), where_is(g)) for g in gs]

def _same_scalar(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (np.isnan(a) and np.isnan(b)) or abs(a - b) <= ATOL + RTOL * abs(b)
    return type(a) is type(b) and a == b

def compare(ref, got, dev, op):
    """None when a device run agrees with the cpu run (both from run_sample), else what differs."""
    (rv, rg), (gv, gr) = ref, got
    if len(rv) != len(gv):
        return f"{len(gv)} outputs, cpu has {len(rv)}"
    for i, (r, g) in enumerate(zip(rv, gv)):
        if not isinstance(r, tuple) or not isinstance(g, tuple):
            if isinstance(r, tuple) or isinstance(g, tuple) or not _same_scalar(g, r):
                return f"output {i}: {type(g).__name__} {g!r:.50} != cpu {type(r).__name__} {r!r:.50}"
            continue
        if g[1] != dev or g[2] != r[2]:
            return f"output {i} lives on {g[1]}, requires_grad {g[2]} (cpu: {r[2]})"
        d = differ(g[0], r[0], max(op.atol, ATOL), max(op.rtol, RTOL))
        if d:
            return f"output {i}: {d}"
    if op.nondeterministic_grad or rg is None:
        return None
    if gr is None or len(gr) != len(rg):
        return "no gradients on device" if gr is None else "gradient count differs"
    for i, (r, g) in enumerate(zip(rg, gr)):
        if r is None or g is None:
            if (r is None) != (g is None) and np.any((g or r)[0]):
                return f"grad {i}: {'None' if g is None else 'a value'} on device, cpu has the other"
            continue
        d = f"lives on {g[1]}" if g[1] != dev else differ(g[0], r[0], max(op.grad_atol, ATOL),
                                                             max(op.grad_rtol, RTOL))
        if d:
            return f"grad {i}: {d}"
    return None

def _makes_tensors(op):
    """Whether the entry's op builds tensors of its own (cpu ones, next to cuda inputs: torch raises too)."""
    try:
        return bool(re.search(r"\bT\.(tensor|as_tensor|from_numpy|zeros|ones|full|empty|arange|eye|linspace|rand\w*)\(",
                              inspect.getsource(op.op)))
    except (OSError, TypeError):
        return False

def run_case(op, dt, dev):
    """One (entry, dtype), every sample on cpu then on dev: (status, detail)."""
    samples = op.samples(np.random.default_rng(zlib.crc32(op.name.encode())), np.dtype(dt))
    if not any(isinstance(a, (np.ndarray, Idx, NoGrad, TList)) for s in samples for a in (*s.args, *s.kwargs.values())):
        return "skipped", {"why": "no tensor inputs" if samples else "no samples (the entry checks errors only)"}
    for s in samples:
        ref = run_sample(op, s, "cpu", op.differentiable)
        try:
            got = run_sample(op, s, dev, op.differentiable)
        except (KeyboardInterrupt, Timeout):
            raise
        except BaseException as e:
            return "error", {**error_info(e), "sample": s.name, "makes_tensors": _makes_tensors(op)}
        why = compare(ref, got, dev, op)
        if why is None:
            continue
        if compare(run_sample(op, s, "cpu", op.differentiable), ref, "cpu", op) is not None:
            return "skipped", {"sample": s.name, "why": "nondeterministic: two cpu runs differ"}
        return "wrong", {"sample": s.name, "why": why[:240]}
    return "ok", {"samples": len(samples)}

def op_table(probe):
    """Every entry in its first dtype, then in its other dtypes, until the budget is spent."""
    ops = [op for op in ALL_OPS if op.dtypes]                    # an entry without dtypes checks errors only
    cases = [(op, op.dtypes[0]) for op in ops] + [(op, dt) for op in ops for dt in op.dtypes[1:]]
    res = probe.data["op_table"] = {"cases_total": len(cases), "entries_total": len(ops), "not_run": len(cases),
                                    "transfer": _pick_transfer(probe.dev), "cases": []}
    for n, (op, dt) in enumerate(cases):
        if probe.out_of_time():
            break
        probe.current = f"op table: {op.name} [{dt}]"
        ok, value, secs = guarded(lambda: run_case(op, dt, probe.dev), probe.args.entry_timeout)
        if ok:
            status, detail = value
        elif value["type"] == "Timeout":
            status, detail = "timeout", value
        else:                                                     # the samples or the cpu reference raised
            status, detail = "skipped", {**value, "why": "cpu reference raised"}
        res["cases"].append({"op": op.name, "dt": dt, "st": status, "s": secs, **({} if status == "ok" else detail)})
        res["not_run"] = len(cases) - n - 1
        if n % 100 == 99:
            probe.save()
            print(f"  op table: {n + 1}/{len(cases)} cases, {time.monotonic() - probe.t0:.0f} s", flush=True)
    return res


# -- 4. timing ----------------------------------------------------------------------------------------------------
def _median_ms(fn, reps=5):
    times = []
    for _ in range(reps + 1):                                    # the first one warms up
        t0 = time.perf_counter()
        fn()
        gg.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return round(float(np.median(times[1:])) * 1e3, 3)

def _timing_matmul(dev, n):
    xp = backend._cupy if dev == "cuda" else np
    ha, hb = (np.random.default_rng(k).standard_normal((n, n), dtype=np.float32) for k in (0, 1))
    a, b = xp.asarray(ha), xp.asarray(hb)
    raw = _median_ms(lambda: a @ b)
    ga, gb = TRANSFER[0](gg.from_numpy(ha), dev), TRANSFER[0](gg.from_numpy(hb), dev)
    on(ga @ gb, dev)
    mine = _median_ms(lambda: ga @ gb)
    tf = 2 * n ** 3 / 1e9
    return {"n": n, "glassgrad_ms": mine, f"{xp.__name__}_ms": raw, "glassgrad_tflops": round(tf / mine, 2),
            f"{xp.__name__}_tflops": round(tf / raw, 2), "ratio": round(mine / raw, 3)}

def _timing_mlp(dev, batch, d_in, hidden):
    """An SGD-momentum step of Linear-ReLU-Linear with cross entropy, on dev and on cpu."""
    res = {"batch": batch, "d_in": d_in, "hidden": hidden, "classes": 10}
    rng = np.random.default_rng(0)
    hx, hy = rng.standard_normal((batch, d_in), dtype=np.float32), rng.integers(0, 10, batch)
    for where in dict.fromkeys((dev, "cpu")):
        gg.manual_seed(0)
        model = gg.nn.Sequential(gg.nn.Linear(d_in, hidden), gg.nn.ReLU(), gg.nn.Linear(hidden, 10)).to(where)
        opt = gg.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x, y = TRANSFER[0](gg.from_numpy(hx), where), TRANSFER[0](gg.from_numpy(hy), where)

        def step():
            opt.zero_grad()
            loss = gg.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        on(step(), where)
        res[f"step_ms_{where}"] = _median_ms(step)
    return res

def timing(probe):
    dev, small = probe.dev, probe.args.dry_run_cpu
    out = {}
    for name, fn in (("matmul_f32", lambda: _timing_matmul(dev, 512 if small else 4096)),
                     ("mlp_train_step", lambda: _timing_mlp(dev, *((64, 256, 512) if small else (512, 1024, 4096))))):
        if probe.out_of_time():
            out[name] = "not run: budget"
            continue
        probe.current = f"timing: {name}"
        ok, value, secs = guarded(fn, min(60.0, probe.args.entry_timeout * 4))
        out[name] = {**value, "secs": secs} if ok else {"error": value}
    return out


# -- 5. output ----------------------------------------------------------------------------------------------------
def _err(e):
    return f"{e['type']}: {e['msg'][:100]} @ {e['where']}"

def _signature_lines(cases):
    groups = collections.defaultdict(list)
    for c in cases:
        if c["st"] in ("error", "timeout"):
            groups[(c.get("where", "?"), c.get("type", "?"))].append(c)
    lines = [f"top error signatures ({len(groups)} distinct, by innermost glassgrad file:line):"]
    for i, ((where, typ), cs) in enumerate(sorted(groups.items(), key=lambda kv: -len(kv[1]))[:20], 1):
        names = list(dict.fromkeys(c["op"] for c in cs))
        more = f" (+{len(names) - 6} more)" if len(names) > 6 else ""
        lines += [f" {i:2d}. {len(cs):4d}x {where} {typ}: {cs[0].get('msg', '')[:110]}",
                  f"       e.g. {', '.join(names[:6])}{more}"]
    return lines

def _case_lines(tab):
    cases, rank = tab.get("cases", []), {"ok": 0, "skipped": 1, "wrong": 2, "timeout": 3, "error": 4}
    count, worst = collections.Counter(c["st"] for c in cases), {}
    for c in cases:
        worst[c["op"]] = max(worst.get(c["op"], "ok"), c["st"], key=rank.get)
    ew = collections.Counter(worst.values())
    lines = [f"op table: {len(cases)} of {tab.get('cases_total', '?')} (entry, dtype) cases run, "
             f"{tab.get('not_run', '?')} not run (budget): " + ", ".join(f"{k} {count[k]}" for k in rank),
             f"  entries ({len(worst)} of {tab.get('entries_total', '?')} run; worst status over dtypes): "
             + ", ".join(f"{k} {ew[k]}" for k in rank)]
    if not isinstance(tab.get("transfer", ""), str):
        lines.append(f"  inputs moved with {tab['transfer']['used']}: {_err(tab['transfer']['error'])}")
    lines += _signature_lines(cases)
    mk = list(dict.fromkeys(c["op"] for c in cases if c.get("makes_tensors")))
    if mk:
        lines.append(f"  of these, entries whose op builds tensors itself (cpu ones beside cuda inputs fail in torch "
                     f"too; judge by hand): {len(mk)}: {', '.join(mk[:12])}")
    wrong = [c for c in cases if c["st"] == "wrong"]
    lines.append(f"wrong values ({len(wrong)}; first 25):")
    lines += [f"  {c['op']} [{c['dt']}, sample {c['sample']}]: {c['why'][:120]}" for c in wrong[:25]]
    skipped = collections.Counter(c["why"] for c in cases if c["st"] == "skipped")
    lines.append(f"skipped ({sum(skipped.values())}): " + "; ".join(f"{n}x {why}" for why, n in skipped.items()))
    slow = sorted(cases, key=lambda c: -c["s"])[:8]
    return lines + ["slowest cases: " + ", ".join(f"{c['op']}[{c['dt']}] {c['s']:.2f}s" for c in slow)]

def summarize(data):
    env, b = data.get("env", {}), data.get("basics", [])
    lines = [f"glassgrad GPU probe: device {data['device']}{' (DRY RUN on cpu)' if data['dry_run'] else ''}, "
             f"{data.get('elapsed_s', '?')} s (budget {data['budget_s']} s)", env_line(env),
             f"basics: {sum(c['ok'] is True for c in b)} pass, {sum(c['ok'] is False for c in b)} fail, "
             f"{sum(c['ok'] is None for c in b)} not run (of {len(b)})"]
    lines += [f"  FAIL {c['name']}: {_err(c['error'])}" for c in b if c["ok"] is False]
    lines.append("timing:")
    for name, v in data.get("timing", {}).items():
        v = f"ERROR {_err(v['error'])}" if "error" in v else ", ".join(f"{k} {x}" for k, x in v.items()) \
            if isinstance(v, dict) else v
        lines.append(f"  {name}: {v}")
    lines += _case_lines(data.get("op_table", {}))
    lines += [f"HARNESS ERROR in {k[:-14]}: {_err(e)} <- {' <- '.join(e['tail'][::-1])}" for k, e in data.items()
              if k.endswith("_harness_error")]
    if data.get("aborted"):
        lines.append(f"ABORTED by the watchdog during: {data['aborted']}")
    return "\n".join(lines) + "\n"

def env_line(env):
    keys = ("python", "numpy", "cupy", "device_name", "cuda_runtime", "cuda_is_available", "device_count")
    return "env: " + ", ".join(f"{k} {env.get(k)}" for k in keys)

class Probe:
    def __init__(self, args):
        self.args, self.t0, self.current, self.lock = args, time.monotonic(), "start", threading.Lock()
        self.dev, self.out = "cpu" if args.dry_run_cpu else "cuda", Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.data = {"device": self.dev, "dry_run": args.dry_run_cpu, "budget_s": args.budget,
                     "tolerance": {"rtol": RTOL, "atol": ATOL}}

    def out_of_time(self):
        return time.monotonic() - self.t0 >= self.args.budget

    def save(self):
        """Write probe.json (under MAX_JSON: per-case details go first) and summary.txt; return the summary."""
        with self.lock:
            self.data["elapsed_s"] = round(time.monotonic() - self.t0, 1)
            text = json.dumps(self.data, separators=(",", ":"), default=str)
            if len(text) > MAX_JSON:
                tab = self.data.get("op_table", {})
                slim = dict(self.data, op_table=dict(tab, cases=[
                    {k: c[k] for k in ("op", "dt", "st", "where", "type", "why") if k in c} for c in tab["cases"]]))
                text = json.dumps(slim, separators=(",", ":"), default=str)[:MAX_JSON]
            (self.out / "probe.json").write_text(text)
            summary = summarize(self.data)
            (self.out / "summary.txt").write_text(summary)
            return summary

    def watchdog(self, seconds):
        def bail():
            self.data["aborted"] = self.current
            print(f"\nWATCHDOG: {seconds:.0f} s passed, stuck in {self.current}", flush=True)
            faulthandler.dump_traceback(all_threads=True)
            try:
                print(self.save(), flush=True)
            finally:
                os._exit(3)
        timer = threading.Timer(seconds, bail)
        timer.daemon = True
        timer.start()
        faulthandler.dump_traceback_later(seconds + 15, exit=True)   # should the watchdog never get the GIL
        return timer

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="folder for probe.json and summary.txt")
    p.add_argument("--budget", type=float, default=200.0, help="seconds after which no new check starts")
    p.add_argument("--entry-timeout", type=float, default=20.0, help="alarm (s) for one check or op-table case")
    p.add_argument("--dry-run-cpu", action="store_true", help='run everything on device "cpu" (no GPU needed)')
    p.add_argument("--skip", default="", help="sections to leave out, comma-separated: basics,timing,ops")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")                              # the op table's samples warn by design
    signal.signal(signal.SIGALRM, _alarm)
    probe = Probe(args)
    timer = probe.watchdog(args.budget + 30)
    env = probe.data["env"] = environment()
    print(env_line(env), flush=True)
    probe.save()
    for name, fn in (("basics", basics), ("timing", timing), ("ops", op_table)):
        if name in args.skip.split(","):
            continue
        print(f"{name} ... ({time.monotonic() - probe.t0:.0f} s)", flush=True)
        probe.current = name
        try:
            probe.data["op_table" if name == "ops" else name] = fn(probe)
        except KeyboardInterrupt:
            raise
        except BaseException as e:                                # the harness itself failed
            probe.data[f"{name}_harness_error"] = error_info(e)
        probe.save()
    timer.cancel()
    faulthandler.cancel_dump_traceback_later()
    print(probe.save(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
