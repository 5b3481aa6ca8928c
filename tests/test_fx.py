"""torch.fx against torch: each model is written once as a function of the library module and traced under both;
the printed graph, the generated code, the node names and the outputs must be torch's."""

import copy
import operator

import numpy as np
import pytest
import torch

import glassgrad
import glassgrad.fx  # noqa: F401
from _fx_common import _assert_same_outputs, _pair, _structure, _t


def _helper_scale(x, k):
    return x * k


torch.fx.wrap("_helper_scale")
glassgrad.fx.wrap("_helper_scale")


# ---------------------------------------------------------------- models written once for both libraries
def mlp(lib):
    nn = lib.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 8)
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))
    return MLP(), (2, 6)


def cnn(lib):
    nn, F = lib.nn, lib.nn.functional

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * 4 * 4, 5))

        def forward(self, x):
            y = F.relu(self.bn(self.conv(x)))
            y = F.max_pool2d(y, 2)
            return F.log_softmax(self.head(y), dim=1)
    return CNN().eval(), (2, 3, 8, 8)


def residual(lib):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.scale = nn.Parameter(lib.ones(4) * 0.5)
            self.register_buffer("shift", lib.arange(4.0))

        def forward(self, x):
            h = lib.relu(self.lin(x)) * self.scale + self.shift
            return x + h

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(), Block()])
            self.out = nn.Linear(8, 2)

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            a, c = x.chunk(2, dim=1)
            y = lib.cat([x, lib.tanh(x)], 1)
            y = y + x.size(0) + x.shape[1]
            z = F.gelu(self.out(y)).sum(dim=-1, keepdim=True)
            w = lib.add(z.view(-1), 1) - a.mean() / c.abs().max()
            return {"z": z, "w": w, "t": lib.tensor([1.0, 2.0]) * w.unsqueeze(1)}
    return Net(), (3, 4)


def methods_and_ops(lib):
    F = lib.nn.functional

    class M(lib.nn.Module):
        def forward(self, x, y):
            a = (x @ y.t()).softmax(-1)
            b = -a ** 2 // 1 % 3
            c = F.dropout(a, 0.1, training=False) + lib.where(a > 0.1, a, b)
            d = c[:, 0:2].reshape(-1).flatten()
            e = lib.special.expit(d) * lib.linalg.vector_norm(x) + lib.fft.fft(d).real
            return _helper_scale(e, 2.0), 1 - e, 2 * e
    return M(), (3, 4), (3, 4)


def sequential(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 2), nn.Tanh())), (2, 3)


def constants_and_views(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.const = lib.ones(3) * 2          # a plain tensor attribute: a get_attr of its name
            self.lin = lib.nn.Linear(3, 3)

        def forward(self, x):
            y = x.to(lib.float64).float() + self.const
            z = y.view(x.size(0), -1)[:, 1:] * self.lin.weight[0, 1:]
            q = lib.flatten(z, 1).transpose(0, 1).contiguous().mean(dim=0)
            r = lib.zeros_like(q) + lib.nn.functional.softmax(q, dim=0) + \
                lib.nn.functional.linear(x, self.lin.weight).sum() + self.lin(x).sum()
            s = x.new_zeros(3) + x.shape[-1]
            t = lib.stack((s, s)).max(dim=0)
            return r, t.values, t[1], self.training
    return M(), (2, 3)


def resnet_block(lib):
    nn = lib.nn

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None if stride == 1 else nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                                     nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.Sequential(BasicBlock(3, 3, 1), BasicBlock(3, 4, 2))
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(lib.flatten(self.pool(self.layer(x)), 1))
    return Net().eval(), (2, 3, 6, 6)


def attention(lib):
    import math
    nn, F = lib.nn, lib.nn.functional

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(8, 24)
            self.proj = nn.Linear(8, 8)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(c, dim=2)
            scores = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
            mask = lib.triu(x.new_ones(t, t, dtype=lib.bool), diagonal=1)
            att = F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
            return self.proj((att @ v).reshape(b, t, c))
    return Attn(), (2, 5, 8)


def containers(lib):
    nn = lib.nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.d = nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.ReLU()})
            self.pl = nn.ParameterList([nn.Parameter(lib.ones(2)), nn.Parameter(lib.zeros(2))])
            self.pd = nn.ParameterDict({"w": nn.Parameter(lib.ones(2))})
            self.seq = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 2))
            self.register_buffer("nb", lib.ones(2), persistent=False)

        def forward(self, x):
            y = self.d["b"](self.d["a"](x)) * self.pl[0] + self.pl[1] + self.pd["w"] + self.nb
            for i in range(len(self.seq)):
                y = self.seq[i](y)
            return y
    return M(), (3, 2)


MODELS = {"mlp": mlp, "cnn": cnn, "residual": residual, "methods_and_ops": methods_and_ops,
          "sequential": sequential, "constants_and_views": constants_and_views, "resnet_block": resnet_block,
          "attention": attention, "containers": containers}


# ---------------------------------------------------------------- tracing
@pytest.mark.parametrize("name", sorted(MODELS))
def test_trace_matches_torch(name):
    tm, gm, inputs = _pair(MODELS[name])
    t_traced = torch.fx.symbolic_trace(tm)
    g_traced = glassgrad.fx.symbolic_trace(gm)
    assert _structure(g_traced.graph) == _structure(t_traced.graph)
    assert str(g_traced.graph) == _t(str(t_traced.graph))
    assert g_traced.code == _t(t_traced.code)
    assert type(g_traced).__name__ == type(t_traced).__name__
    assert isinstance(g_traced, glassgrad.fx.GraphModule) and isinstance(g_traced, glassgrad.nn.Module)
    assert [k for k, _ in g_traced.named_parameters()] == [k for k, _ in t_traced.named_parameters()]
    assert [k for k, _ in g_traced.named_buffers()] == [k for k, _ in t_traced.named_buffers()]
    assert [k for k, _ in g_traced.named_modules()] == [k for k, _ in t_traced.named_modules()]
    assert list(g_traced.state_dict()) == list(t_traced.state_dict())
    t_out = t_traced(*[torch.tensor(i) for i in inputs])
    g_out = g_traced(*[glassgrad.tensor(i) for i in inputs])
    _assert_same_outputs(t_out, g_out)
    _assert_same_outputs(t_out, gm(*[glassgrad.tensor(i) for i in inputs]))
    assert g_traced.print_readable(print_output=False) == _t(t_traced.print_readable(print_output=False))


def test_targets_are_the_called_functions_and_patches_are_undone():
    _, gm, _ = _pair(residual)
    relu, cat, gelu = glassgrad.relu, glassgrad.cat, glassgrad.nn.functional.gelu
    before = {k: v for k, v in vars(glassgrad.Tensor).items()}
    call, getattr_ = glassgrad.nn.Module.__call__, glassgrad.nn.Module.__getattr__
    traced = glassgrad.fx.symbolic_trace(gm)
    assert {k: v for k, v in vars(glassgrad.Tensor).items()} == before
    assert glassgrad.nn.Module.__call__ is call and glassgrad.nn.Module.__getattr__ is getattr_
    targets = [n.target for n in traced.graph.nodes if n.op == "call_function"]
    assert relu in targets and cat in targets and gelu in targets and operator.add in targets
    assert glassgrad.relu is relu and glassgrad.cat is cat and glassgrad.nn.functional.gelu is gelu
    assert glassgrad.nn.Module.__getattr__.__name__ == "__getattr__"

    def bad(x):
        glassgrad.relu(x)
        raise KeyError("boom")
    with pytest.raises(KeyError):
        glassgrad.fx.symbolic_trace(bad)
    assert glassgrad.relu is relu
    assert glassgrad.relu(glassgrad.tensor([-1.0])).item() == 0.0


def test_trace_function_and_graph_api():
    def f(lib):
        def fn(x, y=None):
            return lib.sigmoid(x).sum(), lib.nn.functional.relu(x, inplace=False)
        return fn
    t_gm, g_gm = torch.fx.symbolic_trace(f(torch)), glassgrad.fx.symbolic_trace(f(glassgrad))
    assert str(g_gm.graph) == str(t_gm.graph) and g_gm.code == t_gm.code
    assert type(g_gm).__name__ == "fn"
    x = g_gm.graph.find_nodes(op="placeholder")[0]
    assert x.name == "x" and [u.name for u in x.users] == ["sigmoid", "relu"]
    out = [n for n in g_gm.graph.nodes][-1]
    assert out.op == "output" and [n.name for n in out.all_input_nodes] == ["sum_1", "relu"]
    assert len(g_gm.graph.nodes) == 6 and [n.name for n in reversed(g_gm.graph.nodes)][0] == "output"


@pytest.mark.parametrize("concrete", [{"flag": True}, {"flag": False, "y": None}, {"flag": True, "y": 3}])
def test_concrete_args(concrete):
    def f(lib):
        def fn(x, flag=True, y=None):
            if flag:
                x = lib.relu(x)
            if y is not None:
                x = x + y
            return x
        return fn
    t_gm = torch.fx.symbolic_trace(f(torch), concrete_args=concrete)
    g_gm = glassgrad.fx.symbolic_trace(f(glassgrad), concrete_args=concrete)
    assert str(g_gm.graph) == str(t_gm.graph)
    assert g_gm.code == t_gm.code
    x = np.array([-1.0, 2.0], dtype=np.float32)
    args = [concrete["flag"], concrete.get("y", 2.0)]
    _assert_same_outputs(t_gm(torch.tensor(x), *args), g_gm(glassgrad.tensor(x), *args))
    if concrete.get("y") is not None:       # the specialisation is checked when the code runs
        with pytest.raises(AssertionError, match="y has been specialized to have value 3"):
            g_gm(glassgrad.tensor(x), True, 4)


def _leaf_model(lib):
    nn = lib.nn

    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x).relu()

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.seq = nn.Sequential(Inner(), nn.ReLU())

        def forward(self, x):
            return self.seq(self.inner(x))

    class LeafTracer(lib.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, Inner) or super().is_leaf_module(m, qualname)
    return Outer(), LeafTracer


def test_leaf_modules_and_tracer_subclass():
    torch.manual_seed(0)
    tm, TT = _leaf_model(torch)
    gm, GT = _leaf_model(glassgrad)
    gm.load_state_dict({k: glassgrad.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    for t_tracer, g_tracer in ((torch.fx.Tracer(), glassgrad.fx.Tracer()), (TT(), GT())):
        t_graph, g_graph = t_tracer.trace(tm), g_tracer.trace(gm)
        assert str(g_graph) == str(t_graph)
        t_mod = torch.fx.GraphModule(tm, t_graph)
        g_mod = glassgrad.fx.GraphModule(gm, g_graph)
        assert g_mod.code == t_mod.code
        x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
        _assert_same_outputs(t_mod(torch.tensor(x)), g_mod(glassgrad.tensor(x)))
    assert g_tracer.path_of_module(gm.seq[0]) == "seq.0"
    with pytest.raises(NameError, match="module is not installed as a submodule"):
        g_tracer.path_of_module(glassgrad.nn.ReLU())


# ---------------------------------------------------------------- errors
def _control_flow(lib):
    def branch(x):
        if x.sum() > 0:
            return x
        return -x

    def loop(x):
        return [v for v in x]

    def length(x):
        return len(x)
    return branch, loop, length


@pytest.mark.parametrize("which", [0, 1, 2])
def test_control_flow_errors_are_torchs(which):
    t_fn, g_fn = _control_flow(torch)[which], _control_flow(glassgrad)[which]
    with pytest.raises(Exception) as t_err:
        torch.fx.symbolic_trace(t_fn)
    with pytest.raises(Exception) as g_err:
        glassgrad.fx.symbolic_trace(g_fn)
    assert type(g_err.value).__name__ == type(t_err.value).__name__
    assert str(g_err.value) == str(t_err.value)
    if which < 2:
        assert isinstance(g_err.value, glassgrad.fx.proxy.TraceError) and isinstance(g_err.value, ValueError)


def test_graph_errors():
    gm = glassgrad.fx.symbolic_trace(mlp(glassgrad)[0])
    fc1 = next(n for n in gm.graph.nodes if n.name == "fc1")
    with pytest.raises(RuntimeError, match="Tried to erase Node fc1 but it still had 1 users in the graph"):
        gm.graph.erase_node(fc1)
    out = next(n for n in gm.graph.nodes if n.op == "output")
    out.prepend(fc1)        # fc1 now after its user: lint reports it
    with pytest.raises(RuntimeError, match="was used before it has been defined"):
        gm.graph.lint()


# ---------------------------------------------------------------- rewriting
def _rewrite_relu_to_gelu(lib, gm):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is lib.relu:
            node.target = lib.nn.functional.gelu
        if node.op == "call_module" and isinstance(gm.get_submodule(node.target), lib.nn.ReLU):
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(lib.neg, (node,))
            node.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new)
    gm.graph.lint()
    gm.recompile()
    return gm


def test_graph_rewriting():
    for factory in (residual, mlp):
        tm, gm, inputs = _pair(factory)
        t_gm = _rewrite_relu_to_gelu(torch, torch.fx.symbolic_trace(tm))
        g_gm = _rewrite_relu_to_gelu(glassgrad, glassgrad.fx.symbolic_trace(gm))
        assert _structure(g_gm.graph)[:-1] == _structure(t_gm.graph)[:-1]
        _assert_same_outputs(t_gm(*[torch.tensor(i) for i in inputs]), g_gm(*[glassgrad.tensor(i) for i in inputs]))
    assert "neg = torch.neg(act);  act = None" in g_gm.code


def test_erase_and_dead_code():
    def f(lib):
        def fn(x):
            unused = lib.exp(x) + 1  # noqa: F841
            return lib.sin(x)
        return fn
    t_gm, g_gm = torch.fx.symbolic_trace(f(torch)), glassgrad.fx.symbolic_trace(f(glassgrad))
    assert g_gm.graph.eliminate_dead_code() is t_gm.graph.eliminate_dead_code() is True
    g_gm.recompile()
    t_gm.recompile()
    assert str(g_gm.graph) == str(t_gm.graph) and g_gm.code == t_gm.code
    sin = next(n for n in g_gm.graph.nodes if n.name == "sin")
    with g_gm.graph.inserting_before(sin):
        cos = g_gm.graph.call_function(glassgrad.cos, sin.args)
    sin.replace_all_uses_with(cos)
    g_gm.graph.erase_node(sin)
    g_gm.recompile()
    np.testing.assert_allclose(g_gm(glassgrad.tensor([0.5])).detach().numpy(), np.cos([0.5]).astype(np.float32))
    assert "cos = torch.cos(x);  x = None" in g_gm.code


# ---------------------------------------------------------------- Interpreter / Transformer
def test_interpreter_and_transformer():
    tm, gm, inputs = _pair(residual)
    t_gm, g_gm = torch.fx.symbolic_trace(tm), glassgrad.fx.symbolic_trace(gm)
    g_args, t_args = [glassgrad.tensor(i) for i in inputs], [torch.tensor(i) for i in inputs]
    _assert_same_outputs(t_gm(*t_args), glassgrad.fx.Interpreter(g_gm).run(*g_args))

    def counting(base):
        class Counting(base):
            seen = []

            def call_function(self, target, args, kwargs):
                self.seen.append(getattr(target, "__name__", str(target)))
                return super().call_function(target, args, kwargs)
        return Counting
    tc, gc = counting(torch.fx.Interpreter), counting(glassgrad.fx.Interpreter)
    tc(t_gm).run(*t_args)
    gc(g_gm).run(*g_args)
    assert gc.seen == tc.seen

    def to_sigmoid(lib, base):
        class ReluToSigmoid(base):
            def call_function(self, target, args, kwargs):
                if target is lib.relu:
                    target = lib.sigmoid
                return super().call_function(target, args, kwargs)
        return ReluToSigmoid
    t_new = to_sigmoid(torch, torch.fx.Transformer)(t_gm).transform()
    g_new = to_sigmoid(glassgrad, glassgrad.fx.Transformer)(g_gm).transform()
    assert str(g_new.graph) == _t(str(t_new.graph)) and g_new.code == _t(t_new.code)
    assert _structure(g_new.graph) == _structure(t_new.graph)      # nn_module_stack carried over as torch's
    _assert_same_outputs(t_new(*t_args), g_new(*g_args))


def test_graph_module_copies_and_submodules():
    tm, gm, inputs = _pair(mlp)
    g_gm = glassgrad.fx.symbolic_trace(gm)
    clone = copy.deepcopy(g_gm)
    assert clone.code == g_gm.code and type(clone).__name__ == "GraphModule"      # as torch's deepcopy
    clone.fc1.weight.data.zero_()
    assert g_gm.fc1.weight.abs().sum().item() > 0
    assert g_gm.add_submodule("extra.act", glassgrad.nn.Tanh())
    assert isinstance(g_gm.get_submodule("extra.act"), glassgrad.nn.Tanh)
    assert g_gm.delete_submodule("extra.act") and not g_gm.delete_submodule("extra.act")
    g_gm.delete_all_unused_submodules()
    assert [k for k, _ in g_gm.named_modules()] == ["", "fc1", "act", "fc2"]
    new = glassgrad.fx.GraphModule({"fc1": gm.fc1, "act": gm.act, "fc2": gm.fc2}, g_gm.graph, "FromDict")
    x = glassgrad.tensor(inputs[0])
    np.testing.assert_allclose(new(x).detach().numpy(), gm(x).detach().numpy(), rtol=1e-6)
    assert "# To see more debug info, please use `graph_module.print_readable()`" in str(new)


def test_proxy_and_graph_by_hand():
    for lib in (torch, glassgrad):
        g = lib.fx.Graph()
        x = lib.fx.Proxy(g.placeholder("x"))
        y = (x + 1).relu()
        g.output(y.node)
        mod = lib.fx.GraphModule(lib.nn.Module(), g)
        assert mod(lib.tensor([-2.0, 3.0])).tolist() == [0.0, 4.0]
        if lib is torch:
            t_str, t_code = str(g), mod.code
    assert str(g) == t_str and mod.code == t_code
    assert lib.fx.map_arg((x.node, [1, x.node]), lambda n: n.name) == ("x", [1, "x"])
