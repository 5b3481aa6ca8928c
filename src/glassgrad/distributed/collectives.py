"""torch.distributed's collectives on a process group (distributed_c10d.py), on MPI (_comm.py).

ops: all_reduce broadcast reduce all_gather all_gather_into_tensor gather scatter reduce_scatter
     reduce_scatter_tensor all_to_all barrier send recv isend irecv, and for Python objects (pickled, as
     torch) all_gather_object broadcast_object_list gather_object scatter_object_list.

Tensors travel as their arrays (no pickling).  A collective writes its result into the tensors torch writes
into, in place; a non-contiguous tensor goes through a contiguous copy that is written back.  With
``async_op=True`` the call returns a Work whose ``wait()`` finishes it; all_reduce, broadcast and reduce are
then truly non-blocking (MPI's Iallreduce / Ibcast / Ireduce).  Ranks (src, dst) are global ranks.
"""
import time

import numpy as np

from .._tensor import Tensor, _make
from . import _comm
from .distributed_c10d import Fingerprint, ReduceOp, Work, _group, _op_name

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "gather", "scatter",
           "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "barrier", "send", "recv", "isend", "irecv",
           "all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list"]

_OPS = {ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX, ReduceOp.BAND, ReduceOp.BOR,
        ReduceOp.BXOR}


def _tensor(t, fname, param="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{param}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")
    return t


def _tensors(ts, fname, param):
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{param}` of type List[torch.Tensor]\n"
                        f"             but got {type(ts)} instead.")
    return list(ts)


def _member(g):
    if g.comm is None:
        raise RuntimeError("this rank is not a member of the process group")
    return g.comm


def _root(g, r, fname):
    """The group rank of global rank `r` (torch's error for one outside the group)."""
    if r is None:
        raise ValueError(f"{fname}: a source or destination rank is required")
    if r not in g.ranks:
        raise RuntimeError(f"ProcessGroupGloo::{fname}: invalid root rank: {r}")
    return g.ranks.index(r)


def _buffer(t):
    """(contiguous array to communicate in, function writing it back into t when it was a copy)."""
    a = t._data
    if a.flags.c_contiguous:
        return a, None
    c = np.ascontiguousarray(a)
    return c, lambda: t._data.__setitem__(Ellipsis, c)


def _reduce_op(op, a):
    if op not in _OPS:
        raise ValueError(f"Invalid reduce op: {op!r}")
    name = _op_name(op)
    if a.dtype == np.bool_:
        return {"SUM": "MAX", "PRODUCT": "MIN", "AVG": "MAX"}.get(name, name)
    if name in ("BAND", "BOR", "BXOR") and a.dtype.kind in "fV":
        raise RuntimeError(f"Cannot use ReduceOp.{name} with floating point tensors")
    return "SUM" if name == "AVG" else name


def _finisher(*steps):
    steps = [s for s in steps if s is not None]
    if not steps:
        return None

    def finish():
        for s in steps:
            s()
    return finish


def _run(reqs, finish, async_op, result=(), g=None, check=None):
    """The collective's Work (async_op) or None after waiting for it; `check` is its Fingerprint, started
    before the data moves and verified first."""
    work = Work(reqs if isinstance(reqs, (list, tuple)) else [reqs], finish, result, g, check,
                check.name if check is not None else "collective")
    if async_op:
        return work
    work.wait()
    return None


def _reduction(t, op, g, send, name, root=-1):
    """(request, finish, fingerprint): reduce tensor t with `send(buffer, mpi_op)` (all_reduce, reduce)."""
    buf, back = _buffer(t)
    mop = _reduce_op(op, buf)
    wire, result = _comm.wire_view(buf, mop)
    check = Fingerprint(g.comm, name, buf, root, op)
    req = send(wire, mop)

    def finish():
        if result is not None:
            buf[...] = result.astype(buf.dtype)
        if op == ReduceOp.AVG:
            if buf.dtype.kind not in "fcV":
                raise RuntimeError("ReduceOp.AVG needs a floating point tensor")
            buf[...] = buf / buf.dtype.type(g.size())
    return req, _finisher(finish, back), check


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    g = _group(group)
    t = _tensor(tensor, "all_reduce")
    comm = _member(g)
    req, finish, check = _reduction(t, op, g, lambda w, mop: comm.allreduce(w, mop), "all_reduce")
    return _run(req, finish, async_op, [t], g, check)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    g = _group(group)
    t = _tensor(tensor, "reduce")
    comm = _member(g)
    root = group_dst if group_dst is not None else _root(g, dst, "reduce")
    req, finish, check = _reduction(t, op, g, lambda w, mop: comm.reduce(w, mop, root), "reduce", root)
    if comm.rank != root:
        finish = None       # only the destination's tensor holds the result
    return _run(req, finish, async_op, [t], g, check)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    g = _group(group)
    t = _tensor(tensor, "broadcast")
    comm = _member(g)
    root = group_src if group_src is not None else _root(g, src, "broadcast")
    buf, back = _buffer(t)
    wire, _ = _comm.wire_view(buf)
    check = Fingerprint(comm, "broadcast", buf, root)
    return _run(comm.bcast(wire, root), back, async_op, [t], g, check)


def _sizes(shape):
    return "(" + ", ".join(str(s) for s in shape) + ")"      # c10's IntArrayRef printing: (4), (2, 3)


def _same_shapes(out, t, fname):
    for i, o in enumerate(out):
        if o.shape != t.shape:
            raise RuntimeError(f"ProcessGroupGloo::{fname}: invalid tensor size at index {i} (expected "
                               f"{_sizes(t.shape)}, got {_sizes(o.shape)})")
        if o.dtype != t.dtype:
            raise RuntimeError(f"ProcessGroupGloo::{fname}: invalid tensor type at index {i} (expected "
                               f"{t.dtype}, got {o.dtype})")


def _stack_out(outs, t):
    """A contiguous (n, *shape) receive buffer and the step that copies it into the output tensors."""
    recv = np.empty((len(outs),) + t._data.shape, t._data.dtype)

    def copy():
        for i, o in enumerate(outs):
            o._data[...] = recv[i]
    return recv, copy


def all_gather(tensor_list, tensor, group=None, async_op=False):
    g = _group(group)
    t = _tensor(tensor, "all_gather")
    outs = _tensors(tensor_list, "all_gather", "tensor_list")
    comm = _member(g)
    if len(outs) != g.size():
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list: expected {g.size()} "
                           f"tensors, got {len(outs)}")
    _same_shapes(outs, t, "allgather")
    recv, copy = _stack_out(outs, t)
    send = np.ascontiguousarray(t._data)
    check = Fingerprint(comm, "all_gather", send)
    return _run(comm.allgather(_comm.wire_view(send)[0], _comm.wire_view(recv)[0]), copy, async_op, outs, g, check)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    g = _group(group)
    out, t = _tensor(output_tensor, "all_gather_into_tensor", "output_tensor"), _tensor(input_tensor, "", "input_tensor")
    comm = _member(g)
    if out._data.size != t._data.size * g.size() or out.dtype != t.dtype:
        raise ValueError(f"output tensor must have {g.size()} times the elements of the input and its dtype")
    buf, back = _buffer(out)
    send = np.ascontiguousarray(t._data)
    check = Fingerprint(comm, "all_gather_into_tensor", send)
    return _run(comm.allgather(_comm.wire_view(send)[0], _comm.wire_view(buf)[0]), back, async_op, [out], g, check)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    g = _group(group)
    t = _tensor(tensor, "gather")
    comm = _member(g)
    root = group_dst if group_dst is not None else _root(g, dst, "gather")
    send = np.ascontiguousarray(t._data)
    if comm.rank != root:
        if gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
        check = Fingerprint(comm, "gather", send, root)
        return _run(comm.gather(_comm.wire_view(send)[0], None, root), None, async_op, (), g, check)
    outs = _tensors(gather_list or [], "gather", "gather_list")
    if len(outs) != g.size():
        raise RuntimeError(f"ProcessGroupGloo::gather: Incorrect output list size {len(outs)}. Output list "
                           f"size should be {g.size()}, same as size of the process group.")
    _same_shapes(outs, t, "gather")
    recv, copy = _stack_out(outs, t)
    check = Fingerprint(comm, "gather", send, root)
    return _run(comm.gather(_comm.wire_view(send)[0], _comm.wire_view(recv)[0], root), copy, async_op, outs, g,
                check)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    g = _group(group)
    t = _tensor(tensor, "scatter")
    comm = _member(g)
    root = group_src if group_src is not None else _root(g, src, "scatter")
    buf, back = _buffer(t)
    send = None
    if comm.rank == root:
        ins = _tensors(scatter_list or [], "scatter", "scatter_list")
        if len(ins) != g.size():
            raise RuntimeError(f"ProcessGroupGloo::scatter: Incorrect input list size {len(ins)}. Input list "
                               f"size should be {g.size()}, same as size of the process group.")
        _same_shapes(ins, t, "scatter")
        send = _comm.wire_view(np.ascontiguousarray(np.stack([i._data for i in ins])))[0]
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    check = Fingerprint(comm, "scatter", buf, root)
    return _run(comm.scatter(send, _comm.wire_view(buf)[0], root), back, async_op, [t], g, check)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Each rank gets the reduction over ranks of input_list[its rank] (an all_reduce of the stacked list,
    then the rank's part: simple, and the same numbers)."""
    g = _group(group)
    out = _tensor(output, "reduce_scatter", "output")
    ins = _tensors(input_list, "reduce_scatter", "input_list")
    if len(ins) != g.size():
        raise RuntimeError(f"reduce_scatter: expected {g.size()} input tensors, got {len(ins)}")
    _same_shapes(ins, out, "reduce_scatter")
    stacked = _make(np.stack([i._data for i in ins]))
    all_reduce(stacked, op, group)
    out._data[...] = stacked._data[_member(g).rank]
    return _run([], None, async_op, [out])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    g = _group(group)
    out, t = _tensor(output, "reduce_scatter_tensor", "output"), _tensor(input, "", "input")
    if t._data.size != out._data.size * g.size():
        raise ValueError(f"input tensor must have {g.size()} times the elements of the output")
    stacked = _make(np.ascontiguousarray(t._data).reshape((g.size(),) + out._data.shape))
    all_reduce(stacked, op, group)
    out._data[...] = stacked._data[_member(g).rank]
    return _run([], None, async_op, [out])


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    g = _group(group)
    outs = _tensors(output_tensor_list, "all_to_all", "output_tensor_list")
    ins = _tensors(input_tensor_list, "all_to_all", "input_tensor_list")
    comm = _member(g)
    if len(outs) != g.size() or len(ins) != g.size():
        raise RuntimeError(f"all_to_all: expected {g.size()} input and output tensors")
    _same_shapes(ins, ins[0], "alltoall")
    _same_shapes(outs, ins[0], "alltoall")
    send = np.ascontiguousarray(np.stack([i._data for i in ins]))
    recv, copy = _stack_out(outs, ins[0])
    check = Fingerprint(comm, "all_to_all", send)
    return _run(comm.alltoall(_comm.wire_view(send)[0], _comm.wire_view(recv)[0]), copy, async_op, outs, g, check)


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    g = _group(group)
    comm = _member(g)
    check = Fingerprint(comm, "barrier")
    work = Work([comm.barrier()], None, (), g, check, "barrier")
    if async_op:
        return work
    work.wait(timeout)
    return None


def _peer(g, r, fname, what):
    comm = _member(g)
    if r is None:
        return None
    if r == g.ranks[comm.rank]:
        raise ValueError(f"Invalid {what} rank: {what} rank should not be the same as the rank of the current "
                         "process.")
    return _root(g, r, fname)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    g = _group(group)
    t = _tensor(tensor, "isend")
    peer = group_dst if group_dst is not None else _peer(g, dst, "send", "destination")
    send = np.ascontiguousarray(t._data)
    return Work([_member(g).send(_comm.wire_view(send)[0], peer, tag)], None, [t])


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    isend(tensor, dst, group, tag, group_dst).wait()


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    g = _group(group)
    t = _tensor(tensor, "irecv")
    peer = group_src if group_src is not None else _peer(g, src, "recv", "source")
    buf, back = _buffer(t)
    req, status = _member(g).recv(_comm.wire_view(buf)[0], peer, tag)
    work = Work([req], back, [t])
    work._status = status
    return work


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into tensor; returns the sender's global rank (any sender when src is None)."""
    g = _group(group)
    work = irecv(tensor, src, group, tag, group_src)
    work.wait()
    return g.ranks[work._status.Get_source()]


def _agree(g, name, root=-1):
    """Before a blocking object collective: the ranks run the same one (Fingerprint), within the timeout."""
    Fingerprint(_member(g), name, None, root).verify(time.monotonic() + g.timeout, g.timeout)


def all_gather_object(object_list, obj, group=None):
    g = _group(group)
    _agree(g, "all_gather_object")
    got = _member(g).obj_allgather(obj)
    object_list[:len(got)] = got


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    g = _group(group)
    comm = _member(g)
    root = group_src if group_src is not None else _root(g, src, "broadcast")
    _agree(g, "broadcast_object_list", root)
    got = comm.obj_bcast(list(object_list) if comm.rank == root else None, root)
    object_list[:] = got


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    g = _group(group)
    comm = _member(g)
    root = group_dst if group_dst is not None else _root(g, dst, "gather")
    _agree(g, "gather_object", root)
    got = comm.obj_gather(obj, root)
    if comm.rank == root:
        object_gather_list[:len(got)] = got


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    g = _group(group)
    comm = _member(g)
    root = group_src if group_src is not None else _root(g, src, "scatter")
    _agree(g, "scatter_object_list", root)
    got = comm.obj_scatter(list(scatter_object_input_list) if comm.rank == root else None, root)
    scatter_object_output_list[0] = got
