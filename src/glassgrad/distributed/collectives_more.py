"""More of torch.distributed on the MPI process groups: P2POp batch_isend_irecv send_object_list
recv_object_list all_to_all_single all_reduce_coalesced all_gather_coalesced monitored_barrier new_subgroups
new_subgroups_by_enumeration get_pg_count get_backend_config all_gather_single reduce_scatter_single
split_group.

Objects travel pickled (as broadcast_object_list's do through mpi4py, and as torch's do): only unpickle
what the ranks of your own job sent.
"""
import pickle
import time
import warnings

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make
from . import _comm
from ._backend import BackendConfig
from .collectives import (_buffer, _member, _run, _tensor, all_gather, all_gather_into_tensor, all_reduce, irecv,
                          isend, recv, reduce_scatter_tensor, send)
from .distributed_c10d import (_WORLD, Fingerprint, GroupMember, ReduceOp, _group, _seconds, get_group_rank,
                               new_group)

_MONITOR_TAG = 32001


class P2POp:
    """One point-to-point operation for batch_isend_irecv: ``P2POp(dist.isend, tensor, peer)`` or with
    dist.irecv; `peer` is a global rank (or `group_peer` a rank of `group`)."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op is not isend and op is not irecv:
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        _tensor(tensor, "P2POp")
        self.op, self.tensor, self.tag = op, tensor, tag
        self.group = _group(group)
        if group_peer is not None:
            if peer is not None:
                raise ValueError("Can't specify both group_rank and global_rank")
            self.peer, self.group_peer = self.group.ranks[group_peer], group_peer
        else:
            if peer is None:
                raise ValueError("Must specify global_rank or group_rank")
            self.peer, self.group_peer = peer, get_group_rank(self.group, peer)

    def __repr__(self):
        me = self.group.rank()
        src, dst = (me, self.group_peer) if self.op is isend else (self.group_peer, me)
        shape = "torch.Size([" + ", ".join(str(s) for s in self.tensor.shape) + "])"
        return f"P2POp({self.op.__name__} pg=0, group_src={src}, group_dst={dst},  {shape}, {self.tensor.dtype})"


def batch_isend_irecv(p2p_op_list):
    """Start every send and receive of the list (non-blocking, so the order across ranks does not matter)
    and return their Works."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    g = p2p_op_list[0].group           # an empty list: IndexError, as torch
    if not all(p.group is g for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, group=p.group, tag=p.tag, group_dst=p.group_peer))
        else:
            works.append(irecv(p.tensor, group=p.group, tag=p.tag, group_src=p.group_peer))
    return works


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None):
    """Send the objects of object_list (pickled) to rank dst, which calls recv_object_list."""
    g = _group(group)
    if group_dst is not None:
        dst = g.ranks[group_dst]
    if dst == g.ranks[_member(g).rank]:
        raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of the "
                         "current process.")
    blobs = [pickle.dumps(o) for o in object_list]
    send(_make(np.array([len(b) for b in blobs], dtype=np.int64)), dst, g)
    send(_make(np.frombuffer(b"".join(blobs), dtype=np.uint8).copy()), dst, g)


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Receive into object_list (in place) what send_object_list sent; returns the sender's global rank
    (any sender when src is None)."""
    g = _group(group)
    if group_src is not None:
        src = g.ranks[group_src]
    sizes = _make(np.zeros(len(object_list), dtype=np.int64))
    sender = recv(sizes, src, g)
    data = _make(np.zeros(int(sizes._data.sum()), dtype=np.uint8))
    recv(data, sender, g)
    raw, at = data._data.tobytes(), 0
    for i, n in enumerate(sizes._data.tolist()):
        object_list[i] = pickle.loads(raw[at:at + n])
        at += n
    return sender


def _same_dtype(tensors):
    last = None
    for t in tensors:
        kind = t.dtype
        if kind.is_complex:         # as torch: complex64 may mix with float32 (complex128 only with itself)
            kind = _dtype.float32 if kind == _dtype.complex64 else _dtype.complex128
        if last is not None and last != kind:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {last} and  {t.dtype}")
        last = kind


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Rank i sends rows input_split_sizes[j] of input (dim 0, in rank order) to rank j and receives
    output_split_sizes[j] rows from rank j into output; without split sizes, equal parts."""
    g = _group(group)
    out, t = _tensor(output, "all_to_all_single", "output"), _tensor(input, "all_to_all_single", "input")
    _same_dtype([out, t])
    comm, n = _member(g), g.size()
    scounts = _splits(input_split_sizes, t, n)
    rcounts = _splits(output_split_sizes, out, n)
    if input_split_sizes is None and output_split_sizes is None and t._data.size != out._data.size:
        raise RuntimeError("all_to_all_single: input and output must have the same number of elements "
                           f"(got {t._data.size} and {out._data.size})")
    send_buf = np.ascontiguousarray(t._data)
    buf, back = _buffer(out)
    check = Fingerprint(comm, "all_to_all_single", np.empty(0, t._data.dtype))
    req = comm.alltoallv(_comm.wire_view(send_buf)[0].reshape(-1), scounts, _comm.wire_view(buf)[0].reshape(-1),
                         rcounts)
    return _run(req, back, async_op, [out], g, check)


def _splits(sizes, t, n):
    """Element counts each rank sends or receives from the row split sizes of dim 0."""
    rows = t.shape[0] if t.dim() else 1
    row = t._data.size // rows if rows else 0
    if sizes is None or len(sizes) == 0:
        if rows % n:
            raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
        return [rows // n * row] * n
    sizes = [int(s) for s in sizes]
    if len(sizes) != n:
        raise RuntimeError("Number of tensor splits not equal to group size")
    if sum(sizes) != rows:
        raise RuntimeError("Split sizes doesn't match total dim 0 size")
    return [s * row for s in sizes]


def _flat(tensors):
    return np.concatenate([np.ascontiguousarray(t._data).reshape(-1) for t in tensors]) if tensors else np.empty(0)


def _unflatten_into(flat, tensors):
    at = 0
    for t in tensors:
        t._data[...] = flat[at:at + t._data.size].reshape(t._data.shape)
        at += t._data.size


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op=False):
    """Deprecated in torch: all_reduce each tensor of the list, done as one all-reduce of them flattened."""
    warnings.warn("`torch.distributed.all_reduce_coalesced` will be deprecated. If you must use it, please "
                  "revisit our documentation later at https://pytorch.org/docs/main/distributed.html"
                  "#collective-functions", FutureWarning, stacklevel=2)
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    _same_dtype(tensors)
    flat = _make(_flat(tensors))
    work = all_reduce(flat, op, group, async_op=True)
    return _run([], lambda: (work.wait(), _unflatten_into(flat._data, tensors)), async_op, tensors)


def all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None, async_op=False):
    """Deprecated in torch: output_tensor_lists[r] gets rank r's input_tensor_list (one all-gather)."""
    warnings.warn("`torch.distributed.all_gather_coalesced` will be deprecated. If you must use it, please "
                  "revisit our documentation later at https://pytorch.org/docs/main/distributed.html"
                  "#collective-functions", FutureWarning, stacklevel=2)
    g = _group(group)
    _same_dtype(list(input_tensor_list) + [t for lst in output_tensor_lists for t in lst])
    flat = _make(_flat(input_tensor_list))
    outs = [_make(np.empty_like(flat._data)) for _ in range(g.size())]
    work = all_gather(outs, flat, group, async_op=True)

    def finish():
        work.wait()
        for lst, o in zip(output_tensor_lists, outs):
            _unflatten_into(o._data, lst)
    return _run([], finish, async_op, output_tensor_lists)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier whose rank 0 names the ranks that did not reach it within `timeout` (RuntimeError on
    rank 0; the others fail waiting for rank 0's answer).  gloo groups only, as torch."""
    g = _group(group)
    if g.comm is None:
        return None
    if g.backend != "gloo":
        raise ValueError("monitored_barrier is only implemented for GLOO backend.")
    secs = g.timeout if timeout is None else _seconds(timeout)
    comm = g.comm
    Fingerprint(comm, "monitored_barrier").verify(time.monotonic() + secs, secs)
    token = np.zeros(1, np.int64)
    deadline = time.monotonic() + secs
    if comm.rank != 0:
        comm.send(token, 0, _MONITOR_TAG).Wait()
        req, _ = comm.recv(np.zeros(1, np.int64), 0, _MONITOR_TAG)
        if not _comm.wait_all([req], deadline):
            req.req.Cancel()
            raise RuntimeError(f"Rank {g.ranks[comm.rank]} timed out in monitoredBarrier after {int(secs * 1000)} "
                               "ms waiting for rank 0")
        return None
    failed = []
    for r in range(1, comm.size):
        req, _ = comm.recv(np.zeros(1, np.int64), r, _MONITOR_TAG)
        if not _comm.wait_all([req], deadline):
            req.req.Cancel()
            failed.append(g.ranks[r])
            if not wait_all_ranks:
                break
    if failed:
        who = f"Rank {failed[0]}" if len(failed) == 1 else "Ranks " + ", ".join(str(r) for r in failed)
        raise RuntimeError(f"{who} failed to pass monitoredBarrier in {int(secs * 1000)} ms")
    _comm.wait_all([comm.send(token, r, _MONITOR_TAG) for r in range(1, comm.size)])
    return None


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    """Split the world into groups of `group_size` consecutive ranks: (this rank's group, all of them)."""
    world = _group(None)
    n = world.size()
    if group_size is None:
        raise ValueError("Default group size only takes effect when CUDA is available.If your subgroup using a "
                         "backend that does not depend on CUDA,please pass in 'group_size' correctly.")
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    if group_size > n:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({n})")
    if n % group_size != 0:
        raise ValueError(f"The world size ({n}) must be divisible by 'group_size={group_size}'")
    return _subgroups([list(range(s, s + group_size)) for s in range(0, n, group_size)], timeout, backend)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None,
                                 group_desc=None):
    """A group for each list of global ranks: (this rank's group or None, all of them)."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    seen = {}
    for ranks in ranks_per_subgroup_list:
        for r in ranks:
            if r in seen:
                raise ValueError(f"Rank {r} has appeared in both subgroup {seen[r]} and {ranks}")
            seen[r] = ranks
    return _subgroups(ranks_per_subgroup_list, timeout, backend)


def _subgroups(rank_lists, timeout, backend):
    me = _group(None).rank()
    mine, groups = None, []
    for ranks in rank_lists:
        pg = new_group(ranks, timeout=timeout, backend=backend)
        groups.append(pg)
        if me in ranks:
            mine = pg
    return mine, groups


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """all_gather_into_tensor under its newer name: output is the inputs of the ranks concatenated or
    stacked along dim 0."""
    return all_gather_into_tensor(output_tensor, input_tensor, group, async_op)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """reduce_scatter_tensor under its newer name."""
    return reduce_scatter_tensor(output, input, op, group, async_op)


def split_group(parent_pg=None, split_ranks=None, timeout=None, pg_options=None, group_desc=None):
    """torch splits only a default group bound to an accelerator (init_process_group's device_id, which
    must be one), so on a CPU build it always ends in torch's error; the same here."""
    if split_ranks is None or len(split_ranks) == 0:
        raise ValueError("split_ranks cannot be None or empty")
    _group(None)
    raise RuntimeError("No device associated with the default pg, not safe to split any process groups")


def get_pg_count():
    """How many process groups exist: the default one and those new_group made since (0 before init)."""
    return _WORLD["count"]


def get_backend_config(group=None):
    """The group's backend per device type, as torch prints it: "cpu:gloo,cuda:gloo"."""
    g = _group(group)
    if g is GroupMember.NON_GROUP_MEMBER or g.comm is None:
        raise ValueError("Invalid process group specified")
    return str(BackendConfig(g.backend))


__all__ = ["P2POp", "batch_isend_irecv", "send_object_list", "recv_object_list", "all_to_all_single",
           "all_reduce_coalesced", "all_gather_coalesced", "monitored_barrier", "new_subgroups",
           "new_subgroups_by_enumeration", "get_pg_count", "get_backend_config", "all_gather_single",
           "reduce_scatter_single", "split_group"]
