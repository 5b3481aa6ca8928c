"""Op table rows: elementwise arithmetic and math (ops/elementwise.py)."""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, unary_samples, binary_samples, arr

OPS = [
    OpInfo("add", lambda T, a, b: T.add(a, b), binary_samples()),
    OpInfo("add_alpha", lambda T, a, b: T.add(a, b, alpha=2), binary_samples(scalar=False)),
    OpInfo("sub", lambda T, a, b: a - b, binary_samples()),
    OpInfo("rsub", lambda T, a: 2.5 - a, unary_samples()),
    OpInfo("mul", lambda T, a, b: a * b, binary_samples()),
    OpInfo("div", lambda T, a, b: a / b, binary_samples(b_low=0.5, b_high=2.0)),
    OpInfo("rdiv", lambda T, a: 2.0 / a, unary_samples(low=0.5, high=2.0)),
    OpInfo("neg", lambda T, a: -a, unary_samples()),
    OpInfo("exp", lambda T, a: T.exp(a), unary_samples()),
    OpInfo("log", lambda T, a: T.log(a), unary_samples(low=0.1, high=3.0)),
    OpInfo("sqrt", lambda T, a: T.sqrt(a), unary_samples(low=0.1, high=3.0)),
    OpInfo("pow_scalar", lambda T, a: a ** 3, unary_samples()),
    OpInfo("pow_tensor", lambda T, a, b: T.pow(a, b), binary_samples(low=0.5, high=2.0, scalar=False)),
    OpInfo("rpow", lambda T, a: 2.0 ** a, unary_samples()),
    OpInfo("where", lambda T, c, a, b: T.where(c > 0, a, b),
           lambda rng, dt: [Sample(arr(rng, (3, 4), dt), arr(rng, (3, 4), dt), arr(rng, (4,), dt))]),
]
