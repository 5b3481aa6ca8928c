"""Run by tests/distributed/test_collectives_more.py under ``mpiexec -n 2``: batch_isend_irecv,
send/recv_object_list, all_to_all_single (equal and uneven splits), the coalesced collectives,
monitored_barrier, new_subgroups(_by_enumeration), get_pg_count, a TCPStore across the two processes,
DeviceMesh; each
result checked against the exact value torch.distributed defines (small integers)."""
import datetime
import sys
import warnings

import numpy as np

import glassgrad as torch
import glassgrad.distributed as dist


def check(name, got, want):
    got = got.numpy() if isinstance(got, torch.Tensor) else np.asarray(got)
    if not np.array_equal(got, np.asarray(want)):
        raise AssertionError(f"rank {dist.get_rank()}: {name}: got {got.tolist()}, want {np.asarray(want).tolist()}")


def p2p(r):
    other = 1 - r
    out, inc = torch.arange(3, dtype=torch.int64) + 10 * r, torch.zeros(3, dtype=torch.int64)
    ops = [dist.P2POp(dist.irecv, inc, other), dist.P2POp(dist.isend, out, other)]
    if r == 1:
        ops.reverse()            # the order within a batch does not matter
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    check("batch_isend_irecv", inc, np.arange(3) + 10 * other)
    if r == 0:
        dist.send_object_list([{"a": 1}, "two", 3], dst=1)
    else:
        got = [None, None, None]
        sender = dist.recv_object_list(got)
        assert got == [{"a": 1}, "two", 3] and sender == 0, (got, sender)


def alltoall(r):
    t = torch.arange(4, dtype=torch.int64) + 4 * r          # rank 0: 0 1 2 3, rank 1: 4 5 6 7
    out = torch.empty(4, dtype=torch.int64)
    dist.all_to_all_single(out, t)
    check("all_to_all_single", out, [0, 1, 4, 5] if r == 0 else [2, 3, 6, 7])
    # uneven: rank 0 sends 1 row to itself and 3 to rank 1; rank 1 sends 2 to rank 0 and 2 to itself
    ins = [[1, 3], [2, 2]][r]
    outs = [[1, 2], [3, 2]][r]
    t = (torch.arange(8, dtype=torch.float32).reshape(4, 2) + 100 * r)
    out = torch.full((sum(outs), 2), -1.0)
    work = dist.all_to_all_single(out, t, outs, ins, async_op=True)
    work.wait()
    rows0, rows1 = np.arange(8.).reshape(4, 2), np.arange(8.).reshape(4, 2) + 100
    want = np.concatenate([rows0[:1], rows1[:2]]) if r == 0 else np.concatenate([rows0[1:], rows1[2:]])
    check("all_to_all_single uneven", out, want)


def coalesced(r):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        a, b = torch.tensor([1 + r, 2]), torch.tensor([[10 * r, 3], [4, 5]])
        dist.all_reduce_coalesced([a, b])
        check("all_reduce_coalesced a", a, [3, 4])
        check("all_reduce_coalesced b", b, [[10, 6], [8, 10]])
        outs = [[torch.zeros(2, dtype=torch.int64), torch.zeros(1, dtype=torch.int64)] for _ in range(2)]
        dist.all_gather_coalesced(outs, [torch.tensor([r, r + 1]), torch.tensor([7 * r])])
        check("all_gather_coalesced", np.concatenate([o.numpy() for lst in outs for o in lst]), [0, 1, 0, 1, 2, 7])


def groups(r):
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=30), wait_all_ranks=True)
    before = dist.get_pg_count()
    mine, subs = dist.new_subgroups(1)
    assert len(subs) == 2 and dist.get_world_size(mine) == 1 and dist.get_process_group_ranks(mine) == [r]
    mine, subs = dist.new_subgroups_by_enumeration([[0, 1]])
    assert dist.get_world_size(mine) == 2 and len(subs) == 1
    t = torch.tensor([r + 1])
    dist.all_reduce(t, group=mine)
    check("all_reduce on enumerated subgroup", t, [3])
    assert dist.get_pg_count() == before + 3, (before, dist.get_pg_count())
    assert dist.get_backend_config(mine) == "cpu:gloo,cuda:gloo", dist.get_backend_config(mine)


def tcpstore(r):
    port = [0]
    if r == 0:
        master = dist.TCPStore("127.0.0.1", 0, 2, True, datetime.timedelta(seconds=30), wait_for_workers=False)
        port = [master.port]
    dist.broadcast_object_list(port, src=0)
    store = master if r == 0 else dist.TCPStore("127.0.0.1", port[0], 2, False, datetime.timedelta(seconds=30))
    store.set(f"from{r}", str(r))
    check("tcpstore get", list(store.get(f"from{1 - r}")), list(str(1 - r).encode()))
    assert store.add("count", 5) in (5, 10)
    store.barrier("b", 2)
    assert store.get("count") == b"10"
    dist.barrier()


def mesh(r):
    from glassgrad.distributed.device_mesh import DeviceMesh, init_device_mesh
    m = init_device_mesh("cpu", (2,), mesh_dim_names=("dp",))
    assert m.get_group("dp") is dist.group.WORLD and m.get_local_rank() == r and m.get_coordinate() == (r,)
    m = init_device_mesh("cpu", (1, 2), mesh_dim_names=("pp", "tp"))
    assert repr(m) == "DeviceMesh((pp=1, tp=2), 'cpu', stride=((), 1))", repr(m)
    assert m.get_coordinate() == (0, r) and m.get_local_rank("tp") == r and m.get_local_rank("pp") == 0
    check("mesh pp slice", m["pp"].mesh, [r])
    check("mesh tp slice", m["tp"].mesh, [0, 1])
    pp = m.get_group("pp")
    assert dist.get_world_size(pp) == 1 and dist.get_process_group_ranks(pp) == [r]
    assert m["tp"].get_group() is m.get_group("tp") and dist.get_world_size(m.get_group("tp")) == 2
    t = torch.tensor([r + 1])
    dist.all_reduce(t, group=pp)
    check("all_reduce on a mesh dim of one rank", t, [r + 1])
    dist.all_reduce(t, group=m.get_group("tp"))
    check("all_reduce on a mesh dim of two", t, [3])
    m = DeviceMesh("cpu", [[1], [0]], mesh_dim_names=("x", "y"))
    assert m.get_coordinate() == (1 - r, 0) and m.get_local_rank("x") == 1 - r and m.size() == 2
    check("mesh y slice", m["y"].mesh, [r])


def main():
    dist.init_process_group("gloo")
    r = dist.get_rank()
    assert dist.get_world_size() == 2
    p2p(r)
    alltoall(r)
    coalesced(r)
    groups(r)
    tcpstore(r)
    mesh(r)
    dist.barrier()
    print(f"rank {r}: more collectives as torch", flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
