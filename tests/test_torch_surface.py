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


# -- uint16 / uint32 / uint64: torch's limited-support unsigned dtypes ---------------------------------------------
_UINT_CALLS = [
    "T.randint(0, 5, (6,), dtype=dt)", "T.randint(3, 70000, (6,), dtype=dt)", "T.randint(2**40, (3,), dtype=dt)",
    "T.zeros(3, dtype=dt).random_(0, 9)", "T.zeros(3, dtype=dt).random_()", "T.tensor([[2**16-1, 3], [0, 5]], dtype=dt)",
    "T.tensor([1, 2], dtype=dt).sum()", "T.tensor([1, 2], dtype=dt) * 3", "T.tensor([3, 1, 2], dtype=dt).sort()[0]",
    "T.tensor([3, 1, 2], dtype=dt).cumsum(0)", "T.tensor([3, 1, 2], dtype=dt).float()", "T.tensor([3.7, 1, 2]).to(dt)",
    "T.tensor([3, 1, 2], dtype=dt) == 1", "T.tensor([3, 1, 2], dtype=dt).bitwise_and(T.tensor([1, 1, 1], dtype=dt))",
    "T.cat([T.tensor([3], dtype=dt), T.tensor([1], dtype=dt)])", "T.tensor([3, 1, 2], dtype=dt).exp()",
    "T.tensor([3, 1, 2], dtype=dt)[1:]", "T.promote_types(dt, T.int8)", "T.promote_types(dt, T.bool)",
    "T.promote_types(dt, T.float16)", "T.promote_types(dt, T.uint8)", "T.result_type(T.tensor([1], dtype=dt), 2.5)",
    "T.iinfo(dt).max", "T.tensor([3, 1, 2], dtype=dt).clone()", "T.tensor([1, 2], dtype=dt).prod()",
    "T.tensor([4, 2], dtype=dt) * T.tensor([4, 2], dtype=dt)", "T.tensor([1], dtype=dt) * T.tensor([1], dtype=T.uint8)",
    "T.arange(3, dtype=dt)", "T.linspace(0, 3, 4, dtype=dt)", "T.tensor([-1], dtype=dt)", "T.tensor([70000], dtype=dt)",
    "T.tensor([2**32], dtype=dt)", "T.tensor([2**64], dtype=dt)", "T.tensor([2**64 - 1], dtype=dt)",
    "T.tensor([[2**64 - 1, 3]], dtype=T.uint64)", "T.full((2,), -1, dtype=dt)", "T.tensor([-1]).to(dt)",
    "T.tensor([1, 2], dtype=dt).type()", "T.typename(T.ones(1, dtype=dt))", "(dt.is_signed, dt.itemsize, str(dt))",
    "T.from_numpy(np.array([1, 7], dtype=dt.__repr__()[6:])).dtype", "T.ones(2, dtype=dt).numpy().dtype",
    "T.tensor([2, 3], dtype=dt).tolist()", "T.ones(2, dtype=dt).element_size()", "T.ones(2, dtype=dt).is_signed()",
]


def _uint_results(T):
    out = []
    for name in ("uint16", "uint32", "uint64"):
        dt = getattr(T, name)
        T.manual_seed(0)
        for call in _UINT_CALLS:
            try:
                out.append((name, call, repr(eval(call, {"T": T, "dt": dt, "np": np}))))
            except Exception as e:       # noqa: BLE001  (the oracle's exception, whatever it is)
                out.append((name, call, type(e).__name__, str(e)))
    return out


def test_unsigned_dtypes_as_torch():
    """Creation, conversion, printing, RNG streams, promotion refusals and the kernels torch has for them."""
    for t, g in zip(_uint_results(torch), _uint_results(gg)):
        assert g == t


# -- storages, frombuffer, from_file ------------------------------------------------------------------------------
_STORAGE_CALLS = [
    "x.untyped_storage()", "x.untyped_storage().size()", "len(x.untyped_storage())", "x.untyped_storage().tolist()",
    "x.untyped_storage()[6:8]", "x.untyped_storage()[-1]", "x.untyped_storage()[20]", "x.untyped_storage()[0:4:2]",
    "x.untyped_storage().data_ptr() == x.data_ptr()", "x[1:].untyped_storage().nbytes()", "x[1:].storage().size()",
    "x.storage()", "x.storage().dtype", "x.storage()[1]", "x.storage()[7]", "x.storage_type()", "x.storage().tolist()",
    "x.storage().type()", "x.untyped_storage().type()", "x.storage().element_size()", "x.storage().nbytes()",
    "T.tensor([True, False]).storage()", "T.tensor([1, 2], dtype=T.int8).untyped_storage()",
    "T.ones(2, dtype=T.bool).storage_type()", "T.arange(3).storage().pickle_storage_type()",
    "T.FloatStorage([1, 2]).tolist()", "isinstance(x.storage(), T.FloatStorage)", "isinstance(x.storage(), T.DoubleStorage)",
    "T.is_storage(x.storage())", "T.is_storage(x.untyped_storage())", "T.is_storage(x)", "T.UntypedStorage([1, 2, 3]).tolist()",
    "T.UntypedStorage(0)", "T.FloatStorage(0)", "T.FloatStorage('a')", "T.UntypedStorage(4).fill_(3).tolist()",
    "T.UntypedStorage(4).copy_(T.UntypedStorage([1, 2, 3, 4])).tolist()", "T.FloatStorage.dtype", "T.FloatStorage(2).device",
    "T.DoubleStorage([1.5]).tolist()", "T.frombuffer(bytearray(b'\\x01\\x00\\x02\\x00'), dtype=T.int16)",
    "T.frombuffer(bytearray(8), dtype=T.int32, offset=9)", "T.frombuffer(bytearray(8), dtype=T.int32, offset=-1)",
    "T.frombuffer(bytearray(8), dtype=T.int32, count=3)", "T.frombuffer(bytearray(8), dtype=T.int32, count=3, offset=4)",
    "T.frombuffer(bytearray(8), dtype=T.int32, count=0)", "T.frombuffer(bytearray(8), dtype=T.int32, count=-2)",
    "T.frombuffer([1, 2], dtype=T.int32)", "T.frombuffer(b'', dtype=T.int32)", "T.frombuffer(bytearray(3), dtype=T.int32)",
    "T.frombuffer(bytearray(8), dtype=T.float32, requires_grad=True)", "T.frombuffer(b'\\x00\\x00\\x80\\x3f', dtype=T.float32)",
    "T.from_file(f, size=4, dtype=T.int32)", "T.from_file(f, False, 2, dtype=T.int16)", "T.from_file(f)",
    "T.from_file(f, size=10, dtype=T.int32)", "T.from_file('/nonexistent/x.bin', size=2)",
]


def _storage_results(T, path):
    import warnings
    path.write_bytes(bytes(range(16)))
    out = []
    x = T.arange(4, dtype=T.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in _STORAGE_CALLS:
            try:
                r = eval(call, {"T": T, "x": x, "f": str(path)})
                out.append((call, r if isinstance(r, (bool, int, float, list, str, type(None))) else repr(r)))
            except Exception as e:       # noqa: BLE001  (the oracle's exception, whatever it is)
                out.append((call, type(e).__name__, str(e).replace(str(path), "<f>")))
        ts = x.storage()
        ts[0] = 9
        out.append(("write through the typed storage", x.tolist()))
        u = x.untyped_storage()
        u[4:8] = 0
        out.append(("write through the bytes", x.tolist()))
        b = bytearray(8)
        y = T.frombuffer(b, dtype=T.int32, count=1, offset=4)
        y[0] = 7
        out.append(("frombuffer shares the buffer", bytes(b)))
        z = T.from_file(str(path), True, 4, dtype=T.uint8)
        z[0] = 99
        del z
        out.append(("shared: written to the file", path.read_bytes()[:4]))
        z = T.from_file(str(path), False, 4, dtype=T.uint8)
        z[1] = 77
        del z
        out.append(("private: the file unchanged", path.read_bytes()[:4]))
    return out


def test_storages_frombuffer_from_file_as_torch(tmp_path):
    t = _storage_results(torch, tmp_path / "t.bin")
    g = _storage_results(gg, tmp_path / "g.bin")
    for a, b in zip(g, t):
        assert a == b
    assert len(g) == len(t)


# -- the float8 dtypes (ml_dtypes' NumPy dtypes, torch's conversions) -----------------------------------------------
_F8_CALLS = [
    "T.zeros(2, dtype=d)", "T.tensor([1.5, -3.25, 1000.], dtype=d)", "T.tensor([1.5, 300.]).to(d)",
    "T.tensor([1.5, 3.]).to(d).float()", "T.ones(2, dtype=d) * T.ones(2, dtype=d)", "T.promote_types(d, T.float32)",
    "T.promote_types(d, T.float16)", "T.promote_types(d, d)", "str(T.finfo(d))", "T.ones(2, dtype=d).type()",
    "T.ones(3, dtype=d)[1:]", "T.cat([T.ones(1, dtype=d)] * 2)", "T.ones(2, dtype=d).to(T.int32)", "T.ones(2, dtype=d).clone()",
    "T.empty(2, dtype=d).shape", "T.full((2,), 2.5, dtype=d)", "T.tensor([float('nan'), float('inf'), -float('inf')]).to(d)",
    "T.ones(2, dtype=d).numpy()", "T.ones(2, dtype=d).tolist()", "T.ones(2, dtype=d) == 1",
    "(d.is_floating_point, d.is_signed, d.itemsize, str(d))",
    "T.tensor([0.0, -0.0, 2**-127, 1.5 * 2**-127, -3.25, 1e-3], dtype=T.float64).to(d).float()",
    "T.tensor(vals).to(d).view(T.uint8)", "T.tensor(vals, dtype=T.float64).to(d).view(T.uint8)",
    "T.tensor(vals).to(d).to(T.float16)", "T.tensor([[1.0, 2.0], [3.0, 4.0]]).to(d)", "T.tensor([1, 7, -3]).to(d)",
    "T.scalar_tensor(3.5, dtype=d)", "T.ones(2, 2, dtype=d).t().contiguous()", "T.tensor([1.5], dtype=d).item()",
    "T.typename(T.ones(1, dtype=d))",
]


def _f8_results(T):
    import warnings
    rng = np.random.default_rng(0)
    vals = (rng.standard_normal(300) * 10.0 ** rng.integers(-8, 8, 300)).astype(np.float32).tolist()
    vals += [1e30, -1e30, 470.0, 500.0, float("nan")]
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"):
            d = getattr(T, n)
            for call in _F8_CALLS:
                try:
                    r = eval(call, {"T": T, "d": d, "vals": vals})
                    out.append((n, call, r if isinstance(r, (str, bool, int, float, tuple, list)) else repr(r)))
                except Exception as e:       # noqa: BLE001  (the oracle's exception, whatever it is)
                    out.append((n, call, type(e).__name__, str(e)))
    return out


def test_float8_dtypes_as_torch():
    """Creation, torch's conversions (e4m3fn saturating, e8m0fnu's exponent rounding), bit patterns, printing,
    finfo, promotion refusals.  (glassgrad computes the elementwise kernels torch refuses for them.)"""
    for g, t in zip(_f8_results(gg), _f8_results(torch)):
        assert g == t


# -- torch.embedding_bag's four outputs ------------------------------------------------------------------------------
def _bag_results(T):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((10, 3)).astype(np.float32)
    w[4] = w[2]          # ties for max
    out = []
    cases = [([1, 2, 4, 5, 4, 3], [0, 2, 2, 5], False), ([7, 7, 1, 0, 9], [0, 3, 3], False), ([3], [0, 1, 1], False),
             ([1, 2, 4, 5, 4, 3], [0, 2, 2, 6], True), ([7, 7, 1, 0, 9], [0, 3, 5], True)]
    for idx, offs, last in cases:     # (include_last_offset with offsets[-1] short of the end: torch's kernels disagree)
        for mode in (0, 1, 2):
            for pad in (None, 4, -1):
                W = T.from_numpy(w.copy()).requires_grad_()
                r = T.embedding_bag(W, T.tensor(idx), T.tensor(offs), False, mode, False, None, last, pad)
                g = T.autograd.grad(r[0].sum(), W)[0]
                out.append(([x.detach().numpy() for x in r] + [g.numpy()],
                            ([str(x.dtype) for x in r], type(r[0].grad_fn).__name__)))
    return out


def test_embedding_bag_outputs_as_torch():
    for (ga, gm), (ta, tm) in zip(_bag_results(gg), _bag_results(torch)):
        assert gm == tm
        for a, b in zip(ga, ta):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_get_device_module_and_cpu_module_as_torch():
    for T in (torch, gg):
        assert T.get_device_module() is T.cpu and T.get_device_module("cpu") is T.cpu
        assert T.get_device_module(T.device("cuda:0")) is T.cuda
        assert (T.cpu.is_available(), T.cpu.device_count(), T.cpu.current_device()) == (True, 1, "cpu")
        T.cpu.synchronize()
        with pytest.raises(RuntimeError, match="Device 'meta' does not have a corresponding module registered"):
            T.get_device_module("meta")
        with pytest.raises(RuntimeError, match="Invalid value of device '3'"):
            T.get_device_module(3)


def test_memory_identity_methods_as_torch():
    for T in (torch, gg):
        y = T.arange(6.0)
        assert [y.is_set_to(y), y.is_set_to(y.view(2, 3)), y.is_set_to(y[:]), y.is_set_to(y.clone()),
                y[1:].is_set_to(y[1:]), y[1:].is_set_to(y[2:])] == [True, False, True, False, True, False]
        assert y.const_data_ptr() == y.data_ptr()
        z = y.new_empty_strided((2, 2), (1, 2))
        assert (tuple(z.shape), z.stride(), z.dtype) == ((2, 2), (1, 2), T.float32)
        assert y.new_empty_strided((2,), (1,), dtype=T.int32).dtype == T.int32


_CALLBACK_CALLS = [
    "x.clone().apply_(lambda v: v * 2)", "T.arange(4).apply_(lambda v: v * 2.7)",
    "x.clone().requires_grad_().apply_(lambda v: v)", "x.clone().map_(T.ones(4), lambda a, b: a + b)",
    "x.clone().map_(T.ones(1), lambda a, b: a + b)", "x.clone().map2_(T.ones(4), T.full((4,), 2.), lambda a, b, c: a + b * c)",
    "x.clone().apply_(lambda v: 'a')", "T.tensor([True, False]).apply_(lambda v: not v)", "x[::2].apply_(lambda v: v + 10)",
    "x.clone().map_(T.ones(4, dtype=T.int64), lambda a, b: a + b)", "T.is_nonzero(T.tensor([0.]))",
    "T.is_nonzero(T.tensor([1.5]))", "T.is_nonzero(T.tensor([1, 2]))", "T.is_nonzero(T.tensor([]))", "T.tensor(3).is_nonzero()",
    "T.is_same_size(T.ones(2, 3), T.zeros(2, 3))", "T.ones(2).is_same_size(T.ones(3))", "T.is_same_size(T.ones(2), 3)",
    "T.is_signed(T.ones(2, dtype=T.uint8))", "T.is_signed(T.ones(2))", "T.is_vulkan_available()",
    "T.cudnn_is_acceptable(T.ones(2))",
]


def _callback_results(T):
    out = []
    for call in _CALLBACK_CALLS:
        x = T.arange(4.0)
        try:
            r = eval(call, {"T": T, "x": x})
            out.append((call, repr(r), x.tolist(), x._version))
        except Exception as e:       # noqa: BLE001  (the oracle's exception, whatever it is)
            out.append((call, type(e).__name__, str(e)))
    return out


def test_python_callbacks_and_predicates_as_torch():
    for g, t in zip(_callback_results(gg), _callback_results(torch)):
        assert g == t


def test_safetensors_round_trip_the_new_dtypes_with_torch(tmp_path):
    """uint16/32/64 and the float8 types travel through safetensors both ways, byte for byte with torch's."""
    from safetensors.torch import load_file as t_load, save_file as t_save
    from glassgrad.safetensors import load_file as g_load, save_file as g_save
    names = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
    src = {n: torch.tensor([0.0, 1.5, 3.0, 7.0]).to(getattr(torch, n)) for n in names}
    t_save(src, str(tmp_path / "t.safetensors"))
    mine = g_load(tmp_path / "t.safetensors")
    for n in names:
        assert mine[n].dtype is getattr(gg, n)
        assert mine[n].view(gg.uint8).tolist() == src[n].view(torch.uint8).tolist()
    g_save(mine, str(tmp_path / "g.safetensors"))
    back = t_load(str(tmp_path / "g.safetensors"))
    for n in names:
        assert back[n].dtype == src[n].dtype and torch.equal(back[n].view(torch.uint8), src[n].view(torch.uint8))
