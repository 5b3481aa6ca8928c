"""torch.stft / torch.istft (and the Tensor methods) against torch: values, dtypes, shapes, grad_fn, gradients,
round trips, warnings and errors."""
import warnings

import numpy as np
import pytest
import torch

import glassgrad as gg


def _sig(T, shape=(2, 40), dt="float64", rg=True):
    rng = np.random.default_rng(5)
    a = rng.standard_normal(shape)
    if dt.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    t = T.from_numpy(a.astype(dt))
    return t.requires_grad_(True) if rg else t


def _win(T, n, dt="float64"):
    return T.from_numpy(np.hanning(n + 2)[1:-1].astype(dt))


STFT = {
    "default": lambda T, x: T.stft(x, 16, return_complex=True),
    "hann": lambda T, x: T.stft(x, 16, window=_win(T, 16), return_complex=True),
    "1d_hop": lambda T, x: T.stft(x[0], 16, hop_length=5, window=T.ones(16, dtype=T.float64), return_complex=True),
    "win_short": lambda T, x: T.stft(x, 16, win_length=10, center=False, window=_win(T, 10), return_complex=True),
    "win_short_none": lambda T, x: T.stft(x, 16, win_length=10, return_complex=True),
    "real_out": lambda T, x: T.stft(x, 16, return_complex=False),
    "complex_in": lambda T, x: T.stft(x.to(T.cdouble), 16, return_complex=True),
    "twosided": lambda T, x: T.stft(x, 16, onesided=False, normalized=True, return_complex=True, pad_mode="constant"),
    "replicate": lambda T, x: T.stft(x, 12, hop_length=3, pad_mode="replicate", return_complex=True),
    "float32_window64": lambda T, x: T.stft(x.float(), 16, window=_win(T, 16), return_complex=True),
    "method": lambda T, x: x.stft(16, return_complex=True, window=_win(T, 16)),
    "istft": lambda T, x: T.istft(T.stft(x, 16, window=_win(T, 16), return_complex=True), 16, window=_win(T, 16)),
    "istft_1d": lambda T, x: T.istft(T.stft(x[1], 16, hop_length=5, return_complex=True), 16, hop_length=5),
    "istft_length": lambda T, x: T.istft(T.stft(x, 16, return_complex=True), 16, length=35),
    "istft_long": lambda T, x: T.istft(T.stft(x, 16, return_complex=True), 16, length=50),
    "istft_twosided": lambda T, x: T.istft(T.stft(x, 16, onesided=False, normalized=True, return_complex=True), 16,
                                           onesided=False, normalized=True, return_complex=True),
    "istft_twosided_real": lambda T, x: T.istft(T.stft(x, 16, onesided=False, return_complex=True), 16, onesided=False),
    "istft_nocenter": lambda T, x: T.istft(T.stft(x, 16, center=False, window=_win(T, 16), return_complex=True), 16,
                                           center=False, window=_win(T, 16)),
    "istft_method": lambda T, x: T.stft(x, 16, return_complex=True).istft(16, win_length=12),
}


@pytest.mark.parametrize("key", STFT)
def test_matches_torch(key):
    res = []
    for T in (torch, gg):
        x = _sig(T)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = STFT[key](T, x)
        rng = np.random.default_rng(1)
        ct = rng.standard_normal(tuple(y.shape))
        if y.is_complex():
            ct = ct + 1j * rng.standard_normal(tuple(y.shape))
        g, = T.autograd.grad(y, x, T.from_numpy(np.asarray(ct).astype(y.detach().numpy().dtype)))
        res.append((str(y.dtype), tuple(y.shape), y.grad_fn.name(), y.detach().numpy(), g.numpy()))
    assert res[1][:3] == res[0][:3]
    tol = dict(rtol=1e-5, atol=1e-5) if "float32" in key else dict(rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res[1][3], res[0][3], **tol)
    np.testing.assert_allclose(res[1][4], res[0][4], **tol)


def test_round_trip_and_gradcheck():
    x = _sig(gg, (1, 24))
    w = _win(gg, 8)
    y = gg.istft(gg.stft(x, 8, hop_length=2, window=w, return_complex=True), 8, hop_length=2, window=w, length=24)
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), atol=1e-12)
    small = _sig(gg, (12,))
    assert gg.autograd.gradcheck(lambda t: gg.stft(t, 4, hop_length=2, window=_win(gg, 4), return_complex=True),
                                 (small,))
    assert gg.autograd.gradcheck(lambda t: gg.istft(t, 4, hop_length=2, window=_win(gg, 4)),
                                 (gg.stft(small, 4, hop_length=2, window=_win(gg, 4), return_complex=True).detach()
                                  .requires_grad_(True),))


WARNS = {"no_window": (lambda T, x: T.stft(x, 16, return_complex=True), "A window was not provided"),
         "real_out": (lambda T, x: T.stft(x, 16, window=T.ones(16), return_complex=False), "stft with return_complex=False")}


@pytest.mark.parametrize("key", WARNS)
def test_warnings(key):
    f, msg = WARNS[key]
    from glassgrad import _globals
    _globals._warned.clear()          # (torch warns once per process; this test runs after others that warned)
    with pytest.warns(UserWarning, match=msg):
        f(gg, _sig(gg, rg=False))


def _S(T):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return T.stft(_sig(T, rg=False), 16, return_complex=True)


ERRORS = {
    "return_complex": lambda T: T.stft(_sig(T), 16), "n_fft": lambda T: T.stft(_sig(T), 100, return_complex=True),
    "n_fft_nocenter": lambda T: T.stft(_sig(T), 100, return_complex=True, center=False),
    "hop": lambda T: T.stft(_sig(T), 16, hop_length=0, return_complex=True),
    "win": lambda T: T.stft(_sig(T), 16, win_length=20, return_complex=True),
    "window": lambda T: T.stft(_sig(T), 16, window=T.ones(5), return_complex=True, onesided=True, normalized=True),
    "3d": lambda T: T.stft(T.ones(2, 2, 40), 16, return_complex=True),
    "long": lambda T: T.stft(T.ones(40, dtype=T.long), 16, return_complex=True),
    "onesided_complex": lambda T: T.stft(_sig(T, dt="complex128"), 16, onesided=True, return_complex=True),
    "istft_real": lambda T: T.istft(_S(T).real, 16), "istft_nfft": lambda T: T.istft(_S(T), 20),
    "istft_zero_window": lambda T: T.istft(_S(T), 16, window=T.zeros(16, dtype=T.float64)),
    "istft_onesided": lambda T: T.istft(_S(T), 16, onesided=False),
    "istft_win": lambda T: T.istft(_S(T), 16, win_length=20), "istft_hop": lambda T: T.istft(_S(T), 16, hop_length=20),
    "istft_window": lambda T: T.istft(_S(T), 16, window=T.ones(3)), "istft_1d": lambda T: T.istft(_S(T)[0, 0], 16),
    "istft_empty": lambda T: T.istft(_S(T)[:, :, :0], 16), "istft_5d": lambda T: T.istft(_S(T).unsqueeze(0), 16),
    "istft_complex_onesided": lambda T: T.istft(_S(T), 16, return_complex=True),
}


@pytest.mark.parametrize("key", ERRORS)
def test_errors(key):
    out = []
    for T in (torch, gg):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as e:
                ERRORS[key](T)
        out.append((type(e.value).__name__, str(e.value)))
    assert out[1] == out[0]
