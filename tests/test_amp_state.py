"""torch's autocast state functions and the autocast object against torch: values, nesting, the cast cache,
warnings (texts and categories) and errors, the deprecated torch.cpu.amp / torch.cuda.amp spellings,
custom_fwd / custom_bwd, and module paths (import torch.amp.autocast_mode through glassgrad run's alias)."""
import contextlib
import warnings

import pytest
import torch

import glassgrad

BOTH = (torch, glassgrad)


@contextlib.contextmanager
def _record():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        yield w


def _said(w):
    return [(x.category.__name__, str(x.message).split(" (Triggered internally")[0]) for x in w]


def _outcome(f):
    """(result or (exception type, message), warnings) of f()."""
    with _record() as w:
        try:
            r = f()
        except Exception as e:     # noqa: BLE001  (compared with torch's)
            r = (type(e).__name__, str(e))
    return r, _said(w)


def _same(f):
    want, got = _outcome(lambda: f(torch)), _outcome(lambda: f(glassgrad))
    assert str(got) == str(want)


@pytest.mark.parametrize("call", [
    lambda T: (T.is_autocast_enabled(), T.is_autocast_enabled("cpu"), T.is_autocast_enabled("cuda")),
    lambda T: (T.get_autocast_dtype("cpu"), T.get_autocast_dtype("cuda"), T.get_autocast_dtype("xpu")),
    lambda T: T.get_autocast_dtype("hpu"),
    lambda T: T.get_autocast_dtype("foo"),
    lambda T: T.get_autocast_dtype("meta"),
    lambda T: T.get_autocast_dtype(1),
    lambda T: T.is_autocast_enabled(1),
    lambda T: T.is_autocast_enabled("meta"),
    lambda T: T.get_autocast_cpu_dtype(),
    lambda T: T.get_autocast_gpu_dtype(),
    lambda T: T.is_autocast_cpu_enabled(),
    lambda T: T.is_autocast_cache_enabled(),
    lambda T: T.set_autocast_enabled(1),
    lambda T: T.set_autocast_enabled("cpu", "yes"),
    lambda T: T.set_autocast_enabled("foo", True),
    lambda T: T.set_autocast_dtype("cpu", 1),
    lambda T: T.set_autocast_cache_enabled(1),
    lambda T: [T.amp.is_autocast_available(d) for d in ("cpu", "cuda", "xpu", "mps", "meta", "cuda:0", "lazy")],
    lambda T: T.amp.is_autocast_available("foo"),
    lambda T: (T.get_autocast_ipu_dtype(), T.get_autocast_xla_dtype(), T.is_autocast_ipu_enabled(),
               T.is_autocast_xla_enabled()),
    lambda T: T.GradScaler is T.amp.GradScaler,
])
def test_state_queries_as_torch(call):
    _same(call)


def test_state_setters_round_trip_as_torch():
    def f(T):
        seen = []
        T.set_autocast_enabled("cpu", True)
        seen.append((T.is_autocast_enabled("cpu"), T.is_autocast_enabled()))
        T.set_autocast_enabled(True)
        seen.append((T.is_autocast_enabled("cpu"), T.is_autocast_enabled()))
        T.set_autocast_enabled(False)
        T.set_autocast_enabled("cpu", False)
        T.set_autocast_dtype("cpu", T.float16)
        seen.append(T.get_autocast_dtype("cpu"))
        T.set_autocast_cpu_dtype(T.bfloat16)
        T.set_autocast_cpu_enabled(True)
        seen.append((T.get_autocast_dtype("cpu"), T.is_autocast_enabled("cpu")))
        T.set_autocast_cpu_enabled(False)
        T.set_autocast_gpu_dtype(T.bfloat16)
        seen.append(T.get_autocast_dtype("cuda"))
        T.set_autocast_dtype("cuda", T.float16)
        seen.append([T.autocast_increment_nesting(), T.autocast_increment_nesting(), T.autocast_decrement_nesting(),
                     T.autocast_decrement_nesting()])
        T.set_autocast_cache_enabled(False)
        seen.append(T.is_autocast_cache_enabled())
        T.set_autocast_cache_enabled(True)
        T.clear_autocast_cache()
        T.set_autocast_ipu_enabled(True)
        T.set_autocast_xla_dtype(T.float16)
        seen.append((T.is_autocast_enabled("ipu"), T.get_autocast_dtype("xla")))
        T.set_autocast_ipu_enabled(False)
        T.set_autocast_xla_dtype(T.bfloat16)
        T.set_autocast_ipu_dtype(T.bfloat16)
        T.set_autocast_xla_enabled(False)
        seen.append((T.get_autocast_dtype("ipu"), T.is_autocast_enabled("xla")))
        T.set_autocast_ipu_dtype(T.float16)
        return seen
    _same(f)


@pytest.mark.parametrize("args", [
    ("cpu",), ("cpu", "float16"), ("cpu", "float32"), ("cpu", "float64"), ("cpu", "int32"), ("cuda",),
    ("cuda", "bfloat16"), ("mps",), ("xpu",), ("meta",), ("foo",),
])
def test_autocast_enter_as_torch(args):
    def f(T):
        kw = {} if len(args) == 1 else {"dtype": getattr(T, args[1])}
        with T.autocast(args[0], **kw) as a:
            inside = (type(a).__name__, T.is_autocast_enabled(args[0]), T.get_autocast_dtype(args[0]),
                      T.is_autocast_enabled())
        return inside, T.is_autocast_enabled(args[0]), T.get_autocast_dtype(args[0])
    _same(f)


@pytest.mark.parametrize("bad", [lambda T: T.device("cpu"), lambda T: 1])
def test_autocast_device_type_must_be_str(bad):
    _same(lambda T: T.autocast(bad(T)))


def test_autocast_enabled_must_be_bool_and_decorator_needs_callable():
    _same(lambda T: T.autocast("cpu", enabled="yes").__enter__())
    _same(lambda T: T.autocast("cpu")(3))


def test_autocast_nesting_disabling_and_decorator_as_torch():
    def f(T):
        a, b = T.ones(2, 2), T.ones(2, 2)
        out = []
        with T.autocast("cpu"):
            out.append(T.mm(a, b).dtype)
            with T.autocast("cpu", enabled=False):
                out.append((T.mm(a, b).dtype, T.is_autocast_enabled("cpu")))
                with T.autocast("cpu", dtype=T.float16):
                    out.append(T.mm(a, b).dtype)
                out.append(T.get_autocast_dtype("cpu"))
            out.append((T.mm(a, b).dtype, T.is_autocast_enabled("cpu")))

        @T.autocast("cpu")
        def g(x):
            return T.mm(x, x).dtype, T.is_autocast_enabled("cpu")
        out.append((g(a), g.__name__, T.is_autocast_enabled("cpu")))
        ac = T.amp.autocast("cpu")
        with ac:
            pass
        with ac:                              # an autocast object can be re-entered
            out.append(T.mm(a, b).dtype)
        out.append(T.mm(a, b).dtype)
        try:
            with T.autocast("cpu"):
                raise KeyError("x")
        except KeyError:
            out.append(T.is_autocast_enabled("cpu"))
        return out
    _same(f)


def test_cast_cache_as_torch():
    def f(T):
        w = T.ones(3, 3, requires_grad=True)
        x = T.ones(3, 3)
        with T.autocast("cpu"):
            y1, y2 = T.mm(x, w), T.mm(x, w)
            same = y1.grad_fn.next_functions[1][0] is y2.grad_fn.next_functions[1][0]
            with T.autocast("cpu", cache_enabled=False):
                y3 = T.mm(x, w)
            fresh = y3.grad_fn.next_functions[1][0] is y1.grad_fn.next_functions[1][0]
        with T.autocast("cpu"):
            y4 = T.mm(x, w)
        after_exit = y4.grad_fn.next_functions[1][0] is y1.grad_fn.next_functions[1][0]
        (y1.sum() + y2.sum() + y3.sum() + y4.sum()).backward()
        return same, fresh, after_exit, w.grad.dtype, w.grad.tolist()
    _same(f)


def test_training_step_under_autocast_as_torch():
    def f(T):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(4, 8), T.nn.ReLU(), T.nn.Linear(8, 3))
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        x, target = T.randn(5, 4), T.tensor([0, 1, 2, 1, 0])
        for _ in range(3):
            with T.autocast("cpu"):
                out = model(x)
                loss = T.nn.functional.cross_entropy(out, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return (out.dtype, loss.dtype, [p.grad.dtype for p in model.parameters()],
                [round(v, 2) for v in model[0].weight.flatten().tolist()], round(loss.item(), 2))
    _same(f)


def test_deprecated_spellings_as_torch():
    _same(lambda T: type(T.cpu.amp.autocast()).__mro__[1].__name__)
    _same(lambda T: type(T.cuda.amp.autocast()).__name__)
    _same(lambda T: (T.cuda.amp.GradScaler().is_enabled(), T.cpu.amp.GradScaler().is_enabled()))
    _same(lambda T: T.cuda.amp.custom_fwd(lambda ctx, x: x).__name__)
    _same(lambda T: T.cuda.amp.custom_bwd(lambda ctx, x: x).__name__)

    def f(T):
        with T.cpu.amp.autocast(dtype=T.float16):
            return T.mm(T.ones(2, 2), T.ones(2, 2)).dtype
    _same(f)
    _same(lambda T: T.amp.custom_fwd(lambda x: x))
    _same(lambda T: T.amp.custom_fwd(device_type=T.device("cpu")))
    _same(lambda T: T.autocast is T.amp.autocast is T.amp.autocast_mode.autocast)


def _custom(T, cast_inputs):
    class MyMM(T.autograd.Function):
        @staticmethod
        @T.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a.mm(b), T.is_autocast_enabled("cpu")

        @staticmethod
        @T.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad, _):
            a, b = ctx.saved_tensors
            return grad.mm(b.t()), (T.is_autocast_enabled("cpu"), a.t().mm(grad))[1]
    return MyMM


@pytest.mark.parametrize("cast_inputs", [None, "float32"])
def test_custom_fwd_bwd_as_torch(cast_inputs):
    def f(T):
        a = T.ones(2, 3, requires_grad=True)
        b = T.full((3, 2), 0.5, requires_grad=True)
        fn = _custom(T, None if cast_inputs is None else getattr(T, cast_inputs))
        with T.autocast("cpu"):
            y, on = fn.apply(a, b)
        y.float().sum().backward()
        out_plain, on_plain = fn.apply(a, b)
        return y.dtype, on, a.grad.dtype, a.grad.tolist(), b.grad.tolist(), out_plain.dtype, on_plain
    _same(f)


def test_modules_import_through_the_torch_alias():
    from glassgrad._torch_alias import torch_alias
    with torch_alias():
        import torch.amp.autocast_mode as am
        import torch.amp.grad_scaler as gs
        import torch.cuda.amp as cam
        import torch.cpu.amp as pam
        import torch.accelerator as acc
    assert am.autocast is glassgrad.autocast and gs.GradScaler is glassgrad.amp.GradScaler
    assert issubclass(cam.GradScaler, gs.GradScaler) and issubclass(pam.autocast, am.autocast)
    assert acc.is_available() is torch.accelerator.is_available()


def test_an_amp_training_script_runs_unchanged_through_glassgrad_run(tmp_path):
    """A CPU mixed-precision training script (torch.amp / torch.cuda.amp / torch.accelerator imports, autocast,
    GradScaler) run by `glassgrad run` (torch served by glassgrad) and by python with torch: the same output."""
    import subprocess
    import sys
    script = tmp_path / "amp_train.py"
    script.write_text(
        "import warnings\nwarnings.simplefilter('ignore')\n"
        "import torch\nimport torch.nn as nn\nfrom torch.amp import autocast, GradScaler\n"
        "import torch.cuda.amp\nimport torch.accelerator\n"
        "device = torch.accelerator.current_accelerator() or torch.device('cpu')\n"
        "torch.manual_seed(0)\nmodel = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nscaler = GradScaler(device.type)\n"
        "x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))\n"
        "for step in range(5):\n"
        "    opt.zero_grad()\n"
        "    with autocast(device.type, dtype=torch.bfloat16):\n"
        "        out = model(x)\n        loss = nn.functional.cross_entropy(out, y)\n"
        "    scaler.scale(loss).backward()\n    scaler.step(opt)\n    scaler.update()\n"
        "print(device, out.dtype, loss.dtype, torch.cuda.is_available(), scaler.get_scale(), round(loss.item(), 1))\n")
    outs = []
    for cmd in ([sys.executable, "-m", "glassgrad", "run", str(script)], [sys.executable, str(script)]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1]
    assert outs[0].startswith("cpu torch.bfloat16 torch.float32 False 65536.0")


def test_cuda_autocast_flag_leaves_cpu_tensors_alone_as_torch():
    def f(T):
        a = T.ones(2, 2)
        T.set_autocast_enabled("cuda", True)
        try:
            return T.mm(a, a).dtype, T.cat([a, a.bfloat16()]).dtype, T.nn.functional.mse_loss(a.bfloat16(), a).dtype
        finally:
            T.set_autocast_enabled("cuda", False)
    _same(f)


def test_backward_inside_autocast_as_torch():
    """Backward run inside the region: with create_graph the backward's own products are autocast (torch casts
    them too: their grad_fn is a ToCopyBackward0), gradients reach float32 leaves in float32."""
    def f(T):
        T.manual_seed(0)
        a, b = T.randn(3, 3, requires_grad=True), T.randn(3, 3, requires_grad=True)
        y = T.mm(a, b).sum()
        out = []
        with T.autocast("cpu"):
            g, = T.autograd.grad(y, a, create_graph=True)
            out.append((g.dtype, type(g.grad_fn).__name__, [round(v, 2) for v in g.flatten().tolist()]))
            z = T.mm(a, b)
            gz, = T.autograd.grad(z.float().sum(), b, create_graph=True)
            gz.sum().backward()
            out.append((gz.dtype, type(gz.grad_fn).__name__, a.grad.dtype, a.grad.tolist()))
        return out
    _same(f)
