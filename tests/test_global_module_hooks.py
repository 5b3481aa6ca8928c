"""torch.nn.modules.module.register_module_*: global hooks run for every module, before its own, with torch's
order, return-value rules and errors (each test runs the same program on torch and on glassgrad)."""
import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)


def _mm(lib):
    return lib.nn.modules.module


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def _run(lib, register):
    """Register global hooks (register(lib, log) -> handles), run forward + backward, remove them; the log."""
    log = []
    handles = register(lib, log)
    try:
        net = _net(lib)
        own = net[0].register_forward_hook(lambda m, a, o: log.append(("own-fwd", type(m).__name__)))
        x = lib.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3), requires_grad=True)
        out = net(x)
        out.sum().backward()
        own.remove()
        log.append(("out", np.round(out.detach().numpy(), 5).tolist()))
        log.append(("xgrad", np.round(x.grad.numpy(), 5).tolist()))
    finally:
        for h in handles:
            h.remove()
    return log


def _same(register):
    ours, theirs = _run(glassgrad, register), _run(torch, register)
    assert ours == theirs
    return ours


def test_forward_pre_and_forward_hooks_run_first_for_every_module():
    def register(lib, log):
        def pre(m, args):
            log.append(("pre", type(m).__name__))

        def post(m, args, out):
            log.append(("post", type(m).__name__, tuple(out.shape)))
            if isinstance(m, lib.nn.ReLU):
                return out * 2                     # a returned value replaces the output
        return [_mm(lib).register_module_forward_pre_hook(pre), _mm(lib).register_module_forward_hook(post)]
    log = _same(register)
    assert ("own-fwd", "Linear") in log and log.index(("post", "Linear", (2, 4))) < log.index(("own-fwd", "Linear"))


def test_forward_hook_with_kwargs_and_pre_hook_replacing_args():
    def register(lib, log):
        def pre(m, args):
            if isinstance(m, lib.nn.Linear) and m.in_features == 3:
                return (args[0] + 1,)

        def post(m, args, kwargs, out):
            log.append(("kw", type(m).__name__, sorted(kwargs)))
        return [_mm(lib).register_module_forward_pre_hook(pre),
                _mm(lib).register_module_forward_hook(post, with_kwargs=True)]
    _same(register)


def test_full_backward_hooks_and_pre_hooks():
    def register(lib, log):
        def pre(m, gout):
            log.append(("bpre", type(m).__name__, [tuple(g.shape) for g in gout if g is not None]))

        def hook(m, gin, gout):
            log.append(("bwd", type(m).__name__, [None if g is None else tuple(g.shape) for g in gin]))
            if isinstance(m, lib.nn.ReLU):
                return tuple(None if g is None else g * 3 for g in gin)
        return [_mm(lib).register_module_full_backward_pre_hook(pre), _mm(lib).register_module_full_backward_hook(hook)]
    _same(register)


def test_regular_and_full_global_backward_hooks_do_not_mix():
    for lib in LIBS:
        mm = _mm(lib)
        h = mm.register_module_full_backward_hook(lambda m, gi, go: None)
        h.remove()
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            mm.register_module_backward_hook(lambda m, gi, go: None)


def test_always_call_hook_runs_when_forward_raises():
    for lib in LIBS:
        seen = []
        h = _mm(lib).register_module_forward_hook(lambda m, a, o: seen.append(o), always_call=True)
        try:
            with pytest.raises(RuntimeError):
                lib.nn.Linear(3, 2)(lib.ones(2, 5))
        finally:
            h.remove()
        assert seen == [None], lib


def test_registration_hooks_see_and_may_replace_what_is_registered():
    def program(lib):
        log = []
        mm = _mm(lib)

        def on_module(m, name, sub):
            log.append(("module", type(m).__name__, name, type(sub).__name__))
            if isinstance(sub, lib.nn.Tanh):
                return lib.nn.Sigmoid()

        def on_param(m, name, p):
            log.append(("param", type(m).__name__, name, tuple(p.shape)))

        def on_buffer(m, name, b):
            log.append(("buffer", type(m).__name__, name, None if b is None else tuple(b.shape)))
            if b is not None and name == "extra":
                return b + 1
        hs = [mm.register_module_module_registration_hook(on_module),
              mm.register_module_parameter_registration_hook(on_param),
              mm.register_module_buffer_registration_hook(on_buffer)]
        try:
            net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Tanh())
            net.add_module("bn", lib.nn.BatchNorm1d(2))
            net.extra_mod = lib.nn.Tanh()
            net.register_buffer("extra", lib.zeros(3))
            net.register_buffer("none", None)
            net[0].weight = lib.nn.Parameter(lib.ones(2, 2))
        finally:
            for h in hs:
                h.remove()
        log.append(("types", [type(m).__name__ for m in net.children()]))
        log.append(("extra", net.extra.tolist()))
        lib.nn.Linear(2, 2)                      # removed: no longer called
        return log
    assert program(glassgrad) == program(torch)


def test_hooks_are_removable_and_module_paths_match():
    for name in _mm(torch).__all__:
        assert hasattr(_mm(glassgrad), name), name
    log = []
    h = _mm(glassgrad).register_module_forward_hook(lambda m, a, o: log.append(1))
    glassgrad.nn.ReLU()(glassgrad.ones(1))
    h.remove()
    glassgrad.nn.ReLU()(glassgrad.ones(1))
    assert log == [1]
