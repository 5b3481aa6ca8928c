"""The transport under torch.distributed: MPI through mpi4py (the mpich wheel brings mpiexec and libmpi), or,
for a job of one process, a communicator of one that needs no MPI at all.

Both offer the same small set of blocking and non-blocking calls on NumPy buffers; distributed_c10d.py
builds torch's collectives on them.  mpi4py is imported only when a process group is made (importing it
initialises MPI).
"""
import time

import numpy as np

_OPS = ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR")


def mpi():
    """The mpi4py.MPI module, or None when mpi4py is not installed."""
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    return MPI


def launched_by_mpi():
    """Is this process one of several started by mpiexec (without importing mpi4py)?"""
    import os
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"):
        if var in os.environ:
            return os.environ.get("PMI_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "2")) != "1"
    return False


class _Done:
    """A request that has already completed (the one-process communicator, and blocking fallbacks)."""

    def Wait(self):
        return None

    def Test(self):
        return True


class _StatusRequest:
    """An MPI request whose completion fills `status` (the sender of a receive from any source)."""

    def __init__(self, req, status):
        self.req, self.status = req, status

    def Wait(self):
        return self.req.Wait(self.status)

    def Test(self):
        return self.req.Test(self.status)


class SelfComm:
    """A communicator of one process: every collective is a copy (or nothing)."""

    rank = 0
    size = 1

    def allreduce(self, buf, op):
        return _Done()

    def bcast(self, buf, root):
        return _Done()

    def reduce(self, buf, op, root):
        return _Done()

    def allgather(self, send, recv):
        recv[...] = send.reshape(recv.shape)
        return _Done()

    def gather(self, send, recv, root):
        if recv is not None:
            recv[...] = send.reshape(recv.shape)
        return _Done()

    def scatter(self, send, recv, root):
        recv[...] = send.reshape(recv.shape)
        return _Done()

    def alltoall(self, send, recv):
        recv[...] = send.reshape(recv.shape)
        return _Done()

    def alltoallv(self, send, scounts, recv, rcounts):
        recv[...] = send.reshape(recv.shape)
        return _Done()

    def barrier(self):
        return _Done()

    def send(self, buf, dest, tag):
        raise RuntimeError("send to self in a process group of one process")

    def recv(self, buf, source, tag):
        raise RuntimeError("recv from self in a process group of one process")

    def obj_allgather(self, obj):
        return [obj]

    def obj_bcast(self, obj, root):
        return obj

    def obj_gather(self, obj, root):
        return [obj]

    def obj_scatter(self, objs, root):
        return objs[0]

    def split(self, member):
        return self if member else None

    def split_color(self, color):
        return self

    def check(self, fields):
        return None

    def free(self):
        pass


class MPIComm:
    """A thin layer over an mpi4py communicator: buffers are C-contiguous NumPy arrays; reductions name
    torch's ReduceOp; non-blocking calls return MPI requests."""

    def __init__(self, comm, MPI):
        self.comm = comm
        self.MPI = MPI
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.ops = {"SUM": MPI.SUM, "PRODUCT": MPI.PROD, "MIN": MPI.MIN, "MAX": MPI.MAX, "BAND": MPI.BAND,
                    "BOR": MPI.BOR, "BXOR": MPI.BXOR}

    def allreduce(self, buf, op):
        return self.comm.Iallreduce(self.MPI.IN_PLACE, buf, self.ops[op])

    def bcast(self, buf, root):
        return self.comm.Ibcast(buf, root)

    def reduce(self, buf, op, root):
        if self.rank == root:
            return self.comm.Ireduce(self.MPI.IN_PLACE, buf, self.ops[op], root)
        return self.comm.Ireduce(buf, None, self.ops[op], root)

    def allgather(self, send, recv):
        return self.comm.Iallgather(send, recv)

    def gather(self, send, recv, root):
        return self.comm.Igather(send, recv, root)

    def scatter(self, send, recv, root):
        return self.comm.Iscatter(send, recv, root)

    def alltoall(self, send, recv):
        return self.comm.Ialltoall(send, recv)

    def alltoallv(self, send, scounts, recv, rcounts):
        """Rank i gets scounts[i] elements of `send` (in rank order) and sends rcounts[j] to rank j's recv."""
        displs = [np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64).tolist() for c in (scounts, rcounts)]
        return self.comm.Ialltoallv([send, (list(scounts), displs[0])], [recv, (list(rcounts), displs[1])])

    def barrier(self):
        return self.comm.Ibarrier()

    def send(self, buf, dest, tag):
        return self.comm.Isend(buf, dest, tag)

    def recv(self, buf, source, tag):
        """(request, status): the status names the sender once the request completed."""
        status = self.MPI.Status()
        req = self.comm.Irecv(buf, self.MPI.ANY_SOURCE if source is None else source, tag)
        return _StatusRequest(req, status), status

    def obj_allgather(self, obj):
        return self.comm.allgather(obj)

    def obj_bcast(self, obj, root):
        return self.comm.bcast(obj, root)

    def obj_gather(self, obj, root):
        return self.comm.gather(obj, root)

    def obj_scatter(self, objs, root):
        return self.comm.scatter(objs, root)

    def check(self, fields):
        """Start the all-reduce that compares a collective's fingerprint (int64 fields) across the group: the
        result holds each field's maximum, then minus its minimum; ranks agree where max == min."""
        buf = np.concatenate([fields, -fields]).astype(np.int64)
        return self.comm.Iallreduce(self.MPI.IN_PLACE, buf, self.MPI.MAX), buf

    def split(self, member):
        sub = self.comm.Split(0 if member else self.MPI.UNDEFINED, self.rank)
        return MPIComm(sub, self.MPI) if sub != self.MPI.COMM_NULL else None

    def split_color(self, color):
        """The communicator of the ranks that pass the same color (every rank calls it: one MPI split)."""
        return MPIComm(self.comm.Split(color, self.rank), self.MPI)

    def free(self):
        if self.comm not in (self.MPI.COMM_WORLD, self.MPI.COMM_SELF):
            self.comm.Free()


def wait_all(requests, deadline=None):
    """Wait for every request; with a deadline (time.monotonic() seconds), poll instead and return False once
    it has passed.  MPI progresses only inside MPI calls, so the poll spins on Test() (as MPI's own Wait
    does) rather than sleeping.  An MPI error (a message longer than its receive buffer, say) is raised as
    CommError."""
    MPI = mpi()
    try:
        if deadline is None:
            for r in requests:
                r.Wait()
            return True
        n = 0
        for r in requests:
            while not r.Test():
                n += 1
                if n & 255 == 0 and time.monotonic() > deadline:
                    return False
        return True
    except Exception as e:
        if MPI is not None and isinstance(e, MPI.Exception):
            raise CommError(e.Get_error_string()) from None
        raise


class CommError(RuntimeError):
    """An error MPI reported for a communication."""


def wire_view(a, reduce_op=None):
    """(the array MPI sends, the array to copy the result back from or None): float16 and bfloat-like types
    MPI lacks travel as float32 for reductions and as raw 16-bit words otherwise; bool reductions as uint8."""
    if a.dtype == np.float16:
        if reduce_op is None:
            return a.view(np.uint16), None
        w = a.astype(np.float32)
        return w, w
    if a.dtype == np.bool_ and reduce_op is not None:
        w = a.view(np.uint8)
        return w, None
    return a, None
