"""torch.fx against torch, continued: replace_pattern, root signatures, Tensor-left operators, math autowrap,
pickling, immutable node arguments, Interpreter errors."""

import copy

import numpy as np
import pytest
import torch

import glassgrad
import glassgrad.fx  # noqa: F401
from _fx_common import _assert_same_outputs, _pair, _structure
from test_fx import residual


def test_node_arguments_are_immutable():
    errs = []
    for lib in (torch, glassgrad):
        gm = lib.fx.symbolic_trace(lambda x: lib.cat([x, x], dim=0))
        node = list(gm.graph.nodes)[1]
        assert type(node.args) is tuple and type(node.args[0]).__name__ == "immutable_list"
        assert type(node.kwargs).__name__ == "immutable_dict"
        for mutate in (lambda: node.args[0].append(1), lambda: node.kwargs.update(dim=1)):
            with pytest.raises(TypeError) as err:
                mutate()
            errs.append(str(err.value))
        node.args = ([node.args[0][0]],)
        assert [u.name for u in node.args[0][0].users] == ["cat"]
    assert errs[2:] == errs[:2]



def test_interpreter_error_message():
    msgs = []
    for lib in (torch, glassgrad):
        def fn(x, y):
            return lib.matmul(x, y)
        gm = lib.fx.symbolic_trace(fn)
        with pytest.raises(RuntimeError) as err:
            lib.fx.Interpreter(gm).run(lib.ones(2, 3), lib.ones(2, 3))
        msgs.append(str(err.value))
    assert msgs[1] == msgs[0]
    assert "While executing %matmul : [num_users=1] = call_function[target=torch.matmul]" in msgs[1]



# ---------------------------------------------------------------- replace_pattern
def _rewrite_model(lib):
    class M(lib.nn.Module):
        def forward(self, x, w1, w2):
            m1 = lib.cat([w1, w2]).sum()
            m2 = lib.cat([w1, w2]).sum()
            return x + lib.max(m1) + lib.max(m2) + lib.relu(x).neg()

    def pattern(w1, w2):
        return lib.cat([w1, w2]).sum()

    def replacement(w1, w2):
        return lib.stack([w1, w2])

    def pattern2(x):
        return lib.relu(x).neg()

    def replacement2(x):
        return lib.sigmoid(x) * 2
    return M(), (pattern, replacement), (pattern2, replacement2)


def test_replace_pattern():
    (tm, *t_pairs), (gm, *g_pairs) = _rewrite_model(torch), _rewrite_model(glassgrad)
    t_gm, g_gm = torch.fx.symbolic_trace(tm), glassgrad.fx.symbolic_trace(gm)
    for (tp, tr), (gp, gr) in zip(t_pairs, g_pairs):
        t_matches = torch.fx.replace_pattern(t_gm, tp, tr)
        g_matches = glassgrad.fx.replace_pattern(g_gm, gp, gr)
        assert [(m.anchor.name, sorted((k.name, v.name) for k, v in m.nodes_map.items())) for m in g_matches] == \
            [(m.anchor.name, sorted((k.name, v.name) for k, v in m.nodes_map.items())) for m in t_matches]
        assert str(g_gm.graph) == str(t_gm.graph) and g_gm.code == t_gm.code
    x = np.random.default_rng(0).standard_normal((3,)).astype(np.float32)
    _assert_same_outputs(t_gm(*[torch.tensor(x)] * 3), g_gm(*[glassgrad.tensor(x)] * 3))
    assert glassgrad.fx.replace_pattern(g_gm, g_pairs[1][0], g_pairs[1][1]) == []


def _signature_forms(lib):
    def fn(x, *args, k=2, **kw):
        c = lib.ones(3)
        ints = lib.ones(3, dtype=lib.int64)
        g = lib.arange(4.0)[x.argmax()]           # a tensor indexed by a Proxy: Tensor.__getitem__
        h = lib.zeros(3)
        h[0] = x.sum()                            # a Proxy stored into a tensor: Tensor.__setitem__
        a = c // x
        b = c % x
        d = c.add(x, alpha=2) + c.mul(x) - c ** x
        e = (c < x) | (c == x)
        f = ints & (x > 0)
        return a, b, d, e, f, args, k, kw, x.new_ones(2), c @ x, c / x, g, h
    return fn


def test_signature_forms_and_tensor_left_operands():
    t_gm = torch.fx.symbolic_trace(_signature_forms(torch))
    g_gm = glassgrad.fx.symbolic_trace(_signature_forms(glassgrad))
    assert _structure(g_gm.graph) == _structure(t_gm.graph)
    assert str(g_gm.graph) == str(t_gm.graph) and g_gm.code == t_gm.code
    x = np.array([0.5, 2.0, 3.0], dtype=np.float32)
    t_out = t_gm(torch.tensor(x), 3, 7, 8, extra=1)     # torch's forward: (self, x, k = 2, *args, **kw)
    g_out = g_gm(glassgrad.tensor(x), 3, 7, 8, extra=1)
    assert g_out[5:8] == t_out[5:8] == ((7, 8), 3, {"extra": 1})
    _assert_same_outputs(t_out[:5] + t_out[8:], g_out[:5] + g_out[8:])


def test_graph_by_hand_prints_torch_names():
    import subprocess
    import sys
    code = ("import glassgrad as lib, glassgrad.fx\n"       # a fresh process: nothing traced before
            "g = lib.fx.Graph(); p = g.placeholder('x')\n"
            "n = g.call_function(lib.add, (p, 1)); m = g.call_function(lib.nn.functional.relu, (n,))\n"
            "g.output(m); print(g); print(g.python_code('self').src)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    g = torch.fx.Graph()
    p = g.placeholder("x")
    g.output(g.call_function(torch.nn.functional.relu, (g.call_function(torch.add, (p, 1)),)))
    assert out == f"{g}\n{g.python_code('self').src}\n"


def test_math_functions_are_autowrapped():
    import math

    def f(lib):
        def fn(x):
            return x * math.sqrt(x.size(-1)) + math.floor(x.size(0))
        return fn
    t_gm, g_gm = torch.fx.symbolic_trace(f(torch)), glassgrad.fx.symbolic_trace(f(glassgrad))
    assert str(g_gm.graph) == str(t_gm.graph) and g_gm.code == t_gm.code
    assert g_gm(glassgrad.ones(2)).tolist() == t_gm(torch.ones(2)).tolist()
    assert math.sqrt(4) == 2.0 and type(math.sqrt).__name__ == "builtin_function_or_method"
    no_math = glassgrad.fx.Tracer(autowrap_modules=())
    with pytest.raises(TypeError):
        no_math.trace(f(glassgrad))


def test_pickle_and_save_round_trip():
    import io
    import pickle
    tm, gm, inputs = _pair(residual)
    t_gm, g_gm = torch.fx.symbolic_trace(tm), glassgrad.fx.symbolic_trace(gm)
    t_back, g_back = pickle.loads(pickle.dumps(t_gm)), pickle.loads(pickle.dumps(g_gm))
    assert type(g_back).__name__ == type(t_back).__name__ == "GraphModule"
    assert type(copy.deepcopy(g_gm)).__name__ == type(copy.deepcopy(t_gm)).__name__ == "GraphModule"
    assert type(g_gm).__name__ == type(t_gm).__name__ == "Net"
    assert g_back.code == g_gm.code and str(g_back.graph) == str(g_gm.graph)
    buf = io.BytesIO()
    glassgrad.save(g_gm, buf)
    buf.seek(0)
    loaded = glassgrad.load(buf, weights_only=False)
    x = glassgrad.tensor(inputs[0])
    for m in (g_back, loaded):
        _assert_same_outputs(t_gm(torch.tensor(inputs[0])), m(x))


def test_dead_code_keeps_what_torch_keeps():
    def f(lib):
        def fn(x, flag):
            lib.randn_like(x)           # advances the generator: kept
            lib.nn.functional.dropout(x)   # pure for torch.fx: removed
            x.add_(1)                   # an in-place method: torch counts it pure
            lib.exp(x)
            return x
        return fn
    t_gm = torch.fx.symbolic_trace(f(torch), concrete_args={"flag": 2})
    g_gm = glassgrad.fx.symbolic_trace(f(glassgrad), concrete_args={"flag": 2})
    assert g_gm.graph.eliminate_dead_code() == t_gm.graph.eliminate_dead_code()
    assert str(g_gm.graph) == str(t_gm.graph)
    assert [n.is_impure() for n in g_gm.graph.nodes] == [n.is_impure() for n in t_gm.graph.nodes]


def _annotated(lib):
    from typing import Dict, List, Optional, Tuple  # noqa: UP035

    def fn(x: lib.Tensor, n: int = 2, ys: Optional[List[lib.Tensor]] = None, t: Tuple[int, ...] = (1,),  # noqa: UP006
           d: Dict[str, float] = None, u: "int | None" = None, m: lib.nn.Module = None,  # noqa: UP006
           z: list[lib.Tensor] = None) -> lib.Tensor:
        return x * n

    class M(lib.nn.Module):
        def forward(self, x: lib.Tensor) -> Tuple[lib.Tensor, lib.Tensor]:  # noqa: UP006
            return x, x.relu()
    return fn, M()


def test_annotations_become_node_types():
    for t_root, g_root in zip(_annotated(torch), _annotated(glassgrad)):
        t_gm, g_gm = torch.fx.symbolic_trace(t_root), glassgrad.fx.symbolic_trace(g_root)
        assert str(g_gm.graph) == str(t_gm.graph) and g_gm.code == t_gm.code
    assert [n.type for n in g_gm.graph.nodes][0] is glassgrad.Tensor
    assert g_gm(glassgrad.ones(2))[1].tolist() == [1.0, 1.0]


def _proxy_operators(lib):
    import operator

    def fn(x):
        a, b, c, d = abs(x), -x, +x, ~(x > 0)
        e, f, g, h, i = x ** 2, 2 ** x, 1 / x, 3 // x, 5 % x
        k, sl, m = x[0], x[..., None, 1:2], x.T
        p = operator.getitem(x, 0)
        q = x.float().to(lib.float64).to(dtype=lib.float32, device=lib.device("cpu"))
        return a, b, c, d, e, f, g, h, i, k, sl, m, p, q
    return fn


def test_proxy_operators_and_constants():
    t_gm, g_gm = torch.fx.symbolic_trace(_proxy_operators(torch)), glassgrad.fx.symbolic_trace(_proxy_operators(glassgrad))
    assert str(g_gm.graph) == str(t_gm.graph) and g_gm.code == t_gm.code
    _assert_same_outputs(t_gm(torch.arange(1.0, 5.0).reshape(2, 2)), g_gm(glassgrad.arange(1.0, 5.0).reshape(2, 2)))


_THROUGH = [("Linear", (3, 4)), ("Conv2d", (3, 4, 3)), ("BatchNorm2d", (3,)), ("LayerNorm", (3,)), ("ReLU", ()),
            ("Dropout", ()), ("GELU", ()), ("MaxPool2d", (2,)), ("AdaptiveAvgPool2d", (1,)), ("Embedding", (5, 2)),
            ("Flatten", ()), ("Identity", ()), ("GroupNorm", (1, 2)), ("SiLU", ()), ("Tanh", ()), ("Sigmoid", ()),
            ("LeakyReLU", ()), ("Hardswish", ()), ("AvgPool2d", (2,)), ("Upsample", (None, 2)),
            ("ConvTranspose2d", (2, 2, 2)), ("Sequential", ())]


@pytest.mark.parametrize("name,args", _THROUGH)
def test_tracing_through_nn_modules(name, args):
    """A tracer with no leaf module traces nn's own forwards: the same functions are recorded (or the same
    error raised) as torch's (placeholder annotations aside: torch's nn forwards are annotated)."""
    results = []
    for lib in (torch, glassgrad):
        class NoLeaves(lib.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return False
        try:
            results.append(_structure(NoLeaves().trace(getattr(lib.nn, name)(*args))))
        except Exception as e:     # noqa: BLE001  (the error itself is what is compared)
            results.append((type(e).__name__, str(e)))
    assert results[1] == results[0]


def test_subclassed_nn_module_is_traced_through():
    def model(lib):
        class MyConv(lib.nn.Conv2d):
            def forward(self, x):
                return lib.tanh(super().forward(x)) + x.mean()
        return MyConv(2, 2, 3, padding=1)
    torch.manual_seed(0)
    tm, gm = model(torch), model(glassgrad)
    gm.load_state_dict({k: glassgrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    t_gm, g_gm = torch.fx.symbolic_trace(tm), glassgrad.fx.symbolic_trace(gm)
    assert _structure(g_gm.graph) == _structure(t_gm.graph) and g_gm.code == t_gm.code
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype(np.float32)
    _assert_same_outputs(t_gm(torch.tensor(x)), g_gm(glassgrad.tensor(x)))
    assert glassgrad.tanh(glassgrad.tensor([0.0])).item() == 0.0 and not hasattr(glassgrad.tanh, "__fx_original__")


def test_function_held_by_a_module_attribute():
    def model(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.act = lib.nn.functional.gelu
                self.fns = {"tanh": lib.tanh}

            def forward(self, x):
                return self.act(x) + x.sum()
        return M()
    t_gm, g_gm = torch.fx.symbolic_trace(model(torch)), glassgrad.fx.symbolic_trace(model(glassgrad))
    assert _structure(g_gm.graph) == _structure(t_gm.graph)
    m = model(glassgrad)
    glassgrad.fx.symbolic_trace(m)
    assert m.act is glassgrad.nn.functional.gelu


@pytest.mark.filterwarnings("ignore")
def test_functional_written_in_python_is_traced_through():
    def f(lib):
        F = lib.nn.functional

        def fn(x):       # torch's upsample* call interpolate: the node is interpolate's
            return F.upsample(x, scale_factor=2), F.upsample_bilinear(x, scale_factor=2), F.upsample_nearest(x, size=4)
        return fn
    t_gm, g_gm = torch.fx.symbolic_trace(f(torch)), glassgrad.fx.symbolic_trace(f(glassgrad))
    assert str(g_gm.graph) == str(t_gm.graph)
    _assert_same_outputs(t_gm(torch.ones(1, 1, 2, 2)), g_gm(glassgrad.ones(1, 1, 2, 2)))


@pytest.mark.filterwarnings("ignore")
def test_torch_functional_functions():
    def f(lib):
        def fn(x):
            return (lib.unique(x), lib.unique_consecutive(x), lib.split(x, 2), lib.norm(x), lib.tensordot(x, x, 1),
                    lib.einsum("i,i->", x, x), lib.meshgrid(x, x, indexing="ij"), lib.broadcast_tensors(x, x))
        return fn
    t_gm, g_gm = torch.fx.symbolic_trace(f(torch)), glassgrad.fx.symbolic_trace(f(glassgrad))
    assert str(g_gm.graph) == str(t_gm.graph) and g_gm.code == t_gm.code
    assert glassgrad.functional.split is glassgrad.split and "split" in glassgrad.functional.__all__
    _assert_same_outputs(t_gm(torch.tensor([1.0, 2.0, 2.0, 3.0])), g_gm(glassgrad.tensor([1.0, 2.0, 2.0, 3.0])))


def test_print_tabular_without_tabulate(capsys, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "tabulate", None)      # as where tabulate is not installed
    outs = []
    for lib in (torch, glassgrad):
        gm = lib.fx.symbolic_trace(lambda x: lib.relu(x))
        with pytest.raises(ImportError) as err:
            gm.graph.print_tabular()
        outs.append((type(err.value).__name__, capsys.readouterr().out))
    assert outs[1] == outs[0] and "pip install tabulate" in outs[0][1]


def test_param_shapes_constant():
    outs = []
    for lib in (torch, glassgrad):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(3, 2))

            def forward(self, x):
                if self.w.shape[0] == 3 and self.w.dim() == 2 and self.w.numel() == 6:
                    return x @ self.w
                return x
        outs.append(str(lib.fx.Tracer(param_shapes_constant=True).trace(M())))
        with pytest.raises(lib.fx.proxy.TraceError):
            lib.fx.symbolic_trace(M())
    assert outs[1] == outs[0] and "matmul" in outs[0]


def _fusable(lib):
    nn = lib.nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)
            self.bn = nn.BatchNorm2d(4)
            self.drop = nn.Dropout(0.3)
            self.seq = nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5))
            self.conv2 = nn.Conv2d(4, 4, 1)
            self.bn2 = nn.BatchNorm2d(4)

        def forward(self, x):
            y = self.drop(lib.relu(self.bn(self.conv(x))))
            z = self.conv2(y)
            w = self.bn2(z) + z               # conv2's output used twice: not fused
            return self.seq(w.mean((2, 3)))
    return M()


def test_experimental_fuse_and_remove_dropout():
    import glassgrad.fx.experimental.optimization as g_opt
    import torch.fx.experimental.optimization as t_opt
    torch.manual_seed(0)
    tm, gm = _fusable(torch), _fusable(glassgrad)
    for m in tm.modules():                    # running statistics that are not the defaults
        if isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
            m.running_mean.uniform_(-1, 1)
            m.running_var.uniform_(0.5, 2)
    gm.load_state_dict({k: glassgrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    tm.eval()
    gm.eval()
    t_fused, g_fused = t_opt.fuse(tm), g_opt.fuse(gm)
    assert str(g_fused.graph) == str(t_fused.graph) and g_fused.code == t_fused.code
    assert [k for k, _ in g_fused.named_modules()] == [k for k, _ in t_fused.named_modules()]
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    _assert_same_outputs(t_fused(torch.tensor(x)), g_fused(glassgrad.tensor(x)))
    _assert_same_outputs(tm(torch.tensor(x)), g_fused(glassgrad.tensor(x)))
    t_nodrop, g_nodrop = t_opt.remove_dropout(tm), g_opt.remove_dropout(gm)
    assert str(g_nodrop.graph) == str(t_nodrop.graph) and g_nodrop.code == t_nodrop.code
    gm.train()
    tm.train()
    with pytest.raises(AssertionError) as t_err:
        t_opt.fuse(tm)
    with pytest.raises(AssertionError) as g_err:
        g_opt.fuse(gm)
    assert str(g_err.value) == str(t_err.value)
