"""nn.utils.parametrize, parametrizations.weight_norm / spectral_norm and the old hook forms, vs torch."""
import copy
import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)


def A(t):
    return t.detach().numpy()


def _both(fn):
    return [fn(T) for T in LIBS]


def _eq(a, b, tol=0.0):
    assert type(a) is type(b) or (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))), (a, b)
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _eq(x, y, tol)
    elif isinstance(a, dict):
        assert list(a) == list(b), (list(a), list(b))
        for k in a:
            _eq(a[k], b[k], tol)
    elif isinstance(a, np.ndarray):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    else:
        assert a == b, (a, b)


def _sd(m):
    return {k: A(v) for k, v in m.state_dict().items()}


def _symmetric(T):
    class Symmetric(T.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric


def _scale(T):
    class Scale(T.nn.Module):
        def __init__(self, s):
            super().__init__()
            self.s = s

        def forward(self, X):
            return X * self.s
    return Scale


def test_register_and_remove_parametrization():
    def run(T):
        T.manual_seed(0)
        m = T.nn.Linear(4, 4)
        P = T.nn.utils.parametrize
        P.register_parametrization(m, "weight", _symmetric(T)())
        P.register_parametrization(m, "weight", _scale(T)(2.0))
        out = [type(m).__name__, type(m).__bases__[0].__name__, P.is_parametrized(m), P.is_parametrized(m, "weight"),
               P.is_parametrized(m, "bias"), P.type_before_parametrizations(m).__name__, _sd(m),
               [n for n, _ in m.named_parameters()], repr(m), A(m.weight)]
        x = T.randn(3, 4)
        m(x).sum().backward()
        out.append(A(m.parametrizations.weight.original.grad))
        with P.cached():
            out.append(m.weight is m.weight)
        out.append(m.weight is m.weight)
        out.append(_catch(lambda: setattr(m, "weight", T.ones(4, 4)))[0])   # Scale has no right_inverse
        out.append(A(m.parametrizations.weight.original))
        return out
    a, b = _both(run)
    _eq(a, b, 1e-6)


def _catch(f):
    try:
        return f(), None
    except Exception as e:            # noqa: BLE001
        return (type(e).__name__, str(e)), None


def test_parametrization_set_and_remove():
    def run(T):
        T.manual_seed(1)
        m = T.nn.Linear(3, 3)
        P = T.nn.utils.parametrize
        P.register_parametrization(m, "weight", _symmetric(T)())
        m.weight = T.arange(9.0).reshape(3, 3)
        out = [A(m.parametrizations.weight.original), A(m.weight)]
        P.remove_parametrizations(m, "weight")
        out += [type(m).__name__, hasattr(m, "parametrizations"), list(_sd(m)), A(m.weight),
                type(m.weight).__name__]
        P.register_parametrization(m, "bias", _scale(T)(0.5))
        P.remove_parametrizations(m, "bias", leave_parametrized=False)
        out.append(A(m.bias))
        out.append(_catch(lambda: P.remove_parametrizations(m, "bias"))[0][0])
        out.append(_catch(lambda: P.register_parametrization(m, "nope", _scale(T)(1.0)))[0][0])
        return out
    a, b = _both(run)
    _eq(a, b, 1e-6)


def test_parametrization_errors():
    def run(T):
        m = T.nn.Linear(3, 2)
        P = T.nn.utils.parametrize

        class Shape(T.nn.Module):
            def forward(self, X):
                return X[:1]

        class Dtype(T.nn.Module):
            def forward(self, X):
                return X.double()
        r = [_catch(lambda: P.register_parametrization(m, "weight", Shape()))[0],
             _catch(lambda: P.register_parametrization(m, "weight", Dtype()))[0]]
        P.register_parametrization(m, "weight", Shape(), unsafe=True)
        r.append(tuple(m.weight.shape))
        return r
    a, b = _both(run)
    _eq(a, b)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim):
    def run(T):
        T.manual_seed(2)
        m = T.nn.Conv2d(3, 4, 3)
        T.nn.utils.parametrizations.weight_norm(m, dim=dim)
        x = T.randn(2, 3, 5, 5)
        y = m(x)
        y.square().sum().backward()
        sd = _sd(m)
        g = m.parametrizations.weight
        return [A(y), sd, A(g.original0.grad), A(g.original1.grad), repr(m)]
    a, b = _both(run)
    _eq(a, b, 2e-5)


def test_weight_norm_loads_old_state_dict():
    def run(T):
        T.manual_seed(3)
        old = T.nn.Linear(3, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            T.nn.utils.weight_norm(old)
        sd = old.state_dict()
        new = T.nn.utils.parametrizations.weight_norm(T.nn.Linear(3, 2))
        new.load_state_dict(sd)
        return [list(sd), _sd(new), A(new.weight)]
    a, b = _both(run)
    _eq(a, b, 1e-6)


@pytest.mark.parametrize("make", ["linear", "conv_t"])
def test_spectral_norm_parametrization(make):
    def run(T):
        T.manual_seed(4)
        m = T.nn.Linear(5, 4) if make == "linear" else T.nn.ConvTranspose2d(3, 2, 3)
        T.nn.utils.parametrizations.spectral_norm(m, n_power_iterations=2)
        x = T.randn(2, 5) if make == "linear" else T.randn(1, 3, 4, 4)
        out = [_sd(m)]
        for _ in range(3):
            y = m(x)
            y.sum().backward()
            out.append(A(y))
        out.append(A(m.parametrizations.weight.original.grad))
        m.eval()
        out += [A(m(x)), _sd(m), A(T.rand(2))]
        return out
    a, b = _both(run)
    _eq(a, b, 2e-5)


def test_spectral_norm_errors():
    def run(T):
        sn = T.nn.utils.parametrizations.spectral_norm
        return [_catch(lambda: sn(T.nn.Linear(2, 2), name="nope"))[0],
                _catch(lambda: sn(T.nn.Linear(2, 2), n_power_iterations=0))[0],
                _catch(lambda: sn(T.nn.Linear(2, 2), dim=3))[0]]
    a, b = _both(run)
    _eq(a, b)


def test_old_weight_norm():
    def run(T):
        T.manual_seed(5)
        m = T.nn.Linear(4, 3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            T.nn.utils.weight_norm(m, dim=1)
        out = [[(c.category.__name__, str(c.message)) for c in w], _sd(m), [n for n, _ in m.named_parameters()]]
        x = T.randn(2, 4)
        m(x).sum().backward()
        out += [A(m.weight_g.grad), A(m.weight_v.grad)]
        out.append(_catch(lambda: T.nn.utils.weight_norm(m, dim=1))[0][0])
        T.nn.utils.remove_weight_norm(m)
        out += [_sd(m), type(m.weight).__name__, _catch(lambda: T.nn.utils.remove_weight_norm(m))[0]]
        return out
    a, b = _both(run)
    _eq(a, b, 1e-6)


def test_old_spectral_norm():
    def run(T):
        T.manual_seed(6)
        m = T.nn.Conv1d(2, 3, 2)
        T.nn.utils.spectral_norm(m, n_power_iterations=3)
        x = T.randn(2, 2, 5)
        out = [_sd(m), list(m.state_dict()._metadata[""].get("spectral_norm", {}).items())]
        for _ in range(2):
            y = m(x)
            y.sum().backward()
            out.append(A(y))
        out.append(A(m.weight_orig.grad))
        m2 = T.nn.utils.spectral_norm(T.nn.Conv1d(2, 3, 2))
        m2.load_state_dict(m.state_dict())
        out.append(_sd(m2))
        lin = T.nn.utils.spectral_norm(T.nn.Linear(3, 5))        # W^T W of full rank
        lin(T.randn(2, 3))
        v0 = {k: v for k, v in lin.state_dict().items() if k != "weight_v"}      # a version-0 checkpoint
        v0["weight"] = lin.weight.detach()
        m3 = T.nn.utils.spectral_norm(T.nn.Linear(3, 5))
        m3.load_state_dict(v0)
        out.append(_sd(m3))
        T.nn.utils.remove_spectral_norm(m)
        out += [_sd(m), _catch(lambda: T.nn.utils.remove_spectral_norm(m))[0]]
        return out
    a, b = _both(run)
    _eq(a, b, 2e-5)


def test_fuse_conv_and_linear_bn():
    def run(T):
        T.manual_seed(7)
        conv, bn = T.nn.Conv2d(3, 4, 3), T.nn.BatchNorm2d(4)
        bn(conv(T.randn(4, 3, 6, 6)))
        convt, bnt = T.nn.ConvTranspose2d(3, 4, 2, bias=False), T.nn.BatchNorm2d(4, affine=False)
        bnt(convt(T.randn(2, 3, 4, 4)))
        lin, bn1 = T.nn.Linear(5, 4), T.nn.BatchNorm1d(4)
        bn1(lin(T.randn(8, 5)))
        for m in (conv, bn, convt, bnt, lin, bn1):
            m.eval()
        fc = T.nn.utils.fuse_conv_bn_eval(conv, bn)
        ft = T.nn.utils.fuse_conv_bn_eval(convt, bnt, transpose=True)
        fl = T.nn.utils.fuse_linear_bn_eval(lin, bn1)
        x, xt, xl = T.randn(1, 3, 6, 6), T.randn(1, 3, 4, 4), T.randn(3, 5)
        lin.train()
        return [A(fc(x)), A(bn(conv(x))), A(ft(xt)), A(fl(xl)), _sd(fc), type(fc.weight).__name__,
                _catch(lambda: T.nn.utils.fuse_linear_bn_eval(lin, bn1))[0]]
    a, b = _both(run)
    _eq(a, b, 2e-5)


def test_functional_call():
    def run(T):
        T.manual_seed(8)
        m = T.nn.Sequential(T.nn.Linear(3, 3), T.nn.BatchNorm1d(3))
        m[1].weight = m[0].bias        # tied
        x = T.randn(4, 3)
        w = T.ones(3, 3, requires_grad=True)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            y = T.nn.utils.stateless.functional_call(m, {"0.weight": w, "0.bias": T.zeros(3)}, (x,))
        y.sum().backward()
        strict = _catch(lambda: T.nn.utils.stateless._functional_call(m, {"0.weight": w, "x": w}, x, strict=True))
        sc = T.nn.utils.stateless._functional_call
        extra = sc(m, {"0.extra": T.ones(1), "1.running_mean": T.ones(3)}, (x,))   # new attribute: set, then removed
        pm = T.nn.utils.parametrizations.weight_norm(T.nn.Linear(3, 2))
        yp = sc(pm, {"parametrizations.weight.original0": T.ones(2, 1)}, (x,))
        errs = [_catch(lambda: sc(m, {"0.weight": 3}, (x,)))[0], _catch(lambda: sc(m, {"9.weight": w}, (x,)))[0]]
        return [A(y), A(w.grad), m[0].weight.grad is None, _sd(m), rec[0].category.__name__, strict[0], A(extra),
                hasattr(m[0], "extra"), A(yp), _sd(pm), errs]
    a, b = _both(run)
    _eq(a, b, 1e-6)


def test_skip_init_to_empty_and_deprecated_inits():
    def run(T):
        T.manual_seed(9)
        m = T.nn.utils.skip_init(T.nn.Linear, 4, 3)
        out = [list(_sd(m)), tuple(m.weight.shape), type(m.weight).__name__, m.weight.requires_grad, A(T.rand(3))]
        n = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.BatchNorm1d(2))
        w = n[0].weight
        n.to_empty(device="cpu")
        out += [n[0].weight is w, tuple(n[1].running_var.shape), n[1].running_var.dtype == T.float32]
        out.append(_catch(lambda: T.nn.utils.skip_init(int))[0][0])
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            e = T.nn.init.eye(T.empty(2, 3))
            d = T.nn.init.dirac(T.empty(2, 2, 3))
        out += [A(e), A(d), [str(r.message) for r in rec]]
        return out
    a, b = _both(run)
    _eq(a, b)


def test_deepcopy_and_pickle_of_parametrized():
    def run(T):
        T.manual_seed(10)
        m = T.nn.utils.parametrizations.weight_norm(T.nn.Linear(2, 2))
        c = copy.deepcopy(m)
        import pickle
        return [type(c).__name__, _sd(c), _catch(lambda: pickle.dumps(m))[0]]
    a, b = _both(run)
    _eq(a, b)


ORTH = [(None, (4, 4), True), (None, (5, 3), True), ("cayley", (3, 3), True), (None, (3, 5), True),
        ("householder", (5, 3), False), ("householder", (3, 4), True), ("matrix_exp", (2, 4), True)]


@pytest.mark.parametrize("omap,shape,triv", ORTH, ids=[str(i) for i in range(len(ORTH))])
def test_orthogonal_parametrization(omap, shape, triv):
    def run(T):
        T.manual_seed(14)
        m = T.nn.Linear(shape[1], shape[0]).double()
        T.nn.utils.parametrizations.orthogonal(m, orthogonal_map=omap, use_trivialization=triv)
        w = m.weight
        (w * T.arange(float(w.numel()), dtype=T.float64).reshape(w.shape)).sum().backward()
        out = [A(w), A(m.parametrizations.weight.original.grad), _sd(m), A(T.rand(2)),
               A(w.mT @ w if shape[0] >= shape[1] else w @ w.mT)]
        q = T.linalg.qr(T.randn(max(shape), max(shape), dtype=T.float64))[0][:shape[0], :shape[1]]
        r = _catch(lambda: setattr(m, "weight", q))
        out += [r[0] if r[0] is not None else A(m.weight), _sd(m), A(T.rand(2))]
        return out
    a, b = _both(run)
    _eq(a, b, 1e-9)


def test_orthogonal_errors():
    def run(T):
        orth = T.nn.utils.parametrizations.orthogonal
        m = T.nn.Linear(3, 3)
        orth(m)
        return [_catch(lambda: orth(T.nn.Linear(3, 3), orthogonal_map="qr"))[0],
                _catch(lambda: orth(T.nn.Linear(3, 3), name="nope"))[0],
                _catch(lambda: orth(T.nn.Linear(3, 3), name="bias"))[0],
                _catch(lambda: setattr(m, "weight", T.ones(2, 3)))[0],
                _catch(lambda: setattr(orth(T.nn.Linear(3, 3), use_trivialization=False), "weight", T.eye(3)))[0]]
    a, b = _both(run)
    _eq(a, b)
