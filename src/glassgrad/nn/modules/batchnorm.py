"""BatchNorm1d / 2d / 3d, SyncBatchNorm and the shared base of the running-statistics norms (_NormBase).

Buffers running_mean (zeros), running_var (ones), num_batches_tracked (int64, 0-d); training uses the
batch statistics and updates the running ones in place (momentum=None: cumulative average,
factor 1 / num_batches_tracked); eval mode normalises with the running statistics.
SyncBatchNorm takes the batch statistics over every process of a group (ops/sync_batch_norm.py, with the
collectives of glassgrad.distributed passed in).
"""
from .module import Module
from .normalization import _affine_parameters, _reset_affine
from .. import functional as F
from ... import distributed as dist
from ...ops.creation import zeros, ones, tensor, empty, from_numpy
from ...ops.sync_batch_norm import sync_batch_norm
from ..._dtype import int64, float64

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    """Parameters weight / bias (affine) and the running-statistics buffers (track_running_stats)."""
    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, affine, num_features, bias, device, dtype)
        stats = {"running_mean": None, "running_var": None, "num_batches_tracked": None}
        if track_running_stats:
            stats = {"running_mean": zeros(num_features, device=device, dtype=dtype),
                     "running_var": ones(num_features, device=device, dtype=dtype),
                     "num_batches_tracked": tensor(0, dtype=int64, device=device)}
        for name, value in stats.items():
            self.register_buffer(name, value)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # checkpoints from before num_batches_tracked existed
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                nbt = self.num_batches_tracked
                state_dict[key] = nbt if nbt is not None else tensor(0, dtype=int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    def _forward_args(self):
        """(factor, use_batch, running_mean, running_var) of this call; counts the batch when tracking."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        # batch statistics in training, and in eval when there are no running statistics
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        # the running statistics are passed when they are updated (training + tracking) or used (eval)
        pass_stats = not self.training or self.track_running_stats
        return (factor, use_batch, self.running_mean if pass_stats else None,
                self.running_var if pass_stats else None)

    def forward(self, input):
        self._check_input_dim(input)
        factor, use_batch, running_mean, running_var = self._forward_args()
        return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


def _collectives(group, world_size):
    """The two collectives sync_batch_norm takes, on float64 host arrays: gather (all_gather, stacked in rank
    order) and all_sum (all_reduce SUM)."""
    def gather(local):
        rows = empty((world_size, local.size), dtype=float64)
        dist.all_gather_into_tensor(rows, from_numpy(local), group)
        return rows.numpy()

    def all_sum(local):
        t = from_numpy(local.copy())
        dist.all_reduce(t, dist.ReduceOp.SUM, group)
        return t.numpy()
    return gather, all_sum


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose training statistics are those of the global batch: the batches of every process of
    `process_group` (default: the whole world) together, as torch.nn.SyncBatchNorm.

    The input is (N, C, +).  In training, with an initialised process group of more than one process, the
    per-channel mean and variance are gathered from every rank with its count (so ranks may hold different
    batch sizes, or none), combined, and used to normalise and to update the running statistics (unbiased
    variance of the global batch); backward sums the gradient statistics over the ranks, so the input
    gradient is that of BatchNorm on the concatenated batch.  The weight and bias gradients stay local for
    DistributedDataParallel to reduce.  In eval mode, or without a process group of more than one process,
    it is BatchNorm (F.batch_norm).  Convert a model's BatchNorm*d layers with convert_sync_batchnorm before
    wrapping it in DistributedDataParallel.

    Departure from torch: torch's SyncBatchNorm raises ValueError ("SyncBatchNorm expected input tensor to
    be on GPU or ...") for a CPU input once a process group is initialised; glassgrad synchronises CPU
    tensors over MPI, its point being distributed training on CPUs.  The statistics travel in float64.
    Double backward (create_graph=True) through the synchronised node is not implemented.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def _sync_group(self, use_batch):
        """(group, world size) to synchronise over, or None when BatchNorm does (eval, no process group, or a
        world of one)."""
        if not (use_batch and self.training and dist.is_available() and dist.is_initialized()):
            return None
        group = self.process_group if self.process_group else dist.GroupMember.WORLD
        world_size = dist.get_world_size(group)
        return (group, world_size) if world_size > 1 else None

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor, use_batch, running_mean, running_var = self._forward_args()
        sync = self._sync_group(use_batch)
        if sync is None:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, use_batch, factor,
                                self.eps)
        return sync_batch_norm(input, self.weight, self.bias, running_mean, running_var, self.eps, factor,
                               *_collectives(*sync))

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Every BatchNorm*d (any _BatchNorm) in `module` replaced by a SyncBatchNorm that takes over its
        parameters (the same Parameter objects), running statistics, training flag and qconfig; returns the
        converted module (a new one when `module` itself is a batch norm)."""
        out = module
        if isinstance(module, _BatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


def __getattr__(name):
    """torch's module path of the lazy forms (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d), defined in lazy.py (which imports this
    module, so they resolve on first use)."""
    if name in ('LazyBatchNorm1d', 'LazyBatchNorm2d', 'LazyBatchNorm3d'):
        from . import lazy
        return getattr(lazy, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
