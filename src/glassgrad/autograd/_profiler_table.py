"""The profiler's summary table in torch's layout (torch.autograd.profiler_util._build_table's columns,
widths, sorting, truncation and totals), for the CPU-only events glassgrad records."""
from .profiler_util import _format_memory, _format_time, _format_time_share

_WIDTH = 12
_SPACING = 2


def _unit(time_us, default, time_unit):
    if time_unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if time_unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if time_unit == "us":
        return f"{time_us:.3f}us"
    return default


def _trim_path(path, width):
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


_FLOP_UNITS = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]


def _flops_scale(events):
    """(scale, header) from the smallest positive count, as torch's auto_scale_flops; None without counts."""
    import math
    raw = [e.flops for e in events if e.flops > 0]
    if not raw:
        return None
    k = int(math.floor(max(0, min(math.log10(min(raw)) / 3, float(len(_FLOP_UNITS) - 1)))))
    return pow(10, k * -3.0), f"Total {_FLOP_UNITS[k]}"


def _layout(events, max_name, max_shapes, max_src, profile_memory, flops):
    """(headers, row format, separator, line length, has shapes, has stack, src width, shapes width)."""
    has_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    name_w = max(len(e.key) for e in events) + 4
    if max_name is not None:
        name_w = min(name_w, max_name)
    shapes_w = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes is not None:
        shapes_w = min(shapes_w, max_shapes)
    stacks = [e.stack for e in events if e.stack is not None and len(e.stack) > 0]
    src_w = None
    if stacks:
        src_w = max(max(len(s) for s in st) for st in stacks) + 4
        if max_src is not None:
            src_w = min(src_w, max_src)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [(name_w, ">")] + [(_WIDTH, ">")] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append((shapes_w, ">"))
    if stacks:
        headers.append("Source Location")
        widths.append((src_w, "<"))
    if flops is not None:
        headers.append(flops[1])
        widths.append((_WIDTH, ">"))
    fmt = "".join("{: " + d + str(w) + "}" + " " * _SPACING for w, d in widths)
    sep = "".join("-" * w + " " * _SPACING for w, _ in widths)
    length = sum(w + _SPACING for w, _ in widths) - _SPACING
    return headers, fmt, sep, length, has_shapes, bool(stacks), src_w, shapes_w


def build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                max_name_column_width=55, max_shapes_column_width=80, profile_memory=False,
                top_level_events_only=False, time_unit=None, with_flops=False):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        key = sort_by.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        events = sorted(events, key=lambda e: getattr(e, key), reverse=True)
    flops = _flops_scale(events) if with_flops else None
    headers, fmt, sep, length, has_shapes, has_stack, src_w, shapes_w = _layout(
        events, max_name_column_width, max_shapes_column_width, max_src_column_width, profile_memory, flops)
    total = sum(e.self_cpu_time_total for e in events)
    out = []
    if header is not None:
        out += ["=" * length, header]
    if top_level_events_only:
        out += ["=" * length, "This report only display top-level ops statistics"]
    out += [sep, fmt.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _format_time_share(e.self_cpu_time_total, total),
               _unit(e.self_cpu_time_total, e.self_cpu_time_total_str, time_unit),
               _format_time_share(e.cpu_time_total, total) if not e.is_async else 0,
               _unit(e.cpu_time_total, e.cpu_time_total_str, time_unit),
               _unit(e.cpu_time, e.cpu_time_str, time_unit)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_w])
        if flops is not None:       # (before the source column, as torch's rows, though its header is after)
            row.append("--" if e.flops <= 0 else f"{e.flops * flops[0]:8.3f}")
        if has_stack:
            row.append(_trim_path(e.stack[0], src_w) if len(e.stack) > 0 else "")
        out.append(fmt.format(*row))
        if has_stack:
            blank = [""] * (len(headers) - 1)
            for entry in e.stack[1:]:
                out.append(fmt.format(*(blank + [_trim_path(entry, src_w)])))
            out.append(fmt.format(*(blank + [""])))
    out += [sep, f"Self CPU time total: {_unit(total, _format_time(total), time_unit)}"]
    return "".join(line + "\n" for line in out)
