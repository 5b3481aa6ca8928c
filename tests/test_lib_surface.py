"""Surface that real third-party libraries touch (einops, torchmetrics, vector-quantize-pytorch, ...), each
exercised the way the library uses it, against torch.  None of the libraries is needed here."""
import warnings

import inspect

import pytest
import torch
import torch.distributed as tdist
import torch.distributed.nn as tdnn

import glassgrad
import glassgrad.distributed as gdist
import glassgrad.distributed.nn as gdnn


def _err(fn):
    try:
        fn()
    except Exception as e:              # noqa: BLE001 - the error is the answer compared
        return type(e).__name__, str(e)
    return None


def test_c_log_api_usage_once():
    """torchmetrics.Metric.__init__ calls torch._C._log_api_usage_once(str)."""
    assert glassgrad._C._log_api_usage_once("torchmetrics.metric.X") is torch._C._log_api_usage_once("x") is None
    assert _err(lambda: glassgrad._C._log_api_usage_once(1)) == _err(lambda: torch._C._log_api_usage_once(1))
    assert glassgrad._C._get_tracing_state() is torch._C._get_tracing_state() is None
    import importlib
    assert importlib.import_module("glassgrad._C") is glassgrad._C


def _run_dnn(T, d, dnn, case):
    T.manual_seed(0)
    x = T.randn(3, 2, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = case(T, d, dnn, x)
    outs = out if isinstance(out, tuple) else (out,)
    loss = sum(((o * (i + 2)) ** 2).sum() for i, o in enumerate(outs))
    loss.backward()
    return ([o.tolist() for o in outs], [type(o.grad_fn).__name__ for o in outs], x.grad.tolist(),
            [(c.category.__name__, str(c.message)) for c in w], x.tolist())


DNN_CASES = {
    "all_reduce": lambda T, d, dnn, x: dnn.all_reduce(x),
    "all_reduce_max": lambda T, d, dnn, x: dnn.all_reduce(x * 2, op=d.ReduceOp.MAX),
    "broadcast": lambda T, d, dnn, x: dnn.broadcast(x, 0),
    "reduce": lambda T, d, dnn, x: dnn.reduce(x, 0),
    "all_gather": lambda T, d, dnn, x: dnn.all_gather(x),
    "gather": lambda T, d, dnn, x: dnn.gather(x, 0),
    "scatter": lambda T, d, dnn, x: dnn.scatter([x], 0),
    "all_to_all": lambda T, d, dnn, x: dnn.all_to_all([T.zeros(3, 2)], [x]),
    "all_to_all_single": lambda T, d, dnn, x: dnn.all_to_all_single(T.zeros(3, 2), x),
    "reduce_scatter": lambda T, d, dnn, x: dnn.reduce_scatter(T.zeros(3, 2), [x]),
}


@pytest.mark.parametrize("name", sorted(DNN_CASES))
def test_distributed_nn_functional_world1(both_worlds_of_one, name):
    """torch.distributed.nn's differentiable collectives (vector-quantize-pytorch's LFQ imports
    `from torch.distributed import nn as dist_nn` and calls dist_nn.all_reduce): values, grad_fn names,
    gradients and the deprecation warnings, on a world of one."""
    case = DNN_CASES[name]
    assert _run_dnn(glassgrad, gdist, gdnn, case) == _run_dnn(torch, tdist, tdnn, case)


def test_distributed_nn_names():
    import torch.distributed.nn.functional as tf
    import glassgrad.distributed.nn.functional as gf
    assert sorted(n for n in dir(tf) if not n.startswith("_") and callable(getattr(tf, n))
                  and getattr(tf, n).__module__ == tf.__name__) == sorted(gf.__all__)
    assert gdnn.all_reduce is gf.all_reduce
    assert (gdnn.Function, gdnn.ReduceOp, gdnn.group) == (glassgrad.autograd.Function, gdist.ReduceOp, gdist.group)
    assert (tdnn.Function, tdnn.ReduceOp, tdnn.group) == (torch.autograd.Function, tdist.ReduceOp, tdist.group)


def test_incompatible_keys_importable_from_module():
    """lightning_fabric imports _IncompatibleKeys from torch.nn.modules.module."""
    from torch.nn.modules.module import _IncompatibleKeys as T
    from glassgrad.nn.modules.module import _IncompatibleKeys as G
    got = [(type(r) is K, repr(r), r.missing_keys, r.unexpected_keys, tuple.__repr__(K(["a"], ["b"])))
           for T_, K in ((torch, T), (glassgrad, G))
           for r in [T_.nn.Linear(2, 2).load_state_dict(T_.nn.Linear(2, 2).state_dict())]]
    assert got[0] == got[1]


def test_dynamo_optimized_module_name():
    """Lightning imports torch._dynamo.OptimizedModule to recognise a compiled module."""
    got = [(isinstance(T.compile(T.nn.Linear(2, 2)), T._dynamo.OptimizedModule),
            isinstance(T.nn.Linear(2, 2), T._dynamo.OptimizedModule), "OptimizedModule" in T._dynamo.__all__)
           for T in (torch, glassgrad)]
    assert got[0] == got[1]


def test_script_module_and_tensor_meta():
    """`from torch import ScriptModule` (lightning.core.module) and `from torch._C import _TensorMeta`
    (lightning_fabric.utilities.load): torch._C classes, with torch's answers for isinstance and construction."""
    def facts(T):
        class Meta(type):
            pass
        conflict = _err(lambda: Meta("Sub", (T.Tensor,), {}))
        return (T.ScriptModule.__module__, T.ScriptModule.__name__, T.ScriptModule is T.jit.ScriptModule,
                isinstance(T.jit.script(T.nn.Linear(2, 2)), T.ScriptModule), _err(T.ScriptModule)[0],
                type(T.Tensor) is T._C._TensorMeta, isinstance(T.nn.Parameter, T._C._TensorMeta),
                isinstance(int, T._C._TensorMeta), T._C._TensorMeta.__module__, T._C._TensorMeta.__name__,
                conflict[0], "metaclass conflict" in conflict[1])
    assert facts(glassgrad) == facts(torch)


def test_pytree_get_node_type():
    """pytorch_lightning.utilities._pytree imports _get_node_type: `namedtuple` for a namedtuple, else the type."""
    from collections import namedtuple
    from torch.utils._pytree import _get_node_type as tg
    from glassgrad.utils._pytree import _get_node_type as gg
    N = namedtuple("N", "a b")

    def names(T, g):
        return [getattr(g(x), "__name__", None) for x in
                ([1], (1,), {}, N(1, 2), 1, None, T.ones(1), T.max(T.ones(2, 2), 0))]
    assert names(glassgrad, gg) == names(torch, tg)
    assert gg(N(1, 2)) is namedtuple


def test_dataloader_iterator_class_names():
    """pytorch_lightning's CombinedLoader tests isinstance(it, _BaseDataLoaderIter / _MultiProcessingDataLoaderIter)."""
    def facts(T):
        dl = T.utils.data.dataloader
        it = iter(dl.DataLoader(T.utils.data.TensorDataset(T.arange(4.0)), batch_size=2))
        return (isinstance(it, dl._BaseDataLoaderIter), isinstance(it, dl._SingleProcessDataLoaderIter),
                isinstance(it, dl._MultiProcessingDataLoaderIter),
                issubclass(dl._MultiProcessingDataLoaderIter, dl._BaseDataLoaderIter),
                issubclass(dl._SingleProcessDataLoaderIter, dl._BaseDataLoaderIter),
                hasattr(dl._MultiProcessingDataLoaderIter, "_shutdown_workers"))
    assert facts(glassgrad) == facts(torch)


def test_get_default_group_uninitialised():
    """pytorch_lightning.overrides.distributed imports distributed_c10d._get_default_group."""
    assert (_err(gdist.distributed_c10d._get_default_group)
            == _err(tdist.distributed_c10d._get_default_group))


def test_get_default_group(both_worlds_of_one):
    got = [(d.get_rank(d.distributed_c10d._get_default_group()), d.get_world_size(d.distributed_c10d._get_default_group()),
            d.distributed_c10d._get_default_group() is d.group.WORLD) for d in (gdist, tdist)]
    assert got[0] == got[1]


def _parse_to_cases(T):
    return [(("cpu",), {}), ((T.float64,), {}), (("cpu", T.float16, True), {}), ((T.ones(2, dtype=T.int8),), {}),
            ((), dict(device="cpu", dtype=T.float32, non_blocking=False)), ((T.device("cpu"),), {}), ((), {}),
            (("cpu", "cpu"), {}), (("cpu",), {"foo": 1}), ((T.int64,), {"dtype": T.int8}), (("cpu", None), {}),
            ((None,), {}), ((T.float32, True, False), {}), (("cpu",), {"copy": True}),
            (("cpu", T.float32, False, True), {}), (("meta",), {}), (("cuda:1",), {}), (("cpu",), {"device": "cpu"}),
            ((T.ones(1),), {"device": "cpu"}), ((T.int64,), {"device": "cpu"}), (("cpu",), {"dtype": T.int8})]


def test_c_nn_parse_to():
    """lightning_fabric's DeviceDtypeModuleMixin.to calls torch._C._nn._parse_to(*args, **kwargs)."""
    def run(T):
        out = []
        for a, k in _parse_to_cases(T):
            r = _err(lambda: T._C._nn._parse_to(*a, **k)) or tuple(map(str, T._C._nn._parse_to(*a, **k)))
            out.append(r)
        return out
    assert run(glassgrad) == run(torch)


def test_tensor_to_keyword_conflicts():
    """Tensor.to / Module.to refuse a keyword that repeats the positional form (torch's TypeError)."""
    def run(T):
        return [_err(lambda: T.ones(1).to(*a, **k)) or str(T.ones(1).to(*a, **k).dtype)
                for a, k in _parse_to_cases(T) if "copy" not in k and len(a) < 3 and a[:1] != ("meta",)]
    assert run(glassgrad) == run(torch)


def _aliased(objs):
    """Names whose function is a _numpy_kwargs wrapper (glassgrad added axis= / keepdims= to it)."""
    return sorted(n for n, f in objs if inspect.isfunction(f) and getattr(f, "_numpy_kwargs", False) is True)


def _spellings(fn):
    """The NumPy spellings the wrapper `fn` takes: those whose torch parameter the wrapped function has."""
    params = inspect.signature(fn.__wrapped__).parameters
    return {a for a, c in (("axis", "dim"), ("keepdims", "keepdim")) if c in params and a not in params}


def test_numpy_names_only_where_torch_takes_them():
    """Every Tensor method and torch.* function glassgrad gives axis= / keepdims= takes them in torch too: torch's
    own refusal of a keyword says "unexpected keyword argument"; its parser's does not."""
    methods = _aliased((n, getattr(glassgrad.Tensor, n)) for n in dir(glassgrad.Tensor))
    funcs = _aliased((n, getattr(glassgrad, n)) for n in dir(glassgrad) if not n.startswith("_"))
    assert {"sum", "mean", "softmax", "cumsum", "max", "std", "unsqueeze"} <= set(methods)
    assert {"sum", "cat", "stack", "prod", "argmax"} <= set(funcs)
    refused = []
    for owner, mine, names in ((torch.ones(2, 2), glassgrad.Tensor, methods), (torch, glassgrad, funcs)):
        for n in names:
            for kw in _spellings(getattr(mine, n)):
                try:
                    getattr(owner, n)(**{kw: 0})
                except Exception as e:      # noqa: BLE001
                    if f"unexpected keyword argument '{kw}'" in str(e) and f"{kw}=" not in str(e):
                        refused.append((n, kw))
    assert refused == []


NP_CASES = [
    lambda T, t: T.sum(t, axis=0), lambda T, t: t.sum(axis=1, keepdims=True), lambda T, t: t.prod(axis=0),
    lambda T, t: T.prod(t, axis=1), lambda T, t: t.mean(axis=0), lambda T, t: T.cat([t, t], axis=1),
    lambda T, t: T.max(t, axis=1), lambda T, t: t.softmax(axis=0), lambda T, t: T.sum(t, dim=0, axis=0),
    lambda T, t: t.std(axis=0), lambda T, t: t.argmax(axis=1), lambda T, t: T.nn.functional.softmax(t, axis=0),
    lambda T, t: T.stack([t, t], axis=0), lambda T, t: T.squeeze(t[None], axis=0), lambda T, t: t.unsqueeze(axis=0),
    lambda T, t: T.sum(t, 0, keepdims=True), lambda T, t: t.sum(axis=(0, 1)), lambda T, t: T.norm(t, axis=0),
    lambda T, t: t.split(1, axis=0), lambda T, t: t.cumsum(axis=1), lambda T, t: t.logsumexp(axis=1),
    lambda T, t: T.cat([t, t], 1, out=T.empty(2, 6)), lambda T, t: t.amax(axis=0, keepdims=True),
    lambda T, t: t.sum(0, keepdim=True, keepdims=True), lambda T, t: t.cumsum(), lambda T, t: T.mean(t, axis=1, keepdims=True),
]


@pytest.mark.parametrize("k", range(len(NP_CASES)))
def test_numpy_keyword_names(k):
    """torchmetrics calls tensor.sum(axis=...) / prod(axis=...): torch's parser's NumPy names, as torch."""
    def run(T):
        t = T.arange(6.0).reshape(2, 3)
        try:
            r = NP_CASES[k](T, t)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, "unexpected keyword" in str(e)
        r = r if isinstance(r, tuple) else (r,)
        return [(x.shape, x.dtype.is_floating_point, x.double().sum().item()) for x in r]
    g, t = run(glassgrad), run(torch)
    if g and g[0] != "TypeError":
        assert [x[:2] for x in g] == [x[:2] for x in t]
        assert [x[2] for x in g] == pytest.approx([x[2] for x in t], rel=1e-6)
    else:
        assert g == t


def test_pytorch_file_reader(tmp_path):
    """lightning_fabric.utilities.load reads a checkpoint's data.pkl through torch.PyTorchFileReader."""
    path = str(tmp_path / "x.pt")
    torch.save({"a": torch.arange(3.0), "b": torch.ones(2, dtype=torch.int64)}, path)

    def facts(T):
        r = T.PyTorchFileReader(path)
        with open(path, "rb") as f:
            r2 = T.PyTorchFileReader(f)
            recs2 = r2.get_all_records()
        return (r.get_all_records(), recs2, r.has_record("data.pkl"), r.has_record("nope"), r.serialization_id(),
                r.get_record("data.pkl"), r.get_record("byteorder"), r.get_record_size("data/0"),
                r.get_record_offset("data/0"), r.get_record_offset("data.pkl"), r.get_record_header_offset("data/1"),
                _err(lambda: r.get_record("nope")), _err(lambda: r.get_record_size("nope")),
                _err(lambda: T.PyTorchFileReader(__file__)), _err(lambda: T.PyTorchFileReader(path + ".none")))
    assert facts(glassgrad) == facts(torch)
    assert glassgrad.load(path)["a"].tolist() == [0.0, 1.0, 2.0]


FOREACH_CASES = [
    lambda T, a, b: T._foreach_lerp_(a, b, 0.5), lambda T, a, b: T._foreach_lerp_(a, b, [0.5, 0.25]),
    lambda T, a, b: T._foreach_lerp_(a, b, b), lambda T, a, b: T._foreach_copy_(a, b),
    lambda T, a, b: T._foreach_lerp_(a, b[:1], 0.5), lambda T, a, b: T._foreach_copy_(a, b[:1]),
    lambda T, a, b: T._foreach_copy_(a, [T.ones(4), T.ones(3)]), lambda T, a, b: T._foreach_lerp_([], [], 0.5),
    lambda T, a, b: T._foreach_lerp_(a, b, "x"), lambda T, a, b: T._foreach_copy_([a[0]], [T.arange(2) * 7]),
    lambda T, a, b: T._foreach_copy_([a[0]], [T.ones(1) * 4]),
    lambda T, a, b: T._foreach_lerp_([T.ones(2, requires_grad=True)], [b[0]], 0.5),
]


@pytest.mark.parametrize("k", range(len(FOREACH_CASES)))
def test_foreach_lerp_copy(k):
    """ema-pytorch (use_foreach=True) checks hasattr(torch, '_foreach_lerp_') and calls it and _foreach_copy_."""
    def run(T):
        a, b = [T.ones(2), T.zeros(3)], [T.full((2,), 3.0), T.full((3,), 5.0)]
        e = _err(lambda: FOREACH_CASES[k](T, a, b))
        if e:
            return e[0], e[1].split(" - ")[0]
        r = FOREACH_CASES[k](T, [T.ones(2), T.zeros(3)], b)
        return [x.tolist() for x in r], [x.tolist() for x in a]
    assert run(glassgrad) == run(torch)


def test_foreach_lerp_keeps_graph():
    got = []
    for T in (glassgrad, torch):
        x = T.ones(2, requires_grad=True)
        y = x * 2
        T._foreach_lerp_([y], [T.zeros(2)], 0.25)
        y.sum().backward()
        got.append((type(y.grad_fn).__name__, x.grad.tolist()))
    assert got[0] == got[1]
