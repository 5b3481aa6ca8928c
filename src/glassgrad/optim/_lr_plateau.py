"""ReduceLROnPlateau: the metric-driven schedule (exported by ``glassgrad.optim.lr_scheduler``).

The rate is multiplied by ``factor`` once the metric given to ``step(metrics)`` has not improved for
``patience`` epochs, then left alone for ``cooldown`` epochs; ``min_lr`` floors it per group.
"""
import math
import warnings

from .lr_scheduler import EPOCH_DEPRECATION_WARNING, LRScheduler, _column, _require_optimizer, _store

__all__ = ["ReduceLROnPlateau"]


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rate by ``factor`` when the metric has not improved for ``patience`` epochs."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        count = len(optimizer.param_groups)
        per_group = isinstance(min_lr, (list, tuple))
        if per_group and len(min_lr) != count:
            raise ValueError(f"expected {count} min_lrs, got {len(min_lr)}")
        self.default_min_lr = None if per_group else min_lr
        self.min_lrs = list(min_lr) if per_group else [min_lr for _ in range(count)]
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = _column(optimizer, "lr")
        self._set_criterion(mode, threshold, threshold_mode)
        self._clear()

    def _set_criterion(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf

    def _clear(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self):
        return 0 < self.cooldown_counter

    def _improves(self, value, best):
        th = self.threshold
        relative = self.threshold_mode == "rel"
        if self.mode == "min":
            return value < (best * (1.0 - th) if relative else best - th)
        return value > (best * (th + 1.0) if relative else best + th)

    def step(self, metrics, epoch=None):
        value = float(metrics)
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._improves(value, self.best):
            self.best, self.num_bad_epochs = value, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0   # bad epochs during cooldown do not count
        if self.patience < self.num_bad_epochs:
            self._shrink()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = _column(self.optimizer, "lr")

    def _shrink(self):
        groups = self.optimizer.param_groups
        if len(self.min_lrs) != len(groups):
            fallback = self.default_min_lr
            if fallback is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new param group "
                    "being added to the optimizer. Please modify the `min_lrs` field to match the length of the "
                    "`optimizer` param groups.")
            self.min_lrs = [fallback for _ in groups]
        for group, floor in zip(groups, self.min_lrs):
            now = float(group["lr"])
            reduced = max(now * self.factor, floor)
            if now - reduced > self.eps:
                _store(group, "lr", reduced)

    def load_state_dict(self, state_dict):
        vars(self).update(state_dict)
        self._set_criterion(self.mode, self.threshold, self.threshold_mode)
