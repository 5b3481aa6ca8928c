"""Shared by mlp.py and mlp_large.py: an MLP train step with SGD + momentum."""
import torch
import torch.nn as nn


def make_step(sizes, batch):
    torch.manual_seed(0)
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    crit = nn.CrossEntropyLoss()
    x = torch.randn(batch, sizes[0])
    y = torch.randint(0, sizes[-1], (batch,))

    def step():
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def linear_gemms(sizes, batch):
    """Forward X @ W.T, backward dY @ W (skipped for the first layer: the input needs no grad) and
    dY.T @ X, per Linear layer."""
    out = []
    for i in range(len(sizes) - 1):
        k, n = sizes[i], sizes[i + 1]
        out.append((batch, k, n))          # forward
        out.append((n, batch, k))          # grad weight
        if i > 0:
            out.append((batch, n, k))      # grad input
    return out
