"""torch.nn.parallel.DistributedDataParallel on glassgrad.distributed (MPI).

At construction the parameters and buffers are broadcast from rank 0.  Before each forward the buffers are
broadcast again (``broadcast_buffers``).  During backward every parameter's post-accumulate-grad hook marks it
ready; when all parameters of a bucket (``bucket_cap_mb``, filled in reverse registration order, as torch)
are ready, the bucket's gradients -- divided by the world size -- are summed across ranks with a
non-blocking all-reduce, so communication overlaps the rest of backward.  The last ready parameter waits for
every bucket and writes the averaged gradients back into ``.grad``, so all of it is done when ``backward()``
returns.  ``no_sync()`` skips the reduction (gradients accumulate locally until the next synchronised
backward); ``find_unused_parameters`` marks the parameters the forward's graph cannot reach as ready.
"""
import contextlib

import numpy as np

from ... import distributed as dist
from ..._tensor import Tensor, _make
from ...autograd.traversal import iter_nodes, is_accumulate_grad
from ..modules.module import Module

_MB = 1024 * 1024


class _Bucket:
    """Parameters whose gradients travel in one all-reduce, and the flat buffer (kept across steps) they are
    copied into, already divided by the world size, as each becomes ready."""
    __slots__ = ("params", "pending", "work", "flat", "offsets")

    def __init__(self, params):
        self.params = params
        self.pending = len(params)
        self.work = None
        sizes = [p._data.size for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
        self.flat = _make(np.empty(self.offsets[-1], params[0]._data.dtype))

    def part(self, i):
        return self.flat._data[self.offsets[i]:self.offsets[i + 1]]


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 init_sync=True, process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                 check_reduction=False, gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        if not dist.is_initialized():
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group.")
        self.module = module
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * _MB)
        self._params = [p for p in module.parameters() if p.requires_grad]
        self._world = dist.get_world_size(process_group)
        if init_sync:
            self._sync_module_states()
        self._buckets = self._make_buckets()
        self._bucket_of = {id(p): (b, i) for b in self._buckets for i, p in enumerate(b.params)}
        self._hooks = [p.register_post_accumulate_grad_hook(self._on_grad) for p in self._params]
        self._expect_sync = False

    # -- construction ------------------------------------------------------------------------------------
    def _sync_module_states(self):
        self._broadcast_coalesced(list(self.module.parameters()) + list(self.module.buffers()))

    def _broadcast_coalesced(self, tensors):
        """Broadcast from the group's first rank, one flat message per dtype (as torch coalesces buffers):
        a BatchNorm net's many small buffers cost one collective, not one each."""
        src = dist.get_global_rank(self.process_group, 0) if self.process_group is not None else 0
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype, []).append(t)
        for group in by_dtype.values():
            flat = _make(np.concatenate([t._data.reshape(-1) for t in group]))
            dist.broadcast(flat, src=src, group=self.process_group)
            off = 0
            for t in group:
                n = t._data.size
                t._data[...] = flat._data[off:off + n].reshape(t._data.shape)
                off += n

    def _make_buckets(self):
        """Parameters in reverse registration order (roughly the order backward produces their gradients),
        cut into buckets of at most bucket_cap_mb (the first one 1 MB, as torch) and of one dtype."""
        buckets, cur, size, cap = [], [], 0, min(_MB, self.bucket_bytes_cap)
        for p in reversed(self._params):
            nbytes = p._data.nbytes
            if cur and (size + nbytes > cap or p._data.dtype != cur[0]._data.dtype):
                buckets.append(_Bucket(cur))
                cur, size, cap = [], 0, self.bucket_bytes_cap
            cur.append(p)
            size += nbytes
        if cur:
            buckets.append(_Bucket(cur))
        return buckets

    # -- forward -----------------------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers and self._world > 1:
            self._broadcast_coalesced(list(self.module.buffers()))
        out = self.module(*inputs, **kwargs)
        sync = bool(self.require_backward_grad_sync)
        self._expect_sync = sync
        if sync:
            for b in self._buckets:
                b.pending, b.work = len(b.params), None
            if self.find_unused_parameters:
                self._mark_unused(out)
        return out

    def _mark_unused(self, out):
        """Parameters the output's graph does not reach get no gradient: count them as ready now."""
        roots = [t for t in _tensors(out) if t.grad_fn is not None]
        reached = {id(n.variable) for n in iter_nodes(roots) if is_accumulate_grad(n)}
        for p in self._params:
            if id(p) not in reached:
                self._ready(p)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside; the first backward after it averages the sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # -- backward: buckets ------------------------------------------------------------------------------
    def _on_grad(self, p):
        if self._expect_sync:
            self._ready(p)

    def _ready(self, p):
        """p's gradient is final for this backward: copy it, divided by the world size, into its bucket; the
        bucket's all-reduce starts when its last gradient arrives.  Buckets already sent are polled, since MPI
        moves data only inside MPI calls."""
        b, i = self._bucket_of[id(p)]
        part = b.part(i)
        if p.grad is None:
            part[...] = 0
        else:
            np.divide(p.grad._data.reshape(-1), part.dtype.type(self._world), out=part)
        b.pending -= 1
        for x in self._buckets:
            if x.work is not None:
                x.work.is_completed()
        if b.pending == 0:
            b.work = dist.all_reduce(b.flat, group=self.process_group, async_op=True)
            if all(x.work is not None for x in self._buckets):
                self._finish()

    def _finish(self):
        for b in self._buckets:
            b.work.wait()
            for i, p in enumerate(b.params):
                if p.grad is not None:
                    p.grad._data[...] = b.part(i).reshape(p._data.shape)
        self._expect_sync = False


def _tensors(out):
    if isinstance(out, Tensor):
        yield out
    elif isinstance(out, (list, tuple)):
        for o in out:
            yield from _tensors(o)
    elif isinstance(out, dict):
        for o in out.values():
            yield from _tensors(o)
