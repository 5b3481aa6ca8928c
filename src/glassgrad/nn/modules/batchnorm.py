"""BatchNorm1d / 2d / 3d and the shared base of the running-statistics norms (_NormBase).

Buffers running_mean (zeros), running_var (ones), num_batches_tracked (int64, 0-d); training uses the
batch statistics and updates the running ones in place (momentum=None: cumulative average,
factor 1 / num_batches_tracked); eval mode normalises with the running statistics.
"""
from .module import Module
from .normalization import _affine_parameters, _reset_affine
from .. import functional as F
from ...ops.creation import zeros, ones, tensor
from ..._dtype import int64

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


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
