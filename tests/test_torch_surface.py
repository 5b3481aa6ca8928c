"""torch.* names outside the op table: the statistics outputs of the native_* norms, native_dropout's mask,
the batch-norm primitives, the torch.* forms of Tensor methods -- each against torch (or, for the primitives
torch has on CUDA only, against their float64 formulas and against batch_norm itself)."""
import numpy as np
import pytest
import torch

import glassgrad as gg


def _both(a):
    return torch.from_numpy(a.copy()), gg.from_numpy(a.copy())


def _close(g, t, tol=1e-5):
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def test_native_norm_statistics_match_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    tx, gx = _both(x)
    t_out = list(torch.native_batch_norm(tx, None, None, None, None, True, 0.1, 1e-5)) + \
        list(torch.native_layer_norm(tx, [5], None, None, 1e-5)) + \
        list(torch.native_group_norm(tx, None, None, 4, 6, 5, 3, 1e-5)) + \
        list(torch.native_batch_norm(tx, None, None, torch.zeros(6), torch.ones(6), False, 0.1, 1e-5))
    g_out = list(gg.native_batch_norm(gx, None, None, None, None, True, 0.1, 1e-5)) + \
        list(gg.native_layer_norm(gx, [5], None, None, 1e-5)) + \
        list(gg.native_group_norm(gx, None, None, 4, 6, 5, 3, 1e-5)) + \
        list(gg.native_batch_norm(gx, None, None, gg.zeros(6), gg.ones(6), False, 0.1, 1e-5))
    for g, t in zip(g_out, t_out):
        assert tuple(g.shape) == tuple(t.shape) and str(g.dtype) == str(t.dtype)
        _close(g, t)


def test_native_dropout_mask_matches_torch():
    for p, shape in ((0.5, (4, 5)), (0.2, (3, 7)), (1.0, (2, 3)), (0.0, (2, 3))):
        torch.manual_seed(3)
        gg.manual_seed(3)
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        tx, gx = _both(x)
        to, tm = torch.native_dropout(tx.requires_grad_(), p, True)
        go, gm = gg.native_dropout(gx.requires_grad_(), p, True)
        assert gm.dtype == gg.bool and np.array_equal(gm.numpy(), tm.numpy())
        np.testing.assert_array_equal(go.detach().numpy(), to.detach().numpy())
        assert type(go.grad_fn).__name__ == type(to.grad_fn).__name__ == "NativeDropoutBackward0"
        c = np.arange(x.size, dtype=np.float32).reshape(shape)
        tg, = torch.autograd.grad(to, tx, torch.from_numpy(c))
        gg_, = gg.autograd.grad(go, gx, gg.from_numpy(c))
        np.testing.assert_array_equal(gg_.numpy(), tg.numpy())


def test_native_channel_shuffle_has_no_derivative_as_torch():
    for T in (torch, gg):
        x = T.ones(1, 4, 2, requires_grad=True)
        y = T.native_channel_shuffle(x, 2)
        assert type(y.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::native_channel_shuffle is not implemented"):
            y.sum().backward()


def test_batch_norm_update_stats_matches_torch():
    x = np.random.default_rng(2).standard_normal((4, 3, 5)).astype(np.float32)
    tx, gx = _both(x)
    trm, grm = torch.zeros(3), gg.zeros(3)
    trv, grv = torch.ones(3), gg.ones(3)
    t = torch.batch_norm_update_stats(tx, trm, trv, 0.1)
    g = gg.batch_norm_update_stats(gx, grm, grv, 0.1)
    for a, b in zip(g + (grm, grv), t + (trm, trv)):
        _close(a, b)


def test_batch_norm_primitives_compose_to_batch_norm():
    """stats on two shards -> gather -> elemt equals batch_norm of the whole; backward_reduce ->
    backward_elemt equals batch_norm's input gradient (the SyncBatchNorm recipe, torch's CUDA formulas)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 3, 4))
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    dy = rng.standard_normal(x.shape)
    eps = 1e-5
    xs = [gg.from_numpy(x[:2]), gg.from_numpy(x[2:])]
    stats = [gg.batch_norm_stats(s, eps) for s in xs]
    mean = gg.stack([m for m, _ in stats])
    invstd = gg.stack([i for _, i in stats])
    counts = gg.tensor([8.0, 16.0], dtype=gg.float64)
    rm, rv = gg.zeros(3, dtype=gg.float64), gg.ones(3, dtype=gg.float64)
    gm, gi = gg.batch_norm_gather_stats_with_counts(xs[0], mean, invstd, rm, rv, 0.1, eps, counts)
    tx = torch.from_numpy(x).requires_grad_()
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    ref = torch.nn.functional.batch_norm(tx, trm, trv, torch.from_numpy(w), torch.from_numpy(b), True, 0.1, eps)
    out = gg.cat([gg.batch_norm_elemt(s, gg.from_numpy(w), gg.from_numpy(b), gm, gi, eps) for s in xs])
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(rm.numpy(), trm.numpy(), rtol=1e-10)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), rtol=1e-10)
    ref_dx, = torch.autograd.grad(ref, tx, torch.from_numpy(dy))
    parts = [gg.batch_norm_backward_reduce(gg.from_numpy(dy[s]), xs[i], gm, gi, gg.from_numpy(w), True, True, True)
             for i, s in enumerate((slice(0, 2), slice(2, 6)))]
    sum_dy = parts[0][0] + parts[1][0]
    sum_dy_xmu = parts[0][1] + parts[1][1]
    dx = gg.cat([gg.batch_norm_backward_elemt(gg.from_numpy(dy[s]), xs[i], gm, gi, gg.from_numpy(w), sum_dy,
                                              sum_dy_xmu, gg.tensor([8, 16], dtype=gg.int32))
                 for i, s in enumerate((slice(0, 2), slice(2, 6)))])
    np.testing.assert_allclose(dx.numpy(), ref_dx.numpy(), rtol=1e-9, atol=1e-10)
    # same count everywhere: batch_norm_gather_stats
    m2, i2 = gg.batch_norm_gather_stats(xs[0], mean[:1], invstd[:1], None, None, 0.1, eps, 8)
    np.testing.assert_allclose(m2.numpy(), mean[0].numpy())
    np.testing.assert_allclose(i2.numpy(), invstd[0].numpy())
    assert gg.batch_norm_backward_reduce(gg.from_numpy(dy[:2]), xs[0], gm, gi, None, False, False, False) == \
        (None, None, None, None)


def test_torch_forms_of_tensor_methods():
    for T in (torch, gg):
        x = T.ones(2, 3, requires_grad=True)
        d = T.detach(x)
        assert not d.requires_grad and d._version == x._version
        y = x * 2
        T.detach_(y)
        assert not y.requires_grad and y.grad_fn is None
        z = T.zeros(2, 3)
        assert T.fill_(z, 4) is z and z.tolist() == [[4.0] * 3] * 2
        assert T.zero_(z) is z and z.sum().item() == 0
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            T.detach_(x[0])


# -- torch.nn.grad, torch.nn.attention, torch.nn.factory_kwargs, torch.overrides -----------------------------------
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_nn_grad_matches_torch(nd):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 4) + (6,) * nd)
    w = rng.standard_normal((6, 2) + (3,) * nd)
    kw = dict(stride=2, padding=1, dilation=1, groups=2)
    ty = getattr(torch.nn.functional, f"conv{nd}d")(torch.from_numpy(x), torch.from_numpy(w), **kw)
    gy = rng.standard_normal(tuple(ty.shape))
    for T in (torch, gg):
        mod = T.nn.grad
        X, W, GY = T.from_numpy(x), T.from_numpy(w), T.from_numpy(gy)
        gi = getattr(mod, f"conv{nd}d_input")(x.shape, W, GY, **kw)
        gw = getattr(mod, f"conv{nd}d_weight")(X, w.shape, GY, **kw)
        if T is torch:
            ref = (gi.numpy(), gw.numpy())
    np.testing.assert_allclose(gi.numpy(), ref[0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gw.numpy(), ref[1], rtol=1e-10, atol=1e-10)


def test_sdpa_kernel_selects_kernels_as_torch():
    from torch.nn.attention import sdpa_kernel as t_k, SDPBackend as t_B
    from glassgrad.nn.attention import sdpa_kernel as g_k, SDPBackend as g_B
    assert {k: int(v) for k, v in g_B.__members__.items()} == {k: int(v) for k, v in t_B.__members__.items()}
    assert str(g_B.MATH) == str(t_B.MATH)
    q = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    for names in (["MATH"], ["FLASH_ATTENTION"], ["EFFICIENT_ATTENTION"], ["CUDNN_ATTENTION"], ["OVERRIDEABLE"],
                  ["EFFICIENT_ATTENTION", "MATH"]):
        res = []
        for T, k, B in ((torch, t_k, t_B), (gg, g_k, g_B)):
            x = T.from_numpy(q.copy())
            try:
                with k([getattr(B, n) for n in names]):
                    res.append(T.nn.functional.scaled_dot_product_attention(x, x, x).numpy())
            except RuntimeError as e:
                res.append(str(e))
        if isinstance(res[0], str):
            assert res[1] == res[0], names
        else:
            np.testing.assert_allclose(res[1], res[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with g_k("MATH"):
            pass
    x = gg.ones(1, 1, 2, 2)
    gg.nn.functional.scaled_dot_product_attention(x, x, x)      # restored after the blocks


def test_factory_kwargs_as_torch():
    for T in (torch, gg):
        assert T.nn.factory_kwargs(None) == {}
        assert T.nn.factory_kwargs({"dtype": T.float64, "factory_kwargs": {"device": "cpu"}}) == \
            {"dtype": T.float64, "device": "cpu"}
        with pytest.raises(TypeError, match="unexpected kwargs"):
            T.nn.factory_kwargs({"dtype": T.float64, "bad": 1})
        with pytest.raises(TypeError, match="dtype specified twice"):
            T.nn.factory_kwargs({"dtype": T.float64, "factory_kwargs": {"dtype": T.float32}})


class _Impl:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return (cls.__name__, func.__name__, [t.__name__ for t in types])


class _Sub(_Impl):
    pass


class _Refuses:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def _api(*args):
    return "plain"


def test_torch_function_helpers_as_torch():
    res = []
    for T in (torch, gg):
        F = T.nn.functional
        out = [F.has_torch_function((T.ones(1), 1, "a")), F.has_torch_function_unary(T.ones(1)),
               F.has_torch_function_variadic(1, _Impl()), F.has_torch_function_unary(_Sub()),
               F.handle_torch_function(_api, (_Impl(), _Sub()), 1),
               F.handle_torch_function(_api, (_Refuses(), _Impl()), 1)]
        with pytest.raises(TypeError) as e:
            F.handle_torch_function(_api, (_Refuses(),), 1)
        out.append(str(e.value))
        res.append(out)
    assert res[0] == res[1]
    assert res[1][:4] == [False, False, True, True]


def test_boolean_dispatch_and_assert_int_or_pair_as_torch():
    for T in (torch, gg):
        def t_(x, flag=False):
            """doc"""
            return "true"

        def f_(x, flag=False):
            return "false"
        F = T.nn.functional
        fn = F.boolean_dispatch("flag", 1, False, t_, f_, "mod", "name")
        assert (fn(1), fn(1, True), fn(1, flag=True), fn.__name__, fn.__module__, fn.__doc__) == \
            ("false", "true", "true", "name", "mod", "doc")
        F.assert_int_or_pair(3, "k", "{} must be int or pair")
        with pytest.raises(AssertionError, match="k must be int or pair"):
            F.assert_int_or_pair((1, 2, 3), "k", "{} must be int or pair")
    assert gg.nn.functional.Tensor is gg.Tensor


# -- global switches, constants, default device / tensor type ------------------------------------------------------
def test_constants_as_torch():
    for n in ("e", "pi", "inf", "newaxis"):
        assert getattr(gg, n) == getattr(torch, n)
    assert np.isnan(gg.nan)
    assert (gg.has_lapack, gg.has_openmp) == (True, False)


def _det_calls(T):
    out = []
    for call in (lambda: T.use_deterministic_algorithms(1), lambda: T.set_deterministic_debug_mode("x"),
                 lambda: T.set_deterministic_debug_mode(5), lambda: T.set_deterministic_debug_mode(1.0)):
        try:
            call()
            out.append(None)
        except (TypeError, RuntimeError) as e:
            out.append((type(e), str(e).replace("_set_deterministic_algorithms", "")))
    for mode in ("warn", 2, "default", 1, 0):
        T.set_deterministic_debug_mode(mode)
        out.append((T.get_deterministic_debug_mode(), T.are_deterministic_algorithms_enabled(),
                    T.is_deterministic_algorithms_warn_only_enabled()))
    T.use_deterministic_algorithms(True)
    try:
        out.append([T.empty(3).numpy().tolist(), T.empty(2, dtype=T.int32).tolist(), T.empty(2, dtype=T.bool).tolist(),
                    T.empty_like(T.ones(2)).numpy().tolist(), T.empty_strided((2,), (1,)).numpy().tolist()])
    finally:
        T.use_deterministic_algorithms(False)
    out.append(T.empty(2, dtype=T.int32).shape == (2,))
    return out


def test_deterministic_mode_as_torch():
    t, g = _det_calls(torch), _det_calls(gg)
    assert repr(g) == repr(t)


def test_matmul_precision_and_warn_always_as_torch():
    for T in (torch, gg):
        assert T.get_float32_matmul_precision() == "highest"
        T.set_float32_matmul_precision("high")
        assert T.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning, match="low is not one of 'highest', 'high', or 'medium'"):
            T.set_float32_matmul_precision("low")
        assert T.get_float32_matmul_precision() == "high"
        T.set_float32_matmul_precision("highest")
        with pytest.raises(RuntimeError, match="setWarnOnlyOnce expects a bool, but got int"):
            T.set_warn_always(1)
        T.set_warn_always(True)
        assert T.is_warn_always_enabled()
        T.set_warn_always(False)
        assert not T.is_warn_always_enabled()


def test_flush_denormal_as_torch():
    try:
        for T in (torch, gg):
            x = T.tensor([1e-323], dtype=T.float64)
            assert T.set_flush_denormal(True) is True
            assert (x * 1).tolist() == [0.0]
            assert T.set_flush_denormal(False) is True
            assert (x * 1).tolist() == [1e-323]
    finally:
        torch.set_flush_denormal(False)
        gg.set_flush_denormal(False)


def test_anomaly_switch_and_tensor_predicates_as_torch():
    for T in (torch, gg):
        T.set_anomaly_enabled(True, False)
        assert T.is_anomaly_enabled() and not T.is_anomaly_check_nan_enabled()
        T.set_anomaly_enabled(False)
        assert not T.is_anomaly_enabled()
        x = T.ones(2)
        assert (T.is_distributed(x), x.is_distributed(), T.get_device(x), T.is_inference(x)) == (False, False, -1, False)
        with T.inference_mode():
            assert T.is_inference(T.ones(1))
        assert T.init_num_threads() is None


def test_default_device_and_tensor_type_as_torch():
    for T in (torch, gg):
        assert str(T.get_default_device()) == "cpu"
        T.set_default_device("cpu")
        try:
            assert T.zeros(1).device.type == "cpu" and str(T.get_default_device()) == "cpu"
        finally:
            T.set_default_device(None)
        T.set_warn_always(True)        # torch warns once per process, or every time while warn-always is on
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            T.set_default_tensor_type(T.DoubleTensor)
        try:
            assert T.tensor([1.5]).dtype == T.float64
            with pytest.warns(UserWarning):
                T.set_default_tensor_type("torch.FloatTensor")
            assert T.tensor([1.5]).dtype == T.float32
            for bad, msg in ((T.LongTensor, "only floating-point types are supported as the default type"),
                             ("torch.cuda.FloatTensor", "not available. Torch not compiled with CUDA enabled"),
                             (3, "invalid type object")):
                with pytest.warns(UserWarning), pytest.raises(TypeError, match=msg):
                    T.set_default_tensor_type(bad)
        finally:
            T.set_default_dtype(T.float32)
            T.set_warn_always(False)
