"""torch's out= on the torch.* functions: the result is written into out (cast to its dtype where torch's casting
allows, resized with torch's deprecation warning unless empty) and out is returned; a tuple result fills a tuple
of outs, returned as torch's `<name>_out` return type; an argument that requires grad is refused.  (Before,
glassgrad accepted out= and ignored it: out kept its old values.)"""
import warnings

import numpy as np
import pytest
import torch

import glassgrad

A = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)

CALLS = {
    "exp": (lambda T, a: T.exp(a, out=T.empty(0)), 1),
    "add_alpha": (lambda T, a: T.add(a, a, alpha=2, out=T.empty(0)), 1),
    "mul_to_double": (lambda T, a: T.mul(a, 3, out=T.zeros(2, 3, dtype=T.float64)), 1),
    "matmul": (lambda T, a: T.matmul(a, a.t(), out=T.empty(0)), 1),
    "sum_dim": (lambda T, a: T.sum(a, 1, out=T.empty(0)), 1),
    "mean": (lambda T, a: T.mean(a, 0, out=T.empty(0)), 1),
    "clamp": (lambda T, a: T.clamp(a, -1, 2, out=T.empty(0)), 1),
    "where": (lambda T, a: T.where(a > 0, a, T.zeros(()), out=T.empty(0)), 1),
    "cumsum": (lambda T, a: T.cumsum(a, 1, out=T.empty(0)), 1),
    "cat": (lambda T, a: T.cat([a, a], 0, out=T.empty(0)), 1),
    "stack": (lambda T, a: T.stack([a, a], out=T.empty(0)), 1),
    "zeros": (lambda T, a: T.zeros(2, 2, out=T.empty(0)), 1),
    "arange": (lambda T, a: T.arange(5, out=T.empty(0, dtype=T.long)), 1),
    "linspace": (lambda T, a: T.linspace(0, 1, 5, out=T.empty(0)), 1),
    "sort": (lambda T, a: T.sort(a, 1, out=(T.empty(0), T.empty(0, dtype=T.long))), 2),
    "max_dim": (lambda T, a: T.max(a, 1, out=(T.empty(0), T.empty(0, dtype=T.long))), 2),
    "topk": (lambda T, a: T.topk(a, 2, out=(T.empty(0), T.empty(0, dtype=T.long))), 2),
}


class _Spy:
    """The library T, with empty / zeros recorded (the out tensors the calls make)."""

    def __init__(self, T, empty, zeros):
        self._T, self.empty, self.zeros = T, empty, zeros

    def __getattr__(self, name):
        return getattr(self._T, name)


def _vals(r):
    return [(x.tolist(), str(x.dtype)) for x in (r if isinstance(r, tuple) else (r,))]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_out_is_written_and_returned_as_torch(name):
    call, n = CALLS[name]
    got = []
    for T in (torch, glassgrad):
        outs = []
        orig_empty, orig_zeros = T.empty, T.zeros

        def keep(make):
            def f(*a, **k):
                t = make(*a, **k)
                if "out" not in k:
                    outs.append(t)
                return t
            return f
        r = call(_Spy(T, keep(orig_empty), keep(orig_zeros)), T.tensor(A))
        outs = outs[-n:]                       # the tensors made for out= (the last n made)
        assert all(x is o for x, o in zip(r if isinstance(r, tuple) else (r,), outs)), name
        got.append((_vals(tuple(outs) if n > 1 else outs[0]), repr(r).split("(")[0] if isinstance(r, tuple) else
                    "tensor"))
    (tv, tk), (gv, gk) = got
    assert tk == gk and [d for _, d in tv] == [d for _, d in gv]
    for (t, _), (g, _) in zip(tv, gv):          # float32 kernels: within an ulp or so of torch's
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(t, np.float64), rtol=1e-6, atol=0)


def test_out_identity_resize_warning_cast_and_errors_as_torch():
    for T in (torch, glassgrad):
        o = T.zeros(2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = T.exp(T.ones(3), out=o)
        assert r is o and o.shape == (3,) and abs(o[0].item() - 2.7182817) < 1e-6
        assert len(w) == 1 and str(w[0].message).startswith("An output with one or more elements was resized")
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            T.exp(T.ones(3), out=T.zeros(3, dtype=T.long))
        with pytest.raises(RuntimeError, match=r"exp\(\): functions with out=\.\.\. arguments don't support "
                                               "automatic differentiation"):
            T.exp(T.ones(3, requires_grad=True), out=T.zeros(3))
        with pytest.raises(TypeError, match=r"exp\(\): argument 'out' must be Tensor, not list"):
            T.exp(T.ones(3), out=[1])
        v, i = T.empty(0), T.empty(0, dtype=T.long)
        res = T.max(T.tensor([[1.0, 3.0], [2.0, 0.0]]), 1, out=(v, i))
        assert res.values is v and res.indices is i and type(res).__name__ == "max_out"


def test_out_in_linalg_special_fft_as_torch():
    got = []
    for T in (torch, glassgrad):
        A = T.tensor([[2.0, 1.0], [1.0, 3.0]])
        o1, o2, o3 = T.empty(0), T.empty(0), T.empty(0, dtype=T.complex64)
        L, Q = T.empty(0), T.empty(0)
        rs = (T.linalg.inv(A, out=o1), T.special.expit(A, out=o2), T.fft.fft(A, out=o3), T.linalg.eigh(A, out=(L, Q)))
        assert rs[0] is o1 and rs[1] is o2 and rs[2] is o3 and rs[3].eigenvalues is L and rs[3].eigenvectors is Q
        got.append([o1.tolist(), o2.tolist(), o3.real.tolist(), L.tolist(), type(rs[3]).__name__])
    t, g = got
    assert t[4] == g[4] == "linalg_eigh_out"
    for a, b in zip(t[:4], g[:4]):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6, atol=1e-6)
