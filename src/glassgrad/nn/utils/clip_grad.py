"""Gradient clipping: clip_grad_norm_ (= get_total_norm + clip_grads_with_norm_) and clip_grad_value_.

As in PyTorch: the total norm is the norm of the per-tensor norms, the scale is
max_norm / (total + 1e-6) clamped at 1, and gradients are scaled in place.
"""
import math

import numpy as np

from ... import _cuda_kernels
from ..._cuda_kernels import optloss as _k_optloss
from ..._tensor import Tensor, _make
from ...autograd.grad_mode import no_grad
from ...backend import device_of, to_device
from ...ops._core import as_array, check_inplace

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]

_F3264 = (np.dtype(np.float32), np.dtype(np.float64))


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _norm(a, p):
    a = a.ravel()
    if p == 2 and a.dtype.kind in "fV":        # no |a| copy needed for a real 2-norm
        return np.sqrt(np.dot(a, a)).astype(a.dtype) if a.size else np.zeros((), a.dtype, like=a)
    a = np.abs(a)
    if a.size == 0:
        return np.zeros((), a.dtype, like=a)
    if p == math.inf:
        return a.max()
    if p == -math.inf:
        return a.min()
    if p == 0:
        return as_array(np.count_nonzero(a), a.dtype)
    if p == 1:
        return a.sum(dtype=a.dtype)
    if p == 2:
        return np.sqrt(np.dot(a, a)).astype(a.dtype)
    return (a ** p).sum(dtype=a.dtype) ** (1.0 / p)


def _fused_total(tensors, norm_type):
    """The total 2-norm in K + 1 kernels on a GPU (_cuda_kernels/optloss.py: the array code's steps, the sums in a
    tree order), for C-contiguous float32 / float64 tensors of one dtype on one device; else None."""
    a0 = tensors[0]._data
    if norm_type != 2 or a0.__class__ is np.ndarray or a0.dtype not in _F3264 or not _cuda_kernels.available():
        return None
    arrays = [t._data for t in tensors]
    if any(a.__class__ is not a0.__class__ or a.dtype != a0.dtype or not a.flags.c_contiguous
           or device_of(a) != device_of(a0) for a in arrays):
        return None
    return _k_optloss.grad_norms_total(arrays)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return _make(np.zeros((), np.float32))
    total = _fused_total(tensors, norm_type)
    if total is not None:
        dt = total.dtype
    else:
        per = [_norm(t._data, norm_type) for t in tensors]
        dt = np.result_type(*[n.dtype for n in per])
        if any(n.__class__ is not np.ndarray and not isinstance(n, np.generic) for n in per):
            dev = device_of(tensors[0]._data)       # torch: the per-tensor norms meet on the first tensor's device
            per = [to_device(as_array(n), dev) for n in per]
        total = _norm(np.stack([as_array(n, dt) for n in per]), norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return _make(as_array(total, dt))


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    grads = _grads(parameters)
    if not grads:
        return
    tn = total_norm._data if isinstance(total_norm, Tensor) else np.asarray(total_norm)
    dt = tn.dtype.type                      # scalars of tn's dtype: they mix with device data
    if _fused_clip(grads, tn, dt(max_norm), dt(1e-6)):
        return
    coef = np.minimum(dt(max_norm) / (tn + dt(1e-6)), dt(1.0))
    with no_grad():
        for g in grads:
            c = coef.astype(g._data.dtype)
            a = g._data
            if c.__class__ is not a.__class__ and not isinstance(c, np.generic):
                c = to_device(c, device_of(a))      # torch: the scale goes to each gradient's device
            if (g._grad_fn is None and not g._rg and c.dtype in _F3264
                    and (a.__class__ is not np.ndarray or a.flags.writeable)):    # (device arrays: always)
                # what g.mul_(c) does here, without its temporary: scale in place, bump the version
                check_inplace(g)
                np.multiply(g._data, c, out=g._data)
                g._vc[0] += 1
            else:
                g.mul_(_make(c))


def _fused_clip(grads, tn, max_norm, eps):
    """clip_grads_with_norm_'s scaling, a kernel per gradient on a GPU (bit-equal to the array code), where every
    gradient allows it (float32 / float64, a leaf not requiring grad, on tn's device, tn 0-d float32 / float64);
    False (nothing done) elsewhere."""
    if (tn.__class__ is np.ndarray or tn.ndim or tn.dtype not in _F3264 or not _cuda_kernels.available()
            or any(g._data.__class__ is not tn.__class__ or g._data.dtype not in _F3264 or g._grad_fn is not None
                   or g._rg or device_of(g._data) != device_of(tn) for g in grads)):
        return False
    with no_grad():
        for g in grads:
            check_inplace(g)
            _k_optloss.scale_by_clip(g._data, tn, max_norm, eps)
            g._vc[0] += 1
    return True


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        parameters = list(parameters)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
