"""One large float32 GEMM and its backward (C = A @ B; dA = dC B^T, dB = A^T dC): the GEMM path itself, n = 1024
on the CPU, 8192 on a GPU (issue 17's large-GEMM target: within 1.05x of torch)."""
import torch

NAME = "gemm"
TITLE = "GEMM n^3 fwd+bwd (n 1024 cpu, 8192 gpu)"
UNIT = "ms"
TARGET = {"time": 1.05, "floor": 1.15}


def _n():
    if torch.get_default_device().type != "cuda" or torch.cuda.get_device_name().startswith("glassgrad strict"):
        return 1024                 # the CPU, or the strict stand-in device (NumPy underneath) of the smoke test
    return 8192


def setup(quick):
    torch.manual_seed(0)
    n = _n()
    a = torch.randn(n, n, requires_grad=True)
    b = torch.randn(n, n, requires_grad=True)
    g = torch.randn(n, n)

    def step():
        a.grad = b.grad = None
        (a @ b).backward(g)

    return step, 1


def gemms(quick):
    n = _n()
    return [(n, n, n)] * 3
