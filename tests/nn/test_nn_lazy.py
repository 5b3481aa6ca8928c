"""The Lazy modules vs torch: repr before and after, materialisation at the first call with torch's init draws,
the class they become, state dicts loaded before the first call, uninitialised parameters, errors."""
import copy
import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)


def A(t):
    return t.detach().numpy()


def _catch(f):
    try:
        f()
        return None
    except Exception as e:            # noqa: BLE001
        return type(e).__name__, str(e).replace("glassgrad", "torch")


def _eq(a, b):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _eq(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b), (list(a), list(b))
        _eq(list(a.values()), list(b.values()))
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(a).max(initial=0))))
    else:
        assert a == b, (a, b)


CASES = [
    ("LazyLinear", (3,), {}, (4, 5)),
    ("LazyLinear", (2,), dict(bias=False), (2, 3, 4)),
    ("LazyConv1d", (4, 3), dict(padding=1), (2, 3, 7)),
    ("LazyConv2d", (6, 2), dict(groups=2, stride=2), (2, 4, 6, 6)),
    ("LazyConv3d", (2, 2), dict(bias=False), (3, 4, 4, 4)),
    ("LazyConvTranspose1d", (3, 2), dict(output_padding=1, stride=2), (1, 2, 5)),
    ("LazyConvTranspose2d", (4, 3), dict(groups=2), (2, 2, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 2, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (), dict(momentum=None), (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), dict(affine=False), (2, 2, 3, 3, 3)),
    ("LazyInstanceNorm1d", (), dict(affine=True, track_running_stats=True), (2, 3, 6)),
    ("LazyInstanceNorm2d", (), {}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), dict(affine=True), (1, 2, 3, 3, 3)),
]


@pytest.mark.parametrize("name,args,kw,shape", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_lazy_module_materialises_as_torch(name, args, kw, shape):
    def run(T):
        T.manual_seed(21)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = getattr(T.nn, name)(*args, **kw)
        out = [repr(m), m.has_uninitialized_params(), list(m.state_dict()),
               [type(p).__name__ for p in m.parameters()]]
        x = T.randn(*shape, requires_grad=True)
        y = m(x)
        out += [repr(m), type(m).__name__, A(y), {k: A(v) for k, v in m.state_dict().items()},
                [type(p).__name__ for p in m.parameters()], hasattr(m, "_initialize_hook"), A(T.rand(2))]
        (y ** 3).sum().backward()
        out.append([A(p.grad) for p in m.parameters()] + [A(x.grad)])
        return out
    a, b = (run(T) for T in LIBS)
    _eq(a, b)


def test_lazy_load_state_dict_before_first_call_and_errors():
    def run(T):
        T.manual_seed(22)
        src = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4))
        dst = T.nn.Sequential(T.nn.LazyLinear(4), T.nn.LazyBatchNorm1d())
        dst.load_state_dict(src.state_dict())
        out = [repr(dst), dst[0].has_uninitialized_params(), tuple(dst[0].weight.shape)]
        y = dst(T.randn(5, 3))
        out += [repr(dst), A(y), A(T.rand(2))]
        p = T.nn.UninitializedParameter()
        out += [repr(p), _catch(lambda: p.shape), isinstance(p, T.nn.Parameter), T.nn.parameter.is_lazy(p)]
        p.materialize((2, 3))
        out += [type(p).__name__, tuple(p.shape), p.requires_grad, p.dtype == T.float32, T.nn.parameter.is_lazy(p)]
        b = T.nn.UninitializedBuffer(dtype=T.float64)
        b.materialize(4)
        out += [type(b).__name__, tuple(b.shape), b.dtype == T.float64]
        d = T.nn.LazyLinear(3).double()                       # the dtype before the first call is kept
        out += [A(d(T.randn(2, 4, dtype=T.float64))), repr(T.nn.LazyLinear(3).load_state_dict(
            T.nn.LazyLinear(3).state_dict())), type(copy.deepcopy(T.nn.LazyLinear(2).double()).weight).__name__]
        c = T.nn.LazyConv2d(4, 3, groups=2)
        out.append(_catch(lambda: c(T.randn(1, 3, 5, 5))))
        out.append(_catch(lambda: T.nn.LazyConv2d(4, 3)(T.randn(3, 5))))
        return out
    a, b = (run(T) for T in LIBS)
    _eq(a, b)
