"""torch.autograd.profiler: `profile` (the legacy CPU profiler), `record_function`, `emit_nvtx` / `emit_itt`,
and the recorder torch.profiler is built on.

Where ops are timed.  Every op glassgrad has is a function of an `ops/` family module, reached through a
module attribute (a Tensor method calls ``_ops.addmm.addmm``, ``glassgrad.addmm`` is its ``tensor_first``
wrapper, nn.functional imports the function object).  While a profiler records, `_patch` replaces each op
function -- in every loaded ``glassgrad.*`` module that holds it -- by a timed wrapper named as ATen names
the op (``aten::addmm``), and the backward engine's `_run_node` by one that times each node
(``autograd::engine::evaluate_function: AddmmBackward0`` around ``AddmmBackward0``; the engine skips its
inlined fast path while ``state.profiling`` is set).  `_unpatch` puts the originals back.  So the cost when
not profiling is nothing at all on the op path and one flag test per backward call.  Nesting follows the
calls (``aten::linear`` holds ``aten::t`` and ``aten::addmm``), as torch's.

Differences from torch: only the ops glassgrad composes are seen (glassgrad's backward formulas work on
arrays, so a node shows no ``aten::mm`` inside unless create_graph=True); profile_memory counts the bytes of
the new (non-view) tensors each op returns, not the allocator's traffic; with_stack keeps each event's Python
stack on the event (torch 2.13's Kineto records Python-function events instead and leaves ``.stack``
empty); with_flops counts torch's formulas (conv2d, mm, addmm, bmm, baddbmm, mul, add); no CUDA activity.
"""
import contextlib
import functools
import inspect
import sys
import threading
import time
import types
import traceback
import weakref

from .._grad_state import state
from .._tensor import Tensor
from .profiler_util import EventList, FunctionEvent

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList", "FunctionEvent", "KinetoStepTracker"]

# glassgrad's op names that ATen spells differently
_ATEN_NAMES = {"cross_entropy": "cross_entropy_loss", "to_dtype": "to", "to_device": "to", "type_": "to",
               "T": "numpy_T", "unique": "_unique2", "norm": "linalg_vector_norm"}
# torch namespaces whose functions ATen names with a prefix
_NAMESPACES = {"glassgrad.linalg": "linalg_", "glassgrad.fft": "fft_", "glassgrad.special": "special_"}
_NOT_OPS = {"check_nondiff", "pool_out_size", "dtype_of_np", "scalar_like"}      # helpers the families export that are no op of torch's
# nn.functional's functions that torch writes in Python (not ATen ops, so torch's profile never names them)
_F_PYTHON = {"adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
             "affine_grid", "cross_entropy", "dropout1d", "dropout2d", "dropout3d", "fold", "gaussian_nll_loss",
             "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices", "grid_sample",
             "gumbel_softmax", "interpolate", "linear_cross_entropy", "local_response_norm", "lp_pool1d", "lp_pool2d",
             "lp_pool3d", "max_unpool1d", "multi_head_attention_forward", "multilabel_soft_margin_loss", "normalize",
             "softmin", "softsign", "tanhshrink", "triplet_margin_with_distance_loss", "upsample", "upsample_bilinear",
             "upsample_nearest", "nll_loss", "boolean_dispatch", "assert_int_or_pair", "has_torch_function",
             "handle_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "logsigmoid"}
_NODE_NAMES = {"AccumulateGrad": "torch::autograd::AccumulateGrad"}
_PKG_DIR = __file__.rsplit("autograd", 1)[0]


class _Recorder:
    """The one event log all recording sessions share, with the per-thread stack of open ranges."""

    def __init__(self):
        self.sessions = []
        self.log = []
        self.local = threading.local()
        self.threads = {}
        self.shapes = self.stack = self.memory = self.flops = False
        self.next_id = 0
        self.finalizers = []        # profile_memory: the frees of the tensors ops made, as "[memory]" events

    def options(self):
        live = self.sessions
        self.shapes = any(s.record_shapes or s.with_flops for s in live)     # (torch's with_flops records them)
        self.stack = any(s.with_stack for s in live)
        self.memory = any(s.profile_memory for s in live)
        self.flops = any(s.with_flops for s in live)

    def begin(self, name, shapes=None, user=False, seq=-1):
        st = getattr(self.local, "stack", None)
        if st is None:
            st = self.local.stack = []
        tid = self.threads.setdefault(threading.get_ident(), len(self.threads) + 1)
        self.next_id += 1
        stack = _user_stack() if self.stack else None
        ev = FunctionEvent(self.next_id, name, tid, 0.0, 0.0, shapes, stack, user, seq)
        if st:
            ev.cpu_parent = st[-1]
            st[-1].cpu_children.append(ev)
        st.append(ev)
        self.log.append(ev)
        ev.time_range.start = time.perf_counter_ns() / 1000.0
        return ev

    def end(self, ev):
        ev.time_range.end = time.perf_counter_ns() / 1000.0
        st = self.local.stack
        if st and st[-1] is ev:
            st.pop()
        elif ev in st:
            st.remove(ev)


REC = _Recorder()


def _index_name(index, setting=None):
    """The ATen op torch records for x[index] (the last step it takes) or for x[index] = value."""
    items = index if type(index) is tuple else (index,)
    advanced = any(isinstance(i, (Tensor, list)) or type(i) is bool for i in items)
    if setting is not None:
        return "aten::index_put_" if advanced else "aten::copy_" if isinstance(setting, Tensor) else "aten::fill_"
    if advanced:
        return "aten::index"
    name = "aten::alias"
    for i in items:
        if i is None:
            name = "aten::unsqueeze"
        elif type(i) is slice:
            name = "aten::slice" if i != slice(None) else name
        elif i is not Ellipsis:
            name = "aten::select"
    return name


# {op function name: (args, kwargs) -> the ATen name}: composites whose ATen op depends on the arguments
_NAMED_BY_ARGS = {"getitem": lambda a, k: _index_name(a[1]), "setitem": lambda a, k: _index_name(a[1], a[2])}


def _user_stack():
    frames = [f for f in traceback.extract_stack()[:-3] if not f.filename.startswith(_PKG_DIR)]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)]


def _shape_of(v):
    return list(v.shape) if isinstance(v, Tensor) else []


def _input_shapes(sig, args, kwargs):
    """torch's Input Shapes: one entry per schema argument (defaults included), a tensor's size or []."""
    if sig is not None:
        try:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
        except TypeError:
            pass
        else:
            out = []
            for name, v in bound.arguments.items():
                kind = sig.parameters[name].kind
                if name in ("out", "inplace") or kind is inspect.Parameter.VAR_KEYWORD:
                    continue
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    out.extend(_shape_of(a) for a in v)
                else:
                    out.append(_shape_of(v))
            return out
    return [_shape_of(a) for a in args] + [_shape_of(v) for k, v in kwargs.items() if k != "out"]


def _tensors(sig, args, kwargs):
    """The first two arguments (bound by name when the signature allows) -- what the FLOP counts read."""
    if sig is not None:
        try:
            vals = list(sig.bind(*args, **kwargs).arguments.values())
        except TypeError:
            vals = list(args)
    else:
        vals = list(args)
    return (vals + [None, None])[:2]


def _numel(t):
    n = 1
    for d in getattr(t, "shape", ()):
        n *= d
    return n


def _mm_flops(a, b, r):
    return 2 * _numel(a) * b.shape[-1] if isinstance(a, Tensor) and isinstance(b, Tensor) and b.dim() >= 2 else 0


def _conv_flops(x, w, r):
    """torch's count: 2 x output elements x (input channels / groups) x kernel elements."""
    return 2 * _numel(r) * _numel(w) // w.shape[0] if isinstance(w, Tensor) and isinstance(r, Tensor) else 0


# torch's FLOP formulas (torch/csrc/profiler/util.cpp computeFlops), by ATen name; (first, second, result)
_FLOPS = {"aten::mm": _mm_flops, "aten::bmm": _mm_flops,
          "aten::addmm": lambda c, a, r: 2 * _numel(r) * a.shape[-1] if isinstance(a, Tensor) else 0,
          "aten::baddbmm": lambda c, a, r: 2 * _numel(r) * a.shape[-1] if isinstance(a, Tensor) else 0,
          "aten::conv2d": _conv_flops,
          "aten::mul": lambda a, b, r: _numel(a), "aten::add": lambda a, b, r: _numel(a)}


def _new_bytes(result, args):
    """The bytes of the new tensors an op returned (each watched for its free)."""
    items = result if isinstance(result, (tuple, list)) else (result,)
    n = 0
    for r in items:
        if isinstance(r, Tensor) and r._base is None and not any(r is a for a in args):
            nb = getattr(r._data, "nbytes", 0)
            if nb:
                n += nb
                f = weakref.finalize(r, _freed, nb)
                f.atexit = False
                REC.finalizers.append(f)
    return n


def _freed(nbytes):
    """A tensor an op made was freed while recording: torch's "[memory]" event (negative bytes, no time)."""
    rec = REC
    if rec.sessions and rec.memory:
        now = time.perf_counter_ns() / 1000.0
        rec.next_id += 1
        ev = FunctionEvent(rec.next_id, "[memory]", rec.threads.setdefault(threading.get_ident(),
                                                                           len(rec.threads) + 1), now, now)
        ev.cpu_memory_usage = -nbytes
        rec.log.append(ev)


def _timed(fn, name, split=True):
    """`fn` timed as the op `name` while a session records (or as _NAMED_BY_ARGS names the call)."""
    by_args = _NAMED_BY_ARGS.get(fn.__name__)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    if split and sig is not None and "inplace" in sig.parameters:        # F.relu(x, inplace=True) is aten::relu_
        return _timed_inplace(fn, name, sig)

    def op(*args, **kwargs):
        rec = REC
        if not rec.sessions:
            return fn(*args, **kwargs)
        this = name if by_args is None else by_args(args, kwargs)
        st = getattr(rec.local, "stack", None)
        if st and st[-1].name == this:          # F.relu calling the op relu: one range, as torch's
            return fn(*args, **kwargs)
        ev = rec.begin(this, _input_shapes(sig, args, kwargs) if rec.shapes else None)
        try:
            result = fn(*args, **kwargs)
        finally:
            rec.end(ev)
        if rec.flops and this in _FLOPS:
            ev.flops = _FLOPS[this](*_tensors(sig, args, kwargs), result)
        if rec.memory:
            ev.cpu_memory_usage += _new_bytes(result, args)
            if ev.cpu_parent is not None:
                _add_up(ev)
        return result

    functools.update_wrapper(op, fn)
    op._gg_profiled = fn
    return op


def _timed_inplace(fn, name, sig):
    plain, inplace = _timed(fn, name, False), _timed(fn, name + "_", False)

    def op(*args, **kwargs):
        if REC.sessions:
            try:
                if sig.bind(*args, **kwargs).arguments.get("inplace"):
                    return inplace(*args, **kwargs)
            except TypeError:
                pass
        return plain(*args, **kwargs)
    functools.update_wrapper(op, fn)
    op._gg_profiled = fn
    return op


def _add_up(ev):
    """An op's new bytes count in the totals of the ranges around it."""
    n, p = ev.self_cpu_memory_usage, ev.cpu_parent
    while p is not None:
        p.cpu_memory_usage += n
        p = p.cpu_parent


def _timed_run_node(run_node):
    def timed(node, grads, run):
        name = type(node).__name__
        name = _NODE_NAMES.get(name, name)
        rec = REC
        outer = rec.begin("autograd::engine::evaluate_function: " + name)
        inner = rec.begin(name, [list(g.shape) if hasattr(g, "shape") else [] for g in grads] if rec.shapes
                          else None, seq=getattr(node, "_seq", -1))
        try:
            return run_node(node, grads, run)
        finally:
            rec.end(inner)
            rec.end(outer)
    timed._gg_profiled = run_node
    return timed


def _op_functions():
    """{function: aten name} for every op function of the loaded ops families, and the nn.functional functions
    that are ATen ops in torch."""
    top = sys.modules.get("glassgrad")
    fn_ns = sys.modules.get("glassgrad.nn.functional")
    out = {}
    for mname, mod in list(sys.modules.items()):
        is_op = mname.startswith("glassgrad.ops.")
        if mod is None or not (is_op or mname.startswith("glassgrad.nn.functional._")):
            continue
        if is_op and mname.rsplit(".", 1)[1].startswith("_"):
            continue
        exported = set(getattr(mod, "__all__", ()))
        for n, f in list(vars(mod).items()):
            if type(f) is not types.FunctionType or n.startswith("_") or f.__module__ != mname or n in _NOT_OPS:
                continue
            if is_op and not (n in exported or hasattr(top, n) or hasattr(fn_ns, n) or hasattr(Tensor, n)
                              or n in _NAMED_BY_ARGS):
                continue
            if not is_op and (n not in exported or n in _F_PYTHON):
                continue
            n = f.__name__ if not f.__name__.startswith("_") else n     # multiply = mul: aten::mul
            out[f] = "aten::" + _ATEN_NAMES.get(n, n)
    return out


def _glassgrad_modules():
    return [m for k, m in list(sys.modules.items())
            if m is not None and (k == "glassgrad" or k.startswith("glassgrad.")) and hasattr(m, "__dict__")]


def _patch():
    """Swap every op function for its timed wrapper, everywhere glassgrad holds it; and the engine's node runner."""
    ops = _op_functions()
    wrappers = {f: _timed(f, name) for f, name in ops.items()}
    for mod in _glassgrad_modules():
        d = vars(mod)
        for n, v in list(d.items()):
            if type(v) is not types.FunctionType:
                continue
            w = wrappers.get(v)
            if w is None and (getattr(v, "_tensor_first", False) or getattr(v, "_with_out", False)) \
                    and getattr(v, "__wrapped__", None) in ops:
                # torch.add / F.linear / torch.cat: the argument-checking wrapper, timed once as the op it wraps
                w = wrappers[v] = _timed(v, ops[v.__wrapped__])
            if w is not None:
                d[n] = w
    _patch_namespaces(ops)
    from . import engine
    engine._run_node = _timed_run_node(engine._run_node)
    state.profiling = True


def _patch_namespaces(ops):
    """torch.linalg.det is aten::linalg_det, torch.fft.rfft aten::fft_rfft, torch.special.erf aten::special_erf:
    each public function of those namespaces gets a wrapper under the prefixed name, there only."""
    for mname, prefix in _NAMESPACES.items():
        mod = sys.modules.get(mname)
        if mod is None:
            continue
        d = vars(mod)
        for n, v in list(d.items()):
            if n.startswith("_") or type(v) is not types.FunctionType:
                continue
            v = getattr(v, "_gg_profiled", v)          # (the first pass may have wrapped it under its own name)
            inner = getattr(v, "__wrapped__", v)
            if v in ops or inner in ops or (v.__module__ or "").startswith(("glassgrad.linalg", "glassgrad.fft",
                                                                           "glassgrad.special", "glassgrad.ops")):
                d[n] = _timed(v, "aten::" + prefix + n)


def _unpatch():
    """Put the originals back (also where a module loaded while profiling copied a wrapper)."""
    state.profiling = False
    for mod in _glassgrad_modules():
        d = vars(mod)
        for n, v in list(d.items()):
            orig = getattr(v, "_gg_profiled", None) if type(v) is types.FunctionType else None
            if orig is not None:
                d[n] = orig


def _start(session):
    if not REC.sessions:
        _patch()
    REC.sessions.append(session)
    REC.options()
    session._first = len(REC.log)


def _stop(session):
    """End `session`'s recording; its events, in order of their start."""
    events = REC.log[session._first:]
    REC.sessions.remove(session)
    REC.options()
    if not REC.sessions:
        _unpatch()
        for f in REC.finalizers:
            f.detach()
        REC.finalizers = []
        REC.log = []
        REC.threads = {}
        REC.local = threading.local()
    return sorted(events, key=lambda e: e.time_range.start)


def _no_cuda_profiling():
    """torch's warning without CUDA; with CuPy's GPU, why glassgrad still records none of its kernels."""
    from .. import backend
    if backend.cuda_available():
        return "glassgrad records no CUDA kernels (CuPy's run unseen), disabling CUDA profiling"
    return "CUDA is not available, disabling CUDA profiling"


class profile:
    """torch.autograd.profiler.profile: records every op, record_function range and backward node run in
    the block (CPU times; use_cuda / use_device='cuda' warn that CUDA is not available, as torch does
    without CUDA)."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        import warnings
        self.enabled = enabled
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device == "cuda":
            warnings.warn(_no_cuda_profiling(), stacklevel=2)
            use_device = None
        if not use_cpu and use_device is None:
            raise AssertionError("No activities specified for the profiler")
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.entered = False
        self._recording = False
        self.function_events = None
        self._first = 0

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered and not self.acc_events:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = self._recording = True
        _start(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        self._recording = False
        events = _stop(self)
        if self.acc_events and self.function_events is not None:      # acc_events: cycles add up
            events = list(self.function_events) + events
        self.function_events = EventList(events, use_device=self.use_device, profile_memory=self.profile_memory,
                                         with_flops=self.with_flops)
        return False

    def __repr__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self.function_events)

    def __str__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self.function_events)

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        self._check_finish()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total


class record_function(contextlib.ContextDecorator):
    """A named range in the profile (a context manager or a decorator); nothing when no profiler records."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._open = []          # a decorated function may call itself: one range per call

    def __enter__(self):
        self._open.append(REC.begin(self.name, [] if REC.shapes else None, user=True) if REC.sessions else None)
        return self

    def __exit__(self, *exc):
        ev = self._open.pop() if self._open else None
        if ev is not None:
            REC.end(ev)
        return False


class emit_itt:
    """torch.autograd.profiler.emit_itt: Intel ITT ranges for VTune; glassgrad emits none (a no-op block)."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class emit_nvtx(emit_itt):
    """torch.autograd.profiler.emit_nvtx: NVTX ranges need CUDA, so entering raises torch's error here."""

    def __enter__(self):
        if self.enabled:
            raise AssertionError("Torch not compiled with CUDA enabled")
        return self


class KinetoStepTracker:
    """torch's global step count over several requesters (the profiler's step(), optimizers): the maximum of
    their counts."""
    _current_step = 0
    _step_dict = {}

    @classmethod
    def init_step_count(cls, requester):
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester):
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester):
        import warnings
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        new_step = max(cls._step_dict.values())
        if new_step > cls._current_step:
            if new_step - cls._current_step > 1:
                warnings.warn(f"Profiler step count has increased more than 1 - current_step = {cls._current_step} "
                              f"step dict =  {cls._step_dict}", stacklevel=2)
            cls._current_step = new_step
        return cls._current_step

    @classmethod
    def current_step(cls):
        return cls._current_step
