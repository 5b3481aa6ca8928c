"""torch.bfloat16 (through the optional ml_dtypes package), checked against torch: the dtype object, promotion,
creation and conversion (round to nearest even), printing with the seeded RNG, arithmetic and the common ops
(forward and gradients), checkpoints in the three formats, and `import glassgrad` without ml_dtypes.

Tolerances: bit-exact where torch's CPU result is one float32 computation rounded once (elementwise
arithmetic, conversions, the RNG); otherwise within `ULPS` bfloat16 ulps of torch (reductions and composite
ops, whose float32 summation order differs from torch's vectorised one)."""
import io
import subprocess
import sys

import numpy as np
import pytest

import glassgrad as gg
import glassgrad.safetensors
import torch

DTYPES = ["bfloat16", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def f32(t):
    """The values of a bf16 (or any) tensor of either library as a float32 array."""
    return t.detach().float().numpy()


def assert_ulps(g, t, ulps, what=""):
    """glassgrad's g within `ulps` bfloat16 ulps of torch's t (same dtype, same shape)."""
    assert str(g.dtype) == str(t.dtype), f"{what}: dtype {g.dtype} != torch {t.dtype}"
    a, b = f32(g), f32(t)
    assert a.shape == b.shape, what
    ulp = np.maximum(np.abs(b), 2.0 ** -126) * 2.0 ** -7
    bad = np.abs(a - b) > ulps * ulp
    assert not bad.any(), f"{what}: {int(bad.sum())}/{bad.size} beyond {ulps} ulp: {a[bad][:5]} vs {b[bad][:5]}"


def assert_same(g, t, what=""):
    assert_ulps(g, t, 0, what)


def both(make):
    return make(gg), make(torch)


# -- the dtype object ------------------------------------------------------------------------------------
def test_dtype_object_matches_torch():
    b = gg.bfloat16
    assert repr(b) == repr(torch.bfloat16) == "torch.bfloat16" and str(b) == str(torch.bfloat16)
    assert (b.itemsize, b.is_floating_point, b.is_signed, b.is_complex) == (
        torch.bfloat16.itemsize, torch.bfloat16.is_floating_point, torch.bfloat16.is_signed, False)
    assert gg.tensor([1.0], dtype=b).type() == torch.tensor([1.0], dtype=torch.bfloat16).type()
    assert isinstance(gg.zeros(2, dtype=b), gg.BFloat16Tensor)
    assert not isinstance(gg.zeros(2), gg.BFloat16Tensor)
    assert repr(gg.BFloat16Tensor) == repr(torch.BFloat16Tensor)


@pytest.mark.parametrize("name", ["bfloat16", "float16", "float32", "float64", None])
def test_finfo_matches_torch(name):
    g = gg.finfo(getattr(gg, name)) if name else gg.finfo()
    t = torch.finfo(getattr(torch, name)) if name else torch.finfo()
    for k in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(g, k) == getattr(t, k), k
    assert repr(g) == repr(t)


def test_finfo_of_an_integer_dtype_is_torchs_type_error():
    with pytest.raises(TypeError) as te:
        torch.finfo(torch.int32)
    with pytest.raises(TypeError) as ge:
        gg.finfo(gg.int32)
    assert str(ge.value) == str(te.value)


@pytest.mark.parametrize("name", ["int8", "uint8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(name):
    g, t = gg.iinfo(getattr(gg, name)), torch.iinfo(getattr(torch, name))
    for k in ("bits", "min", "max", "dtype"):
        assert getattr(g, k) == getattr(t, k), k
        assert type(getattr(g, k)) is type(getattr(t, k)), k
    assert repr(g) == repr(t) and str(g) == str(t)
    assert (g == gg.iinfo(getattr(gg, name))) and not (g == gg.iinfo(gg.int8 if name != "int8" else gg.int16))


@pytest.mark.parametrize("arg", ["float32", "bool", 3])
def test_iinfo_errors_are_torchs(arg):
    with pytest.raises(TypeError) as te:
        torch.iinfo(getattr(torch, arg) if isinstance(arg, str) else arg)
    with pytest.raises(TypeError) as ge:
        gg.iinfo(getattr(gg, arg) if isinstance(arg, str) else arg)
    assert str(ge.value) == str(te.value)


def test_device_properties_and_pinning_match_torch():
    t, g = torch.ones(2), gg.ones(2)
    for k in ("is_cpu", "is_cuda", "is_xpu", "is_mps", "is_ipu", "is_meta", "is_xla", "is_maia", "is_mtia",
              "is_vulkan", "is_sparse", "is_sparse_csr", "is_quantized", "is_mkldnn", "is_nested"):
        assert getattr(g, k) == getattr(t, k), k
    assert g.is_pinned() is t.is_pinned() is False
    if not torch.accelerator.is_available() and not gg.backend.cuda_available():
        with pytest.raises(RuntimeError) as te:
            t.pin_memory()
        with pytest.raises(RuntimeError) as ge:
            g.pin_memory()
        assert str(ge.value) == str(te.value)


def test_promote_types_can_cast_table_matches_torch():
    for a in DTYPES:
        for b in DTYPES:
            g = gg.promote_types(getattr(gg, a), getattr(gg, b))
            assert repr(g) == repr(torch.promote_types(getattr(torch, a), getattr(torch, b))), (a, b)
            assert gg.can_cast(getattr(gg, a), getattr(gg, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))


@pytest.mark.parametrize("other", [1.5, 2, True, ("float16", 0), ("float16", 1), ("float32", 0), ("float32", 1),
                                   ("int64", 1), ("float64", 0), ("bfloat16", 0)])
def test_result_type_and_operators_promote_as_torch(other):
    def run(T):
        x = T.ones(3, dtype=T.bfloat16)
        o = other if not isinstance(other, tuple) else T.ones((3,) * other[1], dtype=getattr(T, other[0]))
        return T.result_type(x, o), (x + o).dtype, (o * x).dtype, T.result_type(o, T.tensor(2.0, dtype=T.bfloat16))
    assert [repr(d) for d in run(gg)] == [repr(d) for d in run(torch)]


# -- creation and conversion ------------------------------------------------------------------------------
# float32 bit patterns around bfloat16's rounding points: ties to even both ways, just above/below a tie,
# the largest finite values, overflow to inf, subnormals, nan, -0
_F32_BITS = [0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF, 0x00008000,
             0x00018000, 0x00000001, 0x80000000, 0xBF808000, 0x7FC00000, 0x7F800000, 0x3EAAAAAB, 0x4049FDB0]
_F32 = np.array(_F32_BITS, np.uint32).view(np.float32)


def test_float32_to_bfloat16_rounds_to_nearest_even_as_torch():
    g, t = gg.tensor(_F32).bfloat16(), torch.tensor(_F32).bfloat16()
    assert np.array_equal(f32(g), f32(t), equal_nan=True)
    for cast in (lambda T, x: x.to(T.bfloat16), lambda T, x: x.type(T.bfloat16), lambda T, x: x.double().bfloat16(),
                 lambda T, x: T.tensor(x.tolist(), dtype=T.bfloat16), lambda T, x: x.half().bfloat16()):
        a, b = cast(gg, gg.tensor(_F32)), cast(torch, torch.tensor(_F32))
        assert np.array_equal(f32(a), f32(b), equal_nan=True)


def test_bfloat16_to_other_dtypes_as_torch():
    vals = [-3.7, -1.0, -0.0, 0.0, 0.5, 1.0, 2.75, 100.5, 255.0, 300.0, 70000.0, 1e-8]
    g, t = gg.tensor(vals, dtype=gg.bfloat16), torch.tensor(vals, dtype=torch.bfloat16)
    for name in ("float16", "float32", "float64", "int32", "int64", "bool"):
        a, b = g.to(getattr(gg, name)), t.to(getattr(torch, name))
        assert a.dtype.name == name and np.array_equal(a.numpy(), b.numpy()), name
    assert g.tolist() == t.tolist()
    assert [x.item() for x in g] == [x.item() for x in t]
    assert type(g[0].item()) is type(t[0].item()) is float
    assert g.half().tolist() == t.half().tolist() and g.float().half().tolist() == t.float().half().tolist()


def test_creation_functions_with_dtype_bfloat16():
    makers = [lambda T: T.zeros(2, 3, dtype=T.bfloat16), lambda T: T.ones(4, dtype=T.bfloat16),
              lambda T: T.full((3,), 0.1, dtype=T.bfloat16), lambda T: T.arange(0, 3, 0.3, dtype=T.bfloat16),
              lambda T: T.arange(300, 310, dtype=T.bfloat16), lambda T: T.linspace(-1, 1, 7, dtype=T.bfloat16),
              lambda T: T.eye(3, dtype=T.bfloat16), lambda T: T.empty(2, dtype=T.bfloat16).fill_(1 / 3),
              lambda T: T.tensor([[1 / 3, 2.0], [1e10, -7.1]], dtype=T.bfloat16),
              lambda T: T.full_like(T.ones(2, dtype=T.bfloat16), 2.7), lambda T: T.zeros_like(T.ones(2)).bfloat16(),
              lambda T: T.tensor(3.3).to(T.bfloat16), lambda T: T.tensor([1, 2], dtype=T.int64).bfloat16()]
    for i, mk in enumerate(makers):
        g, t = both(mk)
        assert_same(g, t, f"maker {i}")
        assert g.shape == t.shape


def test_numpy_and_from_numpy_refuse_bfloat16_as_torch():
    import ml_dtypes
    for T in (gg, torch):
        with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
            T.ones(2, dtype=T.bfloat16).numpy()
        with pytest.raises(RuntimeError, match="requires grad"):
            T.ones(2, dtype=T.bfloat16, requires_grad=True).numpy()
        with pytest.raises(TypeError, match="can't convert np.ndarray of type ml_dtypes.bfloat16"):
            T.from_numpy(np.ones(2, ml_dtypes.bfloat16))
        with pytest.raises(TypeError, match="ml_dtypes.bfloat16"):
            T.tensor(np.ones(2, ml_dtypes.bfloat16))


# -- printing and the RNG ----------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda T: T.randn(3, dtype=T.bfloat16), lambda T: T.randn(40, dtype=T.bfloat16),
    lambda T: T.rand(2, 3, dtype=T.bfloat16), lambda T: T.randn(5, 7, dtype=T.bfloat16) * 1000,
    lambda T: T.randn(2000, dtype=T.bfloat16), lambda T: T.empty(17, dtype=T.bfloat16).normal_(2.0, 3.0),
    lambda T: T.empty(9, dtype=T.bfloat16).uniform_(-5, 5), lambda T: T.randint(0, 100, (6,), dtype=T.bfloat16),
    lambda T: T.randn(4, dtype=T.bfloat16, requires_grad=True) * 2,
    lambda T: T.tensor([1e-6, 1.0, 1e6, float("nan"), float("-inf")], dtype=T.bfloat16),
    lambda T: T.randn(3, 3).bfloat16().t()], ids=lambda f: "")
def test_seeded_random_values_and_repr_match_torch(make):
    gg.manual_seed(7)
    torch.manual_seed(7)
    g, t = both(make)
    assert np.array_equal(f32(g), f32(t), equal_nan=True)
    assert repr(g) == repr(t)
    assert str(g) == str(t)


def test_print_statement_output_matches_torch(capsys):
    outs = []
    for T in (gg, torch):
        T.manual_seed(0)
        print(T.randn(3, dtype=T.bfloat16), T.ones(2, 2, dtype=T.bfloat16).sum())
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]


# -- arithmetic and the common ops ---------------------------------------------------------------------------
_RNG = np.random.default_rng(15)
_A = _RNG.standard_normal((6, 10)).astype(np.float32)
_B = _RNG.standard_normal((6, 10)).astype(np.float32)
_W = _RNG.standard_normal((5, 10)).astype(np.float32)

# one float32 computation rounded once in torch: bit-exact
EXACT = {
    "add": lambda T, a, b: a + b, "sub": lambda T, a, b: a - b, "mul": lambda T, a, b: a * b,
    "div": lambda T, a, b: a / (b.abs() + 0.5), "add_scalar": lambda T, a, b: a + 0.3, "rsub": lambda T, a, b: 1.1 - a,
    "mul_scalar": lambda T, a, b: a * 0.1, "div_scalar": lambda T, a, b: a / 0.3, "rdiv": lambda T, a, b: 0.7 / a,
    "add_alpha": lambda T, a, b: T.add(a, 1.5, alpha=0.3), "pow2": lambda T, a, b: a ** 2,
    "pow_scalar": lambda T, a, b: a.abs() ** 1.3, "neg_abs": lambda T, a, b: -a.abs(), "relu": lambda T, a, b: T.relu(a),
    "maximum": lambda T, a, b: T.maximum(a, b), "clamp": lambda T, a, b: a.clamp(-0.5, 0.7),
    "where": lambda T, a, b: T.where(a > 0, a, b), "fmod": lambda T, a, b: T.fmod(a, 0.7),
    "eq_scalar": lambda T, a, b: (a == 0.1).to(T.bfloat16), "leaky_relu": lambda T, a, b: T.nn.functional.leaky_relu(a, 0.1),
    "mm": lambda T, a, b: a @ b.t(), "bmm": lambda T, a, b: T.bmm(a.reshape(2, 3, 10), b.reshape(2, 10, 3)),
    "max": lambda T, a, b: a.max(1)[0], "sort": lambda T, a, b: a.sort(1)[0], "cat": lambda T, a, b: T.cat([a, b], 1),
    "sum": lambda T, a, b: a.sum(), "sum_dim": lambda T, a, b: a.sum(1), "mean_dim": lambda T, a, b: a.mean(0),
    "softmax": lambda T, a, b: a.softmax(-1), "embedding": lambda T, a, b: T.nn.functional.embedding(T.tensor([2, 0]), a),
}
# transcendental kernels (torch's vectorised ones against NumPy's) and composites: within ULPS bf16 ulps
ULPS = 2
CLOSE = {
    "exp": lambda T, a, b: a.exp(), "log": lambda T, a, b: (a.abs() + 0.1).log(), "tanh": lambda T, a, b: a.tanh(),
    "sigmoid": lambda T, a, b: a.sigmoid(), "gelu": lambda T, a, b: T.nn.functional.gelu(a),
    "silu": lambda T, a, b: T.nn.functional.silu(a), "sqrt": lambda T, a, b: (a.abs() + 0.1).sqrt(),
    "log_softmax": lambda T, a, b: a.log_softmax(-1), "layer_norm": lambda T, a, b: T.nn.functional.layer_norm(a, (10,)),
    "linear": lambda T, a, b: T.nn.functional.linear(a, b[:5], b[5, :5]), "mean": lambda T, a, b: a.mean(),
    "var": lambda T, a, b: a.var(1), "mse": lambda T, a, b: T.nn.functional.mse_loss(a, b),
    "cross_entropy": lambda T, a, b: T.nn.functional.cross_entropy(a, T.tensor([0, 2, 5, 1, 9, 3])),
    "conv2d": lambda T, a, b: T.nn.functional.conv2d(a.reshape(1, 1, 6, 10), b[:2, :9].reshape(2, 1, 3, 3)),
    "einsum": lambda T, a, b: T.einsum("ij,kj->ik", a, b),
    "lerp": lambda T, a, b: T.lerp(a, b, 0.3), "lerp_tensor": lambda T, a, b: T.lerp(a, b, a.abs() / (a.abs() + 1)),
    "rms_norm": lambda T, a, b: T.nn.functional.rms_norm(a, (10,)),
}


def _run(T, f, rg):
    a = T.tensor(_A).bfloat16().requires_grad_(rg)
    b = T.tensor(_B).bfloat16().requires_grad_(rg)
    return f(T, a, b), (a, b)


@pytest.mark.parametrize("name", sorted(EXACT))
def test_elementwise_and_accumulated_ops_bit_exact(name):
    g, t = _run(gg, EXACT[name], False)[0], _run(torch, EXACT[name], False)[0]
    assert_same(g, t, name)


@pytest.mark.parametrize("name", sorted(CLOSE))
def test_kernels_and_composites_within_ulps(name):
    g, t = _run(gg, CLOSE[name], False)[0], _run(torch, CLOSE[name], False)[0]
    assert_ulps(g, t, ULPS, name)


# gradients: bfloat16 gradients of bfloat16 leaves, within GRAD_ULPS ulps of torch's, or GRAD_ATOL absolutely
# (a gradient that is a small difference of rounded bf16 terms, e.g. softmax's, cancels)
GRAD_ULPS, GRAD_ATOL = 4, 0.03
GRADS = ["add", "mul", "div", "mul_scalar", "pow2", "relu", "mm", "sum_dim", "mean_dim", "softmax", "exp", "tanh",
         "gelu", "layer_norm", "linear", "mse", "cross_entropy", "conv2d"]


@pytest.mark.parametrize("name", GRADS)
def test_gradients_are_bfloat16_and_close_to_torch(name):
    f = {**EXACT, **CLOSE}[name]
    ct = _RNG.standard_normal(tuple(_run(torch, f, False)[0].shape)).astype(np.float32)
    res = []
    for T in (gg, torch):
        out, leaves = _run(T, f, True)
        res.append(T.autograd.grad(out, leaves, T.tensor(ct).bfloat16(), allow_unused=True))
    for i, (g, t) in enumerate(zip(*res)):
        if t is None:
            assert g is None or not f32(g).any()
            continue
        assert str(g.dtype) == str(t.dtype) == "torch.bfloat16"
        a, b = f32(g), f32(t)
        ok = np.abs(a - b) <= np.maximum(GRAD_ULPS * np.abs(b) * 2.0 ** -7, GRAD_ATOL)
        assert ok.all(), f"{name} grad {i}: {a[~ok][:5]} vs torch {b[~ok][:5]}"


def test_a_bfloat16_module_trains_like_torch():
    res = []
    for T in (gg, torch):
        T.manual_seed(3)
        m = T.nn.Sequential(T.nn.Linear(10, 8), T.nn.LayerNorm(8), T.nn.GELU(), T.nn.Linear(8, 3)).bfloat16()
        opt = T.optim.SGD(m.parameters(), lr=0.1)
        x, y = T.tensor(_A).bfloat16(), T.tensor([0, 1, 2, 0, 1, 2])
        for _ in range(3):
            opt.zero_grad()
            loss = T.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
        res.append((loss, [p.detach() for p in m.parameters()]))
    assert res[0][0].dtype == gg.bfloat16 and abs(res[0][0].item() - res[1][0].item()) < 0.05
    for g, t in zip(res[0][1], res[1][1]):
        assert str(g.dtype) == "torch.bfloat16"
        np.testing.assert_allclose(f32(g), f32(t), atol=0.03, rtol=0.02)


# -- checkpoints -------------------------------------------------------------------------------------------
def _state(T):
    T.manual_seed(0)
    return {"w": T.randn(3, 4).bfloat16(), "v": T.randn(9).bfloat16()[::2], "f": T.ones(2), "s": T.tensor(2.5).bfloat16()}


def _same_state(a, b):
    assert sorted(a) == sorted(b)
    for k in a:
        assert str(a[k].dtype) == str(b[k].dtype) and tuple(a[k].shape) == tuple(b[k].shape), k
        assert np.array_equal(f32(a[k]), f32(b[k])), k


def test_safetensors_bfloat16_both_ways_with_torch(tmp_path):
    from safetensors.torch import load_file, save_file
    t = {k: v.contiguous() for k, v in _state(torch).items()}
    save_file(t, str(tmp_path / "t.safetensors"))
    g = glassgrad.safetensors.load_file(tmp_path / "t.safetensors")
    _same_state(g, t)
    glassgrad.safetensors.save_file(g, tmp_path / "g.safetensors")
    _same_state(load_file(str(tmp_path / "g.safetensors")), t)
    assert (tmp_path / "g.safetensors").read_bytes() == (tmp_path / "t.safetensors").read_bytes()


def test_torch_format_checkpoints_bfloat16_both_ways(tmp_path):
    t = _state(torch)
    torch.save(t, tmp_path / "t.pt")
    g = gg.load(tmp_path / "t.pt")
    _same_state(g, t)
    gg.save(g, tmp_path / "g.pt", format="torch")
    _same_state(torch.load(tmp_path / "g.pt", weights_only=True), t)


def test_glassgrad_format_round_trip_and_module_state_dict(tmp_path):
    g = _state(gg)
    gg.save(g, tmp_path / "g.pt")
    _same_state(gg.load(tmp_path / "g.pt"), g)
    m = gg.nn.Linear(4, 2).bfloat16()
    buf = io.BytesIO()
    gg.save(m.state_dict(), buf)
    buf.seek(0)
    m2 = gg.nn.Linear(4, 2).bfloat16()
    m2.load_state_dict(gg.load(buf))
    assert m2.weight.dtype == gg.bfloat16 and gg.equal(m2.weight, m.weight)


# -- without ml_dtypes -------------------------------------------------------------------------------------
_HIDDEN = r"""
import sys
sys.modules["ml_dtypes"] = None          # import ml_dtypes now raises ImportError
import glassgrad as torch
print(repr(torch.bfloat16), torch.bfloat16.itemsize, torch.finfo(torch.bfloat16).eps, torch.ones(2).sum().item())
print(torch.promote_types(torch.bfloat16, torch.float16))
import glassgrad.safetensors
for make in (lambda: torch.ones(2, dtype=torch.bfloat16), lambda: torch.ones(2).bfloat16(),
             lambda: torch.randn(2, dtype=torch.bfloat16), lambda: glassgrad.safetensors.load_file(sys.argv[1]),
             lambda: torch.load(sys.argv[2])):
    try:
        make()
    except ImportError as e:
        print(type(e).__name__, e)
"""


def test_import_glassgrad_without_ml_dtypes(tmp_path):
    from safetensors.torch import save_file
    save_file({"w": torch.ones(2, dtype=torch.bfloat16)}, str(tmp_path / "w.safetensors"))
    torch.save({"w": torch.ones(2, dtype=torch.bfloat16)}, tmp_path / "w.pt")
    r = subprocess.run([sys.executable, "-c", _HIDDEN, str(tmp_path / "w.safetensors"), str(tmp_path / "w.pt")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "torch.bfloat16 2 0.0078125 2.0" and lines[1] == "torch.float32"
    assert len(lines) == 7 and all("ModuleNotFoundError" in x and "pip install glassgrad[bf16]" in x for x in lines[2:])


def test_import_glassgrad_does_not_load_ml_dtypes():
    code = "import sys, glassgrad; print('ml_dtypes' in sys.modules); glassgrad.zeros(1, dtype=glassgrad.bfloat16); " \
           "print('ml_dtypes' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True"]
