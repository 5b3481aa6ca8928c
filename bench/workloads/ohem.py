"""Seed 000's TextLoss (examples/seeds/seed000_textsnake.py, the post's code verbatim): five loss terms
with online hard-example mining (boolean-mask indexing, cross-entropy, topk, smooth-L1) over a
7-channel 64x64 prediction map, batch 2; forward and backward of the loss (the map is a leaf)."""
import os

import torch

NAME = "ohem"
TITLE = "seed 000 OHEM TextLoss 7x64x64 b2"
UNIT = "ms"
TARGET = {"time": 1.3}
HW, BATCH = 64, 2
_SEED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "seeds",
                     "seed000_textsnake.py")


def _text_loss():
    with open(_SEED) as f:
        src = f.read().split("# --- end of the post's code ---")[0]
    ns = {"__name__": "seed000"}
    exec(compile(src, _SEED, "exec"), ns)  # its `import torch` lines get this process's torch
    return ns["TextLoss"]()


def setup(quick):
    crit = _text_loss()
    torch.manual_seed(0)
    b, hw = BATCH, HW
    pred = torch.randn(b, 7, hw, hw, requires_grad=True)
    tr_mask = (torch.rand(b, hw, hw) > 0.6).byte()
    tcl_mask = tr_mask * (torch.rand(b, hw, hw) > 0.5).byte()
    train_mask = (torch.rand(b, hw, hw) > 0.1).byte()
    angle = torch.rand(b, hw, hw) * 6.2832
    maps = (tr_mask, tcl_mask, torch.sin(angle), torch.cos(angle), torch.rand(b, hw, hw) * 4 + 1, train_mask)

    def step():
        pred.grad = None
        loss_tr, loss_tcl, loss_radii, loss_sin, loss_cos = crit(pred, *maps)
        loss = loss_tr + loss_tcl + loss_radii + loss_sin + loss_cos
        loss.backward()
        return loss

    return step, 1
