"""Run by tests/distributed/test_syncbn.py under ``mpiexec -n 2``: a conv/linear model whose BatchNorm layers
are converted to SyncBatchNorm, wrapped in DistributedDataParallel, trains on 2 ranks with the global batch
split (4 + 4 rows, then 3 + 5 rows) against one process training the unconverted model (BatchNorm) on the
concatenated global batch: outputs, input gradients, parameter gradients, parameters, running_mean /
running_var and num_batches_tracked agree (rtol 1e-5) over 3 SGD steps, and in eval mode.  Then a rank with
an empty batch, and a process group of one rank (BatchNorm's results)."""
import copy

import numpy as np

import glassgrad as torch
import glassgrad.distributed as dist
from glassgrad.nn.parallel import DistributedDataParallel as DDP

W = 2
GLOBAL = 8


def close(name, a, b):
    a, b = a.detach().numpy(), b.detach().numpy()
    if a.shape != b.shape or not np.allclose(a, b, rtol=1e-5, atol=1e-6):
        diff = np.abs(a - b).max() if a.shape == b.shape else f"shapes {a.shape} {b.shape}"
        raise AssertionError(f"rank {dist.get_rank()}: {name}: max diff {diff}")


def net():
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                         nn.Linear(4 * 5 * 5, 6), nn.BatchNorm1d(6, momentum=None), nn.Tanh(), nn.Linear(6, 1))


def check_state(tag, model, ref):
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        close(f"{tag} {name}", p, q)
        close(f"{tag} {name}.grad", p.grad, q.grad)
    for (name, b), c in zip(model.named_buffers(), ref.buffers()):
        close(f"{tag} {name}", b, c)
        if name.endswith("num_batches_tracked") and int(b) != int(c):
            raise AssertionError(f"{tag} {name}: {int(b)} != {int(c)}")


def train(sizes, group):
    """3 SGD steps of DDP(SyncBatchNorm model) on this rank's rows against one process on all rows."""
    r = dist.get_rank()
    torch.manual_seed(0)
    base = net()
    ref = copy.deepcopy(base)
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(copy.deepcopy(base), group)
    kinds = [type(m).__name__ for m in model]
    assert kinds[1] == kinds[5] == "SyncBatchNorm" and model[1].process_group is group, kinds
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ropt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    X, Y = torch.randn(3 * GLOBAL, 3, 5, 5, generator=g), torch.randn(3 * GLOBAL, 1, generator=g)
    start = sum(sizes[:r])
    for step in range(3):
        rows = list(range(GLOBAL * step, GLOBAL * step + GLOBAL))
        local = rows[start:start + sizes[r]]
        # each rank's loss is its share of the global mean scaled by W: DDP's average of the parameter
        # gradients is then the global mean's, and the input gradient W times the global mean's
        xl = X[local].clone().requires_grad_()
        out = ddp(xl)
        opt.zero_grad()
        ((out - Y[local]) ** 2).sum().mul(W / GLOBAL).backward()
        xg = X[rows].clone().requires_grad_()
        rout = ref(xg)
        ropt.zero_grad()
        ((rout - Y[rows]) ** 2).sum().div(GLOBAL).backward()
        tag = f"split {sizes} step {step}"
        assert type(out.grad_fn).__name__ == "AddmmBackward0"
        close(f"{tag} output", out, rout[start:start + sizes[r]])
        close(f"{tag} input grad", xl.grad, xg.grad[start:start + sizes[r]] * W)
        check_state(tag, model, ref)
        opt.step()
        ropt.step()
    check_state(f"split {sizes} after the steps", model, ref)
    model.eval()
    ref.eval()
    close(f"split {sizes} eval output", ddp(X[:5]), ref(X[:5]))


def empty_rank():
    """Rank 1 holds no rows: rank 0 normalises with its own batch's statistics, both ranks update the running
    statistics alike, and the backward's all-reduce still meets."""
    r = dist.get_rank()
    torch.manual_seed(3)
    bn, ref = torch.nn.SyncBatchNorm(3), torch.nn.BatchNorm1d(3)
    ref.load_state_dict(bn.state_dict())
    x = torch.randn(6, 3, 4)
    xl = (x if r == 0 else x[:0]).clone().requires_grad_()
    out = bn(xl)
    assert type(out.grad_fn).__name__ == "SyncBatchNormBackward", type(out.grad_fn).__name__
    assert len(out.grad_fn.next_functions) == 5
    (out * torch.arange(out.numel()).reshape(out.shape)).sum().backward()
    xg = x.clone().requires_grad_()
    rout = ref(xg)
    (rout * torch.arange(rout.numel()).reshape(rout.shape)).sum().backward()
    if r == 0:
        close("empty rank: output", out, rout)
        close("empty rank: input grad", xl.grad, xg.grad)
    else:
        assert out.shape == (0, 3, 4) and xl.grad is None    # torch's Function returns no gradient there
    close("empty rank: running_mean", bn.running_mean, ref.running_mean)
    close("empty rank: running_var", bn.running_var, ref.running_var)


def own_group():
    """A process group of one rank each: SyncBatchNorm is BatchNorm on the local batch."""
    groups = [dist.new_group([0]), dist.new_group([1])]
    mine = groups[dist.get_rank()]
    torch.manual_seed(4)
    bn = torch.nn.SyncBatchNorm(2, process_group=mine)
    ref = torch.nn.BatchNorm1d(2)
    x = torch.randn(5, 2) + dist.get_rank()
    out = bn(x)
    close("own group output", out, ref(x))
    close("own group running_var", bn.running_var, ref.running_var)


def main():
    dist.init_process_group("gloo")
    r = dist.get_rank()
    assert dist.get_world_size() == W
    train([4, 4], None)
    train([3, 5], dist.new_group([0, 1]))
    empty_rank()
    own_group()
    dist.destroy_process_group()
    print(f"rank {r}: SyncBatchNorm matches one process on the global batch", flush=True)


if __name__ == "__main__":
    main()          # an error ends the job with its traceback (init_process_group's hook)
