"""One data-parallel training program, run unchanged by torch (torchrun) and by glassgrad (glassgrad run):

    torchrun --nproc-per-node 2 bench/ddp_program.py OUT_PREFIX [--dtype float64] [--sync-bn] [--single]
    glassgrad run --nproc-per-node 2 bench/ddp_program.py OUT_PREFIX ...

A small conv net with BatchNorm under DistributedDataParallel (gloo), SGD with momentum and weight decay,
DistributedSampler with shuffling over 3 epochs.  Each rank writes OUT_PREFIX.rank<R>.json: its per-step
losses, and at the end every parameter and buffer (running stats as each rank holds them: DDP broadcasts
rank 0's buffers before each forward).  ``--sync-bn`` converts the BatchNorm to SyncBatchNorm, ``--no-bn`` leaves it out; ``--single``
runs one process on the global batch with no DDP (the reference for a model whose gradient does not depend
on how the batch is split).  bench/ddp_compare.py runs the variants and compares the files.
"""
import json
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

GLOBAL_BATCH, SAMPLES, EPOCHS = 16, 64, 3


def model(bn=True):
    norm = nn.BatchNorm2d if bn else (lambda c: nn.Identity())
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), norm(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 8, 3, padding=1), norm(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(8, 4))


def batches(data, rank, world, epoch, single):
    """This rank's batches of the epoch (DistributedSampler, shuffled); with `single`, the global batches: each
    the concatenation of every rank's batch at that step, so one process sees what the ranks see together."""
    ranks = range(world) if single else [rank]
    loaders = []
    for r in ranks:
        sampler = DistributedSampler(data, num_replicas=world, rank=r, shuffle=True, seed=3)
        sampler.set_epoch(epoch)
        loaders.append(DataLoader(data, batch_size=GLOBAL_BATCH // world, sampler=sampler))
    for parts in zip(*loaders):
        yield torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])


def main():
    prefix, flags = sys.argv[1], sys.argv[2:]
    torch.set_num_threads(1)
    if "--dtype" in flags:
        torch.set_default_dtype(getattr(torch, flags[flags.index("--dtype") + 1]))
    single = "--single" in flags
    if not single:
        dist.init_process_group("gloo")
    rank, world = (0, 1) if single else (dist.get_rank(), dist.get_world_size())
    torch.manual_seed(0)
    net = model(bn="--no-bn" not in flags)
    if "--sync-bn" in flags:
        net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    g = torch.Generator().manual_seed(1)
    data = TensorDataset(torch.randn(SAMPLES, 3, 8, 8, generator=g), torch.randint(0, 4, (SAMPLES,), generator=g))
    train = net if single else nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(train.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    losses = []
    for epoch in range(EPOCHS):
        for x, y in batches(data, rank, 2, epoch, single):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(train(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    state = {k: v.double().flatten().tolist() for k, v in net.state_dict().items()}
    with open(f"{prefix}.rank{rank}.json", "w") as f:
        json.dump({"losses": losses, "state": state}, f)
    if not single:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
