"""torch.utils' smaller names against torch: swap_tensors (contents, types, grads, __dict__, the weakref / slots /
use_count refusals and the poisoned AccumulateGrad), set_module, backcompat, deterministic, weak."""
import copy
import gc
import weakref

import pytest
import torch

import glassgrad



def _same_error(ours, theirs):
    assert ours is not None and theirs is not None, (ours, theirs)
    assert type(ours).__name__ == type(theirs).__name__ and str(ours) == str(theirs), (ours, theirs)


def _both(fn):
    """fn(lib) under torch and glassgrad: (torch's result or error, glassgrad's)."""
    out = []
    for lib in (torch, glassgrad):
        try:
            out.append(("ok", fn(lib)))
        except Exception as e:      # noqa: BLE001 -- compared below
            out.append(("err", e))
    return out


def _compare(fn):
    (kt, t), (kg, g) = _both(fn)
    assert kt == kg, (t, g)
    if kt == "err":
        _same_error(g, t)
    else:
        assert g == t, (g, t)


# -- swap_tensors -------------------------------------------------------------------------------------------------

def _describe(lib, t):
    return (type(t).__name__, t.tolist(), str(t.dtype).replace("glassgrad", "torch"), tuple(t.shape), t.requires_grad,
            None if t.grad is None else t.grad.tolist(), t.is_leaf)


def test_swap_exchanges_contents_types_and_dtypes():
    def run(lib):
        a, b = lib.ones(2), lib.zeros(3, dtype=lib.int64)
        ida, idb = id(a), id(b)
        lib.utils.swap_tensors(a, b)
        assert (id(a), id(b)) == (ida, idb)
        return _describe(lib, a), _describe(lib, b), a._version, b._version
    _compare(run)


def test_swap_a_parameter_and_a_tensor():
    def run(lib):
        p, t = lib.nn.Parameter(lib.ones(2)), lib.zeros(2)
        lib.utils.swap_tensors(p, t)
        return _describe(lib, p), _describe(lib, t), isinstance(t, lib.nn.Parameter)
    _compare(run)


def test_swap_moves_grad_and_python_attributes():
    def run(lib):
        x, y = lib.ones(2, requires_grad=True), lib.zeros(2)
        x.grad = lib.full((2,), 5.0)
        x.tag = "x"
        lib.utils.swap_tensors(x, y)
        return _describe(lib, x), _describe(lib, y), y.tag, hasattr(x, "tag")
    _compare(run)


def test_swap_shares_the_moved_memory():
    def run(lib):
        other = lib.zeros(4)
        view = other[:2]
        lib.utils.swap_tensors(view, lib.arange(3.0))
        other[0] = 9.0                      # view no longer views `other`
        return view.tolist(), other.tolist()
    _compare(run)


@pytest.mark.parametrize("which", ["t1", "t2"])
def test_swap_refuses_a_tensor_with_a_weakref(which):
    def run(lib):
        a, b = lib.ones(1), lib.zeros(1)
        keep = weakref.ref(a)
        try:
            return lib.utils.swap_tensors(a, b) if which == "t1" else lib.utils.swap_tensors(b, a)
        finally:
            del keep
    _compare(run)


@pytest.mark.parametrize("args", ["tensor_int", "int_int"])
def test_swap_of_non_tensors_is_torchs_error(args):
    _compare(lambda lib: lib.utils.swap_tensors(lib.ones(1), 3) if args == "tensor_int" else lib.utils.swap_tensors(3, 4))


def test_swap_refuses_a_leaf_the_graph_saved():
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        z = (x * x).sum()
        out = lib.utils.swap_tensors(x, lib.zeros(2))
        del z
        return out
    _compare(run)


def test_swap_refuses_an_input_saved_without_grad():
    def run(lib):
        w, x = lib.ones(2, requires_grad=True), lib.full((2,), 3.0)
        z = (w * x).sum()
        try:
            return lib.utils.swap_tensors(x, lib.zeros(2))
        finally:
            del z
    _compare(run)


def test_swap_of_a_leaf_with_only_its_accumulator_poisons_backward():
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        z = (x * 2).sum()
        lib.utils.swap_tensors(x, lib.zeros(2))
        z.backward()
    _compare(run)


def test_swap_of_a_non_leaf_and_a_viewed_base():
    def nonleaf(lib):
        x = lib.ones(2, requires_grad=True)
        w = x * 2
        lib.utils.swap_tensors(w, lib.zeros(2))
        return w.tolist(), w.grad_fn is None, w.requires_grad
    _compare(nonleaf)

    def viewed(lib):
        base = lib.ones(4)
        v = base[:2]
        try:
            return lib.utils.swap_tensors(base, lib.zeros(4))
        finally:
            del v
    _compare(viewed)

    def view_itself(lib):
        base = lib.ones(4)
        v = base[:2]
        lib.utils.swap_tensors(v, lib.zeros(2))
        return v.tolist(), base.tolist()
    _compare(view_itself)


def test_python_references_do_not_count():
    def run(lib):
        a, b = lib.ones(2), lib.zeros(2)
        holders = [a, (a, 1), {"a": a}]
        lib.utils.swap_tensors(a, b)
        return holders[0].tolist(), holders[1][0].tolist()
    _compare(run)


# -- set_module, backcompat, deterministic ------------------------------------------------------------------------

def test_set_module():
    def run(lib):
        def f():
            pass
        lib.utils.set_module(f, "my.mod")
        return f.__module__
    _compare(run)
    _compare(lambda lib: lib.utils.set_module(lambda: 0, 3))


@pytest.mark.parametrize("name", ["broadcast_warning", "keepdim_warning"])
@pytest.mark.parametrize("value", [True, False, 1, "x", None])
def test_backcompat_switches(name, value):
    def run(lib):
        w = getattr(lib.utils.backcompat, name)
        before = w.enabled
        try:
            w.enabled = value
            return before, w.enabled, w.get_enabled()
        finally:
            w.set_enabled(False)
    _compare(run)


def test_backcompat_switches_change_no_result():
    with _no_warning():
        glassgrad.utils.backcompat.broadcast_warning.enabled = True
        try:
            out = glassgrad.add(glassgrad.ones(4, 1), glassgrad.ones(4))
        finally:
            glassgrad.utils.backcompat.broadcast_warning.enabled = False
    assert out.shape == torch.add(torch.ones(4, 1), torch.ones(4)).shape


class _no_warning:
    def __enter__(self):
        import warnings
        self.cm = warnings.catch_warnings(record=True)
        self.rec = self.cm.__enter__()
        warnings.simplefilter("always")

    def __exit__(self, *exc):
        self.cm.__exit__(*exc)
        assert not self.rec, [str(w.message) for w in self.rec]


@pytest.mark.parametrize("value", [True, False, 1, None])
def test_deterministic_fill_uninitialized_memory_switch(value):
    def run(lib):
        import importlib
        d = importlib.import_module(lib.__name__ + ".utils.deterministic")
        before = d.fill_uninitialized_memory
        try:
            d.fill_uninitialized_memory = value
            return before, d.fill_uninitialized_memory
        finally:
            d.fill_uninitialized_memory = True
    _compare(run)


def test_fill_uninitialized_memory_decides_what_empty_holds():
    import glassgrad.utils.deterministic as d
    glassgrad.use_deterministic_algorithms(True)
    torch.use_deterministic_algorithms(True)
    try:
        assert glassgrad.isnan(glassgrad.empty(8)).all() and torch.isnan(torch.empty(8)).all()
        t = glassgrad.ones(2)
        t.resize_(5)
        assert t[:2].tolist() == [1.0, 1.0] and glassgrad.isnan(t[2:]).all()
        d.fill_uninitialized_memory = False
        t = glassgrad.ones(2)
        t.resize_(50)
        assert not glassgrad.isnan(t).any()     # left as it was (zeros here), as torch leaves it uninitialized
    finally:
        d.fill_uninitialized_memory = True
        glassgrad.use_deterministic_algorithms(False)
        torch.use_deterministic_algorithms(False)


# -- weak -------------------------------------------------------------------------------------------------------

def test_weak_id_ref():
    from glassgrad.utils.weak import WeakIdRef
    a = glassgrad.ones(2)
    r1, r2 = WeakIdRef(a), WeakIdRef(a)
    assert r1 == r2 and hash(r1) == hash(r2) == id(a) and r1() is a
    b = glassgrad.ones(2)
    assert not (WeakIdRef(b) == r1)          # (weakref.ref's own != compares the referents, as in torch)
    del a
    gc.collect()
    assert r1() is None and not (r1 == r2) and r1 == r1


@pytest.mark.parametrize("lib", [torch, glassgrad], ids=["torch", "glassgrad"])
def test_weak_tensor_key_dictionary(lib):
    import importlib
    weak = importlib.import_module(lib.__name__ + ".utils.weak")
    d = weak.WeakTensorKeyDictionary()
    a, b, c = lib.ones(2), lib.ones(2), lib.zeros(1)        # a == b elementwise, but distinct keys
    d[a], d[b] = "a", "b"
    assert len(d) == 2 and d[a] == "a" and d[b] == "b" and a in d and c not in d and d.get(c, 0) == 0
    assert [v for v in d.values()] == ["a", "b"] and all(k is a or k is b for k in d.keys())
    e = copy.copy(d)
    assert e == d and len(d.keyrefs()) == 2
    assert d.setdefault(c, "c") == "c" and d.pop(c) == "c"
    merged = d | {c: "c"}
    assert len(merged) == 3 and len(d) == 2
    del b
    gc.collect()
    assert len(d) == 1 and list(d.items()) == [(a, "a")] and len(e) == 1
    del d[a]
    assert len(d) == 0
    with pytest.raises(KeyError):
        d[a]
    w = weak.TensorWeakRef(a)
    assert w() is a
    with pytest.raises(AssertionError, match="expected torch.Tensor"):
        weak.TensorWeakRef(3)


def test_submodules_are_attributes():
    for name in ["hooks", "weak", "backcompat", "deterministic", "swap_tensors", "set_module"]:
        assert hasattr(glassgrad.utils, name) and hasattr(torch.utils, name), name


# -- hooks.BackwardHook ---------------------------------------------------------------------------------------

def _hooked_run(lib, input_grad=True, pre_scale=None, hook_scale=None):
    """Wire a BackwardHook by hand around a Linear, as Module.__call__ does; (what the hooks saw, x.grad)."""
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        m.weight.copy_(lib.arange(6.0, dtype=lib.float64).reshape(2, 3) / 7)
        m.bias.fill_(0.5)
    seen = []

    def pre(mod, grad_output):
        seen.append(("pre", mod is m, [None if g is None else g.tolist() for g in grad_output]))
        return None if pre_scale is None else tuple(g * pre_scale for g in grad_output)

    def hook(mod, grad_input, grad_output):
        seen.append(("hook", [None if g is None else g.tolist() for g in grad_input],
                     [None if g is None else g.tolist() for g in grad_output]))
        return None if hook_scale is None else tuple(None if g is None else g * hook_scale for g in grad_input)
    bw = lib.utils.hooks.BackwardHook(m, [hook], [pre])
    x = lib.tensor([[1.0, -2.0, 3.0]], dtype=lib.float64, requires_grad=input_grad)
    args = bw.setup_input_hook((x, "not a tensor"))
    out = bw.setup_output_hook(m.forward(args[0]))
    (out * lib.tensor([[1.0, 3.0]], dtype=lib.float64)).sum().backward()
    return seen, None if x.grad is None else x.grad.tolist(), m.weight.grad.tolist(), type(args).__name__


@pytest.mark.parametrize("pre_scale,hook_scale", [(None, None), (2.0, None), (None, -1.0), (0.5, 3.0)])
def test_backward_hook_wired_by_hand_as_torchs(pre_scale, hook_scale):
    ours = _hooked_run(glassgrad, pre_scale=pre_scale, hook_scale=hook_scale)
    theirs = _hooked_run(torch, pre_scale=pre_scale, hook_scale=hook_scale)
    assert ours == theirs


def test_backward_hook_without_input_grads_as_torchs():
    import warnings
    out = []
    for lib in (torch, glassgrad):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out.append(_hooked_run(lib, input_grad=False))
        assert any("no inputs require gradients" in str(x.message) for x in w)
    assert out[0] == out[1]


def test_backward_hook_bad_hook_results_are_torchs_errors():
    errors = []
    for lib in (torch, glassgrad):
        m = lib.nn.Linear(2, 2)
        bw = lib.utils.hooks.BackwardHook(m, [lambda mod, gi, go: (None, None, None)], [])
        x = lib.ones(1, 2, requires_grad=True)
        out = bw.setup_output_hook(m.forward(bw.setup_input_hook((x,))[0]))
        with pytest.raises(RuntimeError) as e:
            out.sum().backward()
        errors.append(str(e.value))
    assert errors[0] == errors[1]


# -- ThroughputBenchmark --------------------------------------------------------------------------------------

@pytest.mark.parametrize("threads,iters", [(1, 10), (3, 25), (2, 0), (0, 5)])
def test_throughput_benchmark_counts_as_torchs(threads, iters):
    out = []
    for lib in (torch, glassgrad):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        b = lib.utils.ThroughputBenchmark(m)
        x = lib.ones(1, 3)
        assert lib.equal(b.run_once(x), m(x))
        b.add_input(x)
        b.add_input(input=lib.zeros(1, 3))
        s = b.benchmark(num_calling_threads=threads, num_warmup_iters=2, num_iters=iters)
        assert s.benchmark_config.num_calling_threads == threads and s.benchmark_config.num_iters == iters
        lat = s.latency_avg_ms
        out.append((s.num_iters >= iters, s.num_iters - iters <= threads, lat == float("inf"), lat == 0.0,
                    lat >= 0, type(str(s)) if threads and iters else None))
    assert out[0] == out[1]


def test_throughput_benchmark_errors_and_formatting():
    from glassgrad.utils.throughput_benchmark import format_time
    from torch.utils.throughput_benchmark import format_time as torch_format_time
    for kw in [{"time_us": 12.5}, {"time_ms": 3.25}, {"time_s": 2.0}, {"time_us": 2e6}]:
        assert format_time(**kw) == torch_format_time(**kw)
    with pytest.raises(AssertionError, match="Expected only one"):
        format_time(time_us=1, time_ms=1)
    errors = []
    for lib in (torch, glassgrad):
        with pytest.raises(RuntimeError) as e:
            lib.utils.ThroughputBenchmark(lib.nn.Linear(2, 2)).benchmark(num_iters=3)
        errors.append(str(e.value))
    assert errors[0] == errors[1]


def test_throughput_benchmark_profiles_into_a_trace(tmp_path):
    import json
    b = glassgrad.utils.ThroughputBenchmark(glassgrad.nn.Linear(3, 2))
    b.add_input(glassgrad.ones(1, 3))
    p = tmp_path / "trace.json"
    s = b.benchmark(num_calling_threads=1, num_warmup_iters=1, num_iters=4, profiler_output_path=str(p))
    events = json.loads(p.read_text())["traceEvents"]
    assert s.num_iters == 4 and sum(e.get("name") == "aten::linear" for e in events) == 4     # the measured calls
