"""One self-contained HTML report of a watched run (``glassgrad explain`` and ``glassgrad demo``).

    write_report(result, "report.html")     # result: a _session.SessionResult

Inline CSS, the graph as inline SVG (drawn by Graphviz's ``dot`` when it is on PATH, else by the
built-in layered layout of ``_graph_svg``; the text tree in a ``<details>`` below it), plots as inline base64 PNG when matplotlib is installed: the file opens anywhere, offline.
Sections (element ids): ``summary``, ``graph``, ``attribution``, ``flow``, ``nan``, ``why-no-grad``
and, when the script failed, ``error``.
"""
import base64
import html
import io
import math
import os
import time

__all__ = ["render_html", "write_report", "SECTIONS"]

SECTIONS = ("summary", "graph", "attribution", "flow", "nan", "why-no-grad")

_CSS = """
body{font:14px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{background:#18324a;color:#fff;padding:14px 28px}header h1{margin:0;font-size:20px}
header p{margin:2px 0 0;opacity:.8}nav{padding:6px 28px;background:#e8eef4;position:sticky;top:0}
nav a{margin-right:16px;color:#18324a;text-decoration:none;font-weight:600}
main{padding:0 28px 40px;max-width:1200px}section{background:#fff;border:1px solid #dde;border-radius:6px;
padding:8px 20px 16px;margin:18px 0}h2{font-size:17px;border-bottom:1px solid #eee;padding-bottom:4px}
table.kv td{padding:1px 12px 1px 0;vertical-align:top}table.kv td:first-child{color:#555}
table.gg{border-collapse:collapse;font-size:13px}table.gg th,table.gg td{border:1px solid #ccc;
padding:2px 8px;text-align:right}table.gg th{background:#f0f3f7}table.gg td.n,table.gg th.n{text-align:left}
.flag{color:#b00020;font-weight:600}.ok{color:#1b5e20}.muted{color:#777}
pre{background:#f6f8fa;border:1px solid #e1e4e8;padding:8px;overflow:auto;font-size:12px;line-height:1.35}
.graph svg{max-width:100%;height:auto}img.plot{max-width:100%;border:1px solid #eee;margin:6px 0}
.finding{border-left:4px solid #c44e52;padding:2px 10px;margin:6px 0;background:#fff6f6}
.finding.why{border-color:#8172b3;background:#f7f5fd}
"""


def _e(s):
    return html.escape(str(s), quote=True)


def _num(v, fmt="{:.6g}"):
    if v is None:
        return "-"
    try:
        if isinstance(v, float) and math.isnan(v):
            return "-"
        return fmt.format(v)
    except (TypeError, ValueError):
        return _e(v)


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img class="plot" alt="plot" src="data:image/png;base64,{data}">'


def _have_mpl():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def _graph_svg(view):
    """(inline SVG text of the view, who drew it), or (None, why) when even the built-in drawing failed.

    Graphviz's ``dot`` draws when it is installed; otherwise the built-in layered layout does."""
    from ._graph_render import have_dot
    from ._graph_svg import to_svg
    if have_dot():
        try:
            svg = view.to_svg(engine="dot")
            return svg, "Graphviz"
        except Exception:  # noqa: BLE001 - the built-in drawing below
            pass
    try:
        return to_svg(view), "glassgrad's layered layout"
    except Exception as e:  # noqa: BLE001 - fall back to the text tree
        return None, f"{type(e).__name__}: {e}"


def _losses(steps):
    vals = [_num(s.loss) for s in steps]
    if len(vals) > 12:
        vals = vals[:6] + [f"&hellip; ({len(vals) - 9} more) &hellip;"] + vals[-3:]
    return ", ".join(vals) or "-"


# -- sections ---------------------------------------------------------------------------------------------
def _summary(r):
    status = ("stopped after {} step{} (as asked)".format(len(r.steps), "s" if len(r.steps) != 1 else "")
              if r.stopped else ("failed: " + _e(r.error_type) if r.error else "ran to the end"))
    rows = [("script", _e(r.script or "(in-process)") + (" " + _e(" ".join(r.args)) if r.args else "")),
            ("steps watched", f"{len(r.steps)} of {r.requested_steps} requested"),
            ("status", status),
            ("final loss", _num(r.final_loss)),
            ("loss per step", _losses(r.steps)),
            ("model", _e(r.model_name or "(no nn.Module found: parameters are the graph's leaves)")),
            ("time", f"{r.seconds:.2f} s")]
    h = ['<section id="summary"><h2>Summary</h2><table class="kv">']
    h += [f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows]
    h.append("</table>")
    if r.model_repr:
        h.append(f"<details><summary>model</summary><pre>{_e(r.model_repr)}</pre></details>")
    for n in r.notes:
        h.append(f'<p class="muted">note: {_e(n)}</p>')
    h.append("</section>")
    return "\n".join(h)


def _graph(r):
    h = ['<section id="graph"><h2>Backward graph of the first step\'s loss</h2>']
    if r.graph is None:
        h.append(f'<p class="muted">no graph: {_e(r.graph_error or "no backward of a scalar loss was seen")}</p>')
    else:
        depth = getattr(r.graph, "max_depth", None)
        h.append("<p>PyTorch's node names; leaves named after the model's parameters"
                 + (f"; modules collapsed to depth {depth}" if depth is not None else "")
                 + "; edges carry the norm of the gradient that flowed along them"
                 + ("; their colours are the loss terms whose gradient flows along them"
                    if getattr(r.graph, "_terms", None) else "") + ".</p>")
        svg, who = _graph_svg(r.graph)
        if svg is not None:
            h.append(f'<div class="graph">{svg}</div>')
            h.append(f'<p class="muted">drawn by {_e(who)}</p>')
            h.append(f"<details><summary>as text</summary><pre>{_e(r.graph.text())}</pre></details>")
        else:
            h.append(f'<p class="muted">(the drawing failed: {_e(who)}; the text tree)</p>')
            h.append(f'<pre class="graph">{_e(r.graph.text())}</pre>')
    h.append("</section>")
    return "\n".join(h)


def _attribution(r):
    h = ['<section id="attribution"><h2>Loss-term attribution</h2>']
    if r.attribution is None:
        h.append(f'<p class="muted">no attribution: {_e(r.attribution_error or "no loss was seen")}</p>')
    else:
        h.append(f"<p>Terms: <b>{', '.join(_e(t) for t in r.terms)}</b> &mdash; {_e(r.terms_how or '')}. "
                 "Each parameter's gradient split by term (first step): the norm of each part, its share "
                 "of the summed squares, its contribution to the total, and cosines between terms "
                 "(negative: the terms pull the parameter in opposite directions).</p>")
        try:
            h.append(r.attribution.to_html())
        except Exception as e:  # noqa: BLE001
            h.append(f"<pre>{_e(r.attribution.table())}</pre><p class='muted'>({_e(e)})</p>")
    h.append("</section>")
    return "\n".join(h)


def _flow(r):
    h = ['<section id="flow"><h2>Gradient flow</h2>']
    tr = r.tracker
    if tr is None or not len(tr):
        h.append('<p class="muted">no gradient was recorded</p></section>')
        return "\n".join(h)
    hist = tr.history
    nsteps = len(hist)
    show = list(range(nsteps)) if nsteps <= 8 else sorted({0, 1, 2, nsteps // 2, nsteps - 3, nsteps - 2, nsteps - 1})
    h.append(f"<p>Per layer (a module that owns parameters), over {nsteps} step{'s' if nsteps != 1 else ''}: "
             "the gradient norm, and at the last step max |g|, weight norm, gradient-to-weight ratio and "
             "flags (vanishing / exploding / no_grad / non_finite).</p>")
    h.append('<table class="gg flow"><thead><tr><th class="n">layer</th><th class="n">type</th>'
             + "".join(f"<th>|grad| step {i}</th>" for i in show)
             + "<th>max |g|</th><th>weight norm</th><th>grad/weight</th><th class='n'>flags</th></tr></thead><tbody>")
    series = tr.series("grad_norm")
    last = hist[-1]
    for lay in last.layers:
        vals = series.get(lay.name, [])
        flags = sorted({f for fl in hist for s in fl.layers if s.name == lay.name for f in s.flags})
        cls = "flag" if flags else "ok"
        h.append(f'<tr><td class="n">{_e(lay.name)}</td><td class="n">{_e(lay.type)}</td>'
                 + "".join(f"<td>{_num(vals[i] if i < len(vals) else None, '{:.3e}')}</td>" for i in show)
                 + f"<td>{_num(lay.grad_max, '{:.3e}')}</td><td>{_num(lay.weight_norm, '{:.3e}')}</td>"
                 + f"<td>{_num(lay.ratio, '{:.3e}')}</td><td class='n {cls}'>{_e(', '.join(flags) or 'ok')}</td></tr>")
    h.append("</tbody></table>")
    if _have_mpl():
        try:
            if nsteps > 1:
                h.append(_png(tr.plot()))
            h.append(_png(last.plot()))
        except Exception as e:  # noqa: BLE001
            h.append(f'<p class="muted">plot failed: {_e(e)}</p>')
    else:
        h.append('<p class="muted">(install matplotlib &mdash; <code>pip install glassgrad[plot]</code> &mdash; '
                 "for the plots)</p>")
    h.append("</section>")
    return "\n".join(h)


def _nan(r):
    h = ['<section id="nan"><h2>NaN / Inf findings</h2>',
         f'<p class="muted">checked with {_e(r.nan_tool or "basic checks")}'
         " (the loss at each step and every layer's gradient are always checked)</p>"]
    if not r.nan_findings:
        h.append('<p class="ok">no NaN or Inf in the watched steps.</p>')
    for f in r.nan_findings:
        bits = [f"step {f.get('step')}"]
        for k in ("phase", "op", "origin", "line"):
            if f.get(k):
                bits.append(f"{k}: {_e(f[k])}")
        if f.get("where_trap"):
            bits.append("<b>mask/where trap</b>")
        h.append(f'<div class="finding"><div>{" &middot; ".join(bits)}</div><pre>{_e(f.get("message", ""))}</pre></div>')
    h.append("</section>")
    return "\n".join(h)


def _why(r):
    h = ['<section id="why-no-grad"><h2>Why is <code>.grad</code> None?</h2>',
         f'<p class="muted">parameters whose <code>.grad</code> stayed None after a step, explained with '
         f'{_e(r.why_tool or "basic checks")}</p>']
    if not r.why_findings:
        h.append('<p class="ok">every parameter received a gradient at every watched step.</p>')
    seen = set()
    for f in r.why_findings:
        key = (f["param"], f.get("cause"), f.get("sentence"))
        if key in seen:
            continue
        seen.add(key)
        steps = sorted({g["step"] for g in r.why_findings if (g["param"], g.get("cause"), g.get("sentence")) == key})
        line = f" &middot; line {_e(f['line'])}" if f.get("line") else ""
        h.append(f'<div class="finding why"><b>{_e(f["param"])}</b> &middot; cause: {_e(f.get("cause") or "?")}'
                 f"{line} &middot; steps {', '.join(map(str, steps))}<br>{_e(f.get('sentence') or '')}</div>")
    h.append("</section>")
    return "\n".join(h)


def _error(r):
    if not r.error:
        return ""
    return (f'<section id="error"><h2>The script failed: {_e(r.error_type)}</h2>'
            f"<pre>{_e(r.error)}</pre></section>")


def render_html(result, title=None):
    """The report as one HTML string."""
    name = os.path.basename(result.script) if result.script else "run"
    title = title or f"glassgrad explain: {name}"
    parts = [_summary(result), _error(result), _graph(result), _attribution(result), _flow(result), _nan(result),
             _why(result)]
    nav = "".join(f'<a href="#{s}">{s.replace("-", " ")}</a>' for s in (("error",) if result.error else ()) + SECTIONS)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    body = "\n".join(p for p in parts if p)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
            f"<style>{_CSS}</style></head><body><header><h1>{_e(title)}</h1>"
            f"<p>glassgrad &mdash; how the gradients flow through this run &middot; {stamp}</p></header>"
            f"<nav>{nav}</nav><main>\n{body}\n</main></body></html>\n")


def write_report(result, path, title=None):
    """Write the report to `path` (directories created); returns the absolute path."""
    path = os.path.abspath(os.fspath(path))
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    text = render_html(result, title)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path

