"""Watching a training script: the engine room of ``glassgrad explain SCRIPT.py``.

    with Session(steps=3) as s:          # in-process: wraps the entry points while the block runs
        train()                          # ordinary code: forward, loss.backward(), opt.step()
    result = s.result()                  # a SessionResult; _report.write_report(result, "r.html")

    result = run_script("train.py", ["--lr", "0.1"], steps=3)   # the same around runpy + the torch alias

What it watches, reading only (nothing it does changes a value or a gradient):
  * a *step*: the backward calls of a scalar loss (``Tensor.backward`` is wrapped while watching)
    up to ``Optimizer.step`` (a global step pre/post hook); a script without an optimizer has one
    step per backward;
  * the *model*: the first top-level ``nn.Module`` call with parameters (``Module.__call__`` is
    wrapped until the first backward and ``explain.trace_modules`` follows that call), else a
    module found in the calling frame;
  * step 0's loss: ``explain.graph`` (collapsed to module depth 1) and ``explain.attribute`` over
    its loss terms -- the summands of a chain of ``AddBackward0`` (named after the script's own
    variables where one holds the summand) or the variables named by ``terms`` (``_terms.find_terms``);
  * every watched step: the loss, ``explain.flow`` statistics (a FlowTracker), parameters whose
    ``.grad`` stayed None (``explain.why_no_grad`` when available), non-finite losses/gradients,
    and, when ``explain.nan_watch`` is available, its findings.
After ``steps`` steps the script is stopped (a private BaseException, caught by ``run_script``)
unless ``full=True``; then the wrappers are removed and it runs on at full speed.
"""
import math
import os
import runpy
import sys
import time
import traceback

from .._tensor import Tensor
from ._terms import find_terms, _frame_tensors

__all__ = ["Session", "SessionResult", "run_script", "StopScript"]


class StopScript(BaseException):
    """Raised inside the watched script after the last watched step (a BaseException, so that the
    script's own ``except Exception`` does not swallow it)."""


def _optional(name):
    """explain.<name> if that part of explain is installed, else None."""
    try:
        from .. import explain
        return getattr(explain, name)
    except (AttributeError, ImportError):
        return None


def _value(t):
    try:
        return float(t._data.reshape(-1)[0])
    except Exception:  # noqa: BLE001 - a value we cannot read is reported as NaN
        return float("nan")


class StepRecord:
    """What one watched step saw."""

    def __init__(self, index):
        self.index = index
        self.losses = []          # value of each watched backward's loss in this step
        self.flow = None          # explain.Flow taken before the optimizer step
        self.no_grad = []         # [(param name, cause, sentence, line)]

    @property
    def loss(self):
        return self.losses[0] if self.losses else float("nan")


class SessionResult:
    """Everything the report shows; plain attributes."""

    def __init__(self):
        self.script = None
        self.args = []
        self.requested_steps = 0
        self.steps = []            # [StepRecord]
        self.stopped = False       # stopped after the requested steps
        self.error = None          # formatted traceback of the script's exception
        self.error_type = None
        self.error_summary = None  # "Type: first line of the message"
        self.exit_code = 0         # what the CLI should return
        self.model = None
        self.model_name = None
        self.model_repr = None
        self.graph = None          # GraphView (collapsed), or None
        self.graph_error = None
        self.terms = []            # names of the attributed loss terms
        self.terms_how = None      # one sentence: how the terms were found
        self.attribution = None
        self.attribution_error = None
        self.tracker = None        # FlowTracker over the watched steps
        self.nan_findings = []     # [dict(step, phase, op, origin, where_trap, line, message)]
        self.nan_tool = None       # "nan_watch" or "basic checks"
        self.why_findings = []     # [dict(step, param, cause, sentence, line)]
        self.why_tool = None
        self.seconds = 0.0
        self.notes = []

    @property
    def final_loss(self):
        for s in reversed(self.steps):
            if s.losses:
                return s.losses[-1]
        return float("nan")


# -- the session ------------------------------------------------------------------------------------------
class Session:
    """Watch the first `steps` training steps of the code run inside ``with Session(...)``."""

    def __init__(self, steps=3, *, terms=None, full=False, nan=True, nan_steps=None, progress=True,
                 stream=None, graph_depth=1):
        if steps < 1:
            raise ValueError("steps must be at least 1")
        self.n = int(steps)
        self.term_names = list(terms) if terms else None
        self.full = full
        self.use_nan = nan
        self.nan_steps = self.n if nan_steps is None else nan_steps
        self.progress = progress
        self.stream = stream if stream is not None else sys.stderr
        self.graph_depth = graph_depth
        self.res = SessionResult()
        self.res.requested_steps = self.n
        self._patched = []
        self._handles = []
        self._open = None          # the StepRecord being filled
        self._in_backward = False
        self._trace = None
        self._trace_done = False
        self._call_depth = 0
        self._have_optimizer = False
        self._optimizer = None
        self._watch_cm = None
        self._first_loss = None
        self._loss_of_step = None
        self._nan_cm = None
        self._bar = None
        self._t0 = None
        self._active = False

    # -- context manager ----------------------------------------------------------------------------------
    def __enter__(self):
        self._t0 = time.perf_counter()
        self._install()
        return self

    def __exit__(self, et, ev, tb):
        self._uninstall()
        self.res.seconds = time.perf_counter() - self._t0
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        return False

    def result(self):
        return self.res

    # -- wrappers --------------------------------------------------------------------------------------------
    def _patch(self, owner, name, new):
        old = owner.__dict__[name]
        self._patched.append((owner, name, old))
        setattr(owner, name, new)
        return old

    def _install(self):
        from .._tensor_protocol import TensorProtocol
        from ..nn.modules.module import Module
        from ..optim import optimizer as optmod
        sess = self
        orig_backward = TensorProtocol.__dict__["backward"]

        def backward(t, gradient=None, retain_graph=None, create_graph=False, inputs=None):
            if not sess._active or sess._in_backward or t._grad_fn is None or t._data.size != 1:
                return orig_backward(t, gradient, retain_graph, create_graph, inputs)
            frame = sys._getframe(1)
            sess._before_backward(t, frame)
            sess._in_backward = True
            try:
                orig_backward(t, gradient, retain_graph, create_graph, inputs)
            finally:
                sess._in_backward = False
                del frame
            sess._after_backward(t)

        backward.__doc__ = orig_backward.__doc__
        self._patch(TensorProtocol, "backward", backward)

        orig_call = Module.__dict__["__call__"]

        def call(mod, *args, **kwargs):
            if sess._trace_done or sess._call_depth > 0:
                return orig_call(mod, *args, **kwargs)
            if sess._trace is None and next(iter(mod.parameters()), None) is not None:
                from ._graph import trace_modules
                tr = trace_modules(mod)
                tr.__enter__()
                sess._trace = tr
            sess._call_depth += 1
            try:
                return orig_call(mod, *args, **kwargs)
            finally:
                sess._call_depth -= 1

        self._patch(Module, "__call__", call)

        orig_opt_init = optmod.Optimizer.__dict__["__init__"]

        def opt_init(opt, *args, **kwargs):
            sess._have_optimizer = True
            if sess._optimizer is None:
                sess._optimizer = opt
            return orig_opt_init(opt, *args, **kwargs)

        self._patch(optmod.Optimizer, "__init__", opt_init)
        self._handles.append(optmod.register_optimizer_step_pre_hook(lambda opt, a, k: sess._opt_pre()))
        self._handles.append(optmod.register_optimizer_step_post_hook(lambda opt, a, k: sess._opt_post()))
        if self.use_nan and self.nan_steps > 0:
            self._start_nan_watch()
        if self.nan_steps > 0:
            self._start_watch()
        self._active = True
        if self.progress:
            self._start_progress()

    def _uninstall(self):
        self._active = False
        self._stop_trace()
        self._stop_nan_watch()
        self._stop_watch()
        for owner, name, old in reversed(self._patched):
            setattr(owner, name, old)
        self._patched = []
        for h in self._handles:
            h.remove()
        self._handles = []
        if self.res.graph is not None:
            try:
                self.res.graph.unwatch()
            except Exception:  # noqa: BLE001
                pass

    def _stop_trace(self):
        self._trace_done = True
        if self._trace is not None:
            self._trace.close()

    # -- progress ------------------------------------------------------------------------------------------
    def _start_progress(self):
        try:
            from tqdm.auto import tqdm
        except ImportError:
            tqdm = None
        if tqdm is not None:
            self._bar = tqdm(total=self.n, desc="glassgrad explain", unit="step", file=self.stream,
                             leave=True)
        else:
            print(f"glassgrad explain: watching the first {self.n} training step(s)", file=self.stream, flush=True)

    def _progress(self, rec):
        if not self.progress:
            return
        if self._bar is not None:
            self._bar.set_postfix(loss=f"{rec.loss:.4g}", refresh=False)
            self._bar.update(1)
        else:
            print(f"glassgrad explain: step {rec.index + 1}/{self.n}  loss {rec.loss:.6g}", file=self.stream,
                  flush=True)

    # -- nan_watch ------------------------------------------------------------------------------------------
    def _start_nan_watch(self):
        nw = _optional("nan_watch")
        if nw is None:
            self.res.nan_tool = "basic checks (explain.nan_watch is not available)"
            return
        import inspect
        kw = {}
        try:
            params = inspect.signature(nw).parameters
        except (TypeError, ValueError):
            params = {}
        # a non-raising mode when the tool has one: record, don't abort the script
        for name, val in (("raise_", False), ("raises", False), ("abort", False), ("stop", False),
                          ("action", "record"), ("mode", "record"), ("on_error", "record"), ("record", True)):
            if name in params:
                kw[name] = val
                break
        try:
            cm = nw(**kw)
            cm.__enter__()
        except Exception as e:  # noqa: BLE001
            self.res.nan_tool = f"basic checks (explain.nan_watch failed to start: {e})"
            return
        self._nan_cm = cm
        self.res.nan_tool = "explain.nan_watch" + (f"({', '.join(f'{k}={v!r}' for k, v in kw.items())})" if kw else "")

    def _start_watch(self):
        w = _optional("watch")        # source lines of graph cuts, for why_no_grad
        if w is None:
            return
        try:
            cm = w()
            cm.__enter__()
        except Exception as e:  # noqa: BLE001
            self.res.notes.append(f"explain.watch failed to start: {e}")
            return
        self._watch_cm = cm

    def _stop_watch(self):
        cm, self._watch_cm = self._watch_cm, None
        if cm is not None:
            try:
                cm.__exit__(None, None, None)
            except Exception as e:  # noqa: BLE001
                self.res.notes.append(f"explain.watch: {e}")

    def _stop_nan_watch(self, exc=None):
        cm, self._nan_cm = self._nan_cm, None
        if cm is None:
            return
        try:
            cm.__exit__(None, None, None)
        except Exception as e:  # noqa: BLE001
            if type(e).__name__ == "NonFiniteError":        # a non-finite value still alive at the end
                self.add_nan(e)
            else:
                self.res.notes.append(f"nan_watch: {e}")
        for f in list(getattr(cm, "findings", None) or getattr(cm, "errors", None) or []):
            self.add_nan(f)

    def add_nan(self, err):
        """Record a NonFiniteError (or a nan_watch finding) once."""
        f = nan_finding(err, self._step_index())
        if not any(g["message"] == f["message"] for g in self.res.nan_findings):
            self.res.nan_findings.append(f)

    def _step_index(self):
        return self._open.index if self._open is not None else len(self.res.steps)

    # -- steps ----------------------------------------------------------------------------------------------
    def _before_backward(self, loss, frame):
        if self._open is None:
            self._open = StepRecord(len(self.res.steps))
        rec = self._open
        rec.losses.append(_value(loss))
        if not math.isfinite(rec.losses[-1]):
            self.res.nan_findings.append({"step": rec.index, "phase": "forward", "op": type(loss._grad_fn).__name__,
                                          "origin": None, "where_trap": False, "line": None,
                                          "message": f"the loss is {rec.losses[-1]} at step {rec.index}"})
        if rec.index == 0 and self._first_loss is None:
            self._first_loss = loss
            self._stop_trace()
            self._analyse_first(loss, frame)
        self._loss_of_step = loss

    def _after_backward(self, loss):
        if self.res.graph is not None and self._open is not None and self._open.index == 0:
            try:
                self.res.graph.unwatch()
            except Exception:  # noqa: BLE001
                pass
        if not self._have_optimizer:
            self._record_grads()
            self._close_step()

    def _opt_pre(self):
        if self._active and self._open is not None:
            self._record_grads()

    def _opt_post(self):
        if self._active and self._open is not None:
            self._close_step()

    def _params(self):
        m = self.res.model
        if m is not None:
            return list(m.named_parameters())
        return getattr(self, "_leaf_params", [])

    def _record_grads(self):
        rec = self._open
        if rec.flow is not None:
            return
        if self.res.tracker is None:
            from ._flow import FlowTracker
            target = self.res.model if self.res.model is not None else dict(self._params())
            self.res.tracker = FlowTracker(target)
        try:
            rec.flow = self.res.tracker.step()
        except Exception as e:  # noqa: BLE001
            self.res.notes.append(f"flow at step {rec.index}: {e}")
            return
        for lay in rec.flow.layers:
            if "non_finite" in lay.flags:
                self.res.nan_findings.append({"step": rec.index, "phase": "backward", "op": None, "origin": None,
                                              "where_trap": False, "line": None,
                                              "message": f"layer {lay.name}: the gradient holds NaN/Inf"})
        why = _optional("why_no_grad")
        self.res.why_tool = "explain.why_no_grad" if why is not None else "basic checks (explain.why_no_grad is not available)"
        for name, p in self._params():
            if p.grad is not None:
                continue
            f = {"step": rec.index, "param": name, "cause": None, "sentence": None, "line": None}
            if why is not None:
                try:
                    try:
                        r = why(p, self._loss_of_step, model=self.res.model, optimizer=self._optimizer)
                    except TypeError:
                        r = why(p, self._loss_of_step)
                    f["cause"] = getattr(r, "cause", None)
                    f["sentence"] = str(r)
                    f["line"] = getattr(r, "line", None)
                except Exception as e:  # noqa: BLE001
                    f["sentence"] = f"why_no_grad failed: {type(e).__name__}: {e}"
            else:
                f["cause"] = "requires_grad_false" if not p.requires_grad else "not_on_path"
                f["sentence"] = (f"{name}.grad is None: requires_grad is False" if not p.requires_grad else
                                 f"{name}.grad is None after the backward: it is not on any path to the loss")
            if f["cause"] != "ok":
                self.res.why_findings.append(f)

    def _close_step(self):
        rec, self._open = self._open, None
        self.res.steps.append(rec)
        self._progress(rec)
        if len(self.res.steps) == self.nan_steps:
            self._stop_nan_watch()
            self._stop_watch()
        if len(self.res.steps) >= self.n:
            if self.full:
                self._uninstall()
            else:
                self.res.stopped = True
                self._uninstall()
                raise StopScript(f"stopped after {self.n} steps")

    # -- step 0: model, graph, attribution ---------------------------------------------------------------
    def _find_model(self, loss, frame):
        if self._trace is not None:
            return self._trace.model, self._trace
        from ..nn.modules.module import Module
        from ..autograd.graph import AccumulateGrad
        leaves = set()
        seen, stack = set(), [loss._grad_fn]
        while stack:
            n = stack.pop()
            if n is None or n in seen:
                continue
            seen.add(n)
            if n.__class__ is AccumulateGrad:
                leaves.add(id(n.variable))
            stack.extend(m for m, _ in n.next_functions)
        best = None
        f = frame
        while f is not None and best is None:
            for sc in (f.f_locals, f.f_globals):
                for v in list(sc.values()):
                    if isinstance(v, Module):
                        hits = sum(1 for p in v.parameters() if id(p) in leaves)
                        if hits and (best is None or hits > best[0]):
                            best = (hits, v)
            f = f.f_back
        return (best[1] if best else None), None

    def _analyse_first(self, loss, frame):
        res = self.res
        try:
            model, trace = self._find_model(loss, frame)
        except Exception as e:  # noqa: BLE001
            model, trace = None, None
            res.notes.append(f"finding the model: {e}")
        res.model = model
        if model is not None:
            res.model_name = type(model).__name__
            try:
                res.model_repr = repr(model)
            except Exception:  # noqa: BLE001
                res.model_repr = None
        else:
            _, by_id = _frame_tensors(frame)
            from ._attribute import _reached_leaves
            leaves = _reached_leaves([(loss._grad_fn, loss._out_nr)])
            self._leaf_params = [(by_id.get(id(t), nm), t) for nm, t in leaves]
        terms = how = terms_error = None
        try:
            terms, how = find_terms(loss, frame, self.term_names)
        except Exception as e:  # noqa: BLE001
            terms_error = f"{type(e).__name__}: {e}"
        try:
            from ._graph import graph
            params = None if model is not None else dict(self._leaf_params)
            colors = {k: v for k, v in terms.items() if isinstance(v, Tensor)} if terms and len(terms) > 1 else None
            g = (graph(loss, model, modules=trace, colors=colors) if params is None
                 else graph(loss, colors=colors))
            res.graph = g.collapse(self.graph_depth) if trace is not None else g
        except Exception as e:  # noqa: BLE001
            res.graph_error = f"{type(e).__name__}: {e}"
        attribute = _optional("attribute")
        if attribute is None:
            res.attribution_error = "explain.attribute is not available"
            return
        if terms_error is not None:
            res.attribution_error = terms_error
            return
        try:
            res.terms = list(terms)
            res.terms_how = how
            if model is not None:
                res.attribution = attribute(terms, model)
            else:
                res.attribution = attribute(terms, params=dict(self._leaf_params))
        except Exception as e:  # noqa: BLE001
            res.attribution_error = f"{type(e).__name__}: {e}"


def nan_finding(f, step):
    """A dict from a nan_watch finding or NonFiniteError."""
    return {"step": step, "phase": getattr(f, "phase", None), "op": getattr(f, "op", None),
            "origin": getattr(f, "origin", None), "where_trap": bool(getattr(f, "where_trap", False)),
            "line": getattr(f, "line", None), "message": str(f)}


def _script_traceback(exc, script):
    """The traceback from the script's first frame on (the runner's frames left out)."""
    tb = exc.__traceback__
    path = os.path.abspath(script)
    t = tb
    while t is not None and os.path.abspath(t.tb_frame.f_code.co_filename) != path:
        t = t.tb_next
    lines = traceback.format_exception(type(exc), exc, t if t is not None else tb)
    return "".join(lines)


def run_script(script, args=(), *, steps=3, terms=None, full=False, nan=True, progress=True, stream=None):
    """Run `script` (a path) as ``__main__`` with glassgrad standing in for torch; watch it; return the
    SessionResult (``exit_code`` 0: ran or was stopped after `steps`; else the script's error)."""
    from .._torch_alias import install, uninstall, is_installed
    script = os.fspath(script)
    if not os.path.isfile(script):
        raise FileNotFoundError(f"glassgrad explain: no such script: {script}")
    owner = not is_installed()
    install()
    old_argv = sys.argv[:]
    sys.argv = [script] + list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    sess = Session(steps, terms=terms, full=full, nan=nan, progress=progress, stream=stream)
    res = sess.res
    res.script, res.args = script, list(args)
    try:
        with sess:
            try:
                runpy.run_path(script, run_name="__main__")
            except StopScript:
                res.stopped = True
            except SystemExit as e:
                code = e.code
                if code not in (None, 0):
                    res.exit_code = code if isinstance(code, int) else 1
                    res.error_type = "SystemExit"
                    res.error = res.error_summary = f"the script exited with code {code!r}"
            except BaseException as e:  # noqa: BLE001 - the script's error goes into the report
                if isinstance(e, KeyboardInterrupt):
                    raise
                res.exit_code = 1
                res.error_type = type(e).__name__
                res.error = _script_traceback(e, script)
                msg = str(e).strip().splitlines()
                res.error_summary = f"{type(e).__name__}: {msg[0]}" if msg else type(e).__name__
                if type(e).__name__ == "NonFiniteError":     # explain.nan_watch stopped the script
                    sess.add_nan(e)
    finally:
        sys.argv = old_argv
        try:
            sys.path.remove(os.path.dirname(os.path.abspath(script)))
        except ValueError:
            pass
        if owner:
            uninstall()
    return res
