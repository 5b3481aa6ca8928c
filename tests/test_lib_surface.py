"""Surface that real third-party libraries touch (einops, torchmetrics, vector-quantize-pytorch, ...), each
exercised the way the library uses it, against torch.  None of the libraries is needed here."""
import warnings

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


@pytest.fixture
def world1(tmp_path):
    tdist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rdv'}", rank=0, world_size=1)
    gdist.init_process_group("gloo")
    yield
    tdist.destroy_process_group()
    gdist.destroy_process_group()


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
def test_distributed_nn_functional_world1(world1, name):
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
