"""The op table: every op described once (see core.py); test_ops.py generates the tests.

Each family module defines OPS, a list of OpInfo.  ALL_OPS gathers them.
"""
import importlib
import pkgutil

from .core import OpInfo

ALL_OPS = []
for _m in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in ("core", "expected_failures")):
    ALL_OPS.extend(importlib.import_module(f"{__name__}.{_m}").OPS)


# Rows also run in bfloat16 (tests/test_ops.py: samples drawn in float32 and rounded to bfloat16, values and
# gradients compared with the bfloat16 tolerances there): elementwise, reductions, matmul, nn activations, norms
BF16_ROWS = ("add", "sub", "mul", "div", "rdiv", "neg", "exp", "log", "sqrt", "pow_scalar", "where", "abs", "tanh",
             "sigmoid", "rsqrt", "sum_full", "sum_dim", "mean_full", "mean_dim", "amax", "max_dim", "var", "logsumexp",
             "cumsum", "matmul", "mm", "bmm", "addmm", "einsum[ij,jk->ik]", "F.relu", "F.gelu", "F.silu",
             "F.leaky_relu", "F.softmax", "F.log_softmax", "nn.functional.layer_norm", "nn.functional.linear",
             "nn.functional.conv2d", "nn.functional.cross_entropy", "nn.functional.mse_loss", "cat", "transpose")
for _o in ALL_OPS:
    if _o.name in BF16_ROWS:
        _o.dtypes = tuple(_o.dtypes) + ("bfloat16",)
assert {o.name for o in ALL_OPS if "bfloat16" in o.dtypes} == set(BF16_ROWS), "a BF16_ROWS name is not in the table"


def by_name():
    return {o.name: o for o in ALL_OPS}
