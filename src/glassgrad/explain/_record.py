"""Backward walkthrough: record each step the engine takes during a backward, and tell it as a story.

    with explain.record() as tape:
        y.backward(v)
    print(tape)          # 1. MmBackward0 (y) received grad [[1., 0.]] and sent [[1., 3.]] to x (AccumulateGrad)

How it records (design).  ``record()`` installs nothing on any graph up front.  While the ``with`` block
is active, every backward -- ``Tensor.backward``, ``autograd.backward`` and ``autograd.grad`` -- passes
through a thin wrapper around the engine entry point ``glassgrad.autograd.run_backward``.  The wrapper
walks the graph of *that* backward from its roots, registers one pre-hook and one hook
(``node.register_prehook`` / ``node.register_hook``) on every node of it, lets the engine run exactly as it
would, and removes the hooks again when the engine returns.  The hooks only read (they copy the gradients
they see and return None), so the engine computes bit-identical gradients; pre-hooks fire when the engine
pops a node from its ready queue, so the tape is in the engine's execution order.  The caller's local
variables name the tensors in the story ("x", "y"); ``names=`` and ``model=`` add names of your own.

On small examples the Jacobian makes the lesson concrete (seed 003): ``tape.jacobian(y, x)`` (or
``jacobian_story(y, x, v)``) builds J row by row with ``autograd.grad`` of unit vectors -- each row is one
``y.backward(e_i)`` -- and shows that ``y.backward(v)`` put vᵀJ into ``x.grad``.  ``gate_story(x, mask)``
shows how a mask zeroes rows and columns of J, and the NaN trap of seed 000: ``mask * x`` lets a NaN of
the unselected branch through (forward and backward), ``torch.where`` does not -- unless the NaN is
created *inside* the branch, where only the double ``where`` helps.
"""
import sys

import numpy as np

from ..backend import as_array, to_host

__all__ = ["record", "Tape", "Step", "Run", "GradInfo", "jacobian", "jacobian_story", "JacobianStory",
           "gate_story", "GateStory"]


# ---------------------------------------------------------------------------------------------------------
# gradients as the tape keeps them
# ---------------------------------------------------------------------------------------------------------
class GradInfo:
    """One gradient seen by the tape: shape, dtype, norm, and (up to `max_numel` elements) a copy."""
    __slots__ = ("shape", "dtype", "norm", "finite", "value")

    def __init__(self, t, max_numel):
        t = t.detach()
        a = t.numpy() if t._data.__class__ is np.ndarray else t._data   # a device gradient reduces there
        self.shape = tuple(a.shape)
        self.dtype = str(t.dtype)
        self.finite = bool(np.isfinite(a).all())
        self.norm = float(np.sqrt(np.sum(np.square(a, dtype=np.float64))))
        # the kept copy (small gradients only) is read on the host, explicitly
        self.value = (np.array(a, copy=True) if a.__class__ is np.ndarray else to_host(a)) if a.size <= max_numel else None

    def text(self, small=16):
        if self.value is not None and self.value.size <= small:
            return _fmt(self.value)
        return f"<grad {list(self.shape)}, norm {self.norm:.4g}{'' if self.finite else ', NOT FINITE'}>"

    def __repr__(self):
        return f"GradInfo({self.text()})"


def _num(v):
    if not np.isfinite(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    if v == int(v) and abs(v) < 1e6:
        return f"{int(v)}."
    return f"{v:.4g}"


def _fmt(a):
    """Compact, torch-like text of an array: [[1., 0.]], [0.5, nan], 1e-12 (4 significant digits)."""
    a = np.asarray(a)
    s = np.array2string(a, separator=", ", threshold=10**6,
                        formatter={"float_kind": _num, "bool": lambda b: str(bool(b))})
    return " ".join(s.split())


def _info(t, max_numel):
    return None if t is None else GradInfo(t, max_numel)


class Step:
    """One step of the engine: a node ran (``kind == "node"``) or a leaf's AccumulateGrad added its
    gradient into ``.grad`` (``kind == "accumulate"``).

    ``node`` (PyTorch's node name), ``label`` (the tensor's name when known), ``grads_in`` (the gradients
    the node received, one per forward output), ``grads_out`` (a list of ``(target, GradInfo or None)``, one
    per ``next_functions`` edge; target is None for an input that needs no gradient), ``grad_after`` (for
    an accumulation: ``.grad`` after it).
    """
    __slots__ = ("index", "run", "node", "label", "kind", "grads_in", "grads_out", "grad_after", "_node")

    def __init__(self, index, run, node_obj, node_name, label, kind, grads_in):
        self.index = index
        self.run = run
        self._node = node_obj
        self.node = node_name
        self.label = label
        self.kind = kind
        self.grads_in = grads_in
        self.grads_out = []
        self.grad_after = None

    @property
    def grad_in(self):
        """The (first) incoming gradient's values (a NumPy copy, None when too large or absent)."""
        g = self.grads_in[0] if self.grads_in else None
        return None if g is None else g.value

    def text(self):
        gin = [g for g in self.grads_in if g is not None]
        who = self.node + (f" ({self.label})" if self.label and self.kind != "accumulate" else "")
        if self.kind == "accumulate":
            s = f"AccumulateGrad added {gin[0].text() if gin else 'nothing'} into {self.label}.grad"
            if self.grad_after is not None:
                s += f" (now {self.grad_after.text()})"
            return s
        if not gin:
            return f"{who} received no gradient and sent nothing"
        recv = " and ".join("nothing" if g is None else g.text() for g in self.grads_in)
        sent = []
        for target, g in self.grads_out:
            if target is None:
                continue
            sent.append(f"{'nothing' if g is None else g.text()} to {target}")
        skipped = sum(1 for target, _ in self.grads_out if target is None)
        s = f"{who} received grad {recv} and sent " + (", ".join(sent) if sent else "nothing")
        if skipped:
            s += f" ({skipped} input{'s' if skipped > 1 else ''} need{'' if skipped > 1 else 's'} no gradient)"
        return s

    def __repr__(self):
        return f"<Step {self.index}: {self.text()}>"


class Run:
    """One backward call seen by the tape: its roots and seeds, the steps, and (for autograd.grad) the
    returned gradients."""
    __slots__ = ("index", "kind", "roots", "seeds", "steps", "results", "create_graph", "_root_nodes")

    def __init__(self, index, kind, roots, seeds, create_graph):
        self.index = index
        self.kind = kind
        self.roots = roots
        self.seeds = seeds
        self.steps = []
        self.results = None
        self.create_graph = create_graph


# ---------------------------------------------------------------------------------------------------------
# the tape
# ---------------------------------------------------------------------------------------------------------
class Tape:
    """What ``record()`` yields: the runs (``.runs``), their steps in execution order (``.steps``), and the
    story (``str(tape)`` / ``tape.story()``)."""

    def __init__(self, names=None, model=None, max_numel=4096, small=16):
        self.runs = []
        self.max_numel = max_numel
        self.small = small
        self._names = {}
        self._paused = 0
        if model is not None:
            for n, p in model.named_parameters():
                self._names.setdefault(id(p), (p, n))
        if names:
            for n, t in names.items():
                self._names[id(t)] = (t, n)

    # -- reading -----------------------------------------------------------------------------------
    @property
    def steps(self):
        return [s for r in self.runs for s in r.steps]

    def nodes(self):
        """The node names in execution order (all runs)."""
        return [s.node for s in self.steps]

    def __len__(self):
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def story(self, small=None):
        small = self.small if small is None else small
        if not self.runs:
            return "The tape is empty: no backward ran inside `with explain.record()`."
        out = []
        for r in self.runs:
            call = {"backward": "backward", "grad": "autograd.grad"}[r.kind]
            seeds = ", ".join(f"{lab + ' (' + node + ')' if lab != node else node} with gradient "
                              f"{'1 (implicit, a scalar output)' if s is None else s.text(small)}"
                              for (lab, node), s in zip(r.roots, r.seeds))
            out.append(f"{call} #{r.index + 1} starts at {seeds}"
                       + (" [create_graph: the gradients are themselves differentiable]" if r.create_graph
                          else ""))
            for s in r.steps:
                line = s.text()
                out.append(f"  {s.index + 1}. {line}")
            if r.results is not None:
                for lab, g in r.results:
                    out.append(f"  => autograd.grad returns {'None' if g is None else g.text(small)} for {lab}")
        return "\n".join(out)

    __str__ = story

    def __repr__(self):
        return f"<Tape: {len(self.runs)} backward run(s), {len(self.steps)} steps>"

    def _seed_for(self, y):
        fn = y.grad_fn
        for r in reversed(self.runs):
            for (lab, node), s, node_obj in zip(r.roots, r.seeds, r._root_nodes):
                if node_obj is fn:
                    return r, s
        return None, None

    def jacobian(self, y, x, v=None):
        """The JacobianStory of y w.r.t. x, with the seed v this tape recorded for y's backward (unless
        given) and the gradient the tape saw accumulate into x -- which equals vᵀJ.  Needs y's graph
        alive: record a ``backward(v, retain_graph=True)``, or call it before the backward."""
        self._paused += 1
        try:
            recorded = None
            if v is None:
                run, seed = self._seed_for(y)
                if run is not None:
                    v = seed.value if seed is not None else None
                    for s in run.steps:
                        if s.kind == "accumulate" and s._node.variable is x and s.grads_in and \
                                s.grads_in[0] is not None:
                            recorded = s.grads_in[0].value
            st = jacobian_story(y, x, v, names=self._name_map())
            st.recorded = recorded
            return st
        finally:
            self._paused -= 1

    def _name_map(self):
        return {n: t for t, n in self._names.values()}

    # -- recording -----------------------------------------------------------------------------------
    def _label_tables(self):
        """(leaf id -> name, node -> name) from names given and the user's frame at backward time."""
        leaves, nodes = {}, {}
        for t, n in self._names.values():
            (nodes.setdefault(t.grad_fn, n) if t.grad_fn is not None else leaves.setdefault(id(t), n))
        f = sys._getframe(2)
        while f is not None and _internal(f.f_globals.get("__name__") or ""):
            f = f.f_back
        if f is not None:
            from .._tensor import Tensor
            for n, t in list(f.f_locals.items()):
                if isinstance(t, Tensor) and not n.startswith("_"):
                    if t.grad_fn is not None:
                        nodes.setdefault(t.grad_fn, n)
                    else:
                        leaves.setdefault(id(t), n)
        return leaves, nodes

    def _run(self, orig, roots, grad_roots, keep_graph, create_graph, inputs, kw):
        if self._paused:
            return orig(roots, grad_roots, keep_graph, create_graph, inputs=inputs, **kw)
        from ..autograd.graph import AccumulateGrad
        leaves, labels = self._label_tables()
        kind = "grad" if inputs is not None and not kw.get("accumulate", True) else "backward"

        def label_of(node):
            if node.__class__ is AccumulateGrad:
                return leaves.get(id(node.variable), "leaf " + "x".join(map(str, node.variable.shape)))
            return labels.get(node)

        def target_of(node):
            if node is None:
                return None
            lab = label_of(node)
            short = type(node).__name__
            return f"{lab} ({short})" if lab else short

        root_nodes = [n for n, _ in roots]
        run = Run(len(self.runs), kind, [(label_of(n) or n.name(), n.name()) for n in root_nodes],
                  [_info(_as_tensor(g), self.max_numel) for g in grad_roots], create_graph)
        run._root_nodes = root_nodes
        self.runs.append(run)
        pending = {}

        def make_hooks(node):
            is_acc = node.__class__ is AccumulateGrad

            def pre(grad_outputs):
                step = Step(sum(len(r.steps) for r in self.runs), run, node, node.name(), label_of(node),
                            "accumulate" if is_acc else "node",
                            [_info(g, self.max_numel) for g in grad_outputs])
                run.steps.append(step)
                pending[node] = step

            def post(grad_inputs, grad_outputs):
                step = pending.pop(node, None)
                if step is None:
                    return
                if is_acc:
                    g = node.variable.grad
                    step.grad_after = _info(g, self.max_numel)
                else:
                    step.grads_out = [(target_of(nxt), _info(g, self.max_numel))
                                      for (nxt, _), g in zip(node.next_functions, grad_inputs)]
            return pre, post

        handles = []
        seen = set()
        stack = [n for n in root_nodes if n is not None]
        try:
            while stack:
                node = stack.pop()
                if node in seen:
                    continue
                seen.add(node)
                pre, post = make_hooks(node)
                handles.append(node.register_prehook(pre))
                handles.append(node.register_hook(post))
                stack.extend(n for n, _ in node.next_functions if n is not None and n not in seen)
            res = orig(roots, grad_roots, keep_graph, create_graph, inputs=inputs, **kw)
        finally:
            for h in handles:
                h.remove()
        if kind == "grad" and res is not None:
            run.results = [(leaves.get(id(t)) or labels.get(t.grad_fn) or f"input {i}",
                            _info(_as_tensor(g), self.max_numel)) for i, (t, g) in enumerate(zip(inputs, res))]
        return res


def _internal(modname):
    return modname == "glassgrad" or modname.startswith("glassgrad.")


def _as_tensor(g):
    if g is None:
        return None
    from .._tensor import Tensor
    from ..ops.namespaces import ARR
    return g if isinstance(g, Tensor) else ARR.to_tensor(as_array(g))


class record:
    """Context manager: ``with explain.record() as tape:`` records every backward run inside the block.

    names: optional {name: tensor} used in the story (the caller's local variable names are used too);
    model: an nn.Module whose parameter names label its leaves; max_numel: gradients up to this many
    elements are kept as NumPy copies (larger ones as shape and norm only).
    """

    def __init__(self, names=None, model=None, max_numel=4096):
        self.tape = Tape(names=names, model=model, max_numel=max_numel)
        self._prev = None
        self._active = False

    def __enter__(self):
        from .. import autograd as _ag
        prev = _ag.run_backward
        tape = self.tape
        me = self

        def run_backward(roots, grad_roots, keep_graph, create_graph, inputs=None, **kw):
            if not me._active:
                return prev(roots, grad_roots, keep_graph, create_graph, inputs=inputs, **kw)
            return tape._run(prev, roots, grad_roots, keep_graph, create_graph, inputs, kw)

        self._prev = prev
        self._wrapper = run_backward
        self._active = True
        _ag.run_backward = run_backward
        return tape

    def __exit__(self, *exc):
        from .. import autograd as _ag
        self._active = False
        if _ag.run_backward is self._wrapper:
            _ag.run_backward = self._prev
        return False


# ---------------------------------------------------------------------------------------------------------
# Jacobians (seed 003) and masks (seed 000)
# ---------------------------------------------------------------------------------------------------------
def jacobian(y, x):
    """J = dy/dx as a NumPy array of shape (y.numel(), x.numel()): row i is ``autograd.grad(y, x, e_i)`` --
    exactly what ``y.backward(e_i)`` would add to ``x.grad``.  Keeps the graph (retain_graph=True)."""
    from .. import autograd, tensor
    m, n = int(y.numel()), int(x.numel())
    J = np.zeros((m, n), dtype=np.float64)
    for i in range(m):
        e = np.zeros(m)
        e[i] = 1
        e = tensor(e.reshape(tuple(y.shape)), dtype=y.dtype, device=y.device)
        try:
            (g,) = autograd.grad(y, x, e, retain_graph=True, allow_unused=True)
        except RuntimeError as err:
            if "second time" in str(err):
                raise RuntimeError("explain.jacobian: y's graph was already freed by a backward; call it "
                                   "before y.backward(), or pass retain_graph=True to that backward") from err
            raise
        if g is not None:
            J[i] = g.detach().cpu().numpy().reshape(-1)     # J is a host (NumPy) report
    return J


class JacobianStory:
    """J of y w.r.t. x, the vector v, vᵀJ, and the gradient autograd computes for ``y.backward(v)``.

    Attributes: ``J`` (m x n NumPy), ``v`` (NumPy, y's shape, or None), ``vjp`` (vᵀJ, x's shape),
    ``grad`` (``autograd.grad(y, x, v)``, x's shape -- what ``y.backward(v)`` adds to ``x.grad``),
    ``recorded`` (the gradient a Tape saw accumulate into x, when it came from ``tape.jacobian``),
    ``zero_rows`` / ``zero_cols`` (outputs that depend on no input / inputs that reach no output),
    ``nan_rows`` / ``nan_cols``."""

    def __init__(self, y, x, v=None, y_name="y", x_name="x"):
        self.y_name, self.x_name = y_name, x_name
        self.y_shape, self.x_shape = tuple(y.shape), tuple(x.shape)
        self.J = jacobian(y, x)
        nanJ = np.isnan(self.J)
        self.zero_rows = [i for i in range(self.J.shape[0]) if np.all(self.J[i] == 0)]
        self.zero_cols = [j for j in range(self.J.shape[1]) if np.all(self.J[:, j] == 0)]
        self.nan_rows = [i for i in range(self.J.shape[0]) if nanJ[i].any()]
        self.nan_cols = [j for j in range(self.J.shape[1]) if nanJ[:, j].any()]
        self.recorded = None
        self.v = self.vjp = self.grad = None
        if v is not None:
            from .. import autograd, tensor, Tensor
            vt = v if isinstance(v, Tensor) else tensor(np.asarray(v), dtype=y.dtype, device=y.device)
            self.v = vt.detach().cpu().numpy().astype(np.float64).reshape(self.y_shape)
            with np.errstate(all="ignore"):
                self.vjp = (self.v.reshape(-1) @ self.J).reshape(self.x_shape)
            (g,) = autograd.grad(y, x, vt.reshape(self.y_shape), retain_graph=True, allow_unused=True)
            self.grad = None if g is None else g.detach().cpu().numpy().copy()

    @property
    def matches(self):
        """vᵀJ equals the gradient autograd computed (to float32 rounding; NaN where NaN)."""
        if self.grad is None or self.vjp is None:
            return None
        return bool(np.allclose(self.vjp, self.grad, rtol=1e-5, atol=1e-6, equal_nan=True))

    def text(self):
        y, x = self.y_name, self.x_name
        m, n = self.J.shape
        lines = [f"Jacobian J = d{y}/d{x}: {m} x {n} ({y} has shape {list(self.y_shape)}, {x} has shape "
                 f"{list(self.x_shape)}, both flattened).",
                 f"Row i is d{y}[i]/d{x}, computed as autograd.grad({y}, {x}, e_i) -- the gradient "
                 f"{y}.backward(e_i) would put into {x}.grad:"]
        for i in range(m):
            lines.append(f"  row {i}: {_fmt(self.J[i])}")
        if self.zero_rows and len(self.zero_rows) < m:
            lines.append(f"Rows {self.zero_rows} are zero: those outputs do not depend on {x} (masked out); "
                         f"whatever gradient arrives there is dropped.")
        if self.zero_cols and len(self.zero_cols) < n:
            lines.append(f"Columns {self.zero_cols} are zero: those entries of {x} reach no output, so their "
                         f"gradient is 0 whatever v is.")
        if self.nan_cols:
            lines.append(f"Columns {self.nan_cols} hold NaN: the backward through those entries of {x} "
                         f"computed 0 * inf or 0 * NaN -- the gate came too late to stop it.")
        if self.v is not None:
            lines.append(f"{y}.backward(v) with v = {_fmt(self.v)} does not build J: it computes vᵀJ "
                         f"(a vector-Jacobian product) in one backward pass.")
            lines.append(f"  vᵀJ                   = {_fmt(self.vjp)}")
            if self.grad is not None:
                lines.append(f"  autograd's {x}.grad    = {_fmt(self.grad)}"
                             f"  -> {'equal' if self.matches else 'DIFFERENT'}")
            if self.recorded is not None:
                lines.append(f"  recorded on the tape  = {_fmt(self.recorded)}")
        return "\n".join(lines)

    __str__ = text

    def __repr__(self):
        return f"<JacobianStory d{self.y_name}/d{self.x_name} {self.J.shape}>"


def _find_name(t, names, default):
    for n, v in (names or {}).items():
        if v is t:
            return n
    return default


def jacobian_story(y, x, v=None, *, names=None):
    """The full Jacobian of y w.r.t. x and, with a cotangent v, the proof that ``y.backward(v)`` is vᵀJ.
    For small examples (J has y.numel() rows, each one autograd.grad call)."""
    return JacobianStory(y, x, v, _find_name(y, names, "y"), _find_name(x, names, "x"))


class GateStory:
    """Two (or three) ways to gate a branch, side by side: ``mask * f(x)``, ``where(mask, f(x), 0)`` and,
    with a `branch` function, the double where ``where(mask, f(where(mask, x, safe)), 0)``.

    ``variants``: {name: {"forward", "grad", "J"}} (NumPy): the output, ``autograd.grad(out, x, v)`` and the
    Jacobian of each."""

    def __init__(self, variants, x, mask, v, branch_name):
        self.variants = variants
        self.x, self.mask, self.v = x, mask, v
        self.branch_name = branch_name

    def __getitem__(self, k):
        return self.variants[k]

    def text(self):
        f = self.branch_name
        lines = [f"x = {_fmt(self.x)}, mask = {_fmt(self.mask)}, upstream gradient v = {_fmt(self.v)}"]
        for name, d in self.variants.items():
            lines.append(f"{name}:")
            lines.append(f"  forward          = {_fmt(d['forward'])}")
            lines.append(f"  grad (vᵀJ)       = {_fmt(d['grad'])}")
            lines.append("  J                = " + _fmt(d["J"]).replace("], [", "],\n                     ["))
        fw_nan = [k for k, d in self.variants.items() if not np.isfinite(d["forward"]).all()]
        g_nan = [k for k, d in self.variants.items() if not np.isfinite(d["grad"]).all()]
        clean = [k for k, d in self.variants.items() if k not in fw_nan and k not in g_nan]
        lines.append("The mask zeroes the rows of J for unselected outputs (they depend on nothing) and the "
                     "columns for unselected inputs (they reach nothing): the chain rule applies the mask to "
                     "the gradient too, d loss/d x = mask * d loss/d y.")
        if fw_nan:
            lines.append(f"Forward NaN/Inf in: {', '.join(fw_nan)} -- 0 * NaN is NaN, so multiplying by the "
                         f"mask does not remove a NaN; where() selects instead of multiplying.")
        if g_nan:
            lines.append(f"Gradient NaN/Inf in: {', '.join(g_nan)} -- the unselected entries received "
                         f"0 * (NaN or inf) in the backward" +
                         (f"; where() blocks a NaN arriving from above, but not one that {f}'s own backward "
                          f"creates at an unsafe input: sanitise the input too (the double where)."
                          if f else "."))
        if clean:
            lines.append(f"Clean (finite forward and gradient): {', '.join(clean)}.")
        return "\n".join(lines)

    __str__ = text

    def __repr__(self):
        return f"<GateStory {list(self.variants)}>"


def gate_story(x, mask, v=None, *, branch=None, safe=1.0):
    """How a mask gates a gradient, and the NaN trap of seed 000.

    x: a float tensor (it may hold NaN/Inf or unsafe values at unselected entries); mask: a bool tensor of
    x's shape; v: the upstream gradient (default ones; put NaN at an unselected entry to model a loss
    whose gradient is undefined there); branch: optional function applied to x before gating (e.g.
    ``torch.sqrt``, ``torch.log``), which adds the double-where variant with `safe` as the stand-in input.
    """
    import glassgrad as G
    from .. import autograd
    mask = mask.detach()
    if mask.dtype is not G.bool:
        mask = mask != 0
    fn = branch if branch is not None else (lambda t: t)
    fname = getattr(branch, "__name__", "branch") if branch is not None else None
    v = G.ones_like(x) if v is None else (v if isinstance(v, G.Tensor) else G.tensor(v, dtype=x.dtype, device=x.device))
    zero = G.zeros((), dtype=x.dtype, device=x.device)
    inner = f"{fname}(x)" if fname else "x"
    builds = {f"mask * {inner}": lambda t: mask.to(x.dtype) * fn(t),
              f"where(mask, {inner}, 0)": lambda t: G.where(mask, fn(t), zero)}
    if branch is not None:
        builds[f"where(mask, {fname}(where(mask, x, {safe:g})), 0)"] = \
            lambda t: G.where(mask, fn(G.where(mask, t, G.full((), safe, dtype=x.dtype, device=x.device))), zero)
    variants = {}
    for name, build in builds.items():
        xl = x.detach().clone().requires_grad_(True)
        with np.errstate(all="ignore"):
            out = build(xl)
            (g,) = autograd.grad(out, xl, v, retain_graph=True)
            J = jacobian(out, xl)
        variants[name] = {"forward": _host(out), "grad": _host(g), "J": J}
    return GateStory(variants, _host(x), _host(mask), _host(v), fname)


def _host(t):
    """A host (NumPy) copy of a tensor's values, for the report."""
    return t.detach().cpu().numpy().copy()
