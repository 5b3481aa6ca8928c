"""torch.profiler.profiler: the scheduled profiler over autograd.profiler's recorder, with torch's schedule
arithmetic, action transitions, "ProfilerStep#N" ranges and trace handler."""
import enum
import os
import warnings
from functools import partial

from ..autograd import profiler as _prof

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "schedule", "supported_activities",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """What a profiler records: CPU (ops and ranges); the device activities have no device here."""
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5

    def __repr__(self):
        return f"<ProfilerActivity.{self.name}: {self.value}>"

    def __str__(self):
        return f"ProfilerActivity.{self.name}"


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    """The activities this build can record: the CPU only (glassgrad has no CUPTI)."""
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The step -> ProfilerAction function of torch.profiler.schedule (skip_first steps, then cycles of wait /
    warmup / active steps, `repeat` times or forever)."""
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


_warned = [False]


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """An on_trace_ready handler writing ``<worker>.<time_ns>.pt.trace.json[.gz]`` (a Chrome trace) into
    `dir_name` (worker: ``<hostname>_<pid>`` by default), as torch's."""
    import socket
    import time

    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name = file_name + ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class _KinetoProfile:
    """The profiler without a schedule: start() / stop(), then events(), key_averages(), export_chrome_trace()."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, custom_trace_id_callback=None, post_processing_timeout_s=None):
        self.activities = set(activities) if activities is not None else supported_activities()
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.profiler = None

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def prepare_trace(self):
        use_device = None
        if ProfilerActivity.CUDA in self.activities:
            warnings.warn(_prof._no_cuda_profiling(), stacklevel=2)
        if ProfilerActivity.CPU not in self.activities:
            raise AssertionError("No activities specified for the profiler")
        if self.profiler is not None and not self.acc_events and not _warned[0]:
            _warned[0] = True
            warnings.warn("Warning: Profiler clears events at the end of each cycle. Only events from the current "
                          "cycle will be reported. To keep events across cycles, set acc_events=True.", stacklevel=2)
        if self.profiler is None or not self.acc_events:
            self.profiler = _prof.profile(use_device=use_device, record_shapes=self.record_shapes,
                                          with_flops=self.with_flops, profile_memory=self.profile_memory,
                                          with_stack=self.with_stack, with_modules=self.with_modules,
                                          acc_events=self.acc_events)

    def start_trace(self):
        self.profiler.__enter__()

    def stop_trace(self):
        if self.profiler is not None and self.profiler._recording:
            self.profiler.__exit__(None, None, None)
            for e in self.profiler.function_events:      # the step ranges, as torch lists them (the trace keeps N)
                if e.is_user_annotation and e.name.startswith("ProfilerStep#"):
                    e.trace_name, e.name, e.key = e.name, "ProfilerStep*", "ProfilerStep*"

    def events(self):
        """The recorded events (an EventList of FunctionEvent)."""
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before calling events")
        return self.profiler.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before calling key_averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path, use_python_export=False):
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before exporting trace")
        return self.profiler.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Stack traces (with_stack=True) with the metric, in the flame-graph format torch writes."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting stacks")
        return self.profiler.export_stacks(path, metric)


class profile(_KinetoProfile):
    """torch.profiler.profile: records what runs in the block, following `schedule` over `step()` calls and
    handing each finished cycle to `on_trace_ready`."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        if activities is not None:
            act = set()
            for item in activities:
                if isinstance(item, ProfilerActivity):
                    act.add(item)
                elif isinstance(item, dict):
                    act.update(item.keys())
        else:
            act = supported_activities()
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead", FutureWarning,
                          stacklevel=2)
            if use_cuda:
                act.add(ProfilerActivity.CUDA)
            elif ProfilerActivity.CUDA in act:
                act.remove(ProfilerActivity.CUDA)
        if len(act) == 0:
            raise AssertionError("No valid profiler activities found")
        super().__init__(activities=act, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         acc_events=acc_events)
        self.schedule = schedule if schedule else _default_schedule_fn
        self.record_steps = bool(schedule)
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        self.current_action = self.schedule(self.step_num)
        self.action_map = self._actions()
        _prof.KinetoStepTracker.init_step_count("ProfilerStep")

    def _actions(self):
        A = ProfilerAction
        prep, start, stop, ready = self.prepare_trace, self.start_trace, self.stop_trace, self._trace_ready
        return {
            (A.NONE, A.NONE): [], (A.NONE, A.WARMUP): [prep], (A.NONE, A.RECORD): [prep, start],
            (A.NONE, A.RECORD_AND_SAVE): [prep, start],
            (A.WARMUP, A.NONE): [partial(warnings.warn, "Incorrect schedule: WARMUP followed by NONE"), start, stop],
            (A.WARMUP, A.WARMUP): [], (A.WARMUP, A.RECORD): [start], (A.WARMUP, A.RECORD_AND_SAVE): [start],
            (A.RECORD, A.NONE): [partial(warnings.warn, "Incorrect schedule: RECORD followed by NONE"), stop],
            (A.RECORD, A.WARMUP): [partial(warnings.warn, "Incorrect schedule: RECORD followed by WARMUP"), stop],
            (A.RECORD, A.RECORD): [], (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [stop, ready], (A.RECORD_AND_SAVE, A.WARMUP): [stop, ready, prep],
            (A.RECORD_AND_SAVE, A.RECORD): [stop, ready, prep, start],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [stop, ready, prep, start],
            (A.NONE, None): [], (A.WARMUP, None): [start, stop], (A.RECORD, None): [stop, ready],
            (A.RECORD_AND_SAVE, None): [stop, ready],
        }

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        _prof.KinetoStepTracker.erase_step_count("ProfilerStep")

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = _prof.record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self):
        """The next step begins: follow the schedule (record, hand a finished cycle to on_trace_ready)."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev_action = self.current_action
        self.step_num += 1
        _prof.KinetoStepTracker.increment_step("ProfilerStep")
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev_action, self.current_action)
        if self.record_steps:
            self.step_rec_fn = _prof.record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action):
        for action in self.action_map.get((prev_action, current_action), []):
            action()
