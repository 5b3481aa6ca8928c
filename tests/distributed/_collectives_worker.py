"""Run by tests/distributed/test_collectives.py under ``mpiexec -n 2``: every collective on 2 ranks, each
result checked against the value torch.distributed defines (exact: small integers in floating point)."""

import numpy as np

import glassgrad as torch
import glassgrad.distributed as dist


def check(name, got, want):
    got = got.numpy() if isinstance(got, torch.Tensor) else np.asarray(got)
    if not np.array_equal(got, np.asarray(want)):
        raise AssertionError(f"rank {dist.get_rank()}: {name}: got {got.tolist()}, want {np.asarray(want).tolist()}")


def main():
    dist.init_process_group("gloo")
    r, n = dist.get_rank(), dist.get_world_size()
    assert n == 2, n
    base = np.arange(4, dtype=np.float32)

    t = torch.tensor(base + r)
    dist.all_reduce(t)
    check("all_reduce sum", t, 2 * base + 1)
    for op, want in ((dist.ReduceOp.MAX, base + 1), (dist.ReduceOp.MIN, base), (dist.ReduceOp.PRODUCT, base * (base + 1)),
                     (dist.ReduceOp.AVG, base + 0.5)):
        t = torch.tensor(base + r)
        dist.all_reduce(t, op=op)
        check(f"all_reduce {op}", t, want)
    t = torch.tensor([1 + r, 6], dtype=torch.int64)
    dist.all_reduce(t, op=dist.ReduceOp.BAND)
    check("all_reduce band", t, [1 & 2, 6])
    t = torch.tensor([r == 0, False])
    dist.all_reduce(t)
    check("all_reduce bool", t, [True, False])
    t = torch.tensor(base + r, dtype=torch.float16)
    dist.all_reduce(t)
    check("all_reduce float16", t, (2 * base + 1).astype(np.float16))
    t = torch.tensor(np.arange(6, dtype=np.float64).reshape(2, 3) + r).t()        # non-contiguous
    dist.all_reduce(t)
    check("all_reduce non-contiguous", t, (2 * np.arange(6).reshape(2, 3) + 1).T)
    t = torch.tensor(base + r)
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() is True and work.is_completed()
    check("all_reduce async", t, 2 * base + 1)

    t = torch.tensor(base + 10 * r)
    dist.broadcast(t, src=1)
    check("broadcast", t, base + 10)
    t = torch.tensor(base + r)
    dist.reduce(t, dst=0)
    check("reduce", t, 2 * base + 1 if r == 0 else base + r)

    out = [torch.zeros(4), torch.zeros(4)]
    dist.all_gather(out, torch.tensor(base + r))
    check("all_gather 0", out[0], base)
    check("all_gather 1", out[1], base + 1)
    big = torch.zeros(8)
    dist.all_gather_into_tensor(big, torch.tensor(base + r))
    check("all_gather_into_tensor", big, np.concatenate([base, base + 1]))

    lst = [torch.zeros(4), torch.zeros(4)] if r == 0 else None
    dist.gather(torch.tensor(base * (r + 1)), lst, dst=0)
    if r == 0:
        check("gather 1", lst[1], base * 2)
    t = torch.zeros(4)
    dist.scatter(t, [torch.tensor(base), torch.tensor(base + 5)] if r == 1 else None, src=1)
    check("scatter", t, base + 5 * r)

    t = torch.zeros(2)
    dist.reduce_scatter(t, [torch.tensor([1.0, 2.0]) * (r + 1), torch.tensor([3.0, 4.0]) * (r + 1)])
    check("reduce_scatter", t, [3.0, 6.0] if r == 0 else [9.0, 12.0])
    t = torch.zeros(2)
    dist.reduce_scatter_tensor(t, torch.tensor([1.0, 2.0, 3.0, 4.0]) * (r + 1))
    check("reduce_scatter_tensor", t, [3.0, 6.0] if r == 0 else [9.0, 12.0])

    outs = [torch.zeros(2), torch.zeros(2)]
    dist.all_to_all(outs, [torch.tensor([10.0 * r, 1]), torch.tensor([10.0 * r + 1, 2])])
    check("all_to_all 0", outs[0], [0.0 + r, 1 + r])
    check("all_to_all 1", outs[1], [10.0 + r, 1 + r])

    if r == 0:
        dist.send(torch.tensor(base * 3), dst=1)
        t = torch.zeros(4)
        sender = dist.recv(t)
        assert sender == 1, sender
        check("recv from any", t, base * 7)
    else:
        t = torch.zeros(4)
        dist.recv(t, src=0)
        check("recv", t, base * 3)
        dist.isend(torch.tensor(base * 7), dst=0).wait()

    objs = [None, None]
    dist.all_gather_object(objs, {"rank": r})
    assert objs == [{"rank": 0}, {"rank": 1}], objs
    bl = ["a", 1] if r == 0 else [None, None]
    dist.broadcast_object_list(bl, src=0)
    assert bl == ["a", 1], bl
    gl = [None, None] if r == 1 else None
    dist.gather_object(("x", r), gl, dst=1)
    if r == 1:
        assert gl == [("x", 0), ("x", 1)], gl
    so = [None]
    dist.scatter_object_list(so, [{"to": 0}, {"to": 1}] if r == 0 else None, src=0)
    assert so == [{"to": r}], so

    g = dist.new_group([1])
    if r == 1:
        assert dist.get_rank(g) == 0 and dist.get_world_size(g) == 1
        t = torch.tensor(base)
        dist.all_reduce(t, group=g)
        check("all_reduce in a subgroup", t, base)
    else:
        assert dist.get_rank(g) == -1
    dist.barrier()
    dist.destroy_process_group()
    print(f"rank {r}: all collectives as torch", flush=True)


if __name__ == "__main__":
    main()          # an error ends the job with its traceback (init_process_group's hook)
