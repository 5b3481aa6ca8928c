"""Attention primitives: PyTorch's safe softmax and the fused CPU attention kernel.

_safe_softmax (SafeSoftmaxBackward0): softmax whose rows that are entirely -inf give zeros, not NaN.
_sdpa_flash (ScaledDotProductFlashAttentionForCpuBackward0): softmax(Q K^T * scale + mask) V as one node,
  where PyTorch's CPU dispatch takes its flash kernel (_flash_ok says when).
nn.functional.scaled_dot_product_attention chooses between the fused kernel and its composite path.
"""
import numpy as np

from .. import _cuda_kernels
from .._cuda_kernels import attention as _k_attn
from ..backend import contiguous
from .linalg import matmul
from .._blas import matmul as gemm

from ._core import make, edge, save_in, save_out, grad, broadcast_error
from ..autograd.graph import Node

__all__ = ["SafeSoftmaxBackward0", "ScaledDotProductFlashAttentionForCpuBackward0"]


# -- the safe softmax (zeros for rows that are entirely -inf) --------------------------------------------
class SafeSoftmaxBackward0(Node):
    __slots__ = ("dim",)
    _saved_names = ("result",)

    def backward(self, ns, g):
        y, = ns.unpack(self)
        return (y * (g - ns.sum(g * y, self.dim, True)),)


def _safe_softmax_arr(a, axis=-1, out=None):
    """Softmax of float array a along axis; rows entirely -inf give zeros.  out=a works in place."""
    with np.errstate(all="ignore"):
        m = np.max(a, axis=axis, keepdims=True)
        dead = m == -np.inf                     # (max is -inf exactly when the whole row is)
        m[~np.isfinite(m)] = 0
        y = np.subtract(a, m, out=out)
        np.exp(y, out=y)
        np.divide(y, y.sum(axis=axis, keepdims=True), out=y)
        if a.__class__ is not np.ndarray or dead.any():        # (a device skips the sync of the test)
            np.copyto(y, 0, where=dead)
    return y


def _safe_softmax(x, dim=-1):
    y = _safe_softmax_arr(x._data, dim) if x.numel() else x._data.copy()
    if x._rg and grad.enabled:
        n = SafeSoftmaxBackward0((edge(x),))
        n.dim = dim % x.dim()
        out = make(y, True, n)
        n._saved = (save_out(out),)
        return out
    return make(y)


def _mask_array(attn_mask, is_causal, L, S, np_dtype, like):
    """The additive float mask as an array on `like`'s device (None when there is none): bool False -> -inf;
    causal -> tril."""
    m = None
    zero, ninf = np.zeros((), np_dtype, like=like), np.array(-np.inf, np_dtype, like=like)
    if attn_mask is not None:
        a = attn_mask._data
        if a.dtype == np.bool_:
            m = np.where(a, zero, ninf)
        else:
            m = a
    if is_causal:
        c = np.where(np.tril(np.ones((L, S), bool, like=like)), zero, ninf)
        m = c if m is None else m + c
    return m


class ScaledDotProductFlashAttentionForCpuBackward0(Node):
    """dV = P^T dO; dS = P (dP - rowsum(dP P)) with dP = dO V^T; dQ = s dS K; dK = s dS^T Q.
    probs_t: the forward's P transposed, (..., S, L) (see _sdpa_flash); the arrays below follow it."""
    __slots__ = ("scale", "groups", "probs_t", "mask", "mask_src")
    _saved_names = ("query", "key", "value", "output")

    def backward(self, ns, g):
        q, k, v, _ = ns.unpack(self)
        s, grp = self.scale, self.groups
        if ns.is_tensor_mode:
            kk = k.repeat_interleave(grp, -3) if grp > 1 else k
            vv = v.repeat_interleave(grp, -3) if grp > 1 else v
            att = matmul(q, kk.transpose(-2, -1)) * s
            if self.mask is None and self.mask_src is not None:      # the fused kernel built none
                self.mask = contiguous(_mask_array(*self.mask_src))
            if self.mask is not None:
                att = att + make(self.mask)
            p = _safe_softmax(att, -1)
            dv = ns.matmul(ns.mT(p), g)
            dp = ns.matmul(g, ns.mT(vv))
            ds = p * (dp - ns.sum(dp * p, -1, True))
            dq = ns.matmul(ds, kk) * s
            dk = ns.matmul(ns.mT(ds), q) * s
        else:       # the same with transposed P, dP, dS (in place on the fresh dP^T)
            pt = self.probs_t
            kk = np.repeat(k, grp, axis=-3) if grp > 1 else k
            vv = np.repeat(v, grp, axis=-3) if grp > 1 else v
            dv = gemm(pt, g)
            dst = gemm(vv, g.swapaxes(-1, -2))
            if _fused(dst) and dst.flags.c_contiguous and pt.flags.c_contiguous and dst.dtype == pt.dtype:
                _k_attn.softmax_t_backward(dst.reshape((-1,) + dst.shape[-2:]), pt.reshape((-1,) + pt.shape[-2:]))
            else:
                dst -= np.einsum("...ij,...ij->...j", dst, pt)[..., None, :]
                dst *= pt
            dq = gemm(dst.swapaxes(-1, -2), kk)
            dq *= s
            dk = gemm(dst, q)
            dk *= s
        if grp > 1:
            b, h, n, d = dk.shape
            dk = ns.sum(ns.reshape(dk, (b, h // grp, grp, n, d)), 2)
            dv = ns.sum(ns.reshape(dv, (b, h // grp, grp, n, dv.shape[-1])), 2)
        return dq, dk, dv


def _flash_ok(q, k, v, attn_mask, dropout_p, enable_gqa):
    if dropout_p > 0 or q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        return False
    if q.shape[0] != k.shape[0] or q.shape[0] != v.shape[0] or k.shape[1] != v.shape[1]:
        return False
    if q.shape[1] != k.shape[1] and not (enable_gqa and k.shape[1] and q.shape[1] % k.shape[1] == 0):
        return False
    if not (q.shape[-1] == k.shape[-1] == v.shape[-1]) or q.shape[-2] == 0 or k.shape[-2] == 0:
        return False
    if any(t.stride(-1) != 1 for t in (q, k, v)):
        return False
    if q.dtype.name not in ("float32", "float64"):
        return False
    if attn_mask is None:
        return True
    m = tuple(attn_mask.shape)
    if attn_mask._rg or len(m) not in (2, 4):
        return False
    if m[-2] not in (1, q.shape[2]) or m[-1] not in (1, k.shape[2]):
        return False
    return len(m) == 2 or (m[0] in (1, q.shape[0]) and m[1] in (1, q.shape[1]))


_FUSED = (np.dtype(np.float32), np.dtype(np.float64))


def _fused(a):
    """A GPU array the fused attention kernels take (_cuda_kernels/attention.py)."""
    return a.__class__ is not np.ndarray and a.dtype in _FUSED and _cuda_kernels.available()


def _fused_forward(att, attn_mask, is_causal, scale, heads):
    """_sdpa_flash's scale + mask + safe softmax as one kernel on a GPU (False where it does not apply)."""
    if not (_fused(att) and att.flags.c_contiguous):
        return False
    m = None
    if attn_mask is not None:
        m = attn_mask._data
        if m.dtype != np.bool_ and m.dtype not in _FUSED:
            return False
        if m.ndim == 2:
            m = m.reshape((1, 1) + m.shape)
    _k_attn.masked_softmax_t(att.reshape((-1,) + att.shape[-2:]), scale, m, is_causal, heads)
    return True


def _sdpa_flash(q, k, v, attn_mask, is_causal, scale):
    B, H, L, E = q.shape
    S = k.shape[-2]
    grp = H // k.shape[1]
    qa, ka, va = q._data, k._data, v._data
    if grp > 1:
        ka, va = np.repeat(ka, grp, axis=-3), np.repeat(va, grp, axis=-3)
    # The scores transposed, (..., S, L): the softmax then reduces over axis -2, with the L query rows as
    # NumPy's contiguous inner loop (~4x faster than max/sum over a short last axis, row by row).
    att = gemm(ka, qa.swapaxes(-1, -2))
    m = None
    if _fused_forward(att, attn_mask, is_causal, scale, H):   # a GPU: one kernel, the same steps
        pt = att
    else:
        att *= qa.dtype.type(scale)     # (a NumPy scalar: the same rounding as a 0-d array, on any device)
        m = _mask_array(attn_mask, is_causal, L, S, qa.dtype, qa)
        pt = _masked_softmax_t(att, m, (B, H, L, S))
    out = gemm(pt.swapaxes(-1, -2), va).astype(qa.dtype, copy=False)
    if (q._rg or k._rg or v._rg) and grad.enabled:
        n = ScaledDotProductFlashAttentionForCpuBackward0((edge(q), edge(k), edge(v)))
        n.scale, n.groups, n.probs_t = scale, grp, pt
        n.mask = None if m is None else contiguous(m)
        n.mask_src = None if m is not None or (attn_mask is None and not is_causal) else (
            attn_mask, is_causal, L, S, qa.dtype, qa)
        res = make(out, True, n)
        n._saved = (save_in(q), save_in(k), save_in(v), save_out(res))
        return res
    return make(out)


def _masked_softmax_t(att, m, full):
    """The array code of the scores' mask and safe softmax (over axis -2: the scores are transposed, `full` is
    (B, H, L, S))."""
    if m is not None:
        try:
            shape = np.broadcast_shapes(full, m.shape)
        except ValueError:
            raise broadcast_error(full, m.shape) from None
        mt = m.swapaxes(-1, -2)
        if full == shape:
            np.add(att, mt, out=att, casting="unsafe")
        else:
            att = (att + mt).astype(att.dtype)
    return _safe_softmax_arr(att, -2, out=att)


