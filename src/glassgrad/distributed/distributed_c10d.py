"""torch.distributed's process groups, on MPI (_comm.py): init_process_group destroy_process_group
is_initialized get_rank get_world_size get_backend new_group; ReduceOp, Work.  The collectives are in
collectives.py.

Backends "gloo" and "mpi" both run on MPI, so unchanged scripts work; "nccl" gives torch's error on a
machine without NCCL.  Ranks and world size come from MPI (mpiexec, or ``glassgrad run``); a job of one
process needs no MPI.
"""
import datetime
import os
import sys
import time

import numpy as np

from . import _comm

default_pg_timeout = datetime.timedelta(minutes=30)


def _seconds(timeout):
    if timeout is None:
        return None
    return timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)


class DistError(RuntimeError):
    """torch.distributed.DistError: the base of the errors a process group raises."""


class DistBackendError(DistError):
    """A collective failed: it timed out, or the ranks called different collectives."""


class DistNetworkError(DistError):
    pass


class DistStoreError(DistError):
    pass


class RedOpType:
    """One reduction of ReduceOp (an enum member like torch's pybind one: ``int(op)``, ``op.name``,
    ``op.value``, equal to its integer and to a ``ReduceOp(op)`` made from it)."""

    __slots__ = ("name", "value")

    def __init__(self, name, value):
        self.name, self.value = name, value

    def __int__(self):
        return self.value

    __index__ = __int__

    def __eq__(self, other):
        if isinstance(other, ReduceOp):
            other = other.op
        if isinstance(other, RedOpType):
            return self.value == other.value
        return isinstance(other, int) and not isinstance(other, bool) and self.value == other

    def __hash__(self):
        return hash(self.value)

    def __str__(self):
        return f"RedOpType.{self.name}"

    def __repr__(self):
        return f"<RedOpType.{self.name}: {self.value}>"


class ReduceOp:
    """torch.distributed.ReduceOp: SUM AVG PRODUCT MIN MAX BAND BOR BXOR PREMUL_SUM (RedOpType members);
    ``ReduceOp(ReduceOp.SUM)`` wraps one and compares equal to it."""

    RedOpType = RedOpType

    def __init__(self, op):
        if not isinstance(op, RedOpType):
            raise TypeError("__init__(): incompatible constructor arguments. The following argument types are "
                            "supported:\n    1. torch._C._distributed_c10d.ReduceOp(arg0: "
                            f"c10d::ReduceOp::RedOpType)\n\nInvoked with: {op!r}")
        self.op = op

    def __eq__(self, other):
        return self.op == other

    def __hash__(self):
        return hash(self.op)


RedOpType.__members__ = {}
for _i, _n in enumerate(("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM")):
    RedOpType.__members__[_n] = RedOpType(_n, _i)
    setattr(RedOpType, _n, RedOpType.__members__[_n])
    setattr(ReduceOp, _n, RedOpType.__members__[_n])


def _op_name(op):
    """The member name of a reduce op (a RedOpType or a ReduceOp wrapping one), or None."""
    op = op.op if isinstance(op, ReduceOp) else op
    return op.name if isinstance(op, RedOpType) else None


class ProcessGroup:
    """A set of ranks and the communicator that joins them (``comm`` is None on a rank outside it)."""

    def __init__(self, comm, ranks, backend, timeout=None):
        self.comm = comm
        self.ranks = list(ranks)
        self.backend = backend
        self.timeout = _seconds(timeout if timeout is not None else default_pg_timeout)

    def rank(self):
        return -1 if self.comm is None else self.comm.rank

    def size(self):
        return len(self.ranks)


class _WorldMeta(type):
    """``group.WORLD`` reads ``GroupMember.WORLD``: the default process group, None before init."""

    @property
    def WORLD(cls):
        return _WORLD["group"]


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = ProcessGroup(None, [], "undefined")


class group(metaclass=_WorldMeta):
    """torch.distributed.group: ``group.WORLD`` is the default process group."""


class Work:
    """What an ``async_op=True`` collective returns: ``wait()`` blocks until it finished (then runs the step
    that completes it, such as AVG's division), ``is_completed()`` asks without blocking.

    A collective's fingerprint check (see Fingerprint) is verified first; the wait honours the group's
    ``timeout`` (init_process_group / new_group) or wait's own, raising DistBackendError when it passes."""

    def __init__(self, requests=(), finish=None, result=(), group=None, check=None, label="collective"):
        self._reqs = list(requests)
        self._finish = finish
        self._result = list(result)
        self._done = False
        self._timeout = None if group is None else group.timeout
        self._check = check
        self._label = label

    def wait(self, timeout=None):
        if not self._done:
            secs = self._timeout if timeout is None else _seconds(timeout)
            deadline = None if secs is None else time.monotonic() + secs
            if self._check is not None:
                self._check.verify(deadline, secs)
            if not _comm.wait_all(self._reqs, deadline):
                raise _timed_out(self._label, secs)
            self._done = True
            if self._finish is not None:
                self._finish()
        return True

    def is_completed(self):
        if not self._done and all(r.Test() for r in self._reqs):
            self.wait()
        return self._done

    def is_success(self):
        return self.wait()

    def result(self):
        self.wait()
        return self._result

    def exception(self):
        return None


def _timed_out(label, secs):
    return DistBackendError(f"Timed out waiting {int(secs * 1000)}ms for {label} to complete: a rank did not reach "
                            "the same collective in time (raise the process group's timeout= if it is slow)")


_COLLECTIVES = ("all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "gather", "scatter",
                "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "barrier", "all_gather_object",
                "broadcast_object_list", "gather_object", "scatter_object_list", "all_to_all_single",
                "monitored_barrier")
_DTYPES = ("none", "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16",
           "bfloat16", "float32", "float64", "complex64", "complex128")
_REDOPS = ("none", "SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR")
_FIELDS = ("collective", "dtype", "numel", "root", "op")


class Fingerprint:
    """What one collective call is -- which collective, dtype, element count, root, reduce op -- compared
    across the group by a small all-reduce that runs beside the collective itself.  MPI silently mixes up
    collectives that differ (an all_reduce of 4 elements against one of 8 returns garbage; an all_reduce
    against a broadcast hangs), so every collective is checked and a mismatch raises DistBackendError naming
    what differs (torch checks only under TORCH_DISTRIBUTED_DEBUG=DETAIL; here it costs one 80-byte
    all-reduce overlapped with the data)."""

    def __init__(self, comm, name, array=None, root=-1, op=None):
        dtype = "none" if array is None else str(array.dtype)
        self.fields = np.array([_COLLECTIVES.index(name), _DTYPES.index(dtype) if dtype in _DTYPES else len(_DTYPES),
                                -1 if array is None else array.size, root,
                                _REDOPS.index(_op_name(op)) if op is not None else 0], dtype=np.int64)
        self.rank, self.name = comm.rank, name
        started = comm.check(self.fields)
        self.req, self.buf = started if started is not None else (None, None)

    def verify(self, deadline=None, secs=None):
        if self.req is None:
            return
        if not _comm.wait_all([self.req], deadline):
            raise _timed_out(self.name, secs)
        k = len(self.fields)
        hi, lo = self.buf[:k], -self.buf[k:]
        if (hi == lo).all():
            return
        mine = self.fields
        differs = "; ".join(f"{f} ({self._show(i, mine[i])} here, {self._show(i, hi[i] if mine[i] == lo[i] else lo[i])} "
                            "on another rank)" for i, f in enumerate(_FIELDS) if hi[i] != lo[i])
        raise DistBackendError(f"Detected mismatch between collectives on ranks. Rank {self.rank} is running "
                               f"collective: {self.describe()}, but the group's ranks differ in {differs}. Every "
                               "rank must call the same collectives in the same order, on tensors of the same "
                               "dtype and size.")

    def _show(self, i, v):
        names = {0: _COLLECTIVES, 1: _DTYPES, 4: _REDOPS}.get(i)
        return (names[v] if 0 <= v < len(names) else "other") if names else str(int(v))

    def describe(self):
        parts = [f"{_FIELDS[i]}={self._show(i, v)}" for i, v in enumerate(self.fields)
                 if i and not (i == 1 and v == 0) and not (i in (2, 3) and v == -1) and not (i == 4 and v == 0)]
        return f"{self.name}({', '.join(parts)})"


_WORLD = {"group": None, "count": 0}


def _not_initialized():
    return ValueError("Default process group has not been initialized, please make sure to call "
                      "init_process_group.")


def is_available():
    return True


def is_initialized():
    return _WORLD["group"] is not None


def is_mpi_available():
    return _comm.mpi() is not None


def is_gloo_available():
    return True


def is_nccl_available():
    return False


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join the default process group: every rank of the job calls it.  With mpiexec (or ``glassgrad run``)
    the ranks are MPI's; `world_size` / `rank` (or WORLD_SIZE / RANK) must agree with them when given."""
    if _WORLD["group"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = _backend_name(backend)
    if store is not None:
        if init_method is not None:
            raise AssertionError("Cannot specify both init_method and store.")
        if world_size <= 0:
            raise AssertionError("world_size must be positive if using store")
        if rank < 0:
            raise AssertionError("rank must be non-negative if using store")
    want_size = world_size if world_size != -1 else int(os.environ.get("WORLD_SIZE", "-1"))
    want_rank = rank if rank != -1 else int(os.environ.get("RANK", "-1"))
    secs = _seconds(timeout if timeout is not None else default_pg_timeout)
    comm = _world_comm(want_size, want_rank, secs, init_method, store)
    if want_size not in (-1, comm.size):
        raise RuntimeError(f"init_process_group: world_size={want_size} but the job has {comm.size} processes "
                           f"(start it with `glassgrad run --nproc-per-node {want_size}` or "
                           f"`mpiexec -n {want_size}`)")
    if want_rank not in (-1, comm.rank):
        raise RuntimeError(f"init_process_group: rank={want_rank} but MPI made this process rank {comm.rank}")
    _WORLD["group"] = ProcessGroup(comm, range(comm.size), name, timeout)
    _WORLD["group"].store, _WORLD["count"] = store, 1
    GroupMember.WORLD = _WORLD["group"]
    if comm.size > 1:
        _end_job_on_uncaught_error()


def _backend_name(backend):
    """The backend as torch's get_backend reports it ("undefined" for None; "cpu:gloo,cuda:gloo" kept), with
    torch's errors for NCCL and unknown names.  Whatever it names, the group runs on MPI."""
    name = "undefined" if backend is None else str(backend).lower()
    for b in ([pair.rpartition(":")[2] for pair in name.split(",")] if ":" in name else [name]):
        if b == "nccl":
            raise RuntimeError("Distributed package doesn't have NCCL built in")
        if b not in ("gloo", "mpi", "undefined"):
            raise AssertionError(f"Unknown c10d backend type {b.upper()}" if ":" in name else
                                 f"Unknown backend type {b}")
    return name


def _end_job_on_uncaught_error():
    """An uncaught exception on one rank ends the whole MPI job (as torchrun ends the job when a worker
    fails), after printing it: otherwise the other ranks would wait for it in their next collective."""
    previous = sys.excepthook
    if getattr(previous, "_glassgrad_abort", False):
        return

    def hook(kind, value, tb):
        previous(kind, value, tb)
        abort_job(1)
    hook._glassgrad_abort = True
    sys.excepthook = hook


def abort_job(code):
    """End every rank of a running MPI job of several processes (MPI_Abort) with exit status `code`, after
    flushing this rank's output and giving mpiexec a moment to pass it on (an abort kills the forwarding)."""
    MPI = sys.modules.get("mpi4py.MPI")
    if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized() and MPI.COMM_WORLD.Get_size() > 1:
        sys.stdout.flush()
        sys.stderr.flush()
        time.sleep(0.3)
        MPI.COMM_WORLD.Abort(code)


def _world_comm(want_size, want_rank, timeout, init_method, store=None):
    """The communicator of the job: MPI's world (mpiexec, glassgrad run), the MPI jobs of several nodes joined
    (glassgrad run --nnodes), processes started apart joined by their rank and world size
    (torch.multiprocessing.spawn), or, for one process without MPI, SelfComm."""
    MPI = _comm.mpi()
    nnodes = int(os.environ.get("GLASSGRAD_NNODES", "1"))
    if MPI is None:
        if want_size > 1 or nnodes > 1 or _comm.launched_by_mpi():
            raise RuntimeError("torch.distributed with more than one process needs MPI: "
                               "pip install glassgrad[dist] (mpi4py and mpich)")
        return _comm.SelfComm()
    if nnodes > 1:                  # glassgrad run --nnodes M: join the nodes' MPI jobs into one world
        return _joined(MPI, nnodes, int(os.environ["GROUP_RANK"]), int(os.environ["RANK"]), timeout,
                       (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]))
    if want_size > 1 and MPI.COMM_WORLD.Get_size() == 1:      # started apart: each process a job of one
        if store is None and (init_method or "").startswith("file://"):
            from .store import FileStore                        # torch's file:// rendezvous: a FileStore
            store = FileStore(init_method[len("file://"):].split("?")[0], want_size)
        where = (None, 0) if store is not None else _rendezvous_address(init_method, want_rank)
        return _joined(MPI, want_size, want_rank, want_rank, timeout, where, store)
    return _comm.MPIComm(MPI.COMM_WORLD, MPI)


def _rendezvous_address(init_method, rank):
    """(host, port) of rank 0 from init_method (env:// or tcp://), with torch's errors for what is missing."""
    method = init_method or "env://"
    if method.startswith("tcp://"):
        if rank < 0:
            raise ValueError("Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing")
        host, _, port = method[len("tcp://"):].split("?")[0].rpartition(":")
        return host.strip("[]"), port
    if method.startswith("env://"):
        for var, value in (("RANK", rank if rank >= 0 else None), ("MASTER_ADDR", os.environ.get("MASTER_ADDR")),
                           ("MASTER_PORT", os.environ.get("MASTER_PORT"))):
            if value is None:
                raise ValueError("Error initializing torch.distributed using env:// rendezvous: environment "
                                 f"variable {var} expected, but not set")
        return os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]
    raise ValueError(f"init_method {method!r}: processes started apart meet through env:// or tcp://host:port "
                     "(or start them together with `glassgrad run --nproc-per-node N`)")


def _joined(MPI, nnodes, node_rank, global_rank, timeout, where, store=None):
    from ._rendezvous import RendezvousError, join_nodes
    try:
        return _comm.MPIComm(join_nodes(MPI, nnodes, node_rank, global_rank, where[0], int(where[1]), timeout,
                                        store), MPI)
    except RendezvousError as e:
        raise (DistStoreError if e.waiting_for_clients else DistNetworkError)(str(e)) from None


def destroy_process_group(group=None):
    if group is None or group is _WORLD["group"]:
        if _WORLD["group"] is None:
            raise AssertionError("Process group cannot be None")
        _WORLD["group"], _WORLD["count"] = None, 0
        GroupMember.WORLD = None
        return
    if group.comm is not None:
        group.comm.free()
        group.comm = None


def _group(group):
    g = _WORLD["group"] if group is None else group
    if g is None:
        raise _not_initialized()
    return g


def _get_default_group():
    """The default (world) process group; torch's ValueError before init_process_group."""
    return _group(None)


def get_rank(group=None):
    return _group(group).rank()


def get_world_size(group=None):
    g = _group(group)
    return -1 if g.comm is None else g.size()


def get_backend(group=None):
    return _group(group).backend


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of the given global ranks; every rank of the job calls it (ranks outside get a group they
    are not a member of)."""
    world = _group(None)
    ranks = sorted(range(world.size()) if ranks is None else ranks)
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f"Invalid rank {r}: the world has {world.size()} processes")
    name = world.backend if backend is None else _backend_name(backend)
    sub = world.comm.split(world.comm.rank in ranks)
    _WORLD["count"] += 1
    if sub is None:
        return GroupMember.NON_GROUP_MEMBER
    return ProcessGroup(sub, ranks, name, world.timeout if timeout is None else timeout)


def get_process_group_ranks(group):
    return list(_group(group).ranks)


def get_global_rank(group, group_rank):
    return _group(group).ranks[group_rank]


def get_group_rank(group, global_rank):
    g = _group(group)
    if global_rank not in g.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {g}")
    return g.ranks.index(global_rank)


__all__ = ["DistError", "DistBackendError", "DistNetworkError", "DistStoreError", "default_pg_timeout",
           "ReduceOp", "ProcessGroup", "GroupMember", "group", "Work", "is_available", "is_initialized", "is_mpi_available",
           "is_gloo_available", "is_nccl_available", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "get_backend", "new_group", "get_process_group_ranks", "get_global_rank",
           "get_group_rank"]
