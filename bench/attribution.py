"""Cost of explain.attribute against one ordinary backward and against K separate backwards.

    .venv/bin/python bench/attribution.py [--runs N]

For each scenario and K (number of loss terms) it times, as the median of N runs (a fresh forward
before each run, not timed):
  backward      sum(terms).backward()                      -- one ordinary backward
  K backwards   t.backward(retain_graph=True) for each term -- the usual way to split by loss
  attribute     explain.attribute(terms, model)           -- one traversal, stacked cotangents
and prints attribute / backward and attribute / K-backwards (a table of medians, and one of the
best run of each, which is steadier on a shared machine).

Scenarios:
  textsnake  seed 000's head (Conv 3x3 16->16, Conv 1x1 16->7) and its TextLoss on a 7-channel
             64x64 map, batch 2.  K=2: each image's total loss; K=5: the post's five losses;
             K=10: the five losses for each image.
  mlp        an MLP trunk (256-512-512, ReLU) shared by K linear heads, each with its own
             cross-entropy loss, batch 256 (large GEMMs: compute-bound).
  deep       a deep narrow trunk (20 x Linear(64, 64) + Tanh) shared by K Linear(64, 1) heads with
             MSE losses, batch 32 (many small ops: per-node overhead dominates).
"""
import argparse
import os
import statistics
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import glassgrad as torch  # noqa: E402
from glassgrad import explain  # noqa: E402

NAMES = ["tr", "tcl", "radii", "sin", "cos"]


def _load_seed000():
    path = os.path.join(os.path.dirname(HERE), "examples", "seeds", "seed000_textsnake.py")
    src = open(path).read().split("# --- end of the post's code ---")[0]
    src = "\n".join(ln for ln in src.splitlines() if not ln.startswith("import torch"))
    ns = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional}
    exec(compile(src, path, "exec"), ns)
    return ns


def textsnake_setup(K, hw=64):
    ns = _load_seed000()
    torch.manual_seed(0)
    head = ns["Head"]()
    crit = ns["TextLoss"]()
    features = torch.randn(2, 16, hw, hw)
    tr_mask = (torch.rand(2, hw, hw) > 0.6).byte()
    tcl_mask = tr_mask * (torch.rand(2, hw, hw) > 0.5).byte()
    train_mask = (torch.rand(2, hw, hw) > 0.1).byte()
    angle = torch.rand(2, hw, hw) * 6.2832
    maps = (tr_mask, tcl_mask, torch.sin(angle), torch.cos(angle), torch.rand(2, hw, hw) * 4 + 1, train_mask)

    def forward():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = head(features)
            if K == 5:
                return dict(zip(NAMES, crit(out, *maps)))
            per = [crit(out[i:i + 1], *(m[i:i + 1] for m in maps)) for i in range(2)]
            if K == 2:
                return {f"img{i}": sum(per[i]) for i in range(2)}
            return {f"{n}{i}": per[i][j] for i in range(2) for j, n in enumerate(NAMES)}
    return head, forward


def mlp_setup(K, batch=256, d_in=256, width=512, classes=10):
    nn = torch.nn
    torch.manual_seed(0)
    trunk = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
    heads = nn.ModuleList([nn.Linear(width, classes) for _ in range(K)])
    model = nn.ModuleDict({"trunk": trunk, "heads": heads})
    x = torch.randn(batch, d_in)
    ys = [torch.randint(0, classes, (batch,)) for _ in range(K)]

    def forward():
        h = trunk(x)
        return {f"task{k}": nn.functional.cross_entropy(heads[k](h), ys[k]) for k in range(K)}
    return model, forward


def deep_setup(K, depth=20, width=64, batch=32):
    nn = torch.nn
    torch.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.Tanh()]
    trunk = nn.Sequential(*layers)
    heads = nn.ModuleList([nn.Linear(width, 1) for _ in range(K)])
    model = nn.ModuleDict({"trunk": trunk, "heads": heads})
    x = torch.randn(batch, width)
    ys = [torch.randn(batch, 1) for _ in range(K)]

    def forward():
        h = trunk(x)
        return {f"task{k}": nn.functional.mse_loss(heads[k](h), ys[k]) for k in range(K)}
    return model, forward


def _time(model, forward, fns, runs):
    """Median seconds of each fn in `fns`; the fns take turns within each run (the machine is shared,
    so slow phases hit all of them alike)."""
    ts = [[] for _ in fns]
    for _ in range(runs):
        for i, fn in enumerate(fns):
            model.zero_grad(set_to_none=True)
            terms = forward()
            t0 = time.perf_counter()
            fn(terms)
            ts[i].append(time.perf_counter() - t0)
    return [(statistics.median(t), min(t)) for t in ts]


def _one_backward(terms):
    sum(terms.values()).backward()


def _k_backwards(terms):
    vs = list(terms.values())
    for t in vs[:-1]:
        t.backward(retain_graph=True)
    vs[-1].backward()


SCENARIOS = ("textsnake", "mlp", "deep")


def run(runs, scenarios=SCENARIOS, ks=(2, 5, 10)):
    setups = {"textsnake": textsnake_setup, "mlp": mlp_setup, "deep": deep_setup}
    rows = []
    for sc in scenarios:
        for K in ks:
            model, forward = setups[sc](K)
            terms = forward()
            if len(terms) != K:
                raise RuntimeError(f"{sc}: expected {K} terms, got {len(terms)}")
            _one_backward(terms)                     # warm-up
            stats = {}

            def attr(terms):
                stats.update(explain.attribute(terms, model).stats)
            tb, tk, ta = _time(model, forward, (_one_backward, _k_backwards, attr), runs)
            multi = stats["stacked"] + sum(stats["fallback"].values()) + sum(stats["unlisted"].values())
            rows.append((sc, K, tb, tk, ta, stats["stacked"], multi))     # each a (median, min) pair
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="timed runs per measurement (median is reported)")
    ap.add_argument("--scenario", choices=list(SCENARIOS), action="append")
    args = ap.parse_args(argv)
    rows = run(args.runs, tuple(args.scenario or SCENARIOS))
    for which, label in ((0, f"median of {args.runs} runs"), (1, f"best of {args.runs} runs")):
        print(f"{label}, milliseconds; stacked = nodes reached by >1 term that ran once, stacked")
        hdr = (f"{'scenario':<10} {'K':>3} {'backward':>9} {'K backwards':>12} {'attribute':>10} "
               f"{'attr/backward':>14} {'attr/K-backwards':>17} {'stacked':>9}")
        print(hdr)
        print("-" * len(hdr))
        for sc, K, tb, tk, ta, st, multi in rows:
            tb, tk, ta = tb[which], tk[which], ta[which]
            print(f"{sc:<10} {K:>3} {tb * 1e3:>9.2f} {tk * 1e3:>12.2f} {ta * 1e3:>10.2f} "
                  f"{ta / tb:>13.2f}x {ta / tk:>16.2f}x {st:>4}/{multi:<4}")
        print()


if __name__ == "__main__":
    main()
