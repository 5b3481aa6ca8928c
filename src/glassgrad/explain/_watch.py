"""explain.watch: remember where the user's code cut the graph, reset gradients or ran backward.

How it hooks in (and why it costs nothing when off): the shared grad-mode state has a slot
``watching`` that is ``None`` unless a watch is active.  The core checks it at a handful of
places -- ``_make`` (every op's output), ``detach()`` / ``.data`` / ``.item()`` / ``.numpy()`` /
``.tolist()`` / ``int()`` / ``float()``, ``Module.zero_grad`` / ``Optimizer.zero_grad`` and the
backward engine (start, each node, end) -- and calls into ``HUB`` here only when it is set.

For each new tensor the hub finds, by walking the Python stack:
  * the op: the innermost public function under ``glassgrad/ops`` (``log``, ``where``, ``linear``...);
  * its inputs: the Tensor locals of that frame (read only when needed);
  * the user's line: the first frame outside the glassgrad package, as ``file.py:LINE``.

A :class:`Watch` keeps a bounded log of *events* (cuts, no_grad ops on tensors that require grad,
integer casts, ``zero_grad`` calls, backward calls) plus the source line where each leaf and
each graph node was made.  ``explain.why_no_grad`` reads the active watch, or the last one.
Nothing here changes a value, a gradient or the graph.
"""
import os
import sys
import weakref
from collections import deque

from ..autograd.grad_mode import state as _state
from ..autograd.traversal import sequence_nr

__all__ = ["watch", "Watch", "HUB", "last_watch"]

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_OPS = _PKG + "ops" + os.sep
_SKIP_LIB = (_PKG + "optim" + os.sep, _PKG + "nn" + os.sep + "utils" + os.sep)
_CONVERSION = _OPS + "conversion.py"
_CREATION = (_OPS + "creation.py", _OPS + "random.py")      # where constants are made

# functions under ops/ that are plumbing, not the op the user called
_HELPERS = frozenset(("make", "edge", "save_in", "save_out", "binary_operands", "as_tensor_arg", "scalar_like",
                      "sum_to", "check_inplace", "commit_inplace", "broadcast_error", "refresh_view"))
# helpers that wrap a constant (a Python number) as a tensor: such tensors are not op results
_CONST_HELPERS = frozenset(("as_tensor_arg", "scalar_like"))

_CUT_KINDS = {".detach()": "detached", ".data": "detached", ".item()": "detached", ".numpy()": "detached",
              ".tolist()": "detached", "float()": "detached", "torch.tensor()": "detached",
              "int()": "integer_cast", "integer cast": "integer_cast", "no_grad": "no_grad"}

_BASENAMES = {}


def _where(frame):
    """``file.py:LINE`` of a frame (None for none)."""
    if frame is None:
        return None
    fn = frame.f_code.co_filename
    b = _BASENAMES.get(fn)
    if b is None:
        b = _BASENAMES[fn] = os.path.basename(fn)
    return f"{b}:{frame.f_lineno}"


def user_frame(frame):
    """The first frame at or above `frame` that is not glassgrad's own code."""
    while frame is not None and frame.f_code.co_filename.startswith(_PKG):
        frame = frame.f_back
    return frame


class OpContext:
    """Where a new tensor came from: the op's frame, the user's frame, and (lazily) the op's inputs."""
    __slots__ = ("op_frame", "user", "const", "in_lib", "_inputs")

    def __init__(self, frame):
        op = None
        const = False
        in_lib = False
        while frame is not None:
            fn = frame.f_code.co_filename
            if not fn.startswith(_PKG):
                break
            if fn.startswith(_OPS):
                name = frame.f_code.co_name
                if op is None:
                    if name in _CONST_HELPERS:
                        const = True
                    elif not name.startswith("_") and name not in _HELPERS:
                        op = frame
            elif fn.startswith(_SKIP_LIB):
                in_lib = True
            frame = frame.f_back
        self.op_frame = op
        self.user = frame
        self.const = const
        self.in_lib = in_lib
        self._inputs = None

    @property
    def op(self):
        return None if self.op_frame is None else self.op_frame.f_code.co_name

    @property
    def line(self):
        return _where(self.user)

    def inputs(self, out):
        """Tensors among the op frame's locals (and in its list/tuple locals), `out` excluded."""
        if self._inputs is None:
            from .._tensor import Tensor
            res = []
            seen = {id(out)}
            if self.op_frame is not None:
                for v in list(self.op_frame.f_locals.values()):
                    vals = v if isinstance(v, (list, tuple)) else (v,)
                    for x in vals:
                        if isinstance(x, Tensor) and id(x) not in seen:
                            seen.add(id(x))
                            res.append(x)
            self._inputs = res
        return self._inputs


class IdMap:
    """A map keyed by object identity that forgets entries when the object dies (no __eq__ calls)."""
    __slots__ = ("_d", "__weakref__")

    def __init__(self):
        self._d = {}

    def set(self, obj, value):
        k = id(obj)
        d = self._d
        sref = weakref.ref(self)

        def gone(r, k=k):
            m = sref()
            if m is not None:
                e = m._d.get(k)
                if e is not None and e[0] is r:
                    del m._d[k]
        d[k] = (weakref.ref(obj, gone), value)

    def setdefault(self, obj, value):
        if self.get(obj) is None:
            self.set(obj, value)

    def get(self, obj, default=None):
        e = self._d.get(id(obj))
        if e is None or e[0]() is not obj:
            return default
        return e[1]

    def __len__(self):
        return len(self._d)


class Event:
    """One logged event: `kind` (see _CUT_KINDS, plus "zero_grad" and "backward"), the user's `line`,
    the source tensors (strongly: their grad_fn, weakly: leaves), and the node sequence number at the
    time (events with ``seq < sequence_nr(output.grad_fn)`` happened before that output was computed)."""
    __slots__ = ("kind", "line", "index", "seq", "fns", "leaves", "result", "detail", "params")

    def __init__(self, kind, line, index, seq, detail=""):
        self.kind = kind
        self.line = line
        self.index = index
        self.seq = seq
        self.fns = []
        self.leaves = []
        self.result = None
        self.detail = detail
        self.params = None

    def add_source(self, t):
        fn = t._grad_fn
        if fn is not None:
            if all(f is not fn for f in self.fns):
                self.fns.append(fn)
        elif all(r() is not t for r in self.leaves):
            self.leaves.append(weakref.ref(t))

    @property
    def cause(self):
        return _CUT_KINDS.get(self.kind, self.kind)

    def __repr__(self):
        return f"Event({self.kind!r}, line={self.line!r}{', ' + self.detail if self.detail else ''})"


class Watch:
    """The log of one ``explain.watch()`` block.  ``events`` holds at most `maxlen` entries."""

    def __init__(self, maxlen=256):
        self.events = deque(maxlen=maxlen)
        self.births = IdMap()       # leaf tensor (or its array) -> line where it was made
        self.node_lines = IdMap()   # graph node -> line where its op ran
        self._n = 0
        self.active = False

    # -- context manager ----------------------------------------------------------------
    def __enter__(self):
        HUB.add(self)
        return self

    def __exit__(self, *exc):
        HUB.remove(self)
        return False

    # -- recording (called by HUB) ---------------------------------------------------------
    def log(self, kind, line, detail=""):
        self._n += 1
        ev = Event(kind, line, self._n, HUB.last_seq, detail)
        self.events.append(ev)
        return ev

    def on_make(self, t, ctx):
        fn = t._grad_fn
        line = ctx.line
        if fn is not None:
            self.node_lines.set(fn, line)
        else:
            self.births.set(t, line)
            try:
                self.births.setdefault(t._data, line)     # a Parameter shares the array of the tensor it wraps
            except TypeError:
                pass
        if ctx.op_frame is None or ctx.in_lib:
            return
        if not _state.enabled:
            srcs = [x for x in ctx.inputs(t) if x._rg]
            if srcs:
                last = self.events[-1] if self.events else None
                if last is not None and last.kind == "no_grad" and last.line == line:
                    ev = last
                else:
                    ev = self.log("no_grad", line, f"op {ctx.op}")
                for x in srcs:
                    ev.add_source(x)
                ev.result = weakref.ref(t)
            return
        path = ctx.op_frame.f_code.co_filename
        if path == _CONVERSION and t._data.dtype.kind in "iub":
            srcs = [x for x in ctx.inputs(t) if x._rg]
            if srcs:
                from .._dtype import _FROM_NP
                ev = self.log("integer cast", line, f"to {_FROM_NP[t._data.dtype]}")
                for x in srcs:
                    ev.add_source(x)
                ev.result = weakref.ref(t)
        elif path == _CREATION[0] and ctx.op == "tensor":
            from .._tensor import Tensor
            data = ctx.op_frame.f_locals.get("data")
            if isinstance(data, Tensor) and (data._rg or data._grad_fn is not None):
                ev = self.log("torch.tensor()", line)
                ev.add_source(data)
                ev.result = weakref.ref(t)

    def on_cut(self, kind, src, result, line):
        ev = self.log(kind, line)
        ev.add_source(src)
        if result is not None:
            ev.result = weakref.ref(result)

    def on_zero_grad(self, obj, line):
        from ..nn.modules.module import Module
        if isinstance(obj, Module):
            params = list(obj.parameters())
        else:
            params = [p for g in obj.param_groups for p in g["params"]]
        ev = self.log("zero_grad", line, type(obj).__name__)
        ev.params = [weakref.ref(p) for p in params]

    def on_backward(self, root, line):
        ev = self.log("backward", line)
        ev.fns = [n for n, _ in root.next_functions if n is not None]

    # -- queries (used by why_no_grad) ------------------------------------------------------
    def line_of(self, t):
        """Where tensor `t` was made, if this watch saw it."""
        fn = t._grad_fn
        if fn is not None:
            return self.node_lines.get(fn)
        line = self.births.get(t)
        if line is None:
            line = self.births.get(t._data)
        return line


class _Hub:
    """The single observer installed in ``state.watching`` while any watch is active."""

    def __init__(self):
        self.watches = []
        self.nans = []
        self.busy = False
        self.in_backward = 0
        self.last_seq = -1
        self.last = None

    def add(self, w):
        if isinstance(w, Watch):
            self.watches.append(w)
            self.last = w
        else:
            self.nans.append(w)
        _state.watching = self

    def remove(self, w):
        lst = self.watches if isinstance(w, Watch) else self.nans
        for i in range(len(lst) - 1, -1, -1):
            if lst[i] is w:
                del lst[i]
                break
        if not self.watches and not self.nans:
            _state.watching = None

    # -- called by the core ------------------------------------------------------------
    def on_make(self, t):
        if self.busy or self.in_backward:
            return
        self.busy = True
        try:
            fn = t._grad_fn
            if fn is not None:
                self.last_seq = sequence_nr(fn)
            ctx = OpContext(sys._getframe(2))
            if ctx.const:
                return
            for w in self.watches:
                _safe(w.on_make, t, ctx)
            for n in self.nans:
                _safe(n.on_make, t, ctx)
        finally:
            self.busy = False

    def on_cut(self, kind, src, result=None):
        if self.busy or self.in_backward or not self.watches:
            return
        caller = sys._getframe(2)
        if caller.f_code.co_filename.startswith(_PKG):
            return      # glassgrad's own use (a loss's .item(), BatchNorm's running stats...)
        if not (src._rg or src._grad_fn is not None):
            return      # nothing to cut: no gradient could flow through it anyway
        line = _where(caller)
        for w in self.watches:
            _safe(w.on_cut, kind, src, result, line)

    def on_zero_grad(self, obj):
        if self.busy or not self.watches:
            return
        line = _where(user_frame(sys._getframe(2)))
        for w in self.watches:
            _safe(w.on_zero_grad, obj, line)

    def on_backward_begin(self, root):
        line = _where(user_frame(sys._getframe(2)))
        if not self.in_backward:
            for w in self.watches:
                _safe(w.on_backward, root, line)
            for n in self.nans:
                _safe(n.on_backward_begin, root, line)
        self.in_backward += 1

    def on_node(self, node, grads_in, grads_out):
        for n in self.nans:
            _safe(n.on_node, node, grads_in, grads_out)

    def on_backward_end(self):
        self.in_backward -= 1


HUB = _Hub()


def _safe(fn, *args):
    """Run an observer; a finding (NonFiniteError) propagates, a failure of the tool itself never
    breaks the user's computation (it is reported once as a warning)."""
    try:
        fn(*args)
    except RuntimeError as e:
        if e.__class__.__name__ == "NonFiniteError":
            raise
        _tool_failed(e)
    except Exception as e:      # noqa: BLE001 -- a debugging aid must not stop training
        _tool_failed(e)


_WARNED = []


def _tool_failed(e):
    if not _WARNED:
        _WARNED.append(e)
        import warnings
        warnings.warn(f"glassgrad.explain watch: an observer failed and was skipped ({type(e).__name__}: {e})",
                      RuntimeWarning, stacklevel=4)


def watch(maxlen=256):
    """``with explain.watch() as log:`` -- record where your code cuts the graph.

    While active, every ``detach()``, ``.data``, ``.item()``, ``.numpy()``, ``.tolist()``,
    ``int()``/``float()``, ``torch.tensor(t)`` re-wrap, integer cast, op run under ``no_grad`` on a
    tensor that requires grad, ``zero_grad()`` and ``backward()`` called from your code is logged with
    its source line (``log.events``, at most `maxlen`).  ``explain.why_no_grad`` uses this log (the
    active one, or the last one after the block ends) to name the line where a gradient was lost.
    """
    return Watch(maxlen)


def last_watch():
    """The active watch, or the most recent one."""
    return HUB.watches[-1] if HUB.watches else HUB.last
