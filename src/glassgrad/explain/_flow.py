"""Gradient flow: per-layer gradient statistics after a backward, flags, plots, tracking over steps.

    loss.backward()
    fl = explain.flow(model)            # a Flow: one row per layer (a module that owns parameters)
    print(fl.table())                   # grad norm / mean / max|g| / weight norm / grad:weight, flags
    fl.plot("flow.png")                 # all layers at once, log scale, flagged layers highlighted

    tracker = explain.flow(model, track=True)     # or explain.Flow.track(model)
    for batch in data:
        ...; loss.backward(); tracker.step(); opt.step()
    tracker.plot("flow_over_steps.png")           # one line per layer over the steps

Flags (per parameter and per layer):
  * ``"no_grad"``   -- the gradient is None (the layer is not on the path of the backward that ran);
  * ``"vanishing"`` -- the gradient norm is below ``vanishing`` (absolute, default 1e-7), or more than
    ``relative`` times (default 1e3) smaller than the median layer's;
  * ``"exploding"`` -- the gradient norm is above ``exploding`` (absolute, default 1e3), more than
    ``relative`` times larger than the median layer's, or not finite;
  * ``"non_finite"`` -- the gradient holds a NaN or an Inf.

All statistics are computed in float64 from the ``.grad`` values; ``.grad`` is only read, never written.
"""
import math

import numpy as np

__all__ = ["flow", "Flow", "FlowTracker", "ParamStats", "LayerStats"]

_MPL_MSG = ("explain: plotting needs matplotlib. Install it with `pip install glassgrad[plot]` "
            "(or `pip install matplotlib`).")


def _import_mpl():
    try:
        from matplotlib.figure import Figure
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(_MPL_MSG) from e
    return Figure


def _array(t):
    """A read-only float64 copy of a tensor's values (never touches the tensor).  A device tensor's copy stays
    on its device: the statistics reduce there and only their scalars come to the host (float())."""
    t = t.detach()
    if t._data.__class__ is np.ndarray:
        return np.asarray(t.numpy(), dtype=np.float64)
    return t._data.astype(np.float64)


class ParamStats:
    """Statistics of one parameter's gradient."""
    __slots__ = ("name", "layer", "shape", "numel", "has_grad", "grad_sq", "grad_sum", "grad_norm",
                 "grad_mean", "grad_max", "weight_sq", "weight_norm", "ratio", "finite", "flags")

    def __init__(self, name, layer, param):
        self.name = name
        self.layer = layer
        self.shape = tuple(param.shape)
        self.numel = int(np.prod(self.shape, dtype=np.int64))
        w = _array(param)
        self.weight_sq = float(np.sum(w * w))
        self.weight_norm = math.sqrt(self.weight_sq)
        g = param.grad
        self.has_grad = g is not None
        self.flags = []
        if g is None:
            self.grad_sq = self.grad_sum = 0.0
            self.grad_norm = self.grad_mean = self.grad_max = self.ratio = float("nan")
            self.finite = True
            self.flags.append("no_grad")
            return
        g = _array(g)
        self.finite = bool(np.isfinite(g).all())
        self.grad_sq = float(np.sum(g * g))
        self.grad_sum = float(np.sum(g))
        self.grad_norm = math.sqrt(self.grad_sq) if self.grad_sq == self.grad_sq else float("nan")
        self.grad_mean = self.grad_sum / g.size if g.size else 0.0
        self.grad_max = float(np.max(np.abs(g))) if g.size else 0.0
        self.ratio = _ratio(self.grad_norm, self.weight_norm)

    def to_dict(self):
        return {k: (list(getattr(self, k)) if k in ("shape", "flags") else getattr(self, k))
                for k in ("name", "layer", "shape", "grad_norm", "grad_mean", "grad_max", "weight_norm",
                          "ratio", "flags")}

    def __repr__(self):
        return f"ParamStats({self.name!r}, grad_norm={self.grad_norm:.4g}, flags={self.flags})"


class LayerStats:
    """Statistics of one layer: all the parameters a module owns directly, taken together."""
    __slots__ = ("name", "type", "params", "grad_norm", "grad_mean", "grad_max", "weight_norm", "ratio",
                 "has_grad", "finite", "flags")

    def __init__(self, name, type_name, params):
        self.name = name
        self.type = type_name
        self.params = params
        with_grad = [p for p in params if p.has_grad]
        self.has_grad = bool(with_grad)
        self.finite = all(p.finite for p in params)
        self.weight_norm = math.sqrt(sum(p.weight_sq for p in params))
        self.flags = []
        if not with_grad:
            self.grad_norm = self.grad_mean = self.grad_max = self.ratio = float("nan")
        else:
            sq = sum(p.grad_sq for p in with_grad)
            n = sum(p.numel for p in with_grad)
            self.grad_norm = math.sqrt(sq) if sq == sq else float("nan")
            self.grad_mean = sum(p.grad_sum for p in with_grad) / n if n else 0.0
            self.grad_max = max(p.grad_max for p in with_grad)
            self.ratio = _ratio(self.grad_norm, self.weight_norm)
        if len(with_grad) < len(params):
            self.flags.append("no_grad")

    def to_dict(self):
        return {"name": self.name, "type": self.type, "grad_norm": self.grad_norm, "grad_mean": self.grad_mean,
                "grad_max": self.grad_max, "weight_norm": self.weight_norm, "ratio": self.ratio,
                "flags": list(self.flags), "params": [p.to_dict() for p in self.params]}

    def __repr__(self):
        return f"LayerStats({self.name!r}, {self.type}, grad_norm={self.grad_norm:.4g}, flags={self.flags})"


def _ratio(g, w):
    if g != g:
        return float("nan")
    if w == 0:
        return float("inf") if g > 0 else 0.0
    return g / w


def _flag(items, vanishing, exploding, relative):
    """Add vanishing / exploding / non_finite flags to LayerStats or ParamStats (in place)."""
    norms = [s.grad_norm for s in items if s.has_grad and s.finite]
    median = float(np.median(norms)) if norms else float("nan")
    for s in items:
        if not s.has_grad:
            continue
        if not s.finite:
            s.flags += ["non_finite", "exploding"]
            continue
        n = s.grad_norm
        if n < vanishing or (median > 0 and n < median / relative):
            s.flags.append("vanishing")
        elif n > exploding or (median > 0 and n > median * relative):
            s.flags.append("exploding")
    return median


def _named_layers(model):
    """[(layer_name, type_name, [(param_name, param), ...])] for the modules that own parameters."""
    if hasattr(model, "named_modules"):
        seen = set()
        out = []
        for mname, mod in model.named_modules():
            ps = []
            for pname, p in mod.named_parameters(recurse=False):
                if id(p) in seen:
                    continue
                seen.add(id(p))
                ps.append((f"{mname}.{pname}" if mname else pname, p))
            if ps:
                out.append((mname or "(root)", type(mod).__name__, ps))
        return out
    # a dict {name: tensor} or an iterable of (name, tensor): one "layer" per name prefix
    items = list(model.items()) if isinstance(model, dict) else list(model)
    groups = {}
    for name, p in items:
        layer = name.rsplit(".", 1)[0] if "." in name else name
        groups.setdefault(layer, []).append((name, p))
    return [(k, "Tensor", v) for k, v in groups.items()]


class Flow:
    """Gradient statistics of every layer and parameter of a model, taken after a backward.

    ``layers`` (list of LayerStats), ``params`` (list of ParamStats), ``median`` (the median layer gradient
    norm the relative flags use); ``fl["conv1"]`` gives a layer by name, ``fl.flagged(flag)`` the layers
    with that flag.
    """

    def __init__(self, model, *, vanishing=1e-7, exploding=1e3, relative=1e3, step=None):
        self.step = step
        self.thresholds = {"vanishing": vanishing, "exploding": exploding, "relative": relative}
        self.layers = []
        self.params = []
        for lname, tname, ps in _named_layers(model):
            pstats = [ParamStats(pn, lname, p) for pn, p in ps]
            self.params += pstats
            self.layers.append(LayerStats(lname, tname, pstats))
        self.median = _flag(self.layers, vanishing, exploding, relative)
        _flag(self.params, vanishing, exploding, relative)

    # -- access ---------------------------------------------------------------------
    def __getitem__(self, name):
        for s in self.layers:
            if s.name == name:
                return s
        for s in self.params:
            if s.name == name:
                return s
        raise KeyError(name)

    def __iter__(self):
        return iter(self.layers)

    def __len__(self):
        return len(self.layers)

    def flagged(self, flag=None):
        """Names of the layers carrying `flag` (any flag when None)."""
        return [s.name for s in self.layers if (s.flags if flag is None else flag in s.flags)]

    def to_dict(self):
        return {"step": self.step, "median_grad_norm": self.median, "thresholds": dict(self.thresholds),
                "layers": [s.to_dict() for s in self.layers]}

    # -- text -----------------------------------------------------------------------
    def table(self, params=False):
        """A text table, one row per layer (and per parameter when `params`)."""
        head = ("layer", "type", "grad norm", "grad mean", "max |g|", "weight norm", "grad/weight", "flags")
        rows = []
        for s in self.layers:
            rows.append((s.name, s.type, _f(s.grad_norm), _f(s.grad_mean), _f(s.grad_max), _f(s.weight_norm),
                         _f(s.ratio), ", ".join(s.flags)))
            if params:
                for p in s.params:
                    rows.append(("  " + p.name, "x".join(map(str, p.shape)) or "()", _f(p.grad_norm),
                                 _f(p.grad_mean), _f(p.grad_max), _f(p.weight_norm), _f(p.ratio),
                                 ", ".join(p.flags)))
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
        line = lambda r: "  ".join(c.ljust(w) if i < 2 or i == 7 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(r, widths))).rstrip()
        out = [line(head), line(tuple("-" * w for w in widths))] + [line(r) for r in rows]
        flagged = [s for s in self.layers if s.flags]
        out.append(f"{len(self.layers)} layers, median grad norm {_f(self.median)}; "
                   + ("flagged: " + "; ".join(f"{s.name} ({', '.join(s.flags)})" for s in flagged)
                      if flagged else "no layer flagged"))
        return "\n".join(out)

    __str__ = table

    def __repr__(self):
        return f"<Flow: {len(self.layers)} layers, flagged={self.flagged()}>"

    # -- plot -----------------------------------------------------------------------
    def plot(self, path=None, *, ax=None):
        """Bar chart of every layer's gradient norm (log scale) with max |g| and the weight norm;
        flagged layers are coloured.  Returns the matplotlib Figure; saves it when `path` is given."""
        Figure = _import_mpl()
        if ax is None:
            fig = Figure(figsize=(max(6.0, 0.45 * len(self.layers) + 2), 4.5), layout="constrained")
            ax = fig.subplots()
        else:
            fig = ax.figure
        names = [s.name for s in self.layers]
        x = np.arange(len(names))
        gn = np.array([s.grad_norm for s in self.layers], dtype=float)
        gm = np.array([s.grad_max for s in self.layers], dtype=float)
        wn = np.array([s.weight_norm for s in self.layers], dtype=float)
        pos = np.concatenate([v[np.isfinite(v) & (v > 0)] for v in (gn, gm, wn)])
        floor = pos.min() / 10 if pos.size else 1e-12
        colors = [_COLORS[next((f for f in ("non_finite", "exploding", "vanishing", "no_grad") if f in s.flags),
                               "ok")] for s in self.layers]
        bars = np.where(np.isfinite(gn) & (gn > 0), gn, floor)
        ax.bar(x, bars, color=colors, label="grad norm")
        ax.plot(x, np.where(np.isfinite(gm) & (gm > 0), gm, np.nan), "k^", ms=5, label="max |g|")
        ax.plot(x, np.where(wn > 0, wn, np.nan), "_", color="0.35", ms=14, mew=2, label="weight norm")
        ax.set_yscale("log")
        ax.set_xticks(x, names, rotation=60 if len(names) > 6 else 0, ha="right" if len(names) > 6 else "center",
                      fontsize=8)
        for tick, s in zip(ax.get_xticklabels(), self.layers):
            if s.flags:
                tick.set_color(colors[self.layers.index(s)])
        from matplotlib.patches import Patch
        handles, _ = ax.get_legend_handles_labels()
        handles += [Patch(color=_COLORS[k], label=k) for k in ("vanishing", "exploding", "no_grad")
                    if any(k in s.flags for s in self.layers)]
        ax.legend(handles=handles, fontsize=8)
        ax.set_ylabel("norm (log scale)")
        ax.set_xlabel("layer (module that owns parameters)")
        ax.set_title("gradient flow" + (f" (step {self.step})" if self.step is not None else ""))
        if path is not None:
            fig.savefig(path)
        return fig

    # -- tracking -------------------------------------------------------------------
    @classmethod
    def track(cls, model, **thresholds):
        """A FlowTracker: call ``.step()`` after each backward."""
        return FlowTracker(model, **thresholds)


_COLORS = {"ok": "#4c72b0", "vanishing": "#8172b3", "exploding": "#c44e52", "non_finite": "#8b0000",
           "no_grad": "#b0b0b0"}


def _f(v):
    if v != v:
        return "-"
    if v == 0:
        return "0"
    return f"{v:.3e}"


class FlowTracker:
    """Records a Flow at every ``step()`` (call it after each backward, before ``zero_grad``)."""

    def __init__(self, model, **thresholds):
        self.model = model
        self.thresholds = thresholds
        self.history = []

    def step(self):
        fl = Flow(self.model, step=len(self.history), **self.thresholds)
        self.history.append(fl)
        return fl

    def __len__(self):
        return len(self.history)

    @property
    def last(self):
        return self.history[-1] if self.history else None

    def series(self, metric="grad_norm"):
        """{layer name: [metric at step 0, step 1, ...]} (NaN where a layer had no gradient)."""
        out = {}
        for i, fl in enumerate(self.history):
            for s in fl.layers:
                out.setdefault(s.name, [float("nan")] * i).append(getattr(s, metric))
            for v in out.values():
                if len(v) < i + 1:
                    v.append(float("nan"))
        return out

    def to_dict(self):
        return {"steps": len(self.history), "history": [fl.to_dict() for fl in self.history]}

    def table(self, metric="grad_norm"):
        ser = self.series(metric)
        lines = [f"{metric} over {len(self.history)} steps"]
        w = max((len(k) for k in ser), default=5)
        for k, v in ser.items():
            flags = sorted({f for fl in self.history for s in fl.layers if s.name == k for f in s.flags})
            lines.append(f"{k.ljust(w)}  first {_f(v[0])}  last {_f(v[-1])}  min {_f(np.nanmin(v) if np.isfinite(v).any() else float('nan'))}"
                         f"  max {_f(np.nanmax(v) if np.isfinite(v).any() else float('nan'))}"
                         + (f"  flags: {', '.join(flags)}" if flags else ""))
        return "\n".join(lines)

    __str__ = table

    def __repr__(self):
        return f"<FlowTracker: {len(self.history)} steps>"

    def plot(self, path=None, *, metric="grad_norm", ax=None):
        """One line per layer: `metric` over the recorded steps, log scale.  Returns the Figure."""
        Figure = _import_mpl()
        if ax is None:
            fig = Figure(figsize=(7, 4.5), layout="constrained")
            ax = fig.subplots()
        else:
            fig = ax.figure
        ser = self.series(metric)
        steps = np.arange(len(self.history))
        for name, v in ser.items():
            v = np.array(v, dtype=float)
            flagged = any(s.flags for fl in self.history for s in fl.layers if s.name == name)
            ax.plot(steps, np.where(v > 0, v, np.nan), marker="." if len(steps) < 30 else None,
                    lw=2.2 if flagged else 1.2, ls="-" if not flagged else "--", label=name)
        ax.set_yscale("log")
        from matplotlib.ticker import MaxNLocator
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))     # steps are whole numbers
        ax.set_xlabel("step")
        ax.set_ylabel(metric.replace("_", " ") + " (log scale)")
        ax.set_title(f"gradient flow over {len(self.history)} steps")
        if len(ser) <= 20:
            ax.legend(fontsize=7, ncol=1 if len(ser) <= 10 else 2)
        if path is not None:
            fig.savefig(path)
        return fig


def flow(model, *, track=False, vanishing=1e-7, exploding=1e3, relative=1e3):
    """Gradient statistics of `model` (an nn.Module, or a dict / iterable of (name, tensor)).

    Call it after ``backward``.  With ``track=True`` returns a FlowTracker instead: call its ``step()``
    after each backward to record the statistics over training.
    """
    kw = {"vanishing": vanishing, "exploding": exploding, "relative": relative}
    if track:
        return FlowTracker(model, **kw)
    return Flow(model, **kw)
