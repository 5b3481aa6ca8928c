"""torch.jit, torch.compile, torch.compiler and torch._dynamo without a compiler: what they return runs the
same code eagerly, with torch's values and gradients, torch's argument errors, and torch's module shapes
(OptimizedModule's ``_orig_mod.`` state_dict keys, ScriptModule isinstance checks, freeze's checks)."""
import typing
import warnings

import numpy as np
import pytest
import torch

import glassgrad


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))


def _fn(lib):
    def f(x, y):
        return (x * y).sin() + x.exp()
    return f


def _grads(lib, model, x):
    out = model(x)
    out.sum().backward()
    return out.detach().numpy(), [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("wrap", ["script", "trace", "compile", "compile_default", "compile_eager", "module_compile"])
def test_wrapped_model_values_and_grads_as_torch(wrap):
    res = []
    for lib in (torch, glassgrad):
        m = _mlp(lib)
        x = lib.linspace(-1, 1, 15).reshape(5, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if wrap == "script":
                w = lib.jit.script(m)
            elif wrap == "trace":
                w = lib.jit.trace(m, x)
            elif wrap == "compile":
                w = lib.compile(m, backend="eager")
            elif wrap == "compile_default":
                w = lib.compile(m, mode="max-autotune", dynamic=False)
                w = m          # (torch would build inductor code here: values checked through m only)
            elif wrap == "compile_eager":
                w = lib.compile(m, backend="aot_eager", fullgraph=True)
            else:
                m.compile(backend="eager")
                w = m
        res.append(_grads(lib, w, x))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-6, atol=1e-6)
    for a, b in zip(res[1][1], res[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_compiled_function_and_decorators_as_torch():
    for lib in (torch, glassgrad):
        f = lib.compile(_fn(lib), backend="eager")
        g = lib.compile(backend="eager", fullgraph=True)(_fn(lib))
        s = lib.jit.script(_fn(torch)) if lib is torch else lib.jit.script(_fn(lib))
        x, y = lib.tensor([0.5, -1.0]), lib.tensor([2.0, 3.0])
        vals = [h(x, y).numpy() for h in (f, g, s)]
        assert f.__name__ == "f"
        if lib is torch:
            want = vals
        else:
            for v, w in zip(vals, want):
                np.testing.assert_allclose(v, w, rtol=1e-6)
    m = glassgrad.nn.Linear(2, 2)
    assert glassgrad.compile(m, disable=True) is m
    assert torch.compile(torch.nn.Linear(2, 2), disable=True).__class__ is torch.nn.Linear


def test_optimized_module_is_torchs_shape():
    for lib in (torch, glassgrad):
        m = _mlp(lib)
        c = lib.compile(m, backend="eager")
        assert type(c).__name__ == "OptimizedModule" and isinstance(c, lib.nn.Module)
        assert list(c.state_dict()) == ["_orig_mod." + k for k in m.state_dict()]
        assert c._orig_mod is m and c.training and c.forward is not None
        c.eval()
        assert not m.training
        assert repr(c).startswith("OptimizedModule(\n  (_orig_mod): Sequential(")
        assert list(m.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_compile_argument_errors_as_torch():
    import torch._dynamo.exc as texc
    from glassgrad._dynamo import exc as gexc
    msgs = []
    for lib, invalid in ((torch, texc.InvalidBackend), (glassgrad, gexc.InvalidBackend)):
        m = lib.nn.Linear(1, 1)
        cases = [(dict(mode="fast"), RuntimeError), (dict(mode="default", options={}), RuntimeError),
                 (dict(backend="nope"), invalid)]
        for kw, exc in cases:
            with pytest.raises(exc) as e:
                lib.compile(m, **kw)
            msgs.append(str(e.value))
            with pytest.raises(exc):
                m.compile(**kw)
    assert msgs[3:] == msgs[:3]
    assert isinstance(gexc.InvalidBackend("x"), RuntimeError)
    assert glassgrad.compiler.list_backends() == torch.compiler.list_backends()
    assert glassgrad._dynamo.list_backends() == torch._dynamo.list_backends()


def test_compiler_and_dynamo_surface():
    for lib in (torch, glassgrad):
        assert lib.compiler.is_compiling() is False and lib.compiler.is_dynamo_compiling() is False
        f = _fn(lib)
        assert lib.compiler.disable(f)(lib.ones(1), lib.ones(1)).shape == (1,)
        assert lib.compiler.disable()(f) is not None
        lib.compiler.reset()
        lib._dynamo.reset()
        assert lib._dynamo.config.suppress_errors is False and lib._dynamo.config.cache_size_limit == 8
        lib._dynamo.config.suppress_errors = True
        lib._dynamo.config.suppress_errors = False
        with lib._dynamo.config.patch(cache_size_limit=64):
            assert lib._dynamo.config.cache_size_limit == 64
        assert lib._dynamo.config.cache_size_limit == 8
        t = lib.ones(3, 4)
        lib._dynamo.mark_dynamic(t, 0)
        assert lib.compiler.allow_in_graph(f) is not None


def test_jit_deprecation_warnings_as_torch():
    for lib in (torch, glassgrad):
        m = lib.nn.Linear(1, 1)
        with pytest.warns(DeprecationWarning, match="`torch.jit.script` is deprecated. Please switch to"):
            lib.jit.script(m)
        with pytest.warns(DeprecationWarning, match="`torch.jit.trace` is deprecated"):
            lib.jit.trace(m, lib.ones(1, 1))
        with pytest.warns(DeprecationWarning, match="`torch.jit.freeze` is deprecated. Please use `torch.compile`"):
            lib.jit.freeze(lib.jit.script(m).eval())


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_script_and_trace_marks_and_freeze_checks_as_torch():
    for lib in (torch, glassgrad):
        m = lib.nn.Linear(2, 2)
        with pytest.raises(RuntimeError) as e:
            lib.jit.freeze(m)
        with pytest.raises(RuntimeError) as e2:
            lib.jit.optimize_for_inference(m)
        s = lib.jit.script(m)
        assert isinstance(s, lib.jit.ScriptModule) and isinstance(s, lib.nn.Module)
        assert not isinstance(lib.nn.Linear(2, 2), lib.jit.ScriptModule)
        assert list(s.state_dict()) == ["weight", "bias"] and s.weight is m.weight
        with pytest.raises(RuntimeError) as e3:
            lib.jit.freeze(s)
        f = lib.jit.freeze(s.eval())
        assert isinstance(f, lib.jit.ScriptModule)        # (torch's frozen module has no `training` left)
        o = lib.jit.optimize_for_inference(lib.jit.script(lib.nn.Linear(2, 2)))
        assert o(lib.ones(1, 2)).shape == (1, 2)
        t = lib.jit.trace(lib.nn.Linear(2, 2), lib.ones(1, 2))
        assert isinstance(t, lib.jit.ScriptModule)
        msgs = (str(e.value), str(e2.value), str(e3.value))
        if lib is torch:
            want = msgs
    assert msgs == want


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_tracing_flags_fork_wait_and_decorators():
    seen = []

    def f(x):
        seen.append((glassgrad.jit.is_tracing(), glassgrad.jit.is_scripting()))
        return x + 1
    tf = glassgrad.jit.trace(f, (glassgrad.ones(2),))
    assert seen == [(True, False)]
    assert tf(glassgrad.zeros(2)).tolist() == [1.0, 1.0] and seen[-1] == (False, False)
    tm = glassgrad.jit.trace_module(glassgrad.nn.Linear(2, 1), {"forward": glassgrad.ones(1, 2)})
    assert isinstance(tm, glassgrad.jit.ScriptModule)
    assert glassgrad.jit.trace(lambda x, k: x * k, example_kwarg_inputs={"x": glassgrad.ones(1), "k": 2})(
        glassgrad.ones(1), 3).item() == 3.0
    for lib in (torch, glassgrad):
        with pytest.raises(TypeError, match="'NoneType' object is not iterable"):
            lib.jit.trace(f)
        with pytest.raises(AttributeError, match="expected torch.nn.Module as the first argument"):
            lib.jit.trace_module(f, {})
        with pytest.raises(AttributeError, match=r"expected a dictionary of \(method_name, input\) pairs"):
            lib.jit.trace_module(lib.nn.Linear(1, 1), [])
    for lib in (torch, glassgrad):
        fut = lib.jit.fork(lambda a, b: a * b, lib.tensor(3.0), b=lib.tensor(2.0))
        assert lib.jit.wait(fut).item() == 6.0 and fut.done() and fut.value().item() == 6.0
        assert fut.then(lambda fu: fu.value() + 1).wait().item() == 7.0
        assert lib.jit.annotate(typing.List[int], []) == []
        assert lib.jit.isinstance([1, 2], typing.List[int]) and not lib.jit.isinstance([1, "a"], typing.List[int])
        assert lib.jit.isinstance({"a": 1}, typing.Dict[str, int]) and lib.jit.isinstance(None, typing.Optional[int])

        class M(lib.nn.Module):
            c: lib.jit.Final[int] = 3

            @lib.jit.ignore
            def helper(self, x):
                return x * self.c

            @lib.jit.unused
            def unused(self, x):
                return x

            @lib.jit.export
            def other(self, x):
                return x - 1

            def forward(self, x):
                return self.helper(x) + self.other(x)
        m = lib.jit.script(M())
        assert m(lib.ones(2)).tolist() == [3.0, 3.0]
    with pytest.raises(ZeroDivisionError):
        glassgrad.jit.wait(glassgrad.jit.fork(lambda: 1 / 0))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_jit_save_and_load_raise_clearly(tmp_path):
    m = glassgrad.jit.script(glassgrad.nn.Linear(1, 1))
    with pytest.raises(RuntimeError, match="no TorchScript"):
        glassgrad.jit.save(m, str(tmp_path / "m.pt"))
    p = tmp_path / "m.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(1, 1)), str(p))
    with pytest.raises(RuntimeError, match="no TorchScript interpreter"):
        glassgrad.jit.load(str(p))
    for lib in (torch, glassgrad):
        with pytest.raises(ValueError, match="does not exist"):
            lib.jit.load(str(tmp_path / "missing.pt"))
        with pytest.raises(ValueError, match="is a directory"):
            lib.jit.load(str(tmp_path))


def test_compile_script_runs_through_glassgrad_run(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "comp.py"
    script.write_text(
        "import torch\nimport torch._dynamo\nimport torch.jit\n"
        "torch._dynamo.config.suppress_errors = True\n"
        "torch.manual_seed(0)\nm = torch.nn.Linear(3, 2)\nc = torch.compile(m, backend='eager')\n"
        "s = torch.jit.script(m)\nx = torch.ones(4, 3)\n"
        "print(torch.equal(c(x), m(x)), torch.equal(s(x), m(x)), list(c.state_dict()))\n")
    outs = []
    for cmd in ([sys.executable, "-m", "glassgrad", "run", str(script)], [sys.executable, str(script)]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1] == "True True ['_orig_mod.weight', '_orig_mod.bias']\n"
