"""Batch norm with statistics shared across processes (the node PyTorch shows for nn.SyncBatchNorm).

ops: sync_batch_norm (SyncBatchNormBackward, the name of torch's autograd.Function node).

The collectives are passed in, so ops stays below distributed/ (the layers of the house): nn.SyncBatchNorm
hands over two functions on float64 host arrays,
    gather(local)  -> (world_size, len(local)): every rank's `local`, stacked in rank order (all_gather)
    all_sum(local) -> the sum of `local` over the ranks (all_reduce SUM)
Forward: each rank computes the mean and biased variance of its channels and its count (N*H*W...), gathers
(mean, var, count) from every rank, and combines them (ranks with count 0 drop out):
    mean = sum(n_r * mean_r) / n,   var = sum(n_r * (var_r + (mean_r - mean)^2)) / n,   n = sum(n_r)
The running statistics are updated with the global mean and the unbiased global variance var * n / (n - 1).
Backward: the per-channel sums sum(dy) and sum(dy * (x - mean)) are summed over the ranks, so
    dx = (dy - sum_dy / n - (x - mean) * invstd^2 * sum_dy_xmu / n) * invstd * weight
is the input gradient of batch norm on the concatenated global batch; the weight / bias gradients stay
local (sum_dy_xmu * invstd, sum_dy), as in torch: DistributedDataParallel reduces them.
Unlike torch, which gathers (mean, invstd) in the input's dtype, the statistics travel in float64.
"""
import numpy as np

from .. import backend
from ._core import make, edge, save_in, grad
from ..autograd.graph import Node, freed_error
from .norm import _float_kernel, _check_param_dtypes, _numel_check

__all__ = ["sync_batch_norm"]


def _axes(x):
    """The axes a channel's statistics run over (all but 1)."""
    return (0,) + tuple(range(2, x.ndim))


def _local_stats(x):
    """(mean, biased var, count) of each channel of this rank's array, in float64 on the host; zeros and
    count 0 for an empty input (it still takes part in the gather)."""
    c = x.shape[1]
    n = x.size // c
    if n == 0:
        return np.zeros(c), np.zeros(c), 0
    a = x if x.dtype in (np.float32, np.float64) else x.astype(np.float64)
    mean = a.mean(axis=_axes(x), dtype=np.float64)
    xc = a - _col(mean, a)
    d = xc.mean(axis=_axes(x), dtype=np.float64)        # the rounding of the mean, corrected
    var = np.square(xc).mean(axis=_axes(x), dtype=np.float64) - d * d
    return backend.to_host(mean + d), backend.to_host(np.maximum(var, 0.0)), n


def _global_stats(rows, c):
    """Global (mean, biased var, count) from the gathered rows [mean (c), var (c), count] of every rank."""
    rows = rows[rows[:, 2 * c] >= 1]                      # ranks with an empty input drop out
    counts = rows[:, 2 * c]
    n = counts.sum()
    if n == 0:
        return np.full(c, np.nan), np.full(c, np.nan), 0.0
    means, vars_ = rows[:, :c], rows[:, c:2 * c]
    mean = (counts[:, None] * means).sum(axis=0) / n
    var = (counts[:, None] * (vars_ + np.square(means - mean))).sum(axis=0) / n
    return mean, var, float(n)


def _update_running(running_mean, running_var, mean, var, n, momentum):
    """running = (1 - momentum) * running + momentum * batch statistic (the variance unbiased), in place."""
    m = float(momentum)
    if running_mean is not None:
        rm = running_mean._data
        new = m * mean + (1 - m) * backend.to_host(rm).astype(np.float64).reshape(-1)
        rm[...] = backend.xp_of(rm).asarray(new.astype(rm.dtype)).reshape(rm.shape)
    if running_var is not None:
        rv = running_var._data
        unbiased = var * (n / (n - 1)) if n > 1 else np.full(var.shape, np.nan)
        new = m * unbiased + (1 - m) * backend.to_host(rv).astype(np.float64).reshape(-1)
        rv[...] = backend.xp_of(rv).asarray(new.astype(rv.dtype)).reshape(rv.shape)


def _col(v, like):
    """Per-channel float64 vector -> a (1, C, 1, ...) array of like's dtype and array module, broadcasting
    against `like` (results keep the input's memory layout)."""
    return backend.xp_of(like).asarray(v.astype(like.dtype)).reshape((1, -1) + (1,) * (like.ndim - 2))


class SyncBatchNormBackward(Node):
    """The node of sync_batch_norm; next_functions has an edge per Tensor argument (input, weight, bias,
    running_mean, running_var), as torch's custom Function node."""
    __slots__ = ("mean", "invstd", "n", "all_sum", "w_at", "b_at", "p_dtype")
    _saved_names = ("input", "weight")

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            raise RuntimeError("SyncBatchNorm: double backward (create_graph=True) is not implemented: its "
                               "backward sums statistics across processes")
        saved = self._saved
        if saved is None:
            raise freed_error()
        x = ns.unpack_one(self, saved[0])
        w = None if saved[1] is None else ns.unpack_one(self, saved[1])
        out = [None] * len(self.next_functions)
        want_x = self.next_functions[0][0] is not None
        c = x.shape[1]
        if x.size == 0:         # an empty input still takes part in the all-reduce its peers make
            if want_x:
                self.all_sum(np.zeros(2 * c))
            return tuple(out)
        g = g.astype(x.dtype, copy=False)
        axes = _axes(x)
        xmu = x - _col(self.mean, x)
        sum_dy = backend.to_host(g.sum(axis=axes, dtype=np.float64))
        sum_dy_xmu = backend.to_host((g * xmu).sum(axis=axes, dtype=np.float64))
        if want_x:
            total = self.all_sum(np.concatenate([sum_dy, sum_dy_xmu]))
            inv, n = self.invstd, self.n
            scale = inv if w is None else inv * backend.to_host(w).astype(np.float64).reshape(-1)
            xmu *= _col(inv * inv * total[c:] / n, x)
            out[0] = (g - _col(total[:c] / n, x) - xmu) * _col(scale, x)
        if self.w_at is not None and self.next_functions[self.w_at][0] is not None:
            out[self.w_at] = backend.xp_of(x).asarray((sum_dy_xmu * self.invstd).astype(self.p_dtype))
        if self.b_at is not None and self.next_functions[self.b_at][0] is not None:
            out[self.b_at] = backend.xp_of(x).asarray(sum_dy.astype(self.p_dtype))
        return tuple(out)


def _check(input, weight, bias, running_mean, running_var):
    _float_kernel(input, "batch_norm")
    _check_param_dtypes(input, weight, bias, running_mean, running_var)
    x = input._data
    if x.ndim < 2:
        raise ValueError(f"expected at least 2D input (got {x.ndim}D input)")
    if x.shape[1] == 0:
        raise ValueError("SyncBatchNorm number of input channels should be non-zero")
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _numel_check(t, name, x.shape[1])


def _node(input, weight, bias, running_mean, running_var):
    """The node, when a gradient is wanted: an edge per Tensor argument (as torch's Function node)."""
    args = [t for t in (input, weight, bias, running_mean, running_var) if t is not None]
    if not (grad.enabled and any(t._rg for t in args)):
        return None
    node = SyncBatchNormBackward(tuple(edge(t) for t in args))
    node.w_at = 1 if weight is not None else None
    node.b_at = None if bias is None else (2 if weight is not None else 1)
    node.p_dtype = (weight if weight is not None else bias if bias is not None else input)._data.dtype
    node._saved = (save_in(input), None if weight is None else save_in(weight))
    return node


def sync_batch_norm(input, weight, bias, running_mean, running_var, eps, momentum, gather, all_sum):
    """Training-mode batch norm over the global batch of every rank that `gather` / `all_sum` reach
    (module docstring); updates running_mean / running_var in place when given."""
    _check(input, weight, bias, running_mean, running_var)
    x = input._data
    c = x.shape[1]
    mean, var, count = _local_stats(x)
    rows = gather(np.concatenate([mean, var, [float(count)]]))
    mean, var, n = _global_stats(np.asarray(rows, dtype=np.float64).reshape(-1, 2 * c + 1), c)
    if n:
        _update_running(running_mean, running_var, mean, var, n, momentum)
    with np.errstate(all="ignore"):
        invstd = 1.0 / np.sqrt(var + eps)
        if x.size:
            scale = invstd if weight is None else invstd * backend.to_host(weight._data).astype(np.float64)
            y = (x - _col(mean, x)) * _col(scale, x)
            if bias is not None:
                y += _col(backend.to_host(bias._data).astype(np.float64), x)
        else:
            y = x.copy()
    node = _node(input, weight, bias, running_mean, running_var)
    if node is None:
        return make(y)
    node.mean, node.invstd, node.n, node.all_sum = mean, invstd, n, all_sum
    return make(y, True, node)
