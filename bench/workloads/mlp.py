"""MLP 784-512-512-10 train step, batch 128, SGD with momentum, cross-entropy."""
from ._mlp import linear_gemms, make_step

NAME = "mlp"
TITLE = "MLP 784-512-512-10 b128 SGD-m"
UNIT = "ms"
TARGET = {"time": 1.0}
SIZES = [784, 512, 512, 10]
BATCH = 128


def setup(quick):
    return make_step(SIZES, BATCH), 1


def gemms(quick):
    return linear_gemms(SIZES, BATCH)
