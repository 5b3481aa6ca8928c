"""A two-head model trained with two loss terms, in plain PyTorch idiom (no glassgrad in sight).

    python examples/explain/two_losses.py                    # on PyTorch
    glassgrad explain examples/explain/two_losses.py         # on glassgrad, with an HTML report

The loss is `loss_cls + 0.5 * loss_reg`: `glassgrad explain` splits it into its two terms and shows
which parameters each one trains.  `self.unused` is never called, so its .grad stays None: the
report's why-no-grad section says why.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--iters", type=int, default=20)
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args()

torch.manual_seed(0)


class TwoHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.cls = nn.Linear(32, 3)
        self.reg = nn.Linear(32, 1)
        self.unused = nn.Linear(32, 2)      # never called in forward

    def forward(self, x):
        h = self.body(x)
        return self.cls(h), self.reg(h).squeeze(1)


X = torch.randn(256, 8)
y_cls = (X[:, 0] > 0).long() + (X[:, 1] > 0).long()
y_reg = 2 * X[:, 2] - X[:, 3]

model = TwoHead()
opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
for step in range(args.iters):
    idx = torch.randint(0, 256, (32,))
    logits, pred = model(X[idx])
    loss_cls = F.cross_entropy(logits, y_cls[idx])
    loss_reg = F.mse_loss(pred, y_reg[idx])
    loss = loss_cls + 0.5 * loss_reg
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step:2d}  loss {loss.item():.4f}  (cls {loss_cls.item():.4f}, reg {loss_reg.item():.4f})")
print("training done")
