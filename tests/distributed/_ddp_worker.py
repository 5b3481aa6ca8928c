"""Run by tests/distributed/test_ddp.py under ``mpiexec -n 2``: DistributedDataParallel on 2 ranks against one
process training the same model on the global batch (rtol 1e-5), with no_sync, unused parameters and
DistributedSampler."""
import copy

import numpy as np

import glassgrad as torch
import glassgrad.distributed as dist
from glassgrad.nn.parallel import DistributedDataParallel as DDP
from glassgrad.utils.data import DistributedSampler


def close(name, a, b):
    a, b = a.detach().numpy(), b.detach().numpy()
    if not np.allclose(a, b, rtol=1e-5, atol=1e-6):
        raise AssertionError(f"rank {dist.get_rank()}: {name}: max diff {np.abs(a - b).max()}")


def net():
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))


def main():
    dist.init_process_group("gloo")
    r = dist.get_rank()
    assert dist.get_world_size() == 2
    torch.manual_seed(0)
    model = net()
    ref = copy.deepcopy(model)
    if r == 1:                               # DDP must broadcast rank 0's parameters
        with torch.no_grad():
            for p in model.parameters():
                p.add_(1.0)
    ddp = DDP(model, bucket_cap_mb=0.0003)  # several buckets
    assert len(ddp._buckets) > 1
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        close("broadcast " + name, p, q)
    assert list(ddp.state_dict())[0] == "module.0.weight"

    g = torch.Generator().manual_seed(1)
    X, Y = torch.randn(40, 8, generator=g), torch.randn(40, 1, generator=g)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ropt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    sampler = DistributedSampler(range(40), shuffle=False)
    mine = list(sampler)
    assert mine == list(range(r, 40, 2)), mine
    for step in range(5):
        rows = list(range(8 * step, 8 * step + 8))
        local = rows[4 * r:4 * r + 4]
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(X[local]), Y[local]).backward()
        opt.step()
        ropt.zero_grad()
        torch.nn.functional.mse_loss(ref(X[rows]), Y[rows]).backward()
        ropt.step()
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        close("after 5 steps " + name, p, q)

    # gradient accumulation: no_sync for the first micro-batch, the second one synchronises the sum
    opt.zero_grad()
    ropt.zero_grad()
    with ddp.no_sync():
        torch.nn.functional.mse_loss(ddp(X[4 * r:4 * r + 4]), Y[4 * r:4 * r + 4]).backward()
    torch.nn.functional.mse_loss(ddp(X[8 + 4 * r:12 + 4 * r]), Y[8 + 4 * r:12 + 4 * r]).backward()
    (torch.nn.functional.mse_loss(ref(X[0:8]), Y[0:8]) + torch.nn.functional.mse_loss(ref(X[8:16]), Y[8:16])).backward()
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        close("no_sync grad " + name, p.grad, q.grad)

    # a parameter the forward does not use: find_unused_parameters lets backward finish
    torch.manual_seed(2)
    two = UsesOne()
    full = copy.deepcopy(two)
    ddp2 = DDP(two, find_unused_parameters=True)
    for _ in range(2):
        ddp2.zero_grad()
        torch.nn.functional.mse_loss(ddp2(X[4 * r:4 * r + 4]), Y[4 * r:4 * r + 4]).backward()
        assert two.unused.weight.grad is None
    full.zero_grad()
    torch.nn.functional.mse_loss(full(X[0:8]), Y[0:8]).backward()
    close("unused model grad", two.used.weight.grad, full.used.weight.grad)
    dist.destroy_process_group()
    print(f"rank {r}: DDP matches one process on the global batch", flush=True)


class UsesOne(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.used = torch.nn.Linear(8, 1)
        self.unused = torch.nn.Linear(8, 1)

    def forward(self, x):
        return self.used(x)


if __name__ == "__main__":
    main()          # an error ends the job with its traceback (init_process_group's hook)
