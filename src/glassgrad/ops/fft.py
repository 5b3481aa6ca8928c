"""Discrete Fourier transforms: PyTorch's three primitives and torch.fft's functions over them.

ops: fft_r2c fft_c2c fft_c2r (ATen's _fft_r2c / _fft_c2c / _fft_c2r, nodes FftR2CBackward0 /
     FftC2CBackward0 / FftC2RBackward0), and the torch.fft functions fft ifft fft2 ifft2 fftn ifftn rfft irfft
     rfft2 irfft2 rfftn irfftn hfft ihfft fftfreq rfftfreq fftshift ifftshift (glassgrad/fft.py is the namespace)

As in PyTorch (aten/src/ATen/native/SpectralOps.cpp): inputs are promoted (integers to the default float
dtype, complex where the transform needs it: ToCopyBackward0), resized to `n` / `s` (slices, then one
constant_pad_nd), and the inverse real-input transforms (ifft of a real tensor, ihfft) are the conjugate of
a forward one (ConjBackward0, `is_conj()`), hfft the c2r transform of the conjugate.  NumPy computes in
complex128; results are cast to the input's precision.  `norm` is PyTorch's normalization enum: 0 none,
1 by 1/sqrt(n), 2 by 1/n, n the number of points of the signal (the output's, for c2r).
"""
import math

import numpy as np

from .. import _args, _dtype
from ._core import make, edge, grad
from ..autograd.graph import Node
from .conversion import to_dtype
from .complex import conj, conj_physical
from .slicing import slice_dim
from .pad import constant_pad_nd
from .shape import roll, cat
from .creation import zeros
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["fft_r2c", "fft_c2c", "fft_c2r"]

_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}
_REAL_OF = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}


# -- array kernels -------------------------------------------------------------------------------------
def _scaled(y, norm, n):
    if norm == 1:
        y *= 1.0 / math.sqrt(n)
    elif norm == 2:
        y *= 1.0 / n
    return y


def _points(shape, dims):
    return math.prod(shape[d] for d in dims)


def c2c_arr(a, dims, norm, forward):
    x = a.astype(np.complex128)
    y = np.fft.fftn(x, axes=dims) if forward else np.fft.ifftn(x, axes=dims, norm="forward")   # unscaled
    return _scaled(y, norm, _points(a.shape, dims)).astype(a.dtype if a.dtype.kind == "c" else np.complex128)


def r2c_arr(a, dims, norm, onesided):
    x = a.astype(np.float64)
    y = np.fft.rfftn(x, axes=dims) if onesided else np.fft.fftn(x, axes=dims)
    return _scaled(y, norm, _points(a.shape, dims)).astype(_COMPLEX_OF[a.dtype])


def c2r_arr(a, dims, norm, last):
    s = [a.shape[d] for d in dims[:-1]] + [last]
    y = np.fft.irfftn(a.astype(np.complex128), s=s, axes=dims, norm="forward")     # unscaled inverse
    return _scaled(y, norm, math.prod(s)).astype(_REAL_OF[a.dtype])


# -- the primitives and their nodes ----------------------------------------------------------------------
class FftC2CBackward0(Node):        # y = F x (forward or inverse, scaled); dx = the adjoint transform of gy
    __slots__ = ("dims", "norm", "forward")

    def backward(self, ns, g):
        if ns.is_tensor_mode:
            return (fft_c2c(g, self.dims, self.norm, not self.forward),)
        return (c2c_arr(g, self.dims, self.norm, not self.forward),)


class FftR2CBackward0(Node):        # y = F x (x real, onesided: half the last dim); dx = Re(F^H gy zero-padded)
    __slots__ = ("dims", "norm", "onesided", "last")

    def backward(self, ns, g):
        d = self.dims[-1]
        pad = self.last - g.shape[d] if self.onesided else 0
        if ns.is_tensor_mode:
            if pad > 0:
                shape = list(g.shape)
                shape[d] = pad
                g = cat([g, zeros(shape, dtype=g.dtype, device=g.device)], d)
            return (ns.real(fft_c2c(g, self.dims, self.norm, False)),)
        if pad > 0:
            widths = [(0, 0)] * g.ndim
            widths[d] = (0, pad)
            g = np.pad(g, widths)
        return (c2c_arr(g, self.dims, self.norm, False).real,)


class FftC2RBackward0(Node):        # y = irfft-like(x); dx = rfft(gy), the mirrored bins counted twice
    __slots__ = ("dims", "norm")

    def backward(self, ns, g):
        d = self.dims[-1]
        gi = fft_r2c(g, self.dims, self.norm, True) if ns.is_tensor_mode else r2c_arr(g, self.dims, self.norm, True)
        n, half = g.shape[d], gi.shape[d]
        double = n - half
        if double > 0:
            w = np.ones(half, _REAL_OF[np.dtype(ns.data(gi).dtype)], like=ns.data(gi))
            w[1:1 + double] = 2
            w = w.reshape((half,) + (1,) * (len(gi.shape) - 1 - d))
            gi = gi * (ns.const(w, gi) if ns.is_tensor_mode else w)
        return (gi,)


def _record(y, x, cls, **attrs):
    if x._rg and grad.enabled:
        n = cls((edge(x),))
        for k, v in attrs.items():
            setattr(n, k, v)
        return make(y, True, n)
    return make(y)


def fft_c2c(x, dims, norm, forward):
    dims = tuple(dims)
    return _record(c2c_arr(x._data, dims, norm, forward), x, FftC2CBackward0, dims=dims, norm=norm,
                   forward=forward)


def fft_r2c(x, dims, norm, onesided):
    dims = tuple(dims)
    return _record(r2c_arr(x._data, dims, norm, onesided), x, FftR2CBackward0, dims=dims, norm=norm,
                   onesided=onesided, last=x._data.shape[dims[-1]])


def fft_c2r(x, dims, norm, last_dim_size):
    dims = tuple(dims)
    return _record(c2r_arr(x._data, dims, norm, last_dim_size), x, FftC2RBackward0, dims=dims, norm=norm)


# -- argument handling (PyTorch's SpectralOps.cpp) -------------------------------------------------------
def norm_from_string(norm, forward):
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "ortho":
        return 1
    if norm == "forward":
        return 2 if forward else 0
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def promote(x, require_complex=False):
    """promote_tensor_fft: integers to the default float dtype, only float32 / float64 (and their complex)."""
    dt = x.dtype
    if dt.is_complex:
        return x
    t = dt if dt.is_floating_point else _dtype._default[0]
    if t not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(f"Unsupported dtype {t.name_c}")
    if require_complex:
        t = t.to_complex()
    return x if t is dt else to_dtype(x, t)


def wrap_dim(dim, ndim):
    """maybe_wrap_dim without wrapping scalars (PyTorch's FFT dims)."""
    dim = _args.int_arg(dim, None, "dim")
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def resize(x, dims, sizes):
    """resize_fft_input: slice the dims that are too long, then zero-pad those too short (one constant_pad_nd)."""
    nd = x.ndim
    pad = [0] * (2 * nd)
    must_pad = False
    for d, s in zip(dims, sizes):
        if s == -1:
            continue
        have = x.shape[d]
        if have < s:
            must_pad = True
            pad[2 * (nd - 1 - d) + 1] = s - have
        elif have > s:
            x = slice_dim(x, d, 0, s)
    return constant_pad_nd(x, pad) if must_pad else x


def check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def shape_and_dims(x, s, dim):
    """canonicalize_fft_shape_and_dim_args: the transformed dims and their sizes."""
    nd = x.ndim
    dims = None
    if dim is not None:
        dims = [wrap_dim(d, nd) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = list(_args.int_list(s, None, "s"))
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} dimensions.")
        if dims is None:
            dims = list(range(nd - len(s), nd))
        shape = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dims is None:
        dims, shape = list(range(nd)), list(x.shape)
    else:
        shape = [x.shape[d] for d in dims]
    for n in shape:
        check_points(n)
    return shape, dims


# -- torch.fft -----------------------------------------------------------------------------------------
def _c2c_1d(fname, x, n, dim, norm, forward):
    d = wrap_dim(dim, x.ndim)
    n = x.shape[d] if n is None else _args.int_arg(n, fname, "n")
    check_points(n)
    return fft_c2c(resize(x, [d], [n]), (d,), norm_from_string(norm, forward), forward)


def _r2c_1d(fname, x, n, dim, norm, forward, onesided):
    if x.dtype.is_complex:
        raise RuntimeError(f"{fname} expects a real input tensor, but got {x.dtype.name_c}")
    x = promote(x)
    d = wrap_dim(dim, x.ndim)
    n = x.shape[d] if n is None else _args.int_arg(n, fname, "n")
    check_points(n)
    y = fft_r2c(resize(x, [d], [n]), (d,), norm_from_string(norm, forward), onesided)
    return y if forward else conj(y)


def _c2r_1d(fname, x, n, dim, norm, forward):
    x = promote(x, True)
    d = wrap_dim(dim, x.ndim)
    n = 2 * (x.shape[d] - 1) if n is None else _args.int_arg(n, fname, "n")
    check_points(n)
    x = resize(x, [d], [n // 2 + 1])
    if forward:
        x = conj(x)
    return fft_c2r(x, (d,), norm_from_string(norm, forward), n)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(fft, input, n, dim, norm, out=out)
    if input.dtype.is_complex:
        return _c2c_1d("fft", input, n, dim, norm, True)
    return _r2c_1d("fft", input, n, dim, norm, True, False)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(ifft, input, n, dim, norm, out=out)
    if input.dtype.is_complex:
        return _c2c_1d("ifft", input, n, dim, norm, False)
    return _r2c_1d("ifft", input, n, dim, norm, False, False)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(rfft, input, n, dim, norm, out=out)
    return _r2c_1d("rfft", input, n, dim, norm, True, True)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(irfft, input, n, dim, norm, out=out)
    return _c2r_1d("irfft", input, n, dim, norm, False)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(hfft, input, n, dim, norm, out=out)
    return _c2r_1d("hfft", input, n, dim, norm, True)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(ihfft, input, n, dim, norm, out=out)
    return _r2c_1d("ihfft", input, n, dim, norm, False, True)


def _c2c_nd(x, s, dim, norm, forward):
    shape, dims = shape_and_dims(x, s, dim)
    x = promote(x, True)
    return fft_c2c(resize(x, dims, shape), dims, norm_from_string(norm, forward), forward)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(fftn, input, s, dim, norm, out=out)
    return _c2c_nd(input, s, dim, norm, True)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(ifftn, input, s, dim, norm, out=out)
    return _c2c_nd(input, s, dim, norm, False)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(fft2, input, s, dim, norm, out=out)
    return _c2c_nd(input, s, dim, norm, True)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(ifft2, input, s, dim, norm, out=out)
    return _c2c_nd(input, s, dim, norm, False)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(rfftn, input, s, dim, norm, out=out)
    if input.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {input.dtype.name_c}")
    shape, dims = shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    x = promote(input)
    return fft_r2c(resize(x, dims, shape), dims, norm_from_string(norm, True), True)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(rfft2, input, s, dim, norm, out=out)
    return rfftn(input, s, dim, norm)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(irfftn, input, s, dim, norm, out=out)
    shape, dims, last = _c2r_desc("irfftn", input, s, dim)
    x = promote(input, True)
    return fft_c2r(resize(x, dims, shape), dims, norm_from_string(norm, False), last)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(irfft2, input, s, dim, norm, out=out)
    return irfftn(input, s, dim, norm)


def _c2r_desc(fname, x, s, dim):
    """canonicalize_fft_c2r_shape_and_dim_args: (dims, input sizes, output size of the last dim)."""
    shape, dims = shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    last = 2 * (x.shape[dims[-1]] - 1) if s is None or list(s)[-1] == -1 else shape[-1]
    check_points(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(hfftn, input, s, dim, norm, out=out)
    shape, dims, last = _c2r_desc("hfftn", input, s, dim)
    x = resize(promote(input, True), dims, shape)
    nm = norm_from_string(norm, True)
    if len(dims) > 1:
        x = fft_c2c(x, dims[:-1], nm, True)
    return fft_c2r(conj(x), (dims[-1],), nm, last)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(hfft2, input, s, dim, norm, out=out)
    return hfftn(input, s, dim, norm)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(ihfftn, input, s, dim, norm, out=out)
    shape, dims = shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    if input.dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {input.dtype.name_c}")
    x = resize(promote(input), dims, shape)
    nm = norm_from_string(norm, False)
    y = fft_r2c(x, (dims[-1],), nm, True)
    if len(dims) == 1:
        return conj(y)
    return fft_c2c(conj_physical(y), dims[:-1], nm, False)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    if _acs.on:
        return _ac.fp32(ihfft2, input, s, dim, norm, out=out)
    return ihfftn(input, s, dim, norm)


def _freq_dtype(dtype):
    dt = _dtype._default[0] if dtype is None else _dtype.to_dtype(dtype, "fftfreq")
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("fftfreq requires a floating point or complex dtype")
    if dt.is_complex:           # PyTorch fills the result with arange, which has no complex kernel
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{dt.name_c}\'')
    return dt


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    dt = _freq_dtype(dtype)
    n = _args.int_arg(n, "fft_fftfreq", "n")
    k = np.arange(n, dtype=np.float64)
    k[(n + 1) // 2:] = np.arange(-(n // 2), 0)
    return _freq(k, n * d, dt, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    dt = _freq_dtype(dtype)
    n = _args.int_arg(n, "fft_rfftfreq", "n")
    return _freq(np.arange(n // 2 + 1, dtype=np.float64), n * d, dt, device, requires_grad)


def _freq(k, nd, dt, device, requires_grad):
    scale = np.asarray(1.0 / nd).astype(dt.to_real().np)       # PyTorch: out.mul_(1.0 / (n * d)) in out's dtype
    arr = (k.astype(dt.to_real().np) * scale).astype(dt.np)
    out = make(arr)
    if device is not None:
        out = out.to(device)
    return out.requires_grad_(True) if requires_grad else out


def _shift_dims(x, dim):
    if dim is None:
        return list(range(x.ndim))
    return [dim] if isinstance(dim, int) else list(dim)


def fftshift(input, dim=None):
    dims = _shift_dims(input, dim)
    return roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    dims = _shift_dims(input, dim)
    return roll(input, [(input.shape[d] + 1) // 2 for d in dims], dims)
