"""The Attribution object: per-term gradients and the tables that compare them.

All the numbers in the tables come from one Gram matrix per parameter, G[i, j] = <g_i, g_j>
(float64), summed over a module's parameters for the per-module table:

  norm_i     = sqrt(G[i, i])
  share_i    = G[i, i] / sum_j G[j, j]          (the term's part of the summed squared norms)
  contrib_i  = sum_j G[i, j] / sum_jk G[j, k]   (its projection on the total gradient, / |total|^2:
                                                 these add up to 100%; negative = it pulls against
                                                 the others)
  cos_ij     = G[i, j] / (norm_i norm_j)        (negative: the two terms conflict on this parameter)
"""
import html
import math

import numpy as np

from ..backend import to_host
from ..ops.namespaces import ARR

__all__ = ["Attribution"]


class Attribution:
    """Each parameter's gradient split by loss term.

    .terms                      the term names, in order
    .params                     the parameter names, in order
    .grads[(param, term)]       that term's gradient (a Tensor; exact zeros where it cannot reach)
    .reachable[(param, term)]   whether the term's graph reaches the parameter at all
    .total(param)               the sum over terms (= the gradient of the summed loss)
    .cosine(param, t1, t2)      cosine between two terms' gradients (param or module name)
    .table(by="parameter"|"module"), .to_html()
    .stats                      how the traversal ran (nodes, stacked, looped, fallback by node name)
    """

    def __init__(self, terms, params, grads, reachable, arrays, stats):
        self.terms = list(terms)
        self.params = list(params)
        self.grads = grads
        self.reachable = reachable
        self._arr = arrays
        self.stats = stats
        self._gram = {}

    # -- numbers -------------------------------------------------------------------------------
    def _total_array(self, param):
        self._check_param(param)
        tot = None
        for t in self.terms:
            a = self._arr[(param, t)]
            tot = a.copy() if tot is None else tot + a
        return tot

    def total(self, param):
        """The gradient of the summed loss for `param` (the sum of its parts)."""
        return ARR.to_tensor(self._total_array(param))

    def _check_param(self, param):
        if param not in self.params:
            raise KeyError(f"no parameter named '{param}' (parameters: {', '.join(self.params)})")

    def gram(self, param):
        """K x K matrix of dot products <g_i, g_j> (float64) for a parameter or a module."""
        G = self._gram.get(param)
        if G is not None:
            return G
        if param in self.params:
            M = np.stack([self._arr[(param, t)].reshape(-1).astype(np.float64) for t in self.terms])
            G = to_host(M @ M.T)        # a K x K report matrix: read on the host (explicit copy from a device)
        else:
            members = self._members(param)
            if not members:
                raise KeyError(f"no parameter or module named '{param}'")
            G = sum(self.gram(p) for p in members)
        self._gram[param] = G
        return G

    def norm(self, param, term):
        i = self.terms.index(term)
        return math.sqrt(max(self.gram(param)[i, i], 0.0))

    def cosine(self, param, t1, t2):
        """Cosine between terms t1 and t2 on `param` (nan if either gradient is zero)."""
        G = self.gram(param)
        i, j = self.terms.index(t1), self.terms.index(t2)
        d = math.sqrt(G[i, i] * G[j, j])
        return float(G[i, j] / d) if d > 0 else float("nan")

    def is_reachable(self, param, term):
        if param in self.params:
            return self.reachable[(param, term)]
        return any(self.reachable[(p, term)] for p in self._members(param))

    # -- grouping ------------------------------------------------------------------------------
    @staticmethod
    def _module_of(param):
        return param.rsplit(".", 1)[0] if "." in param else "(top)"

    def modules(self):
        seen = []
        for p in self.params:
            m = self._module_of(p)
            if m not in seen:
                seen.append(m)
        return seen

    def _members(self, module):
        return [p for p in self.params if self._module_of(p) == module]

    def rows(self, by="parameter"):
        """One dict per parameter (or module): name, shape, and per term norm / share / contrib /
        reachable / zero, plus the cosine matrix."""
        if by not in ("parameter", "module"):
            raise ValueError(f"by must be 'parameter' or 'module', not {by!r}")
        names = self.params if by == "parameter" else self.modules()
        out = []
        for nm in names:
            G = self.gram(nm)
            diag = np.clip(np.diag(G), 0.0, None)
            norms = np.sqrt(diag)
            sq = diag.sum()
            tot = G.sum()
            K = len(self.terms)
            cos = np.full((K, K), np.nan)
            for i in range(K):
                for j in range(K):
                    if norms[i] > 0 and norms[j] > 0:
                        cos[i, j] = G[i, j] / (norms[i] * norms[j])
            if by == "parameter":
                shape = tuple(self._arr[(nm, self.terms[0])].shape)
            else:
                shape = None
            per = []
            for i, t in enumerate(self.terms):
                per.append({
                    "term": t, "norm": float(norms[i]),
                    "share": float(diag[i] / sq) if sq > 0 else float("nan"),
                    "contrib": float(G[i].sum() / tot) if tot > 0 else float("nan"),
                    "reachable": self.is_reachable(nm, t),
                    "zero": bool(diag[i] == 0),
                })
            out.append({"name": nm, "shape": shape, "total_norm": math.sqrt(max(tot, 0.0)),
                        "terms": per, "cosine": cos})
        return out

    # -- text -------------------------------------------------------------------------------------
    @staticmethod
    def _status(r):
        if not r["reachable"]:
            return "unreachable"
        if r["zero"]:
            return "0 (exact)"
        return None

    def table(self, by="parameter"):
        """A text table: per parameter (or module) and term, the gradient norm, its share of the
        summed squared norms, its contribution to the total (sums to 100%), and cosines to the
        other terms (negative = conflict)."""
        rows = self.rows(by)
        K = len(self.terms)
        tw = max([len("term")] + [len(t) for t in self.terms] + [len("(total)")])
        cw = max(7, max(len(t) for t in self.terms) + 4)
        head = f"{'term':<{tw}}  {'|grad|':>10}  {'share':>7}  {'contrib':>8}"
        if K > 1:
            head += "  " + "  ".join(f"{'cos ' + t:>{cw}}"[-cw:].rjust(cw) for t in self.terms)
        lines = [f"Per-loss gradient attribution ({len(self.terms)} terms, by {by})", ""]
        for row in rows:
            title = row["name"] + (f"  {list(row['shape'])}" if row["shape"] is not None else
                                   f"  ({len(self._members(row['name']))} parameters)")
            lines.append(title)
            lines.append("  " + head)
            for i, r in enumerate(row["terms"]):
                st = self._status(r)
                if st == "unreachable":
                    cells = f"{'unreachable':>10}  {'-':>7}  {'-':>8}"
                else:
                    cells = f"{r['norm']:>10.4g}  {_pct(r['share']):>7}  {_pct(r['contrib']):>8}"
                    if st:
                        cells = f"{'0 (exact)':>10}  {_pct(r['share']):>7}  {_pct(r['contrib']):>8}"
                line = f"  {r['term']:<{tw}}  {cells}"
                if K > 1:
                    line += "  " + "  ".join(_cos(row["cosine"][i, j], i == j).rjust(cw) for j in range(K))
                lines.append(line.rstrip())
            lines.append(f"  {'(total)':<{tw}}  {row['total_norm']:>10.4g}")
            lines.append("")
        return "\n".join(lines).rstrip() + "\n"

    def __str__(self):
        return self.table()

    def __repr__(self):
        return (f"Attribution(terms={self.terms}, params={len(self.params)}, "
                f"stacked_nodes={self.stats.get('stacked', 0)}, looped_nodes={self.stats.get('looped', 0)})")

    # -- HTML ---------------------------------------------------------------------------------------
    def to_html(self, by="parameter"):
        """A self-contained HTML table (inline CSS, no external assets)."""
        rows = self.rows(by)
        K = len(self.terms)
        e = html.escape
        css = ("table.gg-attr{border-collapse:collapse;font:13px/1.4 system-ui,sans-serif}"
               ".gg-attr th,.gg-attr td{border:1px solid #ccc;padding:2px 8px;text-align:right}"
               ".gg-attr td.n,.gg-attr th.n{text-align:left}.gg-attr tr.p td{background:#eef;font-weight:600}"
               ".gg-attr .un{color:#999;font-style:italic}.gg-attr .z{color:#777}"
               ".gg-attr .neg{color:#b00020;font-weight:600}.gg-attr .pos{color:#1b5e20}")
        h = [f"<style>{css}</style>", '<table class="gg-attr">',
             "<thead><tr><th class='n'>" + ("parameter" if by == "parameter" else "module") +
             "</th><th class='n'>term</th><th>|grad|</th><th>share</th><th>contrib</th>" +
             "".join(f"<th>cos {e(t)}</th>" for t in self.terms if K > 1) + "</tr></thead><tbody>"]
        for row in rows:
            shape = f" {list(row['shape'])}" if row["shape"] is not None else ""
            h.append(f"<tr class='p'><td class='n' colspan='2'>{e(row['name'])}{e(shape)}</td>"
                     f"<td>{row['total_norm']:.4g}</td><td></td><td></td>" +
                     ("<td></td>" * K if K > 1 else "") + "</tr>")
            for i, r in enumerate(row["terms"]):
                st = self._status(r)
                if st == "unreachable":
                    cells = "<td class='un'>unreachable</td><td class='un'>-</td><td class='un'>-</td>"
                elif st:
                    cells = f"<td class='z'>0 (exact)</td><td>{_pct(r['share'])}</td><td>{_pct(r['contrib'])}</td>"
                else:
                    cells = f"<td>{r['norm']:.4g}</td><td>{_pct(r['share'])}</td><td>{_pct(r['contrib'])}</td>"
                cs = ""
                if K > 1:
                    for j in range(K):
                        c = row["cosine"][i, j]
                        cls = "" if i == j or c != c else (" class='neg'" if c < 0 else " class='pos'")
                        cs += f"<td{cls}>{e(_cos(c, i == j))}</td>"
                h.append(f"<tr><td></td><td class='n'>{e(r['term'])}</td>{cells}{cs}</tr>")
        h.append("</tbody></table>")
        return "\n".join(h)

    def _repr_html_(self):
        return self.to_html()


def _pct(v):
    return "-" if v != v else f"{100 * v:.1f}%"


def _cos(c, diag=False):
    if c != c:
        return "-"
    if diag:
        return "1"
    return "0" if c == 0 else f"{c:+.3f}"
