"""explain.why_no_grad: say in one sentence why a tensor's ``.grad`` is None, with the source line.

The checks, in order (the first that applies is the answer):

1. ``stale_parameter`` -- `optimizer` and `model` given, and the tensor is in one but not the other
   (the model was re-created, or a parameter replaced, after the optimizer was built).  The line is
   where the model's current parameter was made (known when that ran inside ``explain.watch()``).
2. ``ok`` -- it has a ``.grad``.
3. a leaf with ``requires_grad=False``: if the watch saw it come out of a cut (``detach()``,
   ``.data``, ``torch.tensor(t)``, an integer cast, an op under ``no_grad``) that cut is the cause,
   else ``requires_grad_false`` (line: where it was made).
4. ``non_leaf`` -- it was computed by an op and ``retain_grad()`` was not called (and it is on a path
   to `output`, or no output was given).  Line: where it was computed.
5. not on any path from `output` to it (walk of ``output.grad_fn``'s ``next_functions`` for its
   ``AccumulateGrad`` / its ``grad_fn``): the watch log's cut whose source depends on it -- the latest
   one made before `output` was computed, else the latest -- gives ``detached`` (``detach()``,
   ``.data``, ``.item()``, ``.numpy()``, ``.tolist()``, ``float()``, ``torch.tensor(t)``),
   ``integer_cast`` (a cast to an integer dtype, ``int()``) or ``no_grad``; with no such cut,
   ``not_on_path`` (line: where `output` was computed).
6. on the path but ``.grad`` is None: a ``zero_grad()`` that covered it after the last logged
   ``backward()`` gives ``zero_grad_reset`` (line of that call); otherwise backward has not reached
   it yet (``ok``, with that sentence).
"""
from ..autograd.graph import AccumulateGrad
from ..autograd.traversal import sequence_nr
from ._watch import last_watch

__all__ = ["why_no_grad", "Reason"]

CAUSES = ("ok", "non_leaf", "requires_grad_false", "not_on_path", "detached", "no_grad", "integer_cast",
          "zero_grad_reset", "stale_parameter")

_HINT = " Run the code inside `with explain.watch():` to find the line."


class Reason:
    """Why a ``.grad`` is None: ``.cause`` (one of CAUSES), ``.line`` ("file.py:LINE" or None),
    ``str()`` is the sentence."""
    __slots__ = ("cause", "line", "message", "name")

    def __init__(self, cause, line, message, name=None):
        self.cause = cause
        self.line = line
        self.message = message
        self.name = name

    def __str__(self):
        return self.message

    def __repr__(self):
        return f"Reason(cause={self.cause!r}, line={self.line!r}): {self.message}"

    def __eq__(self, other):
        if isinstance(other, str):
            return self.cause == other
        return NotImplemented

    __hash__ = object.__hash__


def _reaches(roots, t):
    """Does the graph below `roots` (nodes) contain `t` (its grad_fn, or its AccumulateGrad)?"""
    fn_t = t._grad_fn
    seen = set()
    stack = [r for r in roots if r is not None]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if fn_t is not None:
            if n is fn_t:
                return True
        elif n.__class__ is AccumulateGrad and n.variable is t:
            return True
        for nx, _ in n.next_functions:
            if nx is not None and nx not in seen:
                stack.append(nx)
    return False


def _depends(ev, t):
    if any(r() is t for r in ev.leaves):
        return True
    return bool(ev.fns) and _reaches(ev.fns, t)


def _at(line):
    return f" at {line}" if line else ""


def _cut_sentence(ev, name, t):
    k, at = ev.kind, _at(ev.line)
    subject = "it" if any(r() is t for r in ev.leaves) else "a tensor computed from it"
    if ev.cause == "no_grad":
        return (f"{name} gets no gradient because {subject} was used inside a `torch.no_grad()` block{at} "
                f"({ev.detail}): ops run there are not recorded, so the path to the output is cut; "
                f"compute that part outside `no_grad`.")
    if k == "int()":
        what = "converted to a Python int with `int()`"
    elif k == "integer cast":
        what = f"cast to an integer dtype ({ev.detail})"
    elif k == "torch.tensor()":
        what = ("re-wrapped with `torch.tensor(...)`, which copies the values into a new leaf with no history "
                "(use the tensor itself, or `.clone()` for a copy)")
    elif k in (".item()", ".tolist()", "float()"):
        what = f"turned into a Python number with `{k}`, and what is computed from a number is a constant"
    elif k == ".numpy()":
        what = "turned into a NumPy array with `.numpy()`, and what is computed from it is a constant"
    elif k == ".data":
        what = "read through `.data`, which gives the values without their history"
    else:
        what = "detached with `.detach()`, which gives the values without their history"
    if ev.cause == "integer_cast":
        return (f"{name} gets no gradient because{at} {subject} was {what}: integer tensors carry no "
                f"gradient, so the path to the output is cut there; keep it floating point.")
    return (f"{name} gets no gradient because{at} {subject} was {what}, so the path to the output is cut "
            f"there; keep the original tensor in the computation.")


def why_no_grad(t, output=None, *, model=None, optimizer=None):
    """Why is ``t.grad`` None?  Returns a :class:`Reason` (see the module docstring for the rules).

    `output` is the tensor you call ``backward()`` on; `model` gives parameter names; `optimizer`
    lets it check that the optimizer holds the model's own parameter objects.  Source lines come from
    the active (or the last) ``explain.watch()`` block.
    """
    w = last_watch()
    names = {}
    if model is not None:
        names = {id(p): n for n, p in model.named_parameters()}
    pname = names.get(id(t))
    name = f"`{pname}`" if pname else ("this parameter" if getattr(t, "_is_param", False) else "this tensor")
    line_of = (lambda x: w.line_of(x)) if w is not None else (lambda x: None)

    # 1. the optimizer holds other objects than the model
    if optimizer is not None and model is not None:
        r = _stale_parameter(t, name, names, model, optimizer, line_of)
        if r is not None:
            return r

    # 2. it has a gradient
    if t._grad is not None:
        return Reason("ok", None, f"{name} has a gradient (its .grad is set).", pname)

    events = list(w.events) if w is not None else []

    # 3. a leaf that does not require grad
    if t._grad_fn is None and not t._rg:
        return _no_requires_grad(t, name, pname, events, line_of)

    out_fn = None if output is None else output._grad_fn
    on_path = output is not None and (output is t or (out_fn is not None and _reaches([out_fn], t)))

    # 4. a non-leaf
    if t._grad_fn is not None and not t.retains_grad and (output is None or on_path):
        line = line_of(t)
        return Reason("non_leaf", line,
                      f"{name} is not a leaf: it was computed by {t._grad_fn.name()}{_at(line)}, and backward() "
                      f"fills .grad only for leaves -- call `.retain_grad()` on it before backward(), or get it "
                      f"with `torch.autograd.grad`.", pname)

    # 5. not on a path to the output: find the cut
    if not on_path:
        r = _cut_off(t, name, pname, events, output, w, line_of)
        if r is not None:
            return r

    # 6. on the path (or no output given) but no .grad
    return _no_grad_yet(t, name, pname, events, output, w)


def _stale_parameter(t, name, names, model, optimizer, line_of):
    """Check 1: the optimizer and the model hold different objects for this parameter (or None)."""
    pname = names.get(id(t))
    opt_ps = [p for g in optimizer.param_groups for p in g["params"]]
    opt_ids = {id(p) for p in opt_ps}
    model_ps = list(model.parameters())
    if id(t) in names and id(t) not in opt_ids:
        foreign = sum(1 for p in opt_ps if id(p) not in names)
        line = line_of(t)
        return Reason("stale_parameter", line,
                      f"The optimizer does not hold the model's {name} (made{_at(line) or ' later'}): it holds "
                      f"{foreign} tensor(s) that are not in the model, so `optimizer.step()` never updates "
                      f"this one -- the model was re-created, copied or had this parameter replaced after the "
                      f"optimizer was built; build the optimizer from `model.parameters()` after that.", pname)
    if id(t) in opt_ids and id(t) not in names:
        twin = None
        if len(opt_ps) == len(model_ps):
            twin = model_ps[[id(p) for p in opt_ps].index(id(t))]
        elif model_ps:
            same = [p for p in model_ps if p.shape == t.shape and id(p) not in opt_ids]
            twin = same[0] if same else None
        tname = f"`{names[id(twin)]}`" if twin is not None else "its parameter"
        line = line_of(twin) if twin is not None else None
        return Reason("stale_parameter", line,
                      f"This tensor is held by the optimizer but is not a parameter of the model: the model's "
                      f"{tname} is a different object (made{_at(line) or ' after the optimizer was built'}), "
                      f"so backward() fills that one's .grad and `optimizer.step()` updates a copy the model "
                      f"no longer uses; build the optimizer after creating or changing the model.",
                      names.get(id(twin)) if twin is not None else None)
    return None


def _no_requires_grad(t, name, pname, events, line_of):
    """Check 3: a leaf with requires_grad=False -- the cut that made it, if the watch saw one."""
    for ev in reversed(events):
        r = ev.result
        if r is not None and r() is t:
            return Reason(ev.cause, ev.line, _cut_sentence(ev, name, t), pname)
    line = line_of(t)
    if t._data.dtype.kind not in "fV":
        why = f"it has integer/bool dtype {t.dtype}, which cannot require gradients"
    else:
        why = ("it has requires_grad=False, so autograd does not track it; create it with "
               "requires_grad=True or call `.requires_grad_()`")
    made = _at(line) or " outside a watch"
    return Reason("requires_grad_false", line, f"{name} gets no .grad because {why} (made{made}).", pname)


def _cut_off(t, name, pname, events, output, w, line_of):
    """Check 5: not on a path to the output -- the logged cut it depends on (the latest before the output
    was computed), else ``not_on_path`` when an output was given (or None: no output, no cut)."""
    out_fn = None if output is None else output._grad_fn
    cuts = [ev for ev in events if ev.cause in ("detached", "integer_cast", "no_grad") and _depends(ev, t)]
    if cuts:
        before = [ev for ev in cuts if out_fn is not None and ev.seq < sequence_nr(out_fn)]
        ev = (before or cuts)[-1]
        return Reason(ev.cause, ev.line, _cut_sentence(ev, name, t), pname)
    if output is None:
        return None
    line = line_of(output)
    if out_fn is None:
        msg = (f"{name} is not on any path to the output: the output{_at(line)} has no grad_fn (nothing it "
               f"was computed from requires grad, or the path was cut).")
    else:
        msg = f"{name} is not used in computing the output{_at(line)}, so backward() never reaches it."
    return Reason("not_on_path", line, msg + ("" if w is not None else _HINT), pname)


def _no_grad_yet(t, name, pname, events, output, w):
    """Check 6: on the path (or no output given) but no .grad: a zero_grad() after the last backward, or
    backward has not reached it yet."""
    last_bw = max((ev.index for ev in events if ev.kind == "backward"), default=0)
    for ev in reversed(events):
        if ev.kind == "zero_grad" and ev.index > last_bw and any(r() is t for r in ev.params):
            return Reason("zero_grad_reset", ev.line,
                          f"{name} had its .grad reset to None by `{ev.detail}.zero_grad()`{_at(ev.line)}, after "
                          f"the last backward(); read .grad between backward() and zero_grad().", pname)
    if output is None:
        return Reason("not_on_path", None,
                      f"{name} has no .grad and no backward() has reached it; pass the output to check the path."
                      + ("" if w is not None else _HINT), pname)
    if w is None:
        return Reason("zero_grad_reset", None,
                      f"{name} is on a path to the output, so either backward() has not been called since, or "
                      f"`zero_grad()` reset its .grad." + _HINT, pname)
    return Reason("ok", None, f"{name} is on a path to the output: it gets a gradient once you call backward().",
                  pname)
