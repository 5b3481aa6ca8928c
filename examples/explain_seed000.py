"""Seed 000 explained: which loss term trains which output channel of the TextSnake head?

Runs the post's model and loss (examples/seeds/seed000_textsnake.py) on glassgrad, then
  * draws the backward graph, coloured by loss term (docs/seed000_graph.svg), and
  * splits the last conv layer's gradient by loss term (the table printed below).

    python examples/explain_seed000.py
"""
import contextlib
import io
import pathlib
import runpy
import warnings

import glassgrad as torch
from glassgrad import explain

from glassgrad._torch_alias import install

ROOT = pathlib.Path(__file__).resolve().parents[1]
install()                                                 # the seed's `import torch` gets glassgrad
warnings.filterwarnings("ignore", message="indexing with dtype torch.uint8")   # the post's byte masks
with contextlib.redirect_stdout(io.StringIO()):           # the seed's own prints are not the point here
    seed = runpy.run_path(str(ROOT / "examples" / "seeds" / "seed000_textsnake.py"))

torch.manual_seed(0)
head = seed["Head"]()
features = torch.randn(2, 16, 12, 12)
tr_mask = (torch.rand(2, 12, 12) > 0.6).byte()
tcl_mask = tr_mask * (torch.rand(2, 12, 12) > 0.5).byte()
train_mask = (torch.rand(2, 12, 12) > 0.1).byte()
angle = torch.rand(2, 12, 12) * 6.2832
radii_map = torch.rand(2, 12, 12) * 4 + 1
with explain.trace_modules(head) as trace:
    output = head(features)
names = ("tr", "tcl", "radii", "sin", "cos")
terms = dict(zip(names, seed["TextLoss"]()(output, tr_mask, tcl_mask, torch.sin(angle), torch.cos(angle),
                                             radii_map, train_mask)))
loss = sum(terms.values())

view = explain.graph(loss, head, modules=trace, colors=terms)
out = ROOT / "docs" / "seed000_graph.svg"
try:
    view.render(str(out))
    print("graph:", out.relative_to(ROOT))
except Exception as e:  # noqa: BLE001  (without Graphviz's `dot` the .svg is drawn by glassgrad's own layout)
    print(f"(no picture: {e})")
    print(view.text())

attr = explain.attribute(terms, head)
print(attr.table())
w = "predict.1.weight"
print(f"\nrows of {w} (one 1x1 kernel per output channel) reached by each term:")
for t in names:
    g = attr.grads[(w, t)].view(7, 16).abs().sum(1)
    print(f"  {t:6s}", " ".join(("." if v == 0 else f"{v:.1e}").rjust(7) for v in g.tolist()))
