"""torch.profiler / torch.autograd.profiler: the structure of what glassgrad records against torch's for the
same program (op names as ATen names them, nesting, counts, input shapes, backward node ranges, table
layout, Chrome trace), torch's schedule arithmetic and step actions, and nothing left patched afterwards.
Times are not compared."""
import json
import warnings

import pytest
import torch

import glassgrad
import glassgrad.nn as gnn
import glassgrad.nn.functional as gF
from glassgrad.autograd import profiler as gP
from glassgrad.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule

_OPS = ["aten::linear", "aten::t", "aten::addmm", "aten::relu", "aten::cross_entropy_loss", "aten::log_softmax",
        "aten::nll_loss_nd"]
_NODES = ["AddmmBackward0", "ReluBackward0", "TBackward0", "NllLossBackward0", "LogSoftmaxBackward0",
          "torch::autograd::AccumulateGrad"]


def _mlp_step(lib, prof_mod, **kw):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
    x, y = lib.randn(5, 4), lib.tensor([0, 1, 2, 0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU], **kw) as prof:
            with prof_mod.record_function("fwd"):
                loss = lib.nn.functional.cross_entropy(m(x), y)
            loss.backward()
    return prof


@pytest.fixture(scope="module")
def both():
    return _mlp_step(torch, torch.profiler, record_shapes=True), _mlp_step(glassgrad, glassgrad.profiler,
                                                                           record_shapes=True)


def _top(e):
    while e.cpu_parent is not None:
        e = e.cpu_parent
    return e.name


def _count(events, name, under=None):
    return sum(1 for e in events if e.name == name and (under is None or _top(e) == under))


def test_forward_and_backward_events_named_and_counted_as_torch(both):
    t, g = both
    te, ge = t.events(), g.events()
    for name in _OPS:       # in the forward (torch's backward nodes also call ATen ops; glassgrad's use arrays)
        assert _count(ge, name, "fwd") == _count(te, name, "fwd") > 0, name
    for name in ["fwd"] + _NODES + ["autograd::engine::evaluate_function: " + n for n in _NODES]:
        assert _count(ge, name) == _count(te, name) > 0, name
    # every name glassgrad records is one torch records for the same program
    assert {e.name for e in ge} <= {e.name for e in te}


def test_nesting_and_input_shapes_as_torch(both):
    t, g = both

    def tree(events):
        return [(e.name, e.cpu_parent.name if e.cpu_parent else None, e.input_shapes) for e in events
                if _top(e) == "fwd" and e.name in ("aten::linear", "aten::addmm", "aten::relu", "aten::t", "aten::cross_entropy_loss")]
    assert tree(g.events()) == tree(t.events())
    for e in g.events():
        if e.name.startswith("autograd::engine::evaluate_function: "):
            kids = [c.name for c in e.cpu_children]
            assert kids == [e.name.split(": ", 1)[1]]
            assert e.cpu_parent is None


def test_key_averages_table_layout_as_torch(both):
    t, g = both
    tt = t.key_averages().table(sort_by="cpu_time_total", row_limit=100).splitlines()
    gt = g.key_averages().table(sort_by="cpu_time_total", row_limit=100).splitlines()
    assert gt[:3] == tt[:3]           # the separator, the header (columns, widths), the separator
    assert gt[-1].startswith("Self CPU time total: ") and gt[-2] == tt[-2]
    rows = {line[:55].strip() for line in gt[3:-2]}
    assert "aten::addmm" in rows and "autograd::engine::evaluate_function: AddmmBackward0" in rows
    # a row: name, 2 shares, 3 times, calls
    addmm = next(line for line in gt if line[:55].strip() == "aten::addmm").split()
    assert addmm[1].endswith("%") and addmm[3].endswith("%") and addmm[-1] == "2"
    limited = g.key_averages().table(sort_by="self_cpu_time_total", row_limit=3).splitlines()
    assert len(limited) == 3 + 3 + 2
    sh = g.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total", row_limit=50).splitlines()
    tsh = t.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total", row_limit=50).splitlines()
    assert sh[1].split() == tsh[1].split()    # ... with an Input Shapes column
    assert any("[[8], [5, 4], [4, 8], [], []]" in line for line in sh)
    total = g.key_averages().total_average()
    assert total.count == len(g.events())


def test_key_averages_counts_equal_torch(both):
    t, g = both
    tk = {a.key: a.count for a in t.key_averages()}
    for a in g.key_averages():
        if a.key != "aten::t":       # torch's AddmmBackward0 also transposes
            assert a.count == tk[a.key], a.key
        assert a.self_cpu_time_total <= a.cpu_time_total + 1e-6


def test_chrome_trace_loads_with_complete_events(both, tmp_path):
    _, g = both
    path = tmp_path / "trace.json"
    g.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert {"aten::addmm", "fwd", "AddmmBackward0"} <= {e["name"] for e in xs}
    assert all(e["dur"] >= 0 and {"ts", "pid", "tid", "cat"} <= e.keys() for e in xs)
    addmm = next(e for e in xs if e["name"] == "aten::addmm")
    assert addmm["args"]["Input Dims"] == [[8], [5, 4], [4, 8], [], []]
    assert next(e for e in xs if e["name"] == "fwd")["cat"] == "user_annotation"


@pytest.mark.parametrize("kw", [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=2),
                                dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3),
                                dict(wait=3, warmup=1, active=1, skip_first=2, skip_first_wait=1)])
def test_schedule_as_torch(kw):
    ts, gs = torch.profiler.schedule(**kw), schedule(**kw)
    assert [gs(i).name for i in range(20)] == [ts(i).name for i in range(20)]


def test_schedule_errors_as_torch():
    for kw in (dict(wait=0, warmup=0, active=0), dict(wait=-1, warmup=1, active=1)):
        with pytest.raises(AssertionError) as te:
            torch.profiler.schedule(**kw)
        with pytest.raises(AssertionError) as ge:
            schedule(**kw)
        assert str(ge.value) == str(te.value)
    with pytest.warns(UserWarning, match="Profiler won't be using warmup"):
        schedule(wait=1, warmup=0, active=1)
    with pytest.raises(AssertionError, match="Step must be non-negative"):
        schedule(wait=1, warmup=1, active=1)(-1)


def _scheduled(lib, prof_mod, tmp_path=None):
    ready = []

    def on_ready(p):
        p.export_chrome_trace(str(tmp_path / "t.json"))
        steps = [e["name"] for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"]
                 if e["name"].startswith("ProfilerStep")]
        ready.append((p.step_num, [e.name for e in p.events() if e.name.startswith("ProfilerStep")], steps))
    x = lib.ones(3, requires_grad=True)
    with prof_mod.profile(schedule=prof_mod.schedule(wait=1, warmup=1, active=2, repeat=2),
                          on_trace_ready=on_ready) as p:
        for _ in range(10):
            (x * 2).sum().backward()
            p.step()
    return ready


def test_scheduled_steps_and_trace_ready_as_torch(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        star = ["ProfilerStep*"] * 2
        assert _scheduled(glassgrad, glassgrad.profiler, tmp_path) == _scheduled(torch, torch.profiler, tmp_path) == [
            (4, star, ["ProfilerStep#2", "ProfilerStep#3"]), (8, star, ["ProfilerStep#6", "ProfilerStep#7"])]


def test_tensorboard_trace_handler_writes_a_chrome_trace(tmp_path):
    d = tmp_path / "tb"
    x = glassgrad.ones(2)
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
                 on_trace_ready=glassgrad.profiler.tensorboard_trace_handler(str(d), worker_name="w0")) as p:
        for _ in range(3):
            x + 1
            p.step()
    files = list(d.iterdir())
    assert len(files) == 1 and files[0].name.startswith("w0.") and files[0].name.endswith(".pt.trace.json")
    doc = json.loads(files[0].read_text())
    assert "aten::add" in {e["name"] for e in doc["traceEvents"] if e["ph"] == "X"}
    import gzip
    with profile(on_trace_ready=glassgrad.profiler.tensorboard_trace_handler(str(d / "gz"), use_gzip=True)) as p:
        x + 1
    (gz,) = list((d / "gz").iterdir())
    assert gz.name.endswith(".pt.trace.json.gz")
    with gzip.open(gz, "rt") as f:
        assert "aten::add" in {e["name"] for e in json.load(f)["traceEvents"]}


def test_record_function_as_decorator_and_nothing_when_off():
    @record_function("my_block")
    def f(x):
        return x.exp()
    x = glassgrad.ones(2)
    f(x)          # no profiler: just runs
    with gP.profile() as p:
        f(x)
    names = [(e.name, e.cpu_parent.name if e.cpu_parent else None) for e in p.function_events]
    assert names == [("my_block", None), ("aten::exp", "my_block")]


def test_nothing_stays_patched_after_profiling():
    from glassgrad.autograd import engine
    from glassgrad._grad_state import state
    run_node, addmm, linear, add = engine._run_node, glassgrad.ops.addmm.addmm, gF.linear, glassgrad.add
    with gP.profile():
        assert glassgrad.ops.addmm.addmm is not addmm and state.profiling
        gnn.Linear(2, 2)
    assert engine._run_node is run_node and glassgrad.ops.addmm.addmm is addmm and gF.linear is linear
    assert glassgrad.add is add and not state.profiling
    import glassgrad.nn.modules.linear as lin_mod
    assert not hasattr(vars(lin_mod)["F"].linear, "_gg_profiled")


def test_with_stack_and_memory():
    with gP.profile(with_stack=True, profile_memory=True) as p:
        glassgrad.ones(4, 4).exp()
    ev = next(e for e in p.function_events if e.name == "aten::exp")
    assert ev.stack and __file__ in ev.stack[0]
    assert ev.cpu_memory_usage == 64
    assert "Source Location" in p.key_averages(group_by_stack_n=1).table().splitlines()[1]
    assert "CPU Mem" in p.key_averages().table().splitlines()[1]


def test_profile_memory_records_frees_as_torch_names_them(tmp_path):
    x = glassgrad.ones(16, 16)
    tx = torch.ones(16, 16)
    for lib, mod, v in ((torch, torch.profiler, tx), (glassgrad, glassgrad.profiler, x)):
        with mod.profile(profile_memory=True) as p:
            y = v.exp()
            del y
        avg = {a.key: a for a in p.key_averages()}
        assert avg["aten::exp"].cpu_memory_usage == 1024 and avg["aten::exp"].self_cpu_memory_usage == 1024
        assert avg["[memory]"].cpu_memory_usage <= -1024 and avg["[memory]"].cpu_time_total == 0
    p.export_chrome_trace(str(tmp_path / "m.json"))
    doc = json.loads((tmp_path / "m.json").read_text())
    assert [e["args"]["Bytes"] for e in doc["traceEvents"] if e["name"] == "[memory]"] == [-1024]
    with gP.profile() as q:          # without profile_memory: no frees recorded
        y = x.exp()
        del y
    assert [e.name for e in q.function_events] == ["aten::exp"]


def test_export_stacks_format_as_torch(tmp_path):
    """torch's flame-graph lines from each event's stack.  (torch 2.13's Kineto profiler records with_stack as
    Python-function events and leaves each op's .stack empty, so its file has no lines; glassgrad keeps the
    stack on the op, as torch's stack-carrying events are written.)"""
    x = glassgrad.ones(64, 64)
    with profile(with_stack=True) as p:
        for _ in range(3):
            (x @ x).exp()
    path = tmp_path / "stacks.txt"
    p.export_stacks(str(path))
    lines = [ln for ln in path.read_text().splitlines() if __file__.replace(" ", "_") in ln]
    assert lines
    for ln in lines:
        frames, value = ln.rsplit(" ", 1)
        assert int(value) > 0 and frames.split(";")[-1].startswith(__file__) and " " not in frames
    for mod in (torch.profiler, glassgrad.profiler):
        with mod.profile(with_stack=True) as q:
            pass
        with pytest.raises(ValueError) as e:
            q.export_stacks(str(path), "cpu_time")
        if mod is torch.profiler:
            want = str(e.value)
        with mod.profile() as q:
            pass
        with pytest.raises(AssertionError, match=r"export_stacks\(\) requires with_stack=True"):
            q.export_stacks(str(path))
    assert str(e.value) == want


def test_cuda_activity_and_nvtx_as_torch_without_cuda():
    """torch's CPU build's warnings and errors; with CuPy's GPU glassgrad's warning says it records no kernels."""
    gpu = glassgrad.backend.cuda_available()
    for mod in (torch.profiler, glassgrad.profiler):
        msg = "glassgrad records no CUDA kernels" if gpu and mod is glassgrad.profiler else "CUDA is not available"
        with pytest.warns(UserWarning, match=msg + r".*, disabling CUDA profiling"):
            with pytest.raises(AssertionError, match="No activities specified for the profiler"):
                with mod.profile(activities=[mod.ProfilerActivity.CUDA]):
                    pass
        with pytest.raises(AssertionError, match="No valid profiler activities found"):
            mod.profile(activities=[])
    got = []
    for lib, mod in ((torch, torch.autograd.profiler), (glassgrad, glassgrad.autograd.profiler)):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            with mod.emit_nvtx():
                pass
        with mod.emit_itt():
            lib.ones(2) + 1
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with mod.profile(use_cuda=True) as p:
                lib.ones(2)
        got.append(([(x.category, str(x.message)) for x in w], "aten::ones" in [e.name for e in p.function_events]))
    if gpu:
        got[1][0][1] = (UserWarning, "CUDA is not available, disabling CUDA profiling")
    assert got[0] == got[1]
    assert glassgrad.profiler.supported_activities() == {ProfilerActivity.CPU}
    assert [a.name for a in ProfilerAction] == ["NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"]
    p = gP.profile()
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        p.key_averages()


def test_profiler_script_runs_through_glassgrad_run(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "prof.py"
    script.write_text(
        "import torch\nfrom torch.profiler import profile, ProfilerActivity, record_function\n"
        "import torch.autograd.profiler as ap\n"
        "m = torch.nn.Linear(3, 2)\n"
        "with profile(activities=[ProfilerActivity.CPU]) as prof:\n"
        "    with record_function('step'):\n        m(torch.ones(4, 3)).sum().backward()\n"
        "names = {e.key for e in prof.key_averages()}\n"
        "print(sorted(n for n in names if n in ('step', 'aten::linear', 'aten::addmm', 'AddmmBackward0')))\n")
    outs = []
    for cmd in ([sys.executable, "-m", "glassgrad", "run", str(script)], [sys.executable, str(script)]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1] == "['AddmmBackward0', 'aten::addmm', 'aten::linear', 'step']\n"


def _cases(lib):
    F = lib.nn.functional
    lib.manual_seed(0)
    x, w = lib.randn(2, 3, 8, 8, requires_grad=True), lib.randn(4, 3, 3, 3)
    a, b = lib.randn(4, 5), lib.randn(5, 6)
    return {
        "view": lambda: a.view(20), "reshape": lambda: a.reshape(5, 4), "select": lambda: a[0],
        "slice": lambda: a[:, 1:3], "sum": lambda: a.sum(), "mean": lambda: a.mean(1), "matmul": lambda: a @ b,
        "torch.matmul": lambda: lib.matmul(a, b), "mm": lambda: lib.mm(a, b), "softmax": lambda: F.softmax(a, -1),
        "conv2d": lambda: F.conv2d(x, w), "max_pool2d": lambda: F.max_pool2d(x, 2),
        "avg_pool2d": lambda: F.avg_pool2d(x, 2), "dropout": lambda: F.dropout(a, 0.5),
        "layer_norm": lambda: F.layer_norm(a, (5,)), "batch_norm": lambda: F.batch_norm(x, None, None, training=True),
        "double": lambda: a.double(), "clone": lambda: a.clone(), "cat": lambda: lib.cat([a, a]),
        "stack": lambda: lib.stack([a, a]), "unsqueeze": lambda: a.unsqueeze(0), "gelu": lambda: F.gelu(a),
        "sigmoid": lambda: a.sigmoid(), "tanh": lambda: lib.tanh(a), "add": lambda: a + a, "add_scalar": lambda: a + 1,
        "sub": lambda: a - a, "div": lambda: a / 2, "pow": lambda: a ** 2, "exp": lambda: a.exp(), "neg": lambda: -a,
        "transpose": lambda: a.transpose(0, 1), "permute": lambda: x.permute(0, 2, 3, 1), "flatten": lambda: x.flatten(1),
        "argmax": lambda: a.argmax(1), "max": lambda: a.max(), "zeros": lambda: lib.zeros(3),
        "ones_like": lambda: lib.ones_like(a), "randn": lambda: lib.randn(3), "arange": lambda: lib.arange(5),
        "bce": lambda: F.binary_cross_entropy_with_logits(a, a.sigmoid()), "linear_nobias": lambda: F.linear(a, b.t()),
        "relu_": lambda: F.relu(a.clone(), inplace=True), "mul_": lambda: a.clone().mul_(2),
        "adaptive": lambda: F.adaptive_avg_pool2d(x, 1), "pad": lambda: F.pad(a, (1, 1)), "eq": lambda: a == a,
        "gt": lambda: a > 0, "abs": lambda: a.abs(), "sqrt": lambda: a.abs().sqrt(),
        "masked_fill": lambda: a.masked_fill(a > 0, 0.0), "chunk": lambda: a.chunk(2), "split": lambda: a.split(2),
        "squeeze": lambda: a[None].squeeze(0), "bmm": lambda: lib.bmm(a[None], b[None]),
        "einsum": lambda: lib.einsum("ij,jk->ik", a, b), "topk": lambda: a.topk(2), "sort": lambda: a.sort(),
        "cumsum": lambda: a.cumsum(0), "std": lambda: a.std(), "var": lambda: a.var(),
        "vector_norm": lambda: lib.linalg.vector_norm(a), "det": lambda: lib.linalg.det(a[:4, :4]),
        "svd": lambda: lib.linalg.svd(a), "fft": lambda: lib.fft.fft(a), "rfft": lambda: lib.fft.rfft(a),
        "expit": lambda: lib.special.expit(a), "norm": lambda: a.norm(), "T": lambda: a.T, "unique": lambda: lib.unique(a),
        "normalize": lambda: F.normalize(a), "clamp": lambda: a.clamp(0, 1), "gather": lambda: a.gather(0, a.long() * 0),
        "repeat": lambda: a.repeat(2, 1), "flip": lambda: a.flip(0), "prod": lambda: a.prod(), "dot": lambda: b[0] @ b[0],
        "silu": lambda: F.silu(a), "leaky_relu": lambda: F.leaky_relu(a), "sdpa": lambda: F.scaled_dot_product_attention(
            a[None], a[None], a[None]),
    }


def test_top_level_op_names_as_torch_for_common_ops():
    """What a user sees at the top of the table for ~60 everyday calls: torch's ATen names.  (Known departures,
    not listed: torch.norm (torch: aten::linalg_vector_norm), Tensor.detach / item (not ops here), contiguous
    (aten::clone), F.interpolate (aten::upsample), F.mse_loss's broadcast_tensors, a[i, j] (one select).)"""
    def top(lib):
        out = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k, f in _cases(lib).items():
                mod = torch.profiler if lib is torch else glassgrad.profiler
                with mod.profile() as p:
                    f()
                out[k] = [e.name for e in p.events() if e.cpu_parent is None]
        return out
    import glassgrad.special  # noqa: F401  (loaded before profiling starts: its functions get their prefix)
    t, g = top(torch), top(glassgrad)
    assert {k: v for k, v in g.items() if v != t[k]} == {}


def test_nested_sessions_and_an_error_inside_leave_nothing_patched():
    from glassgrad._grad_state import state
    x = glassgrad.ones(3)
    with gP.profile() as outer:
        x.exp()
        with gP.profile() as inner:
            x.sin()
        x.cos()
    assert [e.name for e in inner.function_events] == ["aten::sin"]
    assert [e.name for e in outer.function_events] == ["aten::exp", "aten::sin", "aten::cos"]
    exp = glassgrad.ops.unary.exp
    with pytest.raises(ZeroDivisionError):
        with profile() as p:
            x.exp()
            1 / 0
    assert glassgrad.ops.unary.exp is exp and not hasattr(exp, "_gg_profiled") and not state.profiling
    assert [e.name for e in p.events()] == ["aten::exp"]


def test_threads_get_their_own_ranges():
    import threading
    x = glassgrad.ones(3)
    with gP.profile() as p:
        t = threading.Thread(target=lambda: x.sin())
        with record_function("main"):
            t.start()
            t.join()
            x.cos()
    by_name = {e.name: e for e in p.function_events}
    assert by_name["aten::sin"].cpu_parent is None and by_name["aten::cos"].cpu_parent is by_name["main"]
    assert by_name["aten::sin"].thread != by_name["aten::cos"].thread


def test_acc_events_keeps_every_cycle_as_torch():
    def run(lib, mod, acc):
        seen = []
        x = lib.ones(2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with mod.profile(schedule=mod.schedule(wait=0, warmup=1, active=1, repeat=3), acc_events=acc,
                             on_trace_ready=lambda p: seen.append(sum(e.name == "aten::exp" for e in p.events()))) as p:
                for _ in range(8):
                    x.exp()
                    p.step()
        return seen
    for acc in (False, True):
        assert run(glassgrad, glassgrad.profiler, acc) == run(torch, torch.profiler, acc)
    assert run(glassgrad, glassgrad.profiler, True) == [1, 2, 3]


def test_record_function_decorator_on_a_recursive_function():
    @record_function("fact")
    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)
    with gP.profile() as p:
        assert fact(4) == 24
    evs = p.function_events
    assert [e.name for e in evs] == ["fact"] * 4
    assert [len(e.cpu_children) for e in evs] == [1, 1, 1, 0]
    assert all(e.time_range.end >= e.time_range.start for e in evs)


def test_with_flops_counts_and_column_as_torch():
    def run(lib, mod):
        F = lib.nn.functional
        lib.manual_seed(0)
        x, w = lib.randn(2, 3, 10, 9), lib.randn(4, 3, 3, 2)
        a, b, c = lib.randn(4, 5), lib.randn(5, 6), lib.randn(6)
        a3, b3 = lib.randn(3, 4, 5), lib.randn(3, 5, 6)
        with mod.profile(with_flops=True) as p:
            F.conv2d(x, w, stride=2, padding=1)
            a @ b
            lib.addmm(c, a, b)
            lib.bmm(a3, b3)
            a * a
            a + a
            a * 2
            F.linear(a, b.t(), c)
        counts = {k.key: k.flops for k in p.key_averages() if k.flops > 0}
        return counts, p.key_averages().table(sort_by="flops", row_limit=3).splitlines()[1]
    t, g = run(torch, torch.profiler), run(glassgrad, glassgrad.profiler)
    assert g[0] == t[0] == {"aten::conv2d": 7200, "aten::mm": 240, "aten::addmm": 480, "aten::bmm": 720,
                            "aten::mul": 40, "aten::add": 20}
    assert g[1].split()[-2:] == t[1].split()[-2:] == ["Total", "FLOPs"]
