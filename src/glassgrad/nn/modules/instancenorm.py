"""InstanceNorm1d / 2d / 3d: per-sample, per-channel normalisation (batch norm over an (1, N*C, ...) view).

Defaults affine=False, track_running_stats=False; inputs without a batch dim are normalised as a batch of 1.
"""
import warnings

from .batchnorm import _NormBase
from .. import functional as F

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _no_batch_dim = 0
    _dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input):
        if input.dim() not in self._dims:
            raise ValueError(f"expected {self._dims[0]}D or {self._dims[1]}D input (got {input.dim()}D input)")

    def _get_no_batch_dim(self):
        return self._no_batch_dim

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
            if keys:
                klass = type(self).__name__
                names = " and ".join(f'"{k}"' for k in keys)
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. If "
                    f"state_dict is a checkpoint saved before 0.4.0, this may be expected because {klass} does not "
                    f"track running stats by default since 0.4.0. Please remove these keys from state_dict. If the "
                    f"running stats are actually needed, instead set track_running_stats=True in {klass} to enable "
                    f"them. See the documentation of {klass} for details.")
                for k in keys:
                    state_dict.pop(k)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        fdim = input.dim() - self._no_batch_dim
        if input.size(fdim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={fdim} to match num_features ({self.num_features}), "
                                 f"but got: {input.size(fdim)}.")
            warnings.warn(f"input's size at dim={fdim} does not match num_features. You can silence this warning by "
                          f"not passing in num_features, which is not used because affine=False", stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    _no_batch_dim = 2
    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    _no_batch_dim = 3
    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    _no_batch_dim = 4
    _dims = (4, 5)


def __getattr__(name):
    """torch's module path of the lazy forms (LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d), defined in lazy.py (which imports this
    module, so they resolve on first use)."""
    if name in ('LazyInstanceNorm1d', 'LazyInstanceNorm2d', 'LazyInstanceNorm3d'):
        from . import lazy
        return getattr(lazy, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
