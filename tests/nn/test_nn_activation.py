"""Activation modules (nn/modules/activation.py), differential against torch: constructor arguments,
attributes, repr, state_dict, parameters, forward values, gradients (input and parameters), in-place
behaviour, train/eval (RReLU), warnings and errors."""
import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)


def A(t):
    return t.detach().numpy()


def x_std(rng, dt=np.float32):
    return rng.uniform(-4, 4, (3, 4, 5)).astype(dt)


def x_even(rng, dt=np.float32):
    return rng.uniform(-4, 4, (3, 4, 6)).astype(dt)


def x_img(rng, dt=np.float32):
    return rng.uniform(-3, 3, (2, 3, 4, 4)).astype(dt)


# (class name, args, kwargs, input maker, expected repr written out as PyTorch prints it)
MODULES = [
    ("ReLU", (), {}, x_std, "ReLU()"),
    ("ReLU", (), {"inplace": True}, x_std, "ReLU(inplace=True)"),
    ("ReLU6", (), {}, x_std, "ReLU6()"),
    ("ReLU6", (True,), {}, x_std, "ReLU6(inplace=True)"),
    ("LeakyReLU", (), {}, x_std, "LeakyReLU(negative_slope=0.01)"),
    ("LeakyReLU", (0.2, True), {}, x_std, "LeakyReLU(negative_slope=0.2, inplace=True)"),
    ("PReLU", (), {}, x_std, "PReLU(num_parameters=1)"),
    ("PReLU", (4,), {"init": 0.1}, x_std, "PReLU(num_parameters=4)"),
    ("PReLU", (3,), {}, x_img, "PReLU(num_parameters=3)"),
    ("ELU", (), {}, x_std, "ELU(alpha=1.0)"),
    ("ELU", (0.5,), {"inplace": True}, x_std, "ELU(alpha=0.5, inplace=True)"),
    ("SELU", (), {}, x_std, "SELU()"),
    ("SELU", (True,), {}, x_std, "SELU(inplace=True)"),
    ("CELU", (), {}, x_std, "CELU(alpha=1.0)"),
    ("CELU", (2.0, True), {}, x_std, "CELU(alpha=2.0, inplace=True)"),
    ("GELU", (), {}, x_std, "GELU(approximate='none')"),
    ("GELU", ("tanh",), {}, x_std, "GELU(approximate='tanh')"),
    ("SiLU", (), {}, x_std, "SiLU()"),
    ("SiLU", (True,), {}, x_std, "SiLU(inplace=True)"),
    ("Mish", (), {}, x_std, "Mish()"),
    ("Mish", (), {"inplace": True}, x_std, "Mish(inplace=True)"),
    ("Sigmoid", (), {}, x_std, "Sigmoid()"),
    ("Tanh", (), {}, x_std, "Tanh()"),
    ("Hardtanh", (), {}, x_std, "Hardtanh(min_val=-1.0, max_val=1.0)"),
    ("Hardtanh", (-2, 3, True), {}, x_std, "Hardtanh(min_val=-2, max_val=3, inplace=True)"),
    ("Hardsigmoid", (), {}, x_std, "Hardsigmoid()"),
    ("Hardsigmoid", (True,), {}, x_std, "Hardsigmoid()"),
    ("Hardswish", (), {}, x_std, "Hardswish()"),
    ("Softplus", (), {}, x_std, "Softplus(beta=1.0, threshold=20.0)"),
    ("Softplus", (2, 3), {}, x_std, "Softplus(beta=2, threshold=3)"),
    ("Softsign", (), {}, x_std, "Softsign()"),
    ("Softmax", (1,), {}, x_std, "Softmax(dim=1)"),
    ("Softmax", (), {"dim": -1}, x_std, "Softmax(dim=-1)"),
    ("LogSoftmax", (0,), {}, x_std, "LogSoftmax(dim=0)"),
    ("Softmin", (2,), {}, x_std, "Softmin(dim=2)"),
    ("Softmax2d", (), {}, x_img, "Softmax2d()"),
    ("Softmax2d", (), {}, x_std, "Softmax2d()"),
    ("GLU", (), {}, x_even, "GLU(dim=-1)"),
    ("GLU", (1,), {}, x_even, "GLU(dim=1)"),
    ("LogSigmoid", (), {}, x_std, "LogSigmoid()"),
    ("Tanhshrink", (), {}, x_std, "Tanhshrink()"),
    ("Softshrink", (), {}, x_std, "Softshrink(0.5)"),
    ("Softshrink", (1.5,), {}, x_std, "Softshrink(1.5)"),
    ("Hardshrink", (), {}, x_std, "Hardshrink(0.5)"),
    ("Hardshrink", (), {"lambd": 2}, x_std, "Hardshrink(2)"),
    ("Threshold", (0.1, 20.0), {}, x_std, "Threshold(threshold=0.1, value=20.0)"),
    ("Threshold", (0.5, -1.0, True), {}, x_std, "Threshold(threshold=0.5, value=-1.0, inplace=True)"),
    ("RReLU", (), {}, x_std, "RReLU(lower=0.125, upper=0.3333333333333333)"),
    ("RReLU", (0.1, 0.3, True), {}, x_std, "RReLU(lower=0.1, upper=0.3, inplace=True)"),
]

INPLACE = {i for i, m in enumerate(MODULES) if m[2].get("inplace") or (m[1] and m[1][-1] is True)}


def _ids():
    return [f"{m[0]}-{i}" for i, m in enumerate(MODULES)]


def _make(T, i, seed=0):
    name, args, kw, _, _ = MODULES[i]
    T.manual_seed(seed)
    return getattr(T.nn, name)(*args, **kw)


def _attrs(m):
    return {k: v for k, v in vars(m).items() if not k.startswith("_")}


@pytest.mark.parametrize("i", range(len(MODULES)), ids=_ids())
def test_module_matches_torch(i):
    name, args, kw, make_x, want_repr = MODULES[i]
    tm, gm = _make(torch, i), _make(glassgrad, i)
    # construction: repr (as PyTorch prints it), public attributes, parameters and state_dict
    assert repr(tm) == want_repr
    assert repr(gm) == repr(tm)
    assert _attrs(gm) == _attrs(tm)
    assert list(gm.state_dict().keys()) == list(tm.state_dict().keys())
    for (tn, tp), (gn, gp) in zip(tm.named_parameters(), gm.named_parameters()):
        assert gn == tn
        assert isinstance(gp, glassgrad.nn.Parameter)
        np.testing.assert_array_equal(A(gp), A(tp))
        assert gp.dtype.__repr__() == repr(tp.dtype)
    # forward and backward, in train and eval mode
    rng = np.random.default_rng(i)
    x0 = make_x(rng)
    ct = None
    for mode in ("train", "eval"):
        outs = []
        for T, m in ((torch, tm), (glassgrad, gm)):
            getattr(m, mode)()
            T.manual_seed(7)
            leaf = T.tensor(x0, requires_grad=True)
            x = leaf * 1
            y = m(x)
            if i in INPLACE:
                assert y is x
            if ct is None:
                ct = rng.standard_normal(tuple(y.shape)).astype(np.float32)
            c = T.tensor(ct)
            params = list(m.parameters())
            grads = T.autograd.grad(y, [leaf] + params, c)
            outs.append((A(y), y.grad_fn.name(), [A(g) for g in grads]))
        (ty, tname, tg), (gy, gname, gg) = outs
        np.testing.assert_allclose(gy, ty, rtol=1.3e-6, atol=1e-5, err_msg=f"{mode} forward")
        assert gname == tname
        for a, b in zip(gg, tg):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=f"{mode} gradient")


@pytest.mark.parametrize("i", range(len(MODULES)), ids=_ids())
def test_module_no_grad_and_float64(i):
    """Without autograd, in float64 (PReLU converted with .double()), values still match."""
    name, _, _, make_x, _ = MODULES[i]
    x0 = make_x(np.random.default_rng(100 + i), np.float64)
    outs = []
    for T in LIBS:
        m = _make(T, i).double().eval()
        with T.no_grad():
            x = T.tensor(x0)
            y = m(x)
        assert not y.requires_grad
        outs.append(A(y))
        assert all(p.dtype == T.float64 for p in m.parameters())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12, atol=1e-12)


def test_rrelu_train_draws_torch_noise_and_eval_is_deterministic():
    x0 = np.random.default_rng(0).uniform(-2, 2, (5, 6)).astype(np.float32)
    res = {}
    for T in LIBS:
        m = T.nn.RReLU(0.1, 0.4)
        T.manual_seed(11)
        y1 = m(T.tensor(x0))
        y2 = m(T.tensor(x0))         # fresh noise on a second call
        after = T.rand(2)            # the generator advanced by the same amount
        m.eval()
        y3 = m(T.tensor(x0))
        res[T.__name__] = [A(y1), A(y2), A(after), A(y3)]
    t, g = res["torch"], res["glassgrad"]
    for a, b in zip(g, t):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(t[0], t[1])
    np.testing.assert_allclose(t[3], np.where(x0 >= 0, x0, x0 * 0.25), rtol=1e-6)


def test_prelu_parameters_dtype_and_state_dict_roundtrip():
    for T in LIBS:
        m = T.nn.PReLU(3, init=0.5, dtype=T.float64)
        assert m.weight.dtype == T.float64 and tuple(m.weight.shape) == (3,)
        assert m.weight.requires_grad
    gm, tm = glassgrad.nn.PReLU(3), torch.nn.PReLU(3)
    tm.weight.data.copy_(torch.tensor([0.1, 0.2, 0.3]))
    gm.load_state_dict({"weight": glassgrad.tensor(A(tm.weight))})
    x0 = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(A(gm(glassgrad.tensor(x0))), A(tm(torch.tensor(x0))), rtol=1e-6)
    gm.weight.data.fill_(0.75)
    gm.reset_parameters()
    np.testing.assert_array_equal(A(gm.weight), np.full(3, 0.25, np.float32))


def test_inplace_module_bumps_version_and_keeps_identity():
    for T in LIBS:
        x = T.randn(3, 4)
        v = x._version
        for m in (T.nn.ReLU(True), T.nn.LeakyReLU(0.1, True), T.nn.ELU(inplace=True), T.nn.Hardtanh(inplace=True),
                  T.nn.Threshold(0.0, 0.0, True), T.nn.SiLU(True), T.nn.RReLU(inplace=True)):
            y = m(x)
            assert y is x
            assert x._version > v
            v = x._version


@pytest.mark.parametrize("cls,dims", [("Softmax", (3, 4)), ("LogSoftmax", (2, 3, 4)), ("Softmin", (5,))])
def test_implicit_dim_warning(cls, dims):
    """PyTorch's deprecation text; via F.* it points at the caller's line, via the module into module.py."""
    fn = {"Softmax": "softmax", "LogSoftmax": "log_softmax", "Softmin": "softmin"}[cls]
    x0 = np.random.default_rng(0).standard_normal(dims).astype(np.float32)
    outs = []
    for T in LIBS:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y1 = getattr(T.nn.functional, fn)(T.tensor(x0))
            y2 = getattr(T.nn, cls)()(T.tensor(x0))
        assert len(w) == 2
        for r in w:
            assert r.category is UserWarning
            assert str(r.message) == (f"Implicit dimension choice for {fn} has been deprecated. "
                                      "Change the call to include dim=X as an argument.")
        assert w[0].filename == __file__
        assert w[1].filename.endswith("module.py")
        outs.append((A(y1), A(y2)))
    # torch's float32 softmax / log_softmax round per CPU (vectorised exp, sum order): torch alone moves by up to
    # 1 ulp of log_softmax's ~3 between its AVX2 and AVX-512 kernels (0.2 of the old rtol=1e-6/atol=1e-7).
    # rtol 1e-5 and 1e-6 near zero: a wrong dimension or a missing normalisation moves values by O(0.1).
    for a, b in zip(outs[1], outs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_no_warning_with_explicit_dim():
    for T in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            T.nn.Softmax(dim=0)(T.ones(3))
            T.nn.functional.log_softmax(T.ones(3), 0)


@pytest.mark.parametrize("make,exc,msg", [
    (lambda T: T.nn.Softmax2d()(T.ones(3, 4)), ValueError, "Softmax2d: expected input to be 3D or 4D, got 2D instead"),
    (lambda T: T.nn.Hardtanh(1.0, 1.0), AssertionError, "max_val (1.0) must be greater than min_val (1.0)"),
    (lambda T: T.nn.GELU("exact")(T.ones(2)), RuntimeError, "approximate argument must be either none or tanh."),
    (lambda T: T.nn.PReLU(3)(T.ones(2, 4)), RuntimeError, "Found parameter numbers = 3 and channel size = 4."),
    (lambda T: T.nn.GLU()(T.ones(2, 3)), RuntimeError, "Halving dimension must be even, but dimension 1 is size 3"),
    (lambda T: T.nn.ReLU(False, 1), TypeError, "takes from 1 to 2 positional arguments but 3 were given"),
    (lambda T: T.nn.Sigmoid(3), TypeError, "Sigmoid.__init__() takes 1 positional argument but 2 were given"),
    (lambda T: T.nn.Tanh(foo=1), TypeError, "Tanh.__init__() got an unexpected keyword argument 'foo'"),
    (lambda T: T.nn.Threshold(0.1), TypeError, "missing 1 required positional argument: 'value'"),
])
def test_module_errors_match_torch(make, exc, msg):
    for T in LIBS:
        with pytest.raises(exc) as e:
            make(T)
        assert msg in str(e.value), f"{T.__name__}: {e.value}"


def test_hardtanh_deprecated_keywords():
    for T in LIBS:
        with pytest.warns(FutureWarning, match="keyword argument `min_value` is deprecated and renamed to `min_val`"):
            m = T.nn.Hardtanh(min_value=-2.0)
        with pytest.warns(FutureWarning, match="`max_value` is deprecated"):
            m2 = T.nn.Hardtanh(max_value=3.0)
        assert (m.min_val, m.max_val, m2.min_val, m2.max_val) == (-2.0, 1.0, -1.0, 3.0)


@pytest.mark.parametrize("cls,args,want", [
    ("CosineSimilarity", (), "CosineSimilarity()"),
    ("CosineSimilarity", (0, 1e-6), "CosineSimilarity()"),
    ("PairwiseDistance", (), "PairwiseDistance()"),
    ("PairwiseDistance", (1.0, 1e-3, True), "PairwiseDistance()"),
])
def test_distance_modules(cls, args, want):
    rng = np.random.default_rng(5)
    a0, b0 = rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((4, 6)).astype(np.float32)
    res = []
    for T in LIBS:
        m = getattr(T.nn, cls)(*args)
        assert repr(m) == want
        a, b = T.tensor(a0, requires_grad=True), T.tensor(b0, requires_grad=True)
        y = m(a, b)
        ga, gb = T.autograd.grad(y.sum(), [a, b])
        res.append((_attrs(m), A(y), y.grad_fn.name(), A(ga), A(gb)))
    (ta, ty, tn, tga, tgb), (ga_, gy, gn, gga, ggb) = res
    assert ga_ == ta
    assert gn == tn
    for a, b in ((gy, ty), (gga, tga), (ggb, tgb)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_modules_deepcopy_pickle_and_setstate():
    for T in LIBS:
        m = T.nn.Sequential(T.nn.PReLU(2), T.nn.Softmax(dim=1))
        m2 = copy.deepcopy(m)
        assert repr(m2) == repr(m)
        assert m2[0].weight is not m[0].weight
        m3 = pickle.loads(pickle.dumps(m))
        assert repr(m3) == repr(m)
        s = T.nn.Softmax(0)
        state = dict(s.__dict__)
        del state["dim"]
        s2 = T.nn.Softmax.__new__(T.nn.Softmax)
        s2.__setstate__(state)
        assert s2.dim is None


@pytest.mark.parametrize("call,msg", [
    (lambda F, x: F.leaky_relu(x, -0.1, inplace=True), "In-place leakyReLu backward calculation is triggered with a "
                                                        "negative slope which is not supported."),
    (lambda F, x: F.leaky_relu_(x, -2.0), "please call out-of-place version instead. File an issue at "
                                          "https://github.com/pytorch/pytorch if you do require supporting in-place "
                                          "leakRelu backward calculation with negative slope"),
    (lambda F, x: F.elu(x, -0.5, inplace=True), "In-place elu backward calculation is triggered with a negative slope "
                                                "which is not supported. This is caused by calling in-place forward "
                                                "function with a negative slope, please call out-of-place version "
                                                "instead."),
    (lambda F, x: F.celu_(x, -1.0), "In-place elu backward calculation is triggered with a negative slope"),
    (lambda F, x: F.rrelu_(x, -0.5, -0.1), "In-place leakyReLu backward calculation"),
])
def test_inplace_negative_slope_fails_at_backward(call, msg):
    """PyTorch accepts the in-place forward and refuses the backward (the result cannot be inverted)."""
    for T in LIBS:
        x = T.randn(5, requires_grad=True)
        y = call(T.nn.functional, x * 1)
        assert y.requires_grad
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        assert msg in str(e.value), f"{T.__name__}: {e.value}"


def test_hardsigmoid_has_no_second_derivative_in_either_library():
    for T in LIBS:
        x = T.randn(6, requires_grad=True)
        g, = T.autograd.grad(T.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        assert g.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::hardsigmoid_backward is not implemented"):
            g.sum().backward()


def test_functional_extras_match_torch():
    """dtype= on integer input, normalize's out=, rrelu's saved noise and the saved scalars of the nodes."""
    x0 = np.array([[-2, 0, 3], [1, 5, -1]])
    f0 = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    res = []
    for T in LIBS:
        F = T.nn.functional
        r = [A(F.softmin(T.tensor(x0), 1, dtype=T.float64)), A(F.log_softmax(T.tensor(x0), 0, dtype=T.float32))]
        out = T.empty(3, 4)
        o = F.normalize(T.tensor(f0), dim=0, out=out)
        assert o is out
        r.append(A(out))
        x = T.tensor(f0, requires_grad=True)
        T.manual_seed(3)
        y = F.rrelu(x, 0.2, 0.6, training=True)
        r.append(A(y.grad_fn._saved_noise))
        assert y.grad_fn._saved_training is True and y.grad_fn._saved_lower == 0.2
        assert F.leaky_relu(x, 0.3).grad_fn._saved_negative_slope == 0.3
        e = F.elu(x, 0.7).grad_fn
        assert (e._saved_alpha, e._saved_scale, e._saved_input_scale) == (0.7, 1, 1)
        s = F.softplus(x, 2, 5).grad_fn
        assert (s._saved_beta, s._saved_threshold) == (2, 5)
        assert F.gelu(x, approximate="tanh").grad_fn._saved_approximate == "tanh"
        r.append(A(F.hardtanh(x, -0.5, 0.5).grad_fn._saved_self))
        res.append(r)
    (g_softmin, g_lsm, g_norm, g_noise, g_saved), (t_softmin, t_lsm, t_norm, t_noise, t_saved) = res
    # the RNG draw and the saved input are exact everywhere: bit for bit
    np.testing.assert_array_equal(g_noise, t_noise)
    np.testing.assert_array_equal(g_saved, t_saved)
    np.testing.assert_allclose(g_softmin, t_softmin, rtol=1e-12, atol=1e-15)      # float64
    # float32 log_softmax (vectorised exp/log) and normalize (a vectorised norm) round per CPU: rtol 1e-5, and
    # 1e-6 near zero (values are O(1); a wrong dim or p gives O(0.1) differences)
    np.testing.assert_allclose(g_lsm, t_lsm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_norm, t_norm, rtol=1e-5, atol=1e-6)
