"""nn.SyncBatchNorm: on 2 processes (mpiexec -n 2, _syncbn_worker.py) against one process running BatchNorm on the
global batch; in one process against torch (convert_sync_batchnorm, the BatchNorm fallback, errors); and the
synchronised op with the collectives simulated in one process against torch's batch_norm on the concatenated
batch."""

import numpy as np
import pytest
from _mpi_job import mpi_job
import torch

import glassgrad
import glassgrad.distributed as gdist
from glassgrad.ops.sync_batch_norm import sync_batch_norm



def test_syncbn_on_two_processes_matches_batchnorm_on_the_global_batch():
    """DDP + SyncBatchNorm (conv and linear model, 4 + 4 and 3 + 5 rows, 3 SGD-momentum steps, momentum=None
    on one layer, an explicit process group), a rank with no rows, groups of one rank: within rtol 1e-5 of
    one process (the worker checks and aborts the job on a difference)."""
    code, out, _ = mpi_job("_syncbn_worker.py")
    assert code == 0, out
    assert out.count("SyncBatchNorm matches one process on the global batch") == 2, out


def _model(nn):
    inner = nn.Sequential(nn.Conv3d(2, 3, 1), nn.BatchNorm3d(3, affine=False), nn.BatchNorm3d(3, momentum=None))
    return nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5, eps=1e-3, track_running_stats=False), nn.ReLU(),
                         nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2, bias=False), nn.SyncBatchNorm(2), inner)


def _structure(m):
    return [(name, type(mod).__name__) for name, mod in m.named_modules()]


def test_convert_sync_batchnorm_as_torch():
    tm, gm = _model(torch.nn), _model(glassgrad.nn)
    for m in (tm, gm):
        m[4].eval()
        m[4].weight.requires_grad_(False)
        m[1].qconfig = "q"
    told = {n: mod for n, mod in tm.named_modules()}
    gold = {n: mod for n, mod in gm.named_modules()}
    tc = torch.nn.SyncBatchNorm.convert_sync_batchnorm(tm)
    gc = glassgrad.nn.SyncBatchNorm.convert_sync_batchnorm(gm, process_group=None)
    assert (tc is tm) and (gc is gm)
    assert _structure(gc) == _structure(tc)
    assert [n for n, t in _structure(gc) if t == "SyncBatchNorm"] == ["1", "4", "5", "6.1", "6.2"]
    assert list(gc.state_dict()) == list(tc.state_dict())
    assert repr(gc) == repr(tc)
    for name, mod in gc.named_modules():
        tmod = dict(tc.named_modules())[name]
        assert mod.training == tmod.training, name
        assert getattr(mod, "qconfig", None) == getattr(tmod, "qconfig", None), name
        if type(mod).__name__ != "SyncBatchNorm":
            continue
        old, told_m = gold[name], told[name]
        assert mod is not old and tmod is not told_m          # a new module for each batch norm
        assert mod.process_group is None
        for attr in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
            assert (getattr(mod, attr) is getattr(old, attr)) == (getattr(tmod, attr) is getattr(told_m, attr))
            assert (getattr(mod, attr) is None) == (getattr(tmod, attr) is None), (name, attr)
        if mod.weight is not None:
            assert mod.weight.requires_grad == tmod.weight.requires_grad
    # a bare batch norm gives a new module, with the group
    group = object()
    bn = glassgrad.nn.BatchNorm1d(3)
    out = glassgrad.nn.SyncBatchNorm.convert_sync_batchnorm(bn, group)
    assert out is not bn and out.process_group is group and out.weight is bn.weight


def _pair(cls_args, kwargs, seed=0):
    tm = torch.nn.SyncBatchNorm(*cls_args, **kwargs)
    gm = glassgrad.nn.SyncBatchNorm(*cls_args, **kwargs)
    g = np.random.default_rng(seed)
    if tm.weight is not None:
        with torch.no_grad():
            tm.weight.copy_(torch.from_numpy(g.standard_normal(cls_args[0]).astype(np.float32)))
        gm.weight.data = glassgrad.tensor(tm.weight.detach().numpy())
    if tm.bias is not None:
        with torch.no_grad():
            tm.bias.copy_(torch.from_numpy(g.standard_normal(cls_args[0]).astype(np.float32)))
        gm.bias.data = glassgrad.tensor(tm.bias.detach().numpy())
    return tm, gm


def _close(a, b, what):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 5), (2, 3, 2, 3, 4)])
@pytest.mark.parametrize("kwargs", [{}, {"momentum": None}, {"affine": False}, {"track_running_stats": False},
                                    {"eps": 1e-2, "bias": False}])
def test_without_a_process_group_it_is_torchs_batchnorm(shape, kwargs):
    """Forward / backward values, parameter gradients and running statistics over 3 training steps and an eval
    step, float32, within rtol 1e-5 / atol 1e-6 of torch (which falls back to F.batch_norm too)."""
    tm, gm = _pair((3,), kwargs)
    g = np.random.default_rng(1)
    for step in range(4):
        if step == 3:
            tm.eval()
            gm.eval()
        x = g.standard_normal(shape).astype(np.float32) * 2 + 1
        w = g.standard_normal(shape).astype(np.float32)
        tx, gx = torch.tensor(x, requires_grad=True), glassgrad.tensor(x, requires_grad=True)
        to, go = tm(tx), gm(gx)
        assert type(go.grad_fn).__name__ == type(to.grad_fn).__name__ == "NativeBatchNormBackward0"
        (to * torch.tensor(w)).sum().backward()
        (go * glassgrad.tensor(w)).sum().backward()
        _close(go, to, f"output, step {step}")
        _close(gx.grad, tx.grad, f"input grad, step {step}")
        for name, tp in tm.named_parameters():
            _close(getattr(gm, name).grad, tp.grad, f"{name} grad, step {step}")
            tp.grad = None
            getattr(gm, name).grad = None
        assert list(gm.state_dict()) == list(tm.state_dict())
        for name, tb in tm.state_dict().items():
            _close(gm.state_dict()[name], tb, f"{name}, step {step}")


@pytest.mark.parametrize("x,training", [((3,), True), ((3,), False), ((), True), ((4, 0), True), ((4, 0, 2), False),
                                        ((1, 3), True), ((1, 3, 1), True)])
def test_input_errors_as_torch(x, training):
    tm, gm = torch.nn.SyncBatchNorm(3), glassgrad.nn.SyncBatchNorm(3)
    tm.train(training)
    gm.train(training)
    with pytest.raises(Exception) as te:
        tm(torch.zeros(x))
    with pytest.raises(Exception) as ge:
        gm(glassgrad.zeros(x))
    assert type(ge.value) is type(te.value)
    assert str(ge.value) == str(te.value)


def test_constructor_and_surface_as_torch():
    kw = dict(eps=1e-3, momentum=0.3, affine=True, track_running_stats=True, process_group=None,
              dtype=torch.float64)
    tm = torch.nn.SyncBatchNorm(4, **kw)
    gm = glassgrad.nn.SyncBatchNorm(4, **{**kw, "dtype": glassgrad.float64})
    for attr in ("num_features", "eps", "momentum", "affine", "track_running_stats", "process_group", "_version"):
        assert getattr(gm, attr) == getattr(tm, attr), attr
    assert gm.weight.dtype == glassgrad.float64 and gm.running_mean.dtype == glassgrad.float64
    assert repr(gm) == repr(tm)
    assert isinstance(gm, glassgrad.nn.modules.batchnorm._BatchNorm)
    assert glassgrad.nn.SyncBatchNorm is glassgrad.nn.modules.SyncBatchNorm
    assert "SyncBatchNorm" in glassgrad.nn.modules.__all__


def test_cpu_with_a_process_group_departs_from_torch(tmp_path):
    """Documented departure: with a process group (of one process here) torch refuses a CPU input; glassgrad
    runs (a world of one: BatchNorm's result)."""
    import torch.distributed as tdist
    tdist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rdv'}", rank=0, world_size=1)
    gdist.init_process_group("gloo")
    try:
        x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
        with pytest.raises(ValueError, match="SyncBatchNorm expected input tensor to be on GPU"):
            torch.nn.SyncBatchNorm(3)(torch.tensor(x))
        assert "Departure from torch" in glassgrad.nn.SyncBatchNorm.__doc__
        out = glassgrad.nn.SyncBatchNorm(3)(glassgrad.tensor(x))
        _close(out, torch.nn.BatchNorm1d(3)(torch.tensor(x)), "world of one")
    finally:
        tdist.destroy_process_group()
        gdist.destroy_process_group()


# -- the op with the collectives simulated: every rank run in turn, twice ----------------------------------
def _simulated_ranks(parts, weight, bias, rms, rvs, gys, momentum):
    """sync_batch_norm on each rank's part, the gather / all-reduce served from a first pass that records each
    rank's contribution; returns the second pass's outputs and input / weight / bias gradients."""
    sent = {"gather": {}, "sum": {}}
    ranks = range(len(parts))

    def run(gathered, summed):
        """One pass over the ranks; `gathered` / `summed`: serve every rank's recorded contribution (else a
        world of one, recording this rank's)."""
        outs = []
        for k, (x, gy) in enumerate(zip(parts, gys)):
            def gather(local, k=k):
                sent["gather"][k] = local
                return np.stack([sent["gather"][j] for j in ranks]) if gathered else local[None]

            def all_sum(local, k=k):
                if summed:
                    return sum(sent["sum"][j] for j in ranks)
                sent["sum"][k] = local
                return local
            xi = glassgrad.tensor(x, requires_grad=True)
            w, b = (glassgrad.tensor(t, requires_grad=True) for t in (weight, bias))
            rm, rv = glassgrad.tensor(rms[k]), glassgrad.tensor(rvs[k])
            y = sync_batch_norm(xi, w, b, rm, rv, 1e-5, momentum, gather, all_sum)
            assert type(y.grad_fn).__name__ == "SyncBatchNormBackward"
            assert len(y.grad_fn.next_functions) == 5
            y.backward(glassgrad.tensor(gy))
            outs.append((y, xi, w, b, rm, rv))
        return outs

    run(False, False)                   # records each rank's statistics
    run(True, False)                    # records each rank's gradient sums (an empty rank sends zeros)
    return run(True, True)


@pytest.mark.parametrize("shape,rows", [((3,), (2, 0, 5)), ((3, 4), (1, 3)), ((3, 2, 3), (4, 1, 2)),
                                        ((3, 2, 2, 3), (2, 3))])
def test_sync_op_equals_torch_batch_norm_on_the_concatenated_batch(shape, rows):
    """float64, rtol 1e-10: outputs, input gradients, the sum of the ranks' weight / bias gradients and every
    rank's running statistics against torch.nn.functional.batch_norm on the concatenation (2D to 5D inputs,
    unequal ranks, an empty one)."""
    g = np.random.default_rng(2)
    parts = [g.standard_normal((n,) + shape) * 3 + 1 for n in rows]
    gys = [g.standard_normal(p.shape) for p in parts]
    weight, bias = g.standard_normal(shape[0]), g.standard_normal(shape[0])
    rm0, rv0 = g.standard_normal(shape[0]), g.random(shape[0]) + 0.5
    outs = _simulated_ranks(parts, weight, bias, [rm0] * len(rows), [rv0] * len(rows), gys, 0.3)
    tx = torch.tensor(np.concatenate(parts), requires_grad=True)
    tw, tb = torch.tensor(weight, requires_grad=True), torch.tensor(bias, requires_grad=True)
    trm, trv = torch.tensor(rm0), torch.tensor(rv0)
    ty = torch.nn.functional.batch_norm(tx, trm, trv, tw, tb, True, 0.3, 1e-5)
    ty.backward(torch.tensor(np.concatenate(gys)))
    cuts = np.cumsum((0,) + rows)
    tol = dict(rtol=1e-10, atol=1e-12)
    for k, (y, xi, w, b, rm, rv) in enumerate(outs):
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy()[cuts[k]:cuts[k + 1]], **tol)
        if rows[k]:
            np.testing.assert_allclose(xi.grad.numpy(), tx.grad.numpy()[cuts[k]:cuts[k + 1]], **tol)
        else:
            assert xi.grad is None
        np.testing.assert_allclose(rm.numpy(), trm.numpy(), **tol)
        np.testing.assert_allclose(rv.numpy(), trv.numpy(), **tol)
    gw = sum(o[2].grad.numpy() for o in outs if o[2].grad is not None)
    gb = sum(o[3].grad.numpy() for o in outs if o[3].grad is not None)
    np.testing.assert_allclose(gw, tw.grad.numpy(), **tol)
    np.testing.assert_allclose(gb, tb.grad.numpy(), **tol)


def test_sync_op_refuses_double_backward():
    x = glassgrad.randn(4, 2, requires_grad=True)
    y = sync_batch_norm(x, None, None, None, None, 1e-5, 0.1, lambda a: np.stack([a, a]), lambda a: 2 * a)
    with pytest.raises(RuntimeError, match="double backward"):
        glassgrad.autograd.grad(y.sum(), x, create_graph=True)
