"""torch.func.vmap (a per-sample loop here), functional_call, stack_module_state, functionalize and
replace_all_batch_norm_modules_ against torch.func: values, in_dims / out_dims, randomness, the per-sample
gradient and model-ensembling recipes, errors."""
import numpy as np
import pytest

import glassgrad as gg

import torch

from test_func_transforms import _both, _err


def _X(T):
    return T.tensor(np.arange(24.0).reshape(2, 3, 4) / 7 - 1.0, dtype=T.float64)


@pytest.mark.parametrize("in_dims,out_dims", [(0, 0), (1, 0), (2, 1), (-1, -1), (1, 2), (0, -2)])
def test_vmap_in_out_dims(in_dims, out_dims):
    _both(lambda T: T.func.vmap(lambda a: T.tanh(a) * a.sum(), in_dims=in_dims, out_dims=out_dims)(_X(T)))


def test_vmap_none_in_dims_kwargs_and_pytree_inputs():
    def run(T):
        x = _X(T)
        w = T.tensor([0.5, -1.0, 2.0, 0.25], dtype=T.float64)
        f = lambda d, v, *, scale: {"y": (d["a"] @ v) * scale, "z": (d["b"][0][:2] + 1,)}   # noqa: E731
        return T.func.vmap(f, in_dims=({"a": 0, "b": (2,)}, None))({"a": x, "b": (x.transpose(0, 2),)}, w, scale=3.0)
    _both(run)


def test_vmap_nested_and_out_dims_tuple():
    def run(T):
        x = _X(T)
        inner = T.func.vmap(lambda a, b: (a * b, a.sum()), in_dims=(0, None), out_dims=(1, 0))
        return T.func.vmap(inner, in_dims=(2, None), out_dims=(0, 1))(x, T.tensor(2.0, dtype=T.float64))
    _both(run)


def test_vmap_unbatched_output_broadcast_and_out_dims_none():
    def run(T):
        x, c = _X(T), T.tensor([1.0, 2.0], dtype=T.float64)
        return (T.func.vmap(lambda a: c)(x), T.func.vmap(lambda a: (a * 2, c), out_dims=(0, None))(x))
    _both(run)


def test_vmap_gradient_flows_to_batched_input():
    def run(T):
        x = _X(T).requires_grad_()
        y = T.func.vmap(lambda a: (a.sin() * a).sum(0), in_dims=1)(x)
        (y * y).sum().backward()
        return y, x.grad
    _both(run)


def test_vmap_chunk_size_and_batch_of_zero():
    _both(lambda T: T.func.vmap(lambda a: a.exp().sum(), chunk_size=1)(_X(T)))
    _both(lambda T: T.func.vmap(lambda a: a.exp().sum(0))(T.zeros(0, 3, dtype=T.float64)))


def test_torch_vmap_is_func_vmap():
    assert gg.vmap is gg.func.vmap
    _both(lambda T: T.vmap(T.trace)(_X(T)))


# -- randomness -----------------------------------------------------------------------------------
def test_randomness_same_draws_torch_values():
    def run(T):
        T.manual_seed(3)
        out = T.func.vmap(lambda a: a + T.rand(4, dtype=T.float64), randomness="same")(_X(T)[0])
        return out, T.rand(2, dtype=T.float64)       # the stream after vmap is torch's too
    _both(run)


def test_randomness_different_draws_differ_per_sample():
    gg.manual_seed(0)
    out = gg.func.vmap(lambda a: gg.rand(4), randomness="different")(_X(gg)[0])
    assert out.shape == (3, 4) and not bool((out[0] == out[1]).all())


def test_randomness_error_keeps_generator_state():
    gg.manual_seed(5)
    before = gg.get_rng_state()
    with pytest.raises(RuntimeError, match="randomness error mode"):
        gg.func.vmap(lambda a: a * gg.rand(1))(_X(gg)[0])
    assert bool((gg.get_rng_state() == before).all())


def test_dropout_under_vmap_randomness_error():
    _err(lambda T: T.func.vmap(lambda a: T.nn.functional.dropout(a, 0.5, training=True))(_X(T)))


# -- per-sample gradients and ensembling (torch.func's tutorials) ----------------------------------------
def _model(T, seed=0):
    T.manual_seed(seed)
    return T.nn.Sequential(T.nn.Linear(4, 5), T.nn.ReLU(), T.nn.Linear(5, 3)).double()


def test_per_sample_gradients_recipe():
    def run(T):
        model = _model(T)
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}
        T.manual_seed(1)
        data, targets = T.randn(6, 4, dtype=T.float64), T.randint(0, 3, (6,))

        def loss(p, b, x, t):
            out = T.func.functional_call(model, (p, b), (x.unsqueeze(0),))
            return T.nn.functional.cross_entropy(out, t.unsqueeze(0))
        per_sample = T.func.vmap(T.func.grad(loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
        # their mean is the ordinary gradient of the mean loss
        model.zero_grad()
        T.nn.functional.cross_entropy(model(data), targets).backward()
        return per_sample, {k: v.grad for k, v in model.named_parameters()}
    _both(run)
    per, full = run(gg)
    for k in full:
        np.testing.assert_allclose(per[k].mean(0).numpy(), full[k].numpy(), rtol=1e-10, atol=1e-12)


def test_model_ensembling_recipe():
    def run(T):
        models = [_model(T, s) for s in range(3)]
        params, buffers = T.func.stack_module_state(models)
        base = _model(T, 9).to("meta") if T is torch else _model(T, 9)
        x = T.linspace(-1, 1, 8, dtype=T.float64).reshape(2, 4)

        def call(p, b, data):
            return T.func.functional_call(base, (p, b), (data,))
        same_x = T.func.vmap(call, in_dims=(0, 0, None))(params, buffers, x)
        per_x = T.func.vmap(call)(params, buffers, T.stack([x, x * 2, -x]))
        return same_x, per_x, [p.requires_grad for p in params.values()], [p.is_leaf for p in params.values()]
    _both(run)


def test_stack_module_state_buffers_and_errors():
    _both(lambda T: T.func.stack_module_state([T.nn.BatchNorm1d(2), T.nn.BatchNorm1d(2)]))
    _err(lambda T: T.func.stack_module_state([]))
    _err(lambda T: T.func.stack_module_state([T.nn.Linear(2, 2), T.nn.ReLU()]))
    _err(lambda T: T.func.stack_module_state([T.nn.Linear(2, 2), T.nn.Linear(2, 2).eval()]))

    def mixed(T):
        a, b = T.nn.Linear(2, 2), T.nn.Linear(2, 2)
        b.weight.requires_grad_(False)
        return T.func.stack_module_state([a, b])
    _err(mixed)


def test_functional_call_dicts_tie_weights_strict():
    def run(T):
        T.manual_seed(0)
        lin = T.nn.Linear(2, 2).double()
        w = T.full((2, 2), 0.5, dtype=T.float64)
        x = T.tensor([1.0, -2.0], dtype=T.float64)
        return (T.func.functional_call(lin, {"weight": w}, (x,)),
                T.func.functional_call(lin, ({"weight": w}, {"bias": T.ones(2, dtype=T.float64)}), x),
                T.func.functional_call(lin, [{"weight": w}], args=(), kwargs={"input": x}))
    _both(run)
    _err(lambda T: T.func.functional_call(T.nn.Linear(2, 2), ({"weight": T.ones(2, 2)}, {"weight": T.ones(2, 2)}),
                                          (T.ones(2),)))
    _err(lambda T: T.func.functional_call(T.nn.Linear(2, 2), 3, (T.ones(2),)))
    _err(lambda T: T.func.functional_call(T.nn.Linear(2, 2), [{"weight": T.ones(2, 2)}, 3], (T.ones(2),)))
    _err(lambda T: T.func.functional_call(T.nn.Linear(2, 2), {"weight": T.ones(2, 2)}, (T.ones(2),), strict=True))


def test_functional_call_tie_weights():
    def run(T):
        T.manual_seed(0)
        net = T.nn.Sequential(T.nn.Linear(2, 2, bias=False), T.nn.Linear(2, 2, bias=False)).double()
        net[1].weight = net[0].weight
        w = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64)
        x = T.tensor([0.5, -1.0], dtype=T.float64)
        return (T.func.functional_call(net, {"0.weight": w}, (x,)),
                T.func.functional_call(net, {"0.weight": w}, (x,), tie_weights=False))
    _both(run)
    _err(lambda T: T.func.functional_call(
        (lambda n: (setattr(n[1], "weight", n[0].weight), n)[1])(T.nn.Sequential(T.nn.Linear(2, 2), T.nn.Linear(2, 2))),
        {"0.weight": T.ones(2, 2), "1.weight": T.zeros(2, 2)}, (T.ones(2),)))


def test_replace_all_batch_norm_modules_():
    def run(T):
        net = T.nn.Sequential(T.nn.Linear(3, 3), T.nn.BatchNorm1d(3))
        T.func.replace_all_batch_norm_modules_(net)
        bn = net[1]
        return bn.running_mean is None, bn.running_var is None, bn.num_batches_tracked is None, bn.track_running_stats
    _both(run)


def test_functionalize_semantics():
    def f(x):
        y = x.view(2, 2)
        y.add_(1)
        z = x * 2
        z.mul_(3)
        return y, z, x

    def run(T):
        x = T.linspace(0, 1, 4, dtype=T.float64)
        y, z, out_x = T.func.functionalize(f)(x)
        x2 = T.linspace(0, 1, 4, dtype=T.float64)
        y2, _, _ = T.func.functionalize(f, remove="mutations_and_views")(x2)
        return (y, z, out_x, x, y2, x2, y.data_ptr() == x.data_ptr(), out_x is x,
                out_x.data_ptr() == x.data_ptr())
    _both(run)
    _err(lambda T: T.func.functionalize(f, remove="everything"))


# -- errors ------------------------------------------------------------------------------------------
def _id(a):
    return a


VMAP_ERRORS = [
    lambda T: T.func.vmap(lambda a, b: a * b)(T.ones(2, 3), T.ones(3, 3)),
    lambda T: T.func.vmap(_id, in_dims=2)(T.ones(2, 3)),
    lambda T: T.func.vmap(_id, in_dims=None)(T.ones(2, 3)),
    lambda T: T.func.vmap(_id, in_dims=[0])(T.ones(2)),
    lambda T: T.func.vmap(_id, in_dims="a")(T.ones(2)),
    lambda T: T.func.vmap(_id, in_dims=(1.5,))(T.ones(2)),
    lambda T: T.func.vmap(_id, in_dims=(None,))(T.ones(2)),
    lambda T: T.func.vmap(lambda a: 2)(T.ones(2, 3)),
    lambda T: T.func.vmap(_id, out_dims=None)(T.arange(6.0).reshape(2, 3)),
    lambda T: T.func.vmap(_id, out_dims=3)(T.ones(2, 3)),
    lambda T: T.func.vmap(_id, out_dims=1.5)(T.ones(2, 3)),
    lambda T: T.func.vmap(lambda a: T.rand(2))(T.ones(2, 3)),
    lambda T: T.func.vmap(_id, randomness="foo"),
    lambda T: T.func.vmap(_id)(),
    lambda T: T.func.vmap(_id)(3.0),
    lambda T: T.func.vmap(_id)(T.tensor(3.0)),
    lambda T: T.func.vmap(_id, in_dims=(1,))(T.ones(2)),
    lambda T: T.func.vmap(_id, chunk_size=0),
    lambda T: T.func.vmap(lambda a: (a, 1))(T.ones(2)),
]


@pytest.mark.parametrize("i", range(len(VMAP_ERRORS)))
def test_vmap_errors_as_torch(i):
    _err(VMAP_ERRORS[i])


def test_vmap_structure_errors_as_torch():
    _err(lambda T: T.func.vmap(_id, in_dims=(0, 0))(T.ones(2, 3)), exact=False)
    _err(lambda T: T.func.vmap(_id, out_dims=(0, 0))(T.ones(2)), exact=False)


def test_a_torch_func_script_runs_unchanged_through_glassgrad_run(tmp_path):
    """`import torch.func` / `torch.autograd.forward_ad` served by glassgrad (glassgrad run): torch's output."""
    import subprocess
    import sys
    script = tmp_path / "per_sample.py"
    script.write_text(
        "import torch\nimport torch.func\nfrom torch.func import vmap, grad, functional_call\n"
        "import torch.autograd.forward_ad as fwAD\n"
        "torch.manual_seed(0)\nnet = torch.nn.Linear(3, 1).double()\n"
        "params = {k: v.detach() for k, v in net.named_parameters()}\n"
        "x = torch.linspace(-1, 1, 12, dtype=torch.float64).reshape(4, 3)\n"
        "loss = lambda p, xi: functional_call(net, p, (xi,)).pow(2).sum()\n"
        "g = vmap(grad(loss), in_dims=(None, 0))(params, x)\n"
        "print(g['weight'].shape, round(float(g['bias'].sum()), 10), torch.vmap is torch.func.vmap)\n"
        "with fwAD.dual_level():\n"
        "    t = fwAD.unpack_dual(torch.sin(fwAD.make_dual(x, torch.ones_like(x)))).tangent\n"
        "print(round(float(t.sum()), 10))\n")
    outs = []
    for cmd in ([sys.executable, "-m", "glassgrad", "run", str(script)], [sys.executable, str(script)]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1] and outs[0].startswith("torch.Size([4, 1, 3])")


# -- the batched path (func/_batched.py): same values as torch, and it is the path that ran ------------------
def _W(T):
    return T.tensor([[0.5, -1.0], [2.0, 0.25], [1.5, -0.5]], dtype=T.float64)


BATCHED = [
    lambda T, a: (a.sin() * 2 + 1).exp() / (a * a + 1) - 3 ** a.tanh(),
    lambda T, a: (a.T @ _W(T)).relu().sum(0) + a.mean(),
    lambda T, a: a.softmax(-1) * a.log_softmax(0).amax(0, keepdim=True),
    lambda T, a: a[1:, None] * a[0] + a[..., -1:].sqrt().abs(),
    lambda T, a: a.reshape(12).view(3, 4).T.flatten() @ a.flatten(),
    lambda T, a: (a.unsqueeze(0).transpose(0, 2).squeeze(2) > 0.2, a.permute(1, 0).mT == a, 1 - a, a.maximum(a * 0)),
    lambda T, a: a.mm(a.mT).mv(a[:, 0]).dot(a[0, :3]),
    lambda T, a: (a * T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64)).amin(),
    lambda T, a: (a.clamp(-0.5, 0.5) + a.clip(max=0.1), a.logsumexp(1), a.var(0), a.std(correction=0), a.argmax(1),
                  a.argmin(-1, keepdim=True)),
    lambda T, a: (a.to(T.float32), a[0].expand(2, 4) * 1, a.masked_fill(a > 0.1, 2.0), a.unsqueeze(0).expand(5, -1, 4)),
]


@pytest.mark.parametrize("i", range(len(BATCHED)))
def test_batched_path_values(i):
    def run(T):
        return T.func.vmap(lambda a: BATCHED[i](T, a), in_dims=1)(_X(T).transpose(0, 1))
    _both(run, tol=1e-12)
    assert gg.func._vmap.last_path[0] == "batched"


def test_batched_path_gradients_out_dims_and_unbatched_outputs():
    def run(T):
        x = _X(T).requires_grad_()
        c = T.tensor([1.0, 2.0], dtype=T.float64)
        y, z, w = T.func.vmap(lambda a, b: ((a @ b).exp(), c, a.sum(0)), in_dims=(2, None), out_dims=(1, 0, -1))(
            x, T.ones(3, 2, dtype=T.float64))
        (y.sum() + (w * w).sum()).backward()
        return y, z, w, x.grad
    _both(run, tol=1e-12)
    assert gg.func._vmap.last_path[0] == "batched"


LOOPED = [      # no batching rule: the per-sample loop runs and gives torch's values
    lambda T, a: T.sin(a),
    lambda T, a: _W(T).T @ a[0, :3],
    lambda T, a: a * float(a.sum()) if a.sum() > 0 else -a,
    lambda T, a: a.cumsum(0),
    lambda T, a: (a.sum(dim=(0,)) * a[0].clone().mul_(2)),
]


@pytest.mark.parametrize("i", range(len(LOOPED)))
def test_fallback_to_the_loop(i):
    def run(T):
        return T.func.vmap(lambda a: LOOPED[i](T, a))(_X(T) if i != 2 else _X(T) - 0.3)
    if i == 2:      # data-dependent Python control flow: torch refuses, glassgrad's loop runs it per sample
        with pytest.raises(RuntimeError):
            run(torch)
        out = run(gg)
        ref = gg.stack([LOOPED[2](gg, s) for s in _X(gg) - 0.3])
        np.testing.assert_array_equal(out.numpy(), ref.numpy())
    else:
        _both(run, tol=1e-12)
    assert gg.func._vmap.last_path[0] == "loop"


def test_batched_randomness_same_and_different():
    def same(T):
        T.manual_seed(7)
        return T.func.vmap(lambda a: a + T.rand(4, dtype=T.float64), randomness="same")(_X(T)[0]), T.rand(1)
    _both(same)
    assert gg.func._vmap.last_path[0] == "batched"
    gg.manual_seed(7)
    out = gg.func.vmap(lambda a: a * 0 + gg.rand(4, dtype=gg.float64), randomness="different")(_X(gg)[0])
    assert gg.func._vmap.last_path[0] == "loop" and not bool((out[0] == out[1]).all())
