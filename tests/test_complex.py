"""Complex tensors against torch: dtypes and promotion, creation and the random stream, repr, writable
views of the parts, the conj bit, casts, errors, and gradcheck in complex128 (the op-table rows are
tests/opinfo/complex.py)."""
import hashlib
import math
import warnings

import numpy as np
import pytest
import torch

import glassgrad as gg

LIBS = (torch, gg)


def both(f):
    """f(T) for torch and glassgrad: (value or (exception type, message)) each."""
    out = []
    for T in LIBS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(f(T))
        except Exception as e:          # noqa: BLE001  (the error itself is compared)
            out.append((type(e).__name__, str(e)))
    return out


def same(f):
    t, g = both(f)
    assert str(g) == str(t)


def test_dtype_attributes():
    for n in ("complex64", "complex128", "cfloat", "cdouble"):
        same(lambda T: (getattr(T, n), getattr(T, n).is_complex, getattr(T, n).is_floating_point,
                        getattr(T, n).itemsize, getattr(T, n).to_real(), getattr(T, n).is_signed))
    same(lambda T: (T.float32.to_complex(), T.float64.to_complex(), T.int32.to_real()))
    same(lambda T: T.int64.to_complex())
    same(lambda T: (T.finfo(T.complex64), T.finfo(T.complex128)))


@pytest.mark.parametrize("a,b", [("complex64", "float64"), ("float16", "complex64"), ("int64", "complex64"),
                                 ("bool", "complex128"), ("complex64", "complex128"), ("uint8", "complex64")])
def test_promote_types(a, b):
    same(lambda T: (T.promote_types(getattr(T, a), getattr(T, b)), T.can_cast(getattr(T, a), getattr(T, b))))


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "bool", "uint8"])
@pytest.mark.parametrize("scalar", [1j, 1 + 0j])
def test_result_type_with_a_complex_number(dt, scalar):
    same(lambda T: (T.result_type(T.ones(2, dtype=getattr(T, dt)), scalar), (T.ones(2, dtype=getattr(T, dt)) +
                                                                            scalar).dtype))


def test_result_type_of_complex_tensors():
    same(lambda T: T.result_type(T.tensor(1.0, dtype=T.float64), T.ones(2, dtype=T.complex64)))
    same(lambda T: T.result_type(T.tensor(1j), T.ones(2, dtype=T.float64)))
    same(lambda T: (T.tensor(1j).dtype, T.tensor([1, 2j]).dtype, T.tensor([[1j]]).tolist(), T.tensor([1 + 2j]).item()))


def test_default_complex_follows_the_default_dtype():
    for T in LIBS:
        T.set_default_dtype(T.float64)
    try:
        same(lambda T: (T.tensor(1j).dtype, repr(T.tensor([1j])), (T.ones(2, dtype=T.int64) * 1j).dtype))
    finally:
        for T in LIBS:
            T.set_default_dtype(T.float32)


CREATE = {
    "zeros": lambda T: T.zeros(2, dtype=T.cfloat), "eye": lambda T: T.eye(2, dtype=T.cdouble),
    "full": lambda T: T.full((2,), 1 + 1j), "full_real": lambda T: T.full((2,), 2.0, dtype=T.cfloat),
    "full_bad": lambda T: T.full((2,), 1 + 1j, dtype=T.float32), "arange": lambda T: T.arange(3, dtype=T.cfloat),
    "ones_like": lambda T: T.ones_like(T.zeros(2, dtype=T.cdouble)) * 2, "cfloat": lambda T: T.ones(2).cfloat(),
    "cdouble": lambda T: T.ones(2, dtype=T.int64).cdouble(), "to": lambda T: T.tensor([1 + 2j]).to(T.complex128),
    "type": lambda T: T.ones(2, dtype=T.cfloat).type(), "numpy": lambda T: T.tensor([1 + 1j, 2]).numpy().dtype,
    "complex_": lambda T: complex(T.tensor([1 + 1j])), "float_": lambda T: float(T.tensor([1 + 1j])),
}


@pytest.mark.parametrize("key", CREATE)
def test_creation(key):
    same(lambda T: repr(r) if isinstance(r := CREATE[key](T), T.Tensor) else r)


def test_complex_to_real_casts_warn_and_keep_the_real_part():
    for T in (gg,):     # torch warns once per process (TORCH_WARN_ONCE): its message is the one matched here
        x = T.tensor([1 + 2j, 3 - 4j])
        with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
            y = x.float()
        assert y.tolist() == [1.0, 3.0]


@pytest.mark.parametrize("n", [3, 8, 20, 33])
@pytest.mark.parametrize("dt", ["cfloat", "cdouble"])
def test_randn_complex_is_torchs_stream(n, dt):
    t, g = both(lambda T: hashlib.md5(T.view_as_real(T.randn(n, dtype=getattr(T, dt),
                                      generator=T.Generator().manual_seed(n))).numpy().tobytes()).hexdigest())
    assert t == g


REPRS = [[1 + 2j, 3 - 4j], [1e-5 + 2j, 1e8j], [0j], [1.5 + 0j, -2.25 - 1j], [complex(math.nan, 1),
         complex(math.inf, -math.inf)], [1e-10 + 1e10j], [100 + 1j, 2j], [[1 + 1j, 2], [3, 4 - 1j]], 1 + 2j, [-0.0 + 0j]]


@pytest.mark.parametrize("i", range(len(REPRS)))
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_repr(i, dt):
    same(lambda T: repr(T.tensor(REPRS[i], dtype=getattr(T, dt))))


def test_repr_long_empty_and_requires_grad():
    same(lambda T: repr(T.arange(200, dtype=T.float32).to(T.cfloat) * (1 + 1j)))
    same(lambda T: repr(T.randn(4, 3, dtype=T.cfloat, generator=T.Generator().manual_seed(1)) * 100))
    same(lambda T: (repr(T.tensor([], dtype=T.cfloat)), repr(T.zeros(2, 0, dtype=T.cdouble))))
    same(lambda T: repr(T.tensor([1 + 2j], requires_grad=True)))


def test_parts_are_writable_views():
    def f(T):
        w = T.tensor([1 + 2j, 3 - 4j])
        w.real.mul_(2)
        w.imag = T.tensor([9.0, 9.0])
        w.real[0] = 7
        return repr(w), w.real.stride(), w.imag.storage_offset(), w.real._base is w if T is gg else True
    same(f)


def test_inplace_write_through_the_real_part_is_differentiated():
    def f(T):
        z = T.tensor([1 + 2j, -1 + 0.5j], dtype=T.cdouble, requires_grad=True)
        y = z * 2
        y.real.mul_(3)
        y.abs().sum().backward()
        return repr(y.detach()), y.grad_fn.name(), repr(z.grad)
    same(f)


def test_conj_bit():
    same(lambda T: (T.tensor([1j]).conj().is_conj(), T.tensor([1j]).conj().resolve_conj().is_conj(),
                    T.tensor([1j]).conj_physical().is_conj(), T.ones(2).conj().is_conj(),
                    T.tensor([1j]).conj().imag.is_neg(), T.tensor([1j]).imag.is_neg(),
                    T.tensor([1j]).conj().conj().is_conj(), T.ones(2, 2, dtype=T.cfloat).mH.is_conj()))
    same(lambda T: T.tensor([1j]).conj().numpy())
    same(lambda T: T.view_as_real(T.tensor([1j]).conj()))
    same(lambda T: repr(T.tensor([1 + 1j]).conj_physical_()))


ERRORS = {
    "lt": lambda T: T.ones(2, dtype=T.cfloat) < 1, "max": lambda T: T.ones(2, dtype=T.cfloat).max(),
    "max_dim": lambda T: T.ones(2, dtype=T.cfloat).max(0), "sort": lambda T: T.ones(2, dtype=T.cfloat).sort(),
    "topk": lambda T: T.ones(2, dtype=T.cfloat).topk(1), "argmax": lambda T: T.ones(2, dtype=T.cfloat).argmax(),
    "maximum": lambda T: T.maximum(T.ones(2, dtype=T.cfloat), T.ones(2, dtype=T.cfloat)),
    "clamp": lambda T: T.ones(2, dtype=T.cfloat).clamp(0, 1), "floor": lambda T: T.ones(2, dtype=T.cfloat).floor(),
    "sign": lambda T: T.ones(2, dtype=T.cfloat).sign(), "erf": lambda T: T.ones(2, dtype=T.cfloat).erf(),
    "floor_divide": lambda T: T.ones(2, dtype=T.cfloat) // 2, "remainder": lambda T: T.ones(2, dtype=T.cfloat) % 2,
    "imag_of_real": lambda T: T.ones(2).imag, "view_as_real_of_real": lambda T: T.view_as_real(T.ones(2)),
    "backward": lambda T: T.ones(2, dtype=T.cfloat, requires_grad=True).sum().backward(),
    "complex_dtypes": lambda T: T.complex(T.ones(2), T.ones(2, dtype=T.double)),
}


@pytest.mark.parametrize("key", ERRORS)
def test_errors(key):
    t, g = both(ERRORS[key])
    assert isinstance(t, tuple) and g == t


def _ab(T):
    a = T.tensor([[1 + 1j, 2], [3j, 4]], dtype=T.cdouble, requires_grad=True)
    b = T.tensor([[0.5 - 1j, 2j], [1, 1 + 1j]], dtype=T.cdouble, requires_grad=True)
    return a, b


@pytest.mark.parametrize("f", [lambda z, w: (z * w.conj()).abs().sum(), lambda z, w: z @ w,
                               lambda z, w: (z / w).exp().real, lambda z, w: T_angle(z) * w.abs()])
def test_gradcheck_complex128(f):
    assert gg.autograd.gradcheck(f, _ab(gg))
    a, b = _ab(gg)
    ta, tb = _ab(torch)
    out = f(a, b)
    tout = f(ta, tb)
    seed = np.ones(tuple(tout.shape), dtype=tout.detach().numpy().dtype)
    gs = gg.autograd.grad(out, (a, b), gg.from_numpy(seed))
    ts = torch.autograd.grad(tout, (ta, tb), torch.from_numpy(seed))
    for x, y in zip(gs, ts):
        np.testing.assert_allclose(x.numpy(), y.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)


def T_angle(z):
    return z.angle()


def test_gradgradcheck_complex128():
    assert gg.autograd.gradgradcheck(lambda z, w: (z * w).exp(), _ab(gg))


def test_mixed_real_complex_gradient_is_the_real_part():
    def f(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x * (1 + 2j)
        y.abs().sum().backward()
        return y.grad_fn.name(), y.dtype, repr(x.grad)
    same(f)


def test_checkpoints_round_trip(tmp_path):
    from glassgrad.safetensors import save_file, load_file
    from safetensors.torch import load_file as torch_load_file
    x = gg.tensor([[1 + 2j, 3 - 4j]])
    y = gg.tensor([1j, -2], dtype=gg.complex128, requires_grad=True)
    gg.save({"x": x, "y": y, "v": x.imag}, tmp_path / "a.pt")
    back = gg.load(tmp_path / "a.pt")
    assert repr(back["x"]) == repr(x) and repr(back["v"]) == repr(x.imag) and back["y"].requires_grad
    assert back["y"].tolist() == y.tolist() and back["y"].dtype == gg.complex128
    gg.save({"x": x, "y": y.detach()}, tmp_path / "b.pt", format="torch")
    t = torch.load(tmp_path / "b.pt")
    assert t["x"].dtype == torch.complex64 and t["y"].dtype == torch.complex128
    assert t["x"].tolist() == x.tolist() and t["y"].tolist() == y.tolist()
    torch.save({"x": torch.tensor([1 + 2j]), "y": torch.tensor([2j], dtype=torch.cdouble),
                "r": torch.tensor([1 + 2j, 3j]).imag}, tmp_path / "c.pt")
    c = gg.load(tmp_path / "c.pt")
    assert (c["x"].dtype, c["y"].dtype, c["x"].tolist(), c["y"].tolist(), c["r"].tolist()) == \
        (gg.complex64, gg.complex128, [1 + 2j], [2j], [2.0, 3.0])
    save_file({"x": x}, tmp_path / "s.safetensors")
    assert load_file(tmp_path / "s.safetensors")["x"].tolist() == x.tolist()
    assert torch_load_file(str(tmp_path / "s.safetensors"))["x"].tolist() == x.tolist()


def _z(T, leaves, *shape, seed=0, rg=True):
    rng = np.random.default_rng(seed)
    t = T.from_numpy((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex128))
    if rg:
        t.requires_grad_(True)
        leaves.append(t)
    return t


OPS = {   # (T, z) -> tensor; z(*shape, seed=, rg=) makes a complex128 leaf
    "pow_tt": lambda T, z: z(3) ** z(3, seed=1), "rpow": lambda T, z: 2 ** z(3),
    "rpow_c": lambda T, z: (1 + 1j) ** z(3),
    "pow_real_exp": lambda T, z: z(3) ** T.tensor([1.5, 2.0, 0.5], dtype=T.float64),
    "var": lambda T, z: z(4).var(), "std": lambda T, z: z(2, 3).std(1), "norm": lambda T, z: z(4).norm(),
    "norm1": lambda T, z: z(4).norm(p=1), "norm3": lambda T, z: z(4).norm(p=3),
    "vector_norm_inf": lambda T, z: T.linalg.vector_norm(z(4), float("inf")),
    "dot": lambda T, z: T.dot(z(3), z(3, seed=1)), "vdot": lambda T, z: T.vdot(z(3), z(3, seed=1)),
    "einsum": lambda T, z: T.einsum("ij,jk->ik", z(2, 3), z(3, 2, seed=1)), "cumsum": lambda T, z: z(4).cumsum(0),
    "cumprod": lambda T, z: z(4).cumprod(0), "flip": lambda T, z: z(4).flip(0) * 1, "roll": lambda T, z: z(4).roll(1),
    "diag": lambda T, z: T.diag(z(3)), "trace": lambda T, z: z(3, 3).trace(), "tril": lambda T, z: z(3, 3).tril(),
    "where": lambda T, z: T.where(T.tensor([True, False, True]), z(3), z(3, seed=1)),
    "masked_fill": lambda T, z: z(3).masked_fill(T.tensor([True, False, True]), 2j),
    "linear": lambda T, z: T.nn.functional.linear(z(2, 3), z(4, 3, seed=1)),
    "mv": lambda T, z: T.mv(z(2, 3), z(3, seed=1)),
    "outer": lambda T, z: T.outer(z(2), z(3, seed=1)), "mean_dim": lambda T, z: z(2, 3).mean(1, keepdim=True),
    "div_scalar": lambda T, z: z(3) / (2 - 1j), "rdiv": lambda T, z: (1 + 2j) / z(3), "rsub": lambda T, z: (1 + 2j) - z(3),
    "sub_alpha": lambda T, z: T.sub(z(3), z(3, seed=1), alpha=2j), "add_alpha": lambda T, z: T.add(z(3), z(3, seed=1), alpha=1j),
    "addcmul": lambda T, z: T.addcmul(z(3), z(3, seed=1), z(3, seed=2), value=0.5),
    "addcdiv": lambda T, z: T.addcdiv(z(3), z(3, seed=1), z(3, seed=2), value=0.5),
    "lerp": lambda T, z: T.lerp(z(3), z(3, seed=1), 0.3), "gather": lambda T, z: z(4).gather(0, T.tensor([3, 0])),
    "scatter_add": lambda T, z: T.zeros(4, dtype=T.cdouble).scatter_add(0, T.tensor([1, 1]), z(2)),
    "pad": lambda T, z: T.nn.functional.pad(z(3), (1, 2)), "prod_dim": lambda T, z: z(2, 3).prod(1),
    "kron": lambda T, z: T.kron(z(2), z(2, seed=1)), "tensordot": lambda T, z: T.tensordot(z(2, 3), z(3, 2, seed=1), dims=1),
    "expand": lambda T, z: z(3, 1).expand(3, 2) * 1, "chunk": lambda T, z: T.cat(z(4).chunk(2)[::-1]),
    "setitem": lambda T, z: (lambda t: (t.__setitem__(0, 5 - 1j), t)[1])(z(3, rg=False)),
    "copy_into_real": lambda T, z: T.zeros(3).copy_(z(3, rg=False)),
    "rand": lambda T, z: T.rand(3, dtype=T.cfloat, generator=T.Generator().manual_seed(0)),
    "normal_": lambda T, z: z(3, rg=False).normal_(generator=T.Generator().manual_seed(1)),
    "uniform_": lambda T, z: z(3, rg=False).uniform_(-1, 2, generator=T.Generator().manual_seed(1)),
    "sinc": lambda T, z: T.sinc(z(4)), "nan_to_num": lambda T, z: T.nan_to_num(z(3, rg=False) * T.tensor([float("nan"), 1, 1])),
    "bool": lambda T, z: T.tensor([1 + 2j, -3j, 0j]).bool(),
    "addmm": lambda T, z: T.addmm(z(2, 2), z(2, 3, seed=1), z(3, 2, seed=2), beta=0.5j, alpha=1 + 1j),
    "linear_bias": lambda T, z: T.nn.functional.linear(z(4, 3), z(2, 3, seed=1), z(2, seed=2)),
    "baddbmm": lambda T, z: T.baddbmm(z(2, 2, 2), z(2, 2, 3, seed=1), z(2, 3, 2, seed=2)),
    "addmv": lambda T, z: T.addmv(z(2), z(2, 3, seed=1), z(3, seed=2)),
    "matmul_bcast": lambda T, z: z(2, 1, 2, 3) @ z(4, 3, 2, seed=1), "matmul_1d2d": lambda T, z: z(3) @ z(3, 2, seed=1),
    "cross": lambda T, z: T.linalg.cross(z(2, 3), z(2, 3, seed=1)), "det": lambda T, z: T.linalg.det(z(3, 3)),
    "inv": lambda T, z: T.linalg.inv(z(3, 3)), "solve": lambda T, z: T.linalg.solve(z(3, 3), z(3, 2, seed=1)),
    "index_put": lambda T, z: z(4).index_put((T.tensor([0, 2]),), z(2, seed=1)),
    "masked_scatter": lambda T, z: z(4).masked_scatter(T.tensor([True, False, True, False]), z(4, seed=1)),
    "matrix_norm": lambda T, z: T.linalg.matrix_norm(z(3, 3)),
    "reciprocal_zero": lambda T, z: T.tensor([0j, 1j, 2 - 1j]).reciprocal(), "rdiv_zero": lambda T, z: 1 / T.tensor([0j, 1j]),
    "pow_zero_zero": lambda T, z: T.tensor([0j, 0j, 0j, 1j]) ** T.tensor([0j, 1 + 0j, 2 + 1j, 0j]),
}


@pytest.mark.parametrize("key", OPS)
def test_ops_on_complex_tensors_match_torch(key):
    res = []
    for T in LIBS:
        leaves = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = OPS[key](T, lambda *s, seed=0, rg=True: _z(T, leaves, *s, seed=seed, rg=rg))
        grads = []
        if y.requires_grad:
            ((y.abs() ** 2).sum() if y.is_complex() else y.sum()).backward()
            grads = [None if x.grad is None else x.grad.resolve_conj().numpy() for x in leaves]
        res.append((str(y.dtype), tuple(y.shape), y.grad_fn.name() if y.grad_fn else None,
                    y.detach().resolve_conj().numpy(), grads))
    (tdt, tsh, tfn, ty, tg), (gdt, gsh, gfn, gy, g_) = res
    assert (gdt, gsh, gfn) == (tdt, tsh, tfn)
    np.testing.assert_allclose(gy, ty, rtol=1e-6, atol=1e-7)
    assert len(g_) == len(tg)
    for a, b in zip(g_, tg):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


MORE_ERRORS = {
    "unique": lambda T: T.unique(T.tensor([1j, 1j])), "unique_dim": lambda T: T.unique(T.tensor([1j]), dim=0),
    "abs_": lambda T: T.tensor([1j]).abs_(), "arange": lambda T: T.arange(3, dtype=T.cfloat),
    "matmul_mixed": lambda T: T.ones(2, 3, dtype=T.cdouble) @ T.ones(3, 2, dtype=T.float64),
    "median": lambda T: T.tensor([1j]).median(), "nanmedian": lambda T: T.tensor([1j]).nanmedian(),
    "nansum": lambda T: T.tensor([1j]).nansum(), "kthvalue": lambda T: T.tensor([1j]).kthvalue(1),
    "mode": lambda T: T.tensor([1j]).mode(), "histc": lambda T: T.histc(T.tensor([1j])),
    "cummax": lambda T: T.tensor([1j]).cummax(0), "logit": lambda T: T.tensor([1j]).logit(),
    "atan2": lambda T: T.atan2(T.tensor([1j]), T.tensor([1j])), "hypot": lambda T: T.hypot(T.tensor([1j]), T.tensor([1j])),
    "iinfo": lambda T: T.iinfo(T.cfloat), "tensor_float": lambda T: T.tensor(1 + 2j, dtype=T.float32),
    "tensor_long": lambda T: T.tensor([1 + 2j], dtype=T.int64),
    "nan_to_num_grad": lambda T: T.nan_to_num(T.ones(2, dtype=T.cfloat, requires_grad=True)),
}


@pytest.mark.parametrize("key", MORE_ERRORS)
def test_more_errors(key):
    t, g = both(MORE_ERRORS[key])
    assert isinstance(t, tuple) and g == t


def test_adjoint_H_mH_conjugate():
    same(lambda T: [repr(f(T.tensor([[1 + 1j, 2], [3j, 4]], requires_grad=True)))
                    for f in (T.adjoint, lambda z: z.adjoint(), lambda z: z.H, lambda z: z.mH)])
    same(lambda T: T.adjoint(T.ones(2, 2, requires_grad=True)).grad_fn.name())


OPTIMS = [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)), ("Adam", dict(lr=0.1, amsgrad=True, weight_decay=0.1)),
          ("AdamW", dict(lr=0.1)), ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)), ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.3)),
          ("Adamax", dict(lr=0.1)), ("NAdam", dict(lr=0.1)), ("RAdam", dict(lr=0.1)), ("ASGD", dict(lr=0.1)),
          ("Rprop", dict(lr=0.1)), ("Adadelta", dict(lr=1.0, maximize=True))]


@pytest.mark.parametrize("name,kw", OPTIMS, ids=[o[0] for o in OPTIMS])
def test_optimizers_step_complex_parameters_as_torch(name, kw):
    res = []
    for T in LIBS:
        p = T.nn.Parameter(T.tensor([[1 + 2j, -0.5 + 0.3j], [0.2j, 1.5]], dtype=T.cdouble))
        opt = getattr(T.optim, name)([p], **kw)
        for _ in range(4):
            opt.zero_grad()
            ((p * T.tensor([2 - 1j, 0.5j], dtype=T.cdouble)).abs() ** 2).sum().backward()
            opt.step()
        st = opt.state_dict()["state"].get(0, {})
        res.append((p.detach().numpy(), sorted((k, str(v.dtype)) for k, v in st.items() if hasattr(v, "dtype"))))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-10, atol=1e-12)
    assert res[1][1] == res[0][1]


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_optimizers_without_complex_support(name):
    def f(T):
        p = T.nn.Parameter(T.ones(2, 2, dtype=T.cfloat))
        o = getattr(T.optim, name)([p], lr=0.1)
        p.grad = T.ones(2, 2, dtype=T.cfloat)
        o.step()
    t, g = both(f)
    assert isinstance(t, tuple) and g == t
