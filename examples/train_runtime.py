"""An ordinary PyTorch training script that leans on torch's runtime around the math: cuDNN autotuning, bfloat16
autocast with a GradScaler, activation checkpointing, torch.compile, and torch.save / torch.load of the
checkpoint.  It does not know glassgrad: run it with either library.

    python examples/train_runtime.py [--steps 30] [--out /tmp/run]              # PyTorch
    glassgrad run examples/train_runtime.py [--steps 30] [--out /tmp/run]       # glassgrad serves `import torch`

It prints one line per step (step, loss, grad norm, scale) and writes <out>/ckpt.pt, then reloads it into a fresh
model and checks the reloaded model predicts as the trained one did.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

torch.backends.cudnn.benchmark = True


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.norm(x)))))


class Net(nn.Module):
    def __init__(self, dim=32, depth=4, classes=5):
        super().__init__()
        self.embed = nn.Linear(16, dim)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.tail = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU())
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:              # activations recomputed in backward, dropout masks replayed
            x = checkpoint(block, x, use_reentrant=False)
        x = checkpoint_sequential(self.tail, 2, x, use_reentrant=False)
        return self.head(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--out", default="runtime-run")
    args = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(256, 16)
    y = (x[:, :5] * torch.arange(1.0, 6.0)).argmax(1)
    x, y = x.to(device), y.to(device)

    model = Net().to(device)
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    scaler = torch.amp.GradScaler(device, init_scale=2.0 ** 10)
    for step in range(args.steps):
        idx = torch.randint(0, 256, (64,), device=device)
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            logits = compiled(x[idx])
            loss = F.cross_entropy(logits, y[idx])
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        print(f"step {step:3d}  loss {loss.item():.4f}  grad-norm {norm.item():.4f}  scale {scaler.get_scale():.0f}")

    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "ckpt.pt")
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "scaler": scaler.state_dict(),
                "steps": args.steps}, path)
    ckpt = torch.load(path)                    # torch.load's defaults: weights only
    fresh = Net().to(device)
    fresh.load_state_dict(ckpt["model"])
    model.eval()
    fresh.eval()
    with torch.no_grad():
        same = torch.equal(model(x).argmax(1), fresh(x).argmax(1))
        acc = (fresh(x).argmax(1) == y).float().mean().item()
    print(f"reloaded {path}: same predictions {same}, accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
