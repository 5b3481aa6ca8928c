"""torch.distributed's surface beyond the collectives, in one process, compared with torch in the same test:
Backend / BackendConfig / is_backend_available, DebugLevel, ReduceOp as an enum, the stores (HashStore,
FileStore, PrefixStore, TCPStore over real sockets), and the new collectives and groups on a default group of
one process (the two-process runs are tests/distributed/test_collectives_more.py)."""
import datetime
import threading
import warnings

import numpy as np
import pytest
import torch
import torch.distributed as tdist

import glassgrad
import glassgrad.distributed as gdist

TD = datetime.timedelta


def _run(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn()
    except Exception as e:          # noqa: BLE001 -- the error is what is compared
        return type(e).__name__, str(e).split("\n")[0]


def _same(fn):
    a, b = _run(lambda: fn(torch, tdist)), _run(lambda: fn(glassgrad, gdist))
    assert a == b


@pytest.mark.parametrize("case", [
    lambda T, d: (d.Backend("GLOO"), d.Backend("Nccl"), d.Backend("custom"), type(d.Backend("gloo")).__name__),
    lambda T, d: d.Backend(3),
    lambda T, d: (d.Backend.GLOO, d.Backend.MPI, d.Backend.UCC, d.Backend.XCCL, d.Backend.UNDEFINED),
    lambda T, d: [d.is_backend_available(b) for b in ("gloo", "nccl", "ucc", "xccl", "foo", "cpu:gloo", "GLOO")],
    lambda T, d: (d.is_ucc_available(), d.is_xccl_available(), d.is_nccl_available(), d.is_gloo_available()),
    lambda T, d: [str(d.BackendConfig(b)) for b in ("gloo", "nccl", "cpu:gloo,cuda:nccl", "undefined")],
    lambda T, d: str(d.BackendConfig("cpu:gloo:x")),
    lambda T, d: str(d.BackendConfig("cpu:gloo,cpu:mpi")),
    lambda T, d: [d.get_default_backend_for_device(x) for x in ("cpu", "cuda:1", T.device("cpu"))],
    lambda T, d: d.get_default_backend_for_device("meta"),
    lambda T, d: (d.is_torchelastic_launched(), d.get_node_local_rank(fallback_rank=3)),
    lambda T, d: d.get_node_local_rank(),
    lambda T, d: [d.supports_complex(op) for op in (d.ReduceOp.SUM, d.ReduceOp.AVG, d.ReduceOp.MAX,
                                                     d.ReduceOp.BXOR, d.ReduceOp.PRODUCT)],
    lambda T, d: d.get_rank(),
    lambda T, d: d.get_pg_count(),
    lambda T, d: d.group.WORLD,
    lambda T, d: d.new_subgroups_by_enumeration([]),
    lambda T, d: d.init_process_group("gloo", init_method="file:///nonexistent/x", store=d.HashStore(), rank=0,
                                      world_size=1),
    lambda T, d: d.init_process_group("gloo", store=d.HashStore(), world_size=1),
    lambda T, d: d.init_process_group("gloo", store=d.HashStore(), rank=0),
], ids=["Backend()", "Backend-not-str", "Backend-attrs", "is_backend_available", "is_x_available",
        "BackendConfig", "BackendConfig-bad", "BackendConfig-dup", "default-backend", "default-backend-meta",
        "elastic-local-rank", "local-rank-missing", "supports_complex", "rank-before-init", "pg-count-before-init",
        "group.WORLD-before-init", "subgroups-empty", "store-and-init_method", "store-no-rank",
        "store-no-world-size"])
def test_backend_and_settings_match_torch(case, monkeypatch):
    for var in ("LOCAL_RANK", "TORCHELASTIC_RUN_ID"):
        monkeypatch.delenv(var, raising=False)
    _same(case)


def test_elastic_env_and_local_rank(monkeypatch):
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "x")
    monkeypatch.setenv("LOCAL_RANK", "5")
    _same(lambda T, d: (d.is_torchelastic_launched(), d.get_node_local_rank(), d.get_node_local_rank(1)))


def test_reduce_op_is_torchs_enum():
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        t, g = getattr(tdist.ReduceOp, name), getattr(gdist.ReduceOp, name)
        assert (int(g), g.name, g.value, str(g), repr(g)) == (int(t), t.name, t.value, str(t), repr(t))
        assert (g == int(t)) and g == gdist.ReduceOp(g) and gdist.ReduceOp(g) == g and hash(g) == hash(t)
    assert list(gdist.ReduceOp.RedOpType.__members__) == list(tdist.ReduceOp.RedOpType.__members__)
    assert gdist.ReduceOp.SUM != gdist.ReduceOp.MAX and gdist.ReduceOp.SUM is gdist.ReduceOp.RedOpType.SUM
    _same(lambda T, d: d.ReduceOp("SUM"))
    with pytest.warns(FutureWarning, match="reduce_op` is deprecated"):
        assert gdist.reduce_op.MAX is gdist.ReduceOp.MAX


def test_debug_level_matches_torch(monkeypatch):
    try:
        for value in ("detail", "INFO", "off"):
            monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", value)
            _same(lambda T, d: (d.set_debug_level_from_env(), str(d.get_debug_level()), int(d.get_debug_level())))
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "loud")
        _same(lambda T, d: d.set_debug_level_from_env())
        _same(lambda T, d: (d.set_debug_level(d.DebugLevel.DETAIL), str(d.get_debug_level()),
                            d.get_debug_level() == d.DebugLevel.DETAIL, d.get_debug_level() == 2,
                            d.get_debug_level() == d.DebugLevel.INFO))
        _same(lambda T, d: d.set_debug_level("INFO"))
        _same(lambda T, d: (list(d.DebugLevel.__members__), int(d.DebugLevel(1)), str(d.DebugLevel(1))))
        _same(lambda T, d: d.DebugLevel("INFO"))
    finally:
        tdist.set_debug_level(tdist.DebugLevel.OFF)
        gdist.set_debug_level(gdist.DebugLevel.OFF)


def _store_script(s, d):
    """What both libraries' stores answer: the common operations, then the errors."""
    s.set_timeout(TD(seconds=0.2))
    out = [s.timeout]
    s.set("a", "x")
    s.set("b", b"y\0z")
    out += [s.get("a"), s.get("b"), s.add("c", 3), s.add("c", -5), s.get("c")]
    out += [s.compare_set("a", "x", "z"), s.get("a"), s.compare_set("a", "nope", "w"), s.get("a")]
    out += [s.compare_set("new", "", "v"), s.compare_set("new2", "q", "v"), s.check(["a", "c"]), s.check(["zz"])]
    s.append("k", "ab")
    s.append("k", "cd")
    s.multi_set(["m1", "m2"], ["1", "2"])
    out += [s.get("k"), s.multi_get(["k", "m2"]), sorted(s.list_keys()) if not isinstance(s, d.FileStore) else 0]
    out += [s.delete_key("m1"), s.check(["m1"]), s.num_keys()]
    s.wait(["a", "c"])
    s.barrier("bar", 1)
    out.append(sorted(s.list_keys()) if not isinstance(s, d.FileStore) else 0)
    errors = [lambda: s.get("missing"), lambda: s.wait(["zz", "yy"]), lambda: s.wait(["zz"], TD(seconds=0.05)),
              lambda: s.set("n", 5)]
    if not isinstance(s, d.TCPStore):           # torch's TCPStore server dies on add to a non-integer
        errors.append(lambda: s.add("a", 1))
    out += [_run(fn) for fn in errors]
    return out


@pytest.mark.parametrize("kind", ["HashStore", "FileStore", "PrefixStore", "TCPStore"])
def test_stores_match_torch(kind, tmp_path):
    def make(d, lib):
        if kind == "HashStore":
            return d.HashStore()
        if kind == "FileStore":
            return d.FileStore(str(tmp_path / f"fs_{lib}"), 1)
        if kind == "PrefixStore":
            return d.PrefixStore("pre", d.HashStore())
        return d.TCPStore("127.0.0.1", 0, 1, True, TD(seconds=5))
    t, g = _store_script(make(tdist, "t"), tdist), _store_script(make(gdist, "g"), gdist)
    assert t == g


def test_hash_store_queues_and_waits_across_threads():
    for d in (tdist, gdist):
        s = d.HashStore()
        s.set_timeout(TD(seconds=5))
        s.queue_push("q", "a")
        s.queue_push("q", b"b")
        assert (s.queue_len("q"), s.queue_pop("q"), s.queue_pop("q", False), s.queue_len("q")) == (2, b"a", b"b", 0)
        with pytest.raises(d.QueueEmptyError, match="queue is empty"):
            s.queue_pop("q", block=False)
        threading.Timer(0.1, lambda: s.set("late", "1")).start()
        assert s.get("late") == b"1"
        p = d.PrefixStore("p", s)
        p.set("k", "v")
        assert (s.get("p/k"), p.underlying_store is s, p.check(["k"]), s.check(["k"])) == (b"v", True, True, False)


def test_tcp_store_clients_over_sockets():
    """A master and a client on real sockets: each sees the other's keys, waits wake on a late set, and the
    errors (a wait that times out, a port nobody serves) are torch's."""
    answers = []
    for d in (tdist, gdist):
        master = d.TCPStore("127.0.0.1", 0, 2, True, TD(seconds=5), wait_for_workers=False)
        n0 = master.num_keys()
        client = d.TCPStore("127.0.0.1", master.port, 2, False, TD(seconds=5))
        client.set("a", "1")
        got = [n0, master.num_keys(), master.get("a"), master.list_keys(), client.add("n", 2), master.add("n", 3)]
        threading.Timer(0.1, lambda: master.set("late", "x")).start()
        client.wait(["late"])
        client.set_timeout(TD(seconds=0.3))
        got += [client.get("late"), master.host, isinstance(master.port, int) and master.port > 0,
                _run(lambda: client.get("zz")), _run(lambda: client.wait(["zz", "yy"]))]
        answers.append(got)
    assert answers[0] == answers[1]
    errors = [_run(lambda: d.TCPStore("127.0.0.1", 1, 1, False, TD(seconds=0.3))) for d in (tdist, gdist)]
    assert errors[0] == errors[1]


@pytest.mark.parametrize("backend", [None, "GLOO", "cpu:gloo", "cpu:gloo,cuda:gloo", "cuda:gloo", "nccl",
                                     "cpu:gloo,cuda:nccl", "foo", "cpu:foo"])
def test_backend_names_at_init_match_torch(backend, tmp_path):
    """What get_backend / get_backend_config / a new group's backend say for each backend string (torch keeps
    the string as given; None is "undefined"), and torch's errors for NCCL and unknown names."""
    got = []
    for lib, d in (("torch", tdist), ("glassgrad", gdist)):
        kwargs = {"init_method": f"file://{tmp_path / lib}", "rank": 0, "world_size": 1} if lib == "torch" else {}
        got.append(_run(lambda: d.init_process_group(backend, **kwargs)))
        if got[-1][0] == "ok":
            try:
                g = d.new_group([0])
                got.append((d.get_backend(), d.get_backend_config(), d.get_backend(g), d.get_backend_config(g),
                            d.get_backend(d.new_group([0], backend="cpu:gloo")), _run(d.monitored_barrier),
                            _run(lambda: d.new_group([0], backend="nccl"))))
            finally:
                d.destroy_process_group()
    assert got[:len(got) // 2] == got[len(got) // 2:]


def _vals(x):
    return x.tolist() if hasattr(x, "tolist") else x


@pytest.mark.parametrize("case", [
    lambda T, d: (d.get_backend_config(), d.group.WORLD is d.GroupMember.WORLD),
    lambda T, d: (lambda c0: (d.new_group([0]) is not None, d.get_pg_count() - c0,
                              len(d.new_subgroups_by_enumeration([[0]])[1]), d.get_pg_count() - c0,
                              d.get_backend_config(d.new_group([0]))))(d.get_pg_count()),
    lambda T, d: d.new_subgroups(),
    lambda T, d: d.new_subgroups(2),
    lambda T, d: d.new_subgroups(0),
    lambda T, d: d.new_subgroups_by_enumeration([[0], [0]]),
    lambda T, d: d.get_world_size(d.new_subgroups(1)[0]),
    lambda T, d: d.P2POp(d.send, T.ones(2), 0),
    lambda T, d: d.P2POp(d.isend, [T.ones(2)], 0),
    lambda T, d: d.P2POp(d.isend, T.ones(2)),
    lambda T, d: d.P2POp(d.isend, T.ones(2), 0, group_peer=0),
    lambda T, d: (lambda p: (p.peer, p.group_peer, p.tag, p.op is d.isend, repr(p)))(d.P2POp(d.isend, T.ones(2), 0)),
    lambda T, d: d.batch_isend_irecv([]),
    lambda T, d: d.batch_isend_irecv([1]),
    lambda T, d: (lambda o: (d.all_to_all_single(o, T.arange(4.0)), _vals(o)))(T.zeros(4)),
    lambda T, d: (lambda o: (d.all_to_all_single(o, T.arange(8.0).view(4, 2), [4], [4]), _vals(o)))(T.zeros(4, 2)),
    lambda T, d: d.all_to_all_single(T.zeros(4), T.arange(4.0), [2], [2]),
    lambda T, d: d.all_to_all_single(T.zeros(4), T.arange(4.0), [4, 0], [4]),
    lambda T, d: d.all_to_all_single(T.zeros(4), T.arange(4)),
    lambda T, d: (lambda ts: (d.all_reduce_coalesced(ts), [_vals(t) for t in ts]))([T.ones(2), T.arange(3.0)]),
    lambda T, d: d.all_reduce_coalesced([T.ones(2), T.ones(3, dtype=T.int64)]),
    lambda T, d: (lambda o: (d.all_gather_coalesced(o, [T.ones(2), T.arange(3.0)]), [_vals(t) for t in o[0]]))(
        [[T.zeros(2), T.zeros(3)]]),
    lambda T, d: d.send_object_list([1], dst=0),
    lambda T, d: d.monitored_barrier(),
    lambda T, d: d.monitored_barrier(timeout=TD(seconds=5), wait_all_ranks=True),
    lambda T, d: (lambda o: (d.all_gather_single(o, T.arange(3.0)), _vals(o)))(T.zeros(3)),
    lambda T, d: (lambda o: (d.reduce_scatter_single(o, T.arange(3.0), op=d.ReduceOp.MAX), _vals(o)))(T.zeros(3)),
    lambda T, d: d.split_group(split_ranks=[[0]]),
    lambda T, d: d.split_group(split_ranks=[]),
    lambda T, d: (d.constants.default_pg_timeout, d.constants.default_pg_nccl_timeout, d.GroupName("g")),
], ids=["backend-config", "pg-count", "subgroups-no-size", "subgroups-too-big", "subgroups-zero",
        "subgroups-duplicate", "subgroups-1", "P2POp-bad-op", "P2POp-bad-tensor", "P2POp-no-peer",
        "P2POp-two-peers", "P2POp-attrs", "batch-empty", "batch-not-P2POp", "all_to_all_single",
        "all_to_all_single-splits", "all_to_all_single-split-sum", "all_to_all_single-split-count",
        "all_to_all_single-dtypes", "all_reduce_coalesced", "all_reduce_coalesced-dtypes", "all_gather_coalesced",
        "send_object_list-self", "monitored_barrier", "monitored_barrier-all", "all_gather_single",
        "reduce_scatter_single", "split_group", "split_group-empty", "constants"])
def test_collectives_and_groups_match_torch(both_worlds_of_one, case):
    _same(case)


def test_all_to_all_single_results_on_one_process(both_worlds_of_one):
    for dtype in ("float32", "int64", "float16", "complex64"):
        x = np.arange(12).reshape(6, 2).astype(dtype)
        outs = []
        for T, d in ((torch, tdist), (glassgrad, gdist)):
            o = T.zeros(6, 2, dtype=getattr(T, dtype))
            d.all_to_all_single(o, T.tensor(x), [6], [6])
            outs.append(o.numpy())
        assert outs[0].dtype == outs[1].dtype and np.array_equal(outs[0], outs[1]), dtype


@pytest.mark.parametrize("case", [
    lambda T, d, M: (repr(M("cpu", (1, 1), mesh_dim_names=("dp", "tp"))), M("cpu", (1,)).mesh.tolist(),
                     str(M("cpu", (1, 1)).mesh.dtype)),
    lambda T, d, M: (lambda m: (m.ndim, m.shape, m.size(), m.size(0), m.size(1), m.get_rank(), m.get_local_rank(0),
                                m.get_local_rank("tp"), m.get_coordinate(), m.mesh_dim_names, m.device_type))(
        M("cpu", (1, 1), mesh_dim_names=("dp", "tp"))),
    lambda T, d, M: M("cpu", (1, 1)).get_group(),
    lambda T, d, M: M("cpu", (1, 1), mesh_dim_names=("dp", "tp")).get_group("xx"),
    lambda T, d, M: M("cpu", (1, 1)).get_group(5),
    lambda T, d, M: M("cpu", (1, 1)).get_local_rank(),
    lambda T, d, M: (lambda m: (repr(m["tp"]), m["tp"].mesh_dim_names, repr(m["dp", "tp"]), m["dp", "tp"] == m))(
        M("cpu", (1, 1), mesh_dim_names=("dp", "tp"))),
    lambda T, d, M: M("cpu", (1, 1), mesh_dim_names=("dp", "tp"))["zz"],
    lambda T, d, M: M("cpu", (1, 1), mesh_dim_names=("dp", "tp"))[0],
    lambda T, d, M: repr(M("cpu", (1, 1), mesh_dim_names=("dp", "tp"))["tp", "dp"]),
    lambda T, d, M: M("cpu", (1,))["x"],
    lambda T, d, M: M("cpu", (1,)).size("x"),
    lambda T, d, M: M("cpu", (2,)),
    lambda T, d, M: M("cpu", (1,), mesh_dim_names=("a", "b")),
    lambda T, d, M: M("cpu", (1, 1), mesh_dim_names=("a", "a")),
    lambda T, d, M: M("cuda:0", (1,)),
    lambda T, d, M: (M("cpu", (1,), mesh_dim_names=("a",)) == M("cpu", (1,), mesh_dim_names=("a",)),
                     M("cpu", (1,)) == M("cpu", (1,), mesh_dim_names=("a",)), M("cpu", (1,)).get_local_rank()),
    lambda T, d, M: (lambda m: (m.get_group(0) is d.group.WORLD, len(m.get_all_groups()), repr(m)))(
        d.device_mesh.DeviceMesh("cpu", T.tensor([[0]]), mesh_dim_names=("x", "y"))),
    lambda T, d, M: d.device_mesh.DeviceMesh("cpu", [0, 0]),
    lambda T, d, M: repr(d.device_mesh.DeviceMesh.from_group(d.group.WORLD, "cpu")),
], ids=["repr", "answers", "group-no-dim", "group-bad-name", "group-bad-index", "local-rank-no-dim", "slices",
        "slice-bad-name", "slice-int", "slice-order", "slice-unnamed", "size-by-name", "too-big", "names-length",
        "names-repeated", "device-index", "eq", "DeviceMesh-tensor", "DeviceMesh-duplicates", "from_group"])
def test_device_mesh_matches_torch(both_worlds_of_one, case):
    from torch.distributed.device_mesh import init_device_mesh as t_init

    from glassgrad.distributed.device_mesh import init_device_mesh as g_init
    a = _run(lambda: case(torch, tdist, t_init))
    b = _run(lambda: case(glassgrad, gdist, g_init))
    if a[0] == "ok" and type(a[1]).__name__ == "ProcessGroup":
        a, b = a[0], b[0]
    assert a == b


def _rdv(d, url, *args, **kwargs):
    it = d.rendezvous(url, *args, **kwargs)
    store, rank, world_size = next(it)
    store.set("k", "v")
    again = _run(lambda: next(it))
    return type(store).__name__, rank, world_size, store.get("k"), again


@pytest.mark.parametrize("case", [
    lambda T, d, tmp, port: d.rendezvous(5),
    lambda T, d, tmp, port: d.rendezvous("file:///x", rank="0"),
    lambda T, d, tmp, port: d.rendezvous("foo://x", 0, 1),
    lambda T, d, tmp, port: next(d.rendezvous(f"file://{tmp}/f")),
    lambda T, d, tmp, port: next(d.rendezvous(f"file://{tmp}/f", rank=0)),
    lambda T, d, tmp, port: next(d.rendezvous("file:///x/f?rank=0", 0, 1)),
    lambda T, d, tmp, port: next(d.rendezvous("tcp://127.0.0.1", 0, 1)),
    lambda T, d, tmp, port: next(d.rendezvous("tcp://127.0.0.1:1?world_size=1")),
    lambda T, d, tmp, port: next(d.rendezvous("env://", 0, 1)),
    lambda T, d, tmp, port: d.register_rendezvous_handler("file", None),
    lambda T, d, tmp, port: _rdv(d, f"file://{tmp}/f", 0, 1),
    lambda T, d, tmp, port: _rdv(d, f"file://{tmp}/g?rank=0&world_size=1"),
    lambda T, d, tmp, port: _rdv(d, f"tcp://127.0.0.1:{port}", 0, 1),
], ids=["url-type", "rank-type", "scheme", "file-no-rank", "file-no-size", "rank-twice", "tcp-no-port",
        "tcp-no-rank", "env-no-vars", "register-twice", "file", "file-query", "tcp"])
def test_rendezvous_matches_torch(case, tmp_path, monkeypatch):
    import socket
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    got = []
    for T, d in ((torch, tdist), (glassgrad, gdist)):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        (tmp_path / T.__name__).mkdir()
        got.append(_run(lambda: case(T, d, tmp_path / T.__name__, port)))
    assert got[0] == got[1]
