"""Op table rows: sparse COO tensors (ops/sparse.py, ops/sparse_ops.py).

The op table hands dense arrays, so each row builds its sparse operand inside the op: ``(a * m).to_sparse()``
with `m` a fixed 0/1 mask (no grad), so that finite differences keep the sparsity pattern.  The gradients
checked are those of the dense operands and, through ToSparseBackward1 / the sparse values, of `a`.  Results
that are sparse are compared through ``to_dense()``.  No second derivatives: glassgrad's sparse nodes refuse
double backward.
"""
import numpy as np

from .core import OpInfo, Sample, ErrorSample, arr, NoGrad

IDX = [[0, 2, 1, 0, 2], [1, 3, 0, 1, 0]]       # (0, 1) twice: an uncoalesced pattern


def _mask(rng, shape):
    m = (rng.uniform(size=shape) < 0.5).astype(np.float64)
    m.flat[0] = 1.0
    return m


def _sp(T, a, m):
    return (a * m).to_sparse()


def _samples(*shapes, lead=(), kwargs=None):
    """Samples (*lead dense operands, a, m, *dense operands) with `a`/`m` of shapes[0]."""
    def gen(rng, dt):
        out = []
        for k, (sa, rest) in enumerate(shapes):
            args = [arr(rng, s, dt) for s in lead]
            args += [arr(rng, sa, dt), NoGrad(_mask(rng, sa).astype(dt))]
            args += [arr(rng, s, dt) for s in rest]
            out.append(Sample(*args, name=f"s{k}", **(kwargs or {})))
        return out
    return gen


def _errors_mm():
    f32, f64 = np.float32, np.float64
    return [ErrorSample(Sample(np.ones((3, 4), f64), NoGrad(np.ones((3, 4), f64)), np.ones((5, 2), f64)),
                        RuntimeError, "addmm: Argument #3 (dense): Expected dim 0 size 4, got 5"),
            ErrorSample(Sample(np.ones((3, 4), f32), NoGrad(np.ones((3, 4), f32)), np.ones((4, 2), f64)),
                        RuntimeError, "expected scalar type Float but found Double")]


def _sparse_pair(rng, dt):
    out = []
    for k, (sa, sb) in enumerate((((3, 4), (4, 2)), ((2, 2), (2, 3)))):
        out.append(Sample(arr(rng, sa, dt), NoGrad(_mask(rng, sa).astype(dt)), arr(rng, sb, dt),
                          NoGrad(_mask(rng, sb).astype(dt)), name=f"s{k}"))
    return out


def _values_samples(rng, dt):
    return [Sample(arr(rng, (5,), dt), name="vector"), Sample(arr(rng, (5, 2), dt), name="hybrid")]


OPS = [
    OpInfo("sparse.mm", lambda T, a, m, x: T.sparse.mm(_sp(T, a, m), x), _samples(((3, 4), ((4, 2),)),
                                                                                  ((1, 1), ((1, 3),))),
           gradgrad=False, errors=_errors_mm),
    OpInfo("sparse.addmm", lambda T, i, a, m, x, **kw: T.sparse.addmm(i, _sp(T, a, m), x, **kw),
           _samples(((3, 4), ((4, 2),)), lead=((3, 2),), kwargs={"beta": 0.5, "alpha": 2.0}), gradgrad=False),
    OpInfo("mm[sparse]", lambda T, a, m, x: T.mm(_sp(T, a, m), x), _samples(((3, 4), ((4, 2),))), gradgrad=False),
    OpInfo("matmul[dense@sparse]", lambda T, x, a, m: x @ _sp(T, a, m), _samples(((3, 4), ()), lead=((2, 3),)),
           gradgrad=False),
    OpInfo("sparse.sum[dim]", lambda T, a, m: T.sparse.sum(_sp(T, a, m), 1).to_dense(), _samples(((3, 4), ())),
           gradgrad=False, check_grad_fn=True),
    OpInfo("sparse.softmax", lambda T, a, m: T.sparse.softmax(_sp(T, a, m), 1).to_dense(),
           _samples(((3, 4), ()), ((2, 5), ())), gradgrad=False),
    OpInfo("sparse.log_softmax", lambda T, a, m: T.sparse.log_softmax(_sp(T, a, m), 0).to_dense(),
           _samples(((3, 4), ())), gradgrad=False),
    OpInfo("Tensor.to_sparse", lambda T, a, m: _sp(T, a, m).to_dense(), _samples(((3, 4), ()), ((2, 3), ())),
           gradgrad=False),
    OpInfo("sparse_coo_tensor", lambda T, v: T.sparse_coo_tensor(T.tensor(IDX), v, (3, 4) + tuple(v.shape[1:]),
                                                           check_invariants=False)
           .to_dense(), _values_samples, gradgrad=False),
    OpInfo("sparse.mm[sparse@sparse]", lambda T, a, m, b, m2: T.sparse.mm(_sp(T, a, m), _sp(T, b, m2)).to_dense(),
           _sparse_pair, gradgrad=False),
    OpInfo("Tensor.sparse_mask", lambda T, a, m: a.sparse_mask(m.to_sparse()).to_dense(),
           _samples(((3, 4), ())), gradgrad=False),
]
