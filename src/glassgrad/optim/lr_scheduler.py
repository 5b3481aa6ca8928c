"""torch.optim.lr_scheduler: learning-rate schedules.

glassgrad's own layout (the public API, the state_dict keys and the floating-point formulas follow PyTorch):

* ``LRScheduler`` keeps the public state (``optimizer``, ``base_lrs``, ``last_epoch``, ``_last_lr`` ...) and
  drives every update through ``_advance``: the epoch counter moves, the subclass says which rates come next
  (``get_lr()``, or the closed form ``_closed_form()`` when ``step`` was given an explicit epoch) and the
  values are written into the parameter groups.
* Built-in schedules derive from ``_Builtin``, whose ``get_lr`` is "warn when called from outside ``step()``,
  then ``_chain()``".  Schedules that only rescale the current rate (``_Rescaling``) describe themselves by
  two numbers per epoch: ``_ratio(epoch)`` (multiplier of the current rate, ``None`` = unchanged) and
  ``_closed_ratio(epoch)`` (multiplier of the base rate).
* ``optimizer.step`` is replaced, once per optimizer, by a small counting wrapper so that the first
  ``scheduler.step()`` can tell whether ``optimizer.step()`` already ran.

Recursive forms are evaluated in the same order of float operations as PyTorch so that sequences agree bit for
bit.  CyclicLR, OneCycleLR and CosineAnnealingWarmRestarts live in ``_lr_cyclic``, ReduceLROnPlateau in
``_lr_plateau``.
"""
import contextlib
import functools
import math
import types
import warnings
import weakref
import bisect
import collections

from .._tensor import Tensor
from .optimizer import Optimizer, _to_scalar

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
           "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
           "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR", "LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from "
    "None, the closed form is used instead of the new chainable form, where available. Please open an issue "
    "if you are unable to replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.")

_SEE_DOCS = "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
_MSG_ORDER = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should "
    "call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
    "will result in PyTorch skipping the first value of the learning rate schedule. " + _SEE_DOCS)
_MSG_REPLACED_STEP = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler initialization. Please, "
    "make sure to call `optimizer.step()` before `lr_scheduler.step()`. " + _SEE_DOCS)
_MSG_USE_GET_LAST_LR = "To get the last learning rate computed by the scheduler, please use `get_last_lr()`."
_MSG_NO_INITIAL_LR = (
    "param 'initial_lr' is not specified in param_groups[{}] when resuming scheduler with last_epoch >= 0.\n"
    "This typically happens when:\n"
    "1. You're trying to resume training from a checkpoint but haven't properly loaded the optimizer state\n"
    "2. You're using last_epoch >= 0 for a fresh training run (not recommended)")


# ---------------------------------------------------------------------------------------------------------
# small utilities

def _snapshot(v):
    """Group values are handed out as copies when they are tensors (never aliases of the group's tensor)."""
    return v.clone() if isinstance(v, Tensor) else v


def _column(optimizer, key):
    """``[group[key] for group in optimizer.param_groups]`` with tensors copied."""
    return [_snapshot(group[key]) for group in optimizer.param_groups]


def _store(group, key, value):
    """Write a hyper-parameter; a tensor-valued entry keeps its identity and is overwritten in place."""
    held = group[key]
    if isinstance(held, Tensor):
        held.fill_(_to_scalar(value))
    else:
        group[key] = value


def _per_group(name, optimizer, value):
    """Broadcast a scalar to one entry per param group (a list/tuple must already have that length)."""
    count = len(optimizer.param_groups)
    if not isinstance(value, (list, tuple)):
        return [_snapshot(value) for _ in range(count)]
    if len(value) != count:
        raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has "
                         f"{len(value)} values, param_groups has {count}.")
    return [_snapshot(v) for v in value]


def _require_optimizer(optimizer):
    if isinstance(optimizer, Optimizer):
        return
    raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


@contextlib.contextmanager
def _raised(sched, flag):
    """Set the boolean attribute ``flag`` of ``sched`` for the duration of the block."""
    setattr(sched, flag, True)
    try:
        yield
    finally:
        setattr(sched, flag, False)


def _warn_outside_step(sched):
    if not sched._get_lr_called_within_step:
        warnings.warn(_MSG_USE_GET_LAST_LR, UserWarning, stacklevel=3)


# ---------------------------------------------------------------------------------------------------------
# tracking optimizer.step() calls

_COUNTING = "_glassgrad_counts_steps"   # marker on the wrapper installed as ``optimizer.step``
_CALLS = "_glassgrad_step_calls"        # number of optimizer.step() calls seen by the wrapper


def _count_optimizer_steps(optimizer):
    """Install (once per optimizer) a wrapper around the bound ``optimizer.step`` that counts its calls.

    The wrapper holds the optimizer through a weak reference so that no reference cycle is created."""
    bound = optimizer.step
    if getattr(bound, _COUNTING, False):
        return
    plain = bound.__func__
    target = weakref.ref(optimizer)

    def counting_step(*args, **kwargs):
        opt = target()
        setattr(opt, _CALLS, getattr(opt, _CALLS, 0) + 1)
        return plain(opt, *args, **kwargs)

    functools.update_wrapper(counting_step, plain)
    setattr(counting_step, _COUNTING, True)
    optimizer.step = counting_step


def _check_call_order(optimizer):
    if not getattr(optimizer.step, _COUNTING, False):
        warnings.warn(_MSG_REPLACED_STEP, UserWarning, stacklevel=3)
    elif not getattr(optimizer, _CALLS, 0):
        warnings.warn(_MSG_ORDER, UserWarning, stacklevel=3)


# ---------------------------------------------------------------------------------------------------------
# base classes

class LRScheduler:
    """Adjusts ``param_group["lr"]`` of an optimizer each time ``step()`` is called."""

    _get_lr_called_within_step = False
    _is_initial = False
    _closed_form = None   # built-ins with a closed form override this with a method

    def __init__(self, optimizer, last_epoch=-1):
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        groups = optimizer.param_groups
        if last_epoch == -1:
            for group in groups:
                if "initial_lr" not in group:
                    group["initial_lr"] = _snapshot(group["lr"])
        else:
            for idx, group in enumerate(groups):
                if "initial_lr" not in group:
                    raise KeyError(_MSG_NO_INITIAL_LR.format(idx))
        self.base_lrs = _column(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _count_optimizer_steps(optimizer)
        self._first_step()

    def _first_step(self):
        self._step_count = 0
        with _raised(self, "_is_initial"):
            self.step()

    def get_lr(self):
        """The learning rates for ``self.last_epoch``; implemented by subclasses."""
        raise NotImplementedError

    def get_last_lr(self):
        return self._last_lr

    def step(self, epoch=None):
        if self._step_count == 1:
            _check_call_order(self.optimizer)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._advance(epoch)

    def _advance(self, epoch):
        with _raised(self, "_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                rates = self.get_lr()
            else:
                self.last_epoch = epoch
                # user subclasses written for PyTorch may provide the closed form under PyTorch's hook name
                closed = self._closed_form or getattr(self, "_get_closed_form_lr", None)
                rates = self.get_lr() if closed is None else closed()
        self._publish(rates)

    def _publish(self, rates):
        for group, lr in zip(self.optimizer.param_groups, rates):
            _store(group, "lr", lr)
        self._last_lr = _column(self.optimizer, "lr")

    def state_dict(self):
        return {key: val for key, val in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        vars(self).update(state_dict)


class _LRScheduler(LRScheduler):
    """Deprecated alias kept for old code (a subclass, as in PyTorch)."""


class _Builtin(LRScheduler):
    """Built-in schedules: ``get_lr`` warns outside ``step()`` and returns ``self._chain()``."""

    def _start(self, optimizer, last_epoch, **hyper):
        """Record the public hyper-parameters, then run the common initialisation (and the first step)."""
        for name, value in hyper.items():
            setattr(self, name, value)
        super(_Builtin, self).__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_outside_step(self)
        return self._chain()

    def _current(self):
        return _column(self.optimizer, "lr")


class _Rescaling(_Builtin):
    """Schedules described by a per-epoch multiplier of the current rate and one of the base rate."""

    def _ratio(self, epoch):
        raise NotImplementedError

    def _closed_ratio(self, epoch):
        raise NotImplementedError

    def _chain(self):
        mult = self._ratio(self.last_epoch)
        if mult is None:
            return self._current()
        return [group["lr"] * mult for group in self.optimizer.param_groups]

    def _closed_form(self):
        mult = self._closed_ratio(self.last_epoch)
        return [lr0 * mult for lr0 in self.base_lrs]


# ---------------------------------------------------------------------------------------------------------
# lambda-driven schedules

class _FunctionSchedule(_Builtin):
    """Shared by LambdaLR / MultiplicativeLR: one callable per group; state_dict keeps callable objects' state."""

    def _take_functions(self, optimizer, lr_lambda):
        self.optimizer = optimizer
        count = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != count:
                raise ValueError(f"Expected {count} lr_lambdas, but got {len(lr_lambda)}")
            fns = list(lr_lambda)
        else:
            fns = [lr_lambda for _ in range(count)]
        self.lr_lambdas = fns

    def state_dict(self):
        out = {key: val for key, val in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = [None if isinstance(f, types.FunctionType) else dict(f.__dict__)
                             for f in self.lr_lambdas]
        return out

    def load_state_dict(self, state_dict):
        saved = state_dict.pop("lr_lambdas")
        try:
            vars(self).update(state_dict)
        finally:
            state_dict["lr_lambdas"] = saved
        for fn, attrs in zip(self.lr_lambdas, saved):
            if attrs is not None:
                fn.__dict__.update(attrs)


class LambdaLR(_FunctionSchedule):
    """lr = initial lr * lr_lambda(epoch)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self._take_functions(optimizer, lr_lambda)
        self._start(optimizer, last_epoch)

    def _chain(self):
        e = self.last_epoch
        return [lr0 * fn(e) for lr0, fn in zip(self.base_lrs, self.lr_lambdas)]


class MultiplicativeLR(_FunctionSchedule):
    """lr = previous lr * lr_lambda(epoch)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self._take_functions(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        self._start(optimizer, last_epoch)

    def _chain(self):
        if self._is_initial:
            return self._current()
        e = self.last_epoch
        return [group["lr"] * fn(e) for group, fn in zip(self.optimizer.param_groups, self.lr_lambdas)]


# ---------------------------------------------------------------------------------------------------------
# multiplicative schedules

class StepLR(_Rescaling):
    """Multiply by gamma every step_size epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self._start(optimizer, last_epoch, step_size=step_size, gamma=gamma)

    def _ratio(self, e):
        on_boundary = e != 0 and e % self.step_size == 0
        return self.gamma if on_boundary else None

    def _closed_ratio(self, e):
        return self.gamma ** (e // self.step_size)


class MultiStepLR(_Rescaling):
    """Multiply by gamma at each milestone (repeated milestones multiply repeatedly)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self._start(optimizer, last_epoch, milestones=collections.Counter(milestones), gamma=gamma)

    def _ratio(self, e):
        if e not in self.milestones:
            return None
        return self.gamma ** self.milestones[e]

    def _closed_ratio(self, e):
        passed = bisect.bisect_right(sorted(self.milestones.elements()), e)
        return self.gamma ** passed


class ConstantLR(_Rescaling):
    """Scale by factor until total_iters, then back to the base rate."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor < 0 or factor > 1.0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self._start(optimizer, last_epoch, factor=factor, total_iters=total_iters)

    def _ratio(self, e):
        if e == 0:
            return self.factor
        return 1.0 / self.factor if e == self.total_iters else None

    def _closed_ratio(self, e):
        return self.factor + (e >= self.total_iters) * (1 - self.factor)


class LinearLR(_Rescaling):
    """Factor moving linearly from start_factor to end_factor over total_iters epochs."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor <= 0 or start_factor > 1.0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor < 0 or end_factor > 1.0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self._start(optimizer, last_epoch, start_factor=start_factor, end_factor=end_factor,
                    total_iters=total_iters)

    def _ratio(self, e):
        if e == 0:
            return self.start_factor
        if self._is_initial or e > self.total_iters:
            return None
        slope = self.end_factor - self.start_factor
        return 1.0 + slope / (self.total_iters * self.start_factor + (e - 1) * slope)

    def _closed_ratio(self, e):
        slope = self.end_factor - self.start_factor
        return self.start_factor + slope * min(self.total_iters, e) / self.total_iters


class ExponentialLR(_Rescaling):
    """Multiply by gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self._start(optimizer, last_epoch, gamma=gamma)

    def _ratio(self, e):
        return None if self._is_initial else self.gamma

    def _closed_ratio(self, e):
        return self.gamma ** e


class PolynomialLR(_Rescaling):
    """lr = base * (1 - t / total_iters) ** power, frozen after total_iters."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self._start(optimizer, last_epoch, total_iters=total_iters, power=power)

    def _ratio(self, e):
        n = self.total_iters
        if self._is_initial or e > n:
            return None
        now, before = 1.0 - e / n, 1.0 - (e - 1) / n
        return (now / before) ** self.power

    def _closed_ratio(self, e):
        left = 1.0 - min(self.total_iters, e) / self.total_iters
        return left ** self.power


def _half_cosine(floor, peak, t, span):
    """floor + (peak - floor) * (1 + cos(pi t / span)) / 2, evaluated left to right."""
    return floor + (peak - floor) * (1 + math.cos(math.pi * t / span)) / 2


class CosineAnnealingLR(_Builtin):
    """Cosine curve from the base rate down to eta_min over T_max epochs (recursive form)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self._start(optimizer, last_epoch, T_max=T_max, eta_min=eta_min)

    def _chain(self):
        if self._is_initial:
            return self._current()
        e, span, floor = self.last_epoch, self.T_max, self.eta_min
        if self._step_count == 1 and e > 0:
            return self._closed_form()
        groups = self.optimizer.param_groups
        if (e - 1 - span) % (2 * span) == 0:
            # at the bottom of a period the recursion would divide by zero: add the rise directly
            return [group["lr"] + (lr0 - floor) * (1 - math.cos(math.pi / span)) / 2
                    for group, lr0 in zip(groups, self.base_lrs)]
        ratio = (1 + math.cos(math.pi * e / span)) / (1 + math.cos(math.pi * (e - 1) / span))
        return [ratio * (group["lr"] - floor) + floor for group in groups]

    def _closed_form(self):
        return [_half_cosine(self.eta_min, lr0, self.last_epoch, self.T_max) for lr0 in self.base_lrs]


# ---------------------------------------------------------------------------------------------------------
# composite schedulers

def _validate_members(owner, optimizer, schedulers):
    kind = type(owner).__name__
    for pos, member in enumerate(schedulers):
        if not hasattr(member, "optimizer"):
            raise TypeError(f"{kind} at index {pos} should have `optimizer` as its attribute.")
        if isinstance(member, ReduceLROnPlateau):
            raise ValueError(
                f"{kind} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
                f"specified when calling `step`, but got one at index {pos} in the given schedulers sequence.")
        if optimizer != member.optimizer:
            raise ValueError(
                f"{kind} expects all schedulers to belong to the same optimizer, but got scheduler "
                f"{type(member).__name__} at index {pos} has {member.optimizer}, which is different from "
                f"{type(optimizer).__name__}.")


class _Composite(LRScheduler):
    """State handling shared by SequentialLR / ChainedScheduler: members are saved as nested dicts."""

    def state_dict(self):
        own = {key: val for key, val in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        own["_schedulers"] = [member.state_dict() for member in self._schedulers]
        return own

    def load_state_dict(self, state_dict):
        nested = state_dict.pop("_schedulers")
        try:
            vars(self).update(state_dict)
        finally:
            state_dict["_schedulers"] = nested
        for member, sub in zip(self._schedulers, nested):
            member.load_state_dict(sub)


class SequentialLR(_Composite):
    """Hands control from one scheduler to the next at the given milestones."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) == 0:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler, but got no scheduler.")
        _validate_members(self, optimizer, schedulers)
        if len(schedulers) != len(milestones) + 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
                f"milestone points, but got number of schedulers {len(schedulers)} and the number of milestones "
                f"to be equal to {len(milestones)}")
        self.optimizer, self._schedulers, self._milestones = optimizer, schedulers, milestones
        self.last_epoch = 1 + last_epoch
        # the members already took their first step while being built: rewind them and start the active one
        for grp in optimizer.param_groups:
            _store(grp, "lr", grp["initial_lr"])
        self.recursive_undo()
        active = schedulers[bisect.bisect_right(milestones, 0)]
        active._first_step()
        self._last_lr = active.get_last_lr()

    def recursive_undo(self, sched=None):
        node = self if sched is None else sched
        if hasattr(node, "_schedulers"):
            for member in node._schedulers:
                self.recursive_undo(member)
        elif hasattr(node, "last_epoch"):
            node.last_epoch -= 1

    def step(self):
        self.last_epoch += 1
        pos = bisect.bisect_right(self._milestones, self.last_epoch)
        active = self._schedulers[pos]
        if pos and self._milestones[pos - 1] == self.last_epoch:
            active._advance(0)   # a newly activated member restarts from its epoch 0
        else:
            active.step()
        self._last_lr = active.get_last_lr()


class ChainedScheduler(_Composite):
    """Steps every member scheduler each time (their recursive forms compose)."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) == 0:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        if not optimizer:
            optimizer = schedulers[0].optimizer
        _validate_members(self, optimizer, schedulers)
        self.optimizer, self._schedulers = optimizer, schedulers
        self._last_lr = _column(schedulers[-1].optimizer, "lr")

    def step(self):
        for member in self._schedulers:
            member.step()
        self._last_lr = _column(self._schedulers[-1].optimizer, "lr")


from ._lr_cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR  # noqa: E402  (needs the bases above)
from ._lr_plateau import ReduceLROnPlateau  # noqa: E402  (needs the bases above)

for _cls in (CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR, ReduceLROnPlateau):
    _cls.__module__ = __name__
del _cls
