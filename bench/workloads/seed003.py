"""Seed 003 (examples/seeds/seed003_vjp.py) in a loop: doubling a 3-vector until its norm passes 1000,
then a vector-Jacobian product through ``y.backward(gradients)``."""
import torch

NAME = "seed003"
TITLE = "seed 003 loop (x*2 until norm>1000, vjp)"
UNIT = "us"
TARGET = {"time": 0.7}


def setup(quick):
    torch.manual_seed(0)
    gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)

    def step():
        x = torch.randn(3, requires_grad=True)
        y = x * 2
        while y.data.norm() < 1000:
            y = y * 2
        y.backward(gradients)
        return x.grad

    return step, 1
