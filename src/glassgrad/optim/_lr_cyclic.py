"""Periodic schedules of glassgrad.optim.lr_scheduler: CyclicLR, OneCycleLR, CosineAnnealingWarmRestarts.

CyclicLR and OneCycleLR are table driven: the cyclic modes are rows of ``_CYCLIC_PRESETS`` and a one-cycle
policy is a list of phases built from ``_ONE_CYCLE_PHASES``.  Both may cycle momentum (or Adam's beta1) in the
opposite direction to the learning rate.
"""
import functools
import math
import types

from .lr_scheduler import _Builtin, _half_cosine, _per_group, _raised, _require_optimizer, _store

__all__ = ["CyclicLR", "OneCycleLR", "CosineAnnealingWarmRestarts"]


# ---------------------------------------------------------------------------------------------------------
# momentum cycling (shared)

def _put_momentum(sched, group, value):
    if sched.use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _start_momentum_cycle(sched, optimizer, base_momentum, max_momentum, last_epoch):
    """Validate the optimizer, record the bounds in the groups (fresh runs) and start at the upper bound."""
    known = optimizer.defaults
    if "momentum" not in known and "betas" not in known:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    sched.use_beta1 = "betas" in known
    uppers = _per_group("max_momentum", optimizer, max_momentum)
    lowers = _per_group("base_momentum", optimizer, base_momentum)
    if last_epoch == -1:
        for group, upper, lower in zip(optimizer.param_groups, uppers, lowers):
            _put_momentum(sched, group, upper)
            group["max_momentum"] = upper
            group["base_momentum"] = lower
    return lowers, uppers


# ---------------------------------------------------------------------------------------------------------
# CyclicLR

def _no_decay(cycle):
    return 1.0


def _halve_each_cycle(cycle):
    return 1 / (2.0 ** (cycle - 1))


def _geometric_decay(gamma, iteration):
    return gamma ** iteration


# mode -> (builder of the amplitude scale from gamma, what the scale is a function of)
_CYCLIC_PRESETS = {
    "triangular": (lambda gamma: _no_decay, "cycle"),
    "triangular2": (lambda gamma: _halve_each_cycle, "cycle"),
    "exp_range": (lambda gamma: functools.partial(_geometric_decay, gamma), "iterations"),
}


class CyclicLR(_Builtin):
    """Cyclical learning rate between base_lr and max_lr (triangular waves with optional amplitude decay)."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        lows = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for group, low in zip(optimizer.param_groups, lows):
                _store(group, "lr", low)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        rise = float(step_size_up)
        fall = rise if step_size_down is None else float(step_size_down)
        self.total_size = rise + fall
        self.step_ratio = rise / self.total_size
        if scale_fn is None and mode not in _CYCLIC_PRESETS:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma, self.scale_mode = mode, gamma, scale_mode
        self._scale_fn_custom = scale_fn
        self._apply_preset()
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _start_momentum_cycle(
                self, optimizer, base_momentum, max_momentum, last_epoch)
        self._start(optimizer, last_epoch, cycle_momentum=cycle_momentum)
        self.base_lrs = lows   # the cycle's lower bounds, not the groups' initial_lr

    def _apply_preset(self):
        """Without a user scale_fn the mode decides the amplitude scale and its argument."""
        if self._scale_fn_custom is None:
            build, self.scale_mode = _CYCLIC_PRESETS[self.mode]
            self._preset_scale = build(self.gamma)

    def scale_fn(self, x):
        user_fn = self._scale_fn_custom
        return self._preset_scale(x) if user_fn is None else user_fn(x)

    def _chain(self):
        it, period, rise = self.last_epoch, self.total_size, self.step_ratio
        cycle = math.floor(1 + it / period)
        pos = 1.0 + it / period - cycle              # position inside the current cycle, in [0, 1)
        frac = pos / rise if pos <= rise else (pos - 1) / (rise - 1)   # rising / falling half
        amp = self.scale_fn(cycle if self.scale_mode == "cycle" else it)
        lrs = [low + (high - low) * frac * amp for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _put_momentum(self, group, high - (high - low) * frac * amp)
        return lrs

    def state_dict(self):
        out = super().state_dict()
        out.pop("_preset_scale", None)
        user_fn = out.pop("_scale_fn_custom")
        plain = user_fn is None or isinstance(user_fn, types.FunctionType)
        out["_scale_fn_custom"] = None if plain else dict(user_fn.__dict__)
        return out

    def load_state_dict(self, state_dict):
        user_state = state_dict.pop("_scale_fn_custom")   # consumed, as in PyTorch
        _Builtin.load_state_dict(self, state_dict)
        if user_state is not None:
            self._scale_fn_custom.__dict__.update(user_state)
        self._apply_preset()


# ---------------------------------------------------------------------------------------------------------
# OneCycleLR

def _cosine_ramp(a, b, t):
    return b + (a - b) / 2.0 * (math.cos(math.pi * t) + 1)


def _straight_ramp(a, b, t):
    return (b - a) * t + a


_RAMPS = {"cos": _cosine_ramp, "linear": _straight_ramp}

# three_phase -> phases as (k, lr from, lr to, momentum from, momentum to); a phase ends at step
# k * pct_start * total_steps - k, or at the last step when k is None
_ONE_CYCLE_PHASES = {
    False: ((1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
            (None, "max_lr", "min_lr", "base_momentum", "max_momentum")),
    True: ((1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
           (2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
           (None, "initial_lr", "min_lr", "max_momentum", "max_momentum")),
}
_PHASE_KEYS = ("start_lr", "end_lr", "start_momentum", "end_momentum")


class OneCycleLR(_Builtin):
    """The 1cycle policy: warm up to max_lr, then anneal far below the initial rate."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        self.total_steps = self._count_steps(total_steps, epochs, steps_per_epoch)
        n = self.total_steps
        self._schedule_phases = []
        for k, *keys in _ONE_CYCLE_PHASES[bool(three_phase)]:
            end = n - 1 if k is None else float(k * pct_start * n) - k
            self._schedule_phases.append({"end_step": end, **dict(zip(_PHASE_KEYS, keys))})
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        peaks = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, peak in zip(optimizer.param_groups, peaks):
                group.update(initial_lr=peak / div_factor, max_lr=peak, min_lr=peak / div_factor / final_div_factor)
        if cycle_momentum:
            _start_momentum_cycle(self, optimizer, base_momentum, max_momentum, last_epoch)
        self._start(optimizer, last_epoch, _anneal_func_type=anneal_strategy, cycle_momentum=cycle_momentum)

    @staticmethod
    def _count_steps(total_steps, epochs, steps_per_epoch):
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            return total_steps
        if epochs is None or steps_per_epoch is None:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
            raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
        return epochs * steps_per_epoch

    def _ramp(self, a, b, t):
        ramp = _RAMPS.get(self._anneal_func_type)
        if ramp is None:
            raise ValueError(f"Unknown _anneal_func_type: {self._anneal_func_type}")
        return ramp(a, b, t)

    def _phase_of(self, step):
        """The phase containing ``step`` and the step at which it begins."""
        begin = 0.0
        phases = self._schedule_phases
        for phase in phases[:-1]:
            if step <= phase["end_step"]:
                return phase, begin
            begin = phase["end_step"]
        return phases[-1], begin

    def _chain(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is "
                             f"{self.total_steps}")
        phase, begin = self._phase_of(step)
        t = (step - begin) / (phase["end_step"] - begin)
        lrs = []
        for group in self.optimizer.param_groups:
            lrs.append(self._ramp(group[phase["start_lr"]], group[phase["end_lr"]], t))
            if self.cycle_momentum:
                _put_momentum(self, group, self._ramp(group[phase["start_momentum"]],
                                                      group[phase["end_momentum"]], t))
        return lrs


# ---------------------------------------------------------------------------------------------------------
# CosineAnnealingWarmRestarts

class CosineAnnealingWarmRestarts(_Builtin):
    """SGDR: cosine annealing restarted every T_i epochs, T_i growing by T_mult after each restart."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self._start(optimizer, last_epoch, T_0=T_0, T_i=T_0, T_mult=T_mult, eta_min=eta_min, T_cur=last_epoch)

    def _chain(self):
        return [_half_cosine(self.eta_min, lr0, self.T_cur, self.T_i) for lr0 in self.base_lrs]

    def _seek(self, epoch):
        """Position (T_cur, T_i) for an explicitly given, possibly fractional, epoch."""
        if epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        if not epoch >= self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            m, first = self.T_mult, self.T_0
            restarts = int(math.log((epoch / first * (m - 1) + 1), m))
            self.T_cur = epoch - first * (m ** restarts - 1) / (m - 1)
            self.T_i = first * m ** restarts

    def step(self, epoch=None):
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur % self.T_i, self.T_i * self.T_mult
        else:
            self._seek(epoch)
        self.last_epoch = math.floor(epoch)
        with _raised(self, "_get_lr_called_within_step"):
            rates = self.get_lr()
        self._publish(rates)
