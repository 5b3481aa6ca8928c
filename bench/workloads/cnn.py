"""Small CNN train step on 3x32x32 (conv/relu/maxpool x2, linear/relu/linear), batch 64, Adam."""
import torch
import torch.nn as nn

NAME = "cnn"
TITLE = "small CNN 3x32x32 b64 Adam"
UNIT = "ms"
TARGET = {"time": 1.5}
BATCH = 64


def setup(quick):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 8 * 8, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(BATCH, 3, 32, 32)
    y = torch.randint(0, 10, (BATCH,))

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step, 1


def gemms(quick):
    """Convolutions as im2col GEMMs (forward, grad weight, grad input except for the first conv)
    and the two Linear layers."""
    b = BATCH
    return [
        (b * 32 * 32, 3 * 9, 32), (32, b * 32 * 32, 3 * 9),
        (b * 16 * 16, 32 * 9, 64), (64, b * 16 * 16, 32 * 9), (b * 16 * 16, 64, 32 * 9),
        (b, 4096, 128), (128, b, 4096), (b, 128, 4096),
        (b, 128, 10), (10, b, 128), (b, 10, 128),
    ]
