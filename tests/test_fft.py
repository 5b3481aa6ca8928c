"""torch.fft against torch: values, dtypes, shapes, grad_fn chains (the transform's node and the node before
it: ToCopyBackward0, SliceBackward0, ConstantPadNdBackward0, ConjBackward0), the conj bit, gradients for a
complex cotangent, finite differences (gradcheck in float64 / complex128), double backward, errors, and
fftfreq / rfftfreq / fftshift / ifftshift."""
import numpy as np
import pytest
import torch

import glassgrad as gg

NAMES = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
         "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"}


def _np(t):
    t = t.detach()
    if t.is_conj():
        t = t.resolve_conj()
    return t.numpy()


def _kwargs(name):
    if name[-1] in "2n":
        out = [{}, {"s": (3, 7)}, {"s": (5, -1)}, {"norm": "ortho"}, {"norm": "forward"}]
        out.append({"dim": (0,)} if name[-1] == "n" else {"dim": (1, 0)})
        if name[-1] == "n":
            out.append({"s": (4,), "dim": (-2,)})
        return out
    return [{}, {"n": 5}, {"n": 8, "dim": 0}, {"norm": "ortho"}, {"norm": "forward"}, {"dim": -2, "n": 3}]


CASES = [(n, dt, i) for n in NAMES for dt in ("float32", "float64", "complex64", "complex128")
         for i in range(len(_kwargs(n))) if not (n in REAL_ONLY and dt.startswith("complex"))]


def _input(T, dt, rg=True):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 6))
    if dt.startswith("complex"):
        a = a + 1j * rng.standard_normal((4, 6))
    t = T.from_numpy(a.astype(dt))
    return t.requires_grad_(True) if rg else t


@pytest.mark.parametrize("name,dt,i", CASES)
def test_values_graph_and_gradients_match_torch(name, dt, i):
    kw = _kwargs(name)[i]
    res = []
    for T in (torch, gg):
        x = _input(T, dt)
        y = getattr(T.fft, name)(x, **kw)
        chain = (y.grad_fn.name(), [n[0].name() if n[0] is not None else None for n in y.grad_fn.next_functions])
        rng = np.random.default_rng(3)
        ct = rng.standard_normal(tuple(y.shape))
        if y.is_complex():
            ct = ct + 1j * rng.standard_normal(tuple(y.shape))
        g, = T.autograd.grad(y, x, T.from_numpy(np.asarray(ct).astype(_np(y).dtype)))
        res.append((str(y.dtype), tuple(y.shape), chain, y.is_conj(), _np(y), _np(g), str(g.dtype)))
    (tdt, tsh, tch, tcj, ty, tg, tgd), (gdt, gsh, gch, gcj, gy, gg_, ggd) = res
    assert (gdt, gsh, gch, gcj, ggd) == (tdt, tsh, tch, tcj, tgd)
    tol = dict(rtol=1e-4, atol=1e-4) if dt in ("float32", "complex64") else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gy, ty, **tol)
    np.testing.assert_allclose(gg_, tg, **tol)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dt", ["float64", "complex128"])
def test_gradcheck_and_gradgradcheck(name, dt):
    if name in REAL_ONLY and dt == "complex128":
        return
    f = getattr(gg.fft, name)
    small = gg.from_numpy(_np(_input(gg, dt))[:2, :3].copy()).requires_grad_(True)
    kw = {"s": (2, 4)} if name[-1] in "2n" else {"n": 4}
    assert gg.autograd.gradcheck(lambda t: f(t, **kw), (small,))
    assert gg.autograd.gradgradcheck(lambda t: f(t, norm="ortho"), (small,))


def test_second_derivatives_match_torch():
    res = []
    for T in (torch, gg):
        x = _input(T, "complex128")
        y = T.fft.irfft(T.fft.fft2(x * x), n=7)
        g, = T.autograd.grad((y * y).sum(), x, create_graph=True)
        g2, = T.autograd.grad((g * g.conj()).real.sum(), x)
        res.append(_np(g2))
    np.testing.assert_allclose(res[1], res[0], rtol=1e-9, atol=1e-9)


ERRORS = {
    "n0": lambda T: T.fft.fft(T.arange(6.0), n=0), "norm": lambda T: T.fft.fft(T.arange(6.0), norm="bad"),
    "s_too_long": lambda T: T.fft.fftn(T.arange(6.0), s=(2, 3)),
    "dims_unique": lambda T: T.fft.fftn(T.ones(2, 3), dim=(0, 0)), "dim": lambda T: T.fft.fft(T.arange(6.0), dim=2),
    "rfft_complex": lambda T: T.fft.rfft(T.ones(3, dtype=T.cfloat)),
    "rfftn_complex": lambda T: T.fft.rfftn(T.ones(3, dtype=T.cfloat)),
    "ihfft_complex": lambda T: T.fft.ihfft(T.ones(3, dtype=T.cfloat)),
    "irfft_one": lambda T: T.fft.irfft(T.ones(1, dtype=T.cfloat)),
    "s_dim": lambda T: T.fft.fftn(T.ones(2, 3), s=(2, 3), dim=(0,)), "scalar": lambda T: T.fft.fft(T.tensor(1.0)),
    "half": lambda T: T.fft.fft(T.ones(3, dtype=T.float16)), "n_neg": lambda T: T.fft.fft(T.arange(6.0), n=-1),
    "fft2_1d": lambda T: T.fft.fft2(T.arange(6.0)), "empty": lambda T: T.fft.fft(T.ones(0)),
    "fftfreq_long": lambda T: T.fft.fftfreq(5, dtype=T.long),
    "ihfftn_complex": lambda T: T.fft.ihfftn(T.ones(2, 3, dtype=T.cfloat)),
    "hfftn_no_axis": lambda T: T.fft.hfftn(T.ones(2, 3), dim=()), "ihfftn_no_axis": lambda T: T.fft.ihfftn(T.ones(2, 3), dim=()),
    "rfftfreq_complex": lambda T: T.fft.rfftfreq(8, 0.3, dtype=T.cfloat),
}


@pytest.mark.parametrize("key", ERRORS)
def test_errors_match_torch(key):
    out = []
    for T in (torch, gg):
        with pytest.raises(Exception) as e:
            ERRORS[key](T)
        out.append((type(e.value).__name__, str(e.value)))
    assert out[1] == out[0]


OTHERS = {
    "fftfreq": lambda T: T.fft.fftfreq(5), "fftfreq_d": lambda T: T.fft.fftfreq(4, d=0.5, dtype=T.float64),
    "fftfreq_7": lambda T: T.fft.fftfreq(7, 0.1), "rfftfreq": lambda T: T.fft.rfftfreq(5, 2),
    "freq_rg": lambda T: T.fft.fftfreq(4, requires_grad=True),
    "fftshift": lambda T: T.fft.fftshift(T.arange(10).view(2, 5)),
    "ifftshift": lambda T: T.fft.ifftshift(T.arange(10).view(2, 5), dim=1),
    "fftshift_dims": lambda T: T.fft.fftshift(T.arange(5.0), dim=(0,)),
    "fftshift_grad": lambda T: T.fft.fftshift(T.ones(2, requires_grad=True)).grad_fn.name(),
    "ints": lambda T: T.fft.fft(T.arange(5)), "int32": lambda T: T.fft.rfft(T.arange(6, dtype=T.int32)),
    "bool": lambda T: T.fft.fft(T.ones(3, dtype=T.bool)), "irfft_real": lambda T: T.fft.irfft(T.ones(3)),
    "irfft_n1": lambda T: T.fft.irfft(T.ones(3, dtype=T.cfloat), n=1),
    "ifftn_s": lambda T: T.fft.ifftn(T.ones(2, 3, 4), s=(-1, 5)).shape,
    "irfftn_s": lambda T: T.fft.irfftn(T.ones(2, 3, 4, dtype=T.cfloat), s=(4, -1)).shape,
    "ihfft_conj": lambda T: T.fft.ihfft(T.ones(4)).is_conj(), "tensor": lambda T: T.fft.Tensor is T.Tensor,
    "all": lambda T: T.fft.__all__,
}


@pytest.mark.parametrize("key", OTHERS)
def test_other_functions_match_torch(key):
    t, g = (OTHERS[key](T) for T in (torch, gg))
    if isinstance(t, torch.Tensor):
        assert (str(g.dtype), tuple(g.shape), g.requires_grad) == (str(t.dtype), tuple(t.shape), t.requires_grad)
        np.testing.assert_allclose(_np(g), _np(t), rtol=1e-6, atol=1e-6)
    else:
        assert str(g) == str(t)
