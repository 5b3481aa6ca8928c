"""torch's old linear-algebra names: the deprecation warnings of those that still work (once per process, as
torch's TORCH_WARN_ONCE) and the RuntimeError of those removed in torch 1.9 that torch still defines."""
import json
import subprocess
import sys

import pytest
import torch

import glassgrad

_PROBE = r"""
import json, sys, warnings
T = __import__(sys.argv[1])
a = T.eye(3, dtype=T.float64) * 2
b = T.ones(3, 1, dtype=T.float64)
lu = T.linalg.lu_factor(a)
calls = {
    "qr": lambda: T.qr(a), "qr_method": lambda: a.qr(),
    "cholesky_method": lambda: a.cholesky(), "cholesky": lambda: T.cholesky(a, upper=True),
    "lu_solve": lambda: T.lu_solve(b, *lu), "lu_solve_method": lambda: b.lu_solve(*lu),
    "triangular_solve": lambda: T.triangular_solve(b, a), "lu": lambda: T.lu(a), "lu_method": lambda: a.lu(),
    "chain_matmul": lambda: T.chain_matmul(a, a), "frobenius_norm": lambda: T.frobenius_norm(a, (0, 1)),
    "nuclear_norm": lambda: T.nuclear_norm(a),
}
seen = {}
for name, f in calls.items():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f()
        f()
    seen[name] = [[x.category.__name__, str(x.message)] for x in w]
print(json.dumps(seen))
"""


def _warnings_of(lib):
    out = subprocess.run([sys.executable, "-c", _PROBE, lib], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_deprecation_warnings_once_per_process_as_torch():
    ours, theirs = _warnings_of("glassgrad"), _warnings_of("torch")
    assert ours == theirs
    # the probe really saw warnings: one per deprecated name, at its first call only (method or function)
    assert sum(len(v) for v in theirs.values()) == 8
    assert theirs["qr_method"] == [] and len(theirs["qr"]) == 1


@pytest.mark.parametrize("call", [
    lambda T, a: T.symeig(a), lambda T, a: T.eig(a), lambda T, a: T.lstsq(a, a), lambda T, a: T.solve(a, a),
    lambda T, a: T.matrix_rank(a), lambda T, a: a.symeig(eigenvectors=True), lambda T, a: a.eig(),
    lambda T, a: a.lstsq(a), lambda T, a: a.solve(a),
], ids=["symeig", "eig", "lstsq", "solve", "matrix_rank", "Tensor.symeig", "Tensor.eig", "Tensor.lstsq",
        "Tensor.solve"])
def test_removed_functions_raise_torch_runtime_error(call):
    errors = []
    for T in (torch, glassgrad):
        with pytest.raises(RuntimeError) as e:
            call(T, T.eye(3))
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("This function was deprecated since version 1.9 and is now removed.")
