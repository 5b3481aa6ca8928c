"""A chain of small elementwise ops on 8x8 tensors, then backward: per-op overhead of the engine."""
import torch

NAME = "chain"
TITLE = "small-op chain 8x8 + backward"
UNIT = "us/op"
TARGET = {"time": 0.7}
N_BLOCKS = 10  # each block is 5 ops


def setup(quick):
    torch.manual_seed(0)
    x = torch.randn(8, 8, requires_grad=True)
    w = torch.randn(8, 8)

    def step():
        x.grad = None
        y = x
        for _ in range(N_BLOCKS):
            y = y * w
            y = y + 0.5
            y = torch.tanh(y)
            y = y - x
            y = y.relu()
        y.sum().backward()

    return step, 5 * N_BLOCKS + 1
