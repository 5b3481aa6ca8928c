"""Large MLP 784-4096-4096-4096-10 train step, batch 256, SGD with momentum (GEMM-bound)."""
from ._mlp import linear_gemms, make_step

NAME = "mlp_large"
TITLE = "MLP 784-4096x3-10 b256 SGD-m"
UNIT = "ms"
TARGET = {"time": 1.05, "floor": 1.15}
SIZES = [784, 4096, 4096, 4096, 10]
BATCH = 256


def setup(quick):
    return make_step(SIZES, BATCH), 1


def gemms(quick):
    return linear_gemms(SIZES, BATCH)
