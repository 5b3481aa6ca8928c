"""torch.* names about memory and dtypes, against torch: the unsigned and float8 dtypes, storages, frombuffer /
from_file, safetensors with the new dtypes, embedding_bag's bookkeeping outputs, the device modules, resize_ and
empty_permuted, the Python-callback methods."""
import numpy as np
import pytest
import torch

import glassgrad as gg


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


_RESIZE_CALLS = [
    "T.empty_permuted((2, 3, 4), (0, 2, 1)).stride()", "T.empty_permuted((2, 3, 4), (2, 0, 1)).stride()",
    "T.empty_permuted((2, 3), (0, 0))", "T.empty_permuted((2, 3), (0,))", "T.empty_permuted((2, 3), (1, 0), dtype=T.int32).dtype",
    "T.empty_permuted((2, 3), (-1, 0)).stride()", "T.arange(6.).resize_(2, 2)", "T.arange(6.).resize_(3, 3)[:2]",
    "T.arange(6.).resize_((4,))", "T.arange(6.).requires_grad_().resize_(2)", "T.arange(6.).resize_(-1)",
    "T.ones(2, 3).t().resize_(3, 2).stride()", "T.ones(2, 2).resize_as_(T.ones(3))", "T.resize_as_(T.ones(2), T.ones(1, 1))",
    "T.arange(6.)[2:].resize_(2)", "T.arange(6.)[2:].resize_(2).storage_offset()", "T.arange(6).resize_(8)[:6]",
    "T.arange(6.).resize_(2).untyped_storage().nbytes()",
]


def _resize_results(T):
    out = []
    for call in _RESIZE_CALLS:
        try:
            r = eval(call, {"T": T})
            out.append((call, repr(r), r.stride() if hasattr(r, "stride") else None))
        except Exception as e:       # noqa: BLE001  (the oracle's exception, whatever it is)
            out.append((call, type(e).__name__, str(e)))
    y = T.arange(6.0)
    v = y.view(2, 3)
    y.resize_(2)
    out.append(("shrinking keeps the storage", v.tolist(), y.tolist(), y._version))
    y = T.arange(6.0)
    v = y[2:]
    v.resize_(2)
    v[0] = 99
    out.append(("a view resized still views its base", v.tolist(), y.tolist(), v.storage_offset()))
    y = T.arange(6.0)
    y.resize_(2)
    y.resize_(6)
    out.append(("regrowing within the storage keeps its values", y.tolist()))
    T.use_deterministic_algorithms(True)
    try:
        y = T.arange(6.0)
        y.resize_(8)
        out.append(("deterministic growth fills NaN", repr(y)))
    finally:
        T.use_deterministic_algorithms(False)
    return out


def test_resize_and_empty_permuted_as_torch():
    for g, t in zip(_resize_results(gg), _resize_results(torch)):
        assert g == t
