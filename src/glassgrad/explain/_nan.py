"""explain.nan_watch: stop at the first op whose forward value or backward gradient is not finite.

``with explain.nan_watch():`` raises :class:`NonFiniteError` (a ``RuntimeError``) with ``.op``,
``.phase`` ("forward"/"backward"), ``.origin`` ("created"/"propagated"), ``.where_trap``, ``.line``
(``file.py:LINE`` of your code) and a message with the shapes and statistics (min/max/mean of the
finite values, counts of nan/+inf/-inf) of the values involved.  It only reads values: every gradient
is bit-identical with and without it.

The exact rules
---------------
Forward (each op's output, seen through the core's ``_make`` hook; in-place ops are not seen):

* Deliberate infinities are not errors: a tensor made by a creation op (``torch.tensor``,
  ``torch.full``...), or by an op given a non-finite Python number (``masked_fill(m, -inf)``), is
  *excused* when its non-finite values are all ±inf; an op whose non-finite inputs are all excused and
  whose output has no NaN gives an excused output (``scores + mask`` with a ``-inf`` mask).
* Otherwise a non-finite output starts a *pending* record: origin "created" if the op's inputs were
  finite, or if its output has a NaN while no input had one (``inf - inf``, ``0 * inf``, a softmax over
  a row of ``-inf``); "propagated" if a non-finite value arrived in its inputs.  The forward does not
  stop yet, because a later ``where`` / mask may still discard the value (seed 000's gated branch).
* An op that consumes a pending tensor then decides:
    - its output is floating point and all finite -> the value was discarded (``where``,
      ``masked_fill``, indexing, ``nan_to_num``...): the record is *gated*;
    - its output is not finite and has as many elements as the pending input (an elementwise op,
      including a ``mask * x`` multiplication, which keeps NaN: 0 × NaN = NaN; a view or reshape) ->
      the output joins the record;
    - its output is not finite and has another number of elements (a reduction, matmul, conv,
      broadcast...) -> the watch stops: ``NonFiniteError`` for the record's op and line (phase
      "forward"; the message names the op and line that consumed it).
* ``backward()`` from an output that is a member of a record, and the end of the ``nan_watch`` block
  while a member of an ungated record is still alive, also stop with that record's error.

Backward (the engine's per-node observation point): the first node that returns a non-finite gradient
stops the watch (phase "backward", ``.op`` is the node's name, ``.line`` where its forward ran):
"created" if the gradients it received were finite, "propagated" otherwise.  If the node belongs to a
*gated* record (its forward value was non-finite and a ``where`` / mask discarded it), ``.where_trap``
is True: the discarded branch still receives a zero gradient, and its local derivative at the
non-finite point (0 / NaN, 0 × inf) turns that zero into NaN.  The message gives the fix: sanitise the
branch's input too, ``torch.where(x > 0, torch.sqrt(torch.where(x > 0, x, 1.)), 0.)``.
"""
import math
import weakref

import numpy as np

from ._watch import HUB, IdMap, _CREATION

__all__ = ["nan_watch", "NonFiniteError", "NanWatch"]

_FIX = ("sanitise the branch's input too, so the unselected branch computes a finite value -- the double "
        "`where`: torch.where(x > 0, torch.sqrt(torch.where(x > 0, x, 1.)), 0.)")


class NonFiniteError(RuntimeError):
    """A forward value or a backward gradient that is not finite (raised by ``explain.nan_watch``)."""

    def __init__(self, message, *, op, phase, origin, where_trap=False, line=None):
        super().__init__(message)
        self.op = op
        self.phase = phase
        self.origin = origin
        self.where_trap = where_trap
        self.line = line


def _arr(g):
    return getattr(g, "_data", g)


def _finite(a):
    return a.dtype.kind not in "fV" or bool(np.isfinite(a).all())


def _has_nan(a):
    return a.dtype.kind in "fV" and bool(np.isnan(a).any())


def stats(a):
    """'shape (2, 3) float32: min -1, max 4, mean 1.5 (finite values); nan 1, +inf 0, -inf 0 of 6'."""
    from ..backend import to_host
    a = np.asarray(to_host(_arr(a)))
    head = f"shape {tuple(a.shape)} {a.dtype}"
    if a.dtype.kind not in "fV":
        return head
    fin = a[np.isfinite(a)]
    vals = (f"min {fin.min():.4g}, max {fin.max():.4g}, mean {fin.mean():.4g}" if fin.size
            else "no finite value")
    return (f"{head}: {vals}; nan {int(np.isnan(a).sum())}, +inf {int(np.isposinf(a).sum())}, "
            f"-inf {int(np.isneginf(a).sum())} of {a.size}")


class _Record:
    """A non-finite forward value and the tensors it flowed into (same number of elements) since."""
    __slots__ = ("op", "line", "origin", "out", "inputs", "gated", "gate_op", "gate_line", "via", "members")

    def __init__(self, op, line, origin, out, inputs):
        self.op = op
        self.line = line
        self.origin = origin
        self.out = out            # stats text of the output
        self.inputs = inputs      # stats text of each input
        self.gated = False
        self.gate_op = None
        self.gate_line = None
        self.via = []             # ops it flowed through (same number of elements)
        self.members = []         # weakrefs to the tensors holding it

    def alive(self):
        return any(r() is not None for r in self.members)

    def error(self, stop=None):
        how = ("created here: its inputs were finite" if self.origin == "created"
               else "it arrived in its inputs (propagated from upstream)")
        msg = [f"nan_watch: the forward output of `{self.op}` at {self.line} is not finite ({how})."
               f"\n  output: {self.out}"]
        msg += [f"\n  input {i}: {s}" for i, s in enumerate(self.inputs)]
        if self.via:
            msg.append(f"\n  it then flowed through: {', '.join(self.via)}")
        if stop:
            msg.append(f"\n  stopped {stop}")
        if "mul" in self.via:
            msg.append("\n  note: multiplying by a mask does not remove a NaN/Inf (0 * NaN = NaN); select with "
                       "torch.where, and " + _FIX)
        return NonFiniteError("".join(msg), op=self.op, phase="forward", origin=self.origin, line=self.line)


class NanWatch:
    """The state of one ``explain.nan_watch()`` block (see the module docstring for the rules)."""

    def __init__(self):
        self.pending = IdMap()      # tensor -> _Record
        self.excused = IdMap()      # tensor -> True (deliberate ±inf)
        self.node_rec = IdMap()     # node -> _Record of the tensor it made
        self.node_lines = IdMap()   # node -> user line of its forward
        self.records = []

    def __enter__(self):
        HUB.add(self)
        return self

    def __exit__(self, typ, val, tb):
        HUB.remove(self)
        if typ is None:
            for rec in self.records:
                if not rec.gated and rec.alive():
                    raise rec.error("at the end of the nan_watch block (the value is still held)")
        return False

    # -- forward -----------------------------------------------------------------------
    def on_make(self, t, ctx):
        fn = t._grad_fn
        if fn is not None:
            self.node_lines.set(fn, ctx.line)
        if ctx.op_frame is None:
            return                      # not an op: detach/.data/Parameter/engine
        a = t._data
        finite = _finite(a)
        if len(self.pending):
            pend = [(x, r) for x in ctx.inputs(t) for r in (self.pending.get(x),) if r is not None]
            if pend:
                x, rec = pend[0]
                if finite:
                    if a.dtype.kind in "fV":
                        for _, r in pend:
                            if not r.gated:
                                r.gated, r.gate_op, r.gate_line = True, ctx.op, ctx.line
                    return
                if a.size == x._data.size:
                    self._join(rec, t, ctx.op)
                    return
                raise rec.error(f"where `{ctx.op}` at {ctx.line} consumed it (output {stats(a)})")
        if finite:
            return
        inputs = ctx.inputs(t)
        nan_out = _has_nan(a)
        if ctx.op_frame.f_code.co_filename in _CREATION or not inputs or _nonfinite_arg(ctx.op_frame):
            if not nan_out:
                self.excused.set(t, True)
            return                      # values the user wrote: data, not an op's failure
        bad = [x for x in inputs if not _finite(x._data)]
        if not bad or (nan_out and not any(_has_nan(x._data) for x in bad)):
            origin = "created"
        elif not nan_out and all(self.excused.get(x) for x in bad):
            self.excused.set(t, True)
            return
        else:
            origin = "propagated"
        rec = _Record(ctx.op, ctx.line, origin, stats(a), [stats(x._data) for x in inputs])
        self.records.append(rec)
        self._join(rec, t, None)

    def _join(self, rec, t, op):
        if op is not None:
            rec.via.append(op)
        rec.members.append(weakref.ref(t))
        self.pending.set(t, rec)
        if t._grad_fn is not None:
            self.node_rec.set(t._grad_fn, rec)

    # -- backward ----------------------------------------------------------------------
    def on_backward_begin(self, root, line):
        for n, _ in root.next_functions:
            rec = self.node_rec.get(n) if n is not None else None
            if rec is not None:
                raise rec.error(f"at backward() ({line}): the value reached the output")

    def on_node(self, node, grads_in, grads_out):
        bad = [i for i, g in enumerate(grads_out) if g is not None and not _finite(_arr(g))]
        if not bad:
            return
        in_bad = any(g is not None and not _finite(_arr(g)) for g in grads_in)
        origin = "propagated" if in_bad else "created"
        rec = self.node_rec.get(node)
        trap = rec is not None and rec.gated and not in_bad
        line = self.node_lines.get(node)
        name = node.name()
        how = ("created here: the gradient it received was finite" if origin == "created"
               else "a non-finite gradient arrived from the output side")
        msg = [f"nan_watch: the backward of {name} (forward at {line}) returned a non-finite gradient ({how})."]
        msg += [f"\n  gradient in {i}: {stats(g)}" for i, g in enumerate(grads_in) if g is not None]
        msg += [f"\n  gradient out {i} (to {_edge_name(node, i)}): {stats(g)}"
                for i, g in enumerate(grads_out) if g is not None]
        if trap:
            msg.append(f"\n  This is the gated-branch trap: the forward value of `{rec.op}` at {rec.line} was "
                       f"already not finite, and `{rec.gate_op}` at {rec.gate_line} discarded it; in backward "
                       f"the discarded branch still receives a zero gradient, and {name}'s local derivative at "
                       f"that point (0 / NaN, 0 * inf) turns it into NaN, which reaches the inputs."
                       f"\n  Fix: {_FIX}")
        raise NonFiniteError("".join(msg), op=name, phase="backward", origin=origin, where_trap=trap, line=line)


def _edge_name(node, i):
    nf = node.next_functions
    if i < len(nf) and nf[i][0] is not None:
        return nf[i][0].name()
    return "nothing"


def _nonfinite_arg(frame):
    """Did the op get a non-finite Python number (``masked_fill(m, float('-inf'))``)?"""
    for v in list(frame.f_locals.values()):
        if isinstance(v, (float, np.floating)) and not math.isfinite(v):
            return True
    return False


def nan_watch():
    """``with explain.nan_watch():`` -- stop at the first non-finite forward value or backward gradient.

    Raises :class:`NonFiniteError` naming the op, your source line, the shapes and statistics of the
    values, whether the non-finite value was created there or arrived from upstream, and whether it is
    the gated-branch ``where`` trap (with the fix).  See this module's docstring for the exact rules.
    """
    return NanWatch()
