"""torch.autograd.profiler_util: the profiler's events and their summaries -- `FunctionEvent` (one timed
op, record_function range or backward node), `FunctionEventAvg` (events grouped by key), `EventList`
(`table` in torch's layout, `key_averages`, `export_chrome_trace`, `total_average`).

Times are microseconds (floats), as torch's.  Built by autograd/profiler.py's recorder.
"""
import enum
import json
import os

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "DeviceType"]


class DeviceType(enum.IntEnum):
    """torch.autograd.DeviceType's CPU and CUDA (the device an event ran on: always the CPU here)."""
    CPU = 0
    CUDA = 1


class Interval:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes * 1.0 / size:.2f} {unit}"
    return str(nbytes) + " B"


class _Times:
    """What FunctionEvent and FunctionEventAvg share: the derived times and their strings."""
    device_time_total = self_device_time_total = 0.0
    self_cuda_time_total = self_device_time_total
    device_memory_usage = self_device_memory_usage = 0
    node_id = -1
    overload_name = ""
    is_async = is_remote = is_legacy = False
    use_device = None
    flops = 0
    device_type = DeviceType.CPU

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0

    cuda_time = device_time
    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))


class FunctionEvent(_Times):
    """One profiled range: an op (``aten::addmm``), a record_function range, a backward node."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None,
                 is_user_annotation=False, sequence_nr=-1):
        self.id = id
        self.name = self.key = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.is_user_annotation = is_user_annotation
        self.sequence_nr = sequence_nr
        self.cpu_children = []
        self.cpu_parent = None
        self.cpu_memory_usage = 0       # bytes of the new tensors this op and the ops inside it returned
        self.count = 1

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} device_type={self.device_type} "
                f"cpu_time={self.cpu_time_str} start_us={self.time_range.start:.3f} "
                f"end_us={self.time_range.end:.3f} cpu_children={[c.id for c in self.cpu_children]} "
                f"thread={self.thread} input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_Times):
    """The events of one key (name, and input shapes / stack when grouped by them), summed."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.is_user_annotation = False
        self.cpu_children = None
        self.cpu_parent = None
        self.flops = 0

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.is_user_annotation = other.is_user_annotation
            self.cpu_children = other.cpu_children
            self.cpu_parent = other.cpu_parent
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with torch's summaries."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        from ._profiler_table import build_table
        return build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                           max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, profile_memory=self._profile_memory,
                           top_level_events_only=top_level_events_only, time_unit=time_unit,
                           with_flops=self._with_flops)

    def __str__(self):
        return self.table()

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        """Events grouped by name (and input shapes / the top `group_by_stack_n` stack entries), in order of
        first appearance."""
        groups = {}
        for e in self:
            key = (e.key, e.is_user_annotation)
            if group_by_input_shapes:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg()
            avg.add(e)
        for avg in groups.values():
            avg.stack = avg.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
        return EventList(groups.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                         with_flops=self._with_flops)

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def supported_export_stacks_metrics(self):
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total", "self_privateuse1_time_total"]

    def export_stacks(self, path, metric):
        """Flame-graph input: per event with a stack (with_stack=True), its frames outermost first joined by ';'
        (spaces and separators in a frame made '_'), a space and the metric in whole microseconds."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: " + str(self.supported_export_stacks_metrics()))
        translate = str.maketrans(" ;\t\n", "____")
        attr = metric.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        with open(path, "w") as f:
            for e in self:
                value = int(getattr(e, attr)) if e.stack else 0
                if value > 0:
                    f.write(";".join(s.translate(translate) for s in reversed(e.stack)) + f" {value}\n")

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (chrome://tracing, Perfetto, TensorBoard): one complete ("X")
        event per range, with its input shapes."""
        pid = os.getpid()
        trace = []
        for e in self:
            if e.name == "[memory]":        # a free: an instant event, as torch's
                trace.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": pid,
                              "tid": e.thread, "ts": e.time_range.start, "args": {"Bytes": e.cpu_memory_usage}})
                continue
            args = {"External id": e.id}
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
            trace.append({"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                          "name": getattr(e, "trace_name", e.name), "pid": pid, "tid": e.thread, "ts": e.time_range.start,
                          "dur": e.cpu_time_total, "args": args})
        doc = {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms", "traceEvents": trace,
               "traceName": str(path)}
        opener = open
        if str(path).endswith(".gz"):
            import gzip
            opener = gzip.open
        with opener(path, "wt") as f:
            json.dump(doc, f)
