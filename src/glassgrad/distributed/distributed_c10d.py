"""torch.distributed's process groups, on MPI (_comm.py): init_process_group destroy_process_group
is_initialized get_rank get_world_size get_backend new_group; ReduceOp, Work.  The collectives are in
collectives.py.

Backends "gloo" and "mpi" both run on MPI, so unchanged scripts work; "nccl" gives torch's error on a
machine without NCCL.  Ranks and world size come from MPI (mpiexec, or ``glassgrad run``); a job of one
process needs no MPI.
"""
import os

from . import _comm


class ReduceOp:
    """torch.distributed.ReduceOp: SUM PRODUCT MIN MAX BAND BOR BXOR AVG."""

    class RedOpType(str):
        def __repr__(self):
            return f"<RedOpType.{self}>"

    SUM = RedOpType("SUM")
    AVG = RedOpType("AVG")
    PRODUCT = RedOpType("PRODUCT")
    MIN = RedOpType("MIN")
    MAX = RedOpType("MAX")
    BAND = RedOpType("BAND")
    BOR = RedOpType("BOR")
    BXOR = RedOpType("BXOR")


class ProcessGroup:
    """A set of ranks and the communicator that joins them (``comm`` is None on a rank outside it)."""

    def __init__(self, comm, ranks, backend):
        self.comm = comm
        self.ranks = list(ranks)
        self.backend = backend

    def rank(self):
        return -1 if self.comm is None else self.comm.rank

    def size(self):
        return len(self.ranks)


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = ProcessGroup(None, [], "undefined")


class Work:
    """What an ``async_op=True`` collective returns: ``wait()`` blocks until it finished (then runs the step
    that completes it, such as AVG's division), ``is_completed()`` asks without blocking."""

    def __init__(self, requests=(), finish=None, result=()):
        self._reqs = list(requests)
        self._finish = finish
        self._result = list(result)
        self._done = False

    def wait(self, timeout=None):
        if not self._done:
            for r in self._reqs:
                r.Wait()
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


_WORLD = {"group": None}


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
    name = "gloo" if backend is None else str(backend).lower()
    if name == "nccl" or name.startswith("cuda:nccl"):
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if name not in ("gloo", "mpi", "cpu:gloo"):
        raise ValueError(f"Invalid backend: '{backend}'")
    want_size = world_size if world_size != -1 else int(os.environ.get("WORLD_SIZE", "-1"))
    want_rank = rank if rank != -1 else int(os.environ.get("RANK", "-1"))
    comm = _world_comm(want_size)
    if want_size not in (-1, comm.size):
        raise RuntimeError(f"init_process_group: world_size={want_size} but the job has {comm.size} processes "
                           f"(start it with `glassgrad run --nproc-per-node {want_size}` or "
                           f"`mpiexec -n {want_size}`)")
    if want_rank not in (-1, comm.rank):
        raise RuntimeError(f"init_process_group: rank={want_rank} but MPI made this process rank {comm.rank}")
    _WORLD["group"] = ProcessGroup(comm, range(comm.size), "mpi" if name == "mpi" else "gloo")
    GroupMember.WORLD = _WORLD["group"]


def _world_comm(want_size):
    MPI = _comm.mpi()
    if MPI is None:
        if want_size > 1 or _comm.launched_by_mpi():
            raise RuntimeError("torch.distributed with more than one process needs MPI: "
                               "pip install glassgrad[dist] (mpi4py and mpich)")
        return _comm.SelfComm()
    return _comm.MPIComm(MPI.COMM_WORLD, MPI)


def destroy_process_group(group=None):
    if group is None or group is _WORLD["group"]:
        if _WORLD["group"] is None:
            raise AssertionError("Process group cannot be None")
        _WORLD["group"] = None
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
    sub = world.comm.split(world.comm.rank in ranks)
    if sub is None:
        return GroupMember.NON_GROUP_MEMBER
    return ProcessGroup(sub, ranks, world.backend if backend is None else str(backend).lower())


def get_process_group_ranks(group):
    return list(_group(group).ranks)


def get_global_rank(group, group_rank):
    return _group(group).ranks[group_rank]


def get_group_rank(group, global_rank):
    g = _group(group)
    if global_rank not in g.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {g}")
    return g.ranks.index(global_rank)


__all__ = ["ReduceOp", "ProcessGroup", "GroupMember", "Work", "is_available", "is_initialized", "is_mpi_available",
           "is_gloo_available", "is_nccl_available", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "get_backend", "new_group", "get_process_group_ranks", "get_global_rank",
           "get_group_rank"]
