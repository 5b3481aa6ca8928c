"""Short-time Fourier transforms: stft and istft (torch.stft / torch.istft and the Tensor methods), composed
as PyTorch composes them -- torch/functional.py's centring pad, then ATen's SpectralOps.cpp: frames, window,
_fft_r2c / _fft_c2c (ops/fft.py), transpose_; the inverse through _fft_c2r / _fft_c2c, the window, an
overlap-add and the window envelope.

ops: stft istft unfold_backward (the overlap-add, node UnfoldBackwardBackward0)
"""
import warnings

import numpy as np

from .. import _args
from ._core import make, edge, grad, warn_once
from .. import _dtype
from ..autograd.graph import Node
from .fft import fft_r2c, fft_c2c, fft_c2r
from .complex import view_as_real, view_as_complex, resolve_conj
from .views import view, transpose, transpose_, squeeze, squeeze_, unsqueeze
from .slicing import unfold, slice_dim, narrow
from .pad import constant_pad_nd, reflection_pad, replication_pad, circular_pad
from .creation import ones
from .arithmetic import mul, div
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["stft", "istft"]


def _warn_once(msg, stacklevel):
    """PyTorch's TORCH_WARN_ONCE: each of these warnings once per process."""
    warn_once(msg, stacklevel=stacklevel + 2)


# -- overlap-add ----------------------------------------------------------------------------------------
class UnfoldBackwardBackward0(Node):    # y = overlap-add of the frames of g; dg = y's gradient unfolded
    __slots__ = ("dim", "size", "step")

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            return (unfold(g, self.dim, self.size, self.step),)
        from numpy.lib.stride_tricks import sliding_window_view
        w = sliding_window_view(g, self.size, axis=self.dim)
        return (w[(slice(None),) * self.dim + (slice(None, None, self.step),)].copy(),)


def unfold_backward(g, input_sizes, dim, size, step):
    """The adjoint of x.unfold(dim, size, step): frames g (..., n_frames, ..., size) added back into a tensor
    of `input_sizes`."""
    a = g._data
    out = np.zeros(tuple(input_sizes), a.dtype, like=a)
    for f in range(a.shape[dim]):
        src = np.moveaxis(np.take(a, f, axis=dim), -1, dim)
        key = (slice(None),) * dim + (slice(f * step, f * step + size),)
        out[key] += src
    if g._rg and grad.enabled:
        n = UnfoldBackwardBackward0((edge(g),))
        n.dim, n.size, n.step = dim, size, step
        return make(out, True, n)
    return make(out)


# -- stft ---------------------------------------------------------------------------------------------
def _tname(t):
    return f"torch.{t.dtype._legacy}"


def _stft_fail(x, n_fft, hop, win, window, normalized, onesided, return_complex, msg):
    w = "None" if window is None else f"{_tname(window)}{{{list(window.shape)}}}"
    o = "None" if onesided is None else int(onesided)
    raise RuntimeError(f"stft({_tname(x)}{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
                       f"window={w}, normalized={int(normalized)}, onesided={o}, return_complex={int(return_complex)}, "
                       f"align_to_window=None) : {msg}")


def _pad(x, p, mode):
    if mode == "constant":
        return constant_pad_nd(x, p)
    fn = {"reflect": reflection_pad, "replicate": replication_pad, "circular": circular_pad}.get(mode)
    if fn is None:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    return fn(x, p)


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    if _acs.on:
        return _ac.fp32(stft, input, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                        return_complex, align_to_window)
    n_fft = _args.int_arg(n_fft, "stft", "n_fft")
    if center:                  # torch/functional.py: pad the signal by n_fft // 2 on both sides
        nd = input.ndim
        p = n_fft // 2
        x = _pad(view(input, [1] * (3 - nd) + list(input.shape)), [p, p], pad_mode)
        input = view(x, list(x.shape[-nd:]))
    return _stft(input, n_fft, hop_length, win_length, window, normalized, onesided, return_complex)


def _stft(x, n_fft, hop_length, win_length, window, normalized, onesided, return_complex):
    if window is None:
        _warn_once("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
                      "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", 3)
    rc = return_complex if return_complex is not None else (x.is_complex() or (window is not None and window.is_complex()))
    if not rc:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=3)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(msg):
        _stft_fail(x, n_fft, hop, win, window, normalized, onesided, rc, msg)
    if not (x.is_floating_point() or x.is_complex()):
        fail("expected a tensor of floating point or complex values")
    if x.ndim not in (1, 2):
        fail("expected a 1D or 2D tensor")
    inp = unsqueeze(x, 0) if x.ndim == 1 else x
    length = inp.shape[1]
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window with size "
             f"{list(window.shape)}")
    w = _centered_window(window, win, n_fft, x.dtype, x.device)
    frames = unfold(inp, 1, n_fft, hop)             # (batch, n_frames, n_fft)
    if w is not None:
        frames = mul(frames, w)
    cplx = frames.is_complex()
    one = (not cplx) if onesided is None else onesided
    norm = 1 if normalized else 0
    if frames._data.dtype.itemsize == 2 and frames._data.dtype.kind in "fV":
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {_dtype.c_name(frames._data.dtype)}")
    if cplx:
        if one:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = fft_c2c(frames, (2,), norm, True)
    else:
        out = fft_r2c(frames, (2,), norm, one)
    transpose_(out, 1, 2)
    if x.ndim == 1:
        squeeze_(out, 0)
    return out if rc else view_as_real(out)


def _centered_window(window, win, n_fft, dtype, device):
    if win >= n_fft:
        return window
    left = (n_fft - win) // 2
    return constant_pad_nd(window if window is not None else ones(win, dtype=dtype, device=device), [left, n_fft - win - left])


# -- istft --------------------------------------------------------------------------------------------
def _istft_desc(x, n_fft, hop, win, window, center, normalized, onesided, length, return_complex):
    w = "None" if window is None else f"{_tname(window)}{{{list(window.shape)}}}"
    o = "None" if onesided is None else int(onesided)
    t = {"ComplexFloat": "CPUComplexFloatType", "ComplexDouble": "CPUComplexDoubleType"}.get(x.dtype.name_c,
                                                                                        f"CPU{x.dtype.name_c}Type")
    return (f"istft({t}{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, window={w}, "
            f"center={int(center)}, normalized={int(normalized)}, onesided={o}, length={length}, "
            f"return_complex={int(return_complex)})")


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(msg, sep=" : "):
        raise RuntimeError(_istft_desc(input, n_fft, hop, win, window, center, normalized, onesided, length,
                                       return_complex) + sep + msg)
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if window is None:
        _warn_once("A window was not provided. A rectangular window will be applied.Please provide the same window "
                      "used by stft to make the inversion lossless.To suppress this warning and use a rectangular "
                      "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", 2)
    x = view_as_real(resolve_conj(input))
    nd = x.ndim
    n_frames, fft_size = x.size(-2), x.size(-3)
    expected = n_fft + hop * (n_frames - 1)
    if x.numel() == 0:
        fail("input tensor cannot be empty.")
    if nd not in (3, 4):
        fail(f"expected a tensor with 3 or 4 dimensions, but got {nd}")
    one = fft_size != n_fft if onesided is None else onesided
    if one and n_fft // 2 + 1 != fft_size:
        fail("expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 when "
             f"onesided=True, but got {fft_size}")
    if not one and n_fft != fft_size:
        fail("expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
             f"onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        fail("expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        fail("expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        fail("Invalid window shape. window has to be 1D and length of `win_length`")
    return _istft(x, n_fft, hop, win, window, center, normalized, one, length, return_complex, expected, fail)


def _istft(x, n_fft, hop, win, window, center, normalized, one, length, return_complex, expected, fail):
    wt = window if window is not None else ones(win, dtype=x.dtype, device=x.device)
    if win != n_fft:
        left = (n_fft - win) // 2
        wt = constant_pad_nd(wt, [left, n_fft - win - left])
    nd = x.ndim
    if nd == 3:
        x = unsqueeze(x, 0)
    x = view_as_complex(transpose(x, 1, 2).contiguous())        # (channel, n_frames, fft_size)
    norm = 1 if normalized else 2
    if return_complex:
        if one:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = fft_c2c(x, (2,), norm, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not one:
            x = narrow(x, -1, 0, n_fft // 2 + 1)
        x = fft_c2r(x, (2,), norm, n_fft)
    y = unfold_backward(mul(x, view(wt, [1, 1, n_fft])), [x.shape[0], expected], 1, n_fft, hop)
    env = unfold_backward((wt ** 2).expand(1, x.shape[1], n_fft), [1, expected], 1, n_fft, hop)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (-(n_fft // 2) if center else expected)
    y = slice_dim(y, 1, start, end)
    env = slice_dim(env, 1, start, end)
    if np.abs(env._data).min() < 1e-11:
        fail("window overlap add min: 1\n[ CPUBoolType{} ]", sep=" ")
    y = div(y, env)
    if nd == 3:
        y = squeeze(y, 0)
    if end > expected:
        _warn_once("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", 3)
        y = constant_pad_nd(y, [0, end - expected])
    return y
